"""XYZZ points (X, Y, ZZ, ZZZ), 4L limbs: x = X/ZZ, y = Y/ZZZ, ZZ^3 = ZZZ^2; the identity iff ZZ = 0.

    xyzz_add         add-2008-s      12M + 2S
    xyzz_add_mixed   madd-2008-s      8M + 2S   (XYZZ + affine: the MSM bucket step)
    xyzz_dbl         dbl-2008-s-1     6M + 3S

``xyzz_ops(F, affine)``: every XYZZ function over a point_field.FieldBackend (sppark's
``xyzz_t<field_t>``), from three builders: the representation (identity, conversions,
negation, equality), doubling and addition, and the mixed addition. Independent
products go in pairs (``F.mul2``): on lane pairs one pass of two Fq products per lane.
"""

from __future__ import annotations

from numba_cuzk.curve.point_field import FieldBackend
from numba_cuzk.field.target import local_u32


def _representation(F: FieldBackend, ops: dict) -> dict:
    """Identity, conversions to affine and Jacobian, negation, equality (``ops``: affine_ops)."""
    L = F.limbs
    L2, L3, L4 = 2 * L, 3 * L, 4 * L
    formula, simple = F.formula, F.simple
    copy, set_zero, set_one, is_zero = F.copy, F.set_zero, F.set_one, F.is_zero
    eq, mul, neg, sqr = F.eq, F.mul, F.neg, F.sqr
    inv = F.inv
    aff_set_identity, aff_is_identity = ops["aff_set_identity"], ops["aff_is_identity"]

    @simple
    def xyzz_set_identity(out):
        set_one(out[:L])
        set_one(out[L:L2])
        set_zero(out[L2:L3])
        set_zero(out[L3:L4])

    @simple
    def xyzz_is_identity(p):
        return is_zero(p[L2:L3])

    @simple
    def xyzz_from_affine(out, p):
        if aff_is_identity(p):
            xyzz_set_identity(out)
        else:
            copy(out[:L], p[:L])
            copy(out[L:L2], p[L:L2])
            set_one(out[L2:L3])
            set_one(out[L3:L4])

    @formula
    def xyzz_to_affine(out, p):
        """x = X/ZZ, y = Y/ZZZ with 1/ZZ = (ZZ/ZZZ)^2 (ZZ^3 = ZZZ^2): one inversion, 3M + 1S."""
        if xyzz_is_identity(p):
            aff_set_identity(out)
            return
        i = local_u32(L)
        t = local_u32(L)
        inv(i, p[L3:L4])
        mul(t, p[L2:L3], i)
        sqr(t, t)
        mul(out[L:L2], p[L:L2], i)
        mul(out[:L], p[:L], t)

    @simple
    def xyzz_to_jacobian(out, p):
        """(X ZZ, Y ZZZ, ZZ): Jacobian with Z = ZZ, since ZZ^3 = ZZZ^2 (2M)."""
        t = local_u32(L)
        mul(t, p[:L], p[L2:L3])
        mul(out[L:L2], p[L:L2], p[L3:L4])
        copy(out[L2:L3], p[L2:L3])
        copy(out[:L], t)

    @simple
    def xyzz_neg(out, p):
        copy(out[:L], p[:L])
        neg(out[L:L2], p[L:L2])
        copy(out[L2:L3], p[L2:L3])
        copy(out[L3:L4], p[L3:L4])

    @formula
    def xyzz_eq(p, q):
        """Same point: X1 ZZ2 == X2 ZZ1 and Y1 ZZZ2 == Y2 ZZZ1 (4M)."""
        if xyzz_is_identity(p) or xyzz_is_identity(q):
            return xyzz_is_identity(p) and xyzz_is_identity(q)
        s = local_u32(L)
        t = local_u32(L)
        mul(s, p[:L], q[L2:L3])
        mul(t, q[:L], p[L2:L3])
        if not eq(s, t):
            return False
        mul(s, p[L:L2], q[L3:L4])
        mul(t, q[L:L2], p[L3:L4])
        return eq(s, t)

    return dict(xyzz_set_identity=xyzz_set_identity, xyzz_is_identity=xyzz_is_identity,
                xyzz_from_affine=xyzz_from_affine, xyzz_to_affine=xyzz_to_affine, xyzz_to_jacobian=xyzz_to_jacobian,
                xyzz_neg=xyzz_neg, xyzz_eq=xyzz_eq)


