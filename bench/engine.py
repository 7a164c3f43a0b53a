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
4. ``--repeat R``: the measured configuration (gw=2) runs R times in one engine (R rounds
   of the jobs, each its own steady window); each gw=2 record is the median of the R, with
   min / median / max in its params. ``--trace kernels``: the gw=2 rounds run once more in
   an engine that records every kernel (CUPTI), giving engine_device_busy_kernels_gw2 (the
   union of kernel records / span; the min of the R), the phase figure and NVML of the same
   rounds beside it, engine_s_per_proof_traced_gw2 and trace_overhead_pct (traced vs
   untraced median s/proof). ``--assembly thread,process``: the gw=2 rounds once more per
   extra assembly kind (records engine_<figure>_gw2_assembly_<kind>). Engines replay a
   CUDA graph per proof slot (EngineConfig.graphs); ``--no-graphs`` launches every kernel
   from Python, and ``--compare-graphs`` (with --trace) runs the traced rounds once more
   that way, in the same process (records engine_<figure>_gw2_direct); ``--compare-switch MS``
   (with --trace) once more at another GIL switch interval (EngineConfig.switch_interval_ms,
   0.5 ms by default; records engine_<figure>_gw2_switchMSms).

Default size: bit_heavy 2^20, 4 jobs x 10 partitions. On the H200 host a 2^20 partition
takes ~0.31 s to synthesize on one core and ~0.06 s to prove on the GPU (bench.groth16's
records, bench/results/groth16/), so about 6 synthesis processes match the GPU: with 8 or more the
GPU should never wait, and s/proof measures the GPU side; 40 partitions give a steady
state of 38. Records (bench/results/engine/): engine_synthesis_logK_{thread,
process}_wN (partitions/s), engine_sequential_s_per_proof, engine_s_per_proof and
engine_s_per_proof_gw2 (s), engine_speedup_vs_sequential(_gw2) (x), engine_device_busy(_gw2)
(%), engine_lock_overhead(_gw2) (% of kernel time), engine_staging_ms(_gw2) and
engine_upload_wait_ms(_gw2) (ms per partition), engine_constraints_per_s(_gw2) (M/s per GPU),
engine_nvml_mean(_gw2) (%); with --trace: engine_device_busy_kernels_gw2 (%),
engine_s_per_proof_traced_gw2 (s), trace_overhead_pct (%); with --trace kernels,counters
(or counters): engine_sm_active_gw2, engine_pipe_util_gw2 (%, the steady window's
utilization stack, numba_cuzk.timeline.stack; params.stack holds the window's and each
phase's stack and the report's sentences), counters_overhead_pct (%: s/proof sampled vs the
same rounds traced without counters, in the same call). ``--traced-only`` (with --trace)
runs the traced engine alone (and with counters its unsampled twin): no sequential run, no
untraced engines, no trace_overhead_pct; about a minute less on the H200.
Runs on the CPU backend too (--cpu, small sizes). Usage:
    python3 -m bench.engine [--out FILE] [--circuit bit_heavy] [--log 20] [--jobs 4]
        [--partitions 10] [--scaling 1,2,4,8,16] [--scaling-log K] [--workers N] [--cpu] [--timeline FILE]
        [--repeat R] [--trace kernels[,counters]] [--traced-only] [--assembly thread[,process]] [--no-graphs]
        [--compare-graphs]
        [--switch-interval-ms MS] [--compare-switch MS]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import tempfile
import time
from dataclasses import replace
from pathlib import Path

from bench import common
from numba_cuzk import backend
from numba_cuzk.circuits import build
from numba_cuzk.engine import Engine, EngineConfig, Job
from numba_cuzk.engine.config import trace_kinds
from numba_cuzk.engine.synthesis import SynthesisPool
from numba_cuzk.engine.workload import circuit_key, circuit_partitions
from numba_cuzk.fileio import atomic_write
from numba_cuzk.groth16.prove import Prover
from numba_cuzk.groth16.timing import PhaseTimer
from numba_cuzk.timeline import analysis, reader, report
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
                "partitions": len(synthesizers), "cores": os.cpu_count()}, timing=common.CALL_LATENCY))
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


