"""The figures of synthetic timelines whose answers are known by construction
(synthetic.py plays a Pipeline out; every period below is derived in its comment)."""

from __future__ import annotations

import dataclasses

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from numba_cuzk.events import TimelineWriter
from numba_cuzk.timeline.analysis import CAUSES, Peaks, analyze
from numba_cuzk.timeline.reader import read

from .synthetic import CUZK, Pipeline, analysed, write

approx = pytest.approx


def only(gaps: dict[str, float], **expected: float) -> dict[str, float]:
    """``expected`` completed with zeros for the other causes."""
    return {cause: approx(expected.get(cause, 0.0)) for cause in CAUSES}


def test_cuzk_case_brackets_90_device_50(tmp_path):
    # Period 100 ms: lock hand-over 5, alloc 5, then the bracket: kernel 25, sync 20,
    # kernel 25, sync 20. Steady window: partitions 1..9's first kernels, 8 periods.
    a = analysed(tmp_path / "t.jsonl", CUZK, "steady")
    d = a.devices[0]
    assert a.span_ms == 800
    assert d.bracket_pct == approx(90) and d.busy_pct == approx(50)  # cuzk's number, and the truth
    assert d.idle_in_bracket_pct == approx(40) and d.lock_held_pct == approx(95)
    assert d.gaps_ms == only(d.gaps_ms, sync=320, alloc=40, lock_wait=40)
    # all the idle time inside the brackets is synchronize
    assert d.gaps_ms["sync"] == approx(d.idle_in_bracket_pct / 100 * a.span_ms)
    assert len(a.partitions) == 8 and all(p.lock_held_ms == 95 and p.kernel_ms == 50 for p in a.partitions)
    assert d.held_idle_pct == approx(45)  # the lock's cost: held, device idle


def test_whole_window_includes_warm_up_and_drain(tmp_path):
    # Whole run: [0, 1035]. Partition 0 is ready at 40 (starvation before), takes the free
    # lock at once, releases it at 135; partition k >= 1 holds it from 40 + 100k + 5.
    a = analysed(tmp_path / "t.jsonl", CUZK, "whole")
    d = a.devices[0]
    assert (a.start_ms, a.end_ms) == (0, 1035)
    assert d.bracket_pct == approx(100 * 900 / 1035) and d.busy_pct == approx(100 * 500 / 1035)
    assert d.gaps_ms == only(d.gaps_ms, sync=400, alloc=50, lock_wait=45, starvation=40)
    assert len(a.partitions) == 10


def test_starvation_and_the_worker_count_that_feeds_the_gpu(tmp_path):
    # One worker takes 300 ms per partition, the GPU 100: partition k's kernel runs
    # [300(k+1), 300(k+1) + 100]. Steady [600, 1800]: 4 kernels, 4 starved gaps of 200.
    starving = Pipeline(partitions=6, synth_ms=300)
    a = analysed(tmp_path / "t.jsonl", starving)
    d = a.devices[0]
    assert (a.start_ms, a.end_ms) == (600, 1800)
    assert d.busy_pct == approx(100 / 3) and d.gaps_ms == only(d.gaps_ms, starvation=800)
    b = a.balance
    assert (b.synthesis_ms, b.kernel_ms, b.workers, b.workers_needed) == (300, 100, 1, 3)
    assert b.starvation == [(0, 700, 900), (0, 1000, 1200), (0, 1300, 1500), (0, 1600, 1800)]
    assert b.queue_max == 0
    # with the recommended workers, the GPU is fed
    fed = analysed(tmp_path / "fed.jsonl", dataclasses.replace(starving, partitions=12, workers=3))
    assert fed.devices[0].busy_pct == approx(100) and fed.balance.starvation == []
    assert fed.balance.workers_needed == 3


