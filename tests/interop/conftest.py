"""Fixtures of the interop tests: the Node tools (without them the tests skip LOUDLY, and
fail under CI=true: tests/conftest.py), one powers of tau shared by every test and cached
on disk, circom circuits compiled and set up by snarkjs once per session, and the
numba-cuzk CLI."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

import pytest
from typer.testing import CliRunner

from numba_cuzk.cli import app
from tests.conftest import IN_CI, outside_judge_missing
from tests.interop.node import REPO, NodeTools

PTAU_POWER = 7  # the largest test circuit's domain (over_power: 2^7); a ptau of 2^p sets up domains <= 2^p
CACHE = REPO / "build" / "interop"
CIRCUITS = Path(__file__).parent / "circuits"
CIRCUIT_NAMES = ("multiply", "circomlib_mix", "over_power")
ENTROPY = "-e=numba-cuzk interop tests"  # snarkjs mixes it with its own randomness

_absent: list[str] = []  # why the tools are missing, for the summary banner


@dataclass(frozen=True)
class CircomBuild:
    """A circom circuit's files: compiled (r1cs, wasm), its witness computed from
    circuits/<name>.json, set up by snarkjs with one contribution, proved by snarkjs."""

    name: str
    r1cs: Path
    wasm: Path
    wtns: Path
    zkey: Path
    vk: Path
    snarkjs_proof: Path
    snarkjs_public: Path

    @classmethod
    def at(cls, name: str, folder: Path) -> CircomBuild:
        return cls(name, folder / f"{name}.r1cs", folder / f"{name}_js" / f"{name}.wasm", folder / "witness.wtns",
                   folder / "circuit.zkey", folder / "verification_key.json", folder / "snarkjs_proof.json",
                   folder / "snarkjs_public.json")


def cli(*args) -> object:
    """`numba-cuzk ARGS` in this process, so the kernels compile once per session (a fresh
    process spends ~40 s compiling on 2 cores)."""
    return CliRunner().invoke(app, [str(a) for a in args], env={"COLUMNS": "1000"})  # no wrapped errors


def cli_verify(vk: Path, public: Path, proof: Path) -> subprocess.CompletedProcess:
    """`numba-cuzk verify` through the real entry point, in its own process (~1 s: it
    compiles nothing), as a user runs it."""
    return subprocess.run([sys.executable, "-m", "numba_cuzk.cli", "verify", "--vk", str(vk), "--public",
                           str(public), "--proof", str(proof)], capture_output=True, text=True, timeout=120, cwd=REPO)


@pytest.fixture(scope="session")
def tools() -> NodeTools:
    found = NodeTools.find()
    if isinstance(found, str):
        _absent.append(found)
        outside_judge_missing(found)
    return found


@pytest.fixture(scope="session")
def ptau(tools: NodeTools) -> Path:
    """A BLS12-381 powers of tau of 2^PTAU_POWER with one contribution, prepared for
    phase 2; cached under build/ by snarkjs version (making it takes ~10-20 s on 2 cores)."""
    path = CACHE / f"snarkjs-{tools.version('snarkjs')}" / f"pot{PTAU_POWER}.ptau"
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryDirectory(dir=path.parent) as tmp:
            new, contributed, prepared = (Path(tmp) / f"{k}.ptau" for k in ("new", "contributed", "prepared"))
            tools.snarkjs("powersoftau", "new", "bls12381", PTAU_POWER, new)
            tools.snarkjs("powersoftau", "contribute", new, contributed, ENTROPY, "-n=ci")
            tools.snarkjs("powersoftau", "prepare", "phase2", contributed, prepared)
            os.replace(prepared, path)  # whole or absent, even if the run is interrupted
    return path


@pytest.fixture(scope="session", params=CIRCUIT_NAMES)
def circom(request, tools: NodeTools, ptau: Path, tmp_path_factory) -> CircomBuild:
    name, folder = request.param, tmp_path_factory.mktemp(request.param)
    build = CircomBuild.at(name, folder)
    tools.circom2(CIRCUITS / f"{name}.circom", folder)
    tools.snarkjs("wtns", "calculate", build.wasm, CIRCUITS / f"{name}.json", build.wtns)
    fresh = folder / "fresh.zkey"
    tools.snarkjs("groth16", "setup", build.r1cs, ptau, fresh)
    # one contribution, so that delta is no longer the generator (a fresh zkey's is)
    tools.snarkjs("zkey", "contribute", fresh, build.zkey, ENTROPY, "-n=ci")
    tools.snarkjs("zkey", "export", "verificationkey", build.zkey, build.vk)
    tools.snarkjs("groth16", "prove", build.zkey, build.wtns, build.snarkjs_proof, build.snarkjs_public)
    return build


def pytest_terminal_summary(terminalreporter) -> None:
    if _absent:
        verdict = "FAILED (CI=true)" if IN_CI else "SKIPPED"
        terminalreporter.write_sep("!", f"circom/snarkjs interop tests {verdict}: the outside judge did not run",
                                   red=True, bold=True)
        terminalreporter.write_line(_absent[0])
