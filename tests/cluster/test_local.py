"""``numba-cuzk cluster local`` starts a scheduler and its workers (processes, each with
the GPU resource; CPU workers here, where there is no GPU) and stops them on Ctrl-C."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
from pathlib import Path

from distributed import Client

from tests.engine.conftest import TIMEOUT_S

REPO = Path(__file__).resolve().parents[2]


def test_cluster_local_serves_until_interrupted():
    env = {**os.environ, "PYTHONUNBUFFERED": "1",
           "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")])}
    proc = subprocess.Popen([sys.executable, "-m", "numba_cuzk.cli", "cluster", "local", "--gpus", "2", "--port", "0"],
                            env=env, cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        first = proc.stdout.readline()
        address = re.fullmatch(r"scheduler (tcp://\S+)\n", first)
        assert address, first
        with Client(address.group(1), timeout=TIMEOUT_S) as client:
            client.wait_for_workers(2, timeout=TIMEOUT_S)
            workers = client.scheduler_info()["workers"].values()
            assert sorted(w["name"] for w in workers) == ["cpu0", "cpu1"]
            assert all(w["resources"] == {"GPU": 1} for w in workers)
        proc.send_signal(signal.SIGINT)
        assert proc.wait(TIMEOUT_S) == 0
    finally:
        proc.kill()
