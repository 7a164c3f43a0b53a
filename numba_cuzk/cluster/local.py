"""A Dask cluster on this machine: one worker process per GPU, CPU workers without one.

Each worker is a Nanny-managed process with
- resources {"GPU": 1}: it runs one chunk at a time (client.py), which its engine pipelines;
- one thread, as one chunk at a time needs (the engine has its own threads);
- CUDA_VISIBLE_DEVICES set to its own GPU, so its engine proves on ordinal 0 (the
  dask-cuda convention), or the CPU backend on a machine without a GPU (then every CPU
  worker shares all the cores);
- no Dask memory limit: the engine's host budget bounds its witnesses, and Dask's limit
  would restart a worker for the pinned buffers and resident keys it holds on purpose;
- a non-daemonic process, so that its engine can spawn synthesis processes
  (``distributed.worker.daemon = False``, set here for every worker the Nanny starts,
  restarts included).
"""

from __future__ import annotations

import os

import dask
from distributed import Nanny, Scheduler, SpecCluster

from numba_cuzk import backend


def visible_gpus() -> list[str]:
    """This process's GPUs, as CUDA_VISIBLE_DEVICES entries (its own list if it has one)."""
    count = len(backend.describe_devices())
    inherited = os.environ.get("CUDA_VISIBLE_DEVICES")
    return inherited.split(",")[:count] if inherited else [str(i) for i in range(count)]


def local_cluster(gpus: int | None = None, *, port: int = 0, dashboard: str | None = None) -> SpecCluster:
    """Start a cluster of ``gpus`` workers (default: one per visible GPU, or one CPU
    worker where there is none) and its scheduler on ``port`` (0: any free one), with the
    Dask dashboard at ``dashboard`` (e.g. ":8787"; None: none). ValueError if more GPUs
    are asked for than there are."""
    gpu_ids = visible_gpus()
    if gpu_ids and gpus is not None and gpus > len(gpu_ids):
        raise ValueError(f"{gpus} GPU workers asked for, but {len(gpu_ids)} GPUs are visible")
    count = gpus or len(gpu_ids) or 1
    dask.config.set({"distributed.worker.daemon": False})
    workers = {}
    for i in range(count):
        env = {"CUDA_VISIBLE_DEVICES": gpu_ids[i]} if gpu_ids else {}
        workers[f"gpu{i}" if gpu_ids else f"cpu{i}"] = {"cls": Nanny, "options": {
            "nthreads": 1, "resources": {"GPU": 1}, "memory_limit": 0, "env": env}}
    scheduler = {"cls": Scheduler, "options": {"port": port, "dashboard": dashboard is not None,
                                               "dashboard_address": dashboard or ":0"}}
    return SpecCluster(workers=workers, scheduler=scheduler, name="numba-cuzk")
