"""Groth16 proof time on the GPU by phase, keys resident, and the CPU backend in the same run.

For each size 2^K: a built-in circuit (circuits/builtin.py, --circuit, default the
bit-heavy one: a witness of 0s and 1s like Filecoin's) of at most 2^K - n_public - 1
constraints, an insecure local setup on the GPU straight into a device-resident key
(setup(resident=True): the queries stay where setup made them, B2 in pinned host memory
when the plan streams it; --host-key: copied back to the host and uploaded by the Prover),
a Prover, one warm-up proof, then --runs proofs. Records (bench/results/groth16/):
prove_logK (ms: wall time of prove(), witness upload to verified proof, median), with
params holding the median device ms of each phase (CUDA events: upload, matvec, ntt, msm_a,
msm_b1, msm_b2, msm_c, msm_h, download; stream_<query>: a streamed query's copies, which
overlap the kernels) and the host epilogue; prove_logK_device_ms (median sum of the device
phases, copies overlapped by the stream left out), prove_logK_peak_gpu_gb (the most device
memory in use, cudaMemGetInfo sampled every 2 ms by a thread from before the Prover is made
to after the last proof: deferred frees included; params: the baseline before the Prover,
the plan's bytes, and whether peak - baseline stayed within what the plan had still to
allocate), setup_logK_s (params: its steps' ms), prove_logK_peak_host_gb (the process's peak RSS);
prove_logK_cpu for the CPU backend (--cpu sizes, all cores). Another --circuit than
bit_heavy puts its name after the size (prove_log20_mimc, setup_log20_mimc_s). Every proof is verified
(pairing) inside prove(). --tails none,65536: one key, then a Prover per entry, one after the
other (the first freed before the next): "none" the plain MSMs (the names above), a number
the bit/tail split for that many non-bit scalars (msm/bits.py), whose records carry _split
after the size (prove_log27_split, prove_log27_split_device_ms, ...; params.tail): before
and after in one call, the key's setup paid once. Usage:
    python3 -m bench.groth16 [--out FILE] [--sizes 16,18,20,22] [--cpu 16] [--runs 5] [--budget-gb G] [--host-key]
                             [--circuit bit_heavy|mimc|...] [--tails none,65536]
"""

from __future__ import annotations

import argparse
import gc
import resource
import statistics
import threading
import time
from typing import Iterator

from numba import cuda

from bench import common
from numba_cuzk.circuits import build
from numba_cuzk.groth16 import memory
from numba_cuzk.groth16.prove import STREAM_PHASES, Prover, placed_queries
from numba_cuzk.groth16.setup import setup
from numba_cuzk.groth16.timing import PhaseTimer

HOST_PHASES = {"stage", "blinding", "sync", "epilogue"}
GB = 1e9


class PeakMemory:
    """The most device memory in use (cudaMemGetInfo: total - free, every allocation on the
    device, frees Numba has deferred included) seen by a thread sampling every
    ``period_s`` from ``start`` to ``stop``, and at both."""

    def __init__(self, period_s: float = 0.002) -> None:
        self.period_s, self.peak = period_s, 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="peak-memory", daemon=True)

    def _sample(self) -> None:
        free, total = cuda.current_context().get_memory_info()
        self.peak = max(self.peak, int(total - free))

    def _run(self) -> None:
        while not self._stop.is_set():
            self._sample()
            self._stop.wait(self.period_s)

    def start(self) -> PeakMemory:
        self._sample()
        self._thread.start()
        return self

    def stop(self) -> int:
        self._stop.set()
        self._thread.join()
        self._sample()
        return self.peak


def bench_size(log_n: int, circuit: str, gpu: bool, runs: int, device: str, budget: int | None = None,
               host_key: bool = False, tails: tuple[int | None, ...] = (None,)) -> Iterator[list[dict]]:
    """The records of one size: setup's first (GPU), then a list per Prover as soon as it
    is measured (a run cut short by its time limit keeps the Provers before it)."""
    t0 = time.perf_counter()
    r1cs, witness = build(circuit, log_n, seed=log_n)
    t_build = time.perf_counter() - t0
    resident = gpu and not host_key
    setup_steps: dict[str, float] = {}
    pk = setup(r1cs, gpu=gpu, resident=resident, memory_budget=budget, steps_ms=setup_steps)
    t_setup = time.perf_counter() - t0 - t_build
    constraints, wires = r1cs.n_constraints, r1cs.n_wires
    del r1cs  # the host's and device's garbage of setup goes before the baseline
    if gpu:
        yield [common.record(f"setup_log{log_n}{'' if circuit == 'bit_heavy' else '_' + circuit}_s", t_setup,
                             "s", device, {"circuit": circuit, "gpu": True,
                                           "steps_ms": {k: round(v) for k, v in setup_steps.items()}},
                             timing=common.CALL_LATENCY)]
    for tail in tails if gpu else (None,):
        gc.collect()
        yield bench_prover(pk, witness, log_n, circuit, gpu, runs, device, budget, resident, tail,
                           {"constraints": constraints, "wires": wires, "setup_s": round(t_setup, 2),
                            "build_s": round(t_build, 2)})
        gc.collect()  # this Prover's buffers go before the next one's baseline


