"""A circuit written with the ConstraintSystem API, set up, proved and verified.

Statement: "I know x such that x^3 + x + 5 = out" for a public out.
"""

from numba_cuzk.groth16 import pairing
from numba_cuzk.groth16.constraint_system import ConstraintSystem
from numba_cuzk.groth16.prove import Prover
from numba_cuzk.groth16.setup import setup
from numba_cuzk.groth16.witness import check_witness


def cube_circuit(x: int):
    cs = ConstraintSystem()
    out = cs.public(x ** 3 + x + 5)
    xv = cs.private(x)
    x2 = cs.private(x * x)
    x3 = cs.private(x ** 3)
    cs.enforce(xv, xv, x2)               # x * x = x^2
    cs.enforce(x2, xv, x3)               # x^2 * x = x^3
    cs.enforce(x3 + xv + 5, 1, out)      # (x^3 + x + 5) * 1 = out
    return cs.to_r1cs(), cs.witness()


def main(x: int = 3) -> None:
    r1cs, witness = cube_circuit(x)
    check_witness(r1cs, witness)         # names the first failing constraint, if any
    pk = setup(r1cs)                     # INSECURE local setup
    proof = Prover(pk).prove(witness)
    out = x ** 3 + x + 5
    assert pairing.verify(pk.verifying_key, [out], proof)
    assert not pairing.verify(pk.verifying_key, [out + 1], proof)
    print(f"proved knowledge of x with x^3 + x + 5 = {out}; the proof verifies")


if __name__ == "__main__":
    main()
