"""Square roots, the sign rule and subgroup membership, on the GPU and CPU.

``curve_checks(curve)`` builds device functions over points.py's formats (Montgomery
limbs; see points.py):

- ``sqrt(out, a) -> bool``: Fq: a^((q+1)/4) (q = 3 mod 4); Fq2: the complex method
  (Scott, "Implementing cryptographic pairings", sec. 5.3, also the reference's
  algorithm): with n = sqrt(a0^2 + a1^2), x0 = sqrt((a0 +- n)/2), x1 = a1 / (2 x0).
  2-4 Fq exponentiations and one inversion. Returns False (out undefined) for a non-square.
- ``lexicographically_largest(y) -> bool``: the sign rule of the standard encodings:
  canonical y > (q-1)/2; for Fq2, c1 decides unless it is zero, then c0.
- ``in_subgroup(p) -> bool`` for an affine point on the curve (Scott, "A note on group
  membership tests for G1, G2 and GT on BLS pairing-friendly curves", eprint 2021/1130,
  proofs in 2022/352):
      G1: phi(P) == -z^2 P,  phi(x, y) = (beta x, y)
      G2: psi(P) == z P,     psi(x, y) = (conj(x) psi_x, conj(y) psi_y)
  z^2 P (G1) is 127 Jacobian doublings and 16 mixed additions, [|z|]P (G2) 63 and 5 (|z|
  has Hamming weight 6), against 255 doublings + ~128 additions for r P.
  The identity is in the subgroup.
- ``check_stored(p) -> status``: a key's point as stored (Montgomery, (0, 0) for
  infinity), checked on its curve and in the subgroup, left as it is.

Decoding (decompression and these checks, with the flags and statuses declared here) is
decode.py's ``point_decoder(curve)``. ``pair_check_stored()``: G2's check_stored for points held by lane pairs (point_ops(G2,
pair=True)), which the check_g2 kernel runs.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Callable

import numpy as np
from numba_cuzk import _compat  # noqa: F401,I001  (numba patched before its first use)
from numba import int64, uint32, uint64

from numba_cuzk.curve.params import BETA, G2, PSI_X, PSI_Y, Z_ABS, CurveParams
from numba_cuzk.curve.points import montgomery_limbs, point_ops
from numba_cuzk.curve.target import field_call, split
from numba_cuzk.field.carry import opaque
from numba_cuzk.field.fq2 import fq2_ops
from numba_cuzk.field.fq2_pair import fq2_pair_ops, fq2p_conj
from numba_cuzk.field.mont import device, fq_ops
from numba_cuzk.field.params import FQ
from numba_cuzk.field.target import local_u32, pair_function, pair_lane

# decode flags (per point, uint32) and statuses
INFINITY = np.uint32(1)
SIGN = np.uint32(2)  # y is the lexicographically largest root
COMPRESSED = np.uint32(4)
CHECK = np.uint32(8)  # check on-curve (uncompressed) and subgroup membership
OK, NOT_ON_CURVE, NOT_IN_SUBGROUP = 0, 1, 2
STATUS_REASONS = {NOT_ON_CURVE: "not on curve", NOT_IN_SUBGROUP: "not in the prime-order subgroup"}

_N = FQ.limbs


def _bits(k: int) -> np.ndarray:
    limbs = np.array([(k >> (32 * j)) & 0xFFFFFFFF for j in range((k.bit_length() + 31) // 32)], dtype=np.uint32)
    limbs.flags.writeable = False  # constant memory on CUDA
    return limbs


# The subgroup checks' scalars by curve degree: G1 z^2 (128 bits), G2 |z| (64 bits).
_CHECK_SCALAR = {1: _bits(Z_ABS ** 2), 2: _bits(Z_ABS)}
_CHECK_SCALAR_BITS = {1: (Z_ABS ** 2).bit_length(), 2: Z_ABS.bit_length()}
_SQRT_EXPONENT = np.array([((FQ.modulus + 1) // 4 >> (32 * j)) & 0xFFFFFFFF for j in range(_N)], dtype=np.uint32)
_SQRT_EXPONENT.flags.writeable = False
_HALF_Q = tuple(np.uint32((((FQ.modulus - 1) // 2) >> (32 * j)) & 0xFFFFFFFF) for j in range(_N))
_INV2 = montgomery_limbs(pow(2, -1, FQ.modulus), 1)

fq_add, fq_sub, fq_mul = (field_call(f, 3, _N) for f in (fq_ops.add, fq_ops.sub, fq_ops.mul))
fq_sqr, fq_neg, fq_inv = (field_call(f, 2, _N) for f in (fq_ops.sqr, fq_ops.neg, fq_ops.inv))
fq_to_mont, fq_from_mont = field_call(fq_ops.to_mont, 2, _N), field_call(fq_ops.from_mont, 2, _N)
_pow = fq_ops.pow


@device
def _sqrt_candidate(out, a):
    _pow(out, a, _SQRT_EXPONENT)


fq_sqrt_candidate = field_call(_sqrt_candidate, 2, _N)  # a^((q+1)/4)
fq_eq, fq_is_zero, fq_copy, fq_set_zero = fq_ops.eq, fq_ops.is_zero, fq_ops.copy, fq_ops.set_zero


@split
def fq_sqrt(out, a):
    """out = a^((q+1)/4); True iff out^2 == a (a is a square)."""
    r = local_u32(_N)
    t = local_u32(_N)
    fq_sqrt_candidate(r, a)
    fq_sqr(t, r)
    fq_copy(out, r)
    return fq_eq(t, a)


@split
def fq2_sqrt(out, a):
    """Complex method; see the module docstring. out may not alias a."""
    a0 = a[:_N]
    a1 = a[_N:]
    t = local_u32(_N)
    if fq_is_zero(a1):
        if fq_sqrt(out[:_N], a0):
            fq_set_zero(out[_N:])
            return True
        fq_neg(t, a0)  # a0 is not a square, so -a0 is (-1 is not): sqrt(a0) = sqrt(-a0) u
        fq_set_zero(out[:_N])
        return fq_sqrt(out[_N:], t)
    n = local_u32(_N)
    s = local_u32(_N)
    half = local_u32(_N)
    for j in range(_N):
        half[j] = _INV2[j]
    fq_sqr(n, a0)
    fq_sqr(t, a1)
    fq_add(n, n, t)
    if not fq_sqrt(s, n):
        return False
    fq_add(t, a0, s)
    fq_mul(t, t, half)
    if not fq_sqrt(out[:_N], t):
        fq_sub(t, a0, s)
        fq_mul(t, t, half)
        if not fq_sqrt(out[:_N], t):
            return False
    fq_add(t, out[:_N], out[:_N])
    fq_inv(t, t)
    fq_mul(out[_N:], a1, t)
    return True


@device
def _fq_canonical_gt_half(a_mont):
    """Canonical value of a Montgomery element > (q-1)/2."""
    c = local_u32(_N)
    fq_from_mont(c, a_mont)
    borrow = uint64(0)
    for j in range(_N):  # (q-1)/2 - c: borrows iff c > (q-1)/2
        v = uint64(_HALF_Q[j]) - uint64(c[j]) - borrow
        borrow = v >> uint64(63)
    return borrow != uint64(0)


@device
def _fq_largest(y):
    return _fq_canonical_gt_half(y)


@device
def _fq2_largest(y):
    if fq_is_zero(y[_N:]):
        return _fq_canonical_gt_half(y[:_N])
    return _fq_canonical_gt_half(y[_N:])


@dataclass(frozen=True)
class CurveChecks:
    curve: CurveParams
    sqrt: Callable
    lexicographically_largest: Callable
    in_subgroup: Callable
    check_stored: Callable


def _mul_by_check_scalar(P, formula: Callable, degree: int) -> Callable:
    """out = [k] p (Jacobian) for an affine p and k = _CHECK_SCALAR[degree]: left to right,
    one doubling site and one mixed-addition site, each step one or the other (an addition
    that meets p == p doubles at the same site): NVVM inlines a formula at every call site,
    and a G2 site is ~20 s of compilation. The bit index is opaque so NVVM keeps the loop
    (see carry.opaque)."""
    jac_dbl, jac_from_affine, jac_add_mixed_unless_equal = P.jac_dbl, P.jac_from_affine, P.jac_add_mixed_unless_equal
    BITS = _CHECK_SCALAR[degree]
    TOP = _CHECK_SCALAR_BITS[degree] - 1

    @formula
    def mul_by_check_scalar(out, p):
        jac_from_affine(out, p)
        k = int64(opaque(uint32(TOP))) - 1
        adding = False
        while k >= 0:
            double = True
            if adding:
                adding = False
                double = not jac_add_mixed_unless_equal(out, out, p)  # out == p: out + p = 2 out
                k -= 1
            elif (BITS[k >> 5] >> uint32(k & 31)) & uint32(1):
                adding = True
            else:
                k -= 1
            if double:
                jac_dbl(out, out)

    return mul_by_check_scalar


def _g2_in_subgroup(P, mul_by_check_scalar: Callable, f_mul: Callable, f_set_one: Callable, conj: Callable,
                    psi: Callable, formula: Callable) -> Callable:
    """psi(P) == z P = -[|z|] P, with psi(x, y) = (conj(x) psi_x, conj(y) psi_y), over
    point_ops' P and its field's f_mul, f_set_one, conj; psi(c) loads (psi_x, psi_y) in
    P's layout."""
    L = P.limbs
    L2, L3 = 2 * L, 3 * L
    jac_neg, jac_eq = P.jac_neg, P.jac_eq

    @formula
    def in_subgroup(p):
        acc = local_u32(L3)
        e = local_u32(L3)
        c = local_u32(L2)
        mul_by_check_scalar(acc, p)
        jac_neg(acc, acc)
        psi(c)
        conj(e[:L], p[:L])
        f_mul(e[:L], e[:L], c[:L])
        conj(e[L:L2], p[L:L2])
        f_mul(e[L:L2], e[L:L2], c[L:L2])
        f_set_one(e[L2:L3])
        return jac_eq(e, acc)

    return in_subgroup


