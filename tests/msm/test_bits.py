"""The bit/tail split (msm/bits.py) against its CPU reference and against the plain MSM.

The split's kernels against split_reference on hypothesis mixes of 0, 1, 2, r - 1 and
random scalars (tiles and runs of 3 scalars: tile edges crossed); BitSplit.msm against the
naive reference MSM on random mixes, all bits, no bits, only identity bases, repeated
bases, with first = 0 (A, B1, B2) and first > 0 (C's private wires); a witness whose tail
overflows the plan is refused. In the simulator with tens of points (CI), and with
``-m gpu`` on a device at 2^20 scalars against a closed form: bases k_i G (fixed_base_mul)
make the MSM (sum s_i k_i mod r) G.
"""

import random

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st
from numba import cuda

from numba_cuzk.curve import layout
from numba_cuzk.curve.params import G1, G2
from numba_cuzk.field.params import FR
from numba_cuzk.msm import Workspace, msm, reference as ref, to_point, upload_bases
from numba_cuzk.msm import bits
from numba_cuzk.msm.plan import make_plan
from tests.conftest import SIMULATOR
from tests.msm import inputs

pytestmark = pytest.mark.gpu
R = FR.modulus
SMALL = st.sampled_from([0, 1, 2, R - 1, 1 << 64, None])  # None: a random scalar


def _limbs(values, rng):
    return inputs.scalar_limbs([rng.randrange(R) if v is None else v for v in values])


def _split(limbs, tail):
    split = bits.BitSplit(limbs.shape[1], tail, tile=3, per=3)  # tile edges crossed, several levels
    split.split(cuda.to_device(limbs), 0)
    return split


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(SMALL, min_size=1, max_size=14), st.integers(0, 2**32))
def test_split_matches_reference(values, seed):
    limbs = _limbs(values, random.Random(seed))
    ones, others = bits.split_reference(limbs)
    split = _split(limbs, limbs.shape[1])
    totals = split.totals.copy_to_host()
    assert list(totals) == [len(ones), len(others)]
    assert list(split.ones.copy_to_host()[:len(ones)]) == list(ones)
    assert list(split.tail.copy_to_host()[:len(others)]) == list(others)
    split.gather(2, 0)  # C's view: the tail's scalars from index 2 on, zero below
    gathered = split.tail_scalars.copy_to_host()
    for j, i in enumerate(others):
        assert list(gathered[:, j]) == (list(limbs[:, i]) if i >= 2 else [0] * FR.limbs)
    assert not gathered[:, len(others):].any()


def _bit_msm(curve, pts, values, first=0, tail=None, dense=False):
    rng = random.Random(5)
    limbs = _limbs(values, rng)
    n = limbs.shape[1]
    tail = tail or n
    split = _split(limbs, tail)
    bases = upload_bases(layout.points_to_limbs(pts, curve), curve)
    plan = make_plan(tail)
    out = cuda.device_array((2, 4 * curve.limbs, plan.windows), dtype=np.uint32)
    out[:] = np.full(out.shape, 0xA5A5A5A5, dtype=np.uint32)  # poison: every column must be written
    row = None
    if dense:  # the 1s on dense (non-identity) bases only
        split.density(bases, first, split.dense[0], 0)
        want_dense = bits.density_reference(layout.points_to_limbs(pts, curve), first, n)
        assert list(split.dense[0].copy_to_host()) == list(want_dense)
        row = split.dense[0]
    got = to_point(split.msm(bases, out, Workspace(curve, plan, host_scalars=False), 0, first=first, dense=row))
    k = inputs.limbs_to_ints(limbs)
    want = ref.msm(inputs.reference_curve(curve), pts[:n - first], k[first:])
    return got, want, split


CASES = {
    "mix": [1, 0, None, 1, 1, 0, None, 1, R - 1, 1],
    "all_bits": [1, 0, 1, 1, 0, 0, 1, 1, 1, 0],
    "no_bits": [None, 2, None, R - 1, None, 3, None, None, 5, None],
    "all_zero": [0] * 10,
}


