"""Every point function of points.py in a CUDA kernel (the simulator in CI; the H200 with
``pytest -m gpu``) against the Python-int reference, G1 and G2.

Results are compared as affine points (the projective representatives of two correct
implementations may differ); XYZZ results must also satisfy ZZ^3 = ZZZ^2.
"""

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from numba_cuzk.curve.params import G1, G2
from numba_cuzk.curve.reference import g1, g2
from tests.conftest import SIMULATOR
from tests.curve import device_harness as dev
from tests.curve.values import jacobian, points, xyzz

pytestmark = pytest.mark.gpu

CURVES = [pytest.param((G1, g1), id="G1"), pytest.param((G2, g2), id="G2")]
EXAMPLES = 4 if SIMULATOR else 30
BATCH = 4 if SIMULATOR else 64
ALIASES = (dev.ALIAS_NONE, dev.ALIAS_FIRST, dev.ALIAS_SECOND)


def _affine(ref, form, p):
    if form == "affine":
        return p
    if form == "jacobian":
        return ref.from_jacobian(p)
    F = ref.F
    assert F.mul(F.square(p[2]), p[2]) == F.square(p[3]), "XYZZ invariant ZZ^3 = ZZZ^2"
    return ref.from_xyzz(p)


def _represent(ref, form, p, rng):
    if form == "affine":
        return p
    return jacobian(ref, p, rng) if form == "jacobian" else xyzz(ref, p, rng)


EXPECTED = {
    "add": lambda ref, p, q: ref.add(p, q),
    "add_mixed": lambda ref, p, q: ref.add(p, q),
    "dbl": lambda ref, p: ref.double(p),
    "neg": lambda ref, p: ref.neg(p),
    "to_affine": lambda ref, p: p,
    "to_jacobian": lambda ref, p: p,
    "to_xyzz": lambda ref, p: p,
    "from_affine": lambda ref, p: p,
}


def _expected(name, ref, *args):
    return EXPECTED[name.split("_", 1)[1]](ref, *args)


def check_op(curve, ref, name, a, b=None, seed=0):
    """Run ``name`` on affine inputs (converted to its formats with random Z) vs reference."""
    rng = random.Random(seed)
    _, formats, result = dev.OPS[name]
    inputs = [[_represent(ref, fmt, p, rng) for p in pts] for fmt, pts in zip(formats, (a, b))]
    expect = [_expected(name, ref, *args) for args in zip(*([a] if b is None else [a, b]))]
    for alias in ALIASES[:len(formats) + 1]:
        out = dev.run(curve, name, *inputs, alias=alias)
        assert [_affine(ref, result, p) for p in out] == expect, f"{name} alias={alias}"


BINARY = ["xyzz_add", "xyzz_add_mixed", "jac_add", "jac_add_mixed"]
UNARY = ["xyzz_dbl", "jac_dbl", "xyzz_to_affine", "jac_to_affine", "xyzz_to_jacobian", "jac_to_xyzz",
         "jac_from_affine", "xyzz_from_affine", "aff_neg", "jac_neg", "xyzz_neg"]


@pytest.mark.parametrize("case", CURVES)
@pytest.mark.parametrize("name", BINARY)
def test_additions_special_cases(case, name):
    """Identity on either side, P + P (must double), P + (-P), and generic sums."""
    curve, ref = case
    rng = random.Random(1)
    p, q = ref.random_point(rng), ref.random_point(rng)
    a = [None, p, None, p, p, p, ref.neg(q)]
    b = [None, None, p, p, ref.neg(p), q, p]
    check_op(curve, ref, name, a, b)


@pytest.mark.parametrize("case", CURVES)
@pytest.mark.parametrize("name", UNARY)
def test_unary_functions(case, name):
    curve, ref = case
    rng = random.Random(2)
    check_op(curve, ref, name, [None, ref.generator, ref.random_point(rng)])


