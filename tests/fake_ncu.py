"""A stand-in for Nsight Compute's CLI (no GPU here), for bench.counters' tests and its dry run:
``python -m tests.fake_ncu ARGS`` answers ``--query-metrics`` with a listing in ncu's layout
(every base name of QUERY_KNOWN) and a profiling run (``--csv --page raw --log-file F
--metrics M ... CHILD``) with a log in ncu's format: its own ==WARNING== / ==PROF== lines,
then the CSV (a header row, a row of units, a row per launch, metric columns in alphabetical
order, durations in us with thousands separators), ``--ncu-launches`` launches of each kernel
in LAUNCHES. Environment: FAKE_NCU_ARGS (append each argv to this file, as JSON),
FAKE_NCU_FAIL_FIRST (the first profiling run fails as an unknown metric does),
FAKE_NCU_RUN_CHILD (run CHILD too, its profiler calls stubbed, as ncu runs its target).
"""

from __future__ import annotations

import csv
import io
import json
import os
import subprocess
import sys
from pathlib import Path

# Each launch one kernel: its name as ncu prints it, duration (us), SM active %, and each pipe
# and extra metric's base -> %; an NTT is three pass kernels.
LAUNCHES = {
    "ntt": [("gpu_pass_radix8[abi:v1,cw51]", 1340.0, 97.0, 45.0), ("gpu_pass_radix4_pair[abi:v2,cw51]", 1660.0, 92.0, 40.0),
            ("gpu_pass_radix4_pair[abi:v2,cw51]", 1740.0, 90.0, 42.0)],
    "accumulate_g1": [("accumulate_g1[abi:v3,cw51]", 550.0, 98.5, 35.0)],
    "accumulate_g2": [("accumulate_g2[abi:v4,cw51]", 1800.0, 96.0, 38.0)],
}
QUERY_KNOWN = ("sm__cycles_active", "sm__inst_executed_pipe_alu", "sm__inst_executed_pipe_fma",
               "sm__inst_executed_pipe_fmaheavy", "sm__pipe_alu_cycles_active", "sm__pipe_fma_cycles_active",
               "sm__pipe_fmaheavy_cycles_active", "sm__warps_active", "dram__throughput", "gpu__time_duration")
FIRST = ("ID", "Process ID", "Process Name", "Host Name", "Kernel Name", "Context", "Stream", "Block Size", "Grid Size",
         "Device", "CC")


def metric_value(metric: str, sm: float, alu: float) -> str:
    """A launch's value of ``metric``: SM active, the ALU pipe; the other pipes a fixed
    fraction of the ALU's (FMA-heavy cycles 1.5x: wide integer multiplies take two)."""
    base = metric.split(".")[0]
    if base == "sm__cycles_active":
        return f"{sm:.2f}"
    shares = {"sm__pipe_fmaheavy_cycles_active": 1.5, "sm__inst_executed_pipe_fmaheavy": 0.75,
              "sm__inst_executed_pipe_fma": 0.4, "sm__pipe_fma_cycles_active": 0.8, "dram__throughput": 0.1,
              "sm__warps_active": 1.2}
    return f"{alu * shares.get(base, 1.0):.2f}"


def render_log(metrics: list[str], launches: int, pid: int = 529) -> str:
    """ncu's log of ``launches`` launches of each kernel group, in LAUNCHES order."""
    columns = sorted(metrics)
    out = io.StringIO()
    out.write("==WARNING== Note: Running with unmodified GPU clocks. If not controlled otherwise, profiling "
              "results may be inconsistent.\n")
    out.write(f"==PROF== Connected to process {pid} (/usr/bin/python3.12)\n")
    rows = [kernel for group in LAUNCHES.values() for _ in range(launches) for kernel in group]
    for name, *_ in rows:
        out.write(f'==PROF== Profiling "{name}": 0%....50%....100% - 9 passes\n')
    out.write(f"==PROF== Disconnected from process {pid}\n")
    table = csv.writer(out, quoting=csv.QUOTE_ALL, lineterminator="\n")
    table.writerow([*FIRST, *columns])
    table.writerow([""] * len(FIRST) + ["usecond" if c.startswith("gpu__time_duration") else "%" for c in columns])
    for k, (name, us, sm, alu) in enumerate(rows):
        values = [f"{us:,.2f}" if c.startswith("gpu__time_duration") else metric_value(c, sm, alu) for c in columns]
        table.writerow([str(k), str(pid), "python3.12", "127.0.0.1", name, "1", "7", "(256, 1, 1)", "(16384, 1, 1)",
                        "0", "9.0", *values])
    return out.getvalue()


def expected(group: str, metric: str) -> float:
    """What bench.counters should average for ``group`` (weighted by duration)."""
    kernels = LAUNCHES[group]
    total = sum(us for _, us, _, _ in kernels)
    return sum(us * float(metric_value(metric, sm, alu)) for _, us, sm, alu in kernels) / total


def _option(argv: list[str], name: str) -> str:
    return argv[argv.index(name) + 1]


def main(argv: list[str]) -> int:
    if os.environ.get("FAKE_NCU_ARGS"):
        with open(os.environ["FAKE_NCU_ARGS"], "a") as file:
            file.write(json.dumps(argv) + "\n")
    if argv == ["--query-metrics"]:
        print("Device NVIDIA H200 (GH100)\n" + "-" * 40 + " " + "-" * 40)
        print(f"{'Metric Name':40s} Metric Description\n" + "-" * 40 + " " + "-" * 40)
        for name in QUERY_KNOWN:
            print(f"{name:40s} a description")
        return 0
    log = Path(_option(argv, "--log-file"))
    metrics = _option(argv, "--metrics").split(",")
    child = argv[argv.index(sys.executable):] if sys.executable in argv else []
    marker = os.environ.get("FAKE_NCU_FAIL_FIRST")
    if marker and not Path(marker).exists():
        Path(marker).write_text("failed once")
        log.write_text(f"==ERROR== Failed to find metric {metrics[-1]}\n")
        return 1
    if os.environ.get("FAKE_NCU_RUN_CHILD"):
        stub = ("import runpy, sys; from numba import cuda; cuda.profile_start = cuda.profile_stop = lambda: None; "
                "sys.argv[0] = 'bench.counters'; runpy.run_module('bench.counters', run_name='__main__')")
        subprocess.run([child[0], "-c", stub, *child[3:]], check=True)  # child: python -m bench.counters ARGS
    log.write_text(render_log(metrics, int(_option(child, "--ncu-launches"))))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
