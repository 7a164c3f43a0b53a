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


def test_kernel_trace_on_the_gpu(tmp_path):
    """CUPTI's records (cupti-python): the clock markers fit their host brackets, every
    kernel record lies in its partition's phases (kernels launched inside them, mapped
    within the slack), and the phases' busy time bounds the kernels' from above."""
    pytest.importorskip("cupti", reason="cupti-python is not installed")
    pk = circuit_key("bit_heavy", 12, gpu=True)
    (work,) = circuit_partitions("bit_heavy", 12, 1, 5)
    path = tmp_path / "t.jsonl"
    with Engine(EngineConfig(devices=(0,), synthesis_workers=2, trace="kernels", timeline_path=path)) as engine:
        assert engine.trace is not None, "CUPTI did not start (see the KernelTraceWarning)"
        result = engine.submit(Job(pk, work)).result(timeout=COMPILE_S)
    assert all(verifies(pk, p) for p in result.partitions)
    timeline = reader.read(path)
    (clock,) = timeline.of("cupti_clock")
    assert clock["markers_fit"], clock
    assert clock["bound_ns"][1] - clock["bound_ns"][0] < 1e6, clock  # the mapping known to within 1 ms
    records = timeline.of("cupti_kernel")
    assert any("accumulate" in r["name"] for r in records) and timeline.of("cupti_memcpy")
    steady = analysis.analyze(timeline, "steady")
    (d,) = steady.devices
    assert 0 < d.kernel_busy_pct <= d.busy_pct + 1 and d.outside_phases_pct < 1, d
    assert steady.phases and all(p.launches > 0 and p.kernel_ms <= p.device_ms + SLACK_MS for p in steady.phases), \
        _phases_and_starts(timeline)


@pytest.mark.alone  # GPM counts every process's kernels: another test's would break the bound on SM active
def test_counters_on_the_gpu(tmp_path):
    """NVML GPM beside CUPTI: contiguous 100 ms samples on the host clock, SM activity seen
    while kernels run, and the stack's SM active no more than its kernel time (the samples
    straddle the window's ends: 10 points of slack)."""
    pytest.importorskip("pynvml", reason="nvidia-ml-py is not installed")
    pk = circuit_key("bit_heavy", 16, gpu=True)
    (work,) = circuit_partitions("bit_heavy", 16, 1, 12)
    path = tmp_path / "t.jsonl"
    config = EngineConfig(devices=(0,), synthesis_workers=2, trace="kernels,counters", timeline_path=path)
    with Engine(config) as engine:
        assert engine.counters is not None, "GPM did not start (see the CounterWarning)"
        result = engine.submit(Job(pk, work)).result(timeout=COMPILE_S)
    assert all(verifies(pk, p) for p in result.partitions)
    timeline = reader.read(path)
    samples = timeline.of("counters")
    assert len(samples) >= 3 and {s["source"] for s in samples} == {"nvml-gpm"}
    assert all(a["end_ms"] == b["t_ms"] for a, b in zip(samples, samples[1:]))
    assert max(s["metrics"]["sm_active_pct"] for s in samples) > 10, samples
    whole = analysis.analyze(timeline, "whole")
    assert whole.counters_source == "nvml-gpm" and whole.stack.pipe == "integer", whole.stack
    assert 0 < whole.stack.sm_active_pct <= whole.stack.kernel_pct + 10, whole.stack


def _phases_and_starts(timeline) -> str:
    """Each partition's phases with the kernel records that start in them (ms after the
    phase's start, and the records starting up to 2 ms before it): what a failure shows."""
    starts = sorted(r["t_ms"] for r in timeline.of("cupti_kernel"))
    lines = []
    for phase in timeline.of("kernel"):
        inside = [round(t - phase["t_ms"], 3) for t in starts if phase["t_ms"] <= t < phase["end_ms"]]
        before = [round(t - phase["t_ms"], 3) for t in starts if phase["t_ms"] - 2 <= t < phase["t_ms"]]
        lines.append(f"{phase['job']}/{phase['partition']} {phase['phase']} [{phase['t_ms']:.3f}, "
                     f"{phase['end_ms']:.3f}] starts {inside} before {before}")
    return "\n".join(lines)


