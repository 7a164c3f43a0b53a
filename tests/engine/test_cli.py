"""``numba-cuzk run`` end to end on the CPU backend, and its exit codes: 0 every proof
verifies, 1 a partition failed, 2 bad input (one line, no traceback)."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from functools import partial
from pathlib import Path

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
    assert [j["job"] for j in report["jobs"]] == ["p0", "p1", "p2"]  # each witness a job of its own
    assert report["ok"] and report["proofs"] == report["partitions"] == 3 and not report["failures"]
    assert all(p["verified"] for j in report["jobs"] for p in j["partitions"]) and report["s_per_proof"] > 0
    assert report["utilization"]["window"]["name"] == "steady"  # 3 partitions on the one device
    assert report["utilization"]["done"] == 3 and report["utilization"]["utilization"]["all"]["busy_pct"] > 0
    assert timeline.exists()
    assert read_proof_json(tmp_path / "out" / "p2" / "partition-000.proof.json")


def test_run_circuit_table(monkeypatch):
    from numba_cuzk.groth16.formats import read_zkey

    # The stored key is this circuit's: skip setup's kernel compilation (tested in groth16).
    monkeypatch.setattr(workload, "setup", lambda r1cs, gpu: read_zkey(KEY_PATH, trusted=True))
    result = _run("--circuit", KEY_CIRCUIT, "-k", str(KEY_LOG), "--partitions", "2", "--jobs", "2")
    assert result.exit_code == 0, result.output
    # proofs are counted, not jobs; the CPU backend claims no GPU figures
    assert result.stdout.count("verified") == 4 and "4 of 4 proofs in 2 jobs" in result.stdout
    assert "s/proof" in result.stdout and "proofs/hour" in result.stdout
    assert "GPU over" not in result.stdout and "device busy" not in result.stdout


def test_one_bad_witness_fails_only_its_proof(tmp_path, witness_dir):
    """One corrupt witness of four: the other three are proved, the summary names the file,
    exit 1."""
    bad = witness(7)
    bad[0, 5] ^= 1  # no longer satisfies the circuit
    write_wtns(witness_dir / "p1.wtns", bad)
    (witness_dir / "p3.wtns").write_bytes((witness_dir / "p0.wtns").read_bytes()[:-5])  # truncated
    result = _run("--zkey", str(KEY_PATH), "--witness-dir", str(witness_dir), "--trusted", "--json",
                  "--out", str(tmp_path / "out"))
    assert result.exit_code == 1, result.output
    report = json.loads(result.stdout)
    assert report["proofs"] == 2 and report["partitions"] == 4
    by_job = {j["job"]: j for j in report["jobs"]}
    assert by_job["p0"]["ok"] and by_job["p2"]["ok"] and not by_job["p1"]["ok"] and not by_job["p3"]["ok"]
    failures = {f["job"]: f for f in report["failures"]}
    assert failures["p1"]["file"].endswith("p1.wtns") and "does not verify" in failures["p1"]["error"]
    assert "--r1cs" in failures["p1"]["error"]  # how to tell the witness from the key
    assert failures["p3"]["file"].endswith("p3.wtns") and "p3.wtns" in failures["p3"]["error"]
    proofs = sorted(str(p.relative_to(tmp_path / "out")) for p in (tmp_path / "out").rglob("*.proof.json"))
    assert proofs == ["p0/partition-000.proof.json", "p2/partition-000.proof.json"]
    text = _run("--zkey", str(KEY_PATH), "--witness-dir", str(witness_dir), "--trusted")
    assert text.exit_code == 1 and "p1.wtns" in text.stdout and "p3.wtns" in text.stdout


def test_rerun_resumes_a_failed_job(tmp_path, monkeypatch):
    """A job of three partitions whose partition 2 fails once partition 0 is proved: the
    proved ones are kept under --out, and the rerun proves only the rest."""
    from numba_cuzk.commands import batch
    from numba_cuzk.groth16.formats import read_zkey

    monkeypatch.setattr(workload, "setup", lambda r1cs, gpu: read_zkey(KEY_PATH, trusted=True))
    real = batch.circuit_partitions
    broken = partial(_broken_after_first, tmp_path / "job-0" / "partition-000.proof.json")
    monkeypatch.setattr(batch, "circuit_partitions", lambda *a: [[*real(*a)[0][:2], broken]])
    args = ["--circuit", KEY_CIRCUIT, "-k", str(KEY_LOG), "--partitions", "3", "--out", str(tmp_path), "--json"]
    first = _run(*args)
    assert first.exit_code == 1, first.output
    report = json.loads(first.stdout)
    kept = [p["partition"] for p in report["jobs"][0]["partitions"]]
    assert 0 in kept and 2 not in kept
    (failure,) = report["failures"]
    assert failure["partition"] == 2 and "RuntimeError: synthesis broke" in failure["error"]
    monkeypatch.setattr(batch, "circuit_partitions", real)
    second = _run(*args)
    assert second.exit_code == 0, second.output
    report = json.loads(second.stdout)
    assert report["resumed"] == len(kept) and report["proofs"] == 3 - len(kept)
    assert sorted(p.name for p in (tmp_path / "job-0").glob("*.proof.json")) == [
        f"partition-00{i}.proof.json" for i in range(3)]


def _broken_after_first(first_proof: Path):
    deadline = time.monotonic() + 300
    while not first_proof.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    raise RuntimeError("synthesis broke")


@pytest.mark.parametrize(("args", "named"), [
    (["--circuit", "sha"], "sha"),
    (["--zkey", "missing.zkey", "--witness-dir", "."], "missing.zkey"),
    (["--zkey", str(KEY_PATH)], "--witness-dir"),
    (["--zkey", str(KEY_PATH), "--witness-dir", "no-such-folder"], "no-such-folder: no such witness folder"),
    (["--synthesis", "fork"], "fork"),
    (["--trace", "everything"], "everything"),
])
def test_run_bad_input_exits_2(args, named):
    result = runner.invoke(app, ["run", *args])
    assert result.exit_code == 2, result.output
    assert named in result.output


def test_unreachable_scheduler_is_refused_before_setup(monkeypatch):
    from numba_cuzk.cluster import batch

    monkeypatch.setattr(batch, "CONNECT_TIMEOUT", "1s")  # Dask retries a refused connection until then (20 s)
    monkeypatch.setattr(workload, "setup", lambda *a, **k: pytest.fail("set up before reaching the scheduler"))
    result = runner.invoke(app, ["run", "--scheduler", "tcp://127.0.0.1:9", "--circuit", KEY_CIRCUIT, "-k",
                                 str(KEY_LOG)])
    assert result.exit_code == 2 and "tcp://127.0.0.1:9: cannot reach the scheduler" in result.output


def test_unwritable_out_is_refused_first(tmp_path, witness_dir):
    """--out under a file, or on a read-only filesystem (/proc takes no new files, even
    from root): one line, exit 2, before any proof."""
    file = tmp_path / "file"
    file.write_text("")
    for out in (file / "sub", Path("/proc/numba-cuzk-out")):
        result = _run("--zkey", str(KEY_PATH), "--witness-dir", str(witness_dir), "--out", str(out))
        assert result.exit_code == 2, result.output
        assert str(out) in result.output and "Traceback" not in result.output


def test_witness_of_the_wrong_size_is_refused_before_the_key_is_read(tmp_path, witness_dir, monkeypatch):
    from numba_cuzk.commands import batch

    write_wtns(witness_dir / "p1.wtns", witness(1)[:, :-1])
    monkeypatch.setattr(batch, "read_zkey", lambda *a, **k: pytest.fail("the key was read"))
    (witness_dir / "p0.wtns").unlink()
    (witness_dir / "p2.wtns").unlink()
    result = _run("--zkey", str(KEY_PATH), "--witness-dir", str(witness_dir), "--json")
    assert result.exit_code == 1, result.output
    (failure,) = json.loads(result.stdout)["failures"]
    assert failure["file"].endswith("p1.wtns") and "wires, the key" in failure["error"]


def test_bad_input_is_one_line():
    proc = subprocess.run([sys.executable, "-m", "numba_cuzk.cli", "run", "--circuit", "sha"],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2
    assert proc.stderr.strip().count("\n") == 0 and proc.stderr.startswith("error:") and "sha" in proc.stderr
