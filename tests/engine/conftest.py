"""Fixtures of the engine tests: the stored proving key (keys.py), partition witnesses
(seeds of its circuit), and an engine run that returns its outcomes and its timeline."""

from __future__ import annotations

import warnings
from concurrent.futures import Future, wait
from dataclasses import dataclass
from functools import partial
from pathlib import Path

import pytest

from numba_cuzk.engine import Engine, EngineConfig, Job, circuit_witness
from numba_cuzk.groth16 import pairing
from numba_cuzk.groth16.formats import read_zkey
from numba_cuzk.groth16.keys import ProvingKey
from numba_cuzk.timeline import reader
from tests.engine.keys import KEY_CIRCUIT, KEY_LOG, KEY_PATH

TIMEOUT_S = 120  # a wait that would otherwise hang fails instead (a lock never released, say)


@pytest.fixture(scope="session")
def key() -> ProvingKey:
    return read_zkey(KEY_PATH, trusted=True)


def synthesizer(seed: int):
    """Partition instance ``seed`` of the key's circuit."""
    return partial(circuit_witness, KEY_CIRCUIT, KEY_LOG, seed)


def witness(seed: int):
    return synthesizer(seed)()


def verifies(pk: ProvingKey, result) -> bool:
    """A PartitionResult's proof verifies for its public inputs, and those are its seed's."""
    return pairing.verify(pk.verifying_key, result.public_inputs, result.proof)


@dataclass
class Run:
    """What ``run_engine`` saw: one Future per job (all settled), the engine (closed), the
    parsed timeline."""

    futures: list[Future]
    engine: Engine
    timeline: reader.Timeline

    def events(self, name: str, **match) -> list[dict]:
        return [e for e in self.timeline.of(name) if all(e.get(k) == v for k, v in match.items())]


def run_engine(path: Path, pk: ProvingKey, jobs: list[list], **config) -> Run:
    """Submit one Job per list of synthesizers, close (drain), read the timeline."""
    config = {"synthesis": "thread", "synthesis_workers": 2, **config}
    engine = Engine(EngineConfig(timeline_path=path, **config))
    futures = [engine.submit(Job(pk, partitions)) for partitions in jobs]
    _, pending = wait(futures, timeout=TIMEOUT_S)
    assert not pending, f"jobs still running after {TIMEOUT_S} s"
    engine.close()
    with warnings.catch_warnings():
        warnings.simplefilter("error", reader.TimelineWarning)  # a malformed line fails the test
        timeline = reader.read(path)
    return Run(futures, engine, timeline)


def max_overlap(intervals: list[tuple[float, float]]) -> int:
    """The most of ``intervals`` (start, end) that are open at one time."""
    steps = sorted([(s, 1) for s, _ in intervals] + [(e, -1) for _, e in intervals], key=lambda x: (x[0], x[1]))
    depth = most = 0
    for _, delta in steps:
        depth += delta
        most = max(most, depth)
    return most
