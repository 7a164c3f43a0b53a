"""Groth16 on files, as the CLI's setup, prove and verify run it: circom's .r1cs and
.wtns, snarkjs's .zkey, proof.json, public.json and verification_key.json.

    ms = setup_files(r1cs, "c.zkey", "verification_key.json")       # INSECURE setup
    result = prove_files("c.zkey", "w.wtns", "proof.json", "public.json", r1cs_path="c.r1cs")
    ok = verify_files("verification_key.json", "public.json", "proof.json")

Each function times its steps (ms, in the order they ran) and runs each one inside
``step(description)``, a context manager: the CLI passes one that shows a spinner. Bad
input raises ValueError (OSError for a missing or unwritable file), naming what is wrong.
"""

from __future__ import annotations

import contextlib
import time
from dataclasses import dataclass, field
from typing import Callable, ContextManager

from numba_cuzk import backend
from numba_cuzk.groth16 import pairing
from numba_cuzk.groth16.formats import (read_proof_json, read_public_json, read_r1cs, read_vk_json, read_wtns,
                                        read_zkey, write_proof_json, write_public_json, write_vk_json, write_zkey)
from numba_cuzk.groth16.formats.binfile import PathLike
from numba_cuzk.groth16.keys import Proof
from numba_cuzk.groth16.prove import Prover
from numba_cuzk.groth16.r1cs import R1CS
from numba_cuzk.groth16.setup import setup
from numba_cuzk.groth16.timing import PhaseTimer
from numba_cuzk.groth16.witness import check_witness

Step = Callable[[str], ContextManager]


def _quiet(description: str) -> ContextManager:
    return contextlib.nullcontext()


class _Steps:
    """Runs named steps inside ``step`` and records their wall ms."""

    def __init__(self, step: Step) -> None:
        self.step = step
        self.ms: dict[str, float] = {}

    @contextlib.contextmanager
    def __call__(self, name: str, description: str):
        start = time.perf_counter()
        with self.step(description):
            yield
        self.ms[name] = (time.perf_counter() - start) * 1e3


@dataclass
class ProveResult:
    """A proof and its public inputs; ``steps_ms`` the wall ms of each step (read_zkey,
    read_witness, [check_witness], prepare, prove, write), ``prove_ms`` the prover's own
    phases inside ``prove`` (device ms on the GPU, see timing.py)."""

    proof: Proof
    public: list[int]
    backend: str
    steps_ms: dict[str, float] = field(default_factory=dict)
    prove_ms: dict[str, float] = field(default_factory=dict)


def setup_files(r1cs: R1CS, zkey_path: PathLike, vk_path: PathLike, *, gpu: bool | None = None,
                step: Step = _quiet) -> dict[str, float]:
    """An INSECURE local setup of ``r1cs`` (setup.py) written as a zkey and a
    verification_key.json; returns the ms of steps setup and write."""
    steps = _Steps(step)
    with steps("setup", f"insecure setup of {r1cs.n_constraints} constraints"):
        pk = setup(r1cs, gpu=gpu)
    with steps("write", f"writing {zkey_path}"):
        write_zkey(zkey_path, pk)
        write_vk_json(vk_path, pk.verifying_key)
    return steps.ms


def prove_files(zkey_path: PathLike, witness_path: PathLike, proof_path: PathLike, public_path: PathLike, *,
                r1cs_path: PathLike | None = None, gpu: bool | None = None, trusted: bool = False,
                step: Step = _quiet) -> ProveResult:
    """Prove the witness file with the zkey; write proof.json and public.json.

    ``r1cs_path``: check the witness against the circuit first, naming the first failing
    constraint. ``trusted``: skip the zkey's point checks (on curve, in subgroup).
    ``gpu``: None for the GPU when there is one, else False for the CPU backend.
    """
    gpu = backend.cuda_available() if gpu is None else gpu
    steps = _Steps(step)
    with steps("read_zkey", f"reading {zkey_path}"):
        pk = read_zkey(zkey_path, trusted=trusted)
    with steps("read_witness", f"reading {witness_path}"):
        witness = read_wtns(witness_path)
    if witness.shape[1] != pk.n_vars:
        raise ValueError(f"{witness_path}: {witness.shape[1]} wires, the zkey expects {pk.n_vars}")
    if r1cs_path is not None:
        with steps("check_witness", f"checking the witness against {r1cs_path}"):
            _check_against(read_r1cs(r1cs_path), pk.n_vars, pk.n_public, witness)
    with steps("prepare", "preparing the prover (key to " + ("GPU" if gpu else "CPU backend")
               + ("" if trusted else ", its points checked there") + ")"):
        prover = Prover(pk, gpu=gpu)
        timer = PhaseTimer(prover.stream)
    with steps("prove", "proving"):
        proof = prover.prove(witness, timer=timer)
    public = prover.public_inputs(witness)
    with steps("write", f"writing {proof_path}"):
        write_proof_json(proof_path, proof)
        write_public_json(public_path, public)
    return ProveResult(proof, public, "gpu" if gpu else "cpu", steps.ms, timer.durations_ms())


def verify_files(vk_path: PathLike, public_path: PathLike, proof_path: PathLike) -> bool:
    """True if the proof verifies; ValueError for files that do not parse or do not fit
    the key (a point off its curve, a public input >= r, the wrong number of inputs)."""
    return pairing.verify(read_vk_json(vk_path), read_public_json(public_path), read_proof_json(proof_path))


def _check_against(r1cs: R1CS, n_vars: int, n_public: int, witness) -> None:
    """The r1cs must be the zkey's circuit (same wires and public wires) and the witness
    must satisfy it."""
    if (r1cs.n_wires, r1cs.n_public) != (n_vars, n_public):
        raise ValueError(f"the r1cs has {r1cs.n_wires} wires ({r1cs.n_public} public), the zkey "
                         f"{n_vars} ({n_public} public): not the same circuit")
    check_witness(r1cs, witness)
