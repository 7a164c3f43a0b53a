"""Reference group law on Python integers: the ground truth the kernels are tested against.

Points are affine tuples (x, y) of canonical field elements (ints for G1, pairs (c0, c1)
for G2), and ``None`` is the point at infinity. Jacobian points are triples (X, Y, Z)
meaning (X/Z^2, Y/Z^3), with Z = 0 for infinity. Written to read like the textbook
chord-and-tangent law (Silverman III.2.3, a = 0), not for speed.
"""

from __future__ import annotations

import random

from numba_cuzk.curve.params import BETA, G1, G2, PSI_X, PSI_Y, Z, Z_ABS, CurveParams


class Curve:
    """y^2 = x^3 + b over ``params.field``; the same methods for G1 and G2."""

    def __init__(self, params: CurveParams) -> None:
        self.params = params
        self.F = params.field
        self.b = params.b
        self.zero = 0 if params.degree == 1 else (0, 0)
        self.one = 1 if params.degree == 1 else (1, 0)
        self.generator = params.generator
        self.order = params.order

    # --- affine ---------------------------------------------------------------------
    def is_on_curve(self, p) -> bool:
        if p is None:
            return True
        F, (x, y) = self.F, p
        return F.square(y) == F.add(F.mul(F.square(x), x), self.b)

    def neg(self, p):
        return None if p is None else (p[0], self.F.neg(p[1]))

    def double(self, p):
        if p is None or p[1] == self.zero:
            return None
        F, (x, y) = self.F, p
        xx = F.square(x)
        slope = F.mul(F.add(F.double(xx), xx), F.inverse(F.double(y)))  # 3x^2 / 2y
        x3 = F.sub(F.square(slope), F.double(x))
        return (x3, F.sub(F.mul(slope, F.sub(x, x3)), y))

    def add(self, p, q):
        if p is None:
            return q
        if q is None:
            return p
        F = self.F
        if p[0] == q[0]:
            return self.double(p) if p[1] == q[1] else None  # P + P, or P + (-P) = infinity
        slope = F.mul(F.sub(q[1], p[1]), F.inverse(F.sub(q[0], p[0])))
        x3 = F.sub(F.sub(F.square(slope), p[0]), q[0])
        return (x3, F.sub(F.mul(slope, F.sub(p[0], x3)), p[1]))

    def mul(self, p, k: int):
        """k * P by double-and-add (k may be negative or >= r)."""
        if k < 0:
            return self.mul(self.neg(p), -k)
        acc = None
        for bit in bin(k)[2:] if k else "":
            acc = self.double(acc)
            if bit == "1":
                acc = self.add(acc, p)
        return acc

    def random_point(self, rng: random.Random):
        """k * G for a random k in [1, r)."""
        return self.mul(self.generator, rng.randrange(1, self.order))

    # --- Jacobian -------------------------------------------------------------------
    def to_jacobian(self, p, z=None):
        """(x z^2, y z^3, z); z defaults to 1. Infinity is (1, 1, 0)."""
        F, z = self.F, self.one if z is None else z
        if p is None:
            return (self.one, self.one, self.zero)
        zz = F.square(z)
        return (F.mul(p[0], zz), F.mul(p[1], F.mul(zz, z)), z)

    def to_xyzz(self, p, z=None):
        """(x z^2, y z^3, z^2, z^3); z defaults to 1. Infinity is (1, 1, 0, 0)."""
        if p is None:
            return (self.one, self.one, self.zero, self.zero)
        x, y, z = self.to_jacobian(p, z)
        zz = self.F.square(z)
        return (x, y, zz, self.F.mul(zz, z))

    def from_xyzz(self, p):
        F, (x, y, zz, zzz) = self.F, p
        if zz == self.zero:
            return None
        return (F.mul(x, F.inverse(zz)), F.mul(y, F.inverse(zzz)))

    def from_jacobian(self, p):
        F, (x, y, z) = self.F, p
        if z == self.zero:
            return None
        zi = F.inverse(z)
        zi2 = F.square(zi)
        return (F.mul(x, zi2), F.mul(F.mul(y, zi2), zi))

    def jacobian_double(self, p):
        """dbl-2009-l (EFD, a = 0): 2M + 5S."""
        F, (x, y, z) = self.F, p
        a, b = F.square(x), F.square(y)
        c = F.square(b)
        d = F.double(F.sub(F.sub(F.square(F.add(x, b)), a), c))
        e = F.add(F.double(a), a)
        x3 = F.sub(F.square(e), F.double(d))
        y3 = F.sub(F.mul(e, F.sub(d, x3)), F.double(F.double(F.double(c))))
        return (x3, y3, F.double(F.mul(y, z)))

    def jacobian_add(self, p, q):
        """add-2007-bl (EFD): 11M + 5S, with the special cases handled first."""
        F, (x1, y1, z1), (x2, y2, z2) = self.F, p, q
        if z1 == self.zero:
            return q
        if z2 == self.zero:
            return p
        z1z1, z2z2 = F.square(z1), F.square(z2)
        u1, u2 = F.mul(x1, z2z2), F.mul(x2, z1z1)
        s1, s2 = F.mul(F.mul(y1, z2), z2z2), F.mul(F.mul(y2, z1), z1z1)
        h = F.sub(u2, u1)
        r = F.double(F.sub(s2, s1))
        if h == self.zero:
            return self.jacobian_double(p) if r == self.zero else (self.one, self.one, self.zero)
        i = F.square(F.double(h))
        j = F.mul(h, i)
        v = F.mul(u1, i)
        x3 = F.sub(F.sub(F.square(r), j), F.double(v))
        y3 = F.sub(F.mul(r, F.sub(v, x3)), F.double(F.mul(s1, j)))
        z3 = F.mul(F.sub(F.sub(F.square(F.add(z1, z2)), z1z1), z2z2), h)
        return (x3, y3, z3)

    # --- membership -----------------------------------------------------------------
    def in_subgroup(self, p) -> bool:
        """The plain check r * P == infinity (the reference for the endomorphism checks)."""
        return self.is_on_curve(p) and self.mul(p, self.order) is None

    def endomorphism(self, p):
        """phi(x, y) = (beta x, y) on G1; psi(x, y) = (conj(x) psi_x, conj(y) psi_y) on G2."""
        if p is None:
            return None
        F = self.F
        if self.params.degree == 1:
            return (F.mul(BETA, p[0]), p[1])
        return (F.mul(F.conjugate(p[0]), PSI_X), F.mul(F.conjugate(p[1]), PSI_Y))

    def in_subgroup_fast(self, p) -> bool:
        """Scott's test (eprint 2021/1130, proof in 2022/352): phi(P) == -z^2 P on G1,
        psi(P) == z P on G2. The kernels implement this one."""
        if not self.is_on_curve(p):
            return False
        if self.params.degree == 1:
            return self.endomorphism(p) == self.neg(self.mul(self.mul(p, Z_ABS), Z_ABS))
        return self.endomorphism(p) == self.mul(p, Z)

    def point_off_subgroup(self, rng: random.Random):
        """A point on the curve but (with overwhelming probability) not in the prime-order
        subgroup: a random x with x^3 + b square, never multiplied by the cofactor."""
        F = self.F
        while True:
            x = rng.randrange(F.p) if self.params.degree == 1 else (rng.randrange(F.p), rng.randrange(F.p))
            y = F.sqrt(F.add(F.mul(F.square(x), x), self.b))
            if y is not None and not self.in_subgroup((x, y)):
                return (x, y)

    def point_off_curve(self, rng: random.Random):
        """(x, y) with y^2 != x^3 + b."""
        F = self.F
        while True:
            x = rng.randrange(F.p) if self.params.degree == 1 else (rng.randrange(F.p), rng.randrange(F.p))
            y = rng.randrange(F.p) if self.params.degree == 1 else (rng.randrange(F.p), rng.randrange(F.p))
            if not self.is_on_curve((x, y)):
                return (x, y)


g1 = Curve(G1)
g2 = Curve(G2)
