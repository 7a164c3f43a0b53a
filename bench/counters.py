"""The hardware counters (NVML GPM, numba_cuzk.engine.counters) against Nsight Compute, over
the same launches of three kernels: a 2^24 NTT (its radix-4 passes), accumulate_g1 and
accumulate_g2 (bench.msm.accumulate_launch: 2^20 bases in buckets of 32).

1. GPM: each kernel launched back to back for --seconds (the device never idle), sampled
   every 100 ms; the kernel's figures are the samples' mean over the loop minus its first
   and last 0.2 s. GPM reads SM activity over wall time, so a loop that kept the device
   idle between launches would read low: the back-to-back launches make the two comparable.
2. ncu: the same script once more under ``ncu --metrics ... --profile-from-start off``
   (the child mode, --ncu-child), which launches each kernel --ncu-launches times between
   cuda.profile_start() and profile_stop(); the metrics of a group's launches are averaged,
   weighted by each launch's gpu__time_duration.
3. The differences (points): SM active against sm__cycles_active.avg.pct_of_peak_sustained_
   elapsed; the busiest GPM pipe (integer for all three) against each ncu pipe metric (ALU,
   FMA and FMA-heavy pipes' instructions and cycles, issue active, and the ALU and FMA-heavy
   cycles summed: INTEGER_PIPES), since NVML does not say which hardware pipes its
   "integer" covers; the nearest is named. Every ncu figure is a %
   of elapsed cycles (``pct_of_peak_sustained_elapsed``), as GPM's are of wall time: a % of
   active cycles would read higher wherever SMs idle.

ncu's metric names are checked against ``ncu --query-metrics`` first (a name it does not
know fails the whole run); should the run fail all the same, it is retried once with
CORE, names seen on the H200's ncu before. Its log holds ncu's own ==PROF== lines, then the
CSV (a header row starting "ID", a row of units, a row per launch in launch order).

Records (bench/results/counters/): counters_vs_ncu_max_diff (points: the largest
SM-active difference over the kernels), counters_vs_ncu_pipe_max_diff (points: the largest
integer-pipe difference against the nearest ncu pipe metric), both call-latency-free
figures of the device (timing: device-throughput, launches back to back); params hold every
kernel's GPM and ncu figures. Needs a GPU with GPM and /usr/local/cuda/bin/ncu (--ncu).
Usage:
    python3 -m bench.counters [--ncu /usr/local/cuda/bin/ncu] [--seconds 2] [--ntt-log 24] [--bases-log 20]
                              [--out FILE]
"""

from __future__ import annotations

import argparse
import csv
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from numba import cuda

from bench import common
from bench.msm import RATE_LOG
from numba_cuzk.engine.counters import CounterSampler
from numba_cuzk.engine.record import Recorder
from numba_cuzk.events import TimelineWriter
from numba_cuzk.timeline import reader, stack

SM_ACTIVE = "sm__cycles_active.avg.pct_of_peak_sustained_elapsed"
PIPES = tuple(f"{m}.avg.pct_of_peak_sustained_elapsed" for m in (
    "sm__inst_executed_pipe_alu", "sm__inst_executed_pipe_fma", "sm__inst_executed_pipe_fmaheavy",
    "sm__pipe_alu_cycles_active", "sm__pipe_fma_cycles_active", "sm__pipe_fmaheavy_cycles_active",
    "sm__issue_active"))
EXTRA = ("sm__warps_active.avg.pct_of_peak_sustained_active", "dram__throughput.avg.pct_of_peak_sustained_elapsed")
DURATION = "gpu__time_duration.sum"  # each launch's weight (one unit per column: the weights' scale cancels)
CORE = (SM_ACTIVE, PIPES[0], PIPES[5], DURATION)
EDGE_MS = 200.0  # samples this close to a loop's ends are left out: they hold idle or setup time
NCU_S = 150  # ncu's run: the child's start and set-up (~30 s) and 5 launches of each kernel, replayed per pass


