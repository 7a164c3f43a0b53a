"""A first `numba-cuzk prove` on a fresh machine with the prebuilt kernels: the archive
built with no GPU visible, installed into an empty kernel cache, then one whole prove
process, timed, its kernels compiled and loaded counted.

    python3 -m bench.prebuilt [--cpu] [--targets cpu,sm_90] [--archive FILE] [--log 14] [--runs 3] [--out FILE]

Without --archive the archive is built first (`numba-cuzk compile --targets ... --archive`,
CUDA_VISIBLE_DEVICES="" so that no GPU is seen): ``prebuilt_build_s``. Each run takes a
fresh cache folder, installs the archive (`compile --fetch --sha256`: its time is
params.install_s) and proves a 2^log MiMC zkey (points checked: not --trusted), the
process timed from the interpreter's start to its exit (timing: call-latency). Records
(results.md): ``first_prove_logK_prebuilt`` (s, median; `_cpu` with --cpu), params
compiled and loaded (kernel_cache.compile_stats of the prove process: 0 compiled is the
point), install_s, the archive's size and targets.
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
# The prove process under the CLI, its compile counts printed (stderr, last line) at exit.
COUNTED = [sys.executable, "-c", "import atexit, json, sys; from numba_cuzk import kernel_cache; "
           "atexit.register(lambda: print(json.dumps(kernel_cache.compile_stats()), file=sys.stderr)); "
           "from numba_cuzk.cli import app; app()"]


def _run(command: list[str], cache: Path, cwd: Path, **env) -> tuple[float, subprocess.CompletedProcess]:
    start = time.perf_counter()
    done = subprocess.run(command, cwd=cwd, capture_output=True, text=True,
                          env=dict(os.environ, NUMBA_CUZK_CACHE_DIR=str(cache), **env))
    seconds = time.perf_counter() - start
    if done.returncode:
        raise RuntimeError(f"{' '.join(command[3:])} exited {done.returncode}:\n{done.stdout}\n{done.stderr}")
    return seconds, done


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cpu", action="store_true", help="the CPU backend (names end in _cpu)")
    parser.add_argument("--targets", default=None, help="to build (default: cpu, and this GPU's sm_MN)")
    parser.add_argument("--archive", type=Path, default=None, help="an archive built already")
    parser.add_argument("--log", type=int, default=14)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--out", default=None)
    args = parser.parse_args()
    suffix, backend = ("_cpu", ["--cpu"]) if args.cpu else ("", [])
    if args.cpu:
        device = cpu_name()
    else:
        from bench.common import gpu_name
        from numba_cuzk.commands.compile import device_target
        device = gpu_name()
    targets = args.targets or ("cpu" if args.cpu else f"cpu,{device_target()}")
    records = []
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        archive = args.archive.resolve() if args.archive else None  # the processes run in a scratch folder
        if archive is None:
            archive = work / "kernels.tar.gz"
            seconds, done = _run(CLI + ["compile", "--targets", targets, "--archive", str(archive)], work / "build",
                                 work, CUDA_VISIBLE_DEVICES="")
            print(done.stdout, done.stderr[-3000:], flush=True)
            records.append(record("prebuilt_build_s", seconds, "s", device, {
                "targets": targets, "cpus": os.cpu_count(), "gpu_visible": False,
                "archive_bytes": archive.stat().st_size}, timing=CALL_LATENCY))
            write(records[-1:], "startup", args.out)
        digest = subprocess.run([sys.executable, "-c", f"from numba_cuzk.commands.prebuilt import sha256_file; "
                                 f"print(sha256_file({str(archive)!r}))"], capture_output=True, text=True,
                                check=True).stdout.strip()
        _run(CLI + ["compile", "--fetch", str(archive), "--sha256", digest], work / "scratch", work)  # setup's kernels
        seconds, _ = _run(CLI + ["setup", "--circuit", "mimc", "-k", str(args.log), "--witness", "C.wtns",
                                 "--zkey", "C.zkey", "--vk", "vk.json", "--cpu"], work / "scratch", work)
        print(f"setup (2^{args.log}): {seconds:.1f} s", flush=True)
        times, installs, stats = [], [], []
        for i in range(args.runs):
            cache = work / f"fresh-{i}"
            install_s, done = _run(CLI + ["compile", "--fetch", str(archive), "--sha256", digest], cache, work)
            seconds, done = _run(COUNTED + ["prove", "--zkey", "C.zkey", "--witness", "C.wtns", *backend], cache, work)
            counts = json.loads(done.stderr.strip().splitlines()[-1])
            print(f"run {i + 1}: install {install_s:.1f} s, first prove {seconds:.2f} s, {counts}", flush=True)
            times.append(seconds)
            installs.append(install_s)
            stats.append(counts)
        records.append(record(f"first_prove_log{args.log}{suffix}_prebuilt", statistics.median(times), "s", device, {
            "runs": len(times), "stat": "median", "min": min(times), "max": max(times),
            "compiled": [s["compiled"] for s in stats], "loaded": [s["loaded"] for s in stats],
            "install_s": statistics.median(installs), "targets": targets, "circuit": "mimc", "points_checked": True,
            "archive_bytes": archive.stat().st_size}, timing=CALL_LATENCY))
        write(records[-1:], "startup", args.out)
    for r in records:
        print(f"{r['name']:<32} {r['value']:>10.3f} {r['unit']}  {r['params'].get('compiled', '')}")


if __name__ == "__main__":
    main()
