"""Built-in workloads for ``numba-cuzk run`` (engine/batch.py) and bench/engine.py: a
proving key and the partitions' synthesizers of a built-in circuit."""

from __future__ import annotations

from functools import partial

from numba_cuzk.circuits import build
from numba_cuzk.engine.job import Synthesizer
from numba_cuzk.engine.synthesis import circuit_witness
from numba_cuzk.groth16.keys import ProvingKey
from numba_cuzk.groth16.setup import setup


def circuit_key(circuit: str, log_constraints: int, gpu: bool | None = None) -> ProvingKey:
    """An INSECURE local setup of built-in ``circuit`` at 2^log_constraints (every seed of
    it shares this key; groth16/setup.py)."""
    r1cs, _ = build(circuit, log_constraints, seed=0)
    return setup(r1cs, gpu=gpu)


def circuit_partitions(circuit: str, log_constraints: int, jobs: int, partitions: int) -> list[list[Synthesizer]]:
    """``jobs`` lists of ``partitions`` synthesizers, each a distinct instance (seed)."""
    return [[partial(circuit_witness, circuit, log_constraints, 1 + j * partitions + i) for i in range(partitions)]
            for j in range(jobs)]
