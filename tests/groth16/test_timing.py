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
