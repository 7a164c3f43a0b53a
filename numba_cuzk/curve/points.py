"""Point arithmetic for G1 and G2, one source for the CPU and CUDA targets.

``point_ops(curve)`` builds a ``PointOps`` of ``@njit(forceinline=True)`` functions over
the field functions of mont.py (G1: Fq, L = 12 limbs) or fq2.py (G2: Fq2, L = 24 limbs);
the formulas are written once over those ``ops``.

A point is one flat uint32 array, coordinates one after another, each L limbs in
Montgomery form:

    affine    (x, y)            2L limbs   the identity is (0, 0): on neither curve (b != 0)
    Jacobian  (X, Y, Z)         3L limbs   x = X/Z^2, y = Y/Z^3; identity iff Z = 0
    XYZZ      (X, Y, ZZ, ZZZ)   4L limbs   x = X/ZZ, y = Y/ZZZ, ZZ^3 = ZZZ^2; identity iff ZZ = 0

Bulk arrays are (coords * L, n) uint32, point i in column i: rows k*L..(k+1)*L-1 hold
coordinate k (for G2: c0's 12 limbs, then c1's), the field's structure-of-arrays layout
(a warp's loads of one limb row are coalesced). ``load``/``store`` move one point.

Formulas (EFD, https://hyperelliptic.org/EFD/g1p/auto-shortw-*.html, a = 0), cost in
field multiplications M and squarings S (for G2 one Fq2 M = 3 Fq M, one S = 2 Fq M):

    xyzz_add         add-2008-s      12M + 2S
    xyzz_add_mixed   madd-2008-s      8M + 2S   (XYZZ + affine: the MSM bucket step)
    xyzz_dbl         dbl-2008-s-1     6M + 3S
    jac_add          add-2007-bl     11M + 5S
    jac_add_mixed    madd-2007-bl     7M + 4S
    jac_dbl          dbl-2009-l       2M + 5S

Every addition handles the identity on either side, P + P (it doubles) and P + (-P) (it
returns the identity). Doublings need no branch: Y = 0 (2-torsion, absent from both
groups) or the identity give Z3 = 0 / ZZ3 = 0. ``out`` may alias any input.

Formulas are ``target.split`` functions (inlined in CUDA kernels, out of line on the CPU)
and their field arithmetic ``target.field_call``s: see target.py for why (CPU compile
time). ``point_ops(G2, pair=True)`` builds the same formulas over field/fq2_pair.py for
CUDA kernels that hold each point on a lane pair (L = 12 limbs per thread: a lane's half
of every coordinate; ``load``/``store`` move that half of the bulk layout), which keeps a
G2 formula within a thread's registers. ptxas (sm_90) on bench/curve.py's chained kernels: G1 mixed add 255 registers and
100 bytes of spills, G1 double 189 and none; G2 mixed add 255 / 1 KB spills, G2 double
255 / 208 B; no local arrays left in memory (no __local_depot).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Callable

import numpy as np

from numba_cuzk.curve.params import CurveParams
from numba_cuzk.curve.target import field_call, split
from numba_cuzk.field.fq2 import fq2_ops
from numba_cuzk.field.fq2_pair import fq2_pair_ops, fq2p_mul2
from numba_cuzk.field.mont import device, fq_ops
from numba_cuzk.field.params import FQ
from numba_cuzk.field.target import local_u32, pair_function, pair_lane


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
class PointOps:
    """Device/CPU point functions of one curve; see the module docstring for formats.

    p, q, out: flat uint32 point arrays; arr: a bulk (coords * L, n) array.
    """

    curve: CurveParams
    limbs: int  # L: limbs per coordinate (per thread: a lane pair's half for pair ops)
    lanes: int  # threads per point: 1, or 2 (point_ops(G2, pair=True))
    load: Callable  # load(out, arr, i, coords)
    copy_point: Callable  # copy_point(out, p, coords)
    store: Callable  # store(arr, i, p, coords)
    aff_set_identity: Callable
    aff_is_identity: Callable
    aff_neg: Callable
    aff_on_curve: Callable
    jac_set_identity: Callable
    jac_is_identity: Callable
    jac_from_affine: Callable
    jac_to_affine: Callable  # one inversion
    jac_to_xyzz: Callable
    jac_neg: Callable
    jac_eq: Callable
    jac_dbl: Callable
    jac_add: Callable
    jac_add_mixed: Callable
    jac_add_mixed_unless_equal: Callable  # -> False, out untouched, where p == q: the caller doubles
    xyzz_set_identity: Callable
    xyzz_is_identity: Callable
    xyzz_from_affine: Callable
    xyzz_to_affine: Callable  # one inversion
    xyzz_to_jacobian: Callable
    xyzz_neg: Callable
    xyzz_eq: Callable
    xyzz_dbl: Callable
    xyzz_add: Callable
    xyzz_add_unless_equal: Callable  # -> False, out untouched, where p == q: the caller doubles
    xyzz_add_mixed: Callable


@lru_cache(maxsize=None)
def point_ops(curve: CurveParams, pair: bool = False) -> PointOps:
    """Build the PointOps of ``curve`` (cached: one set of functions per curve). ``pair``
    (G2, CUDA kernels only): the same formulas over fq2_pair.py, each point held by a
    lane pair, a lane's half of every coordinate in 12 limbs (see that module)."""
    if pair and curve.degree != 2:
        raise ValueError("point_ops: lane pairs hold Fq2 coordinates (G2) only")
    F = fq2_pair_ops if pair else field_ops(curve)
    L = F.limbs
    L2, L3, L4 = 2 * L, 3 * L, 4 * L
    B = montgomery_limbs(curve.b, curve.degree)
    copy, set_zero, set_one, is_zero, eq = F.copy, F.set_zero, F.set_one, F.is_zero, F.eq
    if pair:
        formula = simple = pair_function
        add, sub, mul, dbl, neg, sqr, inv = F.add, F.sub, F.mul, F.dbl, F.neg, F.sqr, F.inv
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

        mul2 = fq2p_mul2

        @simple
        def curve_b(out):
            lane0 = pair_lane() == 0
            for j in range(L):
                out[j] = B0[j] if lane0 else B1[j]
    else:
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

    @simple
    def copy_point(out, p, coords):
        for j in range(coords * L):
            out[j] = p[j]

    # --- affine -----------------------------------------------------------------------
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

    # --- Jacobian ---------------------------------------------------------------------
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

    # --- XYZZ -------------------------------------------------------------------------
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

    return PointOps(
        curve=curve, limbs=L, lanes=2 if pair else 1, load=load, copy_point=copy_point, store=store,
        aff_set_identity=aff_set_identity, aff_is_identity=aff_is_identity, aff_neg=aff_neg,
        aff_on_curve=aff_on_curve,
        jac_set_identity=jac_set_identity, jac_is_identity=jac_is_identity,
        jac_from_affine=jac_from_affine, jac_to_affine=jac_to_affine, jac_to_xyzz=jac_to_xyzz,
        jac_neg=jac_neg, jac_eq=jac_eq, jac_dbl=jac_dbl, jac_add=jac_add, jac_add_mixed=jac_add_mixed,
        jac_add_mixed_unless_equal=jac_add_mixed_unless_equal,
        xyzz_set_identity=xyzz_set_identity, xyzz_is_identity=xyzz_is_identity,
        xyzz_from_affine=xyzz_from_affine, xyzz_to_affine=xyzz_to_affine,
        xyzz_to_jacobian=xyzz_to_jacobian, xyzz_neg=xyzz_neg, xyzz_eq=xyzz_eq, xyzz_dbl=xyzz_dbl,
        xyzz_add=xyzz_add, xyzz_add_unless_equal=xyzz_add_unless_equal, xyzz_add_mixed=xyzz_add_mixed,
    )
