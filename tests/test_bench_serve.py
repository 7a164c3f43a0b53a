"""bench/serve_split.py: a client process's proof through the daemon as ordered steps that
add up to its wall time, from the client's marks and the daemon's timeline on one clock."""

from __future__ import annotations

import sys

import pytest

from bench import serve_split
from bench.serve import GRPC_FLOOR, run_alternating, steady_ms

T0 = 5_000_000_000  # the timeline's t0_ns
MS = 1_000_000


def _job_events() -> list[dict]:
    """A job's events as the daemon and its engine record them (ms since t0)."""
    def interval(name, start, end, **fields):
        return {"event": name, "t_ms": start, "end_ms": end, "job": "job-7", **fields}

    def instant(name, at, **fields):
        return {"event": name, "t_ms": at, "job": "job-7", **fields}

    return [interval("served", 100.0, 150.0, key="k", priority="normal", outcome="proved"),
            interval("serve_step", 100.0, 101.0, step="witness"),
            interval("synthesis", 101.5, 101.5, partition=0, worker=0), instant("queued", 102.0, partition=0),
            interval("staging", 102.1, 103.0, partition=0, device=0), instant("picked_up", 102.5, partition=0),
            interval("gpu_bracket", 102.6, 140.0, partition=0), interval("kernel", 103.0, 110.0, phase="msm_a"),
            interval("kernel", 110.0, 139.0, phase="msm_h"), interval("epilogue", 140.5, 147.5, partition=0),
            instant("done", 147.6, partition=0), interval("serve_step", 148.0, 149.0, step="answer"),
            interval("serve_step", 149.0, 150.0, step="reply")]


def test_steps_in_order_add_up_to_the_wall():
    marks = {"main": T0 + 20 * MS, "imported": T0 + 60 * MS, "sent": T0 + 95 * MS, "replied": T0 + 151 * MS,
             "written": T0 + 153 * MS}
    steps = serve_split.split_ms(T0, T0 + 160 * MS, marks, _job_events(), T0)
    assert list(steps) == ["python_start", "client_imports", "client_prepare", "request_in", "witness", "to_engine",
                           "engine_checks", "stage", "lock", "device", "to_epilogue", "epilogue", "to_answer",
                           "answer", "reply", "reply_out", "client_write", "client_exit"]
    assert steps["request_in"] == 5.0 and steps["device"] == 37.4 and steps["epilogue"] == 7.0
    assert steps["client_exit"] == 7.0 and sum(steps.values()) == pytest.approx(160.0)
    assert serve_split.sides_ms(steps) == {"client_process_ms": pytest.approx(104.0), "call_ms": pytest.approx(56.0)}
    assert serve_split.kernel_ms(_job_events()) == 36.0


def test_a_missing_moment_merges_its_step_into_the_next():
    events = [e for e in _job_events() if e["event"] not in ("queued", "picked_up")]
    steps = serve_split.split_ms(T0, T0 + 160 * MS, {"sent": T0 + 95 * MS}, events, T0)
    assert "engine_checks+stage+lock" in steps and "python_start+client_imports+client_prepare" in steps
    assert sum(steps.values()) == pytest.approx(160.0)


def test_median_steps_and_the_steady_rate():
    assert serve_split.median_steps([{"a": 1.0, "b": 5.0}, {"a": 3.0}, {"a": 2.0, "b": 7.0}]) == {"a": 2.0, "b": 6.0}
    assert steady_ms([30 * MS, 10 * MS, 20 * MS, 40 * MS]) == 10.0  # the first proof's fill is left out


def test_clients_alternate_with_the_grpc_floor(monkeypatch):
    """Each client process is followed by a `python -c "import grpc"` process, whose walls
    the latency records carry as python_grpc_ms (what the host charges any grpcio client)."""
    ran = []
    monkeypatch.setattr("bench.serve.GRPC_FLOOR", [sys.executable, "-c", "print('floor')"])
    monkeypatch.setattr("bench.serve.run_process", lambda cmd, cwd, json_out=False: ran.append((cmd[-1], json_out)))
    clients, floors = run_alternating([sys.executable, "-c", "client"], 2)
    assert ran == [("client", True), ("print('floor')", False)] * 2 and len(clients) == len(floors) == 2
    assert GRPC_FLOOR[1:] == ["-c", "import grpc"]
