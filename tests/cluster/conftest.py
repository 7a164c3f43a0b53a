"""Fixtures of the cluster tests: Dask clusters on loopback TCP whose workers are threads of
this process (kernels compile once for all of them; TCP still serializes every message),
each with the GPU resource and, on the CPU backend, its own engine. The prover's kernels
are compiled before the first cluster starts (prover_compiled)."""

from __future__ import annotations

import logging

import pytest
from distributed import Client, LocalCluster

from numba_cuzk.engine import EngineConfig
from numba_cuzk.groth16.formats import read_zkey
from numba_cuzk.groth16.keys import ProvingKey
from numba_cuzk.groth16.prove import Prover
from tests.engine.conftest import witness
from tests.engine.keys import KEY_PATH

CONFIG = EngineConfig(synthesis="thread", synthesis_workers=1)  # the stored key's partitions build in ~1 ms


def thread_cluster(workers: int) -> LocalCluster:
    return LocalCluster(n_workers=workers, processes=False, protocol="tcp://", threads_per_worker=1,
                        resources={"GPU": 1}, dashboard_address=":0", silence_logs=logging.ERROR)


@pytest.fixture(scope="module")
def client():
    """Three workers, shared by a module's tests."""
    with thread_cluster(3) as cluster, Client(cluster) as client:
        yield client


@pytest.fixture(scope="session")
def key() -> ProvingKey:
    return read_zkey(KEY_PATH, trusted=True)


@pytest.fixture(scope="session", autouse=True)
def prover_compiled(key):
    """One proof in this thread first: on a cold kernel cache the workers' threads would
    compile the CPU prover's kernels inside the tests' waits (108 s of a 120 s TIMEOUT_S on
    CI's 2 cores), beside the scheduler's heartbeats; the cluster tests time the cluster."""
    Prover(key, gpu=False).prove(witness(0))
