"""Jacobian points (X, Y, Z), 3L limbs: x = X/Z^2, y = Y/Z^3; the identity iff Z = 0.

    jac_add          add-2007-bl     11M + 5S
    jac_add_mixed    madd-2007-bl     7M + 4S
    jac_dbl          dbl-2009-l       2M + 5S

``jacobian_ops(F, affine)``: every Jacobian function over a point_field.FieldBackend,
from three builders: the representation (identity, conversions, negation, equality),
doubling and addition, and the mixed addition (Jacobian + affine).
"""

from __future__ import annotations

from numba_cuzk.curve.point_field import FieldBackend
from numba_cuzk.field.target import local_u32


def _representation(F: FieldBackend, ops: dict) -> dict:
    """Identity, conversions to and from affine and XYZZ, negation, equality (``ops``: affine_ops)."""
    L = F.limbs
    L2, L3, L4 = 2 * L, 3 * L, 4 * L
    formula, simple = F.formula, F.simple
    copy, set_zero, set_one, is_zero = F.copy, F.set_zero, F.set_one, F.is_zero
    eq, mul, neg, sqr = F.eq, F.mul, F.neg, F.sqr
    inv = F.inv
    aff_set_identity, aff_is_identity = ops["aff_set_identity"], ops["aff_is_identity"]

    @simple
    def jac_set_identity(out):
        set_one(out[:L])
        set_one(out[L:L2])
        set_zero(out[L2:L3])

    @simple
    def jac_is_identity(p):
        return is_zero(p[L2:L3])

    @simple
    def jac_from_affine(out, p):
        if aff_is_identity(p):
            jac_set_identity(out)
        else:
            copy(out[:L], p[:L])
            copy(out[L:L2], p[L:L2])
            set_one(out[L2:L3])

    @formula
    def jac_to_affine(out, p):
        """(X/Z^2, Y/Z^3): one field inversion, 3M + 1S."""
        if jac_is_identity(p):
            aff_set_identity(out)
            return
        zi = local_u32(L)
        zi2 = local_u32(L)
        inv(zi, p[L2:L3])
        sqr(zi2, zi)
        mul(zi, zi, zi2)
        mul(out[:L], p[:L], zi2)
        mul(out[L:L2], p[L:L2], zi)

    @simple
    def jac_to_xyzz(out, p):
        """(X, Y, Z^2, Z^3): 1M + 1S."""
        zz = local_u32(L)
        sqr(zz, p[L2:L3])
        mul(out[L3:L4], zz, p[L2:L3])
        copy(out[L2:L3], zz)
        copy(out[:L], p[:L])
        copy(out[L:L2], p[L:L2])

    @simple
    def jac_neg(out, p):
        copy(out[:L], p[:L])
        neg(out[L:L2], p[L:L2])
        copy(out[L2:L3], p[L2:L3])

    @formula
    def jac_eq(p, q):
        """Same point: X1 Z2^2 == X2 Z1^2 and Y1 Z2^3 == Y2 Z1^3 (4M + 2S)."""
        if jac_is_identity(p) or jac_is_identity(q):
            return jac_is_identity(p) and jac_is_identity(q)
        z1z1 = local_u32(L)
        z2z2 = local_u32(L)
        s = local_u32(L)
        t = local_u32(L)
        sqr(z1z1, p[L2:L3])
        sqr(z2z2, q[L2:L3])
        mul(s, p[:L], z2z2)
        mul(t, q[:L], z1z1)
        if not eq(s, t):
            return False
        mul(z2z2, z2z2, q[L2:L3])
        mul(z1z1, z1z1, p[L2:L3])
        mul(s, p[L:L2], z2z2)
        mul(t, q[L:L2], z1z1)
        return eq(s, t)

    return dict(jac_set_identity=jac_set_identity, jac_is_identity=jac_is_identity, jac_from_affine=jac_from_affine,
                jac_to_affine=jac_to_affine, jac_to_xyzz=jac_to_xyzz, jac_neg=jac_neg, jac_eq=jac_eq)


