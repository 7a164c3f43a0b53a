"""The engine on real GPUs (``pytest -m gpu`` on a GPU host; a whole proof is minutes in
the simulator): proofs verify, device intervals mapped onto the host clock fall inside
their host brackets, every visible GPU takes partitions."""

from __future__ import annotations

import pytest
from numba import cuda

from numba_cuzk.engine import Engine, EngineConfig, Job
from numba_cuzk.engine.workload import circuit_key, circuit_partitions
from numba_cuzk.timeline import analysis, reader
from tests.conftest import SIMULATOR
from tests.engine.conftest import verifies

pytestmark = [pytest.mark.gpu, pytest.mark.skipif(SIMULATOR, reason="needs a GPU: minutes per proof in the simulator")]

SLACK_MS = 0.5  # the anchor's host reading comes a little after the device reached it
COMPILE_S = 600  # the first partition on a device compiles every kernel


@pytest.mark.parametrize("gpu_workers", [1, 2])
def test_engine_on_every_gpu(tmp_path, gpu_workers):
    pk = circuit_key("bit_heavy", 12, gpu=True)
    gpus = len(cuda.gpus)
    work = circuit_partitions("bit_heavy", 12, 2, 4 * gpus)  # >= 3 per device for a steady state
    path = tmp_path / "t.jsonl"
    with Engine(EngineConfig(synthesis_workers=2, gpu_workers_per_device=gpu_workers, timeline_path=path)) as engine:
        futures = [engine.submit(Job(pk, job)) for job in work]
        results = [f.result(timeout=COMPILE_S) for f in futures]
    assert all(verifies(pk, p) for r in results for p in r.partitions)
    timeline = reader.read(path)
    brackets = {(e["job"], e["partition"]): e for e in timeline.of("gpu_bracket")}
    for kernel in timeline.of("kernel"):
        bracket = brackets[(kernel["job"], kernel["partition"])]
        assert bracket["t_ms"] - SLACK_MS <= kernel["t_ms"] <= kernel["end_ms"] <= bracket["end_ms"] + SLACK_MS
    assert {e["device"] for e in timeline.of("lock_held")} == set(range(gpus))
    assert len(timeline.of("sync")) == len(timeline.of("staging")) == sum(len(job) for job in work)
    steady = analysis.analyze(timeline, "steady")
    assert all(0 < d.busy_pct <= d.bracket_pct + 1 for d in steady.devices)
