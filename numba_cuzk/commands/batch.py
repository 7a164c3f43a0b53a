"""``numba-cuzk run``'s work, apart from parsing and printing: the jobs to prove (a built-in
circuit's, or one job per witness file), proving them on an Engine, resuming what an
earlier run under the same ``--out`` already proved, and the summary of every proof.

    plan = witness_jobs("key.zkey", "witnesses/")      # checks paths and sizes, reads no key
    pk = plan.key()                                     # the key's points checked here
    outcomes, wall_s = prove_local(engine, pk, plan, out="proofs/")
    summary = summarize(pk, plan, outcomes, wall_s, devices)

A witness is a proof of its own: a witness file that cannot be read, has the wrong size or
does not satisfy the circuit fails its job alone, and the summary names the file.
Partitions of one job (a built-in circuit's ``--partitions``) still fail together; the
ones that finished are kept in OUT/<job>/, and a rerun with the same OUT proves only
the rest.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Callable, Sequence

from numba_cuzk import backend
from numba_cuzk.engine.config import EngineConfig
from numba_cuzk.engine.engine import Engine
from numba_cuzk.engine.job import Job, JobFailed, JobResult, PartitionResult, Synthesizer, partition_files
from numba_cuzk.engine.workload import circuit_key, circuit_partitions
from numba_cuzk.fileio import InputError, check_folder, check_readable, check_writable, naming
from numba_cuzk.groth16 import pairing
from numba_cuzk.groth16.formats import read_proof_json, read_public_json, read_wtns, read_wtns_size, read_zkey, \
    read_shape
from numba_cuzk.groth16.keys import ProvingKey


@dataclass(frozen=True)
class JobPlan:
    """One job to prove: its partitions' synthesizers and, for messages, where each
    partition comes from (its .wtns file, or "<circuit> at 2^K"); ``files``: the sources
    are files, which the synthesizers read (they run where the files are)."""

    name: str
    partitions: list[Synthesizer]
    sources: list[str]
    files: bool = False


@dataclass
class Plan:
    """The jobs of a run and how to get their key; ``rejected``: jobs refused before any
    work (name -> the error naming their file)."""

    jobs: list[JobPlan]
    key: Callable[[], ProvingKey]
    rejected: dict[str, InputError] = field(default_factory=dict)
    sources: dict[str, list[str]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.sources.update((job.name, job.sources) for job in self.jobs)


def circuit_jobs(circuit: str, log_constraints: int, jobs: int, partitions: int, gpu: bool | None,
                 resident_slots: int | None = None, tail: int | None = None) -> Plan:
    """``jobs`` jobs of ``partitions`` instances of a built-in circuit; the key is an
    INSECURE local setup (engine.workload.circuit_key), left on the GPU for a Prover of
    ``resident_slots`` slots (and ``tail``: the engine's bit/tail split, EngineConfig.tail)
    when that is given (see ``resident_slots``)."""
    work = circuit_partitions(circuit, log_constraints, jobs, partitions)
    plans = [JobPlan(f"job-{j}", parts, [f"{circuit} at 2^{log_constraints}"] * len(parts))
             for j, parts in enumerate(work)]
    return Plan(plans, partial(circuit_key, circuit, log_constraints, gpu=gpu, resident_slots=resident_slots,
                               tail=tail))


def resident_slots(config: EngineConfig) -> int | None:
    """The proof slots a key made on the GPU should be planned for when this machine's
    engine proves on exactly one GPU (its gpu_workers_per_device + 1); None otherwise (a
    key resident on one GPU serves no other, and host keys go to every device or worker)."""
    if config.devices == () or not backend.cuda_available():
        return None
    ids = [d["id"] for d in backend.describe_devices()] if config.devices is None else sorted(set(config.devices))
    return config.gpu_workers_per_device + 1 if ids == [0] else None  # setup makes the key on GPU 0


def witness_jobs(zkey: str, witness_dir: str, trusted: bool = False) -> Plan:
    """One job per .wtns file of ``witness_dir`` (name order), named by the file's stem.
    Checks first, reading headers only: the key and the folder exist, and each witness
    has the key's number of wires (a witness that does not is rejected, alone)."""
    check_readable(zkey, "key file")
    folder = check_folder(witness_dir, "witness folder")
    paths = sorted(p for p in folder.glob("*.wtns") if p.is_file())
    if not paths:
        raise InputError(f"{folder}: no .wtns files in this folder")
    with naming(zkey):
        n_vars = read_shape(zkey).n_vars
    plans, rejected, sources, names = [], {}, {}, set()
    for path in paths:
        name = _job_name(path.stem, names)
        sources[name] = [str(path)]
        try:
            with naming(path):
                wires = read_wtns_size(path)
            if wires != n_vars:
                raise InputError(f"{path}: {wires} wires, the key {zkey} expects {n_vars}")
        except InputError as exc:
            rejected[name] = exc
            continue
        plans.append(JobPlan(name, [partial(read_wtns, path)], [str(path)], files=True))

    def key() -> ProvingKey:
        with naming(zkey):
            return read_zkey(zkey, trusted=trusted)
    return Plan(plans, key, rejected, sources)


def _job_name(stem: str, taken: set[str]) -> str:
    """A job name from a file stem: letters, digits, _ . - (what a cluster accepts), unique."""
    base = re.sub(r"[^A-Za-z0-9_.-]", "_", stem) or "witness"
    name, k = base, 1
    while name in taken:
        k += 1
        name = f"{base}-{k}"
    taken.add(name)
    return name


def check_out(out: str | None) -> None:
    """``--out`` is a folder that exists or can be made, and takes files."""
    if out is not None:
        check_writable(out, folder=True)


# --- proving ---------------------------------------------------------------------------------

Outcome = tuple[str, JobResult | JobFailed | InputError, dict[int, PartitionResult]]


def resumable(pk: ProvingKey, out_dir: Path, indices: Sequence[int]) -> dict[int, PartitionResult]:
    """The partitions of ``indices`` whose proof and public inputs an earlier run left in
    ``out_dir`` and that verify with ``pk`` (device -1, times 0): a rerun keeps them. A file
    that does not parse or verify is proved again (and replaced)."""
    kept, verifying = {}, pairing.PreparedVerifyingKey(pk.verifying_key)
    for index in indices:
        proof_path, public_path = partition_files(out_dir, index)
        if not (proof_path.is_file() and public_path.is_file()):
            continue
        try:
            proof, public = read_proof_json(proof_path), read_public_json(public_path)
            if not verifying.verify(public, proof):
                continue
        except (OSError, ValueError):
            continue
        kept[index] = PartitionResult(index, proof, public, -1, 0.0, 0.0, 0.0, 0.0)
    return kept


def prove_local(engine: Engine, pk: ProvingKey, plan: Plan, out: str | None = None,
                on_proved: Callable[[str], None] | None = None) -> tuple[list[Outcome], float]:
    """Submit every job of ``plan`` (resuming partitions already proved under ``out``),
    wait for all; ([(job name, JobResult, JobFailed or the InputError of a rejected
    job, {index: resumed PartitionResult})] in plan order, wall s). ``on_proved(job)``
    after each partition (from a GPU worker thread) and for each one resumed. Closes
    ``engine``."""
    start = time.perf_counter()
    pending = []
    for job in plan.jobs:
        out_dir = Path(out) / job.name if out else None
        resumed = resumable(pk, out_dir, range(len(job.partitions))) if out_dir else {}
        todo = [i for i in range(len(job.partitions)) if i not in resumed]
        for _ in resumed if on_proved else ():
            on_proved(job.name)
        future = None
        if todo:
            future = engine.submit(Job(pk, [job.partitions[i] for i in todo], name=job.name, out_dir=out_dir,
                                       indices=todo, on_proved=lambda _, name=job.name: on_proved and on_proved(name)))
        pending.append((job.name, future, resumed))
    outcomes = [(name, error, {}) for name, error in plan.rejected.items()]
    for name, future, resumed in pending:
        if future is None:
            outcomes.append((name, JobResult(name, [], 0.0), resumed))
            continue
        try:
            outcomes.append((name, future.result(), resumed))
        except JobFailed as exc:
            outcomes.append((name, exc, resumed))
    wall_s = time.perf_counter() - start
    engine.close()
    return in_plan_order(plan, outcomes), wall_s


def in_plan_order(plan: Plan, outcomes: list[Outcome]) -> list[Outcome]:
    """``outcomes`` in the order of the plan's jobs (witness files in name order)."""
    order = {name: i for i, name in enumerate(plan.sources)}
    return sorted(outcomes, key=lambda o: order.get(o[0], len(order)))


# --- the summary -----------------------------------------------------------------------------

def summarize(pk: ProvingKey | None, plan: Plan, outcomes: Sequence[Outcome], wall_s: float,
              devices: list[dict]) -> dict:
    """Every partition re-verified (pairing) and timed. ``proofs``: partitions proved and
    verified in this run; ``resumed``: kept from an earlier one; ``failures``: one per failed
    job, naming its file (or partition's source), stage and error. ``devices``: id, name,
    gpu (and on a cluster worker and host)."""
    jobs, failures = [], []
    verifying = pairing.PreparedVerifyingKey(pk.verifying_key) if pk is not None else None
    for name, outcome, resumed in outcomes:
        done = {} if isinstance(outcome, InputError) else dict(
            outcome.finished if isinstance(outcome, JobFailed) else {p.index: p for p in outcome.partitions})
        rows = [_row(verifying, p, resumed=False) for p in done.values()] + [_row(verifying, p, resumed=True)
                                                                              for p in resumed.values()]
        rows.sort(key=lambda r: r["partition"])
        sources = plan.sources.get(name, []) if _from_files(plan, name) else []
        error = None if isinstance(outcome, JobResult) else _failure(name, outcome, sources)
        if error:
            failures.append(error)
        jobs.append({"job": name, "ok": error is None and all(r["verified"] for r in rows),
                     "error": error and error["error"], "partitions": rows})
    proved = sum(r["verified"] and not r["resumed"] for j in jobs for r in j["partitions"])
    partitions = sum(len(plan.sources.get(j["job"], [])) for j in jobs)
    return {"backend": "gpu" if any(d["gpu"] for d in devices) else "cpu",
            "devices": [{k: v for k, v in d.items() if k != "gpu"} for d in devices],
            "ok": all(j["ok"] for j in jobs), "jobs": jobs, "failures": failures,
            "proofs": proved, "resumed": sum(r["resumed"] for j in jobs for r in j["partitions"]),
            "partitions": partitions, "wall_s": wall_s,
            "s_per_proof": wall_s / proved if proved else None,
            "proofs_per_hour": 3600 * proved / wall_s if proved and wall_s else 0.0}


def _from_files(plan: Plan, name: str) -> bool:
    return name in plan.rejected or any(job.files for job in plan.jobs if job.name == name)


def _row(verifying: pairing.PreparedVerifyingKey, p: PartitionResult, resumed: bool) -> dict:
    return {"partition": p.index, "device": p.device, "synthesis_ms": p.synthesis_ms, "kernel_ms": p.kernel_ms,
            "epilogue_ms": p.epilogue_ms, "total_ms": p.total_ms, "resumed": resumed,
            "verified": verifying.verify(p.public_inputs, p.proof)}


def _failure(job: str, outcome: JobFailed | InputError, sources: list[str]) -> dict:
    """{job, partition, file, stage, error}: ``file`` is the failed partition's file
    (None for a built-in circuit's)."""
    index = getattr(outcome, "index", None)
    index = 0 if index is None and isinstance(outcome, InputError) else index
    source = sources[index] if index is not None and index < len(sources) else None
    cause = outcome.__cause__ if isinstance(outcome, JobFailed) and outcome.__cause__ else outcome
    message = str(cause) if isinstance(cause, InputError) else f"{type(cause).__name__}: {cause}"
    if isinstance(outcome, JobFailed) and outcome.index is None:
        message = str(outcome)  # cancelled by close: no partition at fault
    stage = "check" if isinstance(outcome, InputError) else outcome.stage
    where = f"{source}: " if source and not message.startswith(source) else ""
    return {"job": job, "partition": index, "file": source, "stage": stage,
            "error": f"{where}{message}" + (f" (in {stage})" if stage and stage != "check" else "")}
