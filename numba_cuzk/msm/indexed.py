"""The scatter of an MSM whose scalars are a gathered subset of another's (bits.py's tail).

The tail MSM runs Pippenger on the witness's non-bit scalars, gathered into a compact
(8, T) array, while its bases stay where the key put them: scalar j belongs to base
``indices[j] - offset`` of the query. Only the scatter differs from kernels.scatter: the
entry it writes carries that base index instead of j, so accumulate (which reads
``bases[:, index]``) sums the right points without a gathered copy of the bases (a G2
query at 2^27 is 25.5 GB: a copy of its tail would cost as much memory as the tail).
Classify, scan, accumulate and the reductions are kernels.py's, unchanged: the gathered
scalars are all KIND_OTHER (or 0 past the tail's end), so accumulate's 0/1 path, which
reads base j for scalar j, adds nothing.
"""

from __future__ import annotations

from numba_cuzk import _compat  # noqa: F401,I001  (numba patched before its first use)
from numba import cuda, int64, uint32

from numba_cuzk.field.scalars import N, load_scalar
from numba_cuzk.field.target import local_u32
from numba_cuzk.kernel_cache import gpu_kernel
from numba_cuzk.msm.digits import KIND_OTHER
from numba_cuzk.msm.kernels import scatter_digits


@gpu_kernel
def scatter_indexed(scalars, montgomery, c, first, stop, kinds, offsets, cursors, entries, indices, offset):
    """kernels.scatter with base index ``indices[i] - offset`` in scalar i's entries (the
    index bits: < 2^30, kernels.MAX_SCALARS)."""
    k = local_u32(N)
    for i in range(cuda.grid(1), scalars.shape[1], cuda.gridsize(1)):
        if kinds[i] != KIND_OTHER:
            continue
        load_scalar(k, scalars, i, montgomery)
        index = uint32(int64(indices[i]) - int64(offset))
        scatter_digits(k, c, first, stop, index, offsets, cursors, entries)


def scatter_indexed_reference(kinds, digits, indices, offset):
    """CPU reference of one window's entries: (base index, negative digit) per nonzero
    digit of a non-bit scalar, sorted by bucket then index ((w, n) int digits)."""
    out = []
    for w in range(digits.shape[0]):
        window = sorted((abs(int(d)) - 1, int(indices[i]) - offset, bool(d < 0))
                        for i, d in enumerate(digits[w]) if kinds[i] == KIND_OTHER and d != 0)
        out.append(window)
    return out

