"""Workers lost mid-job lose and duplicate nothing: their chunks run again elsewhere,
proofs they stored are read back, and a partition proved twice is stored once.

1. A worker removed by the scheduler (as when it stops answering) while it holds a
   partition keeps running (a thread of this process cannot be killed): the partition
   is proved twice at once, by it and by the chunk's second run, and exactly one proof
   is stored and returned.
2. A worker process killed (SIGKILL) while it runs a chunk: the chunk runs elsewhere.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
from pathlib import Path

from distributed import Client

from numba_cuzk.cluster import ClusterProver
from numba_cuzk.cluster.proofs import paths
from numba_cuzk.groth16.formats import read_proof_json
from tests.cluster.conftest import CONFIG, thread_cluster
from tests.conftest import wait_for
from tests.engine.conftest import TIMEOUT_S, synthesizer, verifies, witness
from tests.engine.keys import KEY_PATH

P = 12
REPO = Path(__file__).resolve().parents[2]


class Gate:
    """Holds the synthesizers that pass it until opened; counts those that arrived."""

    def __init__(self) -> None:
        self.opened = threading.Event()
        self._arrived = 0
        self._lock = threading.Lock()

    @property
    def arrived(self) -> int:
        with self._lock:
            return self._arrived

    def pass_through(self, seed: int):
        with self._lock:
            self._arrived += 1
        assert self.opened.wait(TIMEOUT_S)
        return witness(seed)


GATE = Gate()


def gated(seed: int):
    """A synthesizer that waits at GATE (module-level: the workers, threads of this
    process, unpickle it to this very object)."""
    return GATE.pass_through(seed)


async def _remove_worker(address: str, dask_scheduler=None) -> None:
    await dask_scheduler.remove_worker(address=address, stimulus_id="test-lost-worker", close=True)


def _holder(client: Client, suffix: str) -> str | None:
    """The worker processing the task whose key ends with ``suffix``."""
    return next((w for w, keys in client.processing().items() if any(k.endswith(suffix) for k in keys)), None)


def test_partition_proved_twice_is_stored_once(tmp_path, key):
    """Chunk 2 holds partitions 4 and 5; 5 waits at the gate. Once 4 is stored, the
    chunk's worker is removed; the chunk's second run reads 4 back and reaches the gate
    too; then both runs prove 5 at once."""
    partitions = [synthesizer(seed) for seed in range(P)]
    partitions[5] = lambda: gated(5)
    with thread_cluster(3) as cluster, Client(cluster) as client, ClusterProver(client, CONFIG) as prover:
        future = prover.submit(KEY_PATH, partitions, name="porep", out_dir=tmp_path, trusted=True, task_partitions=2)
        proof_4, _ = paths(tmp_path, "porep", 4)
        wait_for(lambda: GATE.arrived == 1 and proof_4.exists(), "partition 4 stored, 5 at the gate", TIMEOUT_S)
        first = _holder(client, "-2")
        client.run_on_scheduler(_remove_worker, first)
        wait_for(lambda: GATE.arrived == 2, "the chunk's second run at the gate", TIMEOUT_S)
        second = _holder(client, "-2")
        assert second not in (None, first)
        GATE.opened.set()
        result = future.result(timeout=TIMEOUT_S)
    assert [p.index for p in result.partitions] == list(range(P))
    assert all(verifies(key, p) for p in result.partitions)
    assert result.partitions[4].recovered and result.partitions[4].worker == second  # read back, not proved again
    for part in result.partitions:  # what came back is what is stored
        assert read_proof_json(paths(tmp_path, "porep", part.index)[0]) == part.proof
    assert sorted(os.listdir(tmp_path / "porep")) == sorted(  # one file each, no temporary left over
        f"partition-{i:03d}.{kind}.json" for i in range(P) for kind in ("proof", "public"))


def test_killed_worker_process_loses_nothing(key):
    with thread_cluster(2) as cluster, Client(cluster) as client:
        env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")])}
        doomed = subprocess.Popen([sys.executable, "-m", "distributed.cli.dask_worker", cluster.scheduler_address,
                                   "--nthreads", "1", "--resources", "GPU=1", "--no-nanny", "--no-dashboard",
                                   "--name", "doomed"], env=env, cwd=REPO, stdout=subprocess.DEVNULL,
                                  stderr=subprocess.DEVNULL)
        try:
            client.wait_for_workers(3, timeout=TIMEOUT_S)
            (address,) = [a for a, w in client.scheduler_info()["workers"].items() if w["name"] == "doomed"]
            with ClusterProver(client, CONFIG) as prover:
                future = prover.submit(KEY_PATH, [synthesizer(seed) for seed in range(P)], trusted=True,
                                       task_partitions=2)
                # its first chunk takes it a while: the process compiles the kernels first
                wait_for(lambda: client.run(lambda dask_worker: len(dask_worker.state.executing),
                                            workers=[address])[address] > 0, "a chunk running in the process",
                         TIMEOUT_S)
                doomed.send_signal(signal.SIGKILL)
                doomed.wait(TIMEOUT_S)
                result = future.result(timeout=TIMEOUT_S)
        finally:
            doomed.kill()
    assert [p.index for p in result.partitions] == list(range(P))
    assert all(verifies(key, p) for p in result.partitions)
    assert address not in {p.worker for p in result.partitions}
