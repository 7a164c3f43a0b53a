"""Fixtures of the daemon's tests: a daemon in this process (CPU backend, a temporary
socket) over the engine tests' stored key, and witness files of that key's circuit."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest

from numba_cuzk.engine import circuit_witness
from numba_cuzk.groth16.formats import write_wtns
from numba_cuzk.serve.client import ProverClient
from numba_cuzk.serve.server import ServeConfig, start
from tests.engine.keys import KEY_CIRCUIT, KEY_LOG, KEY_PATH


def witness_array(seed: int) -> np.ndarray:
    return circuit_witness(KEY_CIRCUIT, KEY_LOG, seed)


def wtns_bytes(witness: np.ndarray, folder: Path, name: str = "w.wtns") -> bytes:
    path = folder / name
    write_wtns(path, witness)
    return path.read_bytes()


class Running:
    """A daemon started in this process: its address, the gRPC server, the Daemon."""

    def __init__(self, folder: Path, **config) -> None:
        self.socket = folder / "serve.sock"
        self.address = f"unix:{self.socket}"
        self.server, self.daemon = start(ServeConfig(listen=self.address, cpu=True,
                                                     timeline=str(folder / "timeline.jsonl"), **config))

    def client(self, **kwargs) -> ProverClient:
        return ProverClient(self.address, **kwargs)

    def stop(self) -> None:
        self.daemon.close()
        self.server.stop(1).wait()


@pytest.fixture(scope="module")
def daemon(tmp_path_factory):
    folder = tmp_path_factory.mktemp("daemon")
    running = Running(folder, max_running=2)  # the 2-job queue (32 clients at once)
    yield running
    running.stop()


@pytest.fixture(scope="module")
def zkey(tmp_path_factory) -> Path:
    """A copy of the stored key (the daemon reads it by path)."""
    path = tmp_path_factory.mktemp("key") / "key.zkey"
    shutil.copy(KEY_PATH, path)
    return path


@pytest.fixture(scope="module")
def good(tmp_path_factory) -> bytes:
    return wtns_bytes(witness_array(1), tmp_path_factory.mktemp("wtns"))
