"""Whole-process start-up: `numba-cuzk prove` from a fresh process, with an empty and a
warm kernel cache, and `numba-cuzk compile` with an empty one; with --oneshot, a one-shot
`prove` of a circom circuit against `snarkjs groth16 prove`, as users run them.

    python3 -m bench.startup [--cpu] [--log 14] [--runs 3] [--compile-runs N] [--no-first] [--no-compile]
        [--warm-cache DIR] [--no-bytecode N] [--profile FILE] [--out FILE]
    python3 -m bench.startup --oneshot [--cpu] [--sizes 14,16] [--runs 5] [--dir build/bench-snarkjs] [--out FILE]

--oneshot: for each size 2^K, bench/snarkjs.py's chain circuit (circom2, `snarkjs wtns
calculate`, numba-cuzk's setup; files already in --dir are kept, so a GPU host without
Node can take them from a run elsewhere). One `numba-cuzk prove` warms the kernel cache and
checks the key's points (recorded: key_checks.py); then --runs pairs of whole processes,
alternating: `numba-cuzk prove --zkey --witness` (points not --trusted: the record is
looked up by the file's hash) and `snarkjs groth16 prove` on the same files (when Node and
snarkjs are there). Records: oneshot_prove_logK (ms, the GPU, warm cache; until 2026-12-05
named cold_prove_logK, the name of the MiMC runs below) or oneshot_prove_logK_cpu (--cpu),
the median of the runs, the spread and the last run's steps in params,
params.timing "call-latency", snarkjs's median as the peer "(same run)".

Each figure is a subprocess's wall time, from the interpreter's start (`python -c` running
the CLI) to the process gone, for a 2^log-constraint MiMC circuit whose zkey
`numba-cuzk setup` wrote (points checked: not --trusted). With an empty cache on a GPU
machine, `prove` compiles every GPU kernel in parallel processes before it proves
(cli._compile_first); that is in the _first figure. Records (results.md):
cold_prove_logK_first (empty cache), cold_prove_logK (warm cache; median of --runs, the
spread and the time by step in params), compile_all_s (empty cache); `_cpu` suffixed
with --cpu. Each empty cache is a fresh folder, so the runs do not warm each other.
--no-compile uses --warm-cache as it is (compiled or installed from an archive already).

As a user's processes run: with the bytecode cache (an installed package has its .pyc
files), so PYTHONDONTWRITEBYTECODE is dropped from the processes' environment (the GPU
machine sets it; PYTHONPYCACHEPREFIX is kept). params.process_ms splits the median run:
``interpreter`` (spawn to the CLI's first line), ``command`` (its imports, the steps and
the output, to the last atexit callback) and ``exit`` (from there to the process gone),
with ``steps`` (their sum). --no-bytecode N adds N runs without the bytecode cache
(params.no_bytecode_runs_s): what the processes of a tree without .pyc files pay.
params.numba_floor_s: the median wall of numba_floor processes (``python -c "import
numba.cuda"``; ``import numba`` with --cpu), one after each measured prove
(numba_floor_runs_s): the host's floor for any process on numba's target, same load.
--profile FILE: one more warm prove under cProfile.
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
from dataclasses import dataclass
from pathlib import Path

from bench.common import CALL_LATENCY, cpu_name, record, write

MARKS = "startup-marks "  # the CLI process's own times, its last line on stderr
# The CLI, which prints time.monotonic() (one clock for every process of the machine) at
# its first line and at its last atexit callback (registered first, so it runs last).
CLI = [sys.executable, "-c", "import time; first = time.monotonic(); import atexit, json, sys; "
       f"atexit.register(lambda: print({MARKS!r} + json.dumps([first, time.monotonic()]), file=sys.stderr)); "
       "from numba_cuzk.cli import app; app()"]
REPO = Path(__file__).resolve().parents[1]


def numba_floor(cpu: bool) -> list[str]:
    """The floor of any process on numba's target: a python that imports it (numba.cuda for
    the GPU, numba for the CPU, as the CLI does) and nothing else. Run after each prove: on
    a lent host the same pure-Python work took 1x-2.3x as long from one process to the next
    (2026-12-05), and the floors show when the host, not the code, was slow."""
    return [sys.executable, "-c", "import numba" if cpu else "import numba.cuda"]


@dataclass
class Process:
    """One CLI process: its wall seconds, stdout, and process_ms (see the module's docstring)."""

    seconds: float
    stdout: str
    phases_ms: dict[str, float]


def user_env(cache: Path | None = None, bytecode: bool = True) -> dict[str, str]:
    """This environment as a user's process has it: the bytecode cache on (or, without
    ``bytecode``, off and no cache prefix), the kernel cache ``cache`` where given."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    if not bytecode:
        env = {k: v for k, v in env.items() if k != "PYTHONPYCACHEPREFIX"} | {"PYTHONDONTWRITEBYTECODE": "1"}
    return env if cache is None else env | {"NUMBA_CUZK_CACHE_DIR": str(cache)}


def _process(cmd: list[str], cwd: Path, env: dict[str, str] | None = None) -> Process:
    """``cmd`` run to its end; RuntimeError if it fails. The phases are those of a CLI
    process (empty for another command)."""
    start = time.monotonic()
    done = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, env=env or user_env())
    end = time.monotonic()
    if done.returncode:
        raise RuntimeError(f"{' '.join(cmd)} exited {done.returncode}:\n{done.stdout}\n{done.stderr}")
    marks = [line for line in done.stderr.splitlines() if line.startswith(MARKS)]
    phases = {}
    if marks:
        first, last = json.loads(marks[-1][len(MARKS):])
        phases = {"interpreter": first - start, "command": last - first, "exit": end - last}
    return Process(end - start, done.stdout, {k: round(v * 1e3, 1) for k, v in phases.items()})


def _run(args: list[str], cache: Path, cwd: Path, bytecode: bool = True) -> Process:
    return _process(CLI + args, cwd, user_env(cache, bytecode))


def median_phases(processes: list[Process], steps: list[dict[str, float]]) -> dict[str, float]:
    """The median of each phase (ms) over ``processes``, and of their steps' sums."""
    phases = {k: statistics.median(p.phases_ms[k] for p in processes) for k in processes[0].phases_ms}
    return phases | {"steps": round(statistics.median(sum(s.values()) for s in steps), 1)}


def oneshot(sizes: list[int], runs: int, folder: Path, cpu: bool, device: str, out: str | None) -> list[dict]:
    """The --oneshot records, one per size (see the module's docstring)."""
    from bench.snarkjs import prepare
    from tests.interop.node import NodeTools

    tools = NodeTools.find(("snarkjs",))  # prepare needs circom2 only for a circuit not given (the H200's are)
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
        first_s = _process(CLI + ours_cmd, work).seconds  # compiles what the cache lacks, checks and records the key
        ours, peer, processes, all_steps = [], [], [], []
        for _ in range(runs):
            process = _process(CLI + ours_cmd, work)
            processes.append(process)
            ours.append(process.seconds * 1e3)
            all_steps.append(json.loads(process.stdout)["steps_ms"])
            if peer_cmd:
                peer.append(_process(peer_cmd, work).seconds * 1e3)
        steps = all_steps[-1]
        print(f"2^{log_n}: numba-cuzk {', '.join(f'{t:.0f}' for t in ours)} ms; snarkjs "
              f"{', '.join(f'{t:.0f}' for t in peer) or 'absent'} ms", flush=True)
        name = f"oneshot_prove_log{log_n}" + ("_cpu" if cpu else "")
        params = {"runs": runs, "stat": "median", "runs_ms": [round(t, 1) for t in ours],
                  "min": round(min(ours), 1), "max": round(max(ours), 1), "steps_ms": steps,
                  "process_ms": median_phases(processes, all_steps), "bytecode": "cached",
                  "first_run_ms": round(first_s * 1e3, 1), "circuit": "chain (circom2, bench/snarkjs.py)",
                  "points_checked": "once, then recorded (key_checks.py)", "order": "alternating, ours first",
                  "cpus": os.cpu_count()}
        peer_record = None
        if peer:
            params["peer_runs_ms"] = [round(t, 1) for t in peer]
            params["ratio_to_peer"] = round(statistics.median(ours) / statistics.median(peer), 3)
            peer_record = {"name": f"snarkjs {tools.version('snarkjs')} groth16 prove, a process (same run)",
                           "value": round(statistics.median(peer), 1), "unit": "ms"}
        records.append(record(name, statistics.median(ours), "ms", device, params, peer_record,
                              timing=CALL_LATENCY))
        write(records[-1:], "startup", out)
    return records


def compile_runs(args, work: Path, warm: Path, device: str) -> dict:
    """compile_all_s: `numba-cuzk compile` --compile-runs times, the last into ``warm``."""
    suffix = "_cpu" if args.cpu else ""
    runs = []
    for i in range(args.compile_runs):
        last = i == args.compile_runs - 1
        done = _run(["compile"], warm if last else work / f"cache-compile-{i}", work)
        print(done.stdout, flush=True)
        print(f"compile_all_s{suffix} run {i + 1}: {done.seconds:.1f} s", flush=True)
        runs.append(done.seconds)
    spread = {"runs": len(runs), "stat": "median", "min": min(runs), "max": max(runs)} if len(runs) > 1 else {}
    print(f"compile_all_s{suffix}: {statistics.median(runs):.1f} s", flush=True)
    return record("compile_all_s" + suffix, statistics.median(runs), "s", device, {"cpus": os.cpu_count(), **spread},
                  timing=CALL_LATENCY)


def whole_processes(args, work: Path, device: str) -> list[dict]:
    """compile_all_s (unless --no-compile), cold_prove_logK and (unless --no-first)
    cold_prove_logK_first, each written as it is made."""
    suffix = "_cpu" if args.cpu else ""
    backend = ["--cpu"] if args.cpu else []
    warm = args.warm_cache or work / "cache-warm"
    prove = ["prove", "--zkey", "C.zkey", "--witness", "C.wtns", "--json", *backend]
    records = []
    if not args.no_compile:
        records.append(compile_runs(args, work, warm, device))
        write(records, "startup", args.out)
    done = _run(["setup", "--circuit", "mimc", "-k", str(args.log), "--witness", "C.wtns", "--zkey", "C.zkey",
                 "--vk", "vk.json", *backend], warm, work)
    print(f"setup (2^{args.log}): {done.seconds:.1f} s", flush=True)
    first = _run(prove, warm, work)  # loads or compiles what the cache lacks, checks and records the key
    processes, floors = [], []
    for _ in range(args.runs):
        processes.append(_run(prove, warm, work))
        floors.append(_process(numba_floor(args.cpu), work))
    steps = [json.loads(p.stdout)["steps_ms"] for p in processes]
    for p, s, f in zip(processes, steps, floors):
        print(f"prove {p.seconds:.3f} s: process {p.phases_ms} ms; steps {s} ms; then the floor {f.seconds:.3f} s",
              flush=True)
    measured = [p.seconds for p in processes]
    floor_s = [round(f.seconds, 4) for f in floors]
    params = {"runs": len(measured), "stat": "median", "min": min(measured), "max": max(measured),
              "runs_s": [round(t, 4) for t in measured], "numba_floor_s": statistics.median(floor_s),
              "numba_floor_runs_s": floor_s, "first_after_compile_s": first.seconds,
              "steps_ms": steps[-1], "process_ms": median_phases(processes, steps), "bytecode": "cached",
              "kernel_cache": "as found (--no-compile)" if args.no_compile else "numba-cuzk compile",
              "circuit": "mimc", "points_checked": True}
    if args.no_bytecode:
        params["no_bytecode_runs_s"] = [round(_run(prove, warm, work, bytecode=False).seconds, 4)
                                        for _ in range(args.no_bytecode)]
    records.append(record(f"cold_prove_log{args.log}{suffix}", statistics.median(measured), "s", device, params,
                          timing=CALL_LATENCY))
    write(records[-1:], "startup", args.out)
    if args.profile:
        profile(prove, warm, work, args.profile)
    if not args.no_first:
        done = _run(prove, work / "cache-empty", work)
        records.append(record(f"cold_prove_log{args.log}{suffix}_first", done.seconds, "s", device, {
            "steps_ms": json.loads(done.stdout)["steps_ms"], "process_ms": done.phases_ms, "circuit": "mimc",
            "points_checked": True, "gpu_kernels_compiled_first": not args.cpu}, timing=CALL_LATENCY))
        write(records[-1:], "startup", args.out)
        print(f"cold_prove_log{args.log}{suffix}_first: {done.seconds:.1f} s", flush=True)
    return records


def profile(prove: list[str], cache: Path, work: Path, out: Path) -> None:
    """One more warm prove under cProfile: its stats at ``out`` and, sorted by cumulative
    time, the 80 first rows at ``out``.txt. (Python 3.12's cProfile sees every thread: a
    spinner's refresh thread once booked its waits to the steps; the CLI draws none here.)"""
    import pstats

    _process([sys.executable, "-m", "cProfile", "-o", str(out), "-m", "numba_cuzk.cli", *prove], work,
             user_env(cache))
    with open(f"{out}.txt", "w") as text:
        pstats.Stats(str(out), stream=text).sort_stats("cumulative").print_stats(80)


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
    parser.add_argument("--no-bytecode", type=int, default=0, metavar="N",
                        help="N more warm runs without the bytecode cache (params.no_bytecode_runs_s)")
    parser.add_argument("--profile", type=Path, default=None, metavar="FILE",
                        help="profile one more warm prove (cProfile) into FILE, its top rows into FILE.txt")
    parser.add_argument("--out", default=None)
    args = parser.parse_args()
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
    with tempfile.TemporaryDirectory() as tmp:
        records = whole_processes(args, Path(tmp), device)
    for r in records:
        print(f"{r['name']:<28} {r['value']:>10.3f} {r['unit']}")


if __name__ == "__main__":
    main()
