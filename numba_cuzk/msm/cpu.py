"""The CPU backend: the same digits and point formulas as the kernels, on all cores.

Windows run in parallel (``prange``), each filling its own 2^(c-1) XYZZ buckets with
mixed additions and reducing them by running sums to its window sum; the result is the
window sums, as the GPU's (pippenger.to_point combines them by Horner's rule). Scalars 0
and 1 need no fast path here (a 1 is one addition into window 0's first bucket, as in the
batch_add). Parallelism is the window count
(13-20 at the sizes a prover uses): enough for a 16-core host.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np
from numba import njit, prange

from numba_cuzk.curve.params import CurveParams
from numba_cuzk.curve.points import point_ops
from numba_cuzk.field.target import local_u32
from numba_cuzk.field.scalars import N, load_scalar
from numba_cuzk.msm.digits import signed_digit


@lru_cache(maxsize=None)
def cpu_msm(curve: CurveParams):
    """``run(bases, scalars, montgomery, c, sums)``: sums (4L, windows) <- the XYZZ window
    sums of the MSM of (2L, >= n) affine bases and (8, n) scalars (numpy arrays)."""
    P = point_ops(curve)
    L = P.limbs
    A, X = 2 * L, 4 * L
    load, store = P.load, P.store
    aff_neg, xyzz_set_identity = P.aff_neg, P.xyzz_set_identity
    add_mixed, add = P.xyzz_add_mixed, P.xyzz_add

    @njit(parallel=True)
    def window_sums(bases, scalars, montgomery, c, sums):
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

    def run(bases, scalars, montgomery, c, sums):
        window_sums(bases, scalars, bool(montgomery), c, sums)
        return sums

    return run