def _doubling_and_addition(F: FieldBackend, ops: dict) -> dict:
    """xyzz_dbl, xyzz_add_unless_equal and xyzz_add (``ops``: the representation)."""
    L = F.limbs
    L2, L3, L4 = 2 * L, 3 * L, 4 * L
    formula = F.formula
    copy, is_zero, add, sub = F.copy, F.is_zero, F.add, F.sub
    dbl, sqr, mul2, copy_point = F.dbl, F.sqr, F.mul2, F.copy_point
    xyzz_set_identity, xyzz_is_identity = ops["xyzz_set_identity"], ops["xyzz_is_identity"]

    @formula
    def xyzz_dbl(out, p):
        """dbl-2008-s-1 (a = 0), 6M + 3S: U = 2Y, V = U^2, W = UV, S = XV, M = 3X^2,
        X3 = M^2 - 2S, Y3 = M(S - X3) - WY, ZZ3 = V ZZ, ZZZ3 = W ZZZ."""
        u = local_u32(L)
        v = local_u32(L)
        w = local_u32(L)
        s = local_u32(L)
        m = local_u32(L)
        dbl(u, p[L:L2])
        sqr(v, u)
        mul2(w, u, v, s, p[:L], v)
        sqr(m, p[:L])
        dbl(u, m)
        add(m, u, m)
        mul2(out[L2:L3], v, p[L2:L3], out[L3:L4], w, p[L3:L4])
        sqr(u, m)
        sub(u, u, s)
        sub(u, u, s)  # X3
        sub(s, s, u)
        mul2(s, m, s, w, w, p[L:L2])  # M (S - X3), W Y: p's Y is read last (out may alias p)
        sub(out[L:L2], s, w)
        copy(out[:L], u)

    @formula
    def xyzz_add_unless_equal(out, p, q):
        """add-2008-s, 12M + 2S: U1 = X1 ZZ2, U2 = X2 ZZ1, S1 = Y1 ZZZ2, S2 = Y2 ZZZ1,
        P = U2 - U1, R = S2 - S1, PP = P^2, PPP = P PP, Q = U1 PP,
        X3 = R^2 - PPP - 2Q, Y3 = R(Q - X3) - S1 PPP, ZZ3 = ZZ1 ZZ2 PP, ZZZ3 = ZZZ1 ZZZ2 PPP.
        Where p == q it returns False and leaves out as it was (see jac_add_mixed_unless_equal)."""
        if xyzz_is_identity(p):
            copy_point(out, q, 4)
            return True
        if xyzz_is_identity(q):
            copy_point(out, p, 4)
            return True
        u1 = local_u32(L)
        s1 = local_u32(L)
        pp = local_u32(L)
        r = local_u32(L)
        ppp = local_u32(L)
        mul2(u1, p[:L], q[L2:L3], pp, q[:L], p[L2:L3])
        sub(pp, pp, u1)  # P
        mul2(s1, p[L:L2], q[L3:L4], r, q[L:L2], p[L3:L4])
        sub(r, r, s1)  # R
        if is_zero(pp):
            if is_zero(r):
                return False
            xyzz_set_identity(out)
            return True
        sqr(ppp, pp)
        mul2(pp, pp, ppp, out[L2:L3], p[L2:L3], q[L2:L3])  # pp = PPP, ppp = PP from here
        mul2(out[L2:L3], out[L2:L3], ppp, out[L3:L4], p[L3:L4], q[L3:L4])
        mul2(out[L3:L4], out[L3:L4], pp, u1, u1, ppp)  # ZZZ3, Q
        sqr(ppp, r)
        sub(ppp, ppp, pp)
        sub(ppp, ppp, u1)
        sub(ppp, ppp, u1)  # X3
        sub(u1, u1, ppp)
        mul2(u1, r, u1, s1, s1, pp)
        sub(out[L:L2], u1, s1)
        copy(out[:L], ppp)
        return True

    @formula
    def xyzz_add(out, p, q):
        """XYZZ p + q, any p and q."""
        if not xyzz_add_unless_equal(out, p, q):
            xyzz_dbl(out, p)

    return dict(xyzz_dbl=xyzz_dbl, xyzz_add_unless_equal=xyzz_add_unless_equal, xyzz_add=xyzz_add)


