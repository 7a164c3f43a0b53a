"""The daemon's queue (serve/jobs.py) over an engine whose jobs finish when the test says:
priority order, cancel, a disconnected client's job let go, and the drain of SIGTERM
(running jobs finish, queued ones answered Refused)."""

from __future__ import annotations

import threading
import weakref
from concurrent.futures import Future

import numpy as np
import pytest

from numba_cuzk.engine.job import JobResult, PartitionResult
from numba_cuzk.groth16.keys import Proof
from numba_cuzk.serve import jobs
from numba_cuzk.serve.jobs import Refused, Scheduler

WAIT_S = 10


class HeldEngine:
    """Takes jobs and holds them until ``finish``; records the order it got them in."""

    def __init__(self) -> None:
        self.taken: list[tuple[str, Future]] = []
        self.took = threading.Semaphore(0)

    def submit(self, job) -> Future:
        future: Future = Future()
        self.taken.append((job.name, future))
        self.took.release()
        return future

    def finish(self, name: str) -> None:
        future = dict(self.taken)[name]
        future.set_result(JobResult(name, [PartitionResult(0, Proof(None, None, None), [1], 0, 0, 0, 0, 0)], 0.0))


class Keys:
    def __init__(self) -> None:
        self.held = 0

    def release(self, entry, proved, key_error=None) -> None:
        self.held -= 1


class Entry:
    key_id, pk = "k" * 64, None


@pytest.fixture
def queue(monkeypatch):
    monkeypatch.setattr(jobs, "proof_pair_texts", lambda proof, public: ("{}", "[]"))
    engine, keys, ended = HeldEngine(), Keys(), []
    scheduler = Scheduler(engine, keys, max_running=1, on_end=lambda job, state: ended.append((job.id, state)))

    def submit(priority: str, witness=None):
        keys.held += 1
        return scheduler.submit(Entry(), [np.zeros((8, 4), np.uint32) if witness is None else witness], priority,
                                retain=True)
    return scheduler, engine, keys, submit, ended


def test_critical_overtakes_the_waiting_jobs(queue):
    scheduler, engine, _, submit, _ = queue
    running = submit("low")
    assert engine.took.acquire(timeout=WAIT_S)
    waiting = [submit(p) for p in ("low", "normal", "high", "critical", "normal")]
    order = [running.id]
    for _ in waiting:
        engine.finish(order[-1])
        assert engine.took.acquire(timeout=WAIT_S)
        order.append(engine.taken[-1][0])
    engine.finish(order[-1])
    by_id = {j.id: j.priority for j in [running, *waiting]}
    assert [by_id[i] for i in order] == ["low", "critical", "high", "normal", "normal", "low"]
    assert order[3:5] == [waiting[1].id, waiting[4].id]  # arrival order within a priority


def test_cancel_a_waiting_job_not_a_running_one(queue):
    scheduler, engine, keys, submit, ended = queue
    running = submit("normal")
    assert engine.took.acquire(timeout=WAIT_S)
    waiting = submit("normal")
    assert scheduler.cancel(waiting) == "cancelled" and scheduler.cancel(running) == "running"
    with pytest.raises(Refused, match="cancelled"):
        waiting.future.result(timeout=WAIT_S)
    engine.finish(running.id)
    assert running.future.result(timeout=WAIT_S).proof_json == "{}"
    assert (waiting.id, "cancelled") in ended and keys.held == 0
    assert [name for name, _ in engine.taken] == [running.id]  # the cancelled one never reached the engine


def test_a_disconnected_clients_job_lets_its_witness_go(queue):
    scheduler, engine, keys, submit, _ = queue
    running = submit("normal")
    assert engine.took.acquire(timeout=WAIT_S)
    witness = np.zeros((8, 1 << 16), np.uint32)
    gone = weakref.ref(witness)
    left = submit("normal", witness)
    del witness
    scheduler.abandon(left)
    assert gone() is None and left.id not in scheduler.jobs and keys.held == 1
    scheduler.abandon(running)  # running: its answer is dropped when it lands
    engine.finish(running.id)
    running.future.result(timeout=WAIT_S)
    assert scheduler.jobs == {} and keys.held == 0


def test_drain_finishes_the_running_and_refuses_the_queued(queue):
    scheduler, engine, keys, submit, _ = queue
    running = submit("normal")
    assert engine.took.acquire(timeout=WAIT_S)
    queued = [submit("high"), submit("low")]
    threading.Timer(0.2, engine.finish, args=(running.id,)).start()
    refused = scheduler.drain()  # returns once the running job is done
    assert running.future.result(timeout=0).proof_json == "{}"
    assert refused == queued
    for job in queued:
        with pytest.raises(Refused, match="not started, the daemon shut down"):
            job.future.result(timeout=0)
    with pytest.raises(Refused, match="shutting down"):
        submit("critical")
    assert keys.held == 0
