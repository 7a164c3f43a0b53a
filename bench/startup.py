"""Whole-process start-up: `numba-cuzk prove` from a fresh process, with an empty and a
warm kernel cache, and `numba-cuzk compile` with an empty one; with --oneshot, a one-shot
`prove` of a circom circuit against `snarkjs groth16 prove`, as users run them.

    python3 -m bench.startup [--cpu] [--log 14] [--runs 3] [--compile-runs N] [--no-first] [--no-compile]
        [--warm-cache DIR] [--out FILE]
    python3 -m bench.startup --oneshot [--cpu] [--sizes 14,16] [--runs 5] [--dir build/bench-snarkjs] [--out FILE]

--oneshot: for each size 2^K, bench/snarkjs.py's chain circuit (circom2, `snarkjs wtns
calculate`, numba-cuzk's setup; files already in --dir are kept, so a GPU host without
Node can take them from a run elsewhere). One `numba-cuzk prove` warms the kernel cache and
checks the key's points (recorded: key_checks.py); then --runs pairs of whole processes,
alternating: `numba-cuzk prove --zkey --witness` (points not --trusted: the record is
looked up by the file's hash) and `snarkjs groth16 prove` on the same files (when Node and
snarkjs are there). Records: oneshot_prove_logK_cpu (ms, --cpu) or cold_prove_logK (s, the
GPU, warm cache), the median of the runs, the spread and the last run's steps in params,
params.timing "call-latency", snarkjs's median as the peer "(same run)".

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
REPO = Path(__file__).resolve().parents[1]


def _run(args: list[str], cache: Path, cwd: Path) -> tuple[float, str]:
    env = dict(os.environ, NUMBA_CUZK_CACHE_DIR=str(cache))
    start = time.perf_counter()
    done = subprocess.run(CLI + args, cwd=cwd, env=env, capture_output=True, text=True)
    seconds = time.perf_counter() - start
    if done.returncode:
        raise RuntimeError(f"numba-cuzk {' '.join(args)} exited {done.returncode}:\n{done.stdout}\n{done.stderr}")
    return seconds, done.stdout


def oneshot(sizes: list[int], runs: int, folder: Path, cpu: bool, device: str, out: str | None) -> list[dict]:
    """The --oneshot records, one per size (see the module's docstring)."""
    from bench.snarkjs import prepare
    from tests.interop.node import NodeTools

    tools = NodeTools.find()
    records = []
    for log_n in sizes:
        files = prepare(log_n, folder / f"log{log_n}", tools, gpu=not cpu)
        work = files.folder
        ours_cmd = ["prove", "--zkey", str(files.zkey), "--witness", str(files.wtns), "--proof",
                    str(work / "oneshot_proof.json"), "--public", str(work / "oneshot_public.json"), "--json"]
        ours_cmd += ["--cpu"] if cpu else []
        peer_cmd = None if isinstance(tools, str) else [str(tools.node_modules / ".bin" / "snarkjs"), "groth16", "prove",
                                                         str(files.zkey), str(files.wtns), str(work / "snarkjs_proof.json"),
                                                         str(work / "snarkjs_public.json")]
        first_s, _ = _process(CLI + ours_cmd, work)  # compiles what the cache lacks, checks and records the key
        ours, peer, steps = [], [], {}
        for _ in range(runs):
            seconds, stdout = _process(CLI + ours_cmd, work)
            ours.append(seconds * 1e3)
            steps = json.loads(stdout)["steps_ms"]
            if peer_cmd:
                peer.append(_process(peer_cmd, work)[0] * 1e3)
        print(f"2^{log_n}: numba-cuzk {', '.join(f'{t:.0f}' for t in ours)} ms; snarkjs "
              f"{', '.join(f'{t:.0f}' for t in peer) or 'absent'} ms", flush=True)
        name, unit, scale = (f"oneshot_prove_log{log_n}_cpu", "ms", 1.0) if cpu else (f"cold_prove_log{log_n}", "s", 1e-3)
        params = {"runs": runs, "stat": "median", "runs_ms": [round(t, 1) for t in ours],
                  "min": round(min(ours) * scale, 4), "max": round(max(ours) * scale, 4), "steps_ms": steps,
                  "first_run_ms": round(first_s * 1e3, 1), "circuit": "chain (circom2, bench/snarkjs.py)",
                  "points_checked": "once, then recorded (key_checks.py)", "order": "alternating, ours first",
                  "cpus": os.cpu_count()}
        peer_record = None
        if peer:
            params["peer_runs_ms"] = [round(t, 1) for t in peer]
            params["ratio_to_peer"] = round(statistics.median(ours) / statistics.median(peer), 3)
            peer_record = {"name": f"snarkjs {tools.version('snarkjs')} groth16 prove, a process (same run)",
                           "value": round(statistics.median(peer) * scale, 4), "unit": unit}
        records.append(record(name, statistics.median(ours) * scale, unit, device, params, peer_record,
                              timing=CALL_LATENCY))
        write(records[-1:], "startup", out)
    return records


def _process(cmd: list[str], cwd: Path) -> tuple[float, str]:
    """Wall seconds of one process (start to exit) and its stdout; RuntimeError if it fails."""
    start = time.perf_counter()
    done = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True)
    seconds = time.perf_counter() - start
    if done.returncode:
        raise RuntimeError(f"{' '.join(cmd)} exited {done.returncode}:\n{done.stdout}\n{done.stderr}")
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
    parser.add_argument("--oneshot", action="store_true", help="one-shot prove of a circom circuit vs snarkjs")
    parser.add_argument("--sizes", default="14,16", help="with --oneshot: the sizes 2^K, comma-separated")
    parser.add_argument("--dir", type=Path, default=REPO / "build" / "bench-snarkjs",
                        help="with --oneshot: the circuits' files (kept between runs)")
    parser.add_argument("--out", default=None)
    args = parser.parse_args()
    suffix = "_cpu" if args.cpu else ""
    backend = ["--cpu"] if args.cpu else []
    if args.cpu:
        device = cpu_name()
    else:
        from bench.common import gpu_name
        device = gpu_name()
    if args.oneshot:
        records = oneshot([int(k) for k in args.sizes.split(",") if k], max(args.runs, 1), args.dir, args.cpu,
                          device, args.out)
        for r in records:
            print(f"{r['name']:<28} {r['value']:>10.3f} {r['unit']}  peer {r.get('peer', {}).get('value')}")
        return
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
