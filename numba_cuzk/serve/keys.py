"""The daemon's proving keys: one per content hash, in three tiers.

    cold   known by its file (path, and the sha256 of its bytes), nothing in memory
    warm   read into host memory (a ProvingKey; header and IC points checked on reading);
           when the daemon proves on GPUs its queries are in pinned host memory
           (groth16.memory.pinned_key), so becoming hot again is one async copy a query
    hot    resident on a device: the engine's Resident (a Prover, bases uploaded), its
           warm copy kept (a device evicting it leaves it warm at no cost)

Two clients naming the same bytes (under any path) share one key. A path is hashed once
per (device, inode, size, mtime): a rewritten file is a new key. The five point queries
are checked on their curve and subgroup once, by the first Prover made for the key (the
engine's, on its device, groth16.prove.Prover); after the key's first proof its
``unchecked`` list is emptied, so a later residency (after an eviction, another device)
does not check again. A pass is recorded in the user's cache (groth16/key_checks.py), so
a daemon started again, or a key read again after going cold, is read trusted, unchecked,
unless ``recheck``. A key whose check fails is refused, naming the section, until it is
evicted.

Budgets: warm and hot keys' host bytes (pinned or not) at most ``host_budget_bytes``;
the engine's devices keep their own budget of resident keys
(EngineConfig.device_memory_budget_bytes, from the memory plan). Least recently used keys not in use by a job go first. Every move is a
``key_tier`` event on the engine's timeline (``host_memory`` "pinned" or "pageable" for a
key in memory).
"""

from __future__ import annotations

import dataclasses
import hashlib
import os
import threading
import time
from dataclasses import dataclass

import numpy as np

from numba_cuzk.engine.record import Recorder
from numba_cuzk.groth16.key_checks import load_checked_key
from numba_cuzk.groth16.keys import ProvingKey
from numba_cuzk.groth16.memory import pinned_key

HOT, WARM, COLD = "hot", "warm", "cold"
HASH_CHUNK = 8 << 20


class UnknownKey(LookupError):
    """An unknown key id (gRPC NOT_FOUND)."""


class KeyInUse(RuntimeError):
    """A key that jobs still hold cannot be evicted (gRPC FAILED_PRECONDITION)."""


@dataclass(eq=False)
class KeyEntry:
    """One key: ``key_id`` (sha256 hex of the zkey), the ``path`` it is read from,
    ``pk`` when warm or hot, ``host_bytes`` of its arrays, ``users`` (jobs holding it),
    ``error`` (why it is refused: its check failed), ``tier`` as last recorded."""

    key_id: str
    path: str
    pk: ProvingKey | None = None
    host_bytes: int = 0
    users: int = 0
    last_used: float = 0.0
    error: str | None = None
    tier: str = COLD
    proofs: int = 0

    @property
    def short(self) -> str:
        return self.key_id[:16]


