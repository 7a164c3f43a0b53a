"""The per-test time limit of tests/conftest.py: a test that hangs ends the run with every
thread's stack printed, rather than holding CI until its own timeout."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

HANGS = """
import threading

def test_waits_for_a_lock_never_released():
    lock = threading.Lock()
    lock.acquire()
    lock.acquire()

def test_never_reached():
    pass
"""


def test_a_hung_test_ends_the_run_with_its_stack(tmp_path):
    (tmp_path / "test_hangs.py").write_text(HANGS)
    env = {**os.environ, "NUMBA_CUZK_TEST_LIMIT_S": "2", "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "tests.conftest", "-p", "no:cacheprovider",
                           str(tmp_path / "test_hangs.py")], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 3, done.stdout + done.stderr
    assert "test_waits_for_a_lock_never_released ran past 2 s" in done.stderr
    assert 'test_hangs.py", line 7 in test_waits_for_a_lock_never_released' in done.stderr  # where it hangs
    assert "passed" not in done.stdout  # the run ended there: no second test, no summary
