"""Throughput of a local Dask cluster of GPU workers: the engine's workload on 1 and 2 GPUs.

The cluster (numba_cuzk.cluster.local_cluster) has one worker process per GPU, each with
its own Engine (--workers synthesis processes, --gpu-workers GPU workers). Before timing:
1. every worker proves two partitions of the engine tests' stored 2^6 key
   (tests/engine/data/mimc6.zkey), which compiles all its prove kernels (they do not
   depend on the size), the workers in parallel, while this process makes the bit_heavy
   2^K key (an insecure local setup, on its GPU where there is one);
2. the key goes to each worker once, and a warm-up job per worker (--workers + 2
   partitions) starts its synthesis processes and makes the key resident.
Timed, each run one submission, wall clock from it to the last proof (every proof is
checked by its worker's pairing check): --jobs jobs of --partitions partitions on one
worker, then twice as many jobs on two, with the same --task-partitions per Dask task so
that each worker's pipeline drains as often in both runs. Records (bench/results/
cluster/): cluster_s_per_proof_gpus1 and cluster_s_per_proof_gpus2 (s per job
of P partitions), cluster_scaling_gpus2 = gpus1 / gpus2 (x; issue 10: floor 1.7, goal
1.95); params hold each run's device busy % over its merged timeline's steady window.

Defaults are sized for nvidia-h200-x2 (two H200, 32 cores): bit_heavy 2^18, 10 partitions
per job, 50 jobs on one GPU (500 partitions at ~40 ms each: ~20 s) and 100 on two; 8
synthesis processes per worker (a 2^18 partition takes ~80 ms to build on one core, so 2
would keep a GPU fed). Compilation (~1.5 min per worker, in parallel, with the setup's
~1 min beside it) dominates the ~4 min run. A CPU smoke run, without a GPU:
    python3 -m bench.cluster --circuit mimc --log 8 --jobs 2 --partitions 3 --workers 1 --synthesis thread --gpus 2
Usage:
    python3 -m bench.cluster [--out FILE] [--circuit bit_heavy] [--log 18] [--jobs 50] [--partitions 10]
        [--task-partitions N] [--workers 8] [--synthesis process] [--gpu-workers 2] [--gpus 2] [--timeline FILE]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from functools import partial
from pathlib import Path

from distributed import Client

from bench import common
from numba_cuzk.circuits import build
from numba_cuzk.cluster import ClusterProver, KeyRef, local_cluster, zkey_bytes
from numba_cuzk.cluster.local import visible_gpus
from numba_cuzk.engine import EngineConfig
from numba_cuzk.engine.synthesis import circuit_witness
from numba_cuzk.engine.workload import circuit_key, circuit_partitions
from numba_cuzk.timeline import analysis, reader

COMPILE_KEY = Path(__file__).resolve().parents[1] / "tests" / "engine" / "data" / "mimc6.zkey"
COMPILE_CIRCUIT = ("mimc", 6)


def timed_run(prover: ClusterProver, key: KeyRef, jobs: list[list], workers: list[str], task_partitions: int,
              timeline: Path) -> tuple[float, float | None]:
    """(s per job, mean device busy % over the steady window) of ``jobs`` on ``workers``."""
    names = [f"gpus{len(workers)}-{j}" for j in range(len(jobs))]
    start = time.perf_counter()
    for future in prover.submit_many(key, jobs, names=names, workers=workers,
                                     task_partitions=task_partitions):
        future.result()
    s_per_job = (time.perf_counter() - start) / len(jobs)
    prover.write_timeline(timeline, names)
    try:
        busy = analysis.analyze(reader.read(timeline), "steady").mean("busy_pct")
    except ValueError:  # fewer than 3 partitions per device: no steady state
        busy = None
    return s_per_job, busy


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out")
    parser.add_argument("--circuit", default="bit_heavy")
    parser.add_argument("--log", type=int, default=18)
    parser.add_argument("--jobs", type=int, default=50, help="jobs on one GPU (twice as many on two)")
    parser.add_argument("--partitions", type=int, default=10, help="partitions per job")
    parser.add_argument("--task-partitions", type=int, help="partitions per Dask task [default: jobs x partitions / 2]")
    parser.add_argument("--workers", type=int, default=8, help="synthesis workers per GPU worker")
    parser.add_argument("--synthesis", default="process")
    parser.add_argument("--gpu-workers", type=int, default=2, help="GPU workers per device, sharing its lock")
    parser.add_argument("--gpus", type=int, help="cluster workers [default: the visible GPUs]")
    parser.add_argument("--timeline", help="keep the two-GPU run's merged timeline here")
    args = parser.parse_args(argv)
    gpu = bool(visible_gpus())
    task_partitions = args.task_partitions or max(1, args.jobs * args.partitions // 2)
    config = EngineConfig(synthesis=args.synthesis, synthesis_workers=args.workers,
                          gpu_workers_per_device=args.gpu_workers,
                          synthesis_warmup=partial(circuit_witness, args.circuit, args.log, 0))
    started = time.perf_counter()
    with local_cluster(args.gpus) as cluster, Client(cluster) as client, ClusterProver(client, config) as prover:
        addresses = sorted(client.scheduler_info()["workers"])
        compile_parts = [circuit_witness(*COMPILE_CIRCUIT, seed) for seed in (1, 2)]
        compiling = {address: prover.submit(COMPILE_KEY.read_bytes(), compile_parts, trusted=True,
                                            workers=[address]) for address in addresses}
        setup_start = time.perf_counter()
        key = prover.add_key(zkey_bytes(circuit_key(args.circuit, args.log, gpu=gpu)), trusted=True)
        setup_s = time.perf_counter() - setup_start
        compile_s = {a: f.result().elapsed_ms / 1e3 for a, f in compiling.items()}
        print(f"setup 2^{args.log}: {setup_s:.1f} s; kernels compiled on the workers in "
              f"{', '.join(f'{s:.1f}' for s in compile_s.values())} s", flush=True)
        (warm,) = circuit_partitions(args.circuit, args.log, 1, args.workers + 2)
        warm_s = prover.warm_up(key, warm)
        print(f"warm-up at 2^{args.log}: {', '.join(f'{s:.1f}' for s in warm_s.values())} s", flush=True)
        devices = prover.devices()
        device = devices[0]["name"] if gpu else common.cpu_name()
        constraints = build(args.circuit, args.log, seed=0)[0].n_constraints
        params = {"circuit": args.circuit, "log_constraints": args.log, "constraints": constraints,
                  "partitions": args.partitions, "task_partitions": task_partitions, "synthesis": args.synthesis,
                  "synthesis_workers": args.workers, "gpu_workers_per_device": args.gpu_workers,
                  "setup_s": round(setup_s, 1), "compile_s": round(max(compile_s.values()), 1),
                  "devices": [d["name"] for d in devices]}
        records, per_job = [], {}
        with tempfile.TemporaryDirectory() as scratch:
            for count in (1, 2)[:len(addresses)]:
                jobs = circuit_partitions(args.circuit, args.log, args.jobs * count, args.partitions)
                path = Path(args.timeline) if args.timeline and count == 2 else Path(scratch) / f"gpus{count}.jsonl"
                per_job[count], busy = timed_run(prover, key, jobs, addresses[:count], task_partitions, path)
                print(f"{count} GPU worker(s): {per_job[count]:.3f} s per job of {args.partitions} partitions, "
                      f"device busy {busy if busy is None else round(busy, 1)} %", flush=True)
                records.append(common.record(f"cluster_s_per_proof_gpus{count}", per_job[count], "s", device, {
                    **params, "gpus": count, "jobs": len(jobs), "wall_s": round(per_job[count] * len(jobs), 2),
                    "device_busy_pct": busy if busy is None else round(busy, 2)}, timing=common.CALL_LATENCY))
        if 2 in per_job:
            scaling = per_job[1] / per_job[2]
            print(f"scaling 1 -> 2 GPU workers: {scaling:.3f}x", flush=True)
            records.append(common.record("cluster_scaling_gpus2", scaling, "x", device, {**params, "gpus": 2},
                                         timing=common.CALL_LATENCY))
        else:
            print("one worker only: no two-GPU run", flush=True)
    print(f"wrote {common.write(records, 'cluster', args.out)} in {time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()
