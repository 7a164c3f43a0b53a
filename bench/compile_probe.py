"""How fast this host compiles a kernel, on one core: the yardstick for compile_all_s.

`numba-cuzk compile` took 47-87 s for the same kernels on five H200 machines. This times
one fixed kernel, check_g1 (the G1 point check: ~24k lines of PTX), through Numba and
NVVM to PTX (``cuda.compile`` in a fresh process, as a compile task's first kernel, nothing
else running) and then through ptxas -O3 for the device's compute capability, so that a
compile_all_s can be read against the host that produced it. Records (bench/results/
startup/): compile_probe_ptx_s and compile_probe_ptxas_s (median of --runs
processes). Needs a GPU (its compute capability) and ptxas on PATH (the latter is skipped
without it).

    python3 -m bench.compile_probe [--runs 3] [--out FILE]
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from numba import cuda, types

from bench.common import CALL_LATENCY, gpu_name, record, write
from numba_cuzk.curve.kernels import CHECK

_SIGNATURE = (types.int64, types.uint8[:], types.uint32[:, :])  # check's (n, status, points)


def ptx_seconds(cc: tuple[int, int]) -> tuple[float, str]:
    """(s, PTX) of check_g1 compiled for ``cc`` (a fresh compilation: no cache involved)."""
    start = time.perf_counter()
    ptx, _ = cuda.compile(CHECK["G1"][0].dispatcher.py_func, _SIGNATURE, cc=cc, output="ptx", device=False,
                          abi="numba")
    return time.perf_counter() - start, ptx


def ptxas_seconds(ptx: str, cc: tuple[int, int]) -> float | None:
    """s of ptxas -O3 on ``ptx``; None without ptxas."""
    ptxas = shutil.which("ptxas")
    if ptxas is None:
        return None
    with tempfile.TemporaryDirectory() as tmp:
        source = Path(tmp) / "probe.ptx"
        source.write_text(ptx)
        start = time.perf_counter()
        subprocess.run([ptxas, f"-arch=sm_{cc[0]}{cc[1]}", "-O3", str(source), "-o", str(Path(tmp) / "probe.cubin")],
                       check=True, capture_output=True)
        return time.perf_counter() - start


def probe() -> dict:
    """One fresh compilation and assembly: {"ptx_s", "ptxas_s" (None without ptxas), "lines"}."""
    cc = cuda.get_current_device().compute_capability
    seconds, ptx = ptx_seconds(cc)
    return {"ptx_s": seconds, "ptxas_s": ptxas_seconds(ptx, cc), "lines": len(ptx.splitlines())}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--out")
    parser.add_argument("--one", action="store_true", help="one probe in this process, printed as JSON")
    args = parser.parse_args()
    if args.one:
        print(json.dumps(probe()))
        return
    runs = [json.loads(subprocess.run([sys.executable, "-m", "bench.compile_probe", "--one"], check=True,
                                      capture_output=True, text=True).stdout.strip().splitlines()[-1])
            for _ in range(args.runs)]
    ptx_s = [r["ptx_s"] for r in runs]
    ptxas_s = [r["ptxas_s"] for r in runs if r["ptxas_s"] is not None]
    device = gpu_name()
    params = {"kernel": "check_g1", "ptx_lines": runs[0]["lines"], "runs": args.runs, "stat": "median"}
    records = [record("compile_probe_ptx_s", statistics.median(ptx_s), "s", device,
                      {**params, "min": min(ptx_s), "max": max(ptx_s)}, timing=CALL_LATENCY)]
    if ptxas_s:
        records.append(record("compile_probe_ptxas_s", statistics.median(ptxas_s), "s", device,
                              {**params, "min": min(ptxas_s), "max": max(ptxas_s)}, timing=CALL_LATENCY))
    for r in records:
        print(f"{r['name']}: {r['value']:.2f} s ({r['params']['min']:.2f}-{r['params']['max']:.2f})", flush=True)
    write(records, "startup", args.out)


if __name__ == "__main__":
    main()
