"""A zkey's point checks done once per machine: their passing result kept in the user's cache.

Checking an untrusted key's points (on the curve, in the prime-order subgroup) is most of a
one-shot proof on the CPU: 3.2 s of 4.0 s for a 2^14 circom key on the 2-core dev box.
Hashing the file costs 7 ms there (SHA-256 at ~1.5 GB/s, 10.9 MB), so a process that finds a
record for the file's hash skips the checks:

    pk = load_checked_key("c.zkey")       # a record for these bytes: read trusted, no checks
    prover = Prover(pk)                   # else the Prover checks its copy, then records it

Records live in ``<kernel_cache.cache_root()>/keys/<sha256 of the file>.<checker>.json``: the
file's digest and size, and the checker's version (CHECKER_VERSION: a hash of the sources that
read and check a key, and of numba's version), so two versions of the package on one machine
keep a record each. A record is trusted only if its digest is the file's
digest now, its size the file's size, and its checker this one: an edited byte, a record
copied to another file's name, or a new checker all check again. Only passing checks are
recorded. The digest is taken before the key is read and again after its checks pass; a file
that changed in between is not recorded. A file rewritten while a proof reads it (memory-mapped)
is outside what this guards, as it is for a trusted key.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
from concurrent.futures import Future, ThreadPoolExecutor
from importlib import metadata
from pathlib import Path

from numba_cuzk import kernel_cache
from numba_cuzk.fileio import atomic_write
from numba_cuzk.groth16.formats.binfile import PathLike
from numba_cuzk.groth16.keys import ProvingKey

RECORD_FORMAT = "numba-cuzk-key-check"
DIGEST = "sha256"  # faster than blake2b on CPUs with SHA extensions: 1.56 vs 1.15 GB/s on the dev box
_PACKAGE = Path(__file__).resolve().parents[1]
# what decides a check's answer: the formats' readers, the curve and field code the checks run,
# the Prover that calls them, this module
_CHECKER_SOURCES = ("field", "curve", "groth16/formats", "groth16/prove.py", "groth16/key_checks.py")


def _checker_version() -> str:
    digest = hashlib.sha256()
    for name in _CHECKER_SOURCES:
        path = _PACKAGE / name
        for source in sorted(path.rglob("*.py")) if path.is_dir() else [path]:
            digest.update(source.relative_to(_PACKAGE).as_posix().encode() + b"\0" + source.read_bytes() + b"\0")
    for dist in ("numba", "numba-cuda", "llvmlite"):
        try:
            digest.update(f"{dist}={metadata.version(dist)}\0".encode())
        except metadata.PackageNotFoundError:
            digest.update(f"{dist}=-\0".encode())
    return digest.hexdigest()[:16]


CHECKER_VERSION = _checker_version()


def records_dir() -> Path:
    """The folder of the key-check records: ``cache_root() / "keys"``."""
    return kernel_cache.cache_root() / "keys"


def file_digest(path: PathLike) -> tuple[str, int]:
    """(hex SHA-256 of the file's bytes, its size in bytes)."""
    with open(path, "rb") as f:
        return hashlib.file_digest(f, DIGEST).hexdigest(), os.fstat(f.fileno()).st_size


def digest_in_background(path: PathLike) -> Future:
    """``file_digest(path)`` in a thread of its own, for a process with imports still to do:
    hashlib and file reads release the GIL, so the hash (7 ms for a 2^14 key on the 2-core
    CPU, 28 ms on the H100's host) runs beside them. The Future's result is file_digest's,
    or what it raised."""
    executor = ThreadPoolExecutor(1, thread_name_prefix="zkey-digest")
    future = executor.submit(file_digest, path)
    executor.shutdown(wait=False)  # the hash still runs; its thread ends with it
    return future


def record_path(digest: str) -> Path:
    """Where this checker keeps the record of a file of ``digest``."""
    return records_dir() / f"{digest}.{CHECKER_VERSION}.json"


def is_recorded(digest: str, size: int) -> bool:
    """True if a record says a file of this digest and size passed this checker's checks."""
    try:
        record = json.loads(record_path(digest).read_text())
    except (OSError, ValueError):
        return False
    return (isinstance(record, dict) and record.get("format") == RECORD_FORMAT and record.get("digest") == digest
            and record.get("bytes") == size and record.get("checker") == CHECKER_VERSION
            and record.get("points_checked") is True)


def record_checked(path: PathLike, digest: str, size: int) -> bool:
    """Record that ``path``, of ``digest`` and ``size`` when it was read, passed its checks,
    if it still has them; False (nothing recorded) if it changed or the folder cannot be
    written (then the next process checks again: a record only saves time)."""
    if file_digest(path) != (digest, size):
        return False
    record = {"format": RECORD_FORMAT, "digest": digest, "digest_name": DIGEST, "bytes": size,
              "checker": CHECKER_VERSION, "points_checked": True, "file": os.path.abspath(path)}
    try:
        records_dir().mkdir(parents=True, exist_ok=True)
        with atomic_write(record_path(digest)) as f:
            f.write(json.dumps(record).encode())
    except OSError:
        return False
    return True


def load_checked_key(path: PathLike, recheck: bool = False, digest: Future | None = None) -> ProvingKey:
    """Read the zkey at ``path`` for a Prover, its points checked once per machine.

    A record for the file's bytes (and this checker): the key is read trusted (no point
    checks: ``pk.unchecked`` is empty). Otherwise, or with ``recheck``: read untrusted, the
    header's and IC's points checked here, the queries' by the first Prover made from it
    (on its copy, on the GPU when it has one), which then records the pass through
    ``pk.after_checks``. ``digest``: the file's, from digest_in_background (else taken here).
    Raises ValueError naming the section and point at fault."""
    from numba_cuzk.groth16.formats import read_zkey

    sha, size = digest.result() if digest is not None else file_digest(path)
    if not recheck and is_recorded(sha, size):
        return read_zkey(path, trusted=True)
    return dataclasses.replace(read_zkey(path, trusted=False), after_checks=lambda: record_checked(path, sha, size))
