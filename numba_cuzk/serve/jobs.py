"""The daemon's jobs: a priority queue in front of the Engine.

At most ``max_running`` jobs are in the engine at once (enough to keep its devices fed:
one proving while the next is staged); the rest wait here, highest priority first
(critical, high, normal, low), in arrival order within a priority, so a critical job
overtakes everything not yet started. A waiting job can be cancelled; one in the engine
runs to its end. ``drain`` answers every waiting job with ``Refused`` and lets the
running ones finish.

A job holds its witness until the engine takes it, then only the engine does (it lets go
once the witness is staged); a finished job holds its answer until it is awaited (Prove
answers at once) or until ``RETAINED`` later jobs have finished.
"""

from __future__ import annotations

import collections
import heapq
import itertools
import threading
import time
from concurrent.futures import Future
from dataclasses import dataclass, field

import numpy as np

from numba_cuzk.engine import Engine, Job, JobFailed
from numba_cuzk.groth16.formats import proof_pair_texts
from numba_cuzk.serve.keys import KeyEntry, KeyStore
from numba_cuzk.serve.protocol import PRIORITIES

RETAINED = 1024  # finished submitted jobs kept for AwaitProof; older ones are forgotten
BUSY_WINDOW_S = 60.0
QUEUED, RUNNING, DONE, FAILED, CANCELLED = "queued", "running", "done", "failed", "cancelled"


class Refused(Exception):
    """A job the daemon will not run: it shut down first, or it was cancelled."""


class WitnessRejected(ValueError):
    """The job's witness does not prove with its key (wrong circuit, wire 0 not 1, ...)."""


@dataclass(frozen=True)
class Answer:
    """A proved job: (proof.json, public.json) as text per partition, in order; times in
    ms (``queued_ms`` in the daemon's queue, ``prove_ms`` in the engine); ``landed_ns`` and
    ``answered_ns``: when the engine's result came back and when this answer was made of
    it (time.monotonic_ns)."""

    texts: list[tuple[str, str]]
    queued_ms: float
    prove_ms: float
    landed_ns: int = 0
    answered_ns: int = 0

    @property
    def proof_json(self) -> str:
        return self.texts[0][0]

    @property
    def public_json(self) -> str:
        return self.texts[0][1]


@dataclass(eq=False)
class ServedJob:
    id: str
    key: KeyEntry
    witnesses: list[np.ndarray] | None  # one per partition
    priority: str
    retain: bool  # submitted: kept for AwaitProof
    partitions: int = 1
    queued_ns: int = field(default_factory=time.monotonic_ns)  # in the queue (its witness read and checked)
    received_ns: int = 0  # the request's arrival, before its witness was read (0: as queued_ns)
    started_ns: int | None = None  # handed to the engine
    state: str = QUEUED
    future: Future = field(default_factory=Future)


