"""Reference arithmetic on Python integers: the ground truth every kernel is tested against.

Elements are plain ints in [0, p) (canonical, not Montgomery); Fq2 elements are pairs
(c0, c1) meaning c0 + c1*u with u^2 = -1. Written for clarity, not speed.
"""

from __future__ import annotations

from numba_cuzk.field.params import FQ, FR, FieldParams


class PrimeField:
    """Arithmetic modulo ``params.modulus`` on canonical Python ints."""

    def __init__(self, params: FieldParams) -> None:
        self.params = params
        self.p = params.modulus

    def add(self, a: int, b: int) -> int:
        return (a + b) % self.p

    def sub(self, a: int, b: int) -> int:
        return (a - b) % self.p

    def neg(self, a: int) -> int:
        return -a % self.p

    def double(self, a: int) -> int:
        return 2 * a % self.p

    def mul(self, a: int, b: int) -> int:
        return a * b % self.p

    def square(self, a: int) -> int:
        return a * a % self.p

    def pow(self, a: int, e: int) -> int:
        return pow(a, e, self.p)

    def inverse(self, a: int) -> int:
        """a^-1; raises ZeroDivisionError for 0."""
        if a % self.p == 0:
            raise ZeroDivisionError(f"{self.params.name}: 0 has no inverse")
        return pow(a, -1, self.p)

    def is_square(self, a: int) -> bool:
        return a % self.p == 0 or pow(a, (self.p - 1) // 2, self.p) == 1

    def sqrt(self, a: int) -> int | None:
        """A square root of a (Tonelli-Shanks), or None if a is not a square."""
        a %= self.p
        if not self.is_square(a):
            return None
        if a == 0:
            return 0
        if self.p % 4 == 3:
            return pow(a, (self.p + 1) // 4, self.p)
        s, q = self.params.two_adicity, self.params.odd_part
        z = pow(self.params.nonresidue, q, self.p)
        x, b, m = pow(a, (q + 1) // 2, self.p), pow(a, q, self.p), s
        while b != 1:
            k, b2k = 0, b
            while b2k != 1:
                b2k, k = b2k * b2k % self.p, k + 1
            t = pow(z, 1 << (m - k - 1), self.p)
            x, z, m = x * t % self.p, t * t % self.p, k
            b = b * z % self.p
        return x

    def root_of_unity(self, log_n: int) -> int:
        return self.params.root_of_unity(log_n)

    def to_montgomery(self, a: int) -> int:
        return a * (1 << (32 * self.params.limbs)) % self.p

    def from_montgomery(self, a: int) -> int:
        return a * self.params.r_inv % self.p


class QuadraticExtension:
    """Fq2 = Fq[u]/(u^2 + 1) on pairs (c0, c1) of canonical ints."""

    def __init__(self, base: PrimeField) -> None:
        self.base = base
        self.p = base.p

    def add(self, a: tuple, b: tuple) -> tuple:
        return ((a[0] + b[0]) % self.p, (a[1] + b[1]) % self.p)

    def sub(self, a: tuple, b: tuple) -> tuple:
        return ((a[0] - b[0]) % self.p, (a[1] - b[1]) % self.p)

    def neg(self, a: tuple) -> tuple:
        return (-a[0] % self.p, -a[1] % self.p)

    def double(self, a: tuple) -> tuple:
        return self.add(a, a)

    def conjugate(self, a: tuple) -> tuple:
        return (a[0], -a[1] % self.p)

    def mul(self, a: tuple, b: tuple) -> tuple:
        # (a0 + a1 u)(b0 + b1 u) = a0 b0 - a1 b1 + (a0 b1 + a1 b0) u
        return ((a[0] * b[0] - a[1] * b[1]) % self.p, (a[0] * b[1] + a[1] * b[0]) % self.p)

    def square(self, a: tuple) -> tuple:
        return self.mul(a, a)

    def norm(self, a: tuple) -> int:
        """a * conj(a) = a0^2 + a1^2, an element of Fq."""
        return (a[0] * a[0] + a[1] * a[1]) % self.p

    def inverse(self, a: tuple) -> tuple:
        """1/a = conj(a) / norm(a); raises ZeroDivisionError for 0."""
        n_inv = self.base.inverse(self.norm(a))
        return (a[0] * n_inv % self.p, -a[1] * n_inv % self.p)

    def pow(self, a: tuple, e: int) -> tuple:
        result, base = (1, 0), a
        while e:
            if e & 1:
                result = self.mul(result, base)
            base, e = self.square(base), e >> 1
        return result

    def is_square(self, a: tuple) -> bool:
        # a is a square in Fq2 iff its norm is a square in Fq.
        return self.base.is_square(self.norm(a))

    def sqrt(self, a: tuple) -> tuple | None:
        """A square root of a, or None if a is not a square.

        Complex method for q = 3 mod 4: with n = sqrt(norm(a)), pick the sign that makes
        (a0 + n)/2 a square x0^2; then x1 = a1 / (2 x0).
        """
        a0, a1 = a[0] % self.p, a[1] % self.p
        if a1 == 0:
            root = self.base.sqrt(a0)
            if root is not None:
                return (root, 0)
            return (0, self.base.sqrt(-a0 % self.p))  # -1 = u^2 is a square in Fq2
        n = self.base.sqrt(self.norm(a))
        if n is None:
            return None
        half = self.base.inverse(2)
        x0 = self.base.sqrt((a0 + n) * half % self.p)
        if x0 is None:
            x0 = self.base.sqrt((a0 - n) * half % self.p)
        x1 = a1 * self.base.inverse(2 * x0) % self.p
        root = (x0, x1)
        return root if self.square(root) == (a0, a1) else None


fr = PrimeField(FR)
fq = PrimeField(FQ)
fq2 = QuadraticExtension(fq)
