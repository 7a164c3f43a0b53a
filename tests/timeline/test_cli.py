"""``numba-cuzk timeline``: figures as tables or JSON, a PNG on request, exit 2 and one
line on stderr for a user error."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from numba_cuzk.cli import app
from numba_cuzk.events import TimelineWriter

from .synthetic import CUZK, Pipeline, write

runner = CliRunner()


@pytest.fixture
def timeline(tmp_path) -> Path:
    path = tmp_path / "t.jsonl"
    with TimelineWriter(path) as writer:
        write(CUZK, writer)
    return path


def test_tables(timeline):
    result = runner.invoke(app, ["timeline", str(timeline)])
    assert result.exit_code == 0, result.output
    assert "GPU utilization, whole window" in result.stdout and "Balance" in result.stdout


def test_json_and_png(timeline, tmp_path):
    png = tmp_path / "t.png"
    result = runner.invoke(app, ["timeline", str(timeline), "--json", "--window", "steady", "--png", str(png)])
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["file"] == str(timeline) and report["window"]["name"] == "steady" and report["warnings"] == []
    assert report["utilization"]["all"]["bracket_pct"] == 90 and report["utilization"]["all"]["busy_pct"] == 50
    assert png.read_bytes().startswith(b"\x89PNG")


def test_warnings_go_to_stderr_and_json(timeline):
    timeline.write_text(timeline.read_text() + '{"event": "gpu_melted", "t_ms": 1}\n{"event": "do')
    result = runner.invoke(app, ["timeline", str(timeline), "--json"])
    assert result.exit_code == 0, result.output
    warnings = json.loads(result.stdout)["warnings"]
    assert len(warnings) == 2 and "unknown event 'gpu_melted'" in warnings[0] and "truncated" in warnings[1]
    assert result.stderr.count("warning: ") == 2


@pytest.mark.parametrize(("args", "message"), [
    (["--window", "warm"], "'warm' is not one of whole, steady"),
    (["--png", "/nonexistent/dir/t.png"], "cannot write"),
])
def test_bad_options_exit_2(timeline, args, message):
    result = runner.invoke(app, ["timeline", str(timeline), *args])
    assert result.exit_code == 2 and message in result.output


def test_no_steady_state_exits_2(tmp_path):
    path = tmp_path / "two.jsonl"
    with TimelineWriter(path) as writer:
        write(Pipeline(partitions=2, synth_ms=10), writer)
    result = runner.invoke(app, ["timeline", str(path), "--window", "steady"])
    assert result.exit_code == 2 and "no steady state" in result.output


@pytest.mark.parametrize("content", [None, "not a timeline\n"])
def test_missing_or_foreign_file_is_one_line_exit_2(tmp_path, content):
    path = tmp_path / "x.jsonl"
    if content is not None:
        path.write_text(content)
    proc = subprocess.run([sys.executable, "-m", "numba_cuzk.cli", "timeline", str(path)], capture_output=True,
                          text=True, timeout=120, cwd=Path(__file__).resolve().parents[2])
    assert proc.returncode == 2 and proc.stderr.startswith("error: ") and proc.stderr.count("\n") == 1
    assert ("x.jsonl: no such timeline" if content is None else "not a numba-cuzk timeline") in proc.stderr
