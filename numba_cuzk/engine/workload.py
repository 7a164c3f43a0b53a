"""Built-in workloads for ``numba-cuzk run`` (commands/batch.py) and bench/engine.py: a
proving key and the partitions' synthesizers of a built-in circuit, and a synthesis
warm-up small enough to run in every worker at once."""

from __future__ import annotations

from functools import partial

from numba_cuzk.circuits import build
from numba_cuzk.engine.job import Synthesizer
from numba_cuzk.engine.synthesis import circuit_witness
from numba_cuzk.groth16.keys import ProvingKey
from numba_cuzk.groth16.setup import setup


WARMUP_LOG = 12  # the warm-up's size: every family fits 2^12, and Numba compiles per type, not size


def circuit_key(circuit: str, log_constraints: int, gpu: bool | None = None,
                resident_slots: int | None = None, tail: int | None = None) -> ProvingKey:
    """An INSECURE local setup of built-in ``circuit`` at 2^log_constraints (every seed of
    it shares this key; groth16/setup.py). ``resident_slots``: the key stays on the
    current GPU (setup(resident=True)), planned for a Prover of that many proof slots
    (and ``tail``: its bit/tail split)."""
    r1cs, _ = build(circuit, log_constraints, seed=0)
    if resident_slots is None:
        return setup(r1cs, gpu=gpu)
    return setup(r1cs, gpu=gpu, resident=True, slots=resident_slots, tail=tail)


def circuit_warmup(circuit: str) -> Synthesizer:
    """A synthesizer of ``circuit`` at 2^WARMUP_LOG: it compiles what a partition's
    synthesis compiles, and every worker runs it at once (at 2^27 a partition's witness
    alone is 4.3 GB)."""
    return partial(circuit_witness, circuit, WARMUP_LOG, 0)


def circuit_partitions(circuit: str, log_constraints: int, jobs: int, partitions: int) -> list[list[Synthesizer]]:
    """``jobs`` lists of ``partitions`` synthesizers, each a distinct instance (seed)."""
    return [[partial(circuit_witness, circuit, log_constraints, 1 + j * partitions + i) for i in range(partitions)]
            for j in range(jobs)]
