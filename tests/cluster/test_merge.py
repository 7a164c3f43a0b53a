"""Merging workers' timelines: times moved onto the client's clock by the measured
offsets, devices and synthesis workers numbered apart, engine jobs mapped back to their
cluster job and partition; other jobs, another client's job of the same name, and
device-wide events outside the span dropped."""

from __future__ import annotations

import json
import warnings

import pytest

from numba_cuzk.cluster.clock import Offset
from numba_cuzk.cluster.merge import merge
from numba_cuzk.events import FORMAT, VERSION
from numba_cuzk.timeline import analysis, reader

MS = 1_000_000  # ns


def _worker(address: str, t0_ns: int, names: dict, events: list[dict]) -> dict:
    header = {"format": FORMAT, "version": VERSION, "pid": 7, "host": address[-1], "t0_ns": t0_ns,
              "devices": [{"id": 0, "name": "GPU"}], "config": {"synthesis": "thread"}}
    text = "\n".join(json.dumps(r) for r in [header, *events]) + "\n" + '{"event": "nvml", "t_'  # a line half written
    return {"address": address, "host": address[-1], "devices": [{"id": 0, "name": "GPU", "gpu": True}],
            "timeline": text, "names": names}


def _partition(engine_job: str, start_ms: float) -> list[dict]:
    """One partition's life on device 0, synthesis worker 0, from ``start_ms`` (worker clock)."""
    ids = {"job": engine_job, "partition": 0}
    return [
        {"event": "synthesis", "t_ms": start_ms, "end_ms": start_ms + 1, **ids, "worker": 0},
        {"event": "queued", "t_ms": start_ms + 1, **ids},
        {"event": "picked_up", "t_ms": start_ms + 2, **ids, "device": 0, "gpu_worker": 0},
        {"event": "lock_held", "t_ms": start_ms + 2, "end_ms": start_ms + 6, **ids, "device": 0, "gpu_worker": 0},
        {"event": "kernel", "t_ms": start_ms + 3, "end_ms": start_ms + 5, **ids, "device": 0, "phase": "msm_a"},
        {"event": "done", "t_ms": start_ms + 7, **ids},
    ]


@pytest.fixture
def merged(tmp_path):
    # Worker a's clock reads 5 s ahead of the client's, b's 2 s behind; a started 1 s of
    # client time before b. On the client's clock, a's partition starts at 1000 + 10 ms,
    # b's at 2000 + 4 ms: 994 ms later.
    a = _worker("tcp://a", 1000 * MS + 5000 * MS, {"porep[0]#0": ["porep", 0, "me"], "other[0]#1": ["other", 0, "me"],
                                                   "porep[0]#2": ["porep", 0, "another client"]},
                _partition("porep[0]#0", 10) + _partition("other[0]#1", 20) + _partition("porep[0]#2", 30)
                + [{"event": "nvml", "t_ms": 12, "device": 0, "util_pct": 90, "mem_used_bytes": 1},
                   {"event": "nvml", "t_ms": 5000, "device": 0, "util_pct": 0, "mem_used_bytes": 1}])
    b = _worker("tcp://b", 2000 * MS - 2000 * MS, {"porep[1]#0": ["porep", 1, "me"]}, _partition("porep[1]#0", 4))
    offsets = {"tcp://a": Offset(5000 * MS, 2 * MS), "tcp://b": Offset(-2000 * MS, 4 * MS)}
    ids = {("tcp://b", 0): 0, ("tcp://a", 0): 1}
    path = tmp_path / "merged.jsonl"
    written = merge(path, [b, a, None], offsets, lambda address, local: ids[(address, local)], "me", ["porep"])
    with warnings.catch_warnings():
        warnings.simplefilter("error", reader.TimelineWarning)
        return written, reader.read(path)


def test_events_on_the_client_clock(merged):
    written, timeline = merged
    assert written == len(timeline.events) == 13  # two lives of 6 events, one nvml sample in their span
    start = {e["partition"]: e["t_ms"] for e in timeline.of("synthesis")}
    assert start == {0: 0.0, 1: 994.0}
    assert timeline.header["t0_ns"] == 1010 * MS
    assert [e["t_ms"] for e in timeline.of("nvml")] == [2.0]  # the other sample is outside the jobs' span


def test_ids_numbered_apart(merged):
    _, timeline = merged
    assert {(e["partition"], e["device"]) for e in timeline.of("kernel")} == {(0, 1), (1, 0)}
    assert {(e["partition"], e["worker"]) for e in timeline.of("synthesis")} == {(0, 0), (1, 1)}  # by address
    assert {e["job"] for e in timeline.events if "job" in e} == {"porep"}
    assert [(d["id"], d["worker"]) for d in timeline.header["devices"]] == [(0, "tcp://b"), (1, "tcp://a")]
    workers = timeline.header["config"]["cluster"]["workers"]
    assert [(w["address"], w["offset_ns"], w["clock_error_ms"]) for w in workers] == [
        ("tcp://a", 5000 * MS, 1.0), ("tcp://b", -2000 * MS, 2.0)]


def test_analysed_like_one_host(merged):
    _, timeline = merged
    whole = analysis.analyze(timeline, "whole")
    assert [d.device for d in whole.devices] == [0, 1] and whole.done == 2 and whole.balance.workers == 2
    assert [p.kernel_ms for p in whole.partitions] == [2.0, 2.0]


def test_nothing_of_the_jobs(tmp_path):
    worker = _worker("tcp://a", 0, {}, [])
    with pytest.raises(ValueError, match="no timeline events"):
        merge(tmp_path / "m.jsonl", [worker], {"tcp://a": Offset(0, 1)}, lambda a, d: d, "me", ["porep"])
