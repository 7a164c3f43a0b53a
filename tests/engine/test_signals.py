"""Signals: SIGTERM drains a run as Ctrl-C does (exit 130, the proofs in flight kept,
nothing left in shared memory); a SIGKILLed engine's synthesis processes exit on their
own, so multiprocessing's resource tracker can unlink the pool's semaphores, and its
witness files are removed by the next pool."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from numba_cuzk.engine.synthesis import SHARED_DIR, SHARED_PREFIX, SynthesisPool
from numba_cuzk.groth16.formats import write_wtns
from tests.engine.conftest import witness
from tests.engine.keys import KEY_PATH

ROOT = Path(__file__).resolve().parents[2]
ENV = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]), "NUMBA_ENABLE_CUDASIM": "1"}


def _children(pid: int) -> set[int]:
    found = set()
    for task in Path(f"/proc/{pid}/task").iterdir():
        found.update(int(c) for c in (task / "children").read_text().split())
    return found


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return Path(f"/proc/{pid}").exists() and "Z" not in Path(f"/proc/{pid}/stat").read_text().split()[2]


def _wait_gone(pids: set[int], timeout_s: float) -> set[int]:
    deadline = time.monotonic() + timeout_s
    while (alive := {p for p in pids if _alive(p)}) and time.monotonic() < deadline:
        time.sleep(0.2)
    return alive


WITNESSES = 120


def test_sigterm_drains_a_run(tmp_path):
    folder = tmp_path / "witnesses"
    folder.mkdir()
    # enough witnesses that, with the kernels cached (a proof in tens of ms), the run is
    # still proving when the first proof appears
    for seed in range(WITNESSES):
        write_wtns(folder / f"p{seed:03d}.wtns", witness(seed))
    out = tmp_path / "out"
    proc = subprocess.Popen([sys.executable, "-m", "numba_cuzk.cli", "run", "--cpu", "--synthesis", "process",
                             "--workers", "1", "--gpu-workers", "1", "--trusted", "--zkey", str(KEY_PATH),
                             "--witness-dir", str(folder), "--out", str(out)],
                            cwd=ROOT, env=ENV, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 600
    while not list(out.glob("*/*.proof.json")) and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.02)
    children = _children(proc.pid)
    proc.send_signal(signal.SIGTERM)
    _, stderr = proc.communicate(timeout=300)
    assert proc.returncode == 130, stderr
    assert "interrupted: finishing the partitions in flight" in stderr
    assert 1 <= len(list(out.glob("*/*.proof.json"))) < WITNESSES  # in flight finished, the rest not started
    assert not _wait_gone(children, 10)
    assert not [n for n in os.listdir(SHARED_DIR) if n.startswith(f"{SHARED_PREFIX}{proc.pid}-")]


def test_a_killed_engines_workers_exit_and_its_files_go(tmp_path):
    script = ("import functools, time\nfrom numba_cuzk.engine.synthesis import SynthesisPool\n"
              "pool = SynthesisPool('process', 2)\n"
              "pool.submit(functools.partial(time.sleep, 0)).result()\n"
              "print('ready', flush=True)\ntime.sleep(600)\n")
    proc = subprocess.Popen([sys.executable, "-c", script], cwd=ROOT, env=ENV, stdout=subprocess.PIPE, text=True)
    assert proc.stdout.readline().strip() == "ready"
    children = _children(proc.pid)
    assert children
    orphan = Path(SHARED_DIR) / f"{SHARED_PREFIX}{proc.pid}-deadbeef-1-x.npy"  # as a killed writer leaves it
    orphan.write_bytes(b"partial")
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=30)
    assert not _wait_gone(children, 10), "synthesis processes outlived their engine"
    SynthesisPool("thread", 1).shutdown()
    assert orphan.exists()  # a thread pool sweeps nothing
    pool = SynthesisPool("process", 1)
    pool.shutdown()
    assert not orphan.exists()
