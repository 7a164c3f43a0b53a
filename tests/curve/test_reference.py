"""The Python-int reference against py_ecc and the curve's algebra (no kernels)."""

import random

import pytest
from py_ecc import bls12_381 as pyecc

from numba_cuzk.curve.params import BETA, G1, G2, H1, H2, LAMBDA_G1, R, Z
from numba_cuzk.curve.reference import g1, g2

CURVES = [pytest.param(g1, id="G1"), pytest.param(g2, id="G2")]


def _from_pyecc(p):
    if p is None:
        return None
    if hasattr(p[0], "coeffs"):
        return tuple(tuple(int(c) for c in coord.coeffs) for coord in p)
    return tuple(int(c) for c in p)


def test_generators_match_pyecc():
    assert _from_pyecc(pyecc.G1) == G1.generator
    assert _from_pyecc(pyecc.G2) == G2.generator


@pytest.mark.parametrize("ref,gen", [(g1, pyecc.G1), (g2, pyecc.G2)], ids=["G1", "G2"])
def test_scalar_mul_matches_pyecc(ref, gen):
    rng = random.Random(7)
    for k in [1, 2, 3, R - 1, *(rng.randrange(R) for _ in range(3))]:
        assert ref.mul(ref.generator, k) == _from_pyecc(pyecc.multiply(gen, k))


@pytest.mark.parametrize("ref", CURVES)
def test_group_law_identities(ref):
    G = ref.generator
    assert ref.add(ref.mul(G, 9), ref.mul(G, 5)) == ref.add(ref.mul(G, 12), ref.mul(G, 2))
    assert ref.mul(G, ref.order) is None
    assert ref.add(G, ref.neg(G)) is None
    assert ref.add(G, None) == G and ref.add(None, G) == G
    assert ref.add(G, G) == ref.double(G) == ref.mul(G, 2)
    a, b = ref.mul(G, 1234), ref.mul(G, 98765)
    assert ref.from_jacobian(ref.jacobian_add(ref.to_jacobian(a, ref.one), ref.to_jacobian(b))) == ref.add(a, b)


def test_endomorphisms():
    assert g1.endomorphism(G1.generator) == g1.mul(G1.generator, LAMBDA_G1)
    assert pow(BETA, 3, G1.field.p) == 1 and BETA != 1
    assert g2.endomorphism(G2.generator) == g2.mul(G2.generator, Z)


@pytest.mark.parametrize("ref,h", [(g1, H1), (g2, H2)], ids=["G1", "G2"])
def test_fast_subgroup_check_agrees_with_r_times_p(ref, h):
    rng = random.Random(11)
    outside = ref.point_off_subgroup(rng)
    assert ref.is_on_curve(outside) and not ref.in_subgroup(outside) and not ref.in_subgroup_fast(outside)
    cleared = ref.mul(outside, h)
    assert ref.in_subgroup(cleared) and ref.in_subgroup_fast(cleared)
    assert ref.in_subgroup_fast(None) and ref.in_subgroup_fast(ref.random_point(rng))
