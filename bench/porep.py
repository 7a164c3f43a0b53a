"""Filecoin PoRep's shape on one GPU, every figure of issue 35 from one key: jobs of 10
partitions of a 2^27 bit-heavy circuit through the engine, and one Prover's proofs.

1. The key. The circuit's R1CS and seed 0's witness are built, then an INSECURE setup on
   the GPU leaves the key there (setup(resident=True)), planned for the engine's proof
   slots and the circuit's bit/tail split (circuits.builtin.split_tail: 2^16 for
   bit_heavy, whose witness is all 0s and 1s but 32 words; ``--tail none``: the plain
   MSMs). The plan (groth16/memory.py) decides what stays on the device, and
   ``engine_plan`` decides the engine's GPU workers by it: 2 (3 slots) when every query
   stays resident so, else 1 (2 slots) when that keeps them all (B2 streamed from pinned
   host memory costs ~560 ms of kernels per partition at 2^27; a second GPU worker only
   hides a launch and a wait, ~ms), else 2 with the plan's streaming. Printed and in
   every record's params. Record: porep_setup_s (params: build_s, the setup's steps).
2. One Prover on that key (one slot, the default stream: bench.groth16.bench_prover), a
   warm-up proof, then --prove-runs proofs of seed 0's witness: prove_logK[_split] (ms,
   wall, median; params: min/median/max, each phase's median), _device_ms, _peak_gpu_gb,
   _peak_host_gb. Its buffers and the NTT tables it built are freed before the engine
   (the engine's plan counts its own), and the engine's Prover is planned again on the
   memory then free (KeyTooLarge before the engine starts if it does not fit).
3. The engine: a warm-up job of --warmup partitions and --jobs jobs submitted together,
   so that the jobs' synthesis runs while the warm-up proves (bench.engine.engine_run's
   ``continuous``: the queue never runs dry, as for a prover serving a stream of jobs;
   a round started on an idle pipeline would also pay ~10 s of first synthesis per
   round). porep_s_per_proof (s): the median of the intervals between consecutive jobs'
   ends (params: their min/median/max; --jobs 4 gives 3). Not from the warm-up's end: the
   first job's partitions prove beside the warm-up's (7.8 s of a 15.6 s proof, 2026-12-04);
   porep_device_busy (%, the steady window's phase figure), porep_kernel_ms_per_partition
   and porep_synthesis_ms_per_partition (ms, window means; synthesis includes the
   worker's check of its witness and its hand-over), porep_synthesis_workers_needed
   (ceil(synthesis ms / kernel ms), the timeline's balance). Every proof is verified in
   the engine.

Witnesses in flight are bounded by --in-flight (default 9: 38 GB at 2^27, in /dev/shm or
being made). A synthesis worker spends ~4 s per partition at 2^27 (the witness ~1.5 s,
its check ~0.6 s, its write to /dev/shm ~1-1.5 s; 11.4 s before bit_heavy's rounds were a
Numba loop), the GPU ~1.6 s, so ~3 must be under way at once; 9 leave room for a slower
synthesis or a faster GPU. Each also holds ~2 GB of its own while it works, and the
engine's process ~30 GB (coefficients, pinned slots) and ~25 GB more while its Prover is
made: under ~100 GB at the worst moment of a 128 GB host.
Records go to the file as each stage ends: a run cut short keeps the stages before.
Usage:
    python3 -m bench.porep [--out FILE] [--log 27] [--partitions 10] [--jobs 3] [--warmup 2] [--workers N]
        [--in-flight 9] [--synthesis process|thread] [--tail N|none] [--prove-runs 3] [--timeline FILE]
        [--engine-timeline FILE]
"""

from __future__ import annotations

import argparse
import gc
import math
import statistics
import tempfile
import time
from pathlib import Path

from bench import common
from bench.engine import WARMUP, engine_run, keep_timeline
from bench.groth16 import bench_prover
from numba_cuzk import backend, msm, ntt
from numba_cuzk.circuits import build
from numba_cuzk.circuits.builtin import key_shape, split_tail
from numba_cuzk.engine import EngineConfig
from numba_cuzk.engine.workload import circuit_partitions, circuit_warmup
from numba_cuzk.groth16 import memory
from numba_cuzk.groth16.prove import placed_queries
from numba_cuzk.groth16.setup import setup
from numba_cuzk.timeline import analysis, reader
from numba_cuzk.timeline.reader import Timeline

GB = 1e9


