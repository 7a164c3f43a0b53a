"""Bulk kernels of kernels.py: batched conversion to affine, on the device (simulator in
CI) and on the CPU cores, against the reference."""

import random

import numpy as np
import pytest
from numba import cuda

from numba_cuzk.curve import kernels, layout
from numba_cuzk.curve.params import G1, G2
from numba_cuzk.curve.reference import g1, g2
from tests.conftest import SIMULATOR
from tests.curve.values import jacobian, xyzz

CURVES = [pytest.param((G1, g1), id="G1"), pytest.param((G2, g2), id="G2")]
N = 5 if SIMULATOR else 3000  # > AFFINE_CHUNK on the GPU: several chunks, a ragged last one


def _batch(ref, n, form, rng):
    pts = [None if i % 7 == 3 else ref.random_point(rng) if i < 4 else None for i in range(n)]
    base = ref.random_point(rng)
    acc = base
    for i in range(4, n):  # cheap distinct points: base, 2 base, ... (with holes)
        if pts[i] is None and i % 7 != 3:
            pts[i] = acc
        acc = ref.add(acc, base)
    rep = jacobian if form == "jacobian" else xyzz
    return pts, layout.points_to_limbs([rep(ref, p, rng) for p in pts], curve=ref.params, form=form)


@pytest.mark.gpu
@pytest.mark.parametrize("case", CURVES)
@pytest.mark.parametrize("form", ["xyzz", "jacobian"])
def test_to_affine_device(case, form):
    curve, ref = case
    pts, arr = _batch(ref, N, form, random.Random(5))
    out = cuda.to_device(np.zeros((2 * curve.limbs, N), dtype=np.uint32))
    kernels.to_affine(out, cuda.to_device(arr), curve, form)
    assert layout.limbs_to_points(out.copy_to_host(), curve) == pts


@pytest.mark.parametrize("form", ["xyzz", "jacobian"])
def test_to_affine_cpu(form):
    pts, arr = _batch(g1, 70, form, random.Random(6))
    out = np.zeros((2 * G1.limbs, 70), dtype=np.uint32)
    kernels.to_affine(out, arr, G1, form)
    assert layout.limbs_to_points(out, G1) == pts


def test_to_affine_rejects_bad_shapes():
    with pytest.raises(ValueError, match="shape"):
        kernels.to_affine(np.zeros((24, 3), np.uint32), np.zeros((36, 3), np.uint32), G1, "xyzz")
    with pytest.raises(ValueError, match="form"):
        kernels.to_affine(np.zeros((24, 3), np.uint32), np.zeros((48, 3), np.uint32), G1, "projective")


def _pair_check_kernel():
    from numba_cuzk.curve.checks import pair_check_stored
    from numba_cuzk.curve.points import point_ops
    from numba_cuzk.field.target import local_u32, pair_lane

    P = point_ops(G2, pair=True)
    check_stored, load, half = pair_check_stored(), P.load, 2 * P.limbs

    @cuda.jit
    def check_on_pairs(n, status, points):
        i = cuda.grid(1) // 2
        if i < n:
            p = local_u32(half)
            load(p, points, i, 2)
            status[pair_lane(), i] = check_stored(p)  # each lane's answer: they must agree

    return check_on_pairs


@pytest.mark.gpu
def test_g2_check_on_lane_pairs():
    """checks.pair_check_stored (the check_g2 kernel's, on the GPU) in the simulator's Python lane
    pairs: the identity, points in G2, one off the curve and one off the subgroup."""
    from numba_cuzk.curve.checks import NOT_IN_SUBGROUP, NOT_ON_CURVE, OK
    from tests.field.device_harness import fast_handoffs

    rng = random.Random(8)
    pts = [None, g2.random_point(rng), g2.point_off_curve(rng), g2.point_off_subgroup(rng), g2.generator]
    status = cuda.to_device(np.full((2, len(pts)), 255, dtype=np.uint8))
    with fast_handoffs():
        _pair_check_kernel()[1, 2 * len(pts)](len(pts), status, cuda.to_device(layout.points_to_limbs(pts, G2)))
    expected = [OK, OK, NOT_ON_CURVE, NOT_IN_SUBGROUP, OK]
    assert status.copy_to_host().tolist() == [expected, expected]
