"""Soak: 50 jobs of 4 partitions (200) of the smallest circuit through one engine with
process synthesis, ~5% of them faulty: a synthesizer raises, the device step raises, a
synthesis process is killed (SIGKILL). Every partition is then proved (its proof written
once, to its own file, and verifying) or failed with its cause; no witness file is left
in shared memory and no semaphore is still mapped; the engine's memory stays flat from
the first half of the run to the second. About a minute on 2 cores, after compilation."""

from __future__ import annotations

import os
import random
import signal
from collections import Counter
from concurrent.futures import wait
from functools import partial
from pathlib import Path

import pytest

from numba_cuzk.engine import Engine, EngineConfig, Job, JobFailed, circuit_witness
from numba_cuzk.engine.job import JobState
from numba_cuzk.engine.synthesis import SHARED_DIR, SHARED_PREFIX
from numba_cuzk.groth16 import pairing
from numba_cuzk.groth16.formats import read_proof_json, read_public_json
from numba_cuzk.groth16.prove import Prover
from tests.engine.conftest import TIMEOUT_S
from tests.engine.keys import KEY_CIRCUIT, KEY_LOG

JOBS, PARTITIONS = 50, 4
MARK = 12345  # wire 7's value in a witness whose device step is made to fail
RSS_GROWTH_BYTES = 40 << 20


def raising(seed: int):
    raise RuntimeError(f"injected synthesis fault {seed}")


def killed(seed: int):
    os.kill(os.getpid(), signal.SIGKILL)


def marked(seed: int):
    witness = circuit_witness(KEY_CIRCUIT, KEY_LOG, seed)
    witness[:, 7] = 0
    witness[0, 7] = MARK
    return witness


FAULTS = {"synthesis": raising, "killed": killed, "device": marked}


def _plan(seed: int) -> dict[tuple[int, int], str]:
    """(job, partition) -> fault kind for ~5% of the partitions; kills kept few (each
    breaks the pool, failing the partitions in flight with it)."""
    rng = random.Random(seed)
    cells = rng.sample([(j, i) for j in range(JOBS) for i in range(PARTITIONS)], 10)
    kinds = ["synthesis"] * 4 + ["device"] * 4 + ["killed"] * 2
    return dict(zip(cells, kinds))


def _rss_bytes() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def _semaphores_mapped() -> set[str]:
    """Named semaphores this process maps that still exist in /dev/shm (an unlinked one,
    "(deleted)", takes no name and goes with its last mapping)."""
    with open("/proc/self/maps") as f:
        return {line.split()[5] for line in f if "/dev/shm/sem." in line and not line.rstrip().endswith("(deleted)")}


def _witness_files() -> set[str]:
    return {n for n in os.listdir(SHARED_DIR) if n.startswith(f"{SHARED_PREFIX}{os.getpid()}-")}


@pytest.mark.slow
def test_soak_with_faults(tmp_path, key, monkeypatch):
    plan = _plan(19)
    writes = Counter()
    real_write, real_enqueue = JobState.write, Prover.enqueue

    def counting_write(self, index, proof, public):
        writes[(self.name, index)] += 1
        real_write(self, index, proof, public)

    def faulting_enqueue(self, slot, timer):
        if slot.host[0, 7] == MARK:
            raise RuntimeError("injected device fault")
        return real_enqueue(self, slot, timer)

    monkeypatch.setattr(JobState, "write", counting_write)
    monkeypatch.setattr(Prover, "enqueue", faulting_enqueue)
    semaphores = _semaphores_mapped()
    engine = Engine(EngineConfig(devices=(), synthesis="process", synthesis_workers=2,
                                 synthesis_warmup=partial(circuit_witness, KEY_CIRCUIT, KEY_LOG, 0)))
    futures, rss = {}, []
    for half in (range(JOBS // 2), range(JOBS // 2, JOBS)):
        for j in half:
            parts = [partial(FAULTS[plan[(j, i)]] if (j, i) in plan else circuit_witness,
                             *(() if (j, i) in plan else (KEY_CIRCUIT, KEY_LOG)), 1 + j * PARTITIONS + i)
                     for i in range(PARTITIONS)]
            futures[f"job-{j}"] = engine.submit(Job(key, parts, name=f"job-{j}", out_dir=tmp_path / f"job-{j}"))
        _, pending = wait(futures.values(), timeout=4 * TIMEOUT_S)
        assert not pending
        rss.append(_rss_bytes())
    engine.close()

    proved, failed = {}, {}
    for name, future in futures.items():
        try:
            proved.update({(name, p.index): p for p in future.result(timeout=0).partitions})
        except JobFailed as exc:
            proved.update({(name, i): p for i, p in exc.finished.items()})
            failed[name] = exc
    causes = {"synthesis": "injected synthesis fault", "device": "injected device fault",
              "killed": "BrokenProcessPool"}
    expected = {}  # job -> what its failure may name: its own faults, or a killed process
    for (j, _), kind in plan.items():
        expected.setdefault(f"job-{j}", {causes["killed"]}).add(causes[kind])
    assert set(failed) <= set(expected) | {name for name, exc in failed.items() if causes["killed"] in str(
        exc)}, "a job failed without a fault of its own or a killed synthesis process"
    for name, allowed in expected.items():
        assert any(cause in str(failed[name]) for cause in allowed), str(failed[name])
    assert len(proved) >= 150  # faulty jobs' partitions that were not started are cancelled
    assert all(n == 1 for n in writes.values()) and set(writes) == set(proved)  # each proof written once
    for (name, index), result in proved.items():
        folder = tmp_path / name
        proof = read_proof_json(folder / f"partition-{index:03d}.proof.json")
        public = read_public_json(folder / f"partition-{index:03d}.public.json")
        assert proof == result.proof and pairing.verify(key.verifying_key, public, proof)
    on_disk = {(p.parent.name, int(p.name[10:13])) for p in Path(tmp_path).glob("*/*.proof.json")}
    assert on_disk == set(proved)
    assert not _witness_files(), "witness files left in shared memory"
    assert _semaphores_mapped() <= semaphores, "semaphores still mapped after close"
    assert rss[1] - rss[0] < RSS_GROWTH_BYTES, f"memory grew {(rss[1] - rss[0]) >> 20} MiB over the second half"