@pytest.mark.parametrize("case", CURVES)
def test_predicates(case):
    curve, ref = case
    rng = random.Random(3)
    p, q = ref.random_point(rng), ref.random_point(rng)
    a, b = [None, p, p, None, p], [None, p, q, p, None]
    for name, form in (("jac_eq", jacobian), ("xyzz_eq", xyzz)):
        out = dev.run(curve, name, [form(ref, x, rng) for x in a], [form(ref, x, rng) for x in b])
        assert out == [x == y for x, y in zip(a, b)]
    assert dev.run(curve, "aff_on_curve", [None, p, ref.point_off_curve(rng)]) == [True, True, False]
    assert dev.run(curve, "jac_is_identity", [jacobian(ref, x, rng) for x in a]) == [x is None for x in a]
    assert dev.run(curve, "xyzz_is_identity", [xyzz(ref, x, rng) for x in a]) == [x is None for x in a]
    assert dev.run(curve, "aff_is_identity", a) == [x is None for x in a]


@pytest.mark.parametrize("case", CURVES)
def test_group_axioms(case):
    """Associativity, identity, inverse and commutativity of xyzz_add and mixed addition on
    random batches, hypothesis-driven."""
    curve, ref = case

    @settings(max_examples=EXAMPLES, deadline=None)
    @given(st.lists(st.tuples(points(ref), points(ref), points(ref)), min_size=1, max_size=BATCH),
           st.randoms(use_true_random=False))
    def check(triples, rnd):
        a, b, c = (list(t) for t in zip(*triples))
        X = lambda pts: [xyzz(ref, p, rnd) for p in pts]  # noqa: E731
        aff = lambda out: [ref.from_xyzz(p) for p in out]  # noqa: E731
        ab = dev.run(curve, "xyzz_add_mixed", X(a), b)
        bc = dev.run(curve, "xyzz_add_mixed", X(b), c)
        left = aff(dev.run(curve, "xyzz_add_mixed", ab, c))
        right = aff(dev.run(curve, "xyzz_add", X(a), bc))
        assert left == right == [ref.add(ref.add(x, y), z) for x, y, z in zip(a, b, c)]
        assert aff(dev.run(curve, "xyzz_add", X(b), X(a))) == aff(ab)
        neg_a = dev.run(curve, "aff_neg", a)
        assert aff(dev.run(curve, "xyzz_add_mixed", X(a), neg_a)) == [None] * len(a)

    check()


@pytest.mark.parametrize("case", CURVES)
def test_scalar_identities(case):
    """9G + 5G == 12G + 2G, 2(G + G) == 4G and distributivity k(P + Q) == kP + kQ by
    repeated device addition; doubling chains vs the reference."""
    curve, ref = case
    rng = random.Random(4)
    G = ref.generator
    mult = {k: ref.mul(G, k) for k in (2, 5, 9, 12)}
    nine_five = dev.run(curve, "jac_add_mixed", [ref.to_jacobian(mult[9])] * 2, [mult[5], mult[5]])
    twelve_two = dev.run(curve, "jac_add_mixed", [ref.to_jacobian(mult[12])], [mult[2]])
    assert ref.from_jacobian(nine_five[0]) == ref.from_jacobian(twelve_two[0]) == ref.mul(G, 14)
    p, q = ref.random_point(rng), ref.random_point(rng)
    k = 5
    acc_pq, acc_p = [xyzz(ref, None, rng)], [xyzz(ref, None, rng)]
    pq = ref.add(p, q)
    for _ in range(k):
        acc_pq = dev.run(curve, "xyzz_add_mixed", acc_pq, [pq])
        acc_p = dev.run(curve, "xyzz_add_mixed", acc_p, [p])
    kq = ref.mul(q, k)
    both = dev.run(curve, "xyzz_add_mixed", acc_p, [kq])
    assert ref.from_xyzz(both[0]) == ref.from_xyzz(acc_pq[0]) == ref.mul(pq, k)
    d = [xyzz(ref, p, rng)]
    for _ in range(3):
        d = dev.run(curve, "xyzz_dbl", d)
    assert ref.from_xyzz(d[0]) == ref.mul(p, 8)
