"""The proving engine on a PoRep-like workload: jobs x partitions of a built-in circuit.

1. Synthesis scaling: partitions synthesized per second by 1, 2, 4, 8, 16 workers, as
   threads and as processes (each pool warmed up first: a process compiles the builder's
   Numba loops once). Threads only scale if the builder releases the GIL.
2. s/proof (a proof = a job of P partitions) for (a) strictly sequential synthesize-then-
   prove on one Prover, (b) the engine with one GPU worker per device, (c) two GPU workers
   per device sharing its lock (cuzk's gw=2); each engine warmed up by a job of its own,
   left out of the figures. Every proof is checked (pairing) inside the prover.
3. From each engine run's timeline, over its steady state: device busy (union of
   CUDA-event kernel intervals / span) and lock overhead (the lock held while the device
   idles, % of kernel time); constraints/s per GPU; staging per partition (pinned copy and
   upload on the copy stream) and the part of it the device waited for.

Default size: bit_heavy 2^20, 4 jobs x 10 partitions. On the H200 host a 2^20 partition
takes ~0.31 s to synthesize on one core and ~0.06 s to prove on the GPU (bench/results/
groth16-2026-11-29.json), so about 6 synthesis processes match the GPU: with 8 or more the
GPU should never wait, and s/proof measures the GPU side; 40 partitions give a steady
state of 38. Records (bench/results/engine-<date>.json): engine_synthesis_logK_{thread,
process}_wN (partitions/s), engine_sequential_s_per_proof, engine_s_per_proof and
engine_s_per_proof_gw2 (s), engine_speedup_vs_sequential(_gw2) (x), engine_device_busy(_gw2)
(%), engine_lock_overhead(_gw2) (% of kernel time), engine_staging_ms(_gw2) and
engine_upload_wait_ms(_gw2) (ms per partition), engine_constraints_per_s(_gw2) (M/s per GPU).
Runs on the CPU backend too (--cpu, small sizes). Usage:
    python3 -m bench.engine [--out FILE] [--circuit bit_heavy] [--log 20] [--jobs 4]
        [--partitions 10] [--scaling 1,2,4,8,16] [--scaling-log K] [--workers N] [--cpu] [--timeline FILE]
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time
from pathlib import Path

from bench import common
from numba_cuzk import backend
from numba_cuzk.circuits import build
from numba_cuzk.engine import Engine, EngineConfig, Job
from numba_cuzk.engine.synthesis import SynthesisPool
from numba_cuzk.engine.workload import circuit_key, circuit_partitions
from numba_cuzk.fileio import atomic_write
from numba_cuzk.groth16.prove import Prover
from numba_cuzk.groth16.timing import PhaseTimer
from numba_cuzk.timeline import analysis, reader
from numba_cuzk.timeline.reader import Timeline

WARMUP = "warmup"


def synthesis_rate(kind: str, workers: int, synthesizers: list) -> float:
    """Partitions per second of a warm pool of ``workers`` running ``synthesizers``, each
    witness delivered as the engine takes it (from shared memory for processes)."""
    pool = SynthesisPool(kind, workers)
    try:
        for future in [pool.submit(s) for s in synthesizers[:workers]]:  # every worker compiles once
            future.result().witness()
        start = time.perf_counter()
        for future in [pool.submit(s) for s in synthesizers]:
            future.result().witness()
        return len(synthesizers) / (time.perf_counter() - start)
    finally:
        pool.shutdown()


def scaling(circuit: str, log_n: int, counts: list[int], device: str) -> list[dict]:
    records = []
    for kind in ("thread", "process"):
        base = None
        for workers in counts:
            (synthesizers,) = circuit_partitions(circuit, log_n, 1, max(4 * workers, 16))
            rate = synthesis_rate(kind, workers, synthesizers)
            base = base or rate
            print(f"synthesis {kind} x{workers}: {rate:.2f} partitions/s, {rate / base:.2f}x", flush=True)
            records.append(common.record(f"engine_synthesis_log{log_n}_{kind}_w{workers}", rate, "1/s", device, {
                "circuit": circuit, "workers": workers, "kind": kind, "speedup_vs_1": round(rate / base, 3),
                "partitions": len(synthesizers), "cores": os.cpu_count()}))
    return records


def sequential(pk, work: list[list], gpu: bool) -> float:
    """s per proof: each partition synthesized, then proved, one after the other."""
    prover = Prover(pk, gpu=gpu)
    prover.prove(work[0][0](), timer=PhaseTimer(prover.stream))  # compiles, builds tables
    start = time.perf_counter()
    for job in work:
        for synthesize in job:
            prover.prove(synthesize(), timer=PhaseTimer(prover.stream))
    return (time.perf_counter() - start) / len(work)


def engine_run(pk, work: list[list], config: EngineConfig) -> tuple[float, Timeline]:
    """(s per proof, the timeline without the warm-up job)."""
    with Engine(config) as engine:
        warm = engine.submit(Job(pk, work[0][:max(2, config.synthesis_workers)], name=WARMUP))
        warm.result()
        start = time.perf_counter()
        futures = [engine.submit(Job(pk, job)) for job in work]
        for future in futures:
            future.result()
        s_per_proof = (time.perf_counter() - start) / len(work)
    timeline = reader.read(config.timeline_path)
    return s_per_proof, Timeline(timeline.header, [e for e in timeline.events if e.get("job") != WARMUP])


def keep_timeline(source: Path, target: str) -> None:
    """Copy a run's timeline file without its warm-up job's events (as the figures)."""
    lines = source.read_text().splitlines(keepends=True)
    with atomic_write(target, "w") as file:
        file.write("".join(line for line in lines if json.loads(line).get("job") != WARMUP))


def staging_ms(timeline: Timeline, result: analysis.Analysis) -> tuple[float, float]:
    """Per partition in the window (ms): staging (the pinned copy and the upload on the
    copy stream), and the device's idle time attributed to it (``upload``: kernels
    waiting for it; the rest overlapped kernels or an epilogue)."""
    window = {(p.job, p.partition) for p in result.partitions}
    spans = [e["end_ms"] - e["t_ms"] for e in timeline.of("staging") if (e["job"], e["partition"]) in window]
    return sum(spans) / len(window), result.gaps_ms["upload"] / len(window)


def lock_overhead_pct(result: analysis.Analysis) -> float:
    """The device lock held while the device idles, % of kernel device time (issue 7's
    "time inside the lock but outside kernels"), over the window."""
    return 100 * result.mean("held_idle_pct") / result.mean("busy_pct")


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out")
    parser.add_argument("--circuit", default="bit_heavy")
    parser.add_argument("--log", type=int, default=20)
    parser.add_argument("--jobs", type=int, default=4)
    parser.add_argument("--partitions", type=int, default=10)
    parser.add_argument("--scaling", default="1,2,4,8,16", help="synthesis worker counts ('' to skip)")
    parser.add_argument("--scaling-log", type=int, help="partition size of the scaling runs [default: --log]")
    parser.add_argument("--workers", type=int, help="the engine's synthesis processes [default: cores - 1]")
    parser.add_argument("--cpu", action="store_true", help="the CPU backend even with a GPU")
    parser.add_argument("--timeline", help="keep the gw=2 run's timeline (warm-up job left out) here")
    args = parser.parse_args(argv)
    gpu = not args.cpu and backend.cuda_available()
    device = common.gpu_name() if gpu else common.cpu_name()
    out = args.out or None
    counts = [int(w) for w in args.scaling.split(",") if w]
    records = scaling(args.circuit, args.scaling_log or args.log, counts, device)
    common.write(records, "engine", out)

    pk = circuit_key(args.circuit, args.log, gpu=gpu)
    constraints = build(args.circuit, args.log, seed=0)[0].n_constraints
    work = circuit_partitions(args.circuit, args.log, args.jobs, args.partitions)
    seq = sequential(pk, work, gpu)
    print(f"sequential: {seq:.3f} s/proof", flush=True)
    params = {"circuit": args.circuit, "log_constraints": args.log, "constraints": constraints, "jobs": args.jobs,
              "partitions": args.partitions}
    records = [common.record("engine_sequential_s_per_proof", seq, "s", device, params)]
    with tempfile.TemporaryDirectory() as scratch:
        for gw in (1, 2):
            config = EngineConfig(devices=None if gpu else (), gpu_workers_per_device=gw,
                                  timeline_path=Path(scratch) / f"gw{gw}.jsonl",
                                  **({"synthesis_workers": args.workers} if args.workers else {}))
            s_per_proof, timeline = engine_run(pk, work, config)
            if args.timeline and gw == 2:
                keep_timeline(config.timeline_path, args.timeline)
            steady = analysis.analyze(timeline, "steady")
            staged, waited = staging_ms(timeline, steady)
            devices = len(steady.devices)
            suffix = "" if gw == 1 else "_gw2"
            run = {**params, "gpu_workers_per_device": gw, "synthesis_workers": config.synthesis_workers,
                   "synthesis": config.synthesis, "devices": devices, "window_s": round(steady.span_ms / 1e3, 3),
                   "sequential_s_per_proof": round(seq, 4)}
            figures = {
                "s_per_proof": (s_per_proof, "s"),
                "speedup_vs_sequential": (seq / s_per_proof, "x"),
                "device_busy": (steady.mean("busy_pct"), "%"),
                "lock_overhead": (lock_overhead_pct(steady), "% of kernel time"),
                "staging_ms": (staged, "ms per partition"),
                "upload_wait_ms": (waited, "ms per partition"),
                "constraints_per_s": (constraints * args.partitions / s_per_proof / devices / 1e6, "M/s"),
            }
            for name, (value, unit) in figures.items():
                records.append(common.record(f"engine_{name}{suffix}", value, unit, device, run))
            print(f"engine gw={gw}: " + ", ".join(f"{k} {v:.3f} {u}" for k, (v, u) in figures.items()), flush=True)
    print(f"wrote {common.write(records, 'engine', out)}")


if __name__ == "__main__":
    main()
