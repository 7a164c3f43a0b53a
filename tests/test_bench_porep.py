"""bench/porep.py's choices that only a GPU run would otherwise show: the engine's GPU
workers from the memory plan, and each job's interval from the timeline."""

import pytest

from bench.porep import engine_plan, job_intervals_s
from numba_cuzk.circuits.builtin import key_shape, split_tail
from numba_cuzk.groth16.memory import KeyTooLarge, plan_with
from numba_cuzk.timeline.reader import Timeline

SHAPE = key_shape("bit_heavy", 20)
TAIL = split_tail("bit_heavy")


def test_two_gpu_workers_when_three_slots_keep_every_query():
    free = plan_with(SHAPE, (), slots=3, tail=TAIL).device_bytes
    workers, plan = engine_plan(SHAPE, free, TAIL)
    assert (workers, plan.slots, plan.streamed, plan.bits) == (2, 3, (), ("a", "b1", "b2", "c"))


def test_one_gpu_worker_when_only_two_slots_keep_b2_resident():
    """B2 streamed costs ~560 ms of kernels per 2^27 partition; a second GPU worker hides ~ms."""
    free = plan_with(SHAPE, (), slots=2, tail=TAIL).device_bytes
    workers, plan = engine_plan(SHAPE, free, TAIL)
    assert (workers, plan.slots, plan.streamed) == (1, 2, ())


def test_two_gpu_workers_and_the_plans_streaming_when_neither_keeps_b2():
    free = plan_with(SHAPE, (), slots=2, tail=TAIL).device_bytes - 1
    workers, plan = engine_plan(SHAPE, free, TAIL)
    # B2 and H in chunks of 2^18: B2 streamed also drops the G2 tail workspace, which at c = 10
    # (plan.py's Small G2) is 25 MB, too little to free a third slot's room on its own
    assert (workers, plan.slots, plan.streamed, plan.bits) == (2, 3, ("b2", "h"), ("a", "b1", "c"))
    with pytest.raises(KeyTooLarge):
        engine_plan(SHAPE, 10**9, TAIL)


def test_unknown_free_memory_keeps_every_query_with_two_workers():
    assert engine_plan(SHAPE, None, None)[0] == 2


def test_job_intervals_run_between_the_jobs_ends_in_end_order_not_from_the_warm_up():
    done = [("warmup", 100.0), ("r0-job0", 900.0), ("r0-job0", 1100.0), ("r0-job2", 2600.0), ("r0-job1", 2000.0)]
    timeline = Timeline({}, [{"event": "done", "t_ms": t, "job": job, "partition": 0} for job, t in done])
    assert job_intervals_s(timeline, ["r0-job0", "r0-job1", "r0-job2"]) == pytest.approx([0.9, 0.6])