def kernels(ntt_log: int, bases_log: int) -> dict[str, object]:
    """name -> one launch (a callable), set up and run once (compiled, tables built): the
    2^ntt_log NTT in place, and each curve's accumulate over 2^bases_log bases."""
    from bench.msm import TABLE_LOG, BaseSet, accumulate_launch
    from numba_cuzk.curve.params import G1, G2
    from numba_cuzk.msm import upload_bases
    from numba_cuzk.ntt.transform import transform
    from tests.msm import inputs

    rng = np.random.default_rng(7)
    values = cuda.to_device(inputs.random_scalar_limbs(1 << ntt_log, rng))
    launches = {f"ntt_log{ntt_log}": lambda: transform(values, inverse=False)}  # in place: no allocation
    for curve in (G1, G2):
        bases = upload_bases(BaseSet(curve, max(bases_log, TABLE_LOG)).device(1 << bases_log), curve)
        launches[f"accumulate_{curve.name.lower()}"] = accumulate_launch(curve, bases.points, bases_log)
    for launch in launches.values():
        launch()
    cuda.synchronize()
    return launches


def gpm_figures(launches: dict, seconds: float) -> tuple[dict[str, dict], str]:
    """Per kernel: the GPM metrics' means over its back-to-back loop; and the source."""
    with tempfile.TemporaryDirectory() as scratch:
        path = Path(scratch) / "counters.jsonl"
        writer = TimelineWriter(path)
        recorder = Recorder(writer)
        device = cuda.get_current_device()
        ordinal = getattr(device, "id", 0)  # the CUDA simulator's device has none
        sampler = CounterSampler.start(recorder, [(ordinal, getattr(device, "uuid", None))], 100.0)
        if sampler is None:
            writer.close()
            why = reader.read(path).of("counters_unavailable")[0]["error"]
            raise SystemExit(f"bench.counters: no GPM here ({why})")
        loops = {}
        for name, launch in launches.items():
            start = writer.now_ms()
            while writer.now_ms() - start < seconds * 1e3:
                for _ in range(20):  # queued ahead: the device never waits for the host
                    launch()
                cuda.synchronize()
            loops[name] = (start + EDGE_MS, writer.now_ms() - EDGE_MS)
            time.sleep(0.3)  # an idle gap between the loops: no sample mixes two kernels
        sampler.stop()
        writer.close()
        samples = stack.samples_of(reader.read(path).of("counters"), ordinal)
    figures = {}
    for name, (a, b) in loops.items():
        inside = samples.spans[:, 0] >= a
        inside &= samples.spans[:, 1] <= b
        if not inside.any():
            raise SystemExit(f"bench.counters: no GPM sample lies inside {name}'s loop ({b - a:.0f} ms): "
                             "raise --seconds")
        chosen = stack.Samples(samples.spans[inside], {m: v[inside] for m, v in samples.values.items()})
        window = np.array([[a, b]])
        figures[name] = {m: stack.weighted_mean(chosen, m, window) for m in stack.SAMPLED}
        figures[name]["samples"] = int(inside.sum())
    return figures, "nvml-gpm"


def ncu_child(launches: dict, count: int) -> None:
    """The ncu side: each kernel ``count`` times inside the profiled range, in order."""
    cuda.profile_start()
    for launch in launches.values():
        for _ in range(count):
            launch()
        cuda.synchronize()
    cuda.profile_stop()


def ncu_figures(ncu: str, names: list[str], count: int, sizes: list[str]) -> dict[str, dict]:
    """Run this script under ncu (--ncu-child, ``sizes`` its size options) and average each
    kernel group's metrics, weighted by launch duration; rows come in launch order, ``count``
    launches per group (an NTT launch is several pass kernels: group_rows). A failed run is
    retried once with CORE's metrics."""
    child = [sys.executable, "-m", "bench.counters", "--ncu-child", "--ncu-launches", str(count), *sizes]
    wanted = known_metrics(ncu, (SM_ACTIVE, *PIPES, *EXTRA, DURATION))
    for metrics in (wanted, list(CORE)):
        with tempfile.TemporaryDirectory() as scratch:
            log = Path(scratch) / "ncu.csv"
            command = [ncu, "--csv", "--page", "raw", "--log-file", str(log), "--profile-from-start", "off",
                       "--clock-control", "none",  # GPM reads the GPU at its own clocks: so must ncu
                       "--metrics", ",".join(metrics), *child]
            done = subprocess.run(command, capture_output=True, text=True, env=os.environ.copy(), timeout=NCU_S)
            text = log.read_text() if log.exists() else ""
        if done.returncode == 0:
            groups = group_rows(raw_rows(text), names, count)
            return {name: weighted(group) for name, group in groups.items()}
        print(f"ncu failed (rc {done.returncode}) with {len(metrics)} metrics: {(done.stderr + text)[-1200:]}",
              flush=True)
    raise RuntimeError("ncu failed with the core metrics too (its output is above)")


