"""Proving keys reach each worker once, named by the SHA-256 of their zkey file.

A task names its key by digest only (64 hex characters), never by its bytes. The bytes
travel in a ``KeyPlugin``, a Dask WorkerPlugin registered with the scheduler under the
name ``numba-cuzk-key-<digest>``: the scheduler hands it to every worker once, to those
running when it is registered and to those that join later (a worker replacing a lost
one), and each worker's ``ProvingPlugin.receive`` keeps the bytes as a file until the
key is first used. ``install`` registers a key only when the scheduler does not hold it
yet, so a later job with the same file sends nothing. The scheduler keeps the plugin (the
key's bytes) for the cluster's life, which suits keys of up to a few GB; larger ones
would be better read by each worker from its own disk.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
from dataclasses import dataclass

from distributed import Client
from distributed.diagnostics.plugin import WorkerPlugin

from numba_cuzk.cluster.worker import ProvingPlugin
from numba_cuzk.groth16.formats import write_zkey
from numba_cuzk.groth16.keys import ProvingKey

KEY_PLUGIN_PREFIX = "numba-cuzk-key-"


def key_digest(data: bytes) -> str:
    """The SHA-256 of a zkey file's bytes (hex): the key's name on the cluster."""
    return hashlib.sha256(data).hexdigest()


@dataclass(frozen=True)
class KeyRef:
    """A proving key on the cluster, by the SHA-256 of its zkey file (``install``)."""

    digest: str


def plugin_name(digest: str) -> str:
    return KEY_PLUGIN_PREFIX + digest


class KeyPlugin(WorkerPlugin):
    """Carries one zkey's bytes to each worker; ``trusted``: skip the point checks when
    the worker reads it (formats.read_zkey)."""

    idempotent = True

    def __init__(self, data: bytes, trusted: bool = False) -> None:
        self.digest, self.data, self.trusted = key_digest(data), data, trusted
        self.name = plugin_name(self.digest)

    def setup(self, worker) -> None:
        ProvingPlugin.on(worker).receive(self.digest, self.data, self.trusted)
        self.data = b""  # the worker keeps the file, not a second copy in memory


def install(client: Client, data: bytes, trusted: bool = False) -> KeyRef:
    """Make the zkey ``data`` reach every worker, once each (``trusted`` as KeyPlugin's;
    a key the cluster holds already keeps the trust it was sent with)."""
    digest = key_digest(data)
    if not client.run_on_scheduler(_has_worker_plugin, plugin_name(digest)):
        client.register_plugin(KeyPlugin(data, trusted))
    return KeyRef(digest)


def _has_worker_plugin(name: str, dask_scheduler=None) -> bool:
    return name in dask_scheduler.worker_plugins


def zkey_bytes(pk: ProvingKey) -> bytes:
    """``pk`` as a zkey file's bytes (the same bytes for the same key, so one digest)."""
    with tempfile.TemporaryDirectory() as scratch:
        path = os.path.join(scratch, "key.zkey")
        write_zkey(path, pk)
        with open(path, "rb") as file:
            return file.read()
