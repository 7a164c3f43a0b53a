"""The engine's knobs (``EngineConfig``), checked when made."""

from __future__ import annotations

import os
from dataclasses import asdict, dataclass, field
from typing import Callable

SYNTHESIS_KINDS = ("process", "thread")
ASSEMBLY_KINDS = ("thread", "process")
TRACE_KINDS = ("kernels", "counters")
WITNESS_BYTES_PER_WIRE = 32  # one (8, n_vars) uint32 Fr column per wire


def trace_kinds(trace: str | None) -> frozenset[str]:
    """The kinds a ``trace`` setting names ("kernels", "counters", "kernels,counters");
    ValueError for a kind not in TRACE_KINDS."""
    kinds = frozenset(k.strip() for k in (trace or "").split(",") if k.strip())
    unknown = sorted(kinds - set(TRACE_KINDS))
    if unknown or (trace is not None and not kinds):
        raise ValueError(f"trace names kinds out of {', '.join(TRACE_KINDS)} (comma-separated), not {trace!r}")
    return kinds


def _default_workers() -> int:
    return max(1, (os.cpu_count() or 2) - 1)  # one core left for the GPU workers and epilogues


def physical_memory_bytes() -> int:
    return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")


@dataclass(frozen=True)
class EngineConfig:
    """How an ``Engine`` runs.

    devices: CUDA ordinals to prove on, one GPU consumer each. None: every visible GPU,
        or the CPU backend (one consumer, device id 0) when there is none. (): the CPU
        backend even when a GPU is present.
    synthesis_workers: partitions synthesized at once.
    synthesis_warmup: a synthesizer run once by every synthesis process as it starts (once
        in all for threads), its result dropped: it compiles the synthesizers' Numba code
        before the first partition is timed. None: no warm-up.
    synthesis: "process" (default) runs synthesizers in spawned processes, the witness
        coming back pickled; "thread" runs them in threads of this process. The built-in
        circuit builders hold the GIL for most of their time, so threads do not scale
        (``python -m bench.engine`` measures both); threads suit synthesizers that release
        the GIL, are cheap (a file read), or cannot be pickled (lambdas).
    gpu_workers_per_device: GPU workers sharing one device's lock (cuzk's gw). The lock
        covers launching a partition's device work, so with 2 (the default) one worker
        queues the next partition while the device runs the other's (proofs are assembled
        off the workers' path, see ``assembly``): on the H200, bit_heavy 2^20 x 10 partitions,
        0.579 s per proof and device busy 97.4% against 0.676 s and 80.4% with 1.
    max_in_flight: partitions admitted at once (synthesizing, queued, or on a device);
        None: synthesis_workers + 2 per GPU worker, enough to keep every worker fed.
    host_memory_budget_bytes: witness bytes admitted at once, 32 B per wire per
        partition, held from synthesis start to its staging (the copy into a device's
        pinned proof slot: gpu_workers_per_device + 1 per key and device); a partition
        waits until its witness fits. None: a quarter of physical memory.
    device_memory_budget_bytes: proving-key bytes resident per device (gpu.key_bytes: a Prover's plan);
        least recently used keys are evicted past it. None: no limit.
    timeline_path: where to write the JSONL timeline (numba_cuzk.events); None: none.
    timeline_live: the timeline is at ``timeline_path`` while the engine runs (a daemon's,
        watched live), not renamed there at close (events.TimelineWriter's ``live``).
    nvml_period_ms: NVML sampling period of the timeline's ``nvml`` events.
    assembly: where proofs are assembled and checked once their device work is collected,
        off the GPU workers' path (numba_cuzk.engine.assembly): "thread" (default) or
        "process" (spawned, off this process's GIL).
    trace: "kernels" records every kernel and copy the GPUs run (CUPTI; ``cupti_kernel``
        and ``cupti_memcpy`` events, numba_cuzk.engine.kernel_trace) in the timeline;
        without cupti-python, or on the CPU backend, the engine says so once and runs
        untraced. "counters" samples the GPUs' hardware counters (NVML GPM: SM activity,
        occupancy, pipe utilization, DRAM and PCIe/NVLink rates) every
        ``counters_period_ms`` as ``counters`` events (numba_cuzk.engine.counters); where GPM
        cannot run, a ``counters_unavailable`` event says why. "kernels,counters": both.
        None: no trace.
    counters_period_ms: the counters' sampling period (100 ms: the >= 10 Hz the report's
        per-phase figures need; one sample costs ~0.1 ms of a thread off the launch path).
    graphs: each proof slot's device work captured once as a CUDA graph and replayed, one
        launch per partition instead of ~90 (numba_cuzk.cuda_graph; groth16.prove.Prover).
        False: every kernel launched from Python, as a single Prover does.
    switch_interval_ms: the interpreter's GIL switch interval (sys.setswitchinterval) while
        the engine runs, restored at close. A GPU worker's pickup and graph launch release
        the GIL a handful of times while a proof's epilogue runs Python in another thread,
        and each time it may wait one full interval to get it back (the convoy of
        bench/gil.py: 20 such calls 1.4 ms alone, 104 ms beside Python big-int work at the
        default 5 ms, 13 ms at 0.5 ms). None: leave the interval as it is.
    tail: the Provers' bit/tail split for witnesses of at most ``tail`` scalars other than
        0 and 1 (groth16.prove.Prover's ``tail``, msm/bits.py; PoRep's are all bits but a
        few dozen); a partition past it fails (TailOverflow). None: the plain MSMs.
    """

    devices: tuple[int, ...] | None = None
    synthesis_workers: int = field(default_factory=_default_workers)
    synthesis_warmup: Callable[[], object] | None = None
    synthesis: str = "process"
    gpu_workers_per_device: int = 2
    max_in_flight: int | None = None
    host_memory_budget_bytes: int | None = None
    device_memory_budget_bytes: int | None = None
    timeline_path: str | os.PathLike | None = None
    timeline_live: bool = False
    nvml_period_ms: float = 100.0
    assembly: str = "thread"
    trace: str | None = None
    counters_period_ms: float = 100.0
    graphs: bool = True
    switch_interval_ms: float | None = 0.5
    tail: int | None = None

    def __post_init__(self) -> None:
        if self.devices is not None:
            object.__setattr__(self, "devices", tuple(int(d) for d in self.devices))
        if self.synthesis not in SYNTHESIS_KINDS:
            raise ValueError(f"synthesis must be one of {', '.join(SYNTHESIS_KINDS)}, not {self.synthesis!r}")
        if self.assembly not in ASSEMBLY_KINDS:
            raise ValueError(f"assembly must be one of {', '.join(ASSEMBLY_KINDS)}, not {self.assembly!r}")
        trace_kinds(self.trace)
        positive = {"synthesis_workers": self.synthesis_workers, "gpu_workers_per_device": self.gpu_workers_per_device,
                    "max_in_flight": self.max_in_flight, "host_memory_budget_bytes": self.host_memory_budget_bytes,
                    "device_memory_budget_bytes": self.device_memory_budget_bytes,
                    "nvml_period_ms": self.nvml_period_ms, "counters_period_ms": self.counters_period_ms,
                    "switch_interval_ms": self.switch_interval_ms}
        bad = [f"{name} = {value!r}" for name, value in positive.items() if value is not None and not value > 0]
        if bad:
            raise ValueError(f"engine settings must be positive: {', '.join(bad)}")

    def in_flight(self, gpu_workers: int) -> int:
        """max_in_flight, resolved for ``gpu_workers`` GPU workers in all."""
        return self.max_in_flight or self.synthesis_workers + 2 * gpu_workers

    def host_budget(self) -> int:
        """host_memory_budget_bytes, resolved (bytes)."""
        return self.host_memory_budget_bytes or physical_memory_bytes() // 4

    def as_dict(self) -> dict:
        """The knobs, JSON-ready (the timeline header's ``config``)."""
        d = asdict(self)
        d["devices"] = None if self.devices is None else list(self.devices)
        d["synthesis_warmup"] = None if self.synthesis_warmup is None else repr(self.synthesis_warmup)
        d["timeline_path"] = None if self.timeline_path is None else os.fspath(self.timeline_path)
        return d