def engine_run(pk, work: list[list], config: EngineConfig, rounds: int = 1,
               warmup_partitions: int | None = None, continuous: bool = False) -> list[tuple[float, Timeline]]:
    """Per round of ``work`` (all its jobs submitted, then waited for), in one engine after a
    warm-up job (``warmup_partitions`` of the first job's; default one per synthesis worker,
    at least 2): (s per proof, the round's timeline: its jobs' events and the events of no
    job while they ran). Each round starts on an idle pipeline and pays its fill (the first
    partitions' synthesis) unless ``continuous``: then every round's jobs are submitted
    with the warm-up job and each round's clock runs from the end of the one before (the
    warm-up's for the first), as for a prover whose queue never runs dry."""
    names = [[f"r{r}-job{j}" for j in range(len(work))] for r in range(rounds)]
    times = []
    warmup = warmup_partitions or max(2, config.synthesis_workers)
    with Engine(config) as engine:
        def submit(round_names: list[str]) -> list:
            return [engine.submit(Job(pk, job, name=name)) for job, name in zip(work, round_names)]

        warm = engine.submit(Job(pk, work[0][:warmup], name=WARMUP))
        queued = [submit(round_names) for round_names in names] if continuous else []
        warm.result()
        start = time.perf_counter()
        for r, round_names in enumerate(names):
            for future in queued[r] if continuous else submit(round_names):
                future.result()
            end = time.perf_counter()
            times.append((end - start) / len(work))
            start = end
    timeline = reader.read(config.timeline_path)
    return [(s, round_timeline(timeline, set(n))) for s, n in zip(times, names)]


def round_timeline(timeline: Timeline, jobs: set[str]) -> Timeline:
    """The events of ``jobs``, the events of no job between their first and last, and the
    kernel trace's clock figures."""
    mine = [e for e in timeline.events if e.get("job") in jobs]
    start, end = min(e["t_ms"] for e in mine), max(e.get("end_ms", e["t_ms"]) for e in mine)
    kept = ("cupti_clock", "cupti_unavailable", "counters_unavailable")  # about the whole trace
    return Timeline(timeline.header, [e for e in timeline.events if e.get("job") in jobs or e["event"] in kept
                                      or ("job" not in e and start <= e["t_ms"] <= end)])


def keep_timeline(timeline: Timeline, target: str) -> None:
    """Write one round's timeline (``round_timeline``: the warm-up job and the other rounds
    left out, as in the figures) to ``target``."""
    lines = [json.dumps(record, separators=(",", ":")) for record in (timeline.header, *timeline.events)]
    with atomic_write(target, "w") as file:
        file.write("\n".join(lines) + "\n")


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


def gw_records(rounds: list[tuple[float, Timeline]], config: EngineConfig, params: dict, seq: float,
               constraints: int, device: str, variant: str = "") -> list[dict]:
    """The figures of an untraced engine's rounds: each record the median over the rounds,
    named engine_<figure>[_gw2]<variant>."""
    gw = config.gpu_workers_per_device
    per_round = []
    for s_per_proof, timeline in rounds:
        steady = analysis.analyze(timeline, "steady")
        staged, waited = staging_ms(timeline, steady)
        devices = len(steady.devices)
        per_round.append({
            "s_per_proof": (s_per_proof, "s"),
            "speedup_vs_sequential": (seq / s_per_proof, "x"),
            "device_busy": (steady.mean("busy_pct"), "%"),
            "nvml_mean": (steady.mean("nvml_mean_pct"), "%"),
            "lock_overhead": (lock_overhead_pct(steady), "% of kernel time"),
            "staging_ms": (staged, "ms per partition"),
            "upload_wait_ms": (waited, "ms per partition"),
            "constraints_per_s": (constraints / s_per_proof / devices / 1e6, "M/s"),
        })
    run = {**params, "gpu_workers_per_device": gw, "synthesis_workers": config.synthesis_workers,
           "synthesis": config.synthesis, "assembly": config.assembly, "graphs": config.graphs, "devices": devices,
           "switch_interval_ms": config.switch_interval_ms,
           "window_s": round(steady.span_ms / 1e3, 3),
           "sequential_s_per_proof": round(seq, 4)}
    suffix = ("" if gw == 1 else "_gw2") + variant
    records = []
    for name, (_, unit) in per_round[0].items():
        values = [r[name][0] for r in per_round if r[name][0] is not None]
        if values:
            records.append(common.record(f"engine_{name}{suffix}", statistics.median(values), unit, device,
                                         {**run, **common.spread(values)}, timing=common.CALL_LATENCY))
    for i, r in enumerate(per_round):
        print(f"engine gw={gw}{variant} round {i + 1}: " + ", ".join(f"{k} {v:.3f} {u}" for k, (v, u) in r.items()
                                                           if v is not None), flush=True)
    return records