def bench_prover(pk, witness, log_n: int, circuit: str, gpu: bool, runs: int, device: str, budget: int | None,
                 resident: bool, tail: int | None, build: dict) -> list[dict]:
    """A Prover for ``pk`` (``tail``: its bit/tail split), one warm-up proof, ``runs``
    timed ones: the records of the module docstring."""
    baseline = memory.used_bytes() if gpu else None  # flushes the frees Numba deferred
    peak = PeakMemory().start() if gpu else None
    placed = sum(memory.query_bytes(memory.KeyShape.of(pk), q) for q in placed_queries(pk)) if gpu else 0
    t0 = time.perf_counter()
    prover = Prover(pk, gpu=gpu, memory_budget=None if budget is None else budget - placed, tail=tail)
    t_prover = time.perf_counter() - t0
    prover.prove(witness)  # warm-up: compiles, builds NTT tables
    walls, phases = [], []
    for _ in range(runs):
        timer = PhaseTimer(prover.stream)
        start = time.perf_counter()
        prover.prove(witness, timer=timer)
        walls.append((time.perf_counter() - start) * 1e3)
        phases.append(timer.durations_ms())
    by_phase = {k: round(statistics.median(p[k] for p in phases), 3) for k in phases[0]}
    # the bit-heavy circuit is the plain name; another circuit's figure carries its name
    # (prove_log20_mimc: a random-looking witness, results.md)
    suffix = ("" if circuit == "bit_heavy" else f"_{circuit}") + ("" if tail is None else "_split")
    name = f"prove_log{log_n}{suffix}" + ("" if gpu else "_cpu")
    plan = prover.memory
    params = {"circuit": circuit, **build, "stat": "median", **common.spread(walls), "phases_ms": by_phase,
              "streamed": list(plan.streamed), "key": "resident" if resident else "host", "tail": tail,
              "bits": list(plan.bits), "prover_s": round(t_prover, 2)}
    print(f"{name}: {statistics.median(walls):.1f} ms  {by_phase}  (setup {build['setup_s']:.1f} s, "
          f"Prover {t_prover:.1f} s)", flush=True)
    records = [common.record(name, statistics.median(walls), "ms", device, params, timing=common.CALL_LATENCY)]
    if not gpu:
        return records
    device_runs = [sum(ms for k, ms in p.items() if k not in HOST_PHASES | STREAM_PHASES) for p in phases]
    device_ms = statistics.median(device_runs)
    used = peak.stop()
    to_allocate = plan.device_bytes - plan.placed_bytes  # the resident key's queries are in the baseline
    memory_params = {"baseline_gb": round(baseline / GB, 3), "plan_device_gb": round(plan.device_bytes / GB, 3),
                     "placed": list(plan.placed), "peak_over_baseline_gb": round((used - baseline) / GB, 3),
                     "within_plan": used - baseline <= to_allocate, "streamed": list(plan.streamed),
                     "budget_gb": None if budget is None else round(budget / GB, 3)}
    print(f"{name}: peak host memory {peak_rss_bytes() / GB:.1f} GB", flush=True)
    print(f"{name}: device phases {device_ms:.1f} ms; peak GPU memory {used / GB:.2f} GB "
          f"({memory_params})", flush=True)
    return records + [
        common.record(f"{name}_device_ms", device_ms, "ms", device, {"phases": sorted(set(by_phase) - HOST_PHASES),
                                                                      "tail": tail, **common.spread(device_runs)},
                      timing=common.DEVICE_THROUGHPUT),
        common.record(f"{name}_peak_gpu_gb", used / GB, "GB", device, memory_params, timing=common.CALL_LATENCY),
        common.record(f"{name}_peak_host_gb", peak_rss_bytes() / GB, "GB", device,
                      {"what": "the process's peak resident set (ru_maxrss): build, setup, prover and proofs"},
                          timing=common.CALL_LATENCY),
    ]


def peak_rss_bytes() -> int:
    """This process's peak resident set so far (Linux ru_maxrss is in KiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out")
    parser.add_argument("--sizes", default="16,18,20,22")
    parser.add_argument("--cpu", default="16")
    parser.add_argument("--circuit", default="bit_heavy")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--budget-gb", type=float, help="device memory the key and the prover may plan for (GB; "
                        "default: what is free): a small one makes it stream B2 (then H, C, ...) from pinned host memory")
    parser.add_argument("--host-key", action="store_true", help="setup copies the key back to the host, and the "
                        "Prover uploads it (the path before resident keys)")
    parser.add_argument("--tails", default="none", help="Provers to measure on one key, one after the other: "
                        "none (the plain MSMs) or a number (the bit/tail split for that many non-bit scalars)")
    args = parser.parse_args(argv)
    tails = tuple(None if t == "none" else int(t) for t in args.tails.split(",") if t)
    out = args.out or common.result_path("groth16", [common.gpu_name()])  # GPU and CPU records in one file
    budget = None if args.budget_gb is None else int(args.budget_gb * GB)
    for log_n in [int(x) for x in args.sizes.split(",") if x]:
        for records in bench_size(log_n, args.circuit, True, args.runs, common.gpu_name(), budget, args.host_key,
                                  tails):
            common.write(records, "groth16", out)
    for log_n in [int(x) for x in args.cpu.split(",") if x]:
        for records in bench_size(log_n, args.circuit, False, max(1, args.runs // 2), common.cpu_name()):
            common.write(records, "groth16", out)


if __name__ == "__main__":
    main()
