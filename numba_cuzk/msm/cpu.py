"""The CPU backend: the same digits and point formulas as the kernels, on all cores.

Windows run in parallel (``prange``), each filling its own 2^(c-1) XYZZ buckets with
mixed additions and reducing them by running sums to its window sum; the result is the
window sums, as the GPU's (pippenger.to_point combines them by Horner's rule). Scalars 0
and 1 need no fast path here (a 1 is one addition into window 0's first bucket, as in the
batch_add). Parallelism is the window count
(13-20 at the sizes a prover uses): enough for a 16-core host.
"""

from __future__ import annotations

import numpy as np
from numba import prange

from numba_cuzk.curve.params import G1, G2, CurveParams
from numba_cuzk.curve.points import point_ops
from numba_cuzk.field.target import local_u32
from numba_cuzk.kernel_cache import cpu_kernel, specialize
from numba_cuzk.field.scalars import N, load_scalar
from numba_cuzk.msm.digits import signed_digit


def window_sums(bases, scalars, montgomery, c, sums):
    """Template (A, X, load, store, aff_neg, xyzz_set_identity, add_mixed and add bound per
    curve by kernel_cache.specialize): sums (4L, windows) <- the XYZZ window sums."""
    n = scalars.shape[1]
    canonical = np.empty((N, n), dtype=np.uint32)
    for i in prange(n):
        k = local_u32(N)
        load_scalar(k, scalars, i, montgomery)
        for j in range(N):
            canonical[j, i] = k[j]
    buckets = 1 << (c - 1)
    for w in prange(sums.shape[1]):
        table = np.empty((X, buckets), dtype=np.uint32)
        acc = local_u32(X)
        total = local_u32(X)
        bucket = local_u32(X)
        pt = local_u32(A)
        xyzz_set_identity(acc)
        for b in range(buckets):
            store(table, b, acc, 4)
        for i in range(n):
            d = signed_digit(canonical[:, i], w, c)
            if d != 0:
                load(pt, bases, i, 2)
                if d < 0:
                    aff_neg(pt, pt)
                load(acc, table, abs(d) - 1, 4)
                add_mixed(acc, acc, pt)
                store(table, abs(d) - 1, acc, 4)
        xyzz_set_identity(acc)
        xyzz_set_identity(total)
        for b in range(buckets - 1, -1, -1):  # total = sum (b+1) B_b by running sums
            load(bucket, table, b, 4)
            add(acc, acc, bucket)
            add(total, total, acc)
        store(sums, w, total, 4)


def _window_sums_kernel(curve: CurveParams):
    P = point_ops(curve)
    return cpu_kernel(specialize(
        window_sums, f"window_sums_{curve.name.lower()}_cpu", A=2 * P.limbs, X=4 * P.limbs, load=P.load,
        store=P.store, aff_neg=P.aff_neg, xyzz_set_identity=P.xyzz_set_identity, add_mixed=P.xyzz_add_mixed,
        add=P.xyzz_add), parallel=True)


WINDOW_SUMS = {curve.name: _window_sums_kernel(curve) for curve in (G1, G2)}


def cpu_msm(curve: CurveParams, bases: np.ndarray, scalars: np.ndarray, montgomery: bool, c: int,
            sums: np.ndarray) -> np.ndarray:
    """sums (4L, windows) <- the XYZZ window sums of the MSM of (2L, >= n) affine bases and
    (8, n) scalars (numpy arrays; Montgomery form if ``montgomery``), window c bits."""
    WINDOW_SUMS[curve.name](bases, scalars, bool(montgomery), c, sums)
    return sums