def test_lock_contention_between_two_gpu_workers(tmp_path):
    # Two GPU workers share the lock: hold 100 (sync 10, kernel 80, download 10), hand-over
    # 2, epilogue 50 outside the lock. The lock turns every 102 ms; steady: 6 periods.
    shared = Pipeline(partitions=8, synth_ms=50, workers=8, gpu_workers=2, handoff_ms=2, epilogue_ms=50,
                      steps=(("sync", 10), ("kernel", 80), ("download", 10)))
    a = analysed(tmp_path / "t.jsonl", shared)
    d = a.devices[0]
    assert a.span_ms == 6 * 102
    assert d.busy_pct == approx(100 * 80 / 102) and d.lock_held_pct == approx(100 * 100 / 102)
    # waiting behind the holder is not idle time of its own: only the hand-over is
    assert d.gaps_ms == only(d.gaps_ms, sync=60, download=60, lock_wait=12)
    # ... but each partition did wait: from its pickup (its worker's epilogue end) to the lock
    assert [p.lock_wait_ms for p in a.partitions] == [102, 54, 54, 54, 54, 54]
    # one GPU worker: the epilogue outside the lock leaves queued partitions waiting
    alone = analysed(tmp_path / "one.jsonl", dataclasses.replace(shared, gpu_workers=1))
    assert alone.devices[0].gaps_ms == only(alone.devices[0].gaps_ms, sync=60, download=60, dispatch=300)
    assert alone.devices[0].busy_pct == approx(100 * 80 / 150)


def test_perfect_pipeline(tmp_path):
    # Two workers at 150 ms each outpace a GPU at 100: kernels run back to back from 150.
    a = analysed(tmp_path / "t.jsonl", Pipeline(partitions=10, synth_ms=150, workers=2))
    d = a.devices[0]
    assert d.busy_pct == approx(100) and d.bracket_pct == approx(100)
    assert sum(d.gaps_ms.values()) == 0 and d.gaps == []
    assert (a.balance.workers, a.balance.workers_needed) == (2, 2)
    assert a.balance.queue_max >= 1
    whole = analysed(tmp_path / "w.jsonl", Pipeline(partitions=10, synth_ms=150, workers=2), "whole")
    assert whole.devices[0].busy_pct == approx(100 * 1000 / 1150)  # 150 ms of warm-up


def test_every_cause_in_the_lock(tmp_path):
    # One period: hand-over 4, then upload 10, alloc 5, 3 unrecorded, kernel 50, sync 7,
    # download 8, epilogue 6 in the lock: 93 ms, 43 of them idle.
    steps = (("staging", 10), ("alloc", 5), ("gap", 3), ("kernel", 50), ("sync", 7), ("download", 8),
             ("epilogue", 6))
    a = analysed(tmp_path / "t.jsonl", Pipeline(partitions=6, synth_ms=10, workers=6, steps=steps, handoff_ms=4))
    d = a.devices[0]
    assert a.span_ms == 4 * 93
    assert d.gaps_ms == only(d.gaps_ms, upload=40, alloc=20, launch=12, sync=28, download=32, epilogue=24,
                             lock_wait=16)


def test_overlapping_activities_go_to_the_first_cause(tmp_path):
    path = tmp_path / "t.jsonl"
    ids = {"job": "j", "partition": 0, "device": 0}
    with TimelineWriter(path) as w:
        w.instant("picked_up", at_ms=0, **ids, gpu_worker=0)
        w.interval("lock_held", 0, 100, **ids, gpu_worker=0)
        w.kernel("msm", 0, 10, **ids)
        w.interval("sync", 10, 90, device=0)
        w.interval("download", 40, 60, **ids)  # inside the sync: download wins
        w.interval("staging", 50, 70, **ids)  # overlaps both: download, then upload
        w.kernel("msm", 90, 100, **ids)
    d = analyze(read(path)).devices[0]
    assert d.gaps_ms == only(d.gaps_ms, sync=50, download=20, upload=10)
    assert d.gaps == [(10, 40, "sync"), (40, 60, "download"), (60, 70, "upload"), (70, 90, "sync")]


