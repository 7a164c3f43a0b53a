"""Fault injection: ``prove`` and ``setup`` killed (SIGKILL) at random points, including
in the middle of a write (tests/fault_driver.py writes 16 bytes at a time, like a slow
filesystem), and run on a full disk (RLIMIT_FSIZE): each file is the previous one,
intact, or the new one, complete; never a partial one. Before fileio.atomic_write, a
kill left a 0-byte proof.json and a 1 KiB limit a 1024-byte unparsable one."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from numba_cuzk.groth16.formats import read_proof_json, read_public_json, read_vk_json, read_shape
from tests.engine.keys import KEY_PATH
from tests.fault_driver import fixed_proof

ROOT = Path(__file__).resolve().parents[1]
OLD = b"the previous file, which must survive\n"
RNG = random.Random(19)
PROOF_CHUNKS = 60  # public.json (~2 chunks of 16 bytes) then proof.json (~50)
KEY_CHUNKS = KEY_PATH.stat().st_size // 16 + 40  # the zkey, then the verification key
N_PUBLIC = read_shape(KEY_PATH).n_public


def _driver(mode: str, first: Path, second: Path, *extra: str) -> subprocess.Popen:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]), "NUMBA_ENABLE_CUDASIM": "1"}
    return subprocess.Popen([sys.executable, "-m", "tests.fault_driver", mode, str(first), str(second), *extra],
                            cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _wait_ready(proc: subprocess.Popen) -> None:
    line = proc.stdout.readline()
    assert line.strip() == "ready", (line, proc.stderr.read() if proc.poll() is not None else "")


def _old_files(*paths: Path) -> None:
    for path in paths:
        path.write_bytes(OLD)


def _intact_or_complete(path: Path, read, want) -> str:
    """"old" or "new"; fails on anything else (a partial or empty file)."""
    data = path.read_bytes()
    if data == OLD:
        return "old"
    assert read(path) == want, f"{path}: neither the old file nor the new one"
    return "new"


def _leftovers(folder: Path) -> list[str]:
    return [p.name for p in folder.iterdir() if p.name.endswith(".tmp") and not p.name.startswith(".")]


def _check_prove(tmp_path: Path, proof: Path, public: Path) -> set[str]:
    seen = {_intact_or_complete(proof, read_proof_json, fixed_proof()),
            _intact_or_complete(public, read_public_json, list(range(1, N_PUBLIC + 1)))}
    assert not _leftovers(tmp_path)
    return seen


@pytest.mark.parametrize("kill_at", sorted(RNG.sample(range(1, PROOF_CHUNKS), 4)) + [None])
def test_prove_killed_in_its_write(tmp_path, kill_at):
    proof, public = tmp_path / "proof.json", tmp_path / "public.json"
    _old_files(proof, public)
    proc = _driver("prove", proof, public, "--kill-at", str(kill_at) if kill_at else "0")
    proc.wait(timeout=300)
    if kill_at is None:
        assert proc.returncode == 0, proc.stderr.read()
        assert _check_prove(tmp_path, proof, public) == {"new"}
        return
    assert proc.returncode == -signal.SIGKILL or proc.returncode == 0, proc.stderr.read()
    _check_prove(tmp_path, proof, public)


def test_prove_killed_at_random_times(tmp_path):
    proof, public = tmp_path / "proof.json", tmp_path / "public.json"
    for delay_s in (RNG.uniform(0, 1.5), RNG.uniform(1.5, 4)):
        _old_files(proof, public)
        proc = _driver("prove", proof, public, "--pause", "0.01")
        _wait_ready(proc)
        time.sleep(delay_s)
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=60)
        _check_prove(tmp_path, proof, public)


@pytest.mark.parametrize("kill_at", sorted(RNG.sample(range(1, KEY_CHUNKS), 3)))
def test_setup_killed_in_its_write(tmp_path, kill_at):
    zkey, vk = tmp_path / "key.zkey", tmp_path / "verification_key.json"
    _old_files(zkey, vk)
    proc = _driver("setup", zkey, vk, "--pause", "0", "--kill-at", str(kill_at))
    proc.wait(timeout=300)
    assert proc.returncode in (-signal.SIGKILL, 0), proc.stderr.read()
    assert zkey.read_bytes() in (OLD, KEY_PATH.read_bytes())  # the new key is the stored one, byte for byte
    if vk.read_bytes() != OLD:
        assert read_vk_json(vk).n_public == N_PUBLIC
    assert not _leftovers(tmp_path)


@pytest.mark.parametrize("mode", ["prove", "setup"])
def test_full_disk_keeps_the_previous_file(tmp_path, mode):
    """A 1 KiB file-size limit: the new file cannot be written whole; the command exits 2
    with one line naming the file, and the previous file is intact."""
    first, second = (tmp_path / "proof.json", tmp_path / "public.json") if mode == "prove" else (
        tmp_path / "key.zkey", tmp_path / "vk.json")
    _old_files(first, second)
    limit = 600 if mode == "prove" else 1024  # proof.json is ~800 bytes, public.json ~10
    proc = _driver(mode, first, second, "--pause", "0", "--fsize", str(limit))
    _, stderr = proc.communicate(timeout=300)
    assert proc.returncode == 2, stderr
    (error,) = [line for line in stderr.splitlines() if line.startswith("error:")]
    assert str(first) in error and "too large" in error.lower() and "Traceback" not in stderr
    assert first.read_bytes() == OLD
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]  # the temporary file was removed
