"""CUDA graphs: a stream's work captured once, then replayed with one launch.

    with cuda_graph.capture(stream) as captured:   # launches inside are recorded, not run
        ...kernels, memsets, async copies on stream...
    captured.graph.launch(stream)                   # runs all of it (again on every call)

A proof's device work is ~90 launches (matvec, NTT passes, five MSMs' classify, scan,
scatter, accumulate and reduce levels) and five downloads. From Python each launch costs
the host 25-250 us (argument marshalling, under a GIL shared with the engine's other
threads), so when a partition starts on a drained device its short kernels wait on the
host (the timeline's phase_gap: 1.8 ms per partition on the H200). Replayed, the same work
is one cuGraphLaunch. A graph holds the kernels' arguments as they were at capture: the
same buffers and sizes, so it serves one proof slot of one Prover (prove.py).

Capture is "relaxed" (other threads may call the driver meanwhile) and Numba's deferred
frees are held back during it (a free synchronizes, which a capture forbids). Events that
time the graph's work are recorded with ``record_event`` (external event nodes: a replay
records them again). The legacy default stream cannot be captured: ``capturable`` says
whether a stream can. Not in the simulator.
"""

from __future__ import annotations

from contextlib import contextmanager
from typing import Iterator

from numba_cuzk import _compat  # noqa: F401,I001  (numba patched before its first use)
from numba import config, cuda


def _driver():
    from numba.cuda.cudadrv.driver import binding, driver

    return driver, binding


def capturable(stream) -> bool:
    """Whether ``stream`` (a Numba stream) can be captured: a real GPU and a stream of its
    own (not the default one)."""
    return not config.ENABLE_CUDASIM and stream is not None and bool(int(stream.handle or 0))


class Graph:
    """An instantiated graph (cuGraphExec) and the graph it came from."""

    def __init__(self, graph, executable) -> None:
        self._graph, self._exec = graph, executable

    def launch(self, stream) -> None:
        """Queue the whole graph on ``stream`` (returns at once)."""
        driver, _ = _driver()
        driver.cuGraphLaunch(self._exec, int(stream.handle))

    def __del__(self) -> None:
        try:
            driver, _ = _driver()
            driver.cuGraphExecDestroy(self._exec)
            driver.cuGraphDestroy(self._graph)
        except Exception:  # noqa: BLE001 (a context already gone at exit)
            pass


class Captured:
    """What ``capture`` yields: ``graph`` is set once the block ends without error."""

    graph: Graph | None = None


@contextmanager
def capture(stream) -> Iterator[Captured]:
    """Record the work queued on ``stream`` inside the block into a Graph (nothing runs).
    On an error inside, the capture is ended and dropped, and the error propagates."""
    driver, binding = _driver()
    handle = int(stream.handle)
    captured = Captured()
    with cuda.defer_cleanup():
        driver.cuStreamBeginCapture(handle, binding.CUstreamCaptureMode.CU_STREAM_CAPTURE_MODE_RELAXED)
        try:
            yield captured
        except BaseException:
            try:
                graph = driver.cuStreamEndCapture(handle)
                driver.cuGraphDestroy(graph)
            except Exception:  # noqa: BLE001 (an invalidated capture: the first error matters)
                pass
            raise
        graph = driver.cuStreamEndCapture(handle)
    captured.graph = Graph(graph, driver.cuGraphInstantiate(graph, 0))


def record_event(event, stream) -> None:
    """``event.record(stream)``, which inside a capture becomes a node of the graph."""
    driver, binding = _driver()
    driver.cuEventRecordWithFlags(int(event.handle), int(stream.handle),
                                  binding.CUevent_record_flags.CU_EVENT_RECORD_EXTERNAL)
