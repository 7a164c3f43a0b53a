"""Example circuits and the README's demo, above groth16 (they build R1CS instances and
prove them) and below the engine (which proves them in partitions).

    builtin.py  mimc_chain, merkle_path, bit_heavy: circuits built as arrays; build(name, k),
                witness(name, k, seed): an instance's witness alone
    demo.py     run_demo: a built-in circuit set up, proved, verified and timed
"""

from numba_cuzk.circuits.builtin import CIRCUITS, build, witness

__all__ = ["CIRCUITS", "build", "witness"]