def test_engine_proves_with_a_key_resident_on_its_gpu(tmp_path):
    """A key set up on the GPU (setup(resident=True), planned for the engine's slots) is
    adopted by the engine's Prover as it is: its queries are the Prover's bases, no copy,
    and every partition's proof verifies."""
    from numba_cuzk.commands.batch import resident_slots
    from numba_cuzk.field.target import is_device_array
    from numba_cuzk.groth16 import memory

    config = EngineConfig(devices=(0,), synthesis_workers=2, gpu_workers_per_device=2, timeline_path=tmp_path / "t")
    assert resident_slots(config) == 3
    pk = circuit_key("bit_heavy", 12, gpu=True, resident_slots=3)
    assert all(is_device_array(getattr(pk, field)) for field, _ in memory.QUERIES.values())
    (work,) = circuit_partitions("bit_heavy", 12, 1, 5)
    with Engine(config) as engine:
        result = engine.submit(Job(pk, work)).result(timeout=COMPILE_S)
        (device,) = engine.devices
        prover = next(iter(device.residents.values())).prover
    assert all(verifies(pk, p) for p in result.partitions)
    assert all(prover.bases[q].points is getattr(pk, field) for q, (field, _) in memory.QUERIES.items())


def test_engine_streams_a_key_whose_b2_does_not_fit(tmp_path, monkeypatch):
    """The PoRep shape in small: a resident key with B2 in pinned host memory, and free
    device memory (forced) that holds the rest but not B2, so the engine's Prover streams
    B2 in chunks of 2^18. Every proof verifies, and the timeline has the copies as
    ``transfer`` events, outside the kernel phases' busy time (the 2^27 run at aa724e5
    failed on them)."""
    from numba_cuzk.circuits import build
    from numba_cuzk.groth16 import memory
    from numba_cuzk.groth16.prove import placed_queries
    from numba_cuzk.groth16.setup import setup

    log = 20  # 2^20 B2 points: four chunks of 2^18
    r1cs, _ = build("bit_heavy", log, seed=0)
    pk = setup(r1cs, gpu=True, resident=True, slots=3, streamed=("b2",), chunk=1 << 18)
    streaming = memory.plan_with(memory.KeyShape.of(pk), ("b2",), slots=3, chunk=1 << 18, placed=placed_queries(pk))
    monkeypatch.setattr(memory, "free_bytes", lambda budget=None: streaming.device_bytes - streaming.placed_bytes)
    (work,) = circuit_partitions("bit_heavy", log, 1, 4)
    path = tmp_path / "t.jsonl"
    config = EngineConfig(devices=(0,), synthesis_workers=2, gpu_workers_per_device=2, timeline_path=path)
    with Engine(config) as engine:
        result = engine.submit(Job(pk, work)).result(timeout=COMPILE_S)
        prover = next(iter(engine.devices[0].residents.values())).prover
    assert prover.memory.streamed == ("b2",)
    assert all(verifies(pk, p) for p in result.partitions)
    timeline = reader.read(path)
    transfers = timeline.of("transfer")
    assert {e["phase"] for e in transfers} == {"stream_b2"} and len({e["partition"] for e in transfers}) == 4
    assert "stream_b2" not in {e["phase"] for e in timeline.of("kernel")}


def test_engine_proves_through_the_bit_tail_split(tmp_path):
    """EngineConfig(tail=) on a key set up resident for it (bench.porep's path in small):
    the engine's Prover splits bit_heavy's witness for A, B1, B2 and C, every proof
    verifies, the timeline has the split's phase, and the witness MSMs carry no product
    count (ops.py: their work is not the witness's) while H's does."""
    from numba_cuzk.circuits.builtin import split_tail

    path = tmp_path / "t.jsonl"
    config = EngineConfig(devices=(0,), synthesis_workers=2, gpu_workers_per_device=2, timeline_path=path,
                          tail=split_tail("bit_heavy"))
    pk = circuit_key("bit_heavy", 12, gpu=True, resident_slots=3, tail=config.tail)
    (work,) = circuit_partitions("bit_heavy", 12, 1, 5)
    with Engine(config) as engine:
        result = engine.submit(Job(pk, work)).result(timeout=COMPILE_S)
        prover = next(iter(engine.devices[0].residents.values())).prover
    assert prover.memory.bits == ("a", "b1", "b2", "c")
    assert all(verifies(pk, p) for p in result.partitions)
    kernels = reader.read(path).of("kernel")
    assert {e["partition"] for e in kernels if e["phase"] == "split"} == set(range(5))
    assert all("fq_muls" not in e for e in kernels if e["phase"] in ("msm_a", "msm_b1", "msm_b2", "msm_c"))
    assert all(e["fq_muls"] > 0 for e in kernels if e["phase"] == "msm_h")
