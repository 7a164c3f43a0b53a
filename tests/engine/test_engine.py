"""The engine end to end on the CPU backend: proofs verify and come back in order, every
partition's life is on the timeline, faults fail only their job, close() drains.
Partitions are seeds of the stored key's circuit (keys.py), synthesized in threads."""

from __future__ import annotations

import threading
from functools import partial
from pathlib import Path

import numpy as np
import pytest

from numba_cuzk.engine import Engine, EngineConfig, Job, JobFailed
from numba_cuzk.engine.synthesis import SHARED_DIR
from numba_cuzk.groth16.formats import read_proof_json, read_public_json
from numba_cuzk.groth16.prove import Prover
from numba_cuzk.timeline import analysis, reader
from tests.engine.conftest import TIMEOUT_S, max_overlap, run_engine, synthesizer, verifies, witness

KERNELS = {"matvec", "ntt", "msm_a", "msm_b1", "msm_b2", "msm_c", "msm_h"}
LIFE = ("synthesis", "queued", "picked_up", "lock_wait", "lock_held", "gpu_bracket", "staging", "download",
        "sync", "epilogue", "done")
P = 5


@pytest.fixture(scope="module")
def good(tmp_path_factory, key):
    """One job of P partitions, its proofs written to a directory."""
    out = tmp_path_factory.mktemp("proofs")
    engine = Engine(EngineConfig(synthesis="thread", synthesis_workers=2,
                                 timeline_path=tmp_path_factory.mktemp("timeline") / "t.jsonl"))
    future = engine.submit(Job(key, [synthesizer(seed) for seed in range(P)], name="porep", out_dir=out))
    result = future.result(timeout=TIMEOUT_S)
    engine.close()
    return result, reader.read(engine.config.timeline_path), out


def test_proofs_verify_in_partition_order(good, key):
    result, _, _ = good
    assert result.name == "porep" and [p.index for p in result.partitions] == list(range(P))
    prover = Prover(key, gpu=False)
    for seed, part in enumerate(result.partitions):
        assert verifies(key, part)
        assert part.public_inputs == prover.public_inputs(witness(seed))  # partition i is seed i's proof
    assert len({tuple(p.public_inputs) for p in result.partitions}) == P
    assert all(0 < p.kernel_ms < p.total_ms and p.synthesis_ms > 0 for p in result.partitions)


def test_proofs_are_written_whole(good):
    result, _, out = good
    assert sorted(f.name for f in out.iterdir()) == sorted(
        f"partition-{i:03d}.{kind}.json" for i in range(P) for kind in ("proof", "public"))
    for part in result.partitions:
        assert read_proof_json(out / f"partition-{part.index:03d}.proof.json") == part.proof
        assert read_public_json(out / f"partition-{part.index:03d}.public.json") == part.public_inputs


def _one(events: list[dict], name: str) -> dict:
    found = [e for e in events if e["event"] == name]
    assert len(found) == 1, f"{len(found)} {name} events"
    return found[0]


def test_timeline_holds_every_partition_life_in_order(good):
    _, timeline, _ = good
    for i in range(P):
        mine = [e for e in timeline.events if e.get("partition") == i]
        life = {name: _one(mine, name) for name in LIFE}
        kernels = [e for e in mine if e["event"] == "kernel"]
        assert {k["phase"] for k in kernels} == KERNELS and len(kernels) == len(KERNELS)
        assert all(("fr_muls" in k) != ("fq_muls" in k) for k in kernels)
        end = lambda name: life[name]["end_ms"]  # noqa: E731
        start = lambda name: life[name]["t_ms"]  # noqa: E731
        assert end("synthesis") <= start("queued") <= start("staging") <= end("staging") <= start("picked_up")
        assert start("picked_up") <= start("lock_wait") <= end("lock_wait") == start("lock_held")
        assert start("lock_held") <= start("gpu_bracket") <= min(k["t_ms"] for k in kernels)
        assert max(k["end_ms"] for k in kernels) <= end("gpu_bracket") <= start("epilogue")
        assert end("lock_held") <= start("sync") <= end("sync") <= end("gpu_bracket")  # waited for outside the lock
        assert life["epilogue"]["in_lock"] is False and end("epilogue") <= start("done")
    allocs = timeline.of("alloc")
    assert len(allocs) == 1 and allocs[0]["bytes"] > 0  # one Prover, made for the first partition
    assert not timeline.of("failed")


