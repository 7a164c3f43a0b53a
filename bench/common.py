"""Shared by the benchmarks: CUDA-event timing and the one results format
(../shared/guide/results.md): a JSON list of {name, value, unit, device, commit, date,
params, peer}, in bench/results/<topic>/ (result_path)."""

from __future__ import annotations

import datetime
import functools
import json
import os
import platform
import re
import statistics
import subprocess
import time
from pathlib import Path

from numba_cuzk.fileio import atomic_write

RESULTS = Path(__file__).parent / "results"
REPO = Path(__file__).parent.parent
DEVICE_THROUGHPUT = "device-throughput"  # CUDA events back to back, launches queued ahead
CALL_LATENCY = "call-latency"  # one call at a time, the host's work included
TIMINGS = (DEVICE_THROUGHPUT, CALL_LATENCY)
_HASH = re.compile(r"[0-9a-f]{7,40}")


class DirtyTree(RuntimeError):
    """A record would name a commit that is not the tree measured."""


def _git(*args: str) -> str | None:
    try:
        return subprocess.run(["git", "-C", str(REPO), *args], capture_output=True, text=True,
                              check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return None


def commit() -> str:
    """The short hash of the commit measured (``_commit``, once per setting of the
    environment variables below)."""
    return _commit(os.environ.get("NUMBA_CUZK_COMMIT"), os.environ.get("NUMBA_CUZK_ALLOW_DIRTY"))


@functools.lru_cache(maxsize=None)
def _commit(named: str | None, allow_dirty: str | None) -> str:
    """The short hash of the commit measured. Where .git is absent (the device's copy of the
    tree) $NUMBA_CUZK_COMMIT names it: it must be a bare hash (no "+local" suffixes).
    With git: HEAD, and a tree with uncommitted changes to tracked files is refused
    (DirtyTree: commit first) unless $NUMBA_CUZK_ALLOW_DIRTY=1, which still records HEAD
    and marks every record's params ``dirty_tree``."""
    head = _git("rev-parse", "--short", "HEAD")
    if named:
        if not _HASH.fullmatch(named):
            raise DirtyTree(f"NUMBA_CUZK_COMMIT={named!r} is not a commit hash: commit the tree measured and name it")
        if head is not None and _git("cat-file", "-e", f"{named}^{{commit}}") is None:
            raise DirtyTree(f"NUMBA_CUZK_COMMIT={named!r} is not a commit of this repository")
        return named
    if head is None:
        raise DirtyTree("no git here and no NUMBA_CUZK_COMMIT: a record must name the commit measured")
    if dirty() and allow_dirty != "1":
        raise DirtyTree(f"the tree has uncommitted changes to tracked files (HEAD {head}): commit them first, "
                        "or set NUMBA_CUZK_ALLOW_DIRTY=1 to record HEAD with params.dirty_tree")
    return head


def dirty() -> bool:
    """Whether tracked files differ from HEAD (False without git or with NUMBA_CUZK_COMMIT)."""
    if os.environ.get("NUMBA_CUZK_COMMIT"):
        return False
    return bool(_git("status", "--porcelain", "--untracked-files=no"))


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
           peer: dict | None = None, *, timing: str) -> dict:
    """One record (../shared/guide/results.md); ``timing``: DEVICE_THROUGHPUT or
    CALL_LATENCY, written as params.timing. A peer under another timing is refused."""
    if timing not in TIMINGS:
        raise ValueError(f"{name}: timing must be one of {', '.join(TIMINGS)}, not {timing!r}")
    if peer and peer.get("timing", timing) != timing:
        raise ValueError(f"{name}: a {timing} record cannot have a {peer['timing']} peer ({peer['name']})")
    params = {**(params or {}), "timing": timing, **({"dirty_tree": True} if dirty() else {})}
    if device.startswith("cpu:"):  # which Fq product the CPU backend ran (field/adx.py): figures move with it
        from numba_cuzk.field import adx

        params.setdefault("fq_product", "adx" if adx.available() else "llvm")
    rec = {"name": name, "value": round(float(value), 4), "unit": unit, "device": device,
           "commit": commit(), "date": datetime.date.today().isoformat(),
           # time (UTC): which of a day's records is the latest (bench/table.py)
           "time": datetime.datetime.now(datetime.timezone.utc).strftime("%H:%M:%SZ"), "params": params}
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


def call_latency_ms(call, runs: int = 7, warmup: int = 2) -> list[float]:
    """Wall ms of each of ``runs`` calls of ``call()`` after ``warmup``, one at a time: the
    device idle before each (synchronized), the call's host work (Python, argument checks,
    launches, any host-side step) and its device work up to a synchronize after it, as a
    caller that waits for each result pays them."""
    from numba import cuda

    def once() -> float:
        cuda.synchronize()
        t0 = time.perf_counter()
        call()
        cuda.synchronize()
        return (time.perf_counter() - t0) * 1e3

    for _ in range(warmup):
        once()
    return [once() for _ in range(runs)]


def same_call_peer(path: str | None, name: str) -> dict | None:
    """Figure ``name`` of a peer benchmark's JSON-lines file (bench/peer/sppark.sh, run in
    the same device call) as a record's ``peer``; None without the file or the figure."""
    if not path or not Path(path).exists():
        return None
    for line in Path(path).read_text().splitlines():
        rec = json.loads(line)
        if rec["name"] == name:
            return {"name": f"sppark {rec['params']['sppark_commit'][:7]} (same call)", "value": round(rec["value"], 4),
                    "unit": rec["unit"], "spread_pct": rec["spread_pct"], "timing": DEVICE_THROUGHPUT}
    return None


def median(values) -> float:
    return statistics.median(values)


def spread(values: list[float]) -> dict:
    """min / median / max of a figure over its runs, for a record's params."""
    return {"runs": len(values), "min": round(min(values), 4), "median": round(statistics.median(values), 4),
            "max": round(max(values), 4)}


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
