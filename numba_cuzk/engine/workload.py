"""Workloads for ``numba-cuzk run`` and bench/engine.py: a proving key and the
partitions' synthesizers, from a built-in circuit or from snarkjs/circom files."""

from __future__ import annotations

import os
from functools import partial
from pathlib import Path

from numba_cuzk.engine.job import Synthesizer
from numba_cuzk.engine.synthesis import circuit_witness
from numba_cuzk.circuits import build
from numba_cuzk.groth16.formats import read_wtns, read_zkey
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


def file_key(zkey: str | os.PathLike, trusted: bool = False) -> ProvingKey:
    """A snarkjs zkey (points checked unless ``trusted``)."""
    return read_zkey(zkey, trusted=trusted)


def file_partitions(witness_dir: str | os.PathLike) -> list[Synthesizer]:
    """One synthesizer per .wtns file in ``witness_dir``, in name order (reading the
    file is the partition's synthesis). ValueError if there is none."""
    paths = sorted(Path(witness_dir).glob("*.wtns"))
    if not paths:
        raise ValueError(f"no .wtns files in {witness_dir}")
    return [partial(read_wtns, path) for path in paths]
