"""Many proofs with one key: the Prover keeps the key's points resident (on the GPU when
there is one) and reuses its buffers, so each proof pays only for its own witness."""

import time

from numba_cuzk.circuits import build
from numba_cuzk.groth16 import pairing
from numba_cuzk.groth16.prove import Prover
from numba_cuzk.groth16.setup import setup


def main(log_constraints: int = 8, proofs: int = 3) -> None:
    r1cs, _ = build("mimc", log_constraints, seed=0)
    pk = setup(r1cs)
    prover = Prover(pk)
    for seed in range(proofs):
        _, witness = build("mimc", log_constraints, seed=seed)  # same circuit, new instance
        start = time.perf_counter()
        proof = prover.prove(witness)
        ms = (time.perf_counter() - start) * 1e3
        assert pairing.verify(pk.verifying_key, prover.public_inputs(witness), proof)
        print(f"proof {seed}: {ms:.1f} ms, verified")


if __name__ == "__main__":
    main()
