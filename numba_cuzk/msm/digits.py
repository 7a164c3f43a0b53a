"""Scalars -> signed window digits, one source for the CUDA kernels and the CPU backend.

Scalars come canonical from field/scalars.py's ``load_scalar`` (reduced mod r; Montgomery
inputs converted); its ``bits`` reads a window of them.

Signed digits without a carry chain: with b_j bit j of k (b_-1 = 0),

    d_w = raw_w + b_(cw-1) - 2^c * b_(c(w+1)-1),   raw_w = bits cw .. cw+c-1 of k,

telescopes to sum_w d_w 2^(cw) = k (the last borrow is bit 255 or higher: zero), and
d_w lies in [-2^(c-1), 2^(c-1)]: a raw value with its top bit set becomes negative. Each
window's digit depends only on k, so any thread computes any digit (no sequential carry).
"""

from __future__ import annotations

from numba_cuzk import _compat  # noqa: F401,I001  (numba patched before its first use)
from numba import int64, uint32

from numba_cuzk.field.mont import device
from numba_cuzk.field.scalars import N, bits

KIND_ZERO, KIND_ONE, KIND_OTHER = 0, 1, 2  # the byte map of scalars (0/1 fast path)


@device
def scalar_kind(k):
    """KIND_ZERO, KIND_ONE or KIND_OTHER of a canonical scalar."""
    high = uint32(0)
    for j in range(1, N):
        high |= k[j]
    if high != uint32(0):
        return KIND_OTHER
    if k[0] == uint32(0):
        return KIND_ZERO
    if k[0] == uint32(1):
        return KIND_ONE
    return KIND_OTHER


@device
def signed_digit(k, w, c):
    """d_w of the module docstring, an int64 in [-2^(c-1), 2^(c-1)]."""
    pos = int64(w) * int64(c)
    raw = int64(bits(k, pos, c))
    carry = int64(0)
    if pos > 0:
        carry = int64(bits(k, pos - 1, 1))
    top = raw >> (c - 1)
    return raw + carry - (top << c)
