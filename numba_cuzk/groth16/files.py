"""Groth16 on files, as the CLI's setup, prove and verify run it: circom's .r1cs and
.wtns, snarkjs's .zkey, proof.json, public.json and verification_key.json.

    ms = setup_files(r1cs, "c.zkey", "verification_key.json")       # INSECURE setup
    result = prove_files("c.zkey", "w.wtns", "proof.json", "public.json", r1cs_path="c.r1cs")
    ok = verify_files("verification_key.json", "public.json", "proof.json")

Each function checks its paths and the files' sizes first (fileio: inputs readable,
outputs writable, a witness with the key's number of wires), then works; it times its
steps (ms, in the order they ran) and runs each one inside ``step(description)``, a
context manager: the CLI passes one that shows a spinner. Bad input raises
fileio.InputError (a ValueError) naming the file and what is wrong; every file is
written atomically, and proof.json with public.json as a pair (jsonfiles.write_proof_pair:
both or neither; proof.json renamed last, carrying public.json's SHA-256).

Each function imports the compute modules it runs, so checking a command's files
(check_prove_inputs, check_setup_paths) loads no numba.
"""

from __future__ import annotations

import contextlib
import time
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import Callable, ContextManager

from numba_cuzk.fileio import InputError, check_readable, check_writable, naming
from numba_cuzk.groth16.formats.binfile import PathLike
from numba_cuzk.groth16.formats.headers import WTNS, read_shape, read_wtns_size
from numba_cuzk.groth16.keys import Proof
from numba_cuzk.groth16.r1cs import R1CS

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


def check_setup_paths(zkey_path: PathLike, vk_path: PathLike, *, replace: bool = False) -> None:
    """Both keys can be written; unless ``replace``, neither exists yet (a key may be a
    ceremony's: never overwritten by accident)."""
    for path in (zkey_path, vk_path):
        check_writable(path, replace=replace)


def setup_files(r1cs: R1CS, zkey_path: PathLike, vk_path: PathLike, *, gpu: bool | None = None,
                replace: bool = False, step: Step = _quiet) -> dict[str, float]:
    """An INSECURE local setup of ``r1cs`` (setup.py) written as a zkey and a
    verification_key.json (``replace``: over existing ones); returns the ms of steps
    setup and write."""
    from numba_cuzk.groth16.formats import write_vk_json, write_zkey
    from numba_cuzk.groth16.setup import setup

    check_setup_paths(zkey_path, vk_path, replace=replace)
    steps = _Steps(step)
    with steps("setup", f"insecure setup of {r1cs.n_constraints} constraints"):
        pk = setup(r1cs, gpu=gpu)
    with steps("write", f"writing {zkey_path}"):
        for path, write, value in ((zkey_path, write_zkey, pk), (vk_path, write_vk_json, pk.verifying_key)):
            try:
                write(path, value, replace=replace)
            except FileExistsError as exc:  # made since the check above
                raise InputError(f"{path}: already exists (give --force to replace it)") from exc
    return steps.ms


def check_prove_inputs(zkey_path: PathLike, witness_path: PathLike, r1cs_path: PathLike | None = None) -> None:
    """The key, the witness (and the circuit) are readable files, and the witness has the
    key's number of wires: headers only, so it takes milliseconds at any size."""
    for path in (zkey_path, witness_path, r1cs_path):
        if path is not None:
            check_readable(path)
    with naming(zkey_path):
        n_vars = read_shape(zkey_path).n_vars
    with naming(witness_path):
        wires = read_wtns_size(witness_path)
    if wires != n_vars:
        raise InputError(f"{witness_path}: {wires} wires, the key {zkey_path} expects {n_vars}")


def prove_files(zkey_path: PathLike, witness_path: PathLike, proof_path: PathLike, public_path: PathLike, *,
                r1cs_path: PathLike | None = None, gpu: bool | None = None, trusted: bool = False,
                recheck: bool = False, zkey_digest: Future | None = None, step: Step = _quiet) -> ProveResult:
    """Prove the witness file with the zkey; write proof.json and public.json (a pair:
    both or neither).

    ``r1cs_path``: check the witness against the circuit first, naming the first failing
    constraint. ``trusted``: skip the zkey's point checks (on curve, in subgroup). Else
    the checks run once per machine for the file's bytes (key_checks.load_checked_key);
    ``recheck``: run them even if a record says they passed; ``zkey_digest``: the file's
    hash, started already (key_checks.digest_in_background). ``gpu``: None for the GPU
    when there is one, else False for the CPU backend.
    """
    from numba_cuzk.groth16.formats import read_wtns, read_zkey, write_proof_pair
    from numba_cuzk.groth16.key_checks import load_checked_key
    from numba_cuzk.groth16.prove import UNVERIFIED, Prover
    from numba_cuzk.groth16.timing import PhaseTimer

    check_prove_inputs(zkey_path, witness_path, r1cs_path)
    for path in (proof_path, public_path):
        check_writable(path)
    if gpu is None:
        from numba_cuzk import backend

        gpu = backend.cuda_available()
    steps = _Steps(step)
    with steps("read_witness", f"reading {witness_path}"), naming(witness_path):
        witness = read_wtns(witness_path)
        _check_constant_wire(witness)
    if r1cs_path is not None:
        with steps("check_witness", f"checking the witness against {r1cs_path}"):
            _check_against(r1cs_path, zkey_path, witness_path, witness)
    with steps("read_zkey", f"reading {zkey_path}"), naming(zkey_path):
        pk = read_zkey(zkey_path, trusted=True) if trusted else load_checked_key(zkey_path, recheck, zkey_digest)
    checking = bool(pk.unchecked)
    try:
        with steps("prepare", "preparing the prover (key to " + ("GPU" if gpu else "CPU backend")
                   + (", its points checked there" if checking else "") + ")"), naming(zkey_path):
            prover = Prover(pk, gpu=gpu)
            timer = PhaseTimer(prover.stream)
        with steps("prove", "proving"):
            proof = prover.prove(witness, timer=timer)
    except ValueError as exc:
        if not checking:  # an unchecked point fails an arkworks conversion or the self-check: find it
            _find_bad_point(zkey_path)
        if UNVERIFIED in str(exc):  # every point of the key passes its checks
            raise InputError(_unverified(zkey_path, witness_path, r1cs_path)) from exc
        raise
    public = prover.public_inputs(witness)
    with steps("write", f"writing {public_path} and {proof_path}"):
        write_proof_pair(proof_path, public_path, proof, public)
    return ProveResult(proof, public, "gpu" if gpu else "cpu", steps.ms, timer.durations_ms())


