"""The command line: ``info --json`` reports what it promises; ``selfcheck`` passes on the CPU."""

from __future__ import annotations

import contextlib
import gc
import json
import subprocess
import sys
from pathlib import Path

from typer.testing import CliRunner

from numba_cuzk import backend
from numba_cuzk.field import adx
from numba_cuzk import cli
from numba_cuzk.cli import app

runner = CliRunner()


def test_info_json_keys():
    result = runner.invoke(app, ["info", "--json"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert {"numba_cuzk", "python", "numba", "numba_cuda", "numpy", "llvmlite", "cuda", "gpus", "backend"} <= set(report)
    assert set(report["cuda"]) == {"runtime", "nvvm", "driver", "toolkit_wheel"}
    assert report["backend"] == backend.backend_name() in {"cuda", "cuda-simulator", "cpu"}
    assert report["cpu_code"]["fq_product"] == ("adx" if adx.available() else "llvm")
    for gpu in report["gpus"]:
        assert {"id", "name", "compute_capability", "total_memory_bytes"} <= set(gpu)


def test_info_table():
    result = runner.invoke(app, ["info"])
    assert result.exit_code == 0, result.output
    assert "backend" in result.stdout and "numba-cuda" in result.stdout


def test_selfcheck_passes_on_cpu():
    # A few random elements keep it quick; the edge values 0, 1, p-1 are always checked.
    result = runner.invoke(app, ["selfcheck", "--count", "20"])
    assert result.exit_code == 0, result.output
    assert "FAIL" not in result.stdout and "passed" in result.stdout


def test_selfcheck_reports_failures(monkeypatch):
    from numba_cuzk.field import kernels

    def wrong_mul_sub(out, a, b, c, params, stream=None):
        out[:] = a  # a, not a*b - c

    def broken_batch_inverse(out, a, params, stream=None):
        raise RuntimeError("kernel launch failed")

    monkeypatch.setattr(kernels, "mul_sub", wrong_mul_sub)
    monkeypatch.setattr(kernels, "batch_inverse", broken_batch_inverse)
    result = runner.invoke(app, ["selfcheck", "--count", "0"])
    assert result.exit_code == 1, result.output
    assert "passed" not in result.stdout and "kernel launch failed" in result.stdout


def test_usage_error_is_one_line():
    # Through the real entry point: CliRunner bypasses the app's own error printing.
    proc = subprocess.run(
        [sys.executable, "-m", "numba_cuzk.cli", "selfcheck", "--count", "-1"],
        capture_output=True, text=True, timeout=120, cwd=Path(__file__).resolve().parents[1],
    )
    assert proc.returncode == 2
    assert proc.stderr.strip().count("\n") == 0 and proc.stderr.startswith("error: ")
    assert "Traceback" not in proc.stderr


def test_a_command_s_process_ends_with_its_code_output_and_atexit_callbacks(tmp_path):
    """The quick exit of a one-shot command (cli._exit: os._exit after atexit's callbacks
    and a flush) keeps the exit code, the buffered output and the callbacks, and skips the
    interpreter's teardown (an object's __del__ there); other commands end as usual; under
    cProfile it is the usual exit, so that the profile is written."""
    root = Path(__file__).resolve().parents[1]
    run = ["class Teardown:\n    def __del__(self): print('teardown')\nkept = Teardown()\n"
           "import atexit; atexit.register(print, 'atexit ran'); from numba_cuzk.cli import app; app()"]
    proc = subprocess.run([sys.executable, "-c", *run, "verify", "--vk", str(tmp_path / "missing.json")],
                          capture_output=True, text=True, timeout=120, cwd=root)
    assert proc.returncode == 2 and proc.stderr.startswith("error: ") and "missing.json" in proc.stderr
    assert proc.stdout == "atexit ran\n"
    proc = subprocess.run([sys.executable, "-c", *run, "info", "--json"], capture_output=True, text=True,
                          timeout=120, cwd=root)
    assert proc.returncode == 0 and proc.stdout.endswith("atexit ran\nteardown\n")
    profile = tmp_path / "cli.prof"
    proc = subprocess.run([sys.executable, "-m", "cProfile", "-o", str(profile), "-m", "numba_cuzk.cli", "verify",
                           "--vk", str(tmp_path / "missing.json")], capture_output=True, text=True, timeout=120,
                          cwd=root)
    assert "missing.json" in proc.stderr and profile.stat().st_size > 0  # (cProfile's own exit status is 0)


def test_a_prove_s_collector_is_off_until_its_first_step_then_on_with_the_imports_frozen():
    """cli._collector_after_imports: no collection among the imports' objects, then every
    later collection without them (frozen once), the step still called."""
    steps, frozen_before = [], gc.get_freeze_count()
    try:
        step = cli._collector_after_imports(lambda description: steps.append(description) or contextlib.nullcontext())
        assert not gc.isenabled()
        with step("reading"):
            pass
        frozen = gc.get_freeze_count()
        assert gc.isenabled() and frozen > frozen_before and steps == ["reading"]
        with step("proving"):
            pass
        assert gc.get_freeze_count() == frozen and steps == ["reading", "proving"]
    finally:
        gc.unfreeze()
        gc.enable()


def test_demo_proves_and_reports_phases():
    result = runner.invoke(app, ["demo", "-k", "6", "--proofs", "2", "--cpu", "--json"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.output[result.output.index("{"):])
    assert report["verified"] == [True, True] and report["backend"] == "cpu"
    assert report["constraints"] <= 64 - 1 - 1
    assert {"ntt", "msm_a", "msm_b2", "msm_h", "epilogue"} <= set(report["phases"][1])


def test_demo_rejects_unknown_circuit():
    result = runner.invoke(app, ["demo", "--circuit", "nope"])
    assert result.exit_code == 2 and "nope" in result.output
