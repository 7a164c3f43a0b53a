"""Reference points <-> py-arkworks-bls12381 points, and the Groth16 verifier on its pairing.

arkworks (Rust, well kept) does the few host-side group operations of a proof's epilogue
(r delta, s A, ...: ~0.1 ms each, against ~10 ms in Python integers) and the pairings.
Its ``xy`` byte format is x || y, 48-byte little-endian canonical Fq each (G2: x.c0 x.c1
y.c0 y.c1), all zeros for infinity.
"""

from __future__ import annotations

import py_arkworks_bls12381 as ark

from numba_cuzk.field.params import FQ, FR
from numba_cuzk.groth16.keys import Proof, VerifyingKey

_FQ_BYTES = FQ.nbytes


def to_ark(point, degree: int):
    """Reference affine tuple (None = infinity) -> arkworks G1Point (degree 1) or G2Point."""
    cls = ark.G1Point if degree == 1 else ark.G2Point
    if point is None:
        return cls.identity()
    words = [point[0], point[1]] if degree == 1 else [*point[0], *point[1]]
    return cls.from_xy_bytes_unchecked_le(b"".join(w.to_bytes(_FQ_BYTES, "little") for w in words))


def from_ark(point, degree: int):
    """arkworks point -> reference affine tuple (None = infinity)."""
    raw = point.to_xy_bytes_le()
    words = [int.from_bytes(raw[k:k + _FQ_BYTES], "little") for k in range(0, len(raw), _FQ_BYTES)]
    if not any(words):
        return None
    return (words[0], words[1]) if degree == 1 else ((words[0], words[1]), (words[2], words[3]))


def scalar(k: int):
    return ark.Scalar(k % FR.modulus)


def verify(vk: VerifyingKey, public: list[int], proof: Proof) -> bool:
    """e(A, B) = e(alpha, beta) e(IC(x), gamma) e(C, delta), IC(x) = IC_0 + sum x_i IC_i.

    public: n_public ints; each must be < r (ValueError otherwise, naming the input), as
    snarkjs requires. Proof points must be on their curves (checked by the caller's reader).
    """
    if len(public) != vk.n_public:
        raise ValueError(f"{len(public)} public inputs, the key expects {vk.n_public}")
    for i, x in enumerate(public):
        if not 0 <= x < FR.modulus:
            raise ValueError(f"public input {i} is not a field element (not in [0, r))")
    ic = to_ark(vk.ic[0], 1)
    for x, point in zip(public, vk.ic[1:]):
        ic = ic + to_ark(point, 1) * scalar(x)
    g1 = [to_ark(proof.a, 1), -to_ark(vk.alpha_g1, 1), -ic, -to_ark(proof.c, 1)]
    g2 = [to_ark(proof.b, 2), to_ark(vk.beta_g2, 2), to_ark(vk.gamma_g2, 2), to_ark(vk.delta_g2, 2)]
    return bool(ark.GT.pairing_check(g1, g2))
