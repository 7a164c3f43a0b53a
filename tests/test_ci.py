""".ci/run: it runs README's Quick start test command, and under CI=true it cannot pass
without the outside judge (circom/snarkjs from npm); every test the simulator skips is
marked gpu, so that one `pytest -m gpu` on a GPU runs them all."""

from __future__ import annotations

import ast
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


def _is_mark(node: ast.AST, name: str) -> bool:
    """``node`` is pytest.mark.<name>, or a call of it."""
    node = node.func if isinstance(node, ast.Call) else node
    return isinstance(node, ast.Attribute) and node.attr == name and ast.unparse(node.value) == "pytest.mark"


def gpu_only_without_gpu_mark(source: str) -> list[int]:
    """Lines of skipif(SIMULATOR, ...) marks whose test is not also marked gpu (in the same
    decorator list, pytestmark list or marks=[...], or by a module-wide pytestmark)."""
    tree = ast.parse(source)
    for node in tree.body:
        if (isinstance(node, ast.Assign) and [ast.unparse(t) for t in node.targets] == ["pytestmark"]
                and _is_mark(node.value, "gpu")):
            return []
    bad = []
    for node in ast.walk(tree):
        groups = []
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            groups.append(node.decorator_list)
        elif isinstance(node, (ast.List, ast.Tuple)):
            groups.append(node.elts)
        for marks in groups:
            for mark in marks:
                if (_is_mark(mark, "skipif") and mark.args and ast.unparse(mark.args[0]) == "SIMULATOR"
                        and not any(_is_mark(m, "gpu") for m in marks)):
                    bad.append(mark.lineno)
    return bad


def test_gpu_only_tests_are_marked_gpu():
    """A test skipped in the simulator runs only on a GPU: `pytest -m gpu` (bench/gpu_check.sh
    all) must collect it."""
    found = {str(p.relative_to(REPO)): gpu_only_without_gpu_mark(p.read_text()) for p in (REPO / "tests").rglob("*.py")}
    assert {path: lines for path, lines in found.items() if lines} == {}


@pytest.mark.parametrize(("source", "bad"), [
    ("@pytest.mark.gpu\n@pytest.mark.skipif(SIMULATOR, reason='x')\ndef test(): pass", []),
    ("@pytest.mark.skipif(SIMULATOR, reason='x')\ndef test(): pass", [1]),
    ("pytestmark = [pytest.mark.gpu, pytest.mark.skipif(SIMULATOR, reason='x')]", []),
    ("pytestmark = [pytest.mark.skipif(SIMULATOR, reason='x')]", [1]),
    ("P = [pytest.param(True, marks=[pytest.mark.skipif(\n    SIMULATOR, reason='x')])]", [1]),
    ("@pytest.mark.skipif(not SNARKJS, reason='x')\ndef test(): pass", []),
    ("pytestmark = pytest.mark.gpu\n@pytest.mark.skipif(SIMULATOR, reason='x')\ndef test(): pass", []),
    ("pytestmark = pytest.mark.slow\n@pytest.mark.skipif(SIMULATOR, reason='x')\ndef test(): pass", [2]),
])
def test_gpu_only_checker(source, bad):
    assert gpu_only_without_gpu_mark(source) == bad
