"""A live timeline (a daemon's, TimelineWriter(live=True)) is at its own name while it is
written, and a reader following it sees whole lines only: never a torn event."""

from __future__ import annotations

import json
import threading
import warnings

from typer.testing import CliRunner

from numba_cuzk.cli import app
from numba_cuzk.events import TimelineWriter
from numba_cuzk.timeline.reader import TimelineWarning, read

from .synthetic import CUZK, write

LONG_ERROR = "x" * 20_000  # a line longer than the writer's buffers: written in more than one piece, if any


def test_live_file_is_at_its_name_from_the_start(tmp_path):
    path = tmp_path / "serve.timeline.jsonl"
    writer = TimelineWriter(path, [{"id": 0, "name": "cpu"}], live=True)
    assert writer.live_path == path
    assert read(path).events == []  # the header is whole before the name exists
    assert sorted(p.name for p in tmp_path.iterdir()) == [path.name]  # no temporary beside it
    write(CUZK, writer)
    so_far = len(read(path).events)
    assert so_far > 0
    writer.instant("done", job="late", partition=0)
    assert len(read(path).events) == so_far + 1  # each event readable as soon as it is recorded
    writer.close()
    assert len(read(path).events) == so_far + 1
    assert sorted(p.name for p in tmp_path.iterdir()) == [path.name]


def test_a_batch_timeline_appears_only_when_closed(tmp_path):
    path = tmp_path / "run.jsonl"
    with TimelineWriter(path) as writer:
        writer.instant("done", job="j", partition=0)
        assert not path.exists() and writer.live_path.exists()
    assert len(read(path).events) == 1


def test_reader_racing_the_writer_never_sees_a_torn_line(tmp_path):
    path = tmp_path / "live.jsonl"
    writer = TimelineWriter(path, live=True)
    events = 400
    stop = threading.Event()

    def produce():
        for k in range(events):
            if k % 7 == 0:
                writer.instant("cupti_unavailable", error=f"{k} {LONG_ERROR}")
            else:
                writer.interval("serve_step", k, k + 0.5, job=f"job-{k}", step="witness")
        stop.set()

    thread = threading.Thread(target=produce)
    thread.start()
    counts = []
    while not stop.is_set() or not counts or counts[-1] < events:
        text = path.read_text(encoding="utf-8")
        whole = text[:text.rfind("\n") + 1].splitlines()
        for line in whole:  # every line ended by a newline is a whole event
            json.loads(line)
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # the only tolerated warning: the line being written
            try:
                counts.append(len(read(path).events))
            except TimelineWarning as warning:
                assert "truncated last line (still being written" in str(warning)
                counts.append(counts[-1] if counts else 0)
    thread.join()
    writer.close()
    assert counts == sorted(counts) and counts[-1] == events
    assert [e["error"].split()[0] for e in read(path).of("cupti_unavailable")] == [
        str(k) for k in range(0, events, 7)]


def test_timeline_command_reads_a_growing_file(tmp_path):
    path = tmp_path / "serve.timeline.jsonl"
    with TimelineWriter(path, [{"id": 0, "name": "cpu"}], live=True) as writer:
        write(CUZK, writer)
        result = CliRunner().invoke(app, ["timeline", str(path), "--json", "--window", "steady"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["file"] == str(path) and report["warnings"] == []
    assert report["utilization"]["all"]["busy_pct"] == 50  # the closed file's figure (test_cli)
