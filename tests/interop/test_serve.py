"""The daemon as a user runs it: `numba-cuzk serve` in a subprocess on a temporary socket,
circom circuits proved through the CLI client (`prove --server`, its own process) and the
Python client, every proof judged by snarkjs; `status --server`; the live timeline read
while the daemon runs; SIGTERM drains (running jobs finish, queued ones answered
UNAVAILABLE, nothing lost)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
from pathlib import Path

import grpc
import pytest

from numba_cuzk.groth16 import pairing
from numba_cuzk.groth16.formats.jsonfiles import read_proof_json, read_public_json, read_vk_json
from numba_cuzk.serve.client import ProverClient, ServeError
from tests.conftest import wait_for
from tests.interop.conftest import REPO, CircomBuild, cli
from tests.interop.node import NodeTools

pytestmark = pytest.mark.interop
START_TIMEOUT_S = 240  # imports and the kernels from the cache: ~5 s; compiling them on 2 cores: minutes


class Daemon:
    """`numba-cuzk serve --listen unix:SOCKET --cpu ARGS` in a subprocess, once ready."""

    def __init__(self, folder: Path, *args) -> None:
        self.socket = folder / "serve.sock"
        self.address = f"unix:{self.socket}"
        self.process = subprocess.Popen(
            [sys.executable, "-m", "numba_cuzk.launch", "serve", "--listen", self.address, "--cpu", *map(str, args)],
            cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        ready = [None]
        reader = threading.Thread(target=lambda: ready.__setitem__(0, self.process.stdout.readline()), daemon=True)
        reader.start()
        reader.join(START_TIMEOUT_S)
        if not ready[0] or "ready" not in ready[0]:
            self.process.kill()
            raise AssertionError(f"the daemon did not start: {ready[0]!r} {self.process.stderr.read()}")
        self.ready_line = ready[0]

    def stop(self) -> int:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
        return self.process.wait(60)


def client_process(*args) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "numba_cuzk.launch", *map(str, args)], cwd=REPO,
                          capture_output=True, text=True, timeout=120)


def judged(tools: NodeTools, circom: CircomBuild, proof: Path, public: Path) -> bool:
    verdict = tools.snarkjs("groth16", "verify", circom.vk, public, proof, check=False)
    return verdict.returncode == 0 and "OK" in verdict.stdout


@pytest.fixture(scope="module")
def daemon(tmp_path_factory):
    running = Daemon(tmp_path_factory.mktemp("serve"))
    yield running
    assert running.stop() == 0


def test_cli_and_python_clients_prove_circom_circuits(daemon, circom: CircomBuild, tools: NodeTools, tmp_path):
    proof, public = tmp_path / "proof.json", tmp_path / "public.json"
    done = client_process("prove", "--server", daemon.address, "--zkey", circom.zkey, "--witness", circom.wtns,
                          "--proof", proof, "--public", public)
    assert done.returncode == 0 and "wrote" in done.stdout, done.stdout + done.stderr
    assert judged(tools, circom, proof, public)
    assert json.loads(public.read_text()) == json.loads(circom.snarkjs_public.read_text())
    with ProverClient(daemon.address, timeout_s=120) as client:
        reply = client.prove(circom.wtns.read_bytes(), zkey=circom.zkey)
    (tmp_path / "p2.json").write_text(reply.proof_json)
    (tmp_path / "q2.json").write_text(reply.public_json)
    assert reply.public_json == public.read_text()  # snarkjs judged the CLI's; ours judges this one (~1 s less)
    assert pairing.verify(read_vk_json(circom.vk), read_public_json(tmp_path / "q2.json"),
                          read_proof_json(tmp_path / "p2.json"))


def test_a_refused_request_exits_2_with_one_line(daemon, circom: CircomBuild, tmp_path):
    done = client_process("prove", "--server", daemon.address, "--zkey", circom.vk, "--witness", circom.wtns,
                          "--proof", tmp_path / "p.json", "--public", tmp_path / "q.json")
    assert done.returncode == 2 and done.stderr.count("\n") == 1 and "zkey" in done.stderr, done.stderr
    assert not (tmp_path / "p.json").exists()


def test_status_answers_and_the_live_timeline_reads(daemon, circom: CircomBuild):
    if circom.name != "multiply":
        pytest.skip("one circuit is enough")
    with ProverClient(daemon.address, timeout_s=120) as client:  # a proof on the timeline, whatever ran before
        client.prove(circom.wtns.read_bytes(), zkey=circom.zkey)
    done = client_process("status", "--server", daemon.address, "--json")
    assert done.returncode == 0, done.stderr
    status = json.loads(done.stdout)
    assert status["backend"] == "cpu" and Path(status["timeline"]).exists()
    read = cli("timeline", status["timeline"], "--json")
    assert read.exit_code == 0, read.output


def test_sigterm_drains(circom: CircomBuild, tools: NodeTools, tmp_path):
    if circom.name != "multiply":
        pytest.skip("one circuit is enough")
    daemon = Daemon(tmp_path, "--preload", circom.zkey, "--max-running", "1")
    assert "1 keys hot" in daemon.ready_line
    witness = circom.wtns.read_bytes()
    with ProverClient(daemon.address, timeout_s=120) as client:
        outcomes: dict[int, object] = {}

        def prove(k: int) -> None:
            try:
                outcomes[k] = client.prove(witness, zkey=circom.zkey)
            except ServeError as exc:
                outcomes[k] = exc
        callers = [threading.Thread(target=prove, args=(k,)) for k in range(8)]
        for c in callers:
            c.start()
        # the signal only once every call is inside the daemon (proved, running or queued): a
        # call still on its way when the drain ends would meet a closed socket, not the drain
        def inside() -> int:
            status = client.status()
            return (status["proofs"] + status["failures"] + status["queue"]["running"]
                    + sum(status["queue"]["queued"].values()))
        wait_for(lambda: inside() >= 8, "all 8 calls inside the daemon", 30)
        os.kill(daemon.process.pid, signal.SIGTERM)
        for c in callers:
            c.join(120)
    assert daemon.process.wait(60) == 0 and not daemon.socket.exists()
    proved = [o for o in outcomes.values() if not isinstance(o, ServeError)]
    refused = [o for o in outcomes.values() if isinstance(o, ServeError)]
    # none lost: each proved or answered. How many finish before the signal lands is a race
    # (all 8, on a fast host); that queued jobs are refused is tests/serve/test_jobs.py's
    assert len(outcomes) == 8 and proved
    assert all(r.code == grpc.StatusCode.UNAVAILABLE and "not started" in r.details for r in refused)
    (tmp_path / "p.json").write_text(proved[0].proof_json)
    (tmp_path / "q.json").write_text(proved[0].public_json)
    assert judged(tools, circom, tmp_path / "p.json", tmp_path / "q.json")
    assert client_process("status", "--server", daemon.address).returncode == 2
