"""The timeline schema and its writer: the documented table is the code's table, the
header identifies the file, bad events are refused, threads never interleave lines."""

from __future__ import annotations

import json
import os
import re
import threading

import pytest

from numba_cuzk import events
from numba_cuzk.events import EVENTS, TimelineWriter


def documented_table() -> dict[str, tuple[str, tuple[str, ...], tuple[str, ...]]]:
    """The module docstring's table: event -> (kind, fields, optional)."""
    lines = events.__doc__.splitlines()
    rules = [i for i, line in enumerate(lines) if line.startswith("=====")]
    columns = [(m.start(), m.end()) for m in re.finditer("=+", lines[rules[0]])]
    rows = {}
    for line in lines[rules[1] + 1:rules[2]]:
        name, kind, fields, optional = (line[a:b + 1].strip() for a, b in columns[:4])
        rows[name] = (kind, tuple(fields.split()), tuple(optional.split()))
    return rows


def test_docstring_table_is_the_schema():
    assert documented_table() == {name: (s.kind, s.required, s.optional) for name, s in EVENTS.items()}


def test_header_identifies_the_file(tmp_path):
    path = tmp_path / "t.jsonl"
    with TimelineWriter(path, devices=[{"id": 0, "name": "NVIDIA H200"}], config={"nvml_period_ms": 100}):
        pass
    header = json.loads(path.read_text().splitlines()[0])
    assert header["format"] == events.FORMAT and header["version"] == events.VERSION
    assert header["pid"] == os.getpid() and header["host"] and header["start_unix_s"] > 1.6e9
    assert header["devices"] == [{"id": 0, "name": "NVIDIA H200"}] and header["config"]["nvml_period_ms"] == 100


def test_events_round_trip(tmp_path):
    path = tmp_path / "t.jsonl"
    with TimelineWriter(path) as w:
        w.instant("queued", at_ms=1.23456, job="j", partition=0)
        w.interval("synthesis", 0.5, 1.0, job="j", partition=0, worker=3)
        w.kernel("ntt_h", 2.0, 3.5, job="j", partition=0, device=0, fr_muls=1000)
        with w.span("sync", device=0):
            pass
    lines = [json.loads(line) for line in path.read_text().splitlines()[1:]]
    assert lines[0] == {"event": "queued", "t_ms": 1.235, "job": "j", "partition": 0}
    assert lines[1] == {"event": "synthesis", "t_ms": 0.5, "end_ms": 1.0, "job": "j", "partition": 0, "worker": 3}
    assert lines[2] == {"event": "kernel", "t_ms": 2.0, "end_ms": 3.5, "job": "j", "partition": 0, "device": 0,
                        "phase": "ntt_h", "fr_muls": 1000}
    assert lines[3]["event"] == "sync" and 0 <= lines[3]["t_ms"] <= lines[3]["end_ms"]


def test_span_is_written_when_the_body_raises(tmp_path):
    path = tmp_path / "t.jsonl"
    with TimelineWriter(path) as w, pytest.raises(RuntimeError):
        with w.span("lock_wait", job="j", partition=0, device=0, gpu_worker=0):
            raise RuntimeError("boom")
    assert json.loads(path.read_text().splitlines()[1])["event"] == "lock_wait"


@pytest.mark.parametrize(("call", "message"), [
    (lambda w: w.instant("gpu_start", job="j", partition=0), "unknown timeline event"),
    (lambda w: w.instant("done", job="j"), "missing fields \\['partition'\\]"),
    (lambda w: w.instant("done", job="j", partition=0, colour="red"), "unknown fields \\['colour'\\]"),
    (lambda w: w.instant("synthesis", job="j", partition=0, worker=0), "is a interval event"),
    (lambda w: w.interval("kernel", 0, 1, job="j", partition=0, device=0, phase="x"), "is a device event"),
    (lambda w: w.interval("sync", 2, 1, device=0), "ends before it starts"),
])
def test_writer_refuses_bad_events(tmp_path, call, message):
    with TimelineWriter(tmp_path / "t.jsonl") as w, pytest.raises(ValueError, match=message):
        call(w)


def test_threads_write_whole_lines(tmp_path):
    path = tmp_path / "t.jsonl"
    threads, each = 8, 300
    with TimelineWriter(path) as w:
        def work(worker: int) -> None:
            for i in range(each):
                w.instant("nvml", device=worker, util_pct=i % 101, mem_used_bytes=i)

        pool = [threading.Thread(target=work, args=(k,)) for k in range(threads)]
        for t in pool:
            t.start()
        for t in pool:
            t.join()
    records = [json.loads(line) for line in path.read_text().splitlines()[1:]]
    assert len(records) == threads * each
    assert all(sum(r["device"] == k for r in records) == each for k in range(threads))
