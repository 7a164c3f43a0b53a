"""The first run says that it compiles: the CLI's commands that prove (``prove``, ``demo``,
``run``) announce a compile before it starts, with an estimate, and show its progress over
the kernels, on a terminal (a rich bar) and in a log (plain lines) alike.

- On a GPU machine whose cache lacks the GPU's kernels (commands/compile.first_run_on_gpu),
  every GPU kernel is compiled first in parallel processes: a step per task.
- On the CPU (and for anything else still missing), kernels compile where the command
  first calls them. numba announces each compile (its ``numba:compile`` event, sent on a
  cache miss only); the first such compile of a registry kernel prints the notice, and
  each that ends is a step of the bar, out of the CPU kernels defined so far that have
  no entry in the cache.
"""

from __future__ import annotations

import contextlib
import os
import sys
import threading
import time
from collections.abc import Iterator

from numba_cuzk import kernel_cache
from numba_cuzk.commands import compile as tasks
from numba_cuzk.commands import progress

# Seconds to compile one CPU kernel on the idle 2-core CPU machine (a first 2^14 CPU
# prove compiled 16 kernels in ~60-74 s), and the GPU kernels' compile on the
# H200's 16 cores (`numba-cuzk compile`: 59.2 s, bench/results): what the estimates scale from.
CPU_KERNEL_S = 4.0
GPU_COMPILE_CORE_S = 59.2 * 16
GPU_LONGEST_TASK_S = 45.0  # a G2 point kernel: no number of cores makes the compile shorter

HINT = "`numba-cuzk compile --fetch ARCHIVE` installs prebuilt kernels (docs/kernel-cache.md)"


def gpu_estimate_s(cores: int | None = None) -> float:
    return max(GPU_LONGEST_TASK_S, GPU_COMPILE_CORE_S / (cores or os.cpu_count() or 1))


def compile_gpu_first(stream=None) -> bool:
    """On a GPU machine's first run of this version of the code: every GPU kernel compiled
    in parallel processes, with a notice and a step per task. False where there was
    nothing to do."""
    stream = stream or sys.stderr
    with tasks.first_run_on_gpu() as first:
        if not first:
            return False
        names = tasks.task_names(cpu_backend=False)
        cores = os.cpu_count() or 1
        print(f"first run of this version here: compiling the GPU kernels once, in {min(cores, len(names))} "
              f"processes (~{gpu_estimate_s(cores):.0f} s); later runs load them. {HINT}", file=stream, flush=True)
        start = time.perf_counter()
        with progress.steps("compiling the GPU kernels", len(names), stream) as advance:
            tasks.compile_all(cpu_backend=False, on_done=lambda r: advance(f"{r.name} {r.seconds:.1f} s (CPU {r.cpu_seconds:.1f} s)"))
        print(f"compiled the GPU kernels into {kernel_cache.cache_dir()} in {time.perf_counter() - start:.0f} s",
              file=stream, flush=True)
    return True


def _uncached_cpu_kernels() -> int:
    """CPU kernels defined so far without a CPU entry in this version's folder."""
    from numba_cuzk.commands.kernel_report import is_cpu_kernel

    missing = 0
    for kernel in [k for k in kernel_cache._KERNELS if is_cpu_kernel(k)]:
        index = getattr(getattr(getattr(kernel, "_cache", None), "_cache_file", None), "_index_path", None)
        if index is None or "cpu" not in kernel_cache._index_targets(index):
            missing += 1
    return missing


class _CompileNotice:
    """numba's compile events, told to the user: a notice at the first compile of a
    registry kernel, then a step per kernel compiled."""

    def __init__(self, stream):
        self._stream, self.lock = stream, threading.Lock()
        self.bar: progress.Steps | None = None
        self.started: dict[int, float] = {}

    def on_start(self, event) -> None:
        dispatcher = event.data["dispatcher"]
        if not kernel_cache.registered(dispatcher):
            return
        with self.lock:
            self.started[id(dispatcher)] = time.perf_counter()
            if self.bar is None:
                missing = max(1, _uncached_cpu_kernels())
                self.bar = progress.Steps("compiling kernels", missing, self._stream, live=False)
                print(f"compiling kernels (the first run of this version here: up to {missing}, ~{CPU_KERNEL_S:.0f} s "
                      f"each); later runs load them. {HINT}", file=self.bar.stream, flush=True)
                self.bar.__enter__()

    def on_end(self, event) -> None:
        dispatcher = event.data["dispatcher"]
        with self.lock:
            start = self.started.pop(id(dispatcher), None)
            if start is not None and self.bar is not None:
                self.bar.advance(f"{dispatcher.py_func.__qualname__} {time.perf_counter() - start:.1f} s")

    def close(self) -> None:
        if self.bar is not None:
            self.bar.__exit__(None, None, None)
            with contextlib.suppress(ValueError, OSError):  # at exit the stream may be closed
                print(f"compiled {self.bar.done} kernels into {kernel_cache.cache_dir()} in "
                      f"{time.perf_counter() - self.bar.start:.0f} s", file=self.bar.stream, flush=True)


def _quietly(tell, event) -> None:
    """A notice runs inside numba's compile: a stream that cannot be written (closed, a
    broken pipe) costs the notice, never the compile."""
    with contextlib.suppress(ValueError, OSError):
        tell(event)


@contextlib.contextmanager
def announce_compiles(stream=None) -> Iterator[None]:
    """Within: each compile of a registry kernel (a cache miss) is announced and counted."""
    from numba.core import event

    notice = _CompileNotice(stream)
    listener = type("Listener", (event.Listener,), {"on_start": lambda self, ev: _quietly(notice.on_start, ev),
                                                    "on_end": lambda self, ev: _quietly(notice.on_end, ev)})()
    event.register("numba:compile", listener)
    try:
        yield
    finally:
        event.unregister("numba:compile", listener)
        notice.close()


_announcing: list = []  # announce_compiles_until_exit's one context


def announce_compiles_until_exit() -> None:
    """announce_compiles() for the rest of the process (a CLI command's work), once however
    often it is called: its summary line is printed at exit."""
    import atexit

    if not _announcing:
        _announcing.append(announce_compiles())
        _announcing[0].__enter__()
        atexit.register(_announcing[0].__exit__, None, None, None)