def engine_plan(shape: memory.KeyShape, free: int | None, tail: int | None) -> tuple[int, memory.MemoryPlan]:
    """(GPU workers per device, the plan of the engine's Prover with workers + 1 slots) for
    a key of ``shape`` on a device with ``free`` bytes (None: unknown, all resident): 2
    workers unless their plan streams a query that 1 worker's plan keeps resident.
    memory.KeyTooLarge when neither fits."""
    plans = {workers: memory.plan_memory(shape, free, slots=workers + 1, tail=tail) for workers in (2, 1)}
    workers = 1 if plans[2].streamed and not plans[1].streamed else 2
    return workers, plans[workers]


def plan_params(plan: memory.MemoryPlan, workers: int) -> dict:
    """What a record says of the engine's plan."""
    return {"gpu_workers_per_device": workers, "slots": plan.slots, "streamed": list(plan.streamed),
            "bits": list(plan.bits), "plan_device_gb": round(plan.device_bytes / GB, 3),
            "free_gb": None if plan.free_bytes is None else round(plan.free_bytes / GB, 3)}


def make_key(args, tail: int | None, gpu: bool, slots: int, device: str, params: dict):
    """(the key, seed 0's witness): built and set up; writes porep_setup_s."""
    start = time.perf_counter()
    r1cs, witness = build(args.circuit, args.log, seed=0)
    build_s = time.perf_counter() - start
    steps: dict[str, float] = {}
    start = time.perf_counter()
    pk = setup(r1cs, gpu=gpu, resident=gpu, slots=slots, tail=tail, steps_ms=steps)
    setup_s = time.perf_counter() - start
    del r1cs
    print(f"porep: {args.circuit} at 2^{args.log} built in {build_s:.1f} s, set up in {setup_s:.1f} s "
          f"({'resident' if gpu else 'host'}; steps {({k: round(v) for k, v in steps.items()})})", flush=True)
    common.write([common.record("porep_setup_s", setup_s, "s", device,
                                {**params, "build_s": round(build_s, 2), "steps_ms": {k: round(v) for k, v in
                                                                                       steps.items()}},
                                timing=common.CALL_LATENCY)], "porep", args.out)
    return pk, witness, setup_s


def single_prover(args, pk, witness, tail: int | None, gpu: bool, device: str, setup_s: float, slots: int) -> None:
    """Step 2: one Prover's proofs (bench.groth16.bench_prover's records), then its device
    memory freed, and the engine's Prover (``slots``) planned again on what is free now:
    memory.KeyTooLarge here, before the engine starts, if it no longer fits."""
    before = memory.used_bytes()
    records = bench_prover(pk, witness, args.log, args.circuit, gpu, args.prove_runs, device, None, gpu, tail,
                           {"setup_s": round(setup_s, 2), "from": "bench.porep"})
    common.write(records, "porep", args.out)
    free_device_caches()
    if gpu:
        print(f"porep: device memory in use {before / GB:.2f} GB before the Prover, {memory.used_bytes() / GB:.2f} GB "
              f"after it", flush=True)
        memory.plan_memory(memory.KeyShape.of(pk), memory.free_bytes(), slots=slots, placed=placed_queries(pk),
                           tail=tail)


def free_device_caches() -> None:
    """Drop what a Prover left cached on the device (NTT tables, MSM workspaces) and free
    it now, not when Numba's deferred frees come due."""
    gc.collect()
    ntt.clear_cache()
    msm.clear_cache()
    gc.collect()
    memory.flush_deferred_frees()


def job_intervals_s(timeline: Timeline, jobs: list[str]) -> list[float]:
    """The s between consecutive ends of ``jobs`` (an end: its last ``done``), in the order
    they ended."""
    ends: dict[str, float] = {}
    for event in timeline.of("done"):
        ends[event["job"]] = max(ends.get(event["job"], 0.0), event["t_ms"])
    times = sorted(ends[name] for name in jobs)
    return [(b - a) / 1e3 for a, b in zip(times, times[1:])]