def _check_stored(P, in_subgroup: Callable, formula: Callable) -> Callable:
    """check_stored(p): a key's affine point as stored (Montgomery, (0, 0) the identity),
    unchanged. Returns OK, NOT_ON_CURVE or NOT_IN_SUBGROUP. No decompression: the check
    alone compiles in a fraction of decode's time."""
    aff_is_identity, aff_on_curve = P.aff_is_identity, P.aff_on_curve

    @formula
    def check_stored(p):
        if aff_is_identity(p):
            return OK
        if not aff_on_curve(p):
            return NOT_ON_CURVE
        if not in_subgroup(p):
            return NOT_IN_SUBGROUP
        return OK

    return check_stored


_PSI = montgomery_limbs(PSI_X, 2) + montgomery_limbs(PSI_Y, 2)  # psi_x's c0, c1, then psi_y's


@device
def _psi_constants(c):
    for j in range(4 * _N):
        c[j] = _PSI[j]


_PSI_LANE0, _PSI_LANE1 = _PSI[:_N] + _PSI[2 * _N:3 * _N], _PSI[_N:2 * _N] + _PSI[3 * _N:]


@pair_function
def _psi_constants_pair(c):
    """This lane's halves of psi_x and psi_y."""
    lane0 = pair_lane() == 0
    for j in range(2 * _N):
        c[j] = _PSI_LANE0[j] if lane0 else _PSI_LANE1[j]


