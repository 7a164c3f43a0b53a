"""Whole-process start-up: `numba-cuzk prove` from a fresh process, with an empty and a
warm kernel cache, and `numba-cuzk compile` with an empty one.

    python3 -m bench.startup [--cpu] [--log 14] [--runs 3] [--compile-runs N] [--no-first] [--no-compile]
        [--warm-cache DIR] [--out FILE]

Each figure is a subprocess's wall time, from the interpreter's start (`python -c` running
the CLI) to the proof written, for a 2^log-constraint MiMC circuit whose zkey
`numba-cuzk setup` wrote (points checked: not --trusted). With an empty cache on a GPU
machine, `prove` compiles every GPU kernel in parallel processes before it proves
(cli._compile_first); that is in the _first figure. Records (results.md):
cold_prove_logK_first (empty cache), cold_prove_logK (warm cache; median of --runs, the
spread and the time by step in params), compile_all_s (empty cache); `_cpu` suffixed
with --cpu. Each empty cache is a fresh folder, so the runs do not warm each other.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench.common import CALL_LATENCY, cpu_name, record, write

CLI = [sys.executable, "-c", "from numba_cuzk.cli import app; app()"]


def _run(args: list[str], cache: Path, cwd: Path) -> tuple[float, str]:
    env = dict(os.environ, NUMBA_CUZK_CACHE_DIR=str(cache))
    start = time.perf_counter()
    done = subprocess.run(CLI + args, cwd=cwd, env=env, capture_output=True, text=True)
    seconds = time.perf_counter() - start
    if done.returncode:
        raise RuntimeError(f"numba-cuzk {' '.join(args)} exited {done.returncode}:\n{done.stdout}\n{done.stderr}")
    return seconds, done.stdout


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cpu", action="store_true", help="the CPU backend (names end in _cpu)")
    parser.add_argument("--log", type=int, default=14)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--no-first", action="store_true", help="skip the empty-cache prove")
    parser.add_argument("--no-compile", action="store_true", help="skip `numba-cuzk compile`")
    parser.add_argument("--compile-runs", type=int, default=1,
                        help="`numba-cuzk compile` this many times, each into an empty folder (the median is "
                             "recorded, the spread in params; the last fills the warm cache)")
    parser.add_argument("--warm-cache", type=Path, default=None,
                        help="the folder `compile` fills and the warm runs use (default: a temporary one)")
    parser.add_argument("--out", default=None)
    args = parser.parse_args()
    suffix = "_cpu" if args.cpu else ""
    backend = ["--cpu"] if args.cpu else []
    if args.cpu:
        device = cpu_name()
    else:
        from bench.common import gpu_name
        device = gpu_name()
    records = []
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        warm = args.warm_cache or work / "cache-warm"
        prove = ["prove", "--zkey", "C.zkey", "--witness", "C.wtns", "--json", *backend]
        if not args.no_compile:
            runs = []
            for i in range(args.compile_runs):
                last = i == args.compile_runs - 1
                seconds, out = _run(["compile"], warm if last else work / f"cache-compile-{i}", work)
                print(out, flush=True)
                print(f"compile_all_s{suffix} run {i + 1}: {seconds:.1f} s", flush=True)
                runs.append(seconds)
            spread = {"runs": len(runs), "stat": "median", "min": min(runs), "max": max(runs)} if len(runs) > 1 else {}
            records.append(record("compile_all_s" + suffix, statistics.median(runs), "s", device,
                                  {"cpus": os.cpu_count(), **spread}, timing=CALL_LATENCY))
            write(records[-1:], "startup", args.out)
            print(f"compile_all_s{suffix}: {statistics.median(runs):.1f} s", flush=True)
        seconds, _ = _run(["setup", "--circuit", "mimc", "-k", str(args.log), "--witness", "C.wtns",
                           "--zkey", "C.zkey", "--vk", "vk.json", *backend], warm, work)
        print(f"setup (2^{args.log}): {seconds:.1f} s", flush=True)
        times, steps = [], []
        for _ in range(args.runs + 1):  # the first fills what compile left (nothing, if compile ran)
            seconds, out = _run(prove, warm, work)
            times.append(seconds)
            steps.append(json.loads(out)["steps_ms"])
        print(f"warm-cache proves: {', '.join(f'{t:.2f}' for t in times)} s", flush=True)
        measured = times[1:]
        records.append(record(f"cold_prove_log{args.log}{suffix}", statistics.median(measured), "s", device, {
            "runs": len(measured), "stat": "median", "min": min(measured), "max": max(measured),
            "first_after_compile_s": times[0], "steps_ms": steps[-1], "circuit": "mimc", "points_checked": True},
                timing=CALL_LATENCY))
        write(records[-1:], "startup", args.out)
        if not args.no_first:
            seconds, out = _run(prove, work / "cache-empty", work)
            records.append(record(f"cold_prove_log{args.log}{suffix}_first", seconds, "s", device, {
                "steps_ms": json.loads(out)["steps_ms"], "circuit": "mimc", "points_checked": True,
                "gpu_kernels_compiled_first": not args.cpu}, timing=CALL_LATENCY))
            write(records[-1:], "startup", args.out)
            print(f"cold_prove_log{args.log}{suffix}_first: {seconds:.1f} s", flush=True)
    for r in records:
        print(f"{r['name']:<28} {r['value']:>10.3f} {r['unit']}")


if __name__ == "__main__":
    main()
