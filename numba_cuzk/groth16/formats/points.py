"""Affine points as snarkjs stores them <-> the curve layout, and their validation.

snarkjs (ffjavascript ``toRprLEM``) writes an affine point as x | y, each Fq component
48 bytes little-endian in Montgomery form (x * 2^384 mod q), an Fq2 as c0 | c1, and
infinity as all zeros. 48 such bytes are exactly 12 little-endian uint32 Montgomery limbs,
so point i's bytes are column i of curve/layout.py's (2L, n) array: converting is a
reshape and a transpose, with no Python object per point.
"""

from __future__ import annotations

import numpy as np
from numba_cuzk import _compat  # noqa: F401,I001  (numba patched before its first use)
from numba import cuda

from numba_cuzk.curve import checks, kernels, layout
from numba_cuzk.curve.ark import to_ark
from numba_cuzk.curve.params import CurveParams
from numba_cuzk.curve.reference import Curve
from numba_cuzk.curve.reference import g1 as ref_g1
from numba_cuzk.curve.reference import g2 as ref_g2
from numba_cuzk.field import codec
from numba_cuzk.field.params import FQ
from numba_cuzk.field.target import is_device_array

# Below this many points ``problem`` checks them one by one (~0.1 ms a point); from it on,
# the bulk kernels (curve/kernels.check, compiled once per machine: kernel_cache.py). On
# the CPU they take ~0.25 ms a point a core (a 2^20-constraint zkey has ~5 million
# points), so the Prover checks large keys on the GPU when it has one.
BULK_CHECK_MIN = 256


def reference(curve: CurveParams) -> Curve:
    """The Python reference curve (curve/reference.py) for G1 or G2."""
    return ref_g1 if curve.degree == 1 else ref_g2


def point_bytes(curve: CurveParams) -> int:
    """Bytes of one stored affine point: 96 (G1) or 192 (G2)."""
    return 2 * curve.coordinate_bytes


def from_stored(raw: np.ndarray, curve: CurveParams, where: str) -> np.ndarray:
    """(n * point_bytes,) uint8 -> (2L, n) uint32 Montgomery affine points (a copy).

    Raises ValueError naming the first point with an Fq component >= q."""
    rows = 2 * curve.limbs
    limbs = raw.view("<u4").reshape(-1, rows).T.astype(np.uint32, order="C")
    bad = [i for i in (codec.first_noncanonical(limbs[k:k + FQ.limbs], FQ) for k in range(0, rows, FQ.limbs))
           if i >= 0]
    if bad:
        raise ValueError(f"{where}: point {min(bad)}: coordinate not reduced (>= q)")
    return limbs


def to_stored(limbs) -> np.ndarray:
    """(2L, n) -> (n, 2L) view: written in C order with little-endian words, point i's
    stored bytes (a device array, a resident key's query, is copied to the host first)."""
    return (limbs.copy_to_host() if is_device_array(limbs) else limbs).T


def problem(point, curve: CurveParams) -> str | None:
    """Why a reference affine point (canonical ints; None = infinity) is not a valid
    group element, or None. The curve equation by the reference, the subgroup by arkworks
    (0.08 ms a point against the reference's 2-3 ms in Python integers: a zkey's header
    has 6 points, checked until the key's check is recorded, and a proof 3, checked by
    every verify)."""
    if not reference(curve).is_on_curve(point):
        return checks.STATUS_REASONS[checks.NOT_ON_CURVE]
    if not to_ark(point, curve.degree).is_in_subgroup():
        return checks.STATUS_REASONS[checks.NOT_IN_SUBGROUP]
    return None


def check(points, curve: CurveParams, where: str, stream=None) -> None:
    """Raise ValueError naming the first of (2L, n) Montgomery affine points (a key's:
    (0, 0) is infinity) that is not on the curve or not in the prime-order subgroup.

    ``points`` is checked where it lives, as it is (curve/kernels.check): a device array
    by the GPU (the copy a Prover keeps: nothing converted or uploaded; ``stream``), a
    numpy array on all CPU cores; fewer than BULK_CHECK_MIN points by the reference."""
    n = points.shape[1]
    on_device = is_device_array(points)
    if n < BULK_CHECK_MIN:
        host = points.copy_to_host(stream=stream or 0) if on_device else points
        for i, point in enumerate(layout.limbs_to_points(host, curve)):
            reason = problem(point, curve)
            if reason:
                raise ValueError(f"{where}: point {i}: {reason}")
        return
    if on_device:
        status = cuda.device_array(n, dtype=np.uint8, stream=stream or 0)
        status = kernels.check(status, points, curve, stream=stream).copy_to_host(stream=stream or 0)
    else:
        status = kernels.check(np.empty(n, dtype=np.uint8), points, curve)
    bad = np.flatnonzero(status)
    if bad.size:
        raise ValueError(f"{where}: point {int(bad[0])}: {checks.STATUS_REASONS[int(status[bad[0]])]}")