@lru_cache(maxsize=None)
def pair_check_stored() -> Callable:
    """curve_checks(G2).check_stored for points held by lane pairs (point_ops(G2,
    pair=True), fq2_pair.py): what the check_g2 kernel runs. The same arithmetic with a
    third less code for NVVM to inline (an Fq2 product is 2 Fq products per lane, not 3)
    and no spills."""
    P = point_ops(G2, pair=True)
    in_subgroup = _g2_in_subgroup(P, _mul_by_check_scalar(P, pair_function, 2), fq2_pair_ops.mul,
                                  fq2_pair_ops.set_one, fq2p_conj, _psi_constants_pair, pair_function)
    return _check_stored(P, in_subgroup, pair_function)


def _g1_in_subgroup(P) -> Callable:
    """G1's in_subgroup over point_ops(G1) ``P``: phi(P) == -z^2 P."""
    L = P.limbs
    L2, L3 = 2 * L, 3 * L
    f_mul, f_copy, f_set_one = field_call(fq_ops.mul, 3, L), fq_ops.copy, fq_ops.set_one
    jac_neg, jac_eq = P.jac_neg, P.jac_eq
    mul_by_check_scalar = _mul_by_check_scalar(P, device, 1)
    BETA_M = montgomery_limbs(BETA, 1)

    @split
    def in_subgroup(p):
        """phi(P) == -z^2 P."""
        acc = local_u32(L3)
        e = local_u32(L3)
        mul_by_check_scalar(acc, p)
        jac_neg(acc, acc)
        for j in range(L):
            e[j] = BETA_M[j]
        f_mul(e[:L], e[:L], p[:L])
        f_copy(e[L:L2], p[L:L2])
        f_set_one(e[L2:L3])
        return jac_eq(e, acc)

    return in_subgroup


@lru_cache(maxsize=None)
def curve_checks(curve: CurveParams) -> CurveChecks:
    """The square root, sign rule, subgroup check and stored-point check of ``curve``
    (see the module docstring); decode.py's point_decoder builds on them."""
    P = point_ops(curve)
    if curve.degree == 1:
        sqrt, largest, in_subgroup = fq_sqrt, _fq_largest, _g1_in_subgroup(P)
    else:
        f_mul, f_set_one = field_call(fq2_ops.mul, 3, P.limbs), fq2_ops.set_one
        sqrt, largest = fq2_sqrt, _fq2_largest
        in_subgroup = _g2_in_subgroup(P, _mul_by_check_scalar(P, device, 2), f_mul, f_set_one, fq2_ops.conj,
                                      _psi_constants, split)
    return CurveChecks(curve=curve, sqrt=sqrt, lexicographically_largest=largest, in_subgroup=in_subgroup,
                       check_stored=_check_stored(P, in_subgroup, split))
