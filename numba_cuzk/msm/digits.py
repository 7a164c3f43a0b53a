"""Scalars -> signed window digits, one source for the CUDA kernels and the CPU backend.

Scalars are Fr elements in the field layout, (8, n) uint32, canonical or Montgomery form.
``load_scalar`` brings one to canonical form in [0, r): an input >= r is reduced mod r
(two conditional subtractions suffice: 2^256 < 3r), which leaves k*P unchanged because
the bases lie in the order-r subgroup; Montgomery inputs are then multiplied by R^-1.

Signed digits without a carry chain: with b_j bit j of k (b_-1 = 0),

    d_w = raw_w + b_(cw-1) - 2^c * b_(c(w+1)-1),   raw_w = bits cw .. cw+c-1 of k,

telescopes to sum_w d_w 2^(cw) = k (the last borrow is bit 255 or higher: zero), and
d_w lies in [-2^(c-1), 2^(c-1)]: a raw value with its top bit set becomes negative. Each
window's digit depends only on k, so any thread computes any digit (no sequential carry).
"""

from __future__ import annotations

import numpy as np
from numba import int64, uint32, uint64

from numba_cuzk.field.mont import device, fr_ops

N = fr_ops.limbs  # 8 limbs of 32 bits
KIND_ZERO, KIND_ONE, KIND_OTHER = 0, 1, 2  # the byte map of scalars (0/1 fast path)

_U0 = np.uint64(0)
_U1 = np.uint64(1)
_U32 = np.uint64(32)
_from_mont = fr_ops.from_mont
_reduce_once = fr_ops.reduce_once


@device
def load_scalar(k, scalars, i, montgomery):
    """k (8,) <- scalar i of (8, n) ``scalars``, canonical in [0, r)."""
    for j in range(N):
        k[j] = scalars[j, i]
    _reduce_once(k, k)  # k < 2^256 < 3r: two subtractions make it canonical
    _reduce_once(k, k)
    if montgomery:
        _from_mont(k, k)


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
def _bits(k, pos, width):
    """Bits pos .. pos+width-1 of k as uint64 (width <= 32; bits past 255 read as 0)."""
    limb = pos >> 5
    lo = _U0
    hi = _U0
    for j in range(N):  # masks, not k[limb]: a run-time index would put k in local memory
        lo |= uint64(k[j]) & (_U0 - uint64(j == limb))
        hi |= uint64(k[j]) & (_U0 - uint64(j == limb + 1))
    v = (lo | (hi << _U32)) >> uint64(pos & 31)
    return v & ((_U1 << uint64(width)) - _U1)


@device
def signed_digit(k, w, c):
    """d_w of the module docstring, an int64 in [-2^(c-1), 2^(c-1)]."""
    pos = int64(w) * int64(c)
    raw = int64(_bits(k, pos, c))
    carry = int64(0)
    if pos > 0:
        carry = int64(_bits(k, pos - 1, 1))
    top = raw >> (c - 1)
    return raw + carry - (top << c)
