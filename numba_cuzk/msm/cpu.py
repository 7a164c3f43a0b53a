"""The CPU backend: the same digits and point formulas as the kernels, on all cores.

The result is the window sums, as the GPU's (pippenger.to_point combines them by Horner's
rule). Three parallel passes (``prange``), each split so that every core has work even
when the windows are few or the scalars skewed:

1. Per scalar: its signed digits (digits.py) into a (windows, n) int32 table, 0 for
   scalars 0 and 1 (the 0/1 fast path, as on the GPU).
2. Scalars 1: their bases summed in ``threads`` chunks of points (mixed additions). In
   the bucket pass they would all land in window 0's first bucket, one task's work.
3. Buckets: tasks of (window, slice of its 2^(c-1) buckets), ``slices`` per window so
   that there are at least ``TASKS_PER_THREAD`` per thread. A task sorts its buckets'
   bases together and sums each bucket in affine coordinates with batched inversions
   (batch_affine.py), then reduces them by running sums: for buckets lo..hi-1,
   total = sum (b - lo + 1) B_b and acc = sum B_b, so its share of the window sum is
   total + lo * acc (lo < 2^(c-1): ~c doublings and additions).
A window's sum is then its slices' shares (and, for window 0, the sum of the 1s).
"""

from __future__ import annotations

import numpy as np
from numba_cuzk import _compat  # noqa: F401,I001  (numba patched before its first use)
from numba import get_num_threads, njit, prange

from numba_cuzk.curve.params import G1, G2, CurveParams
from numba_cuzk.curve.points import field_ops, point_ops
from numba_cuzk.curve.target import field_call
from numba_cuzk.field.mont import device
from numba_cuzk.field.scalars import N, load_scalar
from numba_cuzk.field.target import local_u32
from numba_cuzk.kernel_cache import cpu_kernel, specialize
from numba_cuzk.msm import batch_affine
from numba_cuzk.msm.digits import KIND_ONE, KIND_OTHER, KIND_ZERO, scalar_kind, signed_digit

TASKS_PER_THREAD = 2  # bucket tasks per thread: windows cost alike, so few suffice


