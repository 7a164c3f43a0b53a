"""The Groth16 verifier on py-arkworks-bls12381's pairing (points converted by curve.ark).

arkworks (Rust, well kept) does the few host-side group operations of a proof's epilogue
(r delta, s A, ...: ~0.1 ms each, against ~10 ms in Python integers) and the pairings.
"""

from __future__ import annotations

import py_arkworks_bls12381 as ark

from numba_cuzk.curve.ark import scalar, to_ark
from numba_cuzk.field.params import FR
from numba_cuzk.groth16.keys import Proof, VerifyingKey


class PreparedVerifyingKey:
    """A verifying key's points as arkworks objects and e(alpha, beta), computed once (as
    arkworks' prepare_verifying_key): each check is then a product of three pairings, not
    four (one Miller loop fewer: ~0.6 ms of ~4.5 ms on one core of the dev box)."""

    def __init__(self, vk: VerifyingKey) -> None:
        self.n_public = vk.n_public
        self.alpha_beta = ark.GT.pairing(to_ark(vk.alpha_g1, 1), to_ark(vk.beta_g2, 2))
        self.gamma_g2, self.delta_g2 = to_ark(vk.gamma_g2, 2), to_ark(vk.delta_g2, 2)
        self.ic = [to_ark(point, 1) for point in vk.ic]

    def verify(self, public: list[int], proof: Proof) -> bool:
        """e(A, B) e(-IC(x), gamma) e(-C, delta) = e(alpha, beta), IC(x) = IC_0 + sum x_i IC_i.

        public: n_public ints; each must be < r (ValueError otherwise, naming the input), as
        snarkjs requires. Proof points must be on their curves (checked by the caller's reader).
        """
        if len(public) != self.n_public:
            raise ValueError(f"{len(public)} public inputs, the key expects {self.n_public}")
        for i, x in enumerate(public):
            if not 0 <= x < FR.modulus:
                raise ValueError(f"public input {i} is not a field element (not in [0, r))")
        ic = self.ic[0]
        for x, point in zip(public, self.ic[1:]):
            ic = ic + point * scalar(x)
        g1 = [to_ark(proof.a, 1), -ic, -to_ark(proof.c, 1)]
        g2 = [to_ark(proof.b, 2), self.gamma_g2, self.delta_g2]
        return ark.GT.multi_pairing(g1, g2) == self.alpha_beta


def verify(vk: VerifyingKey, public: list[int], proof: Proof) -> bool:
    """PreparedVerifyingKey(vk).verify(public, proof): for one proof. Many proofs of one key
    share a PreparedVerifyingKey."""
    return PreparedVerifyingKey(vk).verify(public, proof)
