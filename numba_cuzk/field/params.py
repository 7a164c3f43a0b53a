"""BLS12-381 field parameters; every Montgomery constant is derived from the modulus.

Elements are stored as ``LIMBS`` little-endian 32-bit limbs. Montgomery form of ``x`` is
``x * R mod p`` with ``R = 2^(32 * LIMBS)``: 2^256 for Fr, 2^384 for Fq, the same
convention as snarkjs/ffjavascript files, so their Montgomery bytes load unchanged.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

LIMB_BITS = 32
LIMB_MASK = (1 << LIMB_BITS) - 1


@dataclass(frozen=True)
class FieldParams:
    """A prime field with Montgomery constants derived from its modulus.

    Attributes:
        name: "Fr" or "Fq".
        modulus: the prime p.
        limbs: number of 32-bit limbs (8 for Fr, 12 for Fq).
        nonresidue: a quadratic non-residue used to derive 2-adic roots of unity.
    """

    name: str
    modulus: int
    limbs: int
    nonresidue: int
    bits: int = field(init=False)
    spare_bits: int = field(init=False)
    r: int = field(init=False)  # R = 2^(32 * limbs) mod p: Montgomery form of 1
    r2: int = field(init=False)  # R^2 mod p: to_montgomery(x) = mont_mul(x, R^2)
    r_inv: int = field(init=False)  # R^-1 mod p
    n0: int = field(init=False)  # -p^-1 mod 2^32: the CIOS reduction factor
    two_adicity: int = field(init=False)  # largest s with 2^s | p - 1
    odd_part: int = field(init=False)  # (p - 1) / 2^s
    modulus_limbs: tuple = field(init=False)  # p as little-endian uint32 limbs

    def __post_init__(self) -> None:
        p, n = self.modulus, self.limbs
        big_r = 1 << (LIMB_BITS * n)
        s = ((p - 1) & -(p - 1)).bit_length() - 1
        derived = {
            "bits": p.bit_length(),
            "spare_bits": LIMB_BITS * n - p.bit_length(),
            "r": big_r % p,
            "r2": big_r * big_r % p,
            "r_inv": pow(big_r, -1, p),
            "n0": (-pow(p, -1, 1 << LIMB_BITS)) % (1 << LIMB_BITS),
            "two_adicity": s,
            "odd_part": (p - 1) >> s,
            "modulus_limbs": tuple((p >> (LIMB_BITS * j)) & LIMB_MASK for j in range(n)),
        }
        for key, value in derived.items():
            object.__setattr__(self, key, value)
        assert (p * self.n0) % (1 << LIMB_BITS) == LIMB_MASK, "n0 must satisfy p * n0 = -1 mod 2^32"
        assert pow(self.nonresidue, (p - 1) // 2, p) == p - 1, "nonresidue must be a non-square"

    @property
    def nbytes(self) -> int:
        """Bytes of one element in its limb representation (4 * limbs)."""
        return 4 * self.limbs

    @property
    def modulus_array(self) -> np.ndarray:
        """p as a read-only uint32 array of shape (limbs,)."""
        arr = np.array(self.modulus_limbs, dtype=np.uint32)
        arr.flags.writeable = False
        return arr

    def root_of_unity(self, log_n: int) -> int:
        """A primitive 2^log_n-th root of unity: nonresidue^((p-1)/2^log_n).

        Raises ValueError if 2^log_n does not divide p - 1.
        """
        if not 0 <= log_n <= self.two_adicity:
            raise ValueError(
                f"{self.name} has 2-adicity {self.two_adicity}: no root of unity of order 2^{log_n}"
            )
        return pow(self.nonresidue, (self.modulus - 1) >> log_n, self.modulus)


# BLS12-381 scalar field: the order of the prime-order subgroups G1, G2, GT.
# 5 is its smallest quadratic non-residue; snarkjs derives its NTT domains from it
# (arkworks and bellman use the generator 7, which gives other roots).
FR = FieldParams(
    name="Fr",
    modulus=0x73EDA753299D7D483339D80809A1D80553BDA402FFFE5BFEFFFFFFFF00000001,
    limbs=8,
    nonresidue=5,
)

# BLS12-381 base field. q = 3 mod 4, so sqrt is a single exponentiation and -1 is a
# non-residue (Fq2 = Fq[u]/(u^2 + 1)).
FQ = FieldParams(
    name="Fq",
    modulus=0x1A0111EA397FE69A4B1BA7B6434BACD764774B84F38512BF6730D2A0F6B0F6241EABFFFEB153FFFFB9FEFFFFFFFFAAAB,
    limbs=12,
    nonresidue=2,
)

assert FR.two_adicity == 32 and FR.bits == 255 and FR.spare_bits == 1
assert FQ.bits == 381 and FQ.spare_bits == 3 and FQ.modulus % 4 == 3
