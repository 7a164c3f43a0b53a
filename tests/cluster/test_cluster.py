"""Three workers (threads of this process, on loopback TCP) prove jobs of the engine
tests' key: every partition proved once and verified, progress once per partition, the
key sent to each worker once, a failing partition failing only its job, and one timeline
of all three workers that ``numba-cuzk timeline`` reads like a single host's."""

from __future__ import annotations

import json
import warnings

import numpy as np
import pytest
from typer.testing import CliRunner

from numba_cuzk.cli import app
from numba_cuzk.cluster import ClusterProver, prove_many
from numba_cuzk.cluster.keys import KEY_PLUGIN_PREFIX, key_digest
from numba_cuzk.cluster.worker import key_counts
from numba_cuzk.engine import JobFailed
from numba_cuzk.groth16.formats import write_wtns
from numba_cuzk.groth16.prove import Prover
from numba_cuzk.timeline import analysis, reader
from tests.cluster.conftest import CONFIG
from tests.engine.conftest import TIMEOUT_S, synthesizer, verifies, witness
from tests.engine.keys import KEY_PATH

P = 9
runner = CliRunner()


@pytest.fixture(scope="module")
def proved(client, tmp_path_factory):
    """One job of P partitions, a task each, and its merged timeline."""
    progress = []
    with ClusterProver(client, CONFIG) as prover:
        future = prover.submit(KEY_PATH, [synthesizer(seed) for seed in range(P)], name="porep", trusted=True,
                               task_partitions=1, on_progress=lambda job, index: progress.append((job, index)))
        result = future.result(timeout=TIMEOUT_S)
        path = tmp_path_factory.mktemp("timeline") / "cluster.jsonl"
        prover.write_timeline(path, ["porep"])
        devices = prover.devices()
    return result, progress, path, devices


def test_three_workers_prove_every_partition_once(proved, key):
    result, progress, _, devices = proved
    assert result.name == "porep" and [p.index for p in result.partitions] == list(range(P))
    prover = Prover(key, gpu=False)
    for seed, part in enumerate(result.partitions):
        assert verifies(key, part) and not part.recovered
        assert part.public_inputs == prover.public_inputs(witness(seed))  # partition i is seed i's proof
    assert len({p.worker for p in result.partitions}) == 3  # Dask spread the tasks over every worker
    assert sorted({p.device for p in result.partitions}) == [d["id"] for d in devices] == [0, 1, 2]
    assert sorted(progress) == [("porep", i) for i in range(P)]  # progress: each partition once


def test_key_reaches_each_worker_once(client, proved):
    data = KEY_PATH.read_bytes()
    with ClusterProver(client) as again:  # another client object, the key as bytes this time
        assert len(again.submit(data, [synthesizer(20), synthesizer(21)], trusted=True).result(TIMEOUT_S).proofs) == 2
    assert len(prove_many(client, KEY_PATH, [synthesizer(22)] * 3, trusted=True, task_partitions=1)) == 3
    counts = client.run(key_counts)
    assert len(counts) == 3
    assert all(c == {key_digest(data): {"received": 1, "loaded": 1}} for c in counts.values())
    held = client.run_on_scheduler(lambda dask_scheduler: [n for n in dask_scheduler.worker_plugins
                                                           if n.startswith(KEY_PLUGIN_PREFIX)])
    assert held == [KEY_PLUGIN_PREFIX + key_digest(data)]


def test_failing_partition_fails_its_job_and_others_go_on(client, key, tmp_path):
    bad = witness(7)
    bad[0, 5] ^= 1  # still canonical, no longer a solution
    with ClusterProver(client) as prover:
        failing, fine = prover.submit_many(KEY_PATH, [[synthesizer(1), bad, synthesizer(2)],
                                                      [synthesizer(3), synthesizer(4)]],
                                           names=["bad", "fine"], trusted=True, task_partitions=5)
        with pytest.raises(JobFailed, match="job bad: partition 1 failed after 2 tries: ValueError: the proof does "
                                            "not verify: the witness does not satisfy") as info:
            failing.result(timeout=TIMEOUT_S)
        assert sorted(info.value.finished) == [0, 2] and all(verifies(key, p) for p in info.value.finished.values())
        assert all(verifies(key, p) for p in fine.result(timeout=TIMEOUT_S).partitions)
        prover.write_timeline(tmp_path / "bad.jsonl", ["bad"])
    failed = [e for e in reader.read(tmp_path / "bad.jsonl").of("failed")]
    assert [(e["job"], e["partition"]) for e in failed] == [("bad", 1)] * 2  # tried twice, on one timeline


