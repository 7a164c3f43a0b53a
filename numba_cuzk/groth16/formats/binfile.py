"""The iden3 binary container shared by .zkey, .r1cs and .wtns (iden3/binfileutils):

    magic (4 ASCII bytes) | u32 version | u32 nSections | {u32 id | u64 size | size bytes}...

all little-endian. Sections are looked up by id, in any order (circom writes .r1cs
sections out of order); ids a format does not use are ignored, and one it uses must
appear once. Files are memory-mapped: a section is a read-only uint8 view into the file,
so readers copy only what they convert, never the whole file. Every error is a
ValueError naming the file kind and the section ("zkey section 7 (B2 points): ...").
"""

from __future__ import annotations

import os
import struct
from dataclasses import dataclass
from typing import BinaryIO, Sequence, Union

import numpy as np

from numba_cuzk.field.params import FieldParams
from numba_cuzk.fileio import atomic_write

_FILE_HEADER = struct.Struct("<4sII")  # magic, version, nSections
_SECTION_HEADER = struct.Struct("<IQ")  # id, size
_WRITE_CHUNK_BYTES = 1 << 26  # bound the temporary copy when writing a transposed array

Part = Union[bytes, np.ndarray]
PathLike = Union[str, os.PathLike]


@dataclass(frozen=True)
class FileKind:
    """One format: its magic ("zkey", "r1cs", "wtns"), the newest version it reads,
    and its section names (id -> name), used in messages."""

    magic: str
    max_version: int
    names: dict[int, str]

    def where(self, sid: int) -> str:
        return f"{self.magic} section {sid} ({self.names.get(sid, 'unknown')})"


class Cursor:
    """Sequential little-endian reads from one section; every overrun names it."""

    def __init__(self, data: np.ndarray, where: str) -> None:
        self.data, self.where, self.pos = data, where, 0

    def take(self, n: int) -> np.ndarray:
        """The next n bytes (a view)."""
        if n > len(self.data) - self.pos:
            raise ValueError(f"{self.where}: expected at least {self.pos + n} bytes, file has {len(self.data)}")
        out = self.data[self.pos:self.pos + n]
        self.pos += n
        return out

    def integer(self, n: int) -> int:
        """An n-byte little-endian unsigned integer."""
        return int.from_bytes(self.take(n).tobytes(), "little")

    def u32(self) -> int:
        return self.integer(4)

    def u64(self) -> int:
        return self.integer(8)

    def prime(self, field: FieldParams, what: str) -> None:
        """u32 n8, then an n8-byte prime that must be ``field``'s modulus."""
        n8 = self.u32()
        if n8 != field.nbytes:
            raise ValueError(f"{self.where}: {what} has {n8}-byte elements, BLS12-381's {field.name} has "
                             f"{field.nbytes}")
        p = self.integer(n8)
        if p != field.modulus:
            raise ValueError(f"{self.where}: {what} = {p:#x} is not BLS12-381's {field.name} modulus")

    def end(self) -> None:
        """The section must be consumed exactly."""
        if self.pos != len(self.data):
            raise ValueError(f"{self.where}: expected {self.pos} bytes, file has {len(self.data)}")


