"""BLS12-381 curve parameters: G1 over Fq and G2 over Fq2, from the curve parameter z.

    G1: y^2 = x^3 + 4          over Fq,   #E(Fq)   = h1 * r
    G2: y^2 = x^3 + 4(u + 1)   over Fq2,  #E'(Fq2) = h2 * r   (the M-type sextic twist)

Everything but the generators is derived from z = -0xd201000000010000 (q, r and both
cofactors are polynomials in z) and checked against the field package's moduli at import.
Field elements here are canonical Python ints; Fq2 elements are pairs (c0, c1) = c0 + c1*u.
"""

from __future__ import annotations

from dataclasses import dataclass

from numba_cuzk.field.params import FQ, FR
from numba_cuzk.field.reference import fq, fq2

Z = -0xD201000000010000  # the BLS parameter ("x" in zkcrypto/blst), Hamming weight 6
Z_ABS = -Z

R = FR.modulus  # order of G1 and G2: r = z^4 - z^2 + 1
Q = FQ.modulus  # q = (z - 1)^2 (z^4 - z^2 + 1) / 3 + z
H1 = (Z - 1) ** 2 // 3  # G1 cofactor
# G2 cofactor (Budroni-Pintore, "Efficient hash maps to G2 on BLS curves"):
# (z^8 - 4z^7 + 5z^6 - 4z^4 + 6z^3 - 4z^2 - 4z + 13) / 9
H2 = (Z**8 - 4 * Z**7 + 5 * Z**6 - 4 * Z**4 + 6 * Z**3 - 4 * Z**2 - 4 * Z + 13) // 9

assert R == Z**4 - Z**2 + 1
assert Q == (Z - 1) ** 2 * R // 3 + Z
assert H1 == 0x396C8C005555E1568C00AAAB0000AAAB
assert H2 == int(
    "5d543a95414e7f1091d50792876a202cd91de4547085abaa68a205b2e5a7ddfa"
    "628f1cb4d9e82ef21537e293a6691ae1616ec6e786f0c70cf1c38e31c7238e5", 16
)
assert Q % R == (Z % R), "q = z mod r: the Frobenius acts on G2 as multiplication by z"

# Cube roots of unity in Fq: the two roots of w^2 + w + 1. Scott's G1 endomorphism
# phi(x, y) = (beta x, y) acts on G1 as multiplication by a root lambda of l^2 + l + 1 mod r;
# -z^2 is one (r = z^4 - z^2 + 1). BETA is the root for which phi(P) = -z^2 P on G1 (the
# other root gives z^2 - 1); tests/curve/test_params.py checks it on the generator.
_W = pow(2, (Q - 1) // 3, Q)
assert _W != 1 and pow(_W, 3, Q) == 1
BETA = _W
LAMBDA_G1 = -(Z**2) % R

# G2's untwist-Frobenius-twist endomorphism psi(x, y) = (conj(x) PSI_X, conj(y) PSI_Y),
# with PSI_X = 1/(u+1)^((q-1)/3) and PSI_Y = 1/(u+1)^((q-1)/2); psi acts on G2 as z.
_XI = (1, 1)  # u + 1, the twist's non-residue
PSI_X = fq2.inverse(fq2.pow(_XI, (Q - 1) // 3))
PSI_Y = fq2.inverse(fq2.pow(_XI, (Q - 1) // 2))


@dataclass(frozen=True)
class CurveParams:
    """One of G1 and G2: y^2 = x^3 + b over Fq (degree 1) or Fq2 (degree 2).

    ``b`` and the generator coordinates are ints (G1) or pairs (c0, c1) (G2), canonical.
    ``coordinate_bytes`` is the size of one coordinate in the standard encodings (48 per
    Fq component, big-endian).
    """

    name: str
    degree: int
    b: object
    generator: tuple
    cofactor: int
    order: int = R

    @property
    def field(self):
        """The reference field (numba_cuzk.field.reference.fq or fq2)."""
        return fq if self.degree == 1 else fq2

    @property
    def limbs(self) -> int:
        """32-bit limbs per coordinate: 12 (Fq) or 24 (Fq2: c0's 12 limbs, then c1's)."""
        return FQ.limbs * self.degree

    @property
    def coordinate_bytes(self) -> int:
        return FQ.nbytes * self.degree

    @property
    def compressed_bytes(self) -> int:
        """48 for G1, 96 for G2."""
        return self.coordinate_bytes

    @property
    def uncompressed_bytes(self) -> int:
        """96 for G1, 192 for G2."""
        return 2 * self.coordinate_bytes


G1 = CurveParams(
    name="G1",
    degree=1,
    b=4,
    generator=(
        0x17F1D3A73197D7942695638C4FA9AC0FC3688C4F9774B905A14E3A3F171BAC586C55E83FF97A1AEFFB3AF00ADB22C6BB,
        0x08B3F481E3AAA0F1A09E30ED741D8AE4FCF5E095D5D00AF600DB18CB2C04B3EDD03CC744A2888AE40CAA232946C5E7E1,
    ),
    cofactor=H1,
)

G2 = CurveParams(
    name="G2",
    degree=2,
    b=(4, 4),
    generator=(
        (
            0x024AA2B2F08F0A91260805272DC51051C6E47AD4FA403B02B4510B647AE3D1770BAC0326A805BBEFD48056C8C121BDB8,
            0x13E02B6052719F607DACD3A088274F65596BD0D09920B61AB5DA61BBDC7F5049334CF11213945D57E5AC7D055D042B7E,
        ),
        (
            0x0CE5D527727D6E118CC9CDC6DA2E351AADFD9BAA8CBDD3A76D429A695160D12C923AC9CC3BACA289E193548608B82801,
            0x0606C4A02EA734CC32ACD2B02BC28B99CB3E287E85A763AF267492AB572E99AB3F370D275CEC1DA1AAA9075FF05F79BE,
        ),
    ),
    cofactor=H2,
)

CURVES = (G1, G2)
