"""Fr scalars read as bit strings, for the window methods of the MSM and of fixed-base
multiplication (one source for the CUDA kernels and the CPU backend).

Scalars are Fr elements in the field layout, (8, n) uint32, canonical or Montgomery form.
``load_scalar`` brings one to canonical form in [0, r): an input >= r is reduced mod r
(two conditional subtractions suffice: 2^256 < 3r), which leaves k*P unchanged for P in
the order-r subgroup; Montgomery inputs are then multiplied by R^-1.
"""

from __future__ import annotations

import numpy as np
from numba_cuzk import _compat  # noqa: F401,I001  (numba patched before its first use)
from numba import uint64

from numba_cuzk.field.mont import device, fr_ops

N = fr_ops.limbs  # 8 limbs of 32 bits

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
def bits(k, pos, width):
    """Bits pos .. pos+width-1 of k (8,) as uint64 (width <= 32; bits past 255 read as 0)."""
    limb = pos >> 5
    lo = _U0
    hi = _U0
    for j in range(N):  # masks, not k[limb]: a run-time index would put k in local memory
        lo |= uint64(k[j]) & (_U0 - uint64(j == limb))
        hi |= uint64(k[j]) & (_U0 - uint64(j == limb + 1))
    v = (lo | (hi << _U32)) >> uint64(pos & 31)
    return v & ((_U1 << uint64(width)) - _U1)
