"""Reports and the PNG: the dict is JSON with every figure, the tables and the short form
print, the Gantt chart is a non-empty PNG."""

from __future__ import annotations

import json

from rich.console import Console

from numba_cuzk.events import TimelineWriter
from numba_cuzk.timeline import plot, report
from numba_cuzk.timeline.analysis import CAUSES, analyze
from numba_cuzk.timeline.reader import read

from .synthetic import CUZK, Pipeline, analysed, write


def test_dict_is_json_with_every_figure(tmp_path):
    d = json.loads(json.dumps(report.to_dict(analysed(tmp_path / "t.jsonl", CUZK))))
    assert d["window"] == {"name": "steady", "start_ms": 145, "end_ms": 945, "span_ms": 800}
    assert d["utilization"]["all"]["bracket_pct"] == 90 and d["utilization"]["all"]["busy_pct"] == 50
    assert d["gaps"]["priority"] == list(CAUSES)
    assert d["gaps"]["pct_of_span"]["sync"] == 40 and d["gaps"]["per_partition_ms"]["sync"] == 40
    assert {"synthesis_ms", "kernel_ms", "workers", "workers_needed", "queue_mean", "queue_max"} <= set(d["balance"])
    assert d["balance"]["starvation"]["episodes"] == 0
    assert [p["phase"] for p in d["kernels"]["phases"]] == ["phase1", "phase3"]
    assert len(d["partitions"]) == 8 and (d["done"], d["failed"]) == (10, 0)


def test_tables_and_short_form(tmp_path):
    a = analysed(tmp_path / "t.jsonl", Pipeline(partitions=6, synth_ms=300))
    console = Console(record=True, width=250)
    for table in report.tables(a):
        console.print(table)
    text = console.export_text()
    assert "device busy, phases %" in text and "starvation" in text and "Kernel efficiency" in text
    assert "Kernels (CUPTI)" not in text and "launch gaps" not in text
    lines = report.short(a).splitlines()
    assert len(lines) == 3
    assert "device busy 33.3% (phases)" in lines[0] and "host brackets 33.3%" in lines[0]
    assert "starvation 66.7%" in lines[1]
    assert "synthesis 300.0 ms vs GPU kernels 100.0 ms" in lines[2] and "to keep the GPU fed 3" in lines[2]


def test_gantt_png(tmp_path):
    path = tmp_path / "t.jsonl"
    with TimelineWriter(path) as w:
        write(CUZK, w, job="a", device=0)
        write(Pipeline(partitions=5, synth_ms=200, workers=2, records=((0, 60, 7), (30, 60, 9))), w, job="b", device=1)
        for k in range(100):
            w.instant("nvml", at_ms=10.0 * k, device=k % 2, util_pct=k % 100, mem_used_bytes=k)
    timeline = read(path)
    png = tmp_path / "t.png"
    plot.gantt(timeline, analyze(timeline, "whole"), png)
    data = png.read_bytes()
    assert data.startswith(b"\x89PNG\r\n\x1a\n") and len(data) > 10_000


def test_streamed_key_copies_are_drawn_and_not_counted_busy(tmp_path):
    """The engine records a streamed query's copies as ``transfer`` device intervals: a lane
    of their own in the picture, and idle time (not kernel time) in the busy figure."""
    path = tmp_path / "t.jsonl"
    with TimelineWriter(path) as w:
        write(Pipeline(partitions=4, synth_ms=10, steps=(("kernel", 50.0), ("transfer", 50.0))), w)
    timeline = read(path)
    assert len(timeline.of("transfer")) == 4
    a = analyze(timeline, "whole")
    (d,) = a.devices
    assert d.busy_pct < 60, d
    plot.gantt(timeline, a, tmp_path / "t.png")
    assert (tmp_path / "t.png").read_bytes().startswith(b"\x89PNG")


def test_tables_and_short_form_with_kernel_records(tmp_path):
    a = analysed(tmp_path / "t.jsonl", Pipeline(partitions=6, synth_ms=50, records=((0, 40, 7), (60, 40, 7))))
    console = Console(record=True, width=250)
    for table in report.tables(a):
        console.print(table)
    text = console.export_text()
    assert "Kernels (CUPTI), 2 launches per partition" in text and "k7" in text and "no markers" in text
    assert "launch gaps inside phases %" in text
    lines = report.short(a).splitlines()
    assert "device busy 80.0% (kernel records; phases 100.0%, launch gaps inside phases 20.0%)" in lines[0]
    assert "phase_gap 20.0%" in lines[1]
    d = json.loads(json.dumps(report.to_dict(a)))
    assert d["utilization"]["all"]["kernel_busy_pct"] == 80 and d["kernels"]["launches_per_partition"] == 2
    assert d["kernels"]["records"] == [{"name": "k7", "launches": 8, "device_ms": 320, "mean_us": 40_000}]


def test_every_idle_cause_has_its_color():
    assert set(plot.CAUSE_COLORS) == set(CAUSES) and len(set(plot.CAUSE_COLORS.values())) == len(CAUSES)
