""".ci/run: it runs README's Quick start test command, and under CI=true it cannot pass
without the outside judge (circom/snarkjs from npm)."""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import pytest

import tests.conftest as test_setup

REPO = Path(__file__).resolve().parents[1]
CI_RUN = REPO / ".ci" / "run"


def quick_start_test_command() -> str:
    """The command of README's "Run the tests." block."""
    readme = (REPO / "README.md").read_text()
    found = re.search(r"Run the tests\..*?```sh\n(.*?)\n```", readme, re.S)
    assert found, "README.md: no sh block after 'Run the tests.'"
    return found.group(1)


def test_ci_runs_the_quick_start_test_command():
    lines = CI_RUN.read_text().splitlines()
    assert quick_start_test_command() + " || status=$?" in lines


def test_ci_fails_without_npm_packages(tmp_path):
    """A failing `npm ci` under CI=true stops the run, naming why, before any test runs."""
    (tmp_path / "npm").write_text("#!/bin/sh\necho 'npm: offline' >&2\nexit 1\n")
    (tmp_path / "npm").chmod(0o755)
    env = {**os.environ, "CI": "true", "PATH": f"{tmp_path}:{os.environ['PATH']}"}
    run = subprocess.run(["bash", str(CI_RUN)], env=env, capture_output=True, text=True, timeout=60)
    assert run.returncode == 1
    assert "CI=true and npm ci --prefix .ci/node failed" in run.stderr
    assert "pip" not in run.stdout + run.stderr and "passed" not in run.stdout


@pytest.mark.parametrize(("in_ci", "outcome"), [(True, pytest.fail.Exception), (False, pytest.skip.Exception)])
def test_missing_outside_judge_fails_only_in_ci(monkeypatch, in_ci, outcome):
    monkeypatch.setattr(test_setup, "IN_CI", in_ci)
    with pytest.raises(outcome, match="circom/snarkjs interop NOT TESTED: no node"):
        test_setup.outside_judge_missing("no node")