def test_staging_counts_as_upload_only_while_a_partition_waits_for_it(tmp_path):
    """Nothing in flight while the next partition is queued and not yet staged: dispatch;
    then while it is staged (nothing in flight still): staging; once it is picked up and
    its kernels wait for the rest of the upload: upload."""
    d = _second_partition(tmp_path, staging=(20, 40), epilogue_end=30, picked_up=30, kernel_start=40, worker=0)
    assert d.gaps == [(10, 20, "dispatch"), (20, 30, "staging"), (30, 40, "upload")]


def test_a_staged_partition_waiting_for_a_worker_is_pickup(tmp_path):
    """Staged at 20, picked up at 35 (its worker held up: an epilogue's GIL on the H200):
    the device's idle from 20 to 35 is pickup, the staging before it staging."""
    d = _second_partition(tmp_path, staging=(5, 20), epilogue_end=35, picked_up=35, kernel_start=36, worker=1)
    assert d.gaps == [(10, 20, "staging"), (20, 35, "pickup"), (35, 36, "launch")]


def _second_partition(tmp_path, staging, epilogue_end, picked_up, kernel_start, worker):
    """Partition 0 runs 0-10 (then its epilogue outside the lock until ``epilogue_end``);
    partition 1, queued at 0, is staged over ``staging``, picked up by GPU worker
    ``worker`` at ``picked_up`` and runs from ``kernel_start`` to 50. Its device's figures."""
    path = tmp_path / "t.jsonl"
    first, second = ({"job": "j", "partition": p, "device": 0} for p in (0, 1))
    with TimelineWriter(path) as w:
        for ids in (first, second):
            w.instant("queued", at_ms=0, job="j", partition=ids["partition"])
        w.instant("picked_up", at_ms=0, **first, gpu_worker=0)
        w.interval("lock_held", 0, 10, **first, gpu_worker=0)
        w.kernel("msm", 0, 10, **first)
        w.interval("epilogue", 10, epilogue_end, **first, in_lock=False)
        w.interval("staging", *staging, **second)
        w.instant("picked_up", at_ms=picked_up, **second, gpu_worker=worker)
        w.interval("lock_held", picked_up, 50, **second, gpu_worker=worker)
        w.kernel("msm", kernel_start, 50, **second)
    return analyze(read(path)).devices[0]


def test_work_queued_behind_the_previous_partition(tmp_path):
    """The engine's GPU workers launch under the lock and wait after it: partition 1 is
    launched (lock held 20-25) while partition 0's kernels run (0-40), so the lock costs
    no device time, and partition 0 stays in flight until its device work is seen done
    (the bracket's end, 42), not at its lock release (5)."""
    path = tmp_path / "t.jsonl"
    first, second = ({"job": "j", "partition": p, "device": 0} for p in (0, 1))
    with TimelineWriter(path) as w:
        w.instant("picked_up", at_ms=0, **first, gpu_worker=0)
        w.interval("lock_held", 0, 5, **first, gpu_worker=0)
        w.interval("gpu_bracket", 1, 42, **first, gpu_worker=0)
        w.kernel("msm", 2, 40, **first)
        w.instant("picked_up", at_ms=20, **second, gpu_worker=1)
        w.interval("lock_held", 20, 25, **second, gpu_worker=1)
        w.interval("gpu_bracket", 21, 80, **second, gpu_worker=1)
        w.kernel("msm", 44, 78, **second)
    d = analyze(read(path)).devices[0]
    assert d.gaps == [(0, 2, "launch"), (40, 44, "launch"), (78, 80, "launch")]
    assert d.held_idle_pct == approx(100 * 2 / 80)  # 0-2 only: 20-25 overlaps partition 0's kernel
    assert d.lock_held_pct == approx(100 * 10 / 80)