def _doubling_and_addition(F: FieldBackend, ops: dict) -> dict:
    """jac_dbl and jac_add (``ops``: the representation)."""
    L = F.limbs
    L2, L3 = 2 * L, 3 * L
    formula = F.formula
    copy, is_zero, add, sub = F.copy, F.is_zero, F.add, F.sub
    mul, dbl, sqr, copy_point = F.mul, F.dbl, F.sqr, F.copy_point
    jac_set_identity, jac_is_identity = ops["jac_set_identity"], ops["jac_is_identity"]

    @formula
    def jac_dbl(out, p):
        """dbl-2009-l, 2M + 5S: A = X^2, B = Y^2, C = B^2, D = 2((X+B)^2 - A - C), E = 3A,
        X3 = E^2 - 2D, Y3 = E(D - X3) - 8C, Z3 = 2YZ."""
        a = local_u32(L)
        b = local_u32(L)
        c = local_u32(L)
        d = local_u32(L)
        e = local_u32(L)
        sqr(a, p[:L])
        sqr(b, p[L:L2])
        sqr(c, b)
        add(d, p[:L], b)
        sqr(d, d)
        sub(d, d, a)
        sub(d, d, c)
        dbl(d, d)
        dbl(e, a)
        add(e, e, a)
        mul(out[L2:L3], p[L:L2], p[L2:L3])  # Y and Z are read for the last time here
        dbl(out[L2:L3], out[L2:L3])
        sqr(a, e)  # A is free: F = E^2
        dbl(b, d)
        sub(out[:L], a, b)
        sub(d, d, out[:L])
        mul(d, e, d)
        dbl(c, c)
        dbl(c, c)
        dbl(c, c)
        sub(out[L:L2], d, c)

    @formula
    def jac_add(out, p, q):
        """add-2007-bl, 11M + 5S."""
        if jac_is_identity(p):
            copy_point(out, q, 3)
            return
        if jac_is_identity(q):
            copy_point(out, p, 3)
            return
        z1z1 = local_u32(L)
        z2z2 = local_u32(L)
        u1 = local_u32(L)
        h = local_u32(L)
        s1 = local_u32(L)
        r = local_u32(L)
        t = local_u32(L)
        sqr(z1z1, p[L2:L3])
        sqr(z2z2, q[L2:L3])
        mul(u1, p[:L], z2z2)
        mul(h, q[:L], z1z1)
        sub(h, h, u1)  # H = U2 - U1
        mul(s1, p[L:L2], q[L2:L3])
        mul(s1, s1, z2z2)  # S1 = Y1 Z2 Z2Z2
        mul(r, q[L:L2], p[L2:L3])
        mul(r, r, z1z1)  # S2 = Y2 Z1 Z1Z1
        sub(r, r, s1)
        dbl(r, r)  # r = 2(S2 - S1)
        if is_zero(h):
            if is_zero(r):
                jac_dbl(out, p)
            else:
                jac_set_identity(out)
            return
        # Z3 = ((Z1 + Z2)^2 - Z1Z1 - Z2Z2) H, before out's Z overwrites an input's
        add(t, p[L2:L3], q[L2:L3])
        sqr(t, t)
        sub(t, t, z1z1)
        sub(t, t, z2z2)
        mul(out[L2:L3], t, h)
        dbl(t, h)
        sqr(t, t)  # I = (2H)^2
        mul(h, h, t)  # J = H I
        mul(u1, u1, t)  # V = U1 I
        sqr(t, r)
        sub(t, t, h)
        sub(t, t, u1)
        sub(t, t, u1)  # X3 = r^2 - J - 2V
        sub(u1, u1, t)
        mul(u1, r, u1)
        mul(s1, s1, h)
        dbl(s1, s1)
        sub(out[L:L2], u1, s1)  # Y3 = r(V - X3) - 2 S1 J
        copy(out[:L], t)

    return dict(jac_dbl=jac_dbl, jac_add=jac_add)


