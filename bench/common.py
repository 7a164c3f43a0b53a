"""Shared by the benchmarks: CUDA-event timing and the one results format
(../shared/guide/results.md): a JSON list of {name, value, unit, device, commit, date,
params, peer}, in bench/results/<topic>/ (result_path)."""

from __future__ import annotations

import datetime
import json
import os
import platform
import statistics
import subprocess
from pathlib import Path

from numba_cuzk.fileio import atomic_write

RESULTS = Path(__file__).parent / "results"


def commit() -> str:
    """Short hash being measured: $NUMBA_CUZK_COMMIT (set where .git is absent) or git."""
    if os.environ.get("NUMBA_CUZK_COMMIT"):
        return os.environ["NUMBA_CUZK_COMMIT"]
    try:
        out = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, check=True)
        return out.stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def gpu_name() -> str:
    from numba import cuda

    name = getattr(cuda.get_current_device(), "name", "CUDA simulator")
    return name.decode() if isinstance(name, bytes) else name


def cpu_name() -> str:
    model = platform.processor() or "cpu"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return f"cpu:{model} x{os.cpu_count()}"


def record(name: str, value: float, unit: str, device: str, params: dict | None = None,
           peer: dict | None = None) -> dict:
    # time (UTC): which of a day's records is the latest (bench/table.py)
    rec = {"name": name, "value": round(float(value), 4), "unit": unit, "device": device,
           "commit": commit(), "date": datetime.date.today().isoformat(),
           "time": datetime.datetime.now(datetime.timezone.utc).strftime("%H:%M:%SZ"), "params": params or {}}
    if peer:
        rec["peer"] = peer
    return rec


def device_time_ms(launch, runs: int = 7, warmup: int = 2) -> list[float]:
    """Device milliseconds of each of ``runs`` calls of ``launch()`` after ``warmup`` calls,
    from CUDA events recorded back to back: run k's interval starts at run k-1's stop event
    and the warm-ups are still queued when the first starts, so the host's time to issue a
    run (Python, argument checks, launches: ~0.1 ms for a 3-pass NTT) overlaps the run
    before it. What the device waits on the host for is still counted: a launch that
    synchronizes inside (the MSM's host window sum), or host work longer than the
    device's, is timed whole."""
    from numba import cuda

    for _ in range(warmup):
        launch()
    events = [cuda.event(timing=True) for _ in range(runs + 1)]
    events[0].record()
    for k in range(runs):
        launch()
        events[k + 1].record()
    events[-1].synchronize()
    return [cuda.event_elapsed_time(start, stop) for start, stop in zip(events, events[1:])]


def same_call_peer(path: str | None, name: str) -> dict | None:
    """Figure ``name`` of a peer benchmark's JSON-lines file (bench/peer/sppark.sh, run in
    the same device call) as a record's ``peer``; None without the file or the figure."""
    if not path or not Path(path).exists():
        return None
    for line in Path(path).read_text().splitlines():
        rec = json.loads(line)
        if rec["name"] == name:
            return {"name": f"sppark {rec['params']['sppark_commit'][:7]} (same call)", "value": round(rec["value"], 4),
                    "unit": rec["unit"], "spread_pct": rec["spread_pct"]}
    return None


def median(values) -> float:
    return statistics.median(values)


def host_slug(devices: list[str]) -> str:
    """The host part of a result's file name: the first GPU's name without its vendor
    ("NVIDIA H200" -> "h200"; the host's CPU records go with its GPU's), else the CPU's
    threads ("cpu:AMD EPYC x2" -> "cpu2")."""
    for device in devices:
        if not device.startswith("cpu:"):
            words = [w for w in device.split() if w.lower() not in ("nvidia", "geforce", "tesla")]
            return "".join(ch for ch in "".join(words).lower() if ch.isalnum()) or "gpu"
    threads = devices[0].rsplit(" x", 1)[-1] if devices else ""
    return f"cpu{threads}" if threads.isdigit() else "cpu"


def result_path(topic: str, devices: list[str], commit_hash: str | None = None, date: str | None = None,
                label: str = "", ext: str = "json") -> Path:
    """bench/results/<topic>/<topic>-<host>-<commit>-<date>[-<label>].<ext>: one folder per
    benchmark, one name per (benchmark, host, commit, day) (bench/results/INDEX.md)."""
    commit_hash = commit_hash or commit()
    date = date or datetime.date.today().isoformat()
    suffix = f"-{label}" if label else ""
    return RESULTS / topic / f"{topic}-{host_slug(devices)}-{commit_hash}-{date}{suffix}.{ext}"


def write(records: list[dict], topic: str, out: str | None = None) -> Path:
    """Append records to ``out`` or to result_path(topic, ...) of their devices, commit and
    day (earlier runs of the day are kept: the files are the performance history); return
    the path."""
    if out:
        path = Path(out)
    else:
        path = result_path(topic, [r["device"] for r in records], records[0]["commit"], records[0]["date"])
    path.parent.mkdir(parents=True, exist_ok=True)
    earlier = json.loads(path.read_text()) if path.exists() else []
    with atomic_write(path, "w") as file:
        file.write(json.dumps(earlier + records, indent=1) + "\n")
    return path


def markdown_table(records: list[dict]) -> str:
    lines = ["| name | value | unit | device | notes |", "| --- | ---: | --- | --- | --- |"]
    for r in records:
        notes = ", ".join(f"{k}={v}" for k, v in r.get("params", {}).items() if k in ("variant", "regs", "block", "runs"))
        if "peer" in r:
            notes += f"; peer {r['peer']['name']}: {r['peer']['value']} {r['peer']['unit']}"
        lines.append(f"| {r['name']} | {r['value']} | {r['unit']} | {r['device']} | {notes} |")
    return "\n".join(lines)