class BinFile:
    """A container, memory-mapped from ``source`` (a path) or viewed in place (bytes, as a
    daemon receives a witness: no spool file): ``section(id)`` returns its bytes (uint8 view)."""

    def __init__(self, kind: FileKind, source: PathLike | bytes) -> None:
        self.kind = kind
        in_memory = isinstance(source, (bytes, bytearray, memoryview))
        size = len(source) if in_memory else os.path.getsize(source)
        if size < _FILE_HEADER.size:
            raise ValueError(f"{kind.magic} file: {size} bytes, too short for a header")
        # a plain ndarray view either way
        self.data = np.frombuffer(source, dtype=np.uint8) if in_memory else np.asarray(
            np.memmap(source, dtype=np.uint8, mode="r"))
        magic, self.version, n_sections = _FILE_HEADER.unpack_from(self.data[:_FILE_HEADER.size].tobytes())
        if magic != kind.magic.encode():
            raise ValueError(f"{kind.magic} file: magic {magic!r}, expected {kind.magic!r}")
        if not 1 <= self.version <= kind.max_version:
            raise ValueError(f"{kind.magic} file: version {self.version} is not supported "
                             f"(1..{kind.max_version})")
        self.sections = self._scan(n_sections)

    def _scan(self, n_sections: int) -> dict:
        """id -> [(offset, size), ...]; a section running past the end is an error here,
        so readers only ever see whole sections. The loop ends within the file: each
        header takes 12 bytes."""
        sections: dict = {}
        pos, total = _FILE_HEADER.size, len(self.data)
        for k in range(n_sections):
            if total - pos < _SECTION_HEADER.size:
                raise ValueError(f"{self.kind.magic} file: header lists {n_sections} sections, "
                                 f"file ends after {k}")
            sid, size = _SECTION_HEADER.unpack_from(self.data[pos:pos + _SECTION_HEADER.size].tobytes())
            pos += _SECTION_HEADER.size
            if size > total - pos:
                raise ValueError(f"{self.kind.where(sid)}: expected {size} bytes, file has {total - pos}")
            sections.setdefault(sid, []).append((pos, size))
            pos += size
        return sections

    def has(self, sid: int) -> bool:
        return sid in self.sections

    def section(self, sid: int, size: int | None = None) -> np.ndarray:
        """Section ``sid``'s bytes; with ``size``, it must be exactly that long."""
        where = self.kind.where(sid)
        found = self.sections.get(sid)
        if not found:
            raise ValueError(f"{where}: missing")
        if len(found) > 1:
            raise ValueError(f"{where}: appears {len(found)} times")
        offset, length = found[0]
        if size is not None and length != size:
            raise ValueError(f"{where}: expected {size} bytes, file has {length}")
        return self.data[offset:offset + length]

    def cursor(self, sid: int) -> Cursor:
        return Cursor(self.section(sid), self.kind.where(sid))


def write_binfile(path: PathLike, kind: FileKind, version: int, sections: Sequence[tuple[int, Sequence[Part]]], *,
                  replace: bool = True) -> None:
    """Write a container: each section is (id, parts); a part is bytes or a numpy array
    written in C order with little-endian elements (a transposed view is fine: it is
    copied a chunk at a time). Atomic (fileio.atomic_write); ``replace=False``: FileExistsError
    if ``path`` exists."""
    with atomic_write(path, replace=replace) as f:
        f.write(_FILE_HEADER.pack(kind.magic.encode(), version, len(sections)))
        for sid, parts in sections:
            f.write(_SECTION_HEADER.pack(sid, sum(len(p) if isinstance(p, bytes) else p.nbytes for p in parts)))
            for part in parts:
                if isinstance(part, bytes):
                    f.write(part)
                else:
                    _write_array(f, part)


def _write_array(f: BinaryIO, arr: np.ndarray) -> None:
    rows = arr.reshape(-1, 1) if arr.ndim == 1 else arr  # 2-D: (items, words per item)
    step = max(1, _WRITE_CHUNK_BYTES // max(1, rows[:1].nbytes))
    little = arr.dtype.newbyteorder("<")
    for i in range(0, len(rows), step):
        f.write(np.ascontiguousarray(rows[i:i + step]).astype(little, copy=False).tobytes())


def u32(value: int) -> bytes:
    return struct.pack("<I", value)


def u64(value: int) -> bytes:
    return struct.pack("<Q", value)


def prime_header(field: FieldParams) -> bytes:
    """u32 n8 | the modulus in n8 little-endian bytes."""
    return u32(field.nbytes) + field.modulus.to_bytes(field.nbytes, "little")