def raw_rows(text: str) -> list[dict]:
    """The launches of ``ncu --csv --page raw``'s log, in launch order, as {column: text}:
    the CSV starts at its header row ("ID", ...); ncu's own lines before it (==PROF==,
    ==WARNING==) and the row of units after it are skipped."""
    lines = text.splitlines()
    start = next((k for k, line in enumerate(lines) if line.startswith('"ID"')), None)
    if start is None:
        raise RuntimeError(f"no CSV in ncu's log (no header row starting \"ID\"): {text[-800:]!r}")
    header, *table = csv.reader(lines[start:])
    return [dict(zip(header, cells)) for cells in table if len(cells) == len(header) and cells[0].strip().isdigit()]


def known_metrics(ncu: str, wanted: tuple[str, ...]) -> list[str]:
    """The ``wanted`` metrics this GPU's ncu knows (an unknown name fails the whole run):
    their base names (before the first '.') in ``ncu --query-metrics``; all of them when
    the listing cannot be read (no sm__cycles_active in it)."""
    try:
        listed = subprocess.run([ncu, "--query-metrics"], capture_output=True, text=True, timeout=120).stdout
    except (OSError, subprocess.TimeoutExpired) as exc:
        listed = f"{exc}"
    names = {line.split()[0] for line in listed.splitlines() if line.strip()}
    if SM_ACTIVE.split(".")[0] not in names:
        print(f"ncu --query-metrics listed no sm__cycles_active ({listed[-300:]!r}): every metric asked for",
              flush=True)
        return list(wanted)
    known = [m for m in wanted if m.split(".")[0] in names]
    dropped = sorted(set(wanted) - set(known))
    if dropped:
        print(f"ncu here does not know {dropped}: left out", flush=True)
    return known


def group_rows(rows: list[dict], names: list[str], count: int) -> dict[str, list[dict]]:
    """Rows in launch order -> per kernel group: the NTT's rows are its pass kernels (all rows
    not named accumulate_*), each accumulate group its kernel's rows."""
    groups: dict[str, list[dict]] = {name: [] for name in names}
    for row in rows:
        kernel = row.get("Kernel Name", "")
        name = next((n for n in names if n.startswith("accumulate") and n in kernel), names[0])
        groups[name].append(row)
    short = {n: len(g) for n, g in groups.items() if len(g) < count}
    if short:
        raise RuntimeError(f"ncu profiled too few launches: {short} (wanted {count} each)")
    return groups


def weighted(rows: list[dict]) -> dict[str, float]:
    """Each metric's mean over ``rows``, weighted by their durations (DURATION)."""
    weights = np.array([_number(r[DURATION]) for r in rows])
    out = {}
    for metric in (SM_ACTIVE, *PIPES, *EXTRA):
        values = np.array([_number(r.get(metric, "nan")) for r in rows])
        known = ~np.isnan(values)
        out[metric] = float(np.sum(values[known] * weights[known]) / np.sum(weights[known])) if known.any() else None
    out["launches"] = len(rows)
    return out


def _number(text: str) -> float:
    try:
        return float(str(text).replace(",", ""))
    except ValueError:
        return float("nan")


# Integer work issues to two pipes: IADD3, LOP3 and shifts to the ALU, IMAD to FMA-heavy.
# On the H200 (2026-12-04) GPM's integer figure read 100.0 / 85.7 / 80.6 on the NTT pass,
# accumulate_g1 and accumulate_g2 where ncu's ALU + FMA-heavy cycles read 113.3 / 93.4 /
# 88.5 (no single pipe within 30 points): so the two pipes' sum, capped at 100, is compared
INTEGER_PIPES = "sm__pipe_alu_cycles_active + sm__pipe_fmaheavy_cycles_active (capped at 100)"


def _integer_pipes(ncu: dict) -> dict:
    """{INTEGER_PIPES: ALU + FMA-heavy pipe cycles active, % of elapsed, at most 100}, or {}."""
    alu, heavy = ncu.get(PIPES[3]), ncu.get(PIPES[5])
    return {} if alu is None or heavy is None else {INTEGER_PIPES: min(100.0, alu + heavy)}


