"""PhaseTimer's mapping of device events onto the host clock, with a fake CUDA whose
events carry device times (ms) that the test chooses."""

from __future__ import annotations

import itertools

import pytest

from numba_cuzk.groth16 import timing


class FakeEvent:
    def __init__(self, clock) -> None:
        self.clock, self.at = clock, None

    def record(self, stream) -> None:
        self.at = next(self.clock)

    def synchronize(self) -> None:
        pass


class FakeCuda:
    """Events record the next device time of ``times``; elapsed time is their difference."""

    def __init__(self, times) -> None:
        self.clock = iter(times)

    def event(self) -> FakeEvent:
        return FakeEvent(self.clock)

    @staticmethod
    def event_elapsed_time(a: FakeEvent, b: FakeEvent) -> float:
        return b.at - a.at


@pytest.fixture
def timer(monkeypatch):
    """A timer whose anchor is recorded at device 0 ms and host 100 ms, and one phase that
    runs from device 2 ms to 5 ms."""
    monkeypatch.setattr(timing, "cuda", FakeCuda([0.0, 2.0, 5.0]))
    monkeypatch.setattr(timing, "host_ms", lambda: next(host))
    host = itertools.count(100.0)
    t = timing.PhaseTimer(stream=object())
    t.sync_anchor()
    with t.phase("msm"):
        pass
    return t


def test_device_times_map_from_the_anchor_record(timer):
    assert timer.anchor_host_ms == 100.0
    assert timer.intervals_ms() == [("msm", 102.0, 105.0)]
    assert timer.intervals_ms(launched_ms=101.0) == [("msm", 102.0, 105.0)]  # the bound holds already


def test_a_delayed_anchor_is_raised_to_the_launch(timer):
    """The anchor's record was held up (it completed later than the host read): the
    phase cannot start before the host launched it, at 110 ms."""
    assert timer.intervals_ms(launched_ms=110.0) == [("msm", 110.0, 113.0)]


def test_timers_sharing_a_clock_anchor_map_alike(monkeypatch):
    """Two timers on one ClockAnchor use its one event and host time, so their phases line
    up with each other whatever happens between them; of the anchor's three records, the
    one whose call returned soonest is kept (host 110 -> 111: 1 ms, against 5 and 3)."""
    monkeypatch.setattr(timing, "cuda", FakeCuda([0.0, 10.0, 20.0, 30.0, 34.0, 40.0, 43.0]))
    host = iter([100.0, 105.0, 110.0, 111.0, 120.0, 123.0, 130.0])
    monkeypatch.setattr(timing, "host_ms", lambda: next(host))
    anchor = timing.ClockAnchor(clock=object(), refresh_s=60)
    first, second = (timing.PhaseTimer(stream=object(), anchor=anchor) for _ in range(2))
    assert anchor.error_ms == 1.0
    for t, name in ((first, "a"), (second, "b")):
        assert t.sync_anchor() == 110.0  # the kept record's host time (device 10 ms)
        with t.phase(name):
            pass
    assert first.intervals_ms() == [("a", 130.0, 134.0)]
    assert second.intervals_ms() == [("b", 140.0, 143.0)]


def test_a_clock_anchor_is_refreshed_once_old(monkeypatch):
    monkeypatch.setattr(timing, "cuda", FakeCuda([0.0, 50.0]))
    host = iter([0.0, 0.0, 20_000.0, 20_000.0, 20_000.0, 20_000.0])
    monkeypatch.setattr(timing, "host_ms", lambda: next(host))
    anchor = timing.ClockAnchor(clock=object(), refresh_s=10, tries=1)
    assert anchor.current()[1] == 0.0
    assert anchor.current()[1] == 20_000.0  # 20 s later: a new record
