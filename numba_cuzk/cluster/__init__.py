"""Proving on a Dask cluster of GPU workers: one Engine per worker, jobs spread over them.

    client.py   ClusterProver (add_key, submit, submit_many, warm_up, write_timeline), prove_many
    worker.py   ProvingPlugin (a worker's engine and keys), the proving task
    keys.py     proving keys named by content hash (KeyRef), sent to each worker once
    proofs.py   proof files written exactly once, whoever proves them
    clock.py    each worker's clock offset, measured by round trips
    merge.py    the workers' timelines as one, on the client's clock
    local.py    local_cluster: one worker process per GPU on this machine
    batch.py    `numba-cuzk run --scheduler`'s work: reach the scheduler first, prove a run's plan

Needs the ``cluster`` extra (dask, distributed). Layering: imports engine, groth16, timeline,
events, fileio and backend; only cli.py imports it.
"""

from numba_cuzk.cluster.client import ClusterProver, prove_many
from numba_cuzk.cluster.keys import KeyRef, zkey_bytes
from numba_cuzk.cluster.local import local_cluster
from numba_cuzk.cluster.worker import FailedPartition, ProvedPartition

__all__ = ["ClusterProver", "FailedPartition", "KeyRef", "ProvedPartition", "local_cluster", "prove_many",
           "zkey_bytes"]
