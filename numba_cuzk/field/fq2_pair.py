"""Fq2 on two threads: each lane of a pair holds one coordinate of every Fq2 value.

Why: one thread holding a G2 point (4 Fq2 coordinates = 96 limbs) plus a formula's
temporaries needs more than the 255 registers a thread can have: the single-thread G2
kernels spill (ptxas sm_90: accumulate 336 B of spill stores per thread, reduce 1.8 KB).
Split over a lane pair, a thread holds 48 limbs of a point, as a G1 thread does, and the
G2 kernels need no spills and a third less inlined code. What it bought on the H200:
G2 MSM 2^16 14.9 -> 11.3 ms, 2^20 unchanged (115 ms): a
pair computes 36 Fq products per mixed addition where one thread computes 28.

Lane 0 of the pair (pair_lane() == 0) holds c0, lane 1 holds c1 (x = c0 + c1 u,
u^2 = -1); both run the same code on their own halves, exchanging halves with
pair_exchange (a warp shuffle) where the arithmetic mixes them:

    add, sub, neg, dbl, select, copy   per lane, no exchange (half the work each)
    conj  lane 1 negates its half
    mul   lane l: p = a_l b_l, q = a_l b_(1-l) (b's other half exchanged first), then
          c0 = p_0 - p_1 on lane 0, c1 = q_0 + q_1 on lane 1: 2 Fq products per lane
          and 24 shuffles (a thread's Karatsuba is 3 products)
    mul2  two independent products a b and c d by Karatsuba across the pair: lane 0
          computes a0 b0, c0 d0 and (a0 + a1)(b0 + b1), lane 1 a1 b1, c1 d1 and
          (c0 + c1)(d0 + d1): 3 Fq products per lane where two muls take 4, 48 shuffles
          as two muls do
    sqr   c0 = (a0 + a1)(a0 - a1) on lane 0, c1 = 2 a1 a0 on lane 1: 1 product per lane
    is_zero, eq   both halves' answers combined, so every branch is taken by both lanes
    inv   both lanes invert a0^2 + a1^2 (the exchange gives each the sum)

Both lanes of a pair must reach every exchange together: code over these functions
branches only on pair-uniform values (is_zero, eq, and what the pair loaded alike).
Elements are 12-limb uint32 arrays (one coordinate, Montgomery form); ``load`` and
``store`` read and write this lane's half of the (24, n) bulk layout of fq2.py.
"""

from __future__ import annotations

from numba_cuzk import _compat  # noqa: F401,I001  (numba patched before its first use)
from numba import uint32

from numba_cuzk.field.mont import FieldOps, fq_ops
from numba_cuzk.field.params import FQ
from numba_cuzk.field.target import local_u32, pair_exchange, pair_function, pair_lane, pair_swap

_N = fq_ops.limbs
_ONE = tuple(uint32(((FQ.r % FQ.modulus) >> (32 * j)) & 0xFFFFFFFF) for j in range(_N))
_add, _sub, _mul, _neg, _dbl, _inv = fq_ops.add, fq_ops.sub, fq_ops.mul, fq_ops.neg, fq_ops.dbl, fq_ops.inv
_copy, _is_zero, _eq, _select = fq_ops.copy, fq_ops.is_zero, fq_ops.eq, fq_ops.select


@pair_function
def pair_both(own):
    """own (this lane's bool) and the partner's: the pair's common answer."""
    return (pair_exchange(uint32(own)) & uint32(own)) != uint32(0)


@pair_function
def fq2p_load(out, arr, i):
    """out (12,) <- this lane's half of arr[:, i] of a (24, n) array."""
    base = pair_lane() * _N
    for j in range(_N):
        out[j] = arr[base + j, i]


@pair_function
def fq2p_store(arr, i, a):
    base = pair_lane() * _N
    for j in range(_N):
        arr[base + j, i] = a[j]


@pair_function
def fq2p_copy(out, a):
    _copy(out, a)


@pair_function
def fq2p_set_zero(out):
    for j in range(_N):
        out[j] = uint32(0)


@pair_function
def fq2p_set_one(out):
    keep = uint32(0) - uint32(pair_lane() == 0)  # one on lane 0 (c0), zero on lane 1
    for j in range(_N):
        out[j] = _ONE[j] & keep


@pair_function
def fq2p_is_zero(a):
    return pair_both(_is_zero(a))


@pair_function
def fq2p_eq(a, b):
    return pair_both(_eq(a, b))


