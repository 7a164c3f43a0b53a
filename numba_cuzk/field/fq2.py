"""Fq2 = Fq[u]/(u^2 + 1) device/CPU functions, built on the Fq Montgomery functions.

An Fq2 element is a uint32 array of 24 limbs in Montgomery form: limbs 0-11 are c0,
12-23 are c1 (x = c0 + c1*u). Bulk arrays are (24, n), the same structure-of-arrays layout
as one field (codec.py), so Fq2 loads and stores are plain 24-limb ones. Same conventions
as mont.py: ``out`` may alias an input.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from numba_cuzk import _compat  # noqa: F401,I001  (numba patched before its first use)
from numba import uint32

from numba_cuzk.field.mont import FieldOps, device, fq_ops
from numba_cuzk.field.target import local_u32

_N = fq_ops.limbs
FQ2_LIMBS = 2 * _N
_add, _sub, _mul, _sqr, _neg, _inv, _dbl = fq_ops.add, fq_ops.sub, fq_ops.mul, fq_ops.sqr, fq_ops.neg, fq_ops.inv, fq_ops.dbl
_copy, _set_zero, _set_one, _is_zero = fq_ops.copy, fq_ops.set_zero, fq_ops.set_one, fq_ops.is_zero
_select = fq_ops.select


@device
def fq2_load(out, arr, i):
    """out (24,) <- arr[:, i] of a (24, n) array."""
    for j in range(FQ2_LIMBS):
        out[j] = arr[j, i]


@device
def fq2_store(arr, i, a):
    for j in range(FQ2_LIMBS):
        arr[j, i] = a[j]


@device
def fq2_copy(out, a):
    for j in range(FQ2_LIMBS):
        out[j] = a[j]


@device
def fq2_set_zero(out):
    _set_zero(out[:_N])
    _set_zero(out[_N:])


@device
def fq2_set_one(out):
    _set_one(out[:_N])
    _set_zero(out[_N:])


@device
def fq2_eq(a, b):
    acc = a[0] ^ b[0]
    for j in range(1, FQ2_LIMBS):
        acc |= a[j] ^ b[j]
    return acc == uint32(0)


@device
def fq2_select(out, cond, a, b):
    _select(out[:_N], cond, a[:_N], b[:_N])
    _select(out[_N:], cond, a[_N:], b[_N:])


@device
def fq2_add(out, a, b):
    _add(out[:_N], a[:_N], b[:_N])
    _add(out[_N:], a[_N:], b[_N:])


@device
def fq2_sub(out, a, b):
    _sub(out[:_N], a[:_N], b[:_N])
    _sub(out[_N:], a[_N:], b[_N:])


@device
def fq2_neg(out, a):
    _neg(out[:_N], a[:_N])
    _neg(out[_N:], a[_N:])


@device
def fq2_dbl(out, a):
    _dbl(out[:_N], a[:_N])
    _dbl(out[_N:], a[_N:])


@device
def fq2_conj(out, a):
    _copy(out[:_N], a[:_N])
    _neg(out[_N:], a[_N:])


@device
def fq2_mul(out, a, b):
    """Karatsuba: 3 Fq products. c0 = a0b0 - a1b1, c1 = (a0+a1)(b0+b1) - a0b0 - a1b1."""
    v0 = local_u32(_N)
    v1 = local_u32(_N)
    s = local_u32(_N)
    t = local_u32(_N)
    _mul(v0, a[:_N], b[:_N])
    _mul(v1, a[_N:], b[_N:])
    _add(s, a[:_N], a[_N:])
    _add(t, b[:_N], b[_N:])
    _mul(s, s, t)
    _sub(out[:_N], v0, v1)
    _sub(s, s, v0)
    _sub(out[_N:], s, v1)


@device
def fq2_sqr(out, a):
    """Complex squaring: 2 Fq products. c0 = (a0+a1)(a0-a1), c1 = 2 a0 a1."""
    s = local_u32(_N)
    d = local_u32(_N)
    p = local_u32(_N)
    _add(s, a[:_N], a[_N:])
    _sub(d, a[:_N], a[_N:])
    _mul(p, a[:_N], a[_N:])
    _mul(out[:_N], s, d)
    _dbl(out[_N:], p)


@device
def fq2_mul_by_nonresidue(out, a):
    """out = a * (u + 1) = (a0 - a1) + (a0 + a1) u: the G2 twist's xi."""
    s = local_u32(_N)
    _add(s, a[:_N], a[_N:])
    _sub(out[:_N], a[:_N], a[_N:])
    _copy(out[_N:], s)


@device
def fq2_inv(out, a):
    """1/a = conj(a) / (a0^2 + a1^2): one Fq inversion. inv(0) = 0."""
    n = local_u32(_N)
    t = local_u32(_N)
    _sqr(n, a[:_N])
    _sqr(t, a[_N:])
    _add(n, n, t)
    _inv(n, n)
    _mul(out[:_N], a[:_N], n)
    _mul(t, a[_N:], n)
    _neg(out[_N:], t)


@device
def fq2_is_zero(a):
    return _is_zero(a[:_N]) and _is_zero(a[_N:])


@dataclass(frozen=True)
class ExtensionOps(FieldOps):
    """Fq2's FieldOps, plus conj(out, a) and mul_by_nonresidue(out, a) (times u + 1)."""

    conj: Callable
    mul_by_nonresidue: Callable


fq2_ops = ExtensionOps(
    limbs=FQ2_LIMBS, load=fq2_load, store=fq2_store, copy=fq2_copy, set_zero=fq2_set_zero,
    set_one=fq2_set_one, is_zero=fq2_is_zero, eq=fq2_eq, select=fq2_select, add=fq2_add,
    sub=fq2_sub, neg=fq2_neg, dbl=fq2_dbl, mul=fq2_mul, sqr=fq2_sqr, inv=fq2_inv,
    conj=fq2_conj, mul_by_nonresidue=fq2_mul_by_nonresidue,
)
