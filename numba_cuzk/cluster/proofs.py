"""Proof files written exactly once, whoever proves the partition and however often.

A partition is identified by its job and index: OUT/<job>/partition-III.public.json,
then OUT/<job>/partition-III.proof.json (snarkjs's formats, as the engine writes them).
Each file is written under a unique temporary name and linked into place with
``os.link``, which fails if the name exists: a file that exists is whole, and it is never
replaced. So when a task runs twice (its worker was lost, then came back or kept running
while the task was rescheduled elsewhere), the first proof to land wins and the other
attempt reads it back instead. The proof file is written last: where it exists, its
public inputs do too.
"""

from __future__ import annotations

import os
import re
import uuid
from pathlib import Path
from typing import Callable

from numba_cuzk.engine.job import partition_files
from numba_cuzk.groth16.formats import read_proof_json, read_public_json, write_proof_json, write_public_json
from numba_cuzk.groth16.keys import Proof

_JOB_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]*")  # a single path component


def check_job_name(name: str) -> None:
    """ValueError unless ``name`` can name a job's directory (letters, digits, _ . -)."""
    if not _JOB_NAME.fullmatch(name):
        raise ValueError(f"job name {name!r}: use letters, digits, '_', '.' and '-' (it names a directory)")


def paths(out_dir: str | os.PathLike, job: str, index: int) -> tuple[Path, Path]:
    """(proof.json, public.json) of partition ``index`` of ``job`` under ``out_dir``."""
    return partition_files(Path(out_dir) / job, index)


def read(out_dir: str | os.PathLike, job: str, index: int) -> tuple[Proof, list[int]] | None:
    """The partition's stored proof and public inputs, or None if its proof is not written."""
    proof_path, public_path = paths(out_dir, job, index)
    if not proof_path.exists():
        return None
    return read_proof_json(proof_path), read_public_json(public_path)


def write_once(out_dir: str | os.PathLike, job: str, index: int, proof: Proof,
               public: list[int]) -> tuple[Proof, list[int], bool]:
    """Store the partition's proof unless one is stored already. Returns the stored proof
    and public inputs, and whether they are this call's (False: another attempt's won)."""
    proof_path, public_path = paths(out_dir, job, index)
    proof_path.parent.mkdir(parents=True, exist_ok=True)
    _link_new(public_path, write_public_json, public)  # identical in every attempt: the witness fixes it
    if _link_new(proof_path, write_proof_json, proof):
        return proof, public, True
    return read_proof_json(proof_path), read_public_json(public_path), False


def _link_new(path: Path, write: Callable, value: object) -> bool:
    """Write ``value`` to ``path`` if no file is there (True), atomically."""
    temporary = path.with_name(f".{path.name}.{uuid.uuid4().hex}.tmp")
    write(temporary, value)
    try:
        os.link(temporary, path)
        return True
    except FileExistsError:
        return False
    finally:
        os.unlink(temporary)
