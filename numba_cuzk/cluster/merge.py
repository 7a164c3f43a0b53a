"""One cluster timeline from the workers' timelines, on the client's clock.

Each worker's engine writes its own timeline (numba_cuzk.events): times in ms since its
t0, on its host's monotonic clock; devices and synthesis workers numbered from 0 on
every worker; one engine job per partition attempt. The merged file is a timeline of
the same schema, so ``numba-cuzk timeline`` and numba_cuzk.timeline read it as they read
a single host's:

- times: worker time t -> t + t0_worker - offset (clock.py: worker clock - client clock,
  measured), in ms since the merged t0, the earliest event kept;
- devices: each (worker, local id) gets its cluster-wide id (the ids ClusterProver's
  results carry); the header lists them with their worker and host;
- synthesis workers: renumbered so that no two workers share a number;
- jobs: an engine job (one attempt at one partition) becomes its cluster job and
  partition index, so attempts on several workers are one partition's events.

Only the events of the chosen jobs of one ClusterProver are kept (another client's job
of the same name is another job), with the device-wide ones (NVML samples,
allocations and synchronizations of no partition) that fall within their span. A lost
worker's timeline is lost with it; ``config["cluster"]["workers"]`` lists those merged.
"""

from __future__ import annotations

import json
import os
import time
from typing import Callable, Iterable

from numba_cuzk.cluster.clock import Offset
from numba_cuzk.events import FORMAT, VERSION
from numba_cuzk.fileio import atomic_write


def merge(path: str | os.PathLike, workers: list[dict], offsets: dict[str, Offset],
          device_id: Callable[[str, int], int], topic: str, jobs: Iterable[str] | None = None) -> int:
    """Write the merged timeline of ``workers`` (worker.describe_worker dicts) to ``path``:
    the events of the jobs that the ClusterProver of progress topic ``topic`` submitted
    (``jobs``: of these only; None: all). Returns the number of events written;
    ValueError if none of the jobs has an event."""
    wanted = None if jobs is None else set(jobs)
    scoped, device_wide, described = [], [], []
    synthesis_base = 0
    for worker in sorted((w for w in workers if w and w["timeline"]), key=lambda w: w["address"]):
        header, events = _parse(worker["timeline"])
        offset = offsets[worker["address"]]
        shift_ns = header["t0_ns"] - offset.offset_ns  # the worker's t0 on the client's clock
        highest = -1
        for event in events:
            if "job" in event:
                if event["job"] not in worker["names"]:
                    continue  # an engine job no cluster task made
                job, index, by = worker["names"][event["job"]]
                if by != topic or (wanted is not None and job not in wanted):
                    continue
                event["job"] = job
                if "partition" in event:
                    event["partition"] = index
            if "device" in event:
                event["device"] = device_id(worker["address"], event["device"])
            if "worker" in event:
                highest = max(highest, event["worker"])
                event["worker"] += synthesis_base
            event["t_ms"] = shift_ns + event["t_ms"] * 1e6  # client ns until t0 is known
            if "end_ms" in event:
                event["end_ms"] = shift_ns + event["end_ms"] * 1e6
            (scoped if "job" in event else device_wide).append(event)
        synthesis_base += highest + 1
        described.append(_worker_entry(worker, header, offset, device_id))
    if not scoped:
        raise ValueError(f"no timeline events of jobs {sorted(wanted) if wanted else 'any'} on the workers")
    start = min(e["t_ms"] for e in scoped)
    end = max(e.get("end_ms", e["t_ms"]) for e in scoped)
    kept = scoped + [e for e in device_wide if start <= e["t_ms"] and e.get("end_ms", e["t_ms"]) <= end]
    t0_ns = int(min(e["t_ms"] for e in kept))
    for event in kept:
        for name in ("t_ms", "end_ms"):
            if name in event:
                event[name] = round((event[name] - t0_ns) / 1e6, 3)
    kept.sort(key=lambda e: e["t_ms"])
    header = {
        "format": FORMAT, "version": VERSION, "pid": os.getpid(),
        "host": "cluster: " + ", ".join(sorted({w["host"] for w in described})),
        "start_unix_s": round(time.time() - (time.monotonic_ns() - t0_ns) / 1e9, 6),
        "clock": "monotonic", "t0_ns": t0_ns,
        "devices": sorted((device for w in described for device in w["devices"]), key=lambda d: d["id"]),
        "config": {"cluster": {"clock": "the client's monotonic clock; worker offsets measured by round trips",
                               "jobs": None if wanted is None else sorted(wanted), "workers": described}},
    }
    with atomic_write(path, "w") as file:
        for record in (header, *kept):
            file.write(json.dumps(record, separators=(",", ":")) + "\n")
    return len(kept)


def _parse(text: str) -> tuple[dict, list[dict]]:
    """A worker timeline's header and events; a line being written as it was read (the
    engine is live) is left out."""
    lines = text.splitlines()
    events = []
    for line in lines[1:]:
        try:
            events.append(json.loads(line))
        except ValueError:
            continue
    return json.loads(lines[0]), events


def _worker_entry(worker: dict, header: dict, offset: Offset, device_id: Callable[[str, int], int]) -> dict:
    """The header's record of one merged worker, its devices with cluster-wide ids."""
    address, host = worker["address"], worker["host"]
    devices = [{"id": device_id(address, d["id"]), "name": d["name"], "worker": address, "host": host}
               for d in worker["devices"]]
    return {"address": address, "host": host, "pid": header.get("pid"), "offset_ns": offset.offset_ns,
            "clock_error_ms": offset.rtt_ns / 2e6, "devices": devices, "engine": header.get("config", {})}
