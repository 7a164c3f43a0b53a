"""The Groth16 verifier on py-arkworks-bls12381's pairing (points converted by curve.ark).

arkworks (Rust, well kept) does the few host-side group operations of a proof's epilogue
(r delta, s A, ...: ~0.1 ms each, against ~10 ms in Python integers) and the pairings.
"""

from __future__ import annotations

import py_arkworks_bls12381 as ark

from numba_cuzk.curve.ark import scalar, to_ark
from numba_cuzk.field.params import FR
from numba_cuzk.groth16.keys import Proof, VerifyingKey


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