@pytest.mark.parametrize("curve", [G1, G2], ids=lambda c: c.name)
@pytest.mark.parametrize("case", sorted(CASES))
def test_bit_tail_equals_msm(curve, case):
    pts = inputs.multiples(curve, 10, random.Random(3))
    pts[4] = pts[3]  # a repeated base
    pts[6] = pts[0] = None  # identities among the bases (a 1 on each: skipped by the density map)
    got, want, _ = _bit_msm(curve, pts, CASES[case], dense=case != "all_zero")
    assert got == want
    if case == "mix":  # and the plain MSM, its 0/1 path included
        assert got == to_point(msm(upload_bases(layout.points_to_limbs(pts, curve), curve),
                                   cuda.to_device(_limbs(CASES[case], random.Random(5)))))


def test_private_wires_and_identities():
    """first > 0 (C: base j is wire j + first; wires below first take no part); and bases
    that are all the identity give the identity."""
    pts = inputs.multiples(G1, 10, random.Random(4))
    got, want, _ = _bit_msm(G1, pts, CASES["mix"], first=3)
    assert got == want
    pts[5] = None
    got, want, split = _bit_msm(G1, pts, CASES["mix"], first=3, dense=True)
    assert got == want
    with pytest.raises(ValueError, match="selected for another query"):
        out = cuda.device_array((2, 4 * G1.limbs, make_plan(10).windows), np.uint32)
        bases = upload_bases(layout.points_to_limbs(pts, G1), G1)
        split.msm(bases, out, Workspace(G1, make_plan(10), host_scalars=False), 0)
    got, want, _ = _bit_msm(G1, [None] * 10, CASES["mix"])
    assert got is None and want is None


@settings(max_examples=4, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(SMALL, min_size=2, max_size=9), st.integers(0, 3))
def test_bit_tail_property(values, first):
    first = min(first, len(values) - 1)
    pts = inputs.multiples(G1, len(values), random.Random(len(values)))
    got, want, _ = _bit_msm(G1, pts, values, first=first, dense=first % 2 == 1)
    assert got == want


def test_tail_overflow_refused():
    limbs = _limbs(CASES["no_bits"], random.Random(1))
    split = _split(limbs, 4)
    totals = split.totals.copy_to_host()
    with pytest.raises(bits.TailOverflow, match="planned for at most 4"):
        bits.check_totals(totals, 4)
    bits.check_totals(totals, 10)
    assert list(split.tail.copy_to_host()) == list(bits.split_reference(limbs)[1][:4])


@pytest.mark.skipif(SIMULATOR, reason="2^20 scalars: on a GPU only (-m gpu)")
@pytest.mark.parametrize("curve", [G1, G2], ids=lambda c: c.name)
@pytest.mark.parametrize("tail_share", [0.0, 1e-3, 1.0])
def test_bit_tail_closed_form_2_20(curve, tail_share):
    """2^20 bases k_i G, scalars 44% 1s (bit_heavy's share), a ``tail_share`` of random
    others: the split MSM equals (sum s_i k_i mod r) G, and the plain MSM."""
    from numba_cuzk.curve.fixed_base import fixed_base_mul, fixed_base_table
    from numba_cuzk.curve.reference import Curve

    n = 1 << 20
    rng = np.random.default_rng(int(tail_share * 1000) + curve.limbs)
    k = inputs.random_scalar_limbs(n, rng)
    points = cuda.device_array((2 * curve.limbs, n), dtype=np.uint32)
    fixed_base_mul(points, cuda.to_device(k), fixed_base_table(curve.generator, curve, to_device=True), curve)
    bases = upload_bases(points, curve)
    s = np.zeros((FR.limbs, n), dtype=np.uint32)
    s[0] = rng.random(n) < 0.44
    others = rng.random(n) < tail_share
    s[:, others] = inputs.random_scalar_limbs(int(others.sum()), rng)
    tail = max(1, int(others.sum()))
    split = bits.BitSplit(n, tail)
    split.split(cuda.to_device(s), 0)
    plan = make_plan(tail)
    out = cuda.device_array((2, 4 * curve.limbs, plan.windows), dtype=np.uint32)
    got = to_point(split.msm(bases, out, Workspace(curve, plan, host_scalars=False), 0))
    total = sum(a * b for a, b in zip(inputs.limbs_to_ints(s), inputs.limbs_to_ints(k))) % R
    want = Curve(curve).mul(curve.generator, total)
    assert got == want
    assert to_point(msm(bases, cuda.to_device(s))) == want