def engine_records(args, pk, config: EngineConfig, device: str, params: dict) -> list[dict]:
    """Step 3: the jobs through the engine, the records of the module docstring."""
    work = circuit_partitions(args.circuit, args.log, args.jobs, args.partitions)
    ((_, timeline),) = engine_run(pk, work, config, warmup_partitions=args.warmup, continuous=True)
    if args.timeline:
        keep_timeline(timeline, args.timeline)
    names = sorted({e["job"] for e in timeline.events if "job" in e} - {WARMUP})
    intervals = job_intervals_s(reader.read(config.timeline_path), names)
    steady = analysis.analyze(timeline, "steady")
    b = steady.balance
    run = {**params, "partitions": args.partitions, "jobs": args.jobs, "synthesis": config.synthesis,
           "synthesis_workers": config.synthesis_workers, "in_flight": args.in_flight,
           "clock": "continuous: jobs queued behind the warm-up, each interval from the previous job's end",
           "non_kernel_s_per_proof": round(statistics.median(intervals) - args.partitions * b.kernel_ms / 1e3, 3),
           "window_s": round(steady.span_ms / 1e3, 3),
           "idle_ms_per_partition": {c: round(ms / len(steady.partitions), 2) for c, ms in steady.gaps_ms.items()
                                     if ms > 0}}
    figures = {"porep_s_per_proof": (statistics.median(intervals), "s", common.spread(intervals)),
               "porep_device_busy": (steady.mean("busy_pct"), "%", {}),
               "porep_synthesis_workers_needed": (b.workers_needed, "workers", {}),
               "porep_kernel_ms_per_partition": (b.kernel_ms, "ms", {}),
               "porep_synthesis_ms_per_partition": (b.synthesis_ms, "ms", {})}
    records = [common.record(name, value, unit, device, {**run, **extra}, timing=common.CALL_LATENCY)
               for name, (value, unit, extra) in figures.items()
               if value is not None and not (isinstance(value, float) and math.isnan(value))]
    for r in records:
        print(f"{r['name']}: {r['value']} {r['unit']}", flush=True)
    print(f"porep: jobs' intervals {[round(s, 2) for s in intervals]} s; {b.workers} synthesis workers; "
          f"idle per partition {run['idle_ms_per_partition']}", flush=True)
    return records


def parse(argv) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out")
    parser.add_argument("--circuit", default="bit_heavy")
    parser.add_argument("--log", type=int, default=27)
    parser.add_argument("--partitions", type=int, default=10)
    parser.add_argument("--jobs", type=int, default=4, help="jobs (proofs) measured after the warm-up")
    parser.add_argument("--warmup", type=int, default=2, help="partitions of the warm-up job")
    parser.add_argument("--workers", type=int, help="synthesis processes [default: cores - 1]")
    parser.add_argument("--in-flight", type=int, default=9, help="witnesses admitted at once (the host budget)")
    parser.add_argument("--synthesis", default="process", help="synthesis workers: process (witnesses through "
                                                               "/dev/shm) or thread")
    parser.add_argument("--tail", default=None, help="the bit/tail split's tail (default: the circuit's, "
                                                     "circuits.builtin.split_tail); 'none': the plain MSMs")
    parser.add_argument("--prove-runs", type=int, default=3, help="one Prover's timed proofs (0: none)")
    parser.add_argument("--timeline", help="keep the measured jobs' timeline here")
    parser.add_argument("--engine-timeline", help="the engine's whole timeline (warm-up too), written here as it "
                                                  "runs: a run cut short keeps its events in the live file beside it")
    return parser.parse_args(argv)


def main(argv=None) -> None:
    args = parse(argv)
    gpu = backend.cuda_available()
    device = common.gpu_name() if gpu else common.cpu_name()
    tail = split_tail(args.circuit) if args.tail is None else (None if args.tail == "none" else int(args.tail))
    tail = tail if gpu else None  # the CPU backend has no split
    shape = key_shape(args.circuit, args.log)
    workers, plan = engine_plan(shape, memory.free_bytes() if gpu else None, tail)
    print(plan.describe(), flush=True)
    params = {"circuit": args.circuit, "log_constraints": args.log, "tail": tail, "key": "resident" if gpu else "host",
              **plan_params(plan, workers)}
    pk, witness, setup_s = make_key(args, tail, gpu, plan.slots, device, params)
    if args.prove_runs:
        single_prover(args, pk, witness, tail, gpu, device, setup_s, plan.slots)
    del witness
    with tempfile.TemporaryDirectory() as scratch:
        witness_bytes = 32 * pk.n_vars
        config = EngineConfig(devices=None if gpu else (), synthesis=args.synthesis, gpu_workers_per_device=workers,
                              synthesis_warmup=circuit_warmup(args.circuit), tail=tail,
                              timeline_path=Path(args.engine_timeline or Path(scratch) / "porep.jsonl"),
                              host_memory_budget_bytes=args.in_flight * witness_bytes,
                              **({"synthesis_workers": args.workers} if args.workers else {}))
        records = engine_records(args, pk, config, device, params)
    print(f"wrote {common.write(records, 'porep', args.out)}")


if __name__ == "__main__":
    main()
