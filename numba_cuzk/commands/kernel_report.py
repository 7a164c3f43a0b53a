"""``numba-cuzk info --kernels``: every kernel of the registry (kernel_cache._KERNELS) by
name, beside the file and line of the function it was made from, its registers per
thread, what the kernel cache holds for it and where that came from.

A kernel made by ``kernel_cache.specialize`` (``accumulate_g2``, ``add_fr``) keeps its
template's code object, so its line is the template's ``def``; the instance's bindings
(the point formulas, the element body) are listed beside it. Registers are read from the
cubin inside the cache entry (the ``EIATTR_REGCOUNT`` attribute of its ``.nv.info``
section, which ``ptxas -v`` prints as "Used N registers"), so they are known without a
GPU wherever an entry has machine code; "-" otherwise (CPU kernels, or nothing cached).
"""

from __future__ import annotations

import hashlib
import json
import pickle
import struct
from dataclasses import asdict, dataclass, field
from pathlib import Path

from numba_cuzk import kernel_cache

PREBUILT_MANIFEST = ".prebuilt.json"  # in a version's folder: the entries installed from an archive
_REGCOUNT = 0x2F  # EIATTR_REGCOUNT: (symbol index u32, registers u32)


@dataclass
class KernelRow:
    """One kernel: ``source`` "numba_cuzk/<path>.py:<line>" of its function's ``def``;
    ``targets`` {"cpu" | "sm_MN": origin} with origin "prebuilt" (installed by
    ``numba-cuzk compile --install``, unchanged since) or "compiled here"; ``registers``
    {"sm_MN": [per signature]} where a cubin is cached."""

    name: str
    kind: str  # "gpu" or "cpu"
    source: str
    bindings: dict[str, str] = field(default_factory=dict)  # free name -> "path:line" of what it is bound to
    targets: dict[str, str] = field(default_factory=dict)
    registers: dict[str, list[int]] = field(default_factory=dict)

    @property
    def origin(self) -> str:
        kinds = sorted(set(self.targets.values()))
        return " + ".join(kinds) if kinds else "not compiled"


def is_cpu_kernel(kernel) -> bool:
    from numba.core.registry import CPUDispatcher

    return isinstance(kernel, CPUDispatcher)


def source_line(fn) -> str:
    """"numba_cuzk/msm/kernels.py:216": where ``fn``'s code (a function, or a dispatcher's
    py_func) starts, relative to the package's parent folder."""
    code = getattr(fn, "py_func", fn).__code__
    path = Path(code.co_filename).resolve()
    try:
        path = path.relative_to(kernel_cache.PACKAGE_DIR.parent)
    except ValueError:
        pass
    return f"{path.as_posix()}:{code.co_firstlineno}"


def _unwrapped(value, hops: int = 4):
    """``value``'s Python function, through forwarders (a function whose one free name is
    the function it calls: field/target.forwarder), so that a binding reads as the formula."""
    fn = getattr(value, "py_func", value)
    for _ in range(hops):
        cells = getattr(fn, "__closure__", None) or ()
        inner = getattr(cells[0].cell_contents, "py_func", cells[0].cell_contents) if len(cells) == 1 else None
        if not hasattr(inner, "__code__"):
            break
        fn = inner
    return fn


def _bindings(fn) -> dict[str, str]:
    """specialize()'s bindings of ``fn`` that are functions, with their source lines."""
    out = {}
    for name in getattr(fn, "__bindings__", ()):
        value = _unwrapped(fn.__globals__.get(name))
        if hasattr(value, "__code__"):
            out[name] = source_line(value)
    return out