def _mixed_addition(F: FieldBackend, ops: dict) -> dict:
    """Jacobian + affine (``ops``: affine_ops, the representation, jac_dbl)."""
    L = F.limbs
    L2, L3 = 2 * L, 3 * L
    formula = F.formula
    copy, is_zero, add, sub = F.copy, F.is_zero, F.add, F.sub
    mul, dbl, sqr, copy_point = F.mul, F.dbl, F.sqr, F.copy_point
    aff_is_identity, jac_set_identity = ops["aff_is_identity"], ops["jac_set_identity"]
    jac_is_identity = ops["jac_is_identity"]
    jac_from_affine, jac_dbl = ops["jac_from_affine"], ops["jac_dbl"]

    @formula
    def jac_add_mixed_unless_equal(out, p, q):
        """madd-2007-bl, 7M + 4S: Jacobian p + affine q. Z1Z1 = Z1^2, H = X2 Z1Z1 - X1,
        r = 2(Y2 Z1 Z1Z1 - Y1), HH = H^2, I = 4HH, J = H I, V = X1 I,
        X3 = r^2 - J - 2V, Y3 = r(V - X3) - 2 Y1 J, Z3 = (Z1 + H)^2 - Z1Z1 - HH.
        Where p == q it returns False and leaves out as it was: a caller that doubles
        elsewhere anyway keeps one doubling site (NVVM inlines a formula at each site)."""
        if aff_is_identity(q):
            copy_point(out, p, 3)
            return True
        if jac_is_identity(p):
            jac_from_affine(out, q)
            return True
        z1z1 = local_u32(L)
        h = local_u32(L)
        r = local_u32(L)
        hh = local_u32(L)
        j = local_u32(L)
        v = local_u32(L)
        z3 = local_u32(L)
        sqr(z1z1, p[L2:L3])
        mul(h, q[:L], z1z1)
        sub(h, h, p[:L])
        mul(r, q[L:L2], p[L2:L3])
        mul(r, r, z1z1)
        sub(r, r, p[L:L2])
        dbl(r, r)
        if is_zero(h):
            if is_zero(r):
                return False
            jac_set_identity(out)
            return True
        sqr(hh, h)
        dbl(j, hh)
        dbl(j, j)  # I
        mul(v, p[:L], j)
        mul(j, h, j)
        add(z3, p[L2:L3], h)
        sqr(z3, z3)
        sub(z3, z3, z1z1)
        sub(z3, z3, hh)
        mul(hh, p[L:L2], j)
        dbl(hh, hh)  # 2 Y1 J
        sqr(z1z1, r)
        sub(z1z1, z1z1, j)
        sub(z1z1, z1z1, v)
        sub(z1z1, z1z1, v)  # X3
        sub(v, v, z1z1)
        mul(v, r, v)
        sub(out[L:L2], v, hh)
        copy(out[:L], z1z1)
        copy(out[L2:L3], z3)
        return True

    @formula
    def jac_add_mixed(out, p, q):
        """Jacobian p + affine q, any p and q."""
        if not jac_add_mixed_unless_equal(out, p, q):
            jac_from_affine(out, q)
            jac_dbl(out, out)

    return dict(jac_add_mixed_unless_equal=jac_add_mixed_unless_equal, jac_add_mixed=jac_add_mixed)


def jacobian_ops(F: FieldBackend, affine: dict) -> dict:
    """{name: function} of every Jacobian function over ``F``; ``affine``: affine_ops(F)."""
    ops = {**affine, **_representation(F, affine)}
    ops.update(_doubling_and_addition(F, ops))
    ops.update(_mixed_addition(F, ops))
    return {name: fn for name, fn in ops.items() if name.startswith("jac_")}