def test_timeline_merges_the_workers(proved):
    result, _, path, devices = proved
    with warnings.catch_warnings():
        warnings.simplefilter("error", reader.TimelineWarning)
        timeline = reader.read(path)
    header = timeline.header
    assert [d["id"] for d in header["devices"]] == [0, 1, 2]
    assert {d["worker"] for d in header["devices"]} == {p.worker for p in result.partitions}
    for worker in header["config"]["cluster"]["workers"]:  # one process: the measured offset is ~0
        assert abs(worker["offset_ns"]) <= worker["clock_error_ms"] * 1e6 + 1e5
    for part in result.partitions:  # each partition's life on one device, in order, on the one clock
        mine = {e["event"]: e for e in timeline.events if e.get("partition") == part.index}
        assert {e["device"] for e in timeline.events if e.get("partition") == part.index and "device" in e} == {
            part.device}
        assert mine["synthesis"]["end_ms"] <= mine["staging"]["t_ms"] <= mine["lock_held"]["t_ms"]
        assert mine["lock_held"]["end_ms"] <= mine["epilogue"]["t_ms"] <= mine["done"]["t_ms"]
    whole = analysis.analyze(timeline, "whole")
    assert whole.done == P and whole.failed == 0 and len(whole.partitions) == P
    assert [d.device for d in whole.devices] == [0, 1, 2] and all(d.busy_pct > 0 for d in whole.devices)
    assert whole.balance.workers == 3  # one synthesis thread per worker, numbered apart
    shown = runner.invoke(app, ["timeline", str(path), "--json"])
    assert shown.exit_code == 0, shown.output
    assert len(json.loads(shown.stdout)["utilization"]["devices"]) == 3


def test_run_on_a_scheduler(client, tmp_path):
    folder = tmp_path / "witnesses"
    folder.mkdir()
    for seed in range(4):
        write_wtns(folder / f"p{seed}.wtns", witness(seed))
    address = client.scheduler.address
    engine = ["--synthesis", CONFIG.synthesis, "--workers", str(CONFIG.synthesis_workers),
              "--gpu-workers", str(CONFIG.gpu_workers_per_device)]  # the cluster's: no warning
    result = runner.invoke(app, ["run", "--scheduler", address, "--zkey", str(KEY_PATH), "--witness-dir", str(folder),
                                 "--trusted", *engine, "--json", "--out", str(tmp_path / "out"),
                                 "--timeline", str(tmp_path / "t.jsonl")])
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert [j["job"] for j in report["jobs"]] == ["p0", "p1", "p2", "p3"]  # each witness a job of its own
    assert report["ok"] and report["proofs"] == 4 and len(report["devices"]) == 3
    assert all(p["verified"] for j in report["jobs"] for p in j["partitions"])
    assert report["utilization"]["done"] == 4
    for seed in range(4):
        assert sorted(f.name for f in (tmp_path / "out" / f"p{seed}").iterdir()) == [
            "partition-000.proof.json", "partition-000.public.json"]
    assert np.isfinite(report["s_per_proof"])


def test_run_on_no_scheduler_exits_2(tmp_path):
    write_wtns(tmp_path / "p.wtns", witness(1))
    result = runner.invoke(app, ["run", "--scheduler", "nonsense", "--zkey", str(KEY_PATH), "--witness-dir",
                                 str(tmp_path), "--trusted"])
    assert result.exit_code == 2 and "--scheduler nonsense: cannot reach the scheduler" in result.output