def test_kernel_efficiency_against_the_peaks(tmp_path):
    path = tmp_path / "t.jsonl"
    ids = {"job": "j", "partition": 0, "device": 0}
    with TimelineWriter(path) as w:
        w.kernel("ntt", 0, 10, **ids, fr_muls=252_500_000)  # 25.25 G/s: half of 50.5
        w.kernel("msm_g1", 10, 30, **ids, fq_muls=134_000_000)  # 6.7 G/s: a quarter of 26.8
        w.kernel("both", 30, 40, **ids, fr_muls=101_000_000, fq_muls=53_600_000)  # 20% + 20%
        w.kernel("uncounted", 40, 50, **ids)
    phases = {p.phase: p for p in analyze(read(path), peaks=Peaks(50.5, 26.8)).phases}
    assert phases["ntt"].fr_gmul_s == approx(25.25) and phases["ntt"].efficiency_pct == approx(50)
    assert phases["msm_g1"].fq_gmul_s == approx(6.7) and phases["msm_g1"].efficiency_pct == approx(25)
    assert phases["both"].efficiency_pct == approx(40)
    assert phases["uncounted"].efficiency_pct is None and phases["uncounted"].kernels == 1
    custom = {p.phase: p for p in analyze(read(path), peaks=Peaks(fr_mul_gps=25.25)).phases}
    assert custom["ntt"].efficiency_pct == approx(100)


def test_nvml_mean_and_zero_share(tmp_path):
    path = tmp_path / "t.jsonl"
    with TimelineWriter(path) as w:
        write(CUZK, w)
        for k in range(110):  # every 10 ms: 100, 0, 50, 100, 0, 50, ...
            w.instant("nvml", at_ms=10.0 * k, device=0, util_pct=(100, 0, 50)[k % 3], mem_used_bytes=1 << 30)
    a = analyze(read(path), "steady")  # [145, 945]: samples 150 .. 940, k = 15 .. 94
    values = [(100, 0, 50)[k % 3] for k in range(15, 95)]
    assert a.devices[0].nvml_mean_pct == approx(sum(values) / len(values))
    assert a.devices[0].nvml_zero_pct == approx(100 * values.count(0) / len(values))


def test_steady_window_is_the_devices_common_periods(tmp_path):
    path = tmp_path / "t.jsonl"
    with TimelineWriter(path) as w:
        long = write(Pipeline(partitions=10, synth_ms=150, workers=2), w, job="a", device=0)
        short = write(Pipeline(partitions=6, synth_ms=100, steps=(("kernel", 50),)), w, job="b", device=1)
    a = analyze(read(path), "steady")
    # device 0's steady state is [250, 1050], device 1's [200, 600]
    assert (long[1], long[-1], short[1], short[-1]) == (250, 1050, 200, 600)
    assert (a.start_ms, a.end_ms) == (250, 600)
    assert [d.device for d in a.devices] == [0, 1]
    assert a.mean("busy_pct") == approx(sum(d.busy_pct for d in a.devices) / 2)


def test_no_steady_state_without_three_partitions(tmp_path):
    with pytest.raises(ValueError, match="no steady state"):
        analysed(tmp_path / "t.jsonl", dataclasses.replace(CUZK, partitions=2))
    with pytest.raises(ValueError, match="window must be one of"):
        analysed(tmp_path / "u.jsonl", CUZK, "warm")


steps = st.lists(st.tuples(st.sampled_from(["kernel", "sync", "alloc", "staging", "download", "epilogue", "gap"]),
                           st.integers(1, 30)), min_size=1, max_size=6).map(lambda s: (("kernel", 10), *s))
pipelines = st.builds(Pipeline, partitions=st.integers(3, 8), synth_ms=st.integers(10, 300),
                      workers=st.integers(1, 3), gpu_workers=st.integers(1, 2), steps=steps.map(tuple),
                      handoff_ms=st.integers(0, 5), epilogue_ms=st.integers(0, 20))


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(pipelines, st.sampled_from(["whole", "steady"]))
def test_every_idle_millisecond_has_one_cause(tmp_path, pipeline, window):
    a = analysed(tmp_path / "t.jsonl", pipeline, window)
    d = a.devices[0]
    idle = a.span_ms * (1 - d.busy_pct / 100)
    assert sum(d.gaps_ms.values()) == approx(idle, abs=1e-6)
    assert sum(end - start for start, end, _ in d.gaps) == approx(idle, abs=1e-6)
    assert all(a.start_ms <= s < e <= a.end_ms for s, e, _ in d.gaps)
    assert all(e1 <= s2 for (_, e1, _), (s2, _, _) in zip(d.gaps, d.gaps[1:]))  # no overlap
    assert d.busy_pct <= d.bracket_pct + 1e-9 <= d.lock_held_pct + 2e-9