def _unverified(zkey_path: PathLike, witness_path: PathLike, r1cs_path: PathLike | None) -> str:
    """The self-check's failure with a key whose points are valid, naming both files and
    what can tell them apart."""
    if r1cs_path is None:
        hint = f"give --r1cs CIRCUIT.r1cs to check {witness_path} against its circuit: if it passes, the key is at fault"
    else:
        hint = f"{witness_path} satisfies {r1cs_path}: the key is at fault"
    return (f"{zkey_path} with {witness_path}: the proof does not verify: the witness does not satisfy the circuit, "
            f"or the key is corrupt or not the circuit's, its points valid ({hint})")


def _find_bad_point(zkey_path: PathLike) -> None:
    """Raise InputError naming the zkey's first point that is off its curve or outside the
    subgroup (section and point); return if every point passes. For a key used unchecked
    (--trusted, or a record) whose proof failed: the checks run only on this error path."""
    from numba_cuzk.groth16.formats import read_zkey
    from numba_cuzk.groth16.formats.points import check
    from numba_cuzk.groth16.shape import QUERIES

    with naming(zkey_path):
        pk = read_zkey(zkey_path, trusted=False)  # the header's and IC's points
        for field, curve in QUERIES.values():
            check(getattr(pk, field), curve, pk.unchecked[field])


def _check_constant_wire(witness) -> None:
    """Wire 0 is the constant 1 in every circom witness."""
    from numba_cuzk.field.params import FR

    value = sum(int(witness[j, 0]) << (32 * j) for j in range(FR.limbs))
    if value != 1:
        raise ValueError(f"{WTNS.where(2)}: value 0 (wire 0, the constant) must be 1, got {value}")


def verify_files(vk_path: PathLike, public_path: PathLike, proof_path: PathLike) -> bool:
    """True if the proof verifies; ValueError for files that do not parse or do not fit
    the key (a point off its curve, a public input >= r, the wrong number of inputs)."""
    from numba_cuzk.groth16 import pairing
    from numba_cuzk.groth16.formats import read_proof_json, read_public_json, read_vk_json

    for path in (vk_path, public_path, proof_path):
        check_readable(path)
    with naming(vk_path):
        vk = read_vk_json(vk_path)
    with naming(public_path):
        public = read_public_json(public_path)
    with naming(proof_path):
        proof = read_proof_json(proof_path)
    if len(public) != vk.n_public:
        raise InputError(f"{public_path}: {len(public)} public inputs, the key {vk_path} expects {vk.n_public}")
    return pairing.verify(vk, public, proof)


def _check_against(r1cs_path: PathLike, zkey_path: PathLike, witness_path: PathLike, witness) -> None:
    """The r1cs must be the zkey's circuit (same wires and public wires) and the witness
    must satisfy it: a fault of the r1cs (its format, its shape) names the r1cs, an
    unsatisfied constraint names the witness and the r1cs's constraint."""
    from numba_cuzk.groth16.formats import read_r1cs
    from numba_cuzk.groth16.formats.r1cs import R1CS_FILE
    from numba_cuzk.groth16.witness import check_witness

    with naming(r1cs_path):
        r1cs = read_r1cs(r1cs_path)
        r1cs.check()
        shape = read_shape(zkey_path)
        if (r1cs.n_wires, r1cs.n_public) != (shape.n_vars, shape.n_public):
            raise ValueError(f"{r1cs.n_wires} wires ({r1cs.n_public} public), the zkey {zkey_path} has "
                             f"{shape.n_vars} ({shape.n_public} public): not the same circuit")
    try:
        check_witness(r1cs, witness)
    except ValueError as exc:
        raise InputError(f"{witness_path}: does not satisfy {r1cs_path} ({R1CS_FILE.where(2)}): {exc}") from exc