def _mixed_addition(F: FieldBackend, ops: dict) -> dict:
    """xyzz_add_mixed, the MSM bucket step (``ops``: affine_ops, the representation, xyzz_dbl)."""
    L = F.limbs
    L2, L3, L4 = 2 * L, 3 * L, 4 * L
    formula = F.formula
    is_zero, sub, mul, sqr, mul2, copy_point = F.is_zero, F.sub, F.mul, F.sqr, F.mul2, F.copy_point
    aff_is_identity, xyzz_set_identity = ops["aff_is_identity"], ops["xyzz_set_identity"]
    xyzz_is_identity = ops["xyzz_is_identity"]
    xyzz_from_affine, xyzz_dbl = ops["xyzz_from_affine"], ops["xyzz_dbl"]

    @formula
    def xyzz_add_mixed(out, p, q):
        """madd-2008-s, 8M + 2S: XYZZ p + affine q. U2 = X2 ZZ1, S2 = Y2 ZZZ1, P = U2 - X1,
        R = S2 - Y1, PP = P^2, PPP = P PP, Q = X1 PP, X3 = R^2 - PPP - 2Q,
        Y3 = R(Q - X3) - Y1 PPP, ZZ3 = ZZ1 PP, ZZZ3 = ZZZ1 PPP.

        Ordered so that at most 6 field elements live across any product (p's 4 and the
        temporaries; R computed early would make it 7): R after PPP, ZZ3/Q while PP lives,
        Y1 PPP before X3. On G2 one element is 24 registers, the accumulate kernel's spills.
        Its independent products go in pairs (mul2): on lane pairs that is 15 Fq products
        per lane instead of 18.
        """
        if aff_is_identity(q):
            copy_point(out, p, 4)
            return
        if xyzz_is_identity(p):
            xyzz_from_affine(out, q)
            return
        a = local_u32(L)
        b = local_u32(L)
        c = local_u32(L)
        d = local_u32(L)
        mul(a, q[:L], p[L2:L3])
        sub(a, a, p[:L])  # P
        if is_zero(a):  # same x: q = p (double) or q = -p (identity)
            mul(b, q[L:L2], p[L3:L4])
            sub(b, b, p[L:L2])  # R
            if is_zero(b):
                xyzz_from_affine(out, q)
                xyzz_dbl(out, out)
            else:
                xyzz_set_identity(out)
            return
        sqr(b, a)  # PP
        mul2(out[L2:L3], p[L2:L3], b, c, p[:L], b)  # ZZ3 (p's ZZ is not read again), Q (nor p's X)
        mul2(a, a, b, b, q[L:L2], p[L3:L4])  # PPP (P and PP dead), S2
        sub(b, b, p[L:L2])  # R
        mul2(out[L3:L4], p[L3:L4], a, d, p[L:L2], a)  # ZZZ3, Y1 PPP (p's Y is not read again)
        sqr(out[:L], b)
        sub(out[:L], out[:L], a)
        sub(out[:L], out[:L], c)
        sub(out[:L], out[:L], c)  # X3
        sub(c, c, out[:L])
        mul(c, b, c)
        sub(out[L:L2], c, d)  # Y3

    return dict(xyzz_add_mixed=xyzz_add_mixed)


def xyzz_ops(F: FieldBackend, affine: dict) -> dict:
    """{name: function} of every XYZZ function over ``F``; ``affine``: affine_ops(F)."""
    ops = {**affine, **_representation(F, affine)}
    ops.update(_doubling_and_addition(F, ops))
    ops.update(_mixed_addition(F, ops))
    return {name: fn for name, fn in ops.items() if name.startswith("xyzz_")}
