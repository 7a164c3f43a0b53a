"""``numba-cuzk run`` end to end on the CPU backend, and its exit codes: 0 every proof
verifies, 1 a partition failed, 2 bad input (one line, no traceback)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from typer.testing import CliRunner

from numba_cuzk.cli import app
from numba_cuzk.engine import workload
from numba_cuzk.groth16.formats import read_proof_json, write_wtns
from tests.engine.conftest import witness
from tests.engine.keys import KEY_CIRCUIT, KEY_LOG, KEY_PATH

runner = CliRunner()
FAST = ["--synthesis", "thread", "--workers", "2", "--cpu"]


@pytest.fixture
def witness_dir(tmp_path):
    folder = tmp_path / "witnesses"
    folder.mkdir()
    for seed in range(3):
        write_wtns(folder / f"p{seed}.wtns", witness(seed))
    return folder


def _run(*args: str):
    return runner.invoke(app, ["run", *FAST, *args])


def test_run_files_json(tmp_path, witness_dir):
    timeline = tmp_path / "t.jsonl"
    result = _run("--zkey", str(KEY_PATH), "--witness-dir", str(witness_dir), "--trusted", "--out",
                  str(tmp_path / "out"), "--timeline", str(timeline), "--json")
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    (job,) = report["jobs"]
    assert report["ok"] and job["ok"] and [p["partition"] for p in job["partitions"]] == [0, 1, 2]
    assert all(p["verified"] for p in job["partitions"]) and report["s_per_proof"] > 0
    assert report["utilization"]["window"]["name"] == "steady"  # 3 partitions on the one device
    assert report["utilization"]["done"] == 3 and report["utilization"]["utilization"]["all"]["busy_pct"] > 0
    assert timeline.exists()
    assert read_proof_json(tmp_path / "out" / "job-0" / "partition-002.proof.json")


def test_run_circuit_table(monkeypatch):
    from numba_cuzk.groth16.formats import read_zkey

    # The stored key is this circuit's: skip setup's kernel compilation (tested in groth16).
    monkeypatch.setattr(workload, "setup", lambda r1cs, gpu: read_zkey(KEY_PATH, trusted=True))
    result = _run("--circuit", KEY_CIRCUIT, "-k", str(KEY_LOG), "--partitions", "2", "--jobs", "2")
    assert result.exit_code == 0, result.output
    assert result.stdout.count("verified") == 4 and "2 of 2 proofs" in result.stdout
    assert "s/proof" in result.stdout and "proofs/hour" in result.stdout
    assert "GPU over the steady window" in result.stdout  # 4 partitions on the one device


def test_run_failed_partition_exits_1(witness_dir):
    bad = witness(7)
    bad[0, 5] ^= 1  # no longer satisfies the circuit
    write_wtns(witness_dir / "p1.wtns", bad)
    result = _run("--zkey", str(KEY_PATH), "--witness-dir", str(witness_dir), "--trusted", "--json")
    assert result.exit_code == 1, result.output
    (job,) = json.loads(result.stdout)["jobs"]
    assert not job["ok"] and "partition 1 failed in epilogue" in job["error"]


@pytest.mark.parametrize("args", [
    ["--circuit", "sha"],
    ["--zkey", "missing.zkey", "--witness-dir", "."],
    ["--zkey", str(KEY_PATH)],
    ["--synthesis", "fork"],
    ["--trace", "everything"],
])
def test_run_bad_input_exits_2(args):
    result = runner.invoke(app, ["run", *args])
    assert result.exit_code == 2, result.output


def test_bad_input_is_one_line():
    proc = subprocess.run([sys.executable, "-m", "numba_cuzk.cli", "run", "--circuit", "sha"],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2
    assert proc.stderr.strip().count("\n") == 0 and proc.stderr.startswith("error:") and "sha" in proc.stderr