class Scheduler:
    """Jobs from the gRPC threads into ``engine``, ``max_running`` at a time; ``on_end``
    is told of each job's end (metrics)."""

    def __init__(self, engine: Engine, keys: KeyStore, max_running: int, on_end) -> None:
        self.engine, self.keys, self.max_running, self.on_end = engine, keys, max_running, on_end
        self._heap: list = []
        self._seq = itertools.count()
        self._ids = itertools.count(1)
        self._cond = threading.Condition()
        self._running: dict[str, ServedJob] = {}
        self.jobs: dict[str, ServedJob] = {}  # queued, running, and finished ones still retained
        self._finished: collections.deque = collections.deque()
        self._draining = False
        self._busy_since: float | None = None
        self._busy: collections.deque = collections.deque()  # (start, end) of time with a job running
        self._thread = threading.Thread(target=self._dispatch, name="serve-dispatch", daemon=True)
        self._thread.start()

    # --- the calls -----------------------------------------------------------------------

    def submit(self, key: KeyEntry, witnesses: list[np.ndarray], priority: str, retain: bool,
               received_ns: int = 0) -> ServedJob:
        """Queue a job of one or more partitions (its key already acquired); Refused once
        draining. ``received_ns``: when its request arrived (time.monotonic_ns; 0: now)."""
        with self._cond:
            if self._draining:
                self.keys.release(key, False)
                raise Refused("the daemon is shutting down: it takes no new jobs")
            job = ServedJob(f"job-{next(self._ids)}", key, witnesses, priority, retain, len(witnesses))
            job.received_ns = received_ns or job.queued_ns
            self.jobs[job.id] = job
            heapq.heappush(self._heap, (PRIORITIES.index(priority), next(self._seq), job))
            self._cond.notify_all()
        return job

    def cancel(self, job: ServedJob, why: str = "cancelled") -> str:
        """Cancel a waiting job (its witness let go at once); the state after the call."""
        with self._cond:
            if job.state != QUEUED:
                return job.state
            self._end(job, CANCELLED, exc=Refused(f"{job.id}: {why}"))
            return CANCELLED

    def abandon(self, job: ServedJob) -> None:
        """Its client left: a waiting job is cancelled, a running one's answer dropped."""
        with self._cond:
            job.retain = False
            if job.state in (DONE, FAILED, CANCELLED):
                self.jobs.pop(job.id, None)
                return
        self.cancel(job, "its client disconnected")

    def collected(self, job: ServedJob) -> None:
        """A retained job's answer was delivered: forget it."""
        with self._cond:
            if job.state in (DONE, FAILED, CANCELLED):
                self.jobs.pop(job.id, None)

    def drain(self) -> list[ServedJob]:
        """Take no new jobs; answer the waiting ones with Refused; wait for the running."""
        with self._cond:
            self._draining = True
            refused = [job for _, _, job in self._heap if job.state == QUEUED]
            for job in refused:
                self._end(job, CANCELLED, exc=Refused(f"{job.id}: not started, the daemon shut down (submit it "
                                                      "again to a running daemon)"))
            self._heap.clear()
            self._cond.notify_all()
            while self._running:
                self._cond.wait()
        return refused

    # --- figures ----------------------------------------------------------------------------

    def depth(self) -> int:
        with self._cond:
            return sum(1 for _, _, job in self._heap if job.state == QUEUED)

    def running(self) -> int:
        return len(self._running)

    def busy_fraction(self) -> float:
        """The fraction of the last minute with at least one job in the engine."""
        now = time.monotonic()
        start = now - BUSY_WINDOW_S
        with self._cond:
            spans = list(self._busy) + ([(self._busy_since, now)] if self._busy_since is not None else [])
        return sum(max(0.0, e - max(s, start)) for s, e in spans) / BUSY_WINDOW_S

    def snapshot(self) -> list[dict]:
        now = time.monotonic_ns()
        with self._cond:
            return [{"job": j.id, "state": j.state, "priority": j.priority, "key": j.key.key_id,
                     "age_ms": round((now - j.received_ns) / 1e6, 1)} for j in self.jobs.values()]

    def queued_by_priority(self) -> dict[str, int]:
        counts = dict.fromkeys(PRIORITIES, 0)
        with self._cond:
            for _, _, job in self._heap:
                if job.state == QUEUED:
                    counts[job.priority] += 1
        return counts

    # --- inside -----------------------------------------------------------------------------

    def _dispatch(self) -> None:
        while True:
            with self._cond:
                while not self._heap or len(self._running) >= self.max_running:
                    self._cond.wait()
                _, _, job = heapq.heappop(self._heap)
                if job.state != QUEUED:
                    continue
                job.state, job.started_ns = RUNNING, time.monotonic_ns()
                self._running[job.id] = job
                if self._busy_since is None:
                    self._busy_since = job.started_ns / 1e9
                witnesses, job.witnesses = job.witnesses, None
            try:
                future = self.engine.submit(Job(job.key.pk, witnesses, name=job.id))
            except Exception as exc:
                self._finish(job, None, exc)
                continue
            del witnesses
            future.add_done_callback(lambda f, job=job: self._landed(job, f))

    def _landed(self, job: ServedJob, future: Future) -> None:
        landed = time.monotonic_ns()
        try:
            result = future.result()
        except JobFailed as exc:
            self._finish(job, None, exc)
            return
        except Exception as exc:
            self._finish(job, None, exc)
            return
        try:
            answer = Answer([proof_pair_texts(p.proof, p.public_inputs) for p in result.partitions],
                            (job.started_ns - job.queued_ns) / 1e6, (landed - job.started_ns) / 1e6, landed,
                            time.monotonic_ns())
        except Exception as exc:
            self._finish(job, None, exc)
            return
        self._finish(job, answer, None)

    def _finish(self, job: ServedJob, answer: Answer | None, error: BaseException | None) -> None:
        key_error = None
        if isinstance(error, JobFailed) and error.stage == "staging":
            key_error = str(error.__cause__ or error)  # the key's points did not check, or it does not fit
        self.keys.release(job.key, answer is not None, key_error)
        with self._cond:
            self._running.pop(job.id, None)
            if not self._running and self._busy_since is not None:
                self._busy.append((self._busy_since, time.monotonic()))
                self._busy_since = None
                while self._busy and self._busy[0][1] < time.monotonic() - BUSY_WINDOW_S:
                    self._busy.popleft()
            if answer is not None:
                self._end(job, DONE, answer=answer)
            else:
                self._end(job, FAILED, exc=_explain(error, job.partitions))
            self._cond.notify_all()

    def _end(self, job: ServedJob, state: str, answer: Answer | None = None, exc: BaseException | None = None) -> None:
        """Settle ``job`` (under the condition's lock)."""
        if job.state == QUEUED and state == CANCELLED:
            self.keys.release(job.key, False)
        job.state, job.witnesses = state, None
        if answer is not None:
            job.future.set_result(answer)
        else:
            job.future.set_exception(exc)
        if job.retain:
            self._finished.append(job.id)
            while len(self._finished) > RETAINED:
                self.jobs.pop(self._finished.popleft(), None)
        else:
            self.jobs.pop(job.id, None)
        self.on_end(job, state)


def _explain(error: BaseException, partitions: int) -> BaseException:
    """A failed job's error as the client should read it (naming the partition of a
    partitioned job)."""
    if isinstance(error, JobFailed) and error.stage in ("synthesis", "epilogue"):
        cause = error.__cause__ or error
        which = f"partition {error.index}: " if partitions > 1 else ""
        return WitnessRejected(f"{which}the witness does not prove with this key ({error.stage}): {cause}")
    return error