def test_analysis_of_the_run(good):
    _, timeline, _ = good
    whole = analysis.analyze(timeline, "whole")
    assert whole.done == P and whole.failed == 0 and len(whole.partitions) == P
    (device,) = whole.devices
    assert 0 < device.busy_pct <= device.bracket_pct <= 100
    # the CPU backend works inside the lock (a GPU only launches there)
    assert device.busy_pct <= device.lock_held_pct and device.held_idle_pct < device.lock_held_pct
    assert all(p.kernel_ms > 0 and p.lock_held_ms >= p.kernel_ms for p in whole.partitions)
    assert {p.phase for p in whole.phases} == KERNELS and all(p.efficiency_pct for p in whole.phases)
    steady = analysis.analyze(timeline, "steady")  # P >= 3: the first and last partitions are left out
    assert len(steady.partitions) == P - 2 and steady.devices[0].busy_pct > 0


def test_failing_synthesizer_fails_only_its_job(tmp_path, key):
    def broken():
        raise RuntimeError("synthesis broke")

    run = run_engine(tmp_path / "t.jsonl", key, [[synthesizer(1), broken, synthesizer(2)],
                                                 [synthesizer(3), synthesizer(4)]])
    with pytest.raises(JobFailed, match="partition 1 failed in synthesis: RuntimeError: synthesis broke") as info:
        run.futures[0].result(timeout=0)
    assert isinstance(info.value.__cause__, RuntimeError)
    assert all(verifies(key, p) for p in info.value.finished.values())  # proofs that finished are kept
    second = run.futures[1].result(timeout=0)
    assert [p.index for p in second.partitions] == [0, 1] and all(verifies(key, p) for p in second.partitions)
    (failed,) = run.events("failed", job="job-0", stage="synthesis")
    assert failed["partition"] == 1 and "synthesis broke" in failed["error"]
    for i in range(3):  # every partition of the failed job settled exactly once
        assert len(run.events("done", job="job-0", partition=i) + run.events("failed", job="job-0", partition=i)) == 1


def test_wrong_witnesses_are_refused_before_device_work(tmp_path, key):
    short = lambda: witness(1)[:, :-1]  # noqa: E731
    wide = lambda: witness(1).astype(np.uint64)  # noqa: E731
    run = run_engine(tmp_path / "t.jsonl", key, [[short], [wide], [synthesizer(2)]])
    for future in run.futures[:2]:
        with pytest.raises(JobFailed, match=r"partition 0 failed in synthesis: ValueError: witness must be a "
                                            r"uint32 array of shape \(8, 62\)"):
            future.result(timeout=0)
    assert not run.events("picked_up", job="job-0") and not run.events("picked_up", job="job-1")
    assert verifies(key, run.futures[2].result(timeout=0).partitions[0])


def test_unsatisfied_witness_and_device_error_fail_their_jobs(tmp_path, key, monkeypatch):
    wrong = witness(1)
    wrong[0, 5] ^= 1  # a private wire changed: still canonical, no longer a solution
    real = Prover.enqueue

    def enqueue(self, slot, timer):
        if slot.host[0, 7] == 12345:
            raise RuntimeError("device fault")
        return real(self, slot, timer)

    monkeypatch.setattr(Prover, "enqueue", enqueue)
    faulty = witness(2)
    faulty[:, 7] = 0
    faulty[0, 7] = 12345
    run = run_engine(tmp_path / "t.jsonl", key, [[lambda: wrong], [lambda: faulty], [synthesizer(3)]])
    with pytest.raises(JobFailed, match="failed in epilogue: ValueError: the proof does not verify: the witness does not satisfy"):
        run.futures[0].result(timeout=0)
    with pytest.raises(JobFailed, match="failed in gpu: RuntimeError: device fault"):
        run.futures[1].result(timeout=0)
    assert verifies(key, run.futures[2].result(timeout=0).partitions[0])  # the device lock was released
    assert len(run.events("lock_held", job="job-1")) == 1


def test_device_faults_give_their_slots_back(tmp_path, key, monkeypatch):
    """A partition whose device work fails while its worker waits for it gives its proof
    slot back: with more faults than slots (one GPU worker: two), a later job still finds
    a slot instead of waiting for ever."""
    enqueue, collect = Prover.enqueue, Prover.collect
    faults = set()

    def marking_enqueue(self, slot, timer):
        if slot.host[0, 7] == 12345:  # before the witness is turned into Montgomery form in place
            faults.add(id(slot))
        enqueue(self, slot, timer)

    def faulting_collect(self, slot, timer):
        if id(slot) in faults:
            faults.discard(id(slot))
            raise RuntimeError("device fault")
        return collect(self, slot, timer)

    monkeypatch.setattr(Prover, "enqueue", marking_enqueue)
    monkeypatch.setattr(Prover, "collect", faulting_collect)
    faulty = witness(2)
    faulty[:, 7] = 0
    faulty[0, 7] = 12345
    run = run_engine(tmp_path / "t.jsonl", key, [[lambda: faulty]] * 4 + [[synthesizer(3)]], gpu_workers_per_device=1)
    for future in run.futures[:4]:
        with pytest.raises(JobFailed, match="failed in gpu: RuntimeError: device fault"):
            future.result(timeout=0)
    assert verifies(key, run.futures[4].result(timeout=0).partitions[0])


