"""The daemon's key tiers: a GPU daemon's keys in memory are pinned, and a key demoted from
the device comes back with its bytes; a key's points are checked once per machine, not
once per daemon start (unless --recheck)."""

from __future__ import annotations

import numpy as np
import pytest
from numba import cuda

from numba_cuzk.engine.gpu import open_devices
from numba_cuzk.groth16 import key_checks
from numba_cuzk.groth16 import prove as prove_module
from numba_cuzk.groth16.formats import read_zkey
from numba_cuzk.groth16.memory import QUERIES
from numba_cuzk.msm import upload_bases
from numba_cuzk.serve.keys import KeyStore, host_bytes
from tests.serve.conftest import Running


class Events:
    """A recorder that keeps the key_tier events (the alloc intervals are dropped)."""

    def __init__(self) -> None:
        self.tiers: list[tuple[str, str | None]] = []

    def instant(self, event: str, **fields) -> None:
        if event == "key_tier":
            self.tiers.append((fields["tier"], fields.get("host_memory")))

    def interval(self, *args, **fields) -> None:
        pass


@pytest.fixture
def checks(monkeypatch, tmp_path) -> list[str]:
    """The queries the Provers check (the check itself skipped), records in a temporary folder."""
    checked: list[str] = []
    monkeypatch.setattr(prove_module, "check_points", lambda points, curve, where, stream=None: checked.append(where))
    monkeypatch.setattr(key_checks, "records_dir", lambda: tmp_path / "records")
    return checked


def test_a_demoted_key_stays_pinned_and_comes_back_with_its_bytes(zkey, checks, monkeypatch):
    pinned = []
    real = cuda.pinned_array
    monkeypatch.setattr(cuda, "pinned_array", lambda *args, **kwargs: pinned.append(real(*args, **kwargs)) or pinned[-1])
    (device,) = open_devices((), 1, None)  # the CPU backend's Prover; pinning is the store's, as on a GPU
    events = Events()
    store = KeyStore([device], events, 1 << 30, pinned=True)
    entry = store.resolve("", str(zkey))
    store.make_hot(entry)
    read = read_zkey(zkey, trusted=True)
    pk = entry.pk
    for field, _ in QUERIES.values():
        held = getattr(pk, field)
        assert any(held is p for p in pinned) and held.flags.f_contiguous, field  # point-major, as uploaded
        np.testing.assert_array_equal(held, getattr(read, field))
    assert entry.host_bytes == host_bytes(read)  # the host budget counts the pinned bytes

    device.residents.clear()  # the device evicts it (its budget's least recently used): demoted
    store.refresh()
    assert store.tier_of(entry) == "warm" and entry.pk is pk
    store.make_hot(entry)  # promoted from the pinned copy
    resident = device.residents[id(pk)]
    for name, (field, curve) in QUERIES.items():
        np.testing.assert_array_equal(resident.prover.bases[name].points, getattr(read, field))
        uploaded = upload_bases(getattr(pk, field), curve, stream=cuda.stream())  # a GPU's copy (here synchronous)
        np.testing.assert_array_equal(uploaded.points.copy_to_host(), getattr(read, field))
    assert events.tiers == [("cold", None), ("warm", "pinned"), ("hot", "pinned"), ("warm", "pinned"),
                            ("hot", "pinned")]
    assert len(checks) == 5  # once, by the first Prover: not again on promotion


def test_a_restarted_daemon_does_not_check_the_key_again(zkey, checks, tmp_path):
    counts = []
    for start, recheck in enumerate((False, False, True)):
        folder = tmp_path / f"start{start}"
        folder.mkdir()
        running = Running(folder, preload=(str(zkey),), recheck=recheck)
        try:
            assert running.daemon.keys.tier_of(running.daemon.keys.entries()[0]) == "hot"
        finally:
            running.stop()
        counts.append(len(checks))
    assert counts == [5, 5, 10]  # checked, then the record trusted, then --recheck