def cubin_registers(cubin: bytes) -> dict[str, int]:
    """{function symbol: registers per thread} of a CUDA ELF (cubin): the REGCOUNT
    attributes of its ``.nv.info`` section, named through its symbol table."""
    shoff, = struct.unpack_from("<Q", cubin, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", cubin, 0x3A)
    # (name, type, flags, addr, offset, size, link, info, align, entsize)
    sections = [struct.unpack_from("<IIQQQQIIQQ", cubin, shoff + i * shentsize) for i in range(shnum)]

    def string(table: int, offset: int) -> str:
        start = sections[table][4] + offset
        return cubin[start:cubin.index(b"\0", start)].decode()

    names = [string(shstrndx, s[0]) for s in sections]
    symtab = names.index(".symtab") if ".symtab" in names else None
    counts = {}
    for name, section in zip(names, sections):
        if name != ".nv.info":
            continue
        data, at = cubin[section[4]:section[4] + section[5]], 0
        while at + 4 <= len(data):
            form, attribute, size = data[at], data[at + 1], struct.unpack_from("<H", data, at + 2)[0]
            if form != 4:  # only EIFMT_SVAL (4) carries a size; the others are 4 bytes in all
                at += 4
                continue
            if attribute == _REGCOUNT and symtab is not None:
                symbol, registers = struct.unpack_from("<II", data, at + 4)
                sym = sections[symtab]
                st_name, = struct.unpack_from("<I", cubin, sym[4] + symbol * 24)
                counts[string(sym[6], st_name)] = registers
            at += 4 + size
    return counts


def _target(magic: tuple) -> str:
    cc = magic[1] if len(magic) == 2 and isinstance(magic[1], tuple) else None
    return f"sm_{cc[0]}{cc[1]}" if cc else "cpu"


def _prebuilt_hashes(folder: Path) -> dict[str, str]:
    try:
        return json.loads((folder / PREBUILT_MANIFEST).read_text())["files"]
    except (OSError, ValueError, KeyError):
        return {}


def _read_index(path: Path) -> dict:
    """{index key: data file name} of a numba index (.nbi), {} if absent or another version's."""
    try:
        with open(path, "rb") as f:
            pickle.load(f)  # numba's version
            _, overloads = pickle.loads(f.read())
        return overloads
    except Exception:  # noqa: BLE001 (unreadable or another numba's: as good as absent)
        return {}


def _entry_registers(path: Path) -> list[int]:
    """The registers of the kernel in a CUDA entry (.nbc): one per cubin it holds."""
    try:
        state = pickle.loads(path.read_bytes())
        library = state["codelibrary"]
        cubins = library._cubin_cache.values()
    except Exception:  # noqa: BLE001 (unreadable: no figure)
        return []
    out = []
    for cubin in cubins:
        counts = cubin_registers(getattr(cubin, "code", cubin))
        if counts:
            out.append(counts.get(library._entry_name, max(counts.values())))
    return out


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def kernel_rows(registers: bool = True) -> list[KernelRow]:
    """A row per kernel of the registry, every kernel module imported (nothing compiled),
    in definition order."""
    from numba_cuzk.commands.compile import define_every_kernel

    define_every_kernel()
    folder = kernel_cache.cache_dir()
    prebuilt = _prebuilt_hashes(folder)
    rows = []
    for kernel in kernel_cache._KERNELS:
        fn = kernel.py_func
        row = KernelRow(fn.__qualname__, "cpu" if is_cpu_kernel(kernel) else "gpu", source_line(fn), _bindings(fn))
        cache = getattr(kernel, "_cache", None)  # absent in the simulator
        index = getattr(getattr(cache, "_cache_file", None), "_index_path", None)
        for key, data_name in _read_index(Path(index)).items() if index else ():
            target, data = _target(key[1]), Path(index).parent / data_name
            relative = data.relative_to(folder).as_posix() if data.is_relative_to(folder) else None
            local = "compiled here"
            if relative in prebuilt and data.is_file() and _sha256(data) == prebuilt[relative]:
                local = "prebuilt"
            row.targets[target] = local if row.targets.get(target, local) == local else "prebuilt + compiled here"
            if registers and target != "cpu":
                row.registers.setdefault(target, []).extend(_entry_registers(data))
        rows.append(row)
    return rows


def as_json(rows: list[KernelRow]) -> list[dict]:
    return [asdict(row) | {"origin": row.origin} for row in rows]


def registers_text(row: KernelRow, target: str | None) -> str:
    """The registers of ``row`` on ``target`` (default: the first GPU target cached), "-"
    where unknown; several signatures' counts joined by "/"."""
    if not row.registers:
        return "-"
    counts = row.registers.get(target) if target else next(iter(row.registers.values()))
    return "/".join(str(n) for n in sorted(set(counts or ()))) or "-"