@pair_function
def fq2p_select(out, cond, a, b):
    _select(out, cond, a, b)


@pair_function
def fq2p_add(out, a, b):
    _add(out, a, b)


@pair_function
def fq2p_sub(out, a, b):
    _sub(out, a, b)


@pair_function
def fq2p_neg(out, a):
    _neg(out, a)


@pair_function
def fq2p_dbl(out, a):
    _dbl(out, a)


@pair_function
def fq2p_conj(out, a):
    """conj(a) = c0 - c1 u: lane 1 negates its half."""
    if pair_lane() == 0:
        _copy(out, a)
    else:
        _neg(out, a)


@pair_function
def fq2p_mul(out, a, b):
    """(a0 + a1 u)(b0 + b1 u): c0 = a0 b0 - a1 b1 on lane 0, c1 = a0 b1 + a1 b0 on lane 1."""
    lane0 = pair_lane() == 0
    other = local_u32(_N)
    p = local_u32(_N)
    pair_swap(other, b)
    _mul(p, a, b)  # a_l b_l
    _mul(other, a, other)  # a_l b_(1-l)
    send = local_u32(_N)
    _select(send, lane0, other, p)  # lane 0 needs p_1, lane 1 needs q_0
    pair_swap(send, send)
    if lane0:
        _sub(out, p, send)
    else:
        _add(out, other, send)


@pair_function
def fq2p_mul2(o1, a, b, o2, c, d):
    """o1 = a b and o2 = c d (Karatsuba across the pair, see the module docstring); every
    input is read before either output is written, so the outputs may alias any input."""
    lane0 = pair_lane() == 0
    s = local_u32(_N)
    k = local_u32(_N)
    e = local_u32(_N)
    _select(e, lane0, c, a)  # what the partner needs: lane 0 gets a1, lane 1 gets c0
    pair_swap(s, e)
    _select(e, lane0, a, c)
    _add(s, s, e)  # a0 + a1 on lane 0, c0 + c1 on lane 1
    _select(e, lane0, d, b)
    pair_swap(k, e)
    _select(e, lane0, b, d)
    _add(k, k, e)
    _mul(k, s, k)  # K = (a0 + a1)(b0 + b1) on lane 0, (c0 + c1)(d0 + d1) on lane 1
    _mul(s, a, b)  # a_l b_l
    _mul(e, c, d)  # c_l d_l
    t = local_u32(_N)
    _sub(t, k, s)
    _select(t, lane0, t, s)  # lane 0 sends K - a0 b0, lane 1 sends a1 b1
    pair_swap(t, t)
    _sub(o1, s, t)  # lane 0: a0 b0 - a1 b1; lane 1: a1 b1 - (K - a0 b0), negated below
    if not lane0:
        _neg(o1, o1)
    pair_swap(t, e)  # lane 0 gets c1 d1, lane 1 gets c0 d0
    if not lane0:
        _sub(e, k, e)  # K - c1 d1
    _sub(o2, e, t)  # lane 0: c0 d0 - c1 d1; lane 1: K - c1 d1 - c0 d0


@pair_function
def fq2p_sqr(out, a):
    """c0 = (a0 + a1)(a0 - a1) on lane 0, c1 = 2 a1 a0 on lane 1."""
    lane0 = pair_lane() == 0
    other = local_u32(_N)
    x = local_u32(_N)
    y = local_u32(_N)
    pair_swap(other, a)
    _add(x, a, other)
    _sub(y, a, other)
    _dbl(other, other)
    _select(x, lane0, x, a)
    _select(y, lane0, y, other)
    _mul(out, x, y)


@pair_function
def fq2p_inv(out, a):
    """1/a = conj(a) / (a0^2 + a1^2); inv(0) = 0."""
    norm = local_u32(_N)
    other = local_u32(_N)
    _mul(norm, a, a)
    pair_swap(other, norm)
    _add(norm, norm, other)
    _inv(norm, norm)
    _mul(out, a, norm)
    if pair_lane() == 1:
        _neg(out, out)


fq2_pair_ops = FieldOps(
    limbs=_N, load=fq2p_load, store=fq2p_store, copy=fq2p_copy, set_zero=fq2p_set_zero, set_one=fq2p_set_one,
    is_zero=fq2p_is_zero, eq=fq2p_eq, select=fq2p_select, add=fq2p_add, sub=fq2p_sub, neg=fq2p_neg, dbl=fq2p_dbl,
    mul=fq2p_mul, sqr=fq2p_sqr, inv=fq2p_inv,
)