def traced_records(rounds: list[tuple[float, Timeline]], untraced_s: float | None, config: EngineConfig,
                   params: dict, device: str, variant: str = "") -> list[dict]:
    """The traced engine's rounds: kernel-record busy (min over the rounds) beside the phase
    figure and NVML of the same rounds, traced s/proof and the tracing overhead (against
    ``untraced_s``; none without it)."""
    steady = [analysis.analyze(timeline, "steady") for _, timeline in rounds]
    if not all(a.traced for a in steady):
        print("traced engine: no kernel records (CUPTI did not run); no kernel figures", flush=True)
        return []
    kernel = [a.mean("kernel_busy_pct") for a in steady]
    figures = {"phase_busy_pct": [a.mean("busy_pct") for a in steady],
               "phase_gap_pct": [a.mean("phase_gap_pct") for a in steady],
               "nvml_mean_pct": [a.mean("nvml_mean_pct") for a in steady],
               "launches_per_partition": [sum(k.launches for k in a.kernels) / len(a.partitions) for a in steady]}
    run = {**params, "gpu_workers_per_device": config.gpu_workers_per_device,
           "synthesis_workers": config.synthesis_workers, "trace": config.trace, "graphs": config.graphs,
           "switch_interval_ms": config.switch_interval_ms,
           "kernel_busy": common.spread(kernel), "clock": steady[0].clock,
           **{name: [None if v is None else round(v, 3) for v in values] for name, values in figures.items()}}
    traced_s = statistics.median(s for s, _ in rounds)
    for i, (a, (s, _)) in enumerate(zip(steady, rounds)):
        print(f"traced gw=2{variant} round {i + 1}: s_per_proof {s:.3f}, device busy: kernels {kernel[i]:.1f}%, phases "
              f"{a.mean('busy_pct'):.1f}%, launch gaps inside phases {a.mean('phase_gap_pct'):.1f}%, NVML "
              f"{a.mean('nvml_mean_pct') or 0:.1f}%; idle: " + ", ".join(
                  f"{c} {ms / len(a.partitions):.2f}" for c, ms in a.gaps_ms.items() if ms > 0) + " ms/partition",
              flush=True)
    print(f"clock mapping: {steady[0].clock}", flush=True)
    overhead = None if untraced_s is None else 100 * (traced_s / untraced_s - 1)
    if overhead is not None and not variant:
        print(f"tracing overhead: {traced_s:.3f} vs {untraced_s:.3f} s/proof, {overhead:+.1f}%", flush=True)
    records = [common.record(f"engine_device_busy_kernels_gw2{variant}", min(kernel), "%", device, run,
                             timing=common.CALL_LATENCY),
               common.record(f"engine_s_per_proof_traced_gw2{variant}", traced_s, "s", device,
                             {**run, **common.spread([s for s, _ in rounds])}, timing=common.CALL_LATENCY)]
    if overhead is not None and not variant:  # a variant's untraced twin did not run
        records.append(common.record("trace_overhead_pct", overhead, "%", device, {
            **run, "traced_s_per_proof": round(traced_s, 4), "untraced_s_per_proof": round(untraced_s, 4)},
                timing=common.CALL_LATENCY))
    return records