def file_sha256(path: str) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        while chunk := f.read(HASH_CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


def host_bytes(pk: ProvingKey) -> int:
    """Bytes of the key's arrays (points and coefficients)."""
    total = 0
    for value in (getattr(pk, f.name) for f in dataclasses.fields(pk)):
        if isinstance(value, np.ndarray):
            total += value.nbytes
        elif dataclasses.is_dataclass(value):
            total += sum(v.nbytes for v in vars(value).values() if isinstance(v, np.ndarray))
    return total


class KeyStore:
    """Keys by content hash over ``devices`` (the engine's: their ``residents``), moves
    recorded on ``recorder``. ``recheck``: check every key read, record or not. ``pinned``:
    keys in memory hold their queries in pinned host memory (for GPUs; the CPU backend reads
    them where they are). Thread-safe."""

    def __init__(self, devices: list, recorder: Recorder, host_budget_bytes: int, *, recheck: bool = False,
                 pinned: bool = False) -> None:
        self.devices, self.recorder, self.host_budget_bytes = devices, recorder, host_budget_bytes
        self.recheck, self.pinned = recheck, pinned
        self._keys: dict[str, KeyEntry] = {}
        self._paths: dict[tuple, str] = {}  # (path, dev, ino, size, mtime_ns) -> key id
        self._lock = threading.RLock()
        self._loading: dict[str, threading.Lock] = {}

    # --- naming ------------------------------------------------------------------------

    def resolve(self, key_id: str, zkey_path: str) -> KeyEntry:
        """The entry named by content hash and/or path. ValueError for a path that is not a
        readable file or a hash that does not match it; UnknownKey for an id never seen."""
        if zkey_path:
            try:
                st = os.stat(zkey_path)
            except OSError as exc:
                raise ValueError(f"zkey {zkey_path}: {exc.strerror or exc}") from None
            stamp = (zkey_path, st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)
            with self._lock:
                found = self._paths.get(stamp)
            if found is None:
                try:
                    found = file_sha256(zkey_path)
                except OSError as exc:
                    raise ValueError(f"zkey {zkey_path}: {exc.strerror or exc}") from None
                with self._lock:
                    self._paths[stamp] = found
            if key_id and key_id != found:
                raise ValueError(f"zkey {zkey_path}: its sha256 is {found}, not the key id {key_id}")
            with self._lock:
                entry = self._keys.get(found)
                if entry is None:
                    entry = self._keys[found] = KeyEntry(found, zkey_path)
                    self._record(entry, COLD, None)
                elif not os.path.exists(entry.path):
                    entry.path = zkey_path
                return entry
        with self._lock:
            entry = self._keys.get(key_id)
        if entry is None:
            raise UnknownKey(f"unknown key {key_id!r}: name it by zkey_path once (or PreloadKey) so the daemon can "
                            "read it")
        return entry

    # --- use ---------------------------------------------------------------------------

    def acquire(self, entry: KeyEntry) -> ProvingKey:
        """The entry's ProvingKey, read from disk if cold; held until ``release``.
        ValueError (naming the file and section) for a key that does not read or check."""
        if entry.error:
            raise ValueError(f"key {entry.short}: refused, {entry.error} (EvictKey clears it)")
        with self._lock:
            gate = self._loading.setdefault(entry.key_id, threading.Lock())
        with gate:  # one read per key, however many clients ask at once
            if entry.pk is None:
                try:
                    pk = load_checked_key(entry.path, recheck=self.recheck)
                except (OSError, ValueError) as exc:
                    self.forget(entry)
                    raise ValueError(f"zkey {entry.path}: {exc}") from None
                if self.pinned:
                    pk = pinned_key(pk)  # the pageable arrays read go with this frame
                with self._lock:
                    entry.pk, entry.host_bytes = pk, host_bytes(pk)
                    self._record(entry, WARM, COLD)
        with self._lock:
            entry.users += 1
            entry.last_used = time.monotonic()
            self._fit_host(keep=entry)
            return entry.pk

    def release(self, entry: KeyEntry, proved: bool, key_error: str | None = None) -> None:
        """A job is done with the key: ``proved`` empties its unchecked list (its points
        passed the check); ``key_error`` refuses the key from now on (its check failed)."""
        with self._lock:
            entry.users -= 1
            if proved and entry.pk is not None:
                entry.pk.unchecked.clear()
                entry.proofs += 1
            if key_error:
                entry.error = key_error
                self._drop(entry)
            self.refresh()
            self._fit_host(keep=None)

    def make_hot(self, entry: KeyEntry) -> None:
        """Make the key resident on every device now (PreloadKey); checks its points."""
        pk = self.acquire(entry)
        try:
            for device in self.devices:
                with device.context():
                    device.resident(pk, self.recorder, {})
            pk.unchecked.clear()
        except Exception as exc:
            self.release(entry, False, f"{type(exc).__name__}: {exc}")
            raise ValueError(f"key {entry.short}: {exc}") from None
        self.release(entry, False)

    def forget(self, entry: KeyEntry) -> None:
        """Drop an entry whose file is not a key (so bad paths do not pile up)."""
        with self._lock:
            if entry.pk is None and entry.users == 0 and self._keys.get(entry.key_id) is entry:
                del self._keys[entry.key_id]
                self._paths = {stamp: k for stamp, k in self._paths.items() if k != entry.key_id}

    def evict(self, entry: KeyEntry) -> None:
        """Cold now: off every device and out of host memory. KeyInUse while jobs hold it."""
        with self._lock:
            if entry.users:
                raise KeyInUse(f"key {entry.short} is held by {entry.users} queued or running jobs")
            entry.error = None
            self._drop(entry)

    # --- tiers -------------------------------------------------------------------------

    @property
    def host_memory(self) -> str:
        """Where keys in memory hold their queries: "pinned" or "pageable"."""
        return "pinned" if self.pinned else "pageable"

    def tier_of(self, entry: KeyEntry) -> str:
        if entry.pk is None:
            return COLD
        return HOT if any(id(entry.pk) in d.residents for d in self.devices) else WARM

    def device_bytes(self, entry: KeyEntry) -> int:
        if entry.pk is None:
            return 0
        return sum(d.residents[id(entry.pk)].nbytes for d in self.devices if id(entry.pk) in d.residents)

    def refresh(self) -> None:
        """Record the tier moves the engine made (a device evicting its least recently
        used key, a key made resident by a proof)."""
        with self._lock:
            for entry in self._keys.values():
                tier = self.tier_of(entry)
                if tier != entry.tier:
                    self._record(entry, tier, entry.tier)

    def entries(self) -> list[KeyEntry]:
        with self._lock:
            return list(self._keys.values())

    def _fit_host(self, keep: KeyEntry | None) -> None:
        """Drop the least recently used idle warm or hot keys while over the host budget."""
        loaded = sorted((e for e in self._keys.values() if e.pk is not None), key=lambda e: e.last_used)
        total = sum(e.host_bytes for e in loaded)
        for entry in loaded:
            if total <= self.host_budget_bytes:
                break
            if entry.users == 0 and entry is not keep:
                total -= entry.host_bytes
                self._drop(entry)

    def _drop(self, entry: KeyEntry) -> None:
        if entry.pk is not None:
            for device in self.devices:
                device.residents.pop(id(entry.pk), None)
            entry.pk = None
        if entry.tier != COLD:
            self._record(entry, COLD, entry.tier)

    def _record(self, entry: KeyEntry, tier: str, from_tier: str | None) -> None:
        entry.tier = tier
        fields = {"bytes": entry.host_bytes}
        if from_tier is not None:
            fields["from_tier"] = from_tier
        if tier != COLD:
            fields["host_memory"] = self.host_memory
        self.recorder.instant("key_tier", key=entry.key_id, tier=tier, **fields)