def test_host_budget_bounds_partitions_in_flight(tmp_path, key):
    """Measured on the timeline: a partition holds memory from synthesis start to the end
    of its staging; without backpressure all 6 would be synthesized at once (synthesis
    takes ~1 ms, a proof ~50 ms)."""
    bytes_per = 32 * key.n_vars
    run = run_engine(tmp_path / "t.jsonl", key, [[synthesizer(s) for s in range(6)]],
                     host_memory_budget_bytes=2 * bytes_per + bytes_per // 2, synthesis_workers=4)
    assert len(run.futures[0].result(timeout=0).partitions) == 6
    held = [(s["t_ms"], run.events("staging", partition=s["partition"])[0]["end_ms"])
            for s in run.events("synthesis")]
    assert max_overlap(held) == 2 == run.engine.budget.peak_partitions
    assert run.engine.budget.peak_bytes == 2 * bytes_per


def test_witness_over_the_budget_fails_at_admission(tmp_path, key):
    run = run_engine(tmp_path / "t.jsonl", key, [[synthesizer(1)]], host_memory_budget_bytes=32 * key.n_vars - 1)
    with pytest.raises(JobFailed, match="failed in admission: ValueError: a witness of 1984 bytes exceeds"):
        run.futures[0].result(timeout=0)
    assert not run.events("synthesis")


def test_close_drains_and_cancel_stops_admitting(tmp_path, key):
    run = run_engine(tmp_path / "t.jsonl", key, [[synthesizer(1), synthesizer(2)], [synthesizer(3)]])
    assert all(f.done() for f in run.futures)  # close() returned after every job settled
    assert [len(f.result(timeout=0).partitions) for f in run.futures] == [2, 1]
    with pytest.raises(RuntimeError, match="closed"):
        run.engine.submit(Job(key, [synthesizer(4)]))

    engine = Engine(EngineConfig(synthesis="thread", max_in_flight=1, timeline_path=tmp_path / "c.jsonl"))
    future = engine.submit(Job(key, [synthesizer(s) for s in range(6)]))
    engine.close(cancel=True)
    with pytest.raises(JobFailed, match="cancelled") as info:
        future.result(timeout=0)
    assert len(info.value.finished) <= 1 and all(verifies(key, p) for p in info.value.finished.values())


def test_two_gpu_workers_share_the_device_lock(tmp_path, key):
    run = run_engine(tmp_path / "t.jsonl", key, [[synthesizer(s) for s in range(6)]], gpu_workers_per_device=2)
    assert all(verifies(key, p) for p in run.futures[0].result(timeout=0).partitions)
    held = sorted((e["t_ms"], e["end_ms"]) for e in run.events("lock_held"))
    assert len(held) == 6 and all(a[1] <= b[0] for a, b in zip(held, held[1:]))
    assert {e["gpu_worker"] for e in run.events("lock_held")} == {0, 1}


def test_synthesis_and_assembly_processes(tmp_path, key):
    paths = []
    for seed in (1, 2):
        paths.append(tmp_path / f"w{seed}.npy")
        np.save(paths[-1], witness(seed))
    shared = lambda: set(Path(SHARED_DIR).glob("numba-cuzk-witness-*"))  # noqa: E731
    before = shared()
    engine = Engine(EngineConfig(synthesis="process", synthesis_workers=1, assembly="process",
                                 timeline_path=tmp_path / "t.jsonl"))
    with pytest.raises(TypeError, match="cannot be sent to a synthesis process"):
        engine.submit(Job(key, [lambda: witness(1)]))
    future = engine.submit(Job(key, [partial(np.load, p) for p in paths]))
    given = engine.submit(Job(key, [witness(3), witness(4)]))  # arrays: never sent to a process
    engine.close()
    assert all(verifies(key, p) for f in (future, given) for p in f.result(timeout=0).partitions)
    assert shared() <= before  # the witnesses' shared-memory files are gone


def test_bad_jobs_and_settings_are_refused(key):
    with pytest.raises(ValueError, match="assembly must be one of"):
        EngineConfig(assembly="fork")
    with pytest.raises(ValueError, match="synthesis must be one of"):
        EngineConfig(synthesis="fork")
    with pytest.raises(ValueError, match="synthesis_workers = 0"):
        EngineConfig(synthesis_workers=0)
    with pytest.raises(ValueError, match="no GPU"):
        Engine(EngineConfig(devices=(0,)))
    with Engine(EngineConfig(synthesis="thread", synthesis_workers=1)) as engine:
        with pytest.raises(ValueError, match="at least one partition"):
            engine.submit(Job(key, []))
        with pytest.raises(TypeError, match="must be a witness array or a callable"):
            engine.submit(Job(key, ["p1.wtns"]))
        engine.submit(Job(key, [synthesizer(1)], name="a"))
        with pytest.raises(ValueError, match="already used"):
            engine.submit(Job(key, [synthesizer(2)], name="a"))


def test_switch_interval_is_set_while_the_engine_runs_then_restored():
    import sys

    before = sys.getswitchinterval()
    with Engine(EngineConfig(synthesis="thread", synthesis_workers=1, switch_interval_ms=0.25)):
        assert sys.getswitchinterval() == pytest.approx(0.25e-3)
    assert sys.getswitchinterval() == before
    with Engine(EngineConfig(synthesis="thread", synthesis_workers=1, switch_interval_ms=None)):
        assert sys.getswitchinterval() == before
    with pytest.raises(ValueError, match="switch_interval_ms = 0"):
        EngineConfig(switch_interval_ms=0)


def test_synthesis_warmup_runs_first_and_may_fail():
    calls = []

    def warmup():
        calls.append(1)
        raise RuntimeError("a warm-up that fails is ignored")

    with Engine(EngineConfig(synthesis="thread", synthesis_workers=3, synthesis_warmup=warmup)):
        assert calls == [1]  # once, before any partition: compiled code is shared by threads
    with pytest.raises(TypeError, match="cannot be sent to a synthesis process"):
        Engine(EngineConfig(synthesis="process", synthesis_warmup=lambda: None))


def test_device_budget_evicts_the_least_recently_used_key(tmp_path, key):
    from numba_cuzk.engine.gpu import key_bytes
    from numba_cuzk.groth16.formats import read_zkey
    from tests.engine.keys import KEY_PATH

    other = read_zkey(KEY_PATH, trusted=True)  # the same contents, another key to the cache
    need = key_bytes(key, slots=2)  # one GPU worker: two witness slots
    engine = Engine(EngineConfig(synthesis="thread", device_memory_budget_bytes=need * 3 // 2,
                                 timeline_path=tmp_path / "t.jsonl"))
    results = [engine.submit(Job(pk, [synthesizer(i)])).result(timeout=TIMEOUT_S)
               for i, pk in enumerate((key, other, key, key))]
    engine.close()
    assert all(verifies(key, r.partitions[0]) for r in results)
    allocs = reader.read(engine.config.timeline_path).of("alloc")
    assert [a["job"] for a in allocs] == ["job-0", "job-1", "job-2"]  # job-3 reuses job-2's prover
    assert len(engine.devices[0].residents) == 1

    small = Engine(EngineConfig(synthesis="thread", device_memory_budget_bytes=need - 1))
    with pytest.raises(JobFailed, match="failed in staging: ValueError: the proving key needs"):
        small.submit(Job(key, [synthesizer(1)])).result(timeout=TIMEOUT_S)
    small.close()



def test_a_resident_key_is_found_while_the_device_works(key):
    """The stager looks up the resident key without the device lock, so staging never
    waits behind another partition's launches (it once did, when the lock covered the
    whole device work, and on the H200 a GPU worker then idled 7.6 ms per partition)."""
    from numba_cuzk.engine.gpu import open_devices
    from numba_cuzk.engine.record import Recorder

    (device,) = open_devices((), 1, None)
    recorder = Recorder(None)
    resident = device.resident(key, recorder, {})
    found = []
    with device.lock:  # a GPU worker launching a partition
        lookup = threading.Thread(target=lambda: found.append(device.resident(key, recorder, {})), daemon=True)
        lookup.start()
        lookup.join(timeout=10)
    assert found == [resident]


def test_two_callers_missing_a_key_at_once_make_one_resident(key, monkeypatch):
    """A preload and the key's first proof both miss the lock-free lookup: the second
    looks again under the lock and takes the first one's Resident (without that second
    look it built another Prover, a second device copy of the key)."""
    from numba_cuzk.engine import gpu
    from numba_cuzk.engine.record import Recorder

    built, both_missed = [], threading.Barrier(2)

    class SlowProver:  # the seconds a real Prover takes to upload and warm up, in 0.2 s
        def __init__(self, pk, **_) -> None:
            built.append(pk)
            self.slots = []

        def warm_up(self) -> None:
            threading.Event().wait(0.2)

    monkeypatch.setattr(gpu, "Prover", SlowProver)
    (device,) = gpu.open_devices((), 1, None)
    recorder, found = Recorder(None), []

    def ask() -> None:
        both_missed.wait(timeout=10)
        found.append(device.resident(key, recorder, {}))

    callers = [threading.Thread(target=ask, daemon=True) for _ in range(2)]
    for caller in callers:
        caller.start()
    for caller in callers:
        caller.join(timeout=10)
    assert len(built) == 1 and len(found) == 2 and found[0] is found[1]
    assert list(device.residents) == [id(key)]
