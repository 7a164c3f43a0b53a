"""Proof assembly off the GPU workers' path: once a partition's window sums are collected,
its proof is assembled and checked (groth16.prove.assemble: Horner's rule per MSM, r and s,
the pairing check; ~7.5 ms per 2^20 partition on the H200 host) here, and its GPU worker
goes straight back to launching the next partition.

A worker that assembled its own proof was held by it: with both workers of a device
assembling, a staged partition waited for one of them while the device idled (the
"dispatch" idle cause, 0.6 to 4.4 ms per partition on the H200, two GPU workers per device).

``kind`` "thread" (default) assembles in threads of this process: its Python holds the GIL,
so the launching threads wait for it meanwhile (the interpreter hands the GIL over every 5 ms).
"process" assembles in spawned processes, off this process's GIL, the window sums (a few KiB)
and the proof pickled across.
"""

from __future__ import annotations

import multiprocessing
import signal
from concurrent.futures import Executor, Future, ProcessPoolExecutor, ThreadPoolExecutor
from dataclasses import dataclass

from numba_cuzk.engine.config import ASSEMBLY_KINDS
from numba_cuzk.engine.record import now_ns
from numba_cuzk.groth16.keys import Proof
from numba_cuzk.groth16.prove import Blinding, EpilogueKey, assemble

@dataclass(frozen=True)
class Assembled:
    """A checked proof and its assembly's [start_ns, end_ns] (host monotonic clock)."""

    proof: Proof
    start_ns: int
    end_ns: int


def run_assembly(key: EpilogueKey, points: dict, public_inputs: list[int], blinding: Blinding) -> Assembled:
    """Runs in the pool: assemble and check (ValueError if the proof does not verify)."""
    start = now_ns()
    proof = assemble(key, points, public_inputs, check=True, blinding=blinding)
    return Assembled(proof, start, now_ns())


def _init_process() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C reaches the engine alone, which drains


class Assembler:
    """``workers`` threads or spawned processes (``kind``) assembling proofs."""

    def __init__(self, kind: str, workers: int) -> None:
        if kind not in ASSEMBLY_KINDS:
            raise ValueError(f"assembly must be one of {', '.join(ASSEMBLY_KINDS)}, not {kind!r}")
        self._executor: Executor = (
            ThreadPoolExecutor(workers, thread_name_prefix="assembly") if kind == "thread" else
            ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("spawn"), initializer=_init_process))

    def submit(self, key: EpilogueKey, points: dict, public_inputs: list[int], blinding: Blinding) -> Future:
        """Future[Assembled]; returns at once."""
        return self._executor.submit(run_assembly, key, points, public_inputs, blinding)

    def shutdown(self) -> None:
        self._executor.shutdown(wait=True)
