"""Filecoin PoRep's shape through the engine: jobs of 10 partitions of a 2^27 bit-heavy
circuit on one GPU (issue 17), in steady state.

The key is set up on the GPU and left there (setup(resident=True), planned for the
engine's gpu_workers + 1 proof slots: B2 streams from pinned host memory at 2^27 on an
H200), partitions are synthesized as witnesses alone (circuits.witness: no R1CS per
partition) in processes and handed over in shared memory, and the host budget bounds
the witnesses in flight to --in-flight (default 6: 26 GB at 2^27; with the key's 40 GB
of host memory, the slots' 13 GB and a synthesis's second copy while it writes to
/dev/shm, the 128 GB host keeps its margin). After a warm-up job of --warmup partitions, --jobs jobs are
submitted at once. Records (bench/results/porep/): porep_s_per_proof (s: the
round's wall time / jobs), porep_device_busy (%, the steady window's phase figure),
porep_synthesis_workers_needed (the workers whose output would match the GPU: ceil(
synthesis ms / kernel ms), as the timeline's balance), porep_kernel_ms_per_partition and
porep_synthesis_ms_per_partition (ms, window means), porep_setup_s (written as soon as
the key is made). Every proof is verified in the engine. Usage:
    python3 -m bench.porep [--out FILE] [--log 27] [--partitions 10] [--jobs 2] [--warmup 2] [--workers N]
        [--in-flight 6] [--synthesis process|thread] [--timeline FILE] [--tail N]
"""

from __future__ import annotations

import argparse
import math
import tempfile
import time
from pathlib import Path

from bench import common
from bench.engine import engine_run, keep_timeline
from numba_cuzk import backend
from numba_cuzk.circuits.builtin import key_shape
from numba_cuzk.engine import EngineConfig
from numba_cuzk.commands.batch import resident_slots
from numba_cuzk.engine.workload import circuit_key, circuit_partitions, circuit_warmup
from numba_cuzk.timeline import analysis


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out")
    parser.add_argument("--circuit", default="bit_heavy")
    parser.add_argument("--log", type=int, default=27)
    parser.add_argument("--partitions", type=int, default=10)
    parser.add_argument("--jobs", type=int, default=2, help="jobs (proofs) measured after the warm-up")
    parser.add_argument("--warmup", type=int, default=2, help="partitions of the warm-up job")
    parser.add_argument("--workers", type=int, help="synthesis processes [default: cores - 1]")
    parser.add_argument("--in-flight", type=int, default=6, help="witnesses admitted at once (the host budget)")
    parser.add_argument("--synthesis", default="process", help="synthesis workers: process (witnesses through "
                                                               "/dev/shm) or thread")
    parser.add_argument("--tail", type=int, help="the Provers' bit/tail split for at most TAIL non-bit scalars "
                                                 "(EngineConfig.tail; default: the plain MSMs)")
    parser.add_argument("--timeline", help="keep the measured round's timeline here")
    parser.add_argument("--engine-timeline", help="the engine's whole timeline (warm-up too), written here as it "
                                                  "runs: a run cut short keeps its events in the live file beside it")
    args = parser.parse_args(argv)
    gpu = backend.cuda_available()
    device = common.gpu_name() if gpu else common.cpu_name()
    with tempfile.TemporaryDirectory() as scratch:
        witness_bytes = 32 * key_shape(args.circuit, args.log).n_vars
        config = EngineConfig(devices=None if gpu else (), synthesis=args.synthesis,
                              synthesis_warmup=circuit_warmup(args.circuit),
                              timeline_path=Path(args.engine_timeline or Path(scratch) / "porep.jsonl"),
                              host_memory_budget_bytes=args.in_flight * witness_bytes, tail=args.tail,
                              **({"synthesis_workers": args.workers} if args.workers else {}))
        slots = resident_slots(config)
        start = time.perf_counter()
        pk = circuit_key(args.circuit, args.log, gpu=gpu, resident_slots=slots, tail=args.tail)
        setup_s = time.perf_counter() - start
        print(f"porep: key of {args.circuit} at 2^{args.log} in {setup_s:.1f} s "
              f"({'resident, ' + str(slots) + ' slots' if slots else 'host'})", flush=True)
        key_params = {"circuit": args.circuit, "log_constraints": args.log, "key": "resident" if slots else "host",
                      "slots": slots}  # written now: a run cut short by its time limit keeps it
        common.write([common.record("porep_setup_s", setup_s, "s", device, key_params,
                                    timing=common.CALL_LATENCY)], "porep", args.out)
        work = circuit_partitions(args.circuit, args.log, args.jobs, args.partitions)
        ((s_per_proof, timeline),) = engine_run(pk, work, config, warmup_partitions=args.warmup)
        if args.timeline:
            keep_timeline(timeline, args.timeline)
    steady = analysis.analyze(timeline, "steady")
    b = steady.balance
    params = {"circuit": args.circuit, "log_constraints": args.log, "partitions": args.partitions, "jobs": args.jobs,
              "tail": args.tail,
              "synthesis": config.synthesis, "synthesis_workers": config.synthesis_workers, "gpu_workers_per_device": config.gpu_workers_per_device,
              "key": "resident" if slots else "host", "in_flight": args.in_flight, "window_s": round(steady.span_ms / 1e3, 3),
              "idle_ms_per_partition": {c: round(ms / len(steady.partitions), 2) for c, ms in steady.gaps_ms.items()
                                        if ms > 0}}
    figures = {"porep_s_per_proof": (s_per_proof, "s"), "porep_device_busy": (steady.mean("busy_pct"), "%"),
               "porep_synthesis_workers_needed": (b.workers_needed, "workers"),
               "porep_kernel_ms_per_partition": (b.kernel_ms, "ms"),
               "porep_synthesis_ms_per_partition": (b.synthesis_ms, "ms")}
    records = [common.record(name, value, unit, device, params,
                             timing=common.CALL_LATENCY) for name, (value, unit) in figures.items()
               if value is not None and not (isinstance(value, float) and math.isnan(value))]
    for r in records:
        print(f"{r['name']}: {r['value']} {r['unit']}", flush=True)
    print(f"porep: {b.workers} synthesis workers; idle per partition {params['idle_ms_per_partition']}", flush=True)
    print(f"wrote {common.write(records, 'porep', args.out)}")


if __name__ == "__main__":
    main()
