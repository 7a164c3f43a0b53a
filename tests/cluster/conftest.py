"""Fixtures of the cluster tests: Dask clusters on loopback TCP whose workers are threads of
this process (kernels compile once for all of them; TCP still serializes every message),
each with the GPU resource and, on the CPU backend, its own engine."""

from __future__ import annotations

import logging

import pytest
from distributed import Client, LocalCluster

from numba_cuzk.engine import EngineConfig
from numba_cuzk.groth16.formats import read_zkey
from numba_cuzk.groth16.keys import ProvingKey
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
