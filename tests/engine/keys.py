"""The engine tests' proving key, stored so the tests skip setup's ~40 s of kernel
compilation: circuit KEY_CIRCUIT at 2^KEY_LOG (circuits.build; every seed is a
partition instance of it), fixed toxic waste, so the file is reproducible. Regenerate it
after a change to the circuit or to the zkey format:

    NUMBA_ENABLE_CUDASIM=1 python -m tests.engine.keys
"""

from __future__ import annotations

from pathlib import Path

KEY_CIRCUIT, KEY_LOG = "mimc", 6
KEY_PATH = Path(__file__).parent / "data" / f"{KEY_CIRCUIT}{KEY_LOG}.zkey"
TOXIC = {"alpha": 11, "beta": 13, "gamma": 17, "delta": 19, "tau": 123456789}


def prove_stored(gpu: bool) -> None:
    """Check the stored key (read_zkey's point checks), then prove seed 0's witness with
    it: what a one-shot ``numba-cuzk prove`` runs, without setup's kernels."""
    from numba_cuzk.circuits import witness
    from numba_cuzk.groth16.formats import read_zkey
    from numba_cuzk.groth16.prove import Prover

    Prover(read_zkey(KEY_PATH), gpu=gpu).prove(witness(KEY_CIRCUIT, KEY_LOG, 0))


def main() -> None:
    from numba_cuzk.circuits import build
    from numba_cuzk.groth16.formats import write_zkey
    from numba_cuzk.groth16.setup import setup

    r1cs, _ = build(KEY_CIRCUIT, KEY_LOG, seed=0)
    write_zkey(KEY_PATH, setup(r1cs, gpu=False, toxic=TOXIC))
    print(f"wrote {KEY_PATH}: {r1cs.n_wires} wires, {r1cs.n_constraints} constraints")


if __name__ == "__main__":
    main()
