"""``numba-cuzk run --scheduler``'s work, apart from parsing and printing: reach the
scheduler (before anything else is done), prove a run's plan (commands.batch) on its GPU
workers, and merge their timelines.

    client = connect("tcp://host:8786")                 # InputError if it does not answer
    with client:
        outcomes, wall_s, devices = prove_cluster(client, config, pk, plan, zkey=None, ...)
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Callable

from numba_cuzk.cluster.client import ClusterProver
from numba_cuzk.cluster.keys import zkey_bytes
from numba_cuzk.engine import EngineConfig, JobFailed
from numba_cuzk.commands.batch import JobPlan, Outcome, Plan, in_plan_order
from numba_cuzk.fileio import InputError, naming
from numba_cuzk.groth16.keys import ProvingKey

CONNECT_TIMEOUT = "20s"


def connect(scheduler: str):
    """A distributed.Client of ``scheduler``; InputError naming it if it does not answer
    (or is not an address), so a run stops before its setup or key check."""
    from distributed import Client

    try:
        return Client(scheduler, timeout=CONNECT_TIMEOUT)
    except (OSError, ValueError) as exc:  # unreachable (TimeoutError is an OSError), or not an address
        raise InputError(f"--scheduler {scheduler}: cannot reach the scheduler: {exc}") from exc


def prove_cluster(client, config: EngineConfig, pk: ProvingKey, plan: Plan, *, zkey: str | None = None,
                  trusted: bool = True, out: str | None = None, on_proved: Callable[[str], None] | None = None,
                  timeline_path=None) -> tuple[list[Outcome], float, list[dict]]:
    """Prove ``plan`` on ``client``'s workers: (outcomes as commands.batch.prove_local's,
    wall s, devices), the jobs' merged timeline written to ``timeline_path``. The key goes
    as ``zkey``'s bytes (points checked by the workers unless ``trusted``) or as ``pk``'s;
    witness files are read here (the workers may not share this filesystem): one that
    does not read fails its job alone."""
    data = Path(zkey).read_bytes() if zkey is not None else zkey_bytes(pk)
    jobs, rejected = _read_here(plan)
    outcomes: list[Outcome] = [(name, error, {}) for name, error in {**plan.rejected, **rejected}.items()]
    names = [job.name for job in jobs]
    with ClusterProver(client, config) as prover:
        start = time.perf_counter()
        futures = prover.submit_many(data, [job.partitions for job in jobs], names=names, out_dir=out,
                                     trusted=trusted if zkey is not None else True,
                                     on_progress=lambda job, _: on_proved and on_proved(job)) if jobs else []
        for name, future in zip(names, futures):
            try:
                outcomes.append((name, future.result(), {}))
            except JobFailed as exc:
                outcomes.append((name, exc, {}))
        wall_s = time.perf_counter() - start
        if timeline_path is not None and names:
            try:
                prover.write_timeline(timeline_path, names)
            except ValueError:  # no partition got as far as an event: no timeline
                pass
        return in_plan_order(plan, outcomes), wall_s, prover.devices()


def _read_here(plan: Plan) -> tuple[list[JobPlan], dict[str, InputError]]:
    """The plan's jobs with witness files read into arrays (a built-in circuit's
    synthesizers stay as they are: they run on the workers)."""
    jobs, rejected = [], {}
    for job in plan.jobs:
        if not job.files:
            jobs.append(job)
            continue
        try:
            parts = []
            for read, source in zip(job.partitions, job.sources):
                with naming(source):
                    parts.append(read())
        except InputError as exc:
            rejected[job.name] = exc
            continue
        jobs.append(JobPlan(job.name, parts, job.sources))
    return jobs, rejected