def counter_records(rounds: list[tuple[float, Timeline]], twin_s: float | None, config: EngineConfig,
                    params: dict, device: str) -> list[dict]:
    """The sampled engine's rounds (trace with "counters"): engine_sm_active_gw2 and
    engine_pipe_util_gw2 (medians over the rounds of the steady window's stack), the stack of
    the window and of each phase (the first round's, with the report's sentences), and
    counters_overhead_pct: s/proof sampled vs ``twin_s``, the same rounds unsampled in the
    same call."""
    steady = [analysis.analyze(timeline, "steady") for _, timeline in rounds]
    stacks = [a.stack for a in steady if a.stack is not None and a.stack.sm_active_pct is not None]
    if not stacks:
        why = next((a.counters_unavailable for a in steady if a.counters_unavailable), "no counters in the window")
        print(f"counters: unavailable ({why}); no counter figures", flush=True)
        return []
    first = steady[0]
    for line in report.stack_sentences(first):
        print(f"stack: {line}", flush=True)
    run = {**params, "gpu_workers_per_device": config.gpu_workers_per_device, "trace": config.trace,
           "counters_period_ms": config.counters_period_ms, "counters_source": first.counters_source,
           "graphs": config.graphs, "window_s": round(first.span_ms / 1e3, 3),
           "stack": report.to_dict(first)["stack"]}
    sampled_s = statistics.median(s for s, _ in rounds)
    records = []
    for name, values in (("engine_sm_active_gw2", [s.sm_active_pct for s in stacks]),
                         ("engine_pipe_util_gw2", [s.pipe_pct for s in stacks if s.pipe_pct is not None])):
        if values:
            records.append(common.record(name, statistics.median(values), "%", device,
                                         {**run, **common.spread(values), "pipe": stacks[0].pipe},
                                         timing=common.CALL_LATENCY))
    if twin_s:
        overhead = 100 * (sampled_s / twin_s - 1)
        print(f"counters overhead: {sampled_s:.4f} vs {twin_s:.4f} s/proof, {overhead:+.2f}%", flush=True)
        records.append(common.record("counters_overhead_pct", overhead, "%", device, {
            **{k: v for k, v in run.items() if k != "stack"}, "sampled_s_per_proof": round(sampled_s, 4),
            "unsampled_s_per_proof": round(twin_s, 4)}, timing=common.CALL_LATENCY))
    return records


def untraced_runs(pk, work: list[list], measured: EngineConfig, args, params: dict, constraints: int,
                  device: str, scratch: str) -> tuple[list[tuple[float, Timeline]], list[dict]]:
    """The sequential run, the untraced gw=1 and gw=2 engines (``measured`` is gw=2's) and the
    extra assembly kinds': (gw=2's rounds, their records)."""
    gpu = measured.devices is None
    seq = sequential(pk, work, gpu)
    print(f"sequential: {seq:.3f} s/proof", flush=True)
    records = [common.record("engine_sequential_s_per_proof", seq, "s", device, params, timing=common.CALL_LATENCY)]
    for config in (replace(measured, gpu_workers_per_device=1, timeline_path=Path(scratch) / "gw1.jsonl"), measured):
        rounds = engine_run(pk, work, config, args.repeat if config is measured else 1)
        if args.timeline and config is measured and not args.trace:
            keep_timeline(rounds[-1][1], args.timeline)
        records += gw_records(rounds, config, params, seq, constraints * args.partitions, device)
    for kind in args.assembly.split(",")[1:]:
        config = replace(measured, assembly=kind, timeline_path=Path(scratch) / f"assembly-{kind}.jsonl")
        records += gw_records(engine_run(pk, work, config, args.repeat), config, params, seq,
                              constraints * args.partitions, device, f"_assembly_{kind}")
    return rounds, records