def bucket_slices(windows: int, buckets: int, threads: int) -> int:
    """Bucket slices per window: at least TASKS_PER_THREAD tasks per thread in all."""
    return max(1, min(buckets, -(-TASKS_PER_THREAD * threads // windows)))


@cpu_kernel(parallel=True)
def signed_digits_cpu(scalars, bases, montgomery, c, windows):
    """(windows, n) int32 digits of (8, n) scalars (0 for scalars 0 and 1) and their (n,)
    uint8 kinds (digits.KIND_*; KIND_ZERO where the base, a row of ``bases``, is the
    identity: a Groth16 B query is mostly identity points)."""
    n = scalars.shape[1]
    digits = np.empty((windows, n), dtype=np.int32)
    kinds = np.empty(n, dtype=np.uint8)
    for i in prange(n):
        k = local_u32(N)
        load_scalar(k, scalars, i, montgomery)
        limbs = np.uint32(0)
        for j in range(bases.shape[1]):
            limbs |= bases[i, j]
        kind = scalar_kind(k) if limbs != 0 else KIND_ZERO
        kinds[i] = kind
        for w in range(windows):
            digits[w, i] = signed_digit(k, w, c) if kind == KIND_OTHER else 0
    return digits, kinds


# Names the templates below read, bound per curve by kernel_cache.specialize (_kernels);
# these placeholders are never compiled.
X = 0  # uint32 limbs of one XYZZ point: 4 L
store = None  # PointOps.store(arr, i, p, coords)
xyzz_set_identity = None  # PointOps.xyzz_set_identity(out)
add_mixed = None  # PointOps.xyzz_add_mixed(out, p, q): XYZZ p + affine q
add = None  # PointOps.xyzz_add(out, p, q)


def sum_of_ones(bases, kinds, chunks, out):
    """Template of sum_of_ones_g1_cpu and sum_of_ones_g2_cpu (X, xyzz_set_identity,
    add_mixed, add bound per curve): out (4L,) <- the XYZZ sum of the bases ((n, 2L) rows)
    whose scalar is 1, in ``chunks`` parallel parts."""
    n = kinds.shape[0]
    parts = np.empty((chunks, X), dtype=np.uint32)
    size = -(-n // chunks)
    for t in prange(chunks):
        xyzz_set_identity(parts[t])
        for i in range(t * size, min(n, (t + 1) * size)):
            if kinds[i] == KIND_ONE:
                add_mixed(parts[t], parts[t], bases[i])
    xyzz_set_identity(out)
    for t in range(chunks):
        add(out, out, parts[t])


def combine_shares(shares, ones, slices, sums):
    """Template of combine_shares_g1_cpu and combine_shares_g2_cpu (X, store,
    xyzz_set_identity, add bound per curve): sums[:, w] <- the sum
    of window w's slice shares (and, for window 0, of the 1s)."""
    total = local_u32(X)
    for w in range(sums.shape[1]):
        xyzz_set_identity(total)
        for s in range(slices):
            add(total, total, shares[w * slices + s])
        if w == 0:
            add(total, total, ones)
        store(sums, w, total, 4)


def _kernels(curve: CurveParams) -> tuple:
    P, F = point_ops(curve), field_ops(curve)
    L, name = P.limbs, curve.name.lower()
    bound = dict(L=L, A=2 * L, X=4 * L, store=P.store, aff_neg=P.aff_neg,
                 aff_is_identity=P.aff_is_identity, aff_set_identity=P.aff_set_identity,
                 xyzz_set_identity=P.xyzz_set_identity,
                 xyzz_is_identity=P.xyzz_is_identity, add_mixed=P.xyzz_add_mixed, add=P.xyzz_add, dbl=P.xyzz_dbl,
                 f_copy=F.copy, f_set_one=F.set_one, f_is_zero=F.is_zero, f_eq=F.eq,
                 **{f"f_{op}": field_call(getattr(F, op), 3, L) for op in ("mul", "add", "sub")},
                 **{f"f_{op}": field_call(getattr(F, op), 2, L) for op in ("sqr", "dbl", "inv")})
    for helper, jit in (("pair_denominator", device), ("pair_sum", device), ("special_sum", njit),
                        ("sort_by_bucket", njit), ("sum_buckets", njit), ("add_multiple", njit)):
        bound[helper] = jit(specialize(getattr(batch_affine, helper), f"{helper}_{name}_cpu", **bound))
    return (cpu_kernel(specialize(sum_of_ones, f"sum_of_ones_{name}_cpu", **bound), parallel=True),
            cpu_kernel(specialize(batch_affine.bucket_shares, f"bucket_shares_{name}_cpu", **bound), parallel=True),
            cpu_kernel(specialize(combine_shares, f"combine_shares_{name}_cpu", **bound)))


KERNELS = {curve.name: _kernels(curve) for curve in (G1, G2)}


def cpu_msm(curve: CurveParams, bases: np.ndarray, scalars: np.ndarray, montgomery: bool, c: int,
            sums: np.ndarray) -> np.ndarray:
    """sums (4L, windows) <- the XYZZ window sums of the MSM of (2L, >= n) affine bases and
    (8, n) scalars (numpy arrays; Montgomery form if ``montgomery``), window c bits."""
    ones_kernel, shares_kernel, combine_kernel = KERNELS[curve.name]
    windows, threads = sums.shape[1], get_num_threads()
    rows = np.ascontiguousarray(bases[:, :scalars.shape[1]].T)  # a point's limbs in one row: each is read per window
    digits, kinds = signed_digits_cpu(scalars, rows, bool(montgomery), c, windows)
    ones = np.empty(4 * point_ops(curve).limbs, dtype=np.uint32)
    ones_kernel(rows, kinds, threads, ones)
    slices = bucket_slices(windows, 1 << (c - 1), threads)
    shares = np.empty((windows * slices, ones.shape[0]), dtype=np.uint32)
    shares_kernel(rows, digits, c, slices, shares)
    combine_kernel(shares, ones, slices, sums)
    return sums
