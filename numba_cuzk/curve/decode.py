"""Point decoding on the GPU and CPU: canonical coordinates in, a checked Montgomery point out.

``point_decoder(curve)`` builds ``decode(p, flags) -> status`` over checks.py's square
root, sign rule and subgroup check: p is an affine point (2L uint32 limbs, canonical
coordinates; y ignored when compressed), converted to Montgomery form in place,
decompressed where flags has COMPRESSED (y from x and flags' SIGN) and checked where it
has CHECK (on the curve, in the subgroup). Statuses: checks.OK, NOT_ON_CURVE,
NOT_IN_SUBGROUP; the identity (flags INFINITY) is (0, 0). The decode_g1 / decode_g2
kernels (curve/kernels.py) run it per point.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Callable

from numba_cuzk import _compat  # noqa: F401,I001  (numba patched before its first use)
from numba import uint32

from numba_cuzk.curve.checks import (CHECK, COMPRESSED, INFINITY, NOT_IN_SUBGROUP, NOT_ON_CURVE, OK, SIGN, curve_checks,
                                     fq_to_mont)
from numba_cuzk.curve.params import CurveParams
from numba_cuzk.curve.points import field_ops, montgomery_limbs, point_ops
from numba_cuzk.curve.target import field_call, split
from numba_cuzk.field.params import FQ
from numba_cuzk.field.target import local_u32

_N = FQ.limbs  # limbs of one Fq element


@lru_cache(maxsize=None)
def point_decoder(curve: CurveParams) -> Callable:
    """decode(p, flags) -> status of ``curve`` (see the module docstring): a target.split
    function (inlined in CUDA kernels, out of line on the CPU)."""
    P, F, checks = point_ops(curve), field_ops(curve), curve_checks(curve)
    L = P.limbs
    L2 = 2 * L
    f_mul, f_sqr, f_add = field_call(F.mul, 3, L), field_call(F.sqr, 2, L), field_call(F.add, 3, L)
    f_neg = field_call(F.neg, 2, L)
    B = montgomery_limbs(curve.b, curve.degree)
    aff_on_curve, in_subgroup = P.aff_on_curve, checks.in_subgroup
    sqrt, largest = checks.sqrt, checks.lexicographically_largest
    to_mont = fq_to_mont
    DEG = curve.degree

    @split
    def decode(p, flags):
        """p: affine, canonical coordinates (y ignored when compressed) -> Montgomery.
        Returns OK, NOT_ON_CURVE or NOT_IN_SUBGROUP; p is (0, 0) for the identity."""
        if flags & INFINITY:
            for j in range(L2):
                p[j] = uint32(0)
            return OK
        for k in range(DEG):
            to_mont(p[k * _N:(k + 1) * _N], p[k * _N:(k + 1) * _N])
        if flags & COMPRESSED:
            rhs = local_u32(L)
            b = local_u32(L)
            for j in range(L):
                b[j] = B[j]
            f_sqr(rhs, p[:L])
            f_mul(rhs, rhs, p[:L])
            f_add(rhs, rhs, b)
            if not sqrt(p[L:L2], rhs):
                return NOT_ON_CURVE
            if largest(p[L:L2]) != ((flags & SIGN) != uint32(0)):
                f_neg(p[L:L2], p[L:L2])
        else:
            for k in range(DEG):
                to_mont(p[L + k * _N:L + (k + 1) * _N], p[L + k * _N:L + (k + 1) * _N])
            if (flags & CHECK) and not aff_on_curve(p):
                return NOT_ON_CURVE
        if (flags & CHECK) and not in_subgroup(p):
            return NOT_IN_SUBGROUP
        return OK

    return decode