def traced_runs(pk, work: list[list], measured: EngineConfig, args, kinds: frozenset, untraced: float | None,
                params: dict, device: str, scratch: str) -> list[dict]:
    """The gw=2 rounds traced (``args.trace``); with counters the same rounds unsampled (the
    sampling's cost), and the --compare-graphs / --compare-switch variants."""
    config = replace(measured, trace=args.trace, timeline_path=Path(scratch) / "traced.jsonl")
    traced = engine_run(pk, work, config, args.repeat)
    if args.timeline:
        keep_timeline(traced[-1][1], args.timeline)
    records = traced_records(traced, untraced, config, params, device)
    if "counters" in kinds:  # the same rounds unsampled, in the same call: the sampling's cost
        rest = ",".join(sorted(kinds - {"counters"})) or None
        twin = engine_run(pk, work, replace(measured, trace=rest, timeline_path=Path(scratch) / "twin.jsonl"),
                          args.repeat)
        records += counter_records(traced, statistics.median(s for s, _ in twin), config, params, device)
    if args.compare_graphs and config.graphs:
        direct = replace(config, graphs=False, timeline_path=Path(scratch) / "traced-direct.jsonl")
        records += traced_records(engine_run(pk, work, direct, args.repeat), untraced, direct, params, device,
                                  "_direct")
    if args.compare_switch:
        switch = replace(config, switch_interval_ms=args.compare_switch,
                         timeline_path=Path(scratch) / "traced-switch.jsonl")
        records += traced_records(engine_run(pk, work, switch, args.repeat), untraced, switch, params, device,
                                  f"_switch{args.compare_switch:g}ms")
    return records


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
    parser.add_argument("--timeline", help="keep the gw=2 engine's last round's timeline here (the traced "
                                           "engine's with --trace)")
    parser.add_argument("--repeat", type=int, default=1, help="rounds of the jobs in the gw=2 engine (default 1)")
    parser.add_argument("--trace", help="also run the gw=2 rounds traced: 'kernels' (CUPTI kernel records), "
                                        "'counters' (NVML GPM hardware counters: the utilization stack, and the "
                                        "rounds once more without them for the sampling overhead) or both, "
                                        "'kernels,counters'")
    parser.add_argument("--traced-only", action="store_true",
                        help="with --trace: the traced engine alone (and with counters its unsampled twin)")
    parser.add_argument("--assembly", default="thread", help="proof assembly of the engines (thread or process); "
                                                             "a list (thread,process): the first is measured, the "
                                                             "others' gw=2 rounds are recorded as _assembly_KIND")
    parser.add_argument("--no-graphs", action="store_true", help="launch every kernel from Python (no CUDA graphs)")
    parser.add_argument("--switch-interval-ms", type=float, default=EngineConfig.switch_interval_ms,
                        help="the engines' GIL switch interval (EngineConfig.switch_interval_ms; 0: leave it)")
    parser.add_argument("--compare-switch", type=float, metavar="MS",
                        help="with --trace: the traced rounds once more at this switch interval (records _switchMSms)")
    parser.add_argument("--compare-graphs", action="store_true",
                        help="with --trace: the traced rounds once more without CUDA graphs (records _direct)")
    args = parser.parse_args(argv)
    try:
        kinds = trace_kinds(args.trace)
    except ValueError as exc:
        parser.error(str(exc))
    if args.traced_only and not args.trace:
        parser.error("--traced-only needs --trace")
    gpu = not args.cpu and backend.cuda_available()
    device = common.gpu_name() if gpu else common.cpu_name()
    out = args.out or None
    counts = [int(w) for w in args.scaling.split(",") if w]
    records = scaling(args.circuit, args.scaling_log or args.log, counts, device)
    if records:
        common.write(records, "engine", out)
    records = []

    pk = circuit_key(args.circuit, args.log, gpu=gpu)
    constraints = build(args.circuit, args.log, seed=0)[0].n_constraints
    work = circuit_partitions(args.circuit, args.log, args.jobs, args.partitions)
    params = {"circuit": args.circuit, "log_constraints": args.log, "constraints": constraints, "jobs": args.jobs,
              "partitions": args.partitions}
    assembly = args.assembly.split(",")
    with tempfile.TemporaryDirectory() as scratch:
        measured = EngineConfig(devices=None if gpu else (), gpu_workers_per_device=2, assembly=assembly[0],
                                timeline_path=Path(scratch) / "gw2.jsonl", graphs=not args.no_graphs,
                                switch_interval_ms=args.switch_interval_ms or None,
                                **({"synthesis_workers": args.workers} if args.workers else {}))
        untraced = None
        if not args.traced_only:
            rounds, untraced_records = untraced_runs(pk, work, measured, args, params, constraints, device, scratch)
            records += untraced_records
            untraced = statistics.median(s for s, _ in rounds)
        if args.trace:
            records += traced_runs(pk, work, measured, args, kinds, untraced, params, device, scratch)
    print(f"wrote {common.write(records, 'engine', out)}")


if __name__ == "__main__":
    main()
