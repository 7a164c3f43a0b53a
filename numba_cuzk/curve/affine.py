"""Affine points (x, y), 2L limbs; the identity is (0, 0), on neither curve (b != 0).

Built over a point_field.FieldBackend (one thread or a lane pair per point); points.py
gathers these with jacobian.py's and xyzz.py's into a PointOps.
"""

from __future__ import annotations

from numba_cuzk.curve.point_field import FieldBackend
from numba_cuzk.field.target import local_u32


def affine_ops(F: FieldBackend) -> dict:
    """Identity, negation and the curve equation, over ``F``."""
    L = F.limbs
    L2 = 2 * L
    formula, simple = F.formula, F.simple
    copy, set_zero, is_zero, eq = F.copy, F.set_zero, F.is_zero, F.eq
    add, mul, neg, sqr = F.add, F.mul, F.neg, F.sqr
    curve_b = F.curve_b

    @simple
    def aff_set_identity(out):
        set_zero(out[:L])
        set_zero(out[L:L2])

    @simple
    def aff_is_identity(p):
        return is_zero(p[:L]) and is_zero(p[L:L2])

    @simple
    def aff_neg(out, p):
        copy(out[:L], p[:L])
        neg(out[L:L2], p[L:L2])  # -0 = 0: the identity stays (0, 0)

    @formula
    def aff_on_curve(p):
        """y^2 == x^3 + b, or the identity (0, 0)."""
        if aff_is_identity(p):
            return True
        lhs = local_u32(L)
        rhs = local_u32(L)
        b = local_u32(L)
        curve_b(b)
        sqr(lhs, p[L:L2])
        sqr(rhs, p[:L])
        mul(rhs, rhs, p[:L])
        add(rhs, rhs, b)
        return eq(lhs, rhs)

    return dict(aff_set_identity=aff_set_identity, aff_is_identity=aff_is_identity, aff_neg=aff_neg,
                aff_on_curve=aff_on_curve)