def compare(gpm: dict[str, dict], ncu: dict[str, dict]) -> dict:
    """Per kernel: SM-active difference, each pipe metric's difference from GPM's integer
    pipe, the nearest; and the maxima over kernels."""
    out, sm_max, pipe_max = {}, 0.0, 0.0
    for name in gpm:
        g, n = gpm[name], ncu[name]
        if g.get("sm_active_pct") is None or n.get(SM_ACTIVE) is None:
            raise RuntimeError(f"{name}: no SM-active figure from {'GPM' if n.get(SM_ACTIVE) is not None else 'ncu'}")
        sm = abs(g["sm_active_pct"] - n[SM_ACTIVE])
        pipes = {m: abs(g["int_pipe_pct"] - v) for m, v in {**n, **_integer_pipes(n)}.items()
                 if m in (*PIPES, INTEGER_PIPES) and v is not None and g.get("int_pipe_pct") is not None}
        nearest = min(pipes, key=pipes.get) if pipes else None
        sm_max, pipe_max = max(sm_max, sm), max(pipe_max, pipes.get(nearest, 0.0))
        out[name] = {"gpm": _rounded(g), "ncu": _rounded(n), "sm_active_diff": round(sm, 2),
                     "int_pipe_diff": {m: round(d, 2) for m, d in pipes.items()}, "int_pipe_nearest": nearest}
    return {"kernels": out, "sm_active_max_diff": sm_max, "pipe_max_diff": pipe_max}


def _rounded(d: dict) -> dict:
    return {k: round(v, 2) if isinstance(v, float) else v for k, v in d.items()}


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ncu", default="/usr/local/cuda/bin/ncu")
    parser.add_argument("--seconds", type=float, default=2.0, help="GPM loop per kernel (s)")
    parser.add_argument("--ncu-launches", type=int, default=5, help="profiled launches per kernel")
    parser.add_argument("--ntt-log", type=int, default=24, help="the NTT's size (log2)")
    parser.add_argument("--bases-log", type=int, default=RATE_LOG, help="the accumulations' bases (log2)")
    parser.add_argument("--ncu-child", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--out")
    args = parser.parse_args(argv)
    started = time.perf_counter()
    launches = kernels(args.ntt_log, args.bases_log)
    if args.ncu_child:
        ncu_child(launches, args.ncu_launches)
        return
    print(f"kernels set up in {time.perf_counter() - started:.0f} s", flush=True)
    started = time.perf_counter()
    gpm, source = gpm_figures(launches, args.seconds)
    print(f"GPM ({time.perf_counter() - started:.0f} s): {gpm}", flush=True)
    started = time.perf_counter()
    ncu = ncu_figures(args.ncu, list(launches), args.ncu_launches,
                      ["--ntt-log", str(args.ntt_log), "--bases-log", str(args.bases_log)])
    print(f"ncu ({time.perf_counter() - started:.0f} s): {ncu}", flush=True)
    result = compare(gpm, ncu)
    for name, k in result["kernels"].items():
        print(f"{name}: SM active GPM {k['gpm']['sm_active_pct']} vs ncu {k['ncu'][SM_ACTIVE]} "
              f"(diff {k['sm_active_diff']}); integer pipe GPM {k['gpm']['int_pipe_pct']} vs nearest "
              f"{k['int_pipe_nearest']} (diffs {k['int_pipe_diff']})", flush=True)
    device = common.gpu_name()
    params = {"source": source, "seconds": args.seconds, "ncu_launches": args.ncu_launches,
              "ntt_log": args.ntt_log, "bases_log": args.bases_log, "ncu_sm_active": SM_ACTIVE,
              "kernels": result["kernels"]}
    records = [common.record("counters_vs_ncu_max_diff", result["sm_active_max_diff"], "points", device, params,
                             timing=common.DEVICE_THROUGHPUT),
               common.record("counters_vs_ncu_pipe_max_diff", result["pipe_max_diff"], "points", device,
                             {k: v for k, v in params.items() if k != "kernels"}, timing=common.DEVICE_THROUGHPUT)]
    print(f"wrote {common.write(records, 'counters', args.out)}: SM active within "
          f"{result['sm_active_max_diff']:.2f} points, integer pipe within {result['pipe_max_diff']:.2f}", flush=True)


if __name__ == "__main__":
    main()
