"""Number-theoretic transforms over BLS12-381's Fr, on the GPU or on all CPU cores.

    from numba_cuzk.ntt import ntt, intt, coset_ntt, coset_intt
    ntt(a)                      # a: (8, n) or (batch, 8, n) uint32 Montgomery Fr, in place
    coset_ntt(a, g, out=b)      # b = evaluations of a on g<w>; a is kept
    shift_to_coset(a, g)        # values on <w> -> values on g<w> (= coset_ntt(intt(a), g))

Modules: domain (sizes, pass plan, root tables), reference (textbook NTT on Python ints),
device (per-block code shared by both backends), kernels (CUDA kernel + CPU function per
step), transform (host wrappers and device caches). See transform.py for memory use.
"""

from numba_cuzk.ntt.domain import MAX_LOG_N
from numba_cuzk.ntt.transform import (
    cached_arrays, cached_bytes, clear_cache, coset_intt, coset_ntt, intt, ntt, powers, prepare, shift_to_coset,
)

__all__ = ["MAX_LOG_N", "cached_arrays", "cached_bytes", "clear_cache", "coset_intt", "coset_ntt", "intt", "ntt",
           "powers", "prepare", "shift_to_coset"]
