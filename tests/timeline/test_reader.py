"""The reader takes what it can from a damaged timeline, warning about the rest, and
refuses a file that is not a timeline."""

from __future__ import annotations

import json

import pytest

from numba_cuzk.events import TimelineWriter
from numba_cuzk.timeline.analysis import analyze
from numba_cuzk.timeline.reader import TimelineWarning, read

from .synthetic import CUZK, write


@pytest.fixture
def good(tmp_path):
    path = tmp_path / "good.jsonl"
    with TimelineWriter(path) as writer:
        write(CUZK, writer)
    return path


def test_reads_every_event(good):
    timeline = read(good)
    assert timeline.header["format"] == "numba-cuzk-timeline"
    assert len(timeline.events) == len(good.read_text().splitlines()) - 1
    assert len(timeline.of("kernel")) == 2 * CUZK.partitions


def test_truncated_last_line_is_dropped_with_a_warning(good):
    whole = len(read(good).events)
    good.write_text(good.read_text()[:-15])  # killed mid-line: no final newline
    with pytest.warns(TimelineWarning, match="truncated last line"):
        timeline = read(good)
    assert len(timeline.events) == whole - 1
    analyze(timeline, "steady")


@pytest.mark.parametrize(("line", "warning"), [
    ('{"event": "gpu_melted", "t_ms": 5}', "unknown event 'gpu_melted'"),
    ('{"event": "kernel", "t_ms": 5, "end_ms": 6}', "'kernel' event without job, partition, device, phase"),
    ('{"event": "sync", "t_ms": 5, "end_ms": 4, "device": 0}', "'sync' interval without a valid end_ms"),
    ('{"event": "done", "t_ms": "soon", "job": "j", "partition": 0}', "not an event"),
    ("[1, 2, 3]", "not an event"),
    ("{not json", "line is not JSON"),
])
def test_bad_lines_are_skipped_with_a_warning(good, line, warning):
    lines = good.read_text().splitlines()
    good.write_text("\n".join(lines[:5] + [line] + lines[5:]) + "\n")
    with pytest.warns(TimelineWarning, match=warning) as caught:
        timeline = read(good)
    assert len(caught) == 1 and "line 6" in str(caught[0].message)
    assert len(timeline.events) == len(lines) - 1


def test_newer_format_is_read_with_a_warning(good):
    lines = good.read_text().splitlines()
    header = {**json.loads(lines[0]), "version": 2}
    good.write_text("\n".join([json.dumps(header), *lines[1:]]) + "\n")
    with pytest.warns(TimelineWarning, match="version 2"):
        assert len(read(good).events) == len(lines) - 1


@pytest.mark.parametrize("content", [
    "",
    "# numba-cuzk\n\nA Groth16 prover.\n",
    '{"format": "chrome-trace", "version": 1}\n{"event": "done", "t_ms": 1}\n',
    '[{"event": "done", "t_ms": 1}]\n',
    "\x00\x01\xff\xfe binary",
])
def test_not_a_timeline_is_refused(tmp_path, content):
    path = tmp_path / "other.jsonl"
    path.write_text(content, encoding="latin-1")
    with pytest.raises(ValueError, match="is not a numba-cuzk timeline"):
        read(path)
