"""The GIL's convoy effect, by the interpreter's switch interval: why a GPU worker thread
can wait milliseconds to pick up a staged partition while a proof is assembled.

A latency-critical thread makes ``--calls`` short calls that release the GIL (as a GPU
worker's driver calls and queue waits do) while another thread runs pure-Python big-int
arithmetic (as an epilogue's Horner sums and conversions do). Each release hands the GIL
to the busy thread, which keeps it until the switch interval forces it back: up to one
interval per call. Records (bench/results/host/): gil_convoy_calls_ms_switchN
(ms for the calls, median of --runs, N the interval in us) and gil_convoy_calls_ms_alone.

    python3 -m bench.gil [--calls 20] [--runs 50] [--intervals 5000,500] [--out FILE]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import threading
import time

from bench.common import CALL_LATENCY, cpu_name, record, write

_P = (1 << 381) - 1  # an Fq-sized modulus


def _busy(stop: threading.Event) -> None:
    x = 3
    while not stop.is_set():
        for _ in range(200):
            x = x * x % _P


def _calls_ms(calls: int) -> float:
    start = time.perf_counter()
    for _ in range(calls):
        time.sleep(0)  # releases and retakes the GIL
    return 1e3 * (time.perf_counter() - start)


def convoy_ms(calls: int, runs: int, interval_s: float | None) -> list[float]:
    """``runs`` timings (ms) of ``calls`` GIL-releasing calls, beside a busy thread with the
    given switch interval (None: alone)."""
    previous = sys.getswitchinterval()
    stop = threading.Event()
    busy = None
    if interval_s is not None:
        sys.setswitchinterval(interval_s)
        busy = threading.Thread(target=_busy, args=(stop,), daemon=True)
        busy.start()
    try:
        return [_calls_ms(calls) for _ in range(runs)]
    finally:
        stop.set()
        if busy is not None:
            busy.join()
        sys.setswitchinterval(previous)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=20)
    parser.add_argument("--runs", type=int, default=50)
    parser.add_argument("--intervals", default="5000,500", help="switch intervals in us")
    parser.add_argument("--out")
    args = parser.parse_args()
    device = cpu_name()
    records = []
    for label, interval in [("alone", None)] + [(f"switch{us}", int(us) * 1e-6) for us in args.intervals.split(",")]:
        times = convoy_ms(args.calls, args.runs, interval)
        median = statistics.median(times)
        records.append(record(f"gil_convoy_calls_ms_{label}", median, "ms", device, {
            "calls": args.calls, "runs": args.runs, "stat": "median", "min": min(times), "max": max(times)},
                timing=CALL_LATENCY))
        print(f"{label:>12}: {args.calls} GIL-releasing calls in {median:.2f} ms (min {min(times):.2f}, "
              f"max {max(times):.2f})", flush=True)
    write(records, "host", args.out)


if __name__ == "__main__":
    main()