def test_a_timeline_without_kernels(tmp_path):
    path = tmp_path / "t.jsonl"
    with TimelineWriter(path) as w:
        w.interval("synthesis", 0, 10, job="j", partition=0, worker=0)
        w.instant("failed", at_ms=10, job="j", partition=0, stage="synthesis", error="ValueError: bad witness")
    a = analyze(read(path))
    assert (a.span_ms, a.devices, a.failed, a.done) == (10, [], 1, 0)
    with pytest.raises(ValueError, match="no steady state"):
        analyze(read(path), "steady")


GAPS_IN_PHASE = Pipeline(partitions=6, synth_ms=50, fr_muls=4_000_000, records=((0, 40, 7), (60, 40, 7)))


def test_launch_gaps_inside_a_phase(tmp_path):
    """One 100 ms phase per partition, its two kernels 40 ms each with 20 ms between."""
    a = analysed(tmp_path / "t.jsonl", GAPS_IN_PHASE)
    (d,) = a.devices
    assert a.traced and (a.start_ms, a.end_ms) == (150, 550)
    assert (d.busy_pct, d.kernel_busy_pct, d.phase_gap_pct, d.outside_phases_pct) == (100, 80, 20, 0)
    assert d.gaps_ms["phase_gap"] == 80 and sum(d.gaps_ms.values()) == 80
    assert a.balance.kernel_ms == 80 and all(p.kernel_ms == 80 for p in a.partitions)
    (phase,) = a.phases
    assert (phase.device_ms, phase.kernel_ms, phase.launches) == (400, 320, 8)
    assert phase.fr_gmul_s == 4 * 4_000_000 / 320 / 1e6  # products over the kernels' time, not the phases'
    assert [(k.name, k.launches, k.device_ms, k.mean_us) for k in a.kernels] == [("k7", 8, 320, 40_000)]


def test_overlapping_kernels_on_two_streams_count_once(tmp_path):
    """Stream 7 runs [0, 60] and [85, 95], stream 9 [30, 80]: busy 90 of each 100 ms."""
    a = analysed(tmp_path / "t.jsonl", Pipeline(partitions=6, synth_ms=50,
                                                records=((0, 60, 7), (30, 50, 9), (85, 10, 7))))
    (d,) = a.devices
    assert (d.kernel_busy_pct, d.phase_gap_pct) == (90, 10)
    assert d.gaps_ms["phase_gap"] == 40
    assert {k.name: (k.launches, k.device_ms) for k in a.kernels} == {"k7": (8, 280), "k9": (4, 200)}


def test_kernels_outside_phases(tmp_path):
    """A kernel in the 10 ms before each phase (launched outside any phase) is busy time."""
    a = analysed(tmp_path / "t.jsonl", Pipeline(partitions=6, synth_ms=50, steps=(("gap", 10), ("kernel", 90)),
                                                records=((-10, 10, 7), (0, 90, 7))))
    (d,) = a.devices
    assert (d.busy_pct, d.kernel_busy_pct, d.phase_gap_pct, d.outside_phases_pct) == (90, 100, 0, 10)
    assert sum(d.gaps_ms.values()) == 0


def test_without_records_the_phases_are_busy(tmp_path):
    a = analysed(tmp_path / "t.jsonl", Pipeline(partitions=6, synth_ms=50))
    (d,) = a.devices
    assert not a.traced and a.kernels == [] and a.clock is None
    assert (d.busy_pct, d.kernel_busy_pct, d.phase_gap_pct) == (100, None, None)
    assert a.phases[0].kernel_ms is None and a.phases[0].launches is None
