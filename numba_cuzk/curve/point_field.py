"""The field under the point formulas: one thread per point, or a lane pair per point.

A ``FieldBackend`` is what affine.py, jacobian.py and xyzz.py write their formulas over,
as sppark's ``xyzz_t<field_t>`` is written over its ``field_t``: the same names whether a
thread holds a whole coordinate (``single_lane``: G1 over Fq, G2 over Fq2, L = 12 or 24
limbs) or a lane pair holds it, a lane's half of every coordinate in L = 12 limbs
(``lane_pair``: G2 over field/fq2_pair.py, CUDA kernels only). Only here do the two
differ: how a point moves between a bulk array and registers, how the curve's b is
loaded, and whether two independent products run as one (``mul2``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

from numba_cuzk.curve.params import CurveParams
from numba_cuzk.curve.target import field_call, split
from numba_cuzk.field.fq2 import fq2_ops
from numba_cuzk.field.fq2_pair import fq2_pair_ops, fq2p_mul2
from numba_cuzk.field.mont import device, fq_ops
from numba_cuzk.field.params import FQ
from numba_cuzk.field.target import pair_function, pair_lane


def field_ops(curve: CurveParams):
    """mont.fq_ops for G1, fq2.fq2_ops for G2: the same function names."""
    return fq_ops if curve.degree == 1 else fq2_ops


def montgomery_limbs(value, degree: int) -> tuple:
    """A canonical Fq (int) or Fq2 (pair) constant as a tuple of Montgomery uint32 limbs."""
    parts = (value,) if degree == 1 else value
    limbs = []
    for c in parts:
        m = c * FQ.r % FQ.modulus
        limbs += [np.uint32((m >> (32 * j)) & 0xFFFFFFFF) for j in range(FQ.limbs)]
    return tuple(limbs)


@dataclass(frozen=True)
class FieldBackend:
    """Field functions of one coordinate (a: L uint32 limbs, Montgomery form; ``out`` may
    alias an input) and the two decorators the formulas are made with.

    formula: for a point formula (target.split: inlined in CUDA kernels, out of line on the
    CPU; pair_function on lane pairs); simple: for a small helper (mont.device).
    mul2(o1, a1, b1, o2, a2, b2): o1 = a1 b1 and o2 = a2 b2, where o1 aliases neither a2
    nor b2. curve_b(out): the curve's b. load(out, arr, i, coords) / store(arr, i, p,
    coords): one point (a lane's half of it) between a bulk (coords * L', n) array and a
    flat one; copy_point(out, p, coords).
    """

    limbs: int
    lanes: int
    formula: Callable
    simple: Callable
    copy: Callable
    set_zero: Callable
    set_one: Callable
    is_zero: Callable
    eq: Callable
    add: Callable
    sub: Callable
    mul: Callable
    dbl: Callable
    neg: Callable
    sqr: Callable
    inv: Callable
    mul2: Callable
    curve_b: Callable
    load: Callable
    store: Callable
    copy_point: Callable


def _copy_point(simple: Callable, L: int) -> Callable:
    @simple
    def copy_point(out, p, coords):
        for j in range(coords * L):
            out[j] = p[j]

    return copy_point


def single_lane(curve: CurveParams) -> FieldBackend:
    """One thread per point: ``curve``'s field (Fq or Fq2), its operations
    target.field_call's (inlined on CUDA, a cfunc call on the CPU)."""
    F = field_ops(curve)
    L = F.limbs
    B = montgomery_limbs(curve.b, curve.degree)
    formula, simple = split, device
    add, sub, mul = (field_call(f, 3, L) for f in (F.add, F.sub, F.mul))
    dbl, neg, sqr, inv = (field_call(f, 2, L) for f in (F.dbl, F.neg, F.sqr, F.inv))

    @simple
    def load(out, arr, i, coords):
        for j in range(coords * L):
            out[j] = arr[j, i]

    @simple
    def store(arr, i, p, coords):
        for j in range(coords * L):
            arr[j, i] = p[j]

    @simple
    def mul2(o1, a1, b1, o2, a2, b2):
        """o1 = a1 b1, o2 = a2 b2; o1 must not alias a2 or b2 (the lane pairs' mul2
        reads all four inputs first)."""
        mul(o1, a1, b1)
        mul(o2, a2, b2)

    @simple
    def curve_b(out):
        for j in range(L):
            out[j] = B[j]

    return FieldBackend(limbs=L, lanes=1, formula=formula, simple=simple, copy=F.copy, set_zero=F.set_zero,
                        set_one=F.set_one, is_zero=F.is_zero, eq=F.eq, add=add, sub=sub, mul=mul, dbl=dbl, neg=neg,
                        sqr=sqr, inv=inv, mul2=mul2, curve_b=curve_b, load=load, store=store,
                        copy_point=_copy_point(simple, L))


def lane_pair(curve: CurveParams) -> FieldBackend:
    """A lane pair per point (G2, CUDA kernels only): fq2_pair.py's operations on a lane's
    half of each Fq2 coordinate; the bulk layout's coordinate k is rows 2Lk .. 2L(k+1),
    c0's limbs then c1's, lane 0 the first half."""
    if curve.degree != 2:
        raise ValueError("point_ops: lane pairs hold Fq2 coordinates (G2) only")
    F = fq2_pair_ops
    L = F.limbs
    B = montgomery_limbs(curve.b, curve.degree)
    formula = simple = pair_function
    B0, B1 = B[:L], B[L:]

    @simple
    def load(out, arr, i, coords):
        half = pair_lane() * L  # coordinate k's lane half: rows 2Lk + half ..
        for k in range(coords):
            for j in range(L):
                out[k * L + j] = arr[2 * L * k + half + j, i]

    @simple
    def store(arr, i, p, coords):
        half = pair_lane() * L
        for k in range(coords):
            for j in range(L):
                arr[2 * L * k + half + j, i] = p[k * L + j]

    @simple
    def curve_b(out):
        lane0 = pair_lane() == 0
        for j in range(L):
            out[j] = B0[j] if lane0 else B1[j]

    return FieldBackend(limbs=L, lanes=2, formula=formula, simple=simple, copy=F.copy, set_zero=F.set_zero,
                        set_one=F.set_one, is_zero=F.is_zero, eq=F.eq, add=F.add, sub=F.sub, mul=F.mul, dbl=F.dbl,
                        neg=F.neg, sqr=F.sqr, inv=F.inv, mul2=fq2p_mul2, curve_b=curve_b, load=load, store=store,
                        copy_point=_copy_point(simple, L))
