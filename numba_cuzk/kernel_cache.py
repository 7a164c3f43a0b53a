"""Every kernel compiled at most once per machine: the on-disk kernel cache.

Numba's own ``cache=True`` keys a function by its bytecode, its closure cells and its
source file's stamp (mtime, size), and keeps the files beside the source. That misses
every closure that captures a jitted function (a dispatcher pickles with a fresh id in
each process), and it serves stale code after an edit of another file (a kernel's
device functions live in mont.py, points.py, ...). So this project's kernels are
module-level functions, and their cache lives in one folder per version of the code:

    $NUMBA_CUZK_CACHE_DIR or ~/.cache/numba-cuzk  /  <key>  /  <module path>/...

``key`` hashes the package's sources with the numba, numba-cuda, llvmlite, CUDA
toolkit and numpy versions and Python's minor version, so an edit or an upgrade starts a
fresh folder, and a folder built on another machine with the same versions is found
(``numba-cuzk compile --archive`` / ``--fetch``). Numba-cuda keys each CUDA entry by the
device's compute capability itself, so GPUs of several kinds share the folder; numba
keys a CPU entry by the cpu name and features it was compiled for, which are a portable
x86-64 level here (cpu_isa()), not the host's own. A folder that cannot be written (read-only, full) is read
where it can be and otherwise compiled around, with one warning.

- ``gpu_kernel`` / ``cpu_kernel``: the decorators every kernel uses (``cuda.jit`` /
  ``njit`` with ``cache=True``), which also list it for ``compile_stats``.
- ``specialize(template, name, **bindings)``: one source, several kernels: the template
  function with its free names bound per instance (``accumulate_g1`` and
  ``accumulate_g2`` are ``accumulate`` over G1's and G2's point formulas). No closure
  cells, so numba's key is the bytecode and the folder's key covers the rest.
"""

from __future__ import annotations

import contextlib
import hashlib
import itertools
import os
import pickle
import struct
import sys
import threading
import types
import warnings
from importlib import metadata
from pathlib import Path
from typing import Callable, Iterator

PACKAGE_DIR = Path(__file__).resolve().parent
_VERSIONED = ("numba", "numba-cuda", "llvmlite", "cuda-toolkit", "nvidia-cuda-nvcc", "nvidia-nvvm", "numpy")
_KERNELS: list = []  # every gpu_kernel / cpu_kernel dispatcher, in definition order
_CPU_PRELOADS: list[Callable[[], None]] = []
_warned = threading.Event()


def cache_root() -> Path:
    """The per-user cache folder: $NUMBA_CUZK_CACHE_DIR, else $XDG_CACHE_HOME/numba-cuzk
    (default ~/.cache/numba-cuzk)."""
    override = os.environ.get("NUMBA_CUZK_CACHE_DIR")
    if override:
        return Path(override).expanduser()
    xdg = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(xdg) / "numba-cuzk"


def _distribution_version(name: str) -> str:
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return "-"


def python_tag() -> str:
    """"cpython-3.11": the interpreter and its minor version, as numba's entries depend on
    them (bytecode, pickles; numba's file names say ".py311"). Not sys.version, whose
    build date and compiler differ between two builds of one Python, so that a folder
    built elsewhere (``numba-cuzk compile --archive``) is found here."""
    return f"{sys.implementation.name}-{sys.version_info[0]}.{sys.version_info[1]}{getattr(sys, 'abiflags', '')}"


def versions() -> dict[str, str]:
    """What the key hashes besides the sources: the compiler stack's versions and python_tag()."""
    return {name: _distribution_version(name) for name in _VERSIONED} | {"python": python_tag()}


def source_key(package_dir: Path = PACKAGE_DIR) -> str:
    """16 hex digits over every .py file of the package (path and bytes), the compiler
    stack's versions and the Python version (versions()): what decides the machine code."""
    digest = hashlib.sha256()
    for path in sorted(package_dir.rglob("*.py")):
        digest.update(path.relative_to(package_dir).as_posix().encode() + b"\0")
        digest.update(path.read_bytes() + b"\0")
    for name, version in versions().items():
        digest.update(f"{name}={version}\0".encode())
    return digest.hexdigest()[:16]


_KEY = source_key()


def cache_dir() -> Path:
    """This version's folder: cache_root() / source_key()."""
    return cache_root() / _KEY


def folder_report() -> dict:
    """For ``numba-cuzk info``: the folder, its size in bytes, its number of kernel
    entries (.nbc files) and the other versions' folders beside it."""
    folder = cache_dir()
    files = [p for p in folder.rglob("*") if p.is_file()] if folder.is_dir() else []
    root = cache_root()
    others = sorted(p.name for p in root.iterdir() if p.is_dir() and p.name != _KEY) if root.is_dir() else []
    return {
        "folder": str(folder),
        "bytes": sum(p.stat().st_size for p in files),
        "entries": sum(p.suffix == ".nbc" for p in files),
        "stale_versions": others,
    }


class _PackageLocatorMixin:
    """Claims the package's functions for cache_dir(); numba's other locators keep the
    rest (a user's own cached functions are untouched)."""

    def __init__(self, py_func, py_file):
        self._lineno = py_func.__code__.co_firstlineno
        relative = Path(py_file).resolve().relative_to(PACKAGE_DIR).with_suffix("")
        self._path = str(cache_dir() / relative)

    def ensure_cache_path(self):
        os.makedirs(self._path, exist_ok=True)

    def get_cache_path(self):
        return self._path

    def get_source_stamp(self):
        return _KEY

    def get_disambiguator(self):
        return str(self._lineno)

    @classmethod
    def from_function(cls, py_func, py_file):
        try:
            Path(py_file).resolve().relative_to(PACKAGE_DIR)
        except ValueError:
            return None
        return cls(py_func, py_file)


def _warn_once(error: OSError) -> None:
    if not _warned.is_set():
        _warned.set()
        warnings.warn(f"numba-cuzk: kernel cache {cache_dir()} cannot be written ({error}); "
                      "kernels are compiled in this process and not kept", RuntimeWarning, stacklevel=3)


def _or_warning(method):
    """A Cache method (load_overload, save_overload) that turns an OSError in our folder
    (unreadable, read-only, full) into one warning: as if the entry were absent."""

    def guarded(self, *args):
        try:
            return method(self, *args)
        except OSError as error:
            if not isinstance(self._impl.locator, _PackageLocatorMixin):
                raise
            _warn_once(error)
            return None

    return guarded


def _load_without_refresh(load, start_runtime: Callable | None = None):
    """A Cache.load_overload (numba's or numba-cuda's) that, for our folder, skips its
    first step, ``target_context.refresh()``: that imports and installs the target's
    typing and lowering registries (~40 modules for CUDA, ~60 for the CPU), which only a
    compile uses, and it was most of a warm process's kernel loads: ~0.27 s for the first
    CUDA load of a process and ~0.2 s for the CPU's on the 2-core box, then 0.5-5 ms a
    load. A cached entry is a code library rebuilt and called without them; a miss
    compiles, and numba's compilers refresh first. The CPU's machine code calls its
    runtime (NRT), which the refresh also starts: ``start_runtime(target_context)`` does
    that alone (without it a CPU prove crashed)."""

    def load_overload(self, sig, target_context):
        if not isinstance(self._impl.locator, _PackageLocatorMixin):
            return load(self, sig, target_context)
        if start_runtime is not None:
            start_runtime(target_context)
        return self._load_overload(sig, target_context)

    return load_overload


def elf_defined_symbols(obj: bytes) -> set[str] | None:
    """The names an ELF64 little-endian object defines: its symbol table's entries that lie
    in a section (undefined ones, files and sections left out); None for another format."""
    if obj[:4] != b"\x7fELF" or obj[4:6] != b"\x02\x01":
        return None
    (shoff,) = struct.unpack_from("<Q", obj, 0x28)
    entry, count = struct.unpack_from("<HH", obj, 0x3A)
    sections = [struct.unpack_from("<IIQQQQIIQQ", obj, shoff + i * entry) for i in range(count)]
    names = set()
    for _, kind, _, _, offset, size, link, _, _, _ in sections:
        if kind != 2:  # SHT_SYMTAB
            continue
        strings = sections[link][4]
        for at in range(offset, offset + size, 24):
            name, info, _, section = struct.unpack_from("<IBBH", obj, at)
            if name and section != 0 and info & 0xF not in (3, 4):  # defined; not STT_SECTION, STT_FILE
                start = strings + name
                names.add(obj[start:obj.index(b"\0", start)].decode())
    return names


def _unserialize_without_bitcode(unserialize: Callable) -> classmethod:
    """CPUCodeLibrary._unserialize for numba's "object" entries that parses no bitcode.
    Numba parses a loaded library's bitcode, kept in the entry for linking the library into
    another (which a loaded kernel never is), and walks it for the names the library defines
    (its engine looks up only those): of a 2^14 CPU one-shot's 121 ms in 33 loads, 44 ms
    parsing and 54 walking. The names come from the object's own symbol table instead (for
    every library of that one-shot, a superset of the bitcode's); the bitcode waits for
    _get_module_for_linking. Other formats than ELF load as numba loads them."""

    def load(cls, codegen, state):
        name, kind, data = state
        names = elf_defined_symbols(data[0]) if kind == "object" else None
        if names is None:
            return unserialize(cls, codegen, state)
        library = codegen.create_library(name)
        library.enable_object_caching()
        library._set_compiled_object(data[0])
        library._unparsed_bitcode = data[1]
        library._finalize_final_module()
        codegen._engine._defined_symbols |= names
        return library

    return classmethod(load)


def _parse_bitcode_for_linking(get_module: Callable) -> Callable:
    """CPUCodeLibrary._get_module_for_linking that first parses the bitcode a library
    loaded by _unserialize_without_bitcode kept (as numba's own load would have)."""

    def module_for_linking(library):
        bitcode = library.__dict__.pop("_unparsed_bitcode", None)
        if bitcode is not None:
            from llvmlite import binding

            library._shared_module = binding.parse_bitcode(bitcode)
        return get_module(library)

    return module_for_linking


@contextlib.contextmanager
def _index_lock(index_path: str) -> Iterator[None]:
    """An exclusive lock (flock) on ``<index>.lock``, held while one process edits that
    index: the processes of ``numba-cuzk compile`` save entries of one function side by side."""
    import fcntl

    with open(index_path + ".lock", "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def _save_locked(save):
    """IndexDataCacheFile.save for our folder, safe across processes. Numba's reads the
    index, picks the first unused data file number, writes the index, then the data:
    two processes saving two signatures of one function both pick ``.1.nbc``, and the
    index can end up naming the other signature's machine code, which a later process
    loads and runs on its arguments: wrong answers, no error (tests/test_kernel_cache.py
    shows it without the lock). Under the lock the index is read fresh, the data written
    before the index names it, and a number never reused."""

    def save_entry(self, key, data):
        if not str(self._cache_path).startswith(str(cache_root())):
            return save(self, key, data)
        with _index_lock(self._index_path):
            overloads = self._load_index()
            name = overloads.get(key)
            if name is None:
                used = set(overloads.values())
                name = next(n for n in map(self._data_name, itertools.count(1)) if n not in used)
            self._save_data(name, data)
            if key not in overloads:
                self._save_index({**overloads, key: name})

    save_entry.locked = True
    return save_entry


def _distinct_function_ids(bytecode) -> None:
    """Number this process's compiled functions from a random 48-bit start, in numba and
    numba-cuda. A function's mangled name is its qualname, argument types and a per-process
    counter; a callee linked into a cached entry keeps its name (linkonce_odr), so when a
    process links callees compiled here with callees loaded from an entry another process
    compiled, two different functions can share a name and the linker keeps one: e.g.
    point_ops' per-curve closures (G1's and G2's xyzz_add_mixed, one qualname, the same
    argument types) or field/target's forwarder lambdas. Seen as G2 MSMs on the CPU that
    returned the identity after two compile processes shared a folder (3 of 18 rounds; the
    CPU proofs inside `numba-cuzk compile` that did not verify). ``bytecode``: numba's
    module of that name, or numba-cuda's."""
    import secrets

    bytecode.FunctionIdentity._unique_ids = itertools.count(secrets.randbits(48))


CPU_ISA_ENV = "NUMBA_CUZK_CPU_ISA"  # "portable" (default) or "host"
PORTABLE_CPU = "x86-64-v3"  # AVX2, BMI2, FMA: x86-64 servers since 2013-2015 (Haswell, Zen)
_PORTABLE_FEATURES = {"avx", "avx2", "bmi", "bmi2", "fma", "f16c", "lzcnt", "movbe", "xsave", "popcnt",
                      "sse4.2", "ssse3", "cx16", "sahf"}  # what x86-64-v3 assumes (v2's included)


def cpu_isa() -> tuple[str, str] | None:
    """(cpu name, features) the CPU kernels are compiled for, None for numba's default (the
    host's own CPU): the portable PORTABLE_CPU, so that a kernel cache built on one x86-64
    machine serves another (numba keys a CPU entry by cpu name and features); the host's
    where $NUMBA_CUZK_CPU_ISA=host, where numba's NUMBA_CPU_NAME is set (the user's choice
    wins), and where the host lacks one of x86-64-v3's features or is not x86-64."""
    import platform

    if os.environ.get(CPU_ISA_ENV, "portable") == "host" or os.environ.get("NUMBA_CPU_NAME"):
        return None
    if platform.machine() not in ("x86_64", "AMD64"):
        return None
    from llvmlite import binding

    host = {name for name, on in binding.get_host_cpu_features().items() if on}
    return (PORTABLE_CPU, "") if _PORTABLE_FEATURES <= host else None


def _target_cpu_isa() -> None:
    """numba's CPU target compiles for cpu_isa(): set before its codegen is made (the first
    CPU compile or cache lookup), which reads config.CPU_NAME and CPU_FEATURES."""
    isa = cpu_isa()
    if isa is not None:
        from numba.core import config

        config.CPU_NAME, config.CPU_FEATURES = isa


def install() -> None:
    """Put the package locator first in numba's (CPU) list, and make its saves into our
    folder safe across processes; compile the CPU kernels for cpu_isa(); load cached CPU
    code without parsing its bitcode (_unserialize_without_bitcode). Run once, by
    numba_cuzk._compat, before any kernel is defined; install_cuda once numba.cuda loads."""
    from numba.core import bytecode, caching, codegen
    from numba.core.runtime import rtsys

    _distinct_function_ids(bytecode)
    _target_cpu_isa()
    caching.Cache.load_overload = _load_without_refresh(caching.Cache.load_overload, rtsys.initialize)
    library = codegen.CPUCodeLibrary
    library._unserialize = _unserialize_without_bitcode(library._unserialize.__func__)
    library._get_module_for_linking = _parse_bitcode_for_linking(library._get_module_for_linking)
    _locate_in_package(caching)


def install_cuda() -> None:
    """install() for numba-cuda: its function ids and its cache locator (a numba-cuda
    without its own bytecode or caching module uses numba's)."""
    try:
        from numba.cuda.core import bytecode, caching
    except ImportError:
        return
    _distinct_function_ids(bytecode)
    caching.Cache.load_overload = _load_without_refresh(caching.Cache.load_overload)
    _locate_in_package(caching)


def _locate_in_package(caching) -> None:
    """``caching`` (numba's module or numba-cuda's) looks in our folder first, and its
    loads and saves fail with a warning, its index saves under a lock."""
    base = getattr(caching, "_CacheLocator")
    locator = type("PackageLocator", (_PackageLocatorMixin, base), {})
    impl = caching.CacheImpl if hasattr(caching, "CacheImpl") else caching._CacheImpl
    impl._locator_classes = [locator] + [c for c in impl._locator_classes if c.__name__ != "PackageLocator"]
    for name in ("load_overload", "save_overload"):
        setattr(caching.Cache, name, _or_warning(getattr(caching.Cache, name)))
    if not getattr(caching.IndexDataCacheFile.save, "locked", False):  # a second lock would wait on the first
        caching.IndexDataCacheFile.save = _save_locked(caching.IndexDataCacheFile.save)


def specialize(template: Callable, name: str, **bindings) -> types.FunctionType:
    """``template`` (a module-level function) as a new function called ``name`` whose
    free names ``bindings`` resolve to the given values: e.g. the point formulas of one
    curve. Its source file, line and bytecode stay the template's; numba caches it under
    ``name``. ``__bindings__`` names the bound names (for ``numba-cuzk info --kernels``)."""
    scope = dict(template.__globals__)
    scope.update(bindings)
    fn = types.FunctionType(template.__code__, scope, name, template.__defaults__)
    fn.__qualname__ = name
    fn.__doc__ = template.__doc__
    fn.__module__ = template.__module__
    fn.__bindings__ = tuple(bindings)
    return fn


_compile_only: frozenset | None = None  # commands/compile's tasks: the kernels a launch compiles
_record_launch: Callable[[str, tuple], None] | None = None  # record_launches(): where launches go instead


class GpuKernel:
    """A ``cuda.jit`` dispatcher, made at its first use (defining a kernel loads no
    numba.cuda: _compat item 7), launched as usual: ``kernel[grid, block, stream](*args)``.
    Under ``compile_only(names)`` a launch compiles the kernel for its arguments (as the
    launch would) if it is named, skips it otherwise, and runs nothing: so one process
    compiles one heavy kernel of a pipeline while others compile the rest."""

    def __init__(self, fn: Callable, options: dict):
        self.py_func, self._options = fn, options
        self._dispatcher = None
        self._lock = threading.Lock()
        self.__doc__ = fn.__doc__

    @property
    def dispatcher(self):
        if self._dispatcher is not None:  # every launch: no lock once made
            return self._dispatcher
        with self._lock:
            if self._dispatcher is None:
                from numba import config, cuda

                self._dispatcher = cuda.jit(cache=not config.ENABLE_CUDASIM, **self._options)(self.py_func)
            return self._dispatcher

    @property
    def stats(self):
        """numba's cache counters; None before the first use (nothing compiled or loaded)."""
        return None if self._dispatcher is None else getattr(self._dispatcher, "stats", None)

    def __getitem__(self, config):
        if _record_launch is not None:
            record, name = _record_launch, self.py_func.__qualname__
            return lambda *args: record(name, args)
        if _compile_only is None:
            return self.dispatcher[config]
        return self._compile

    def _compile(self, *args) -> None:
        if self.py_func.__qualname__ in _compile_only:
            self.dispatcher._compile_for_args(*args)

    def __getattr__(self, name):
        if name in ("py_func", "_options", "_dispatcher", "_lock"):  # an instance not made by __init__ (a copy)
            raise AttributeError(name)
        return getattr(self.dispatcher, name)


def registered(dispatcher) -> bool:
    """Whether ``dispatcher`` (a numba event's) is one of the registry's kernels."""
    return any(dispatcher is kernel or dispatcher is getattr(kernel, "_dispatcher", None) for kernel in _KERNELS)


@contextlib.contextmanager
def compile_only(names: set[str]):
    """Within: launches compile the kernels ``names`` (qualnames) and nothing runs."""
    global _compile_only
    _compile_only = frozenset(names)
    try:
        yield
    finally:
        _compile_only = None


@contextlib.contextmanager
def record_launches(record: Callable[[str, tuple], None]):
    """Within: a GPU kernel's launch calls ``record(name, args)`` and runs nothing (in the
    simulator, the argument types of each launch, for a build without a GPU)."""
    global _record_launch
    _record_launch = record
    try:
        yield
    finally:
        _record_launch = None


def gpu_kernel(fn: Callable | None = None, **options):
    """``cuda.jit(cache=True, **options)`` as a GpuKernel, listed for compile_stats. In the
    simulator (no machine code) there is nothing to cache."""
    def decorate(f):
        kernel = GpuKernel(f, options)
        _KERNELS.append(kernel)
        return kernel

    return decorate(fn) if fn is not None else decorate


def gpu_device(fn: Callable) -> Callable:
    """A device function of the GPU kernels (barriers, shared arrays): ``njit``, which
    numba-cuda compiles for CUDA where a kernel calls it (as it does mont.device's), so
    that defining it loads no numba.cuda (_compat item 7). Never called on the CPU. In the
    simulator, which runs it as Python beside its own ``cuda``, ``cuda.jit(device=True)``."""
    from numba import config, njit

    if config.ENABLE_CUDASIM:
        from numba import cuda

        return cuda.jit(device=True)(fn)
    return njit(fn)


class CpuKernel:
    """An ``njit(cache=True)`` entry point called from Python. With ``symbols``, the
    registered preloads run before its first call (the field functions' symbols: see
    curve/target.py), since a cached entry that calls them is linked as it loads."""

    def __init__(self, dispatcher, symbols: bool):
        self.dispatcher = dispatcher
        self.symbols = symbols
        self.__doc__ = dispatcher.__doc__
        self.__name__ = dispatcher.__name__

    def __call__(self, *args):
        if self.symbols:
            run_cpu_preloads()
        return self.dispatcher(*args)


def cpu_kernel(fn: Callable | None = None, *, symbols: bool = True, **options):
    """``njit(cache=True, **options)`` as a CpuKernel, listed for compile_stats.
    ``symbols=False`` for kernels below curve/ (field, ntt, Fr-only groth16 code), which
    cannot reach curve/target.py's symbols: their first call binds none (~0.5 s)."""
    from numba import njit

    def decorate(f):
        kernel = njit(cache=True, **options)(f)
        _KERNELS.append(kernel)
        return CpuKernel(kernel, symbols)

    return decorate(fn) if fn is not None else decorate


def add_cpu_preload(preload: Callable[[], None]) -> None:
    """Run ``preload`` (idempotent) before any CpuKernel's first call."""
    _CPU_PRELOADS.append(preload)


def run_cpu_preloads() -> None:
    for preload in _CPU_PRELOADS:
        preload()


def _index_targets(index: Path) -> set:
    """The targets an index file (.nbi) holds entries for: "cpu" or "sm_MN" (CUDA)."""
    try:
        with open(index, "rb") as f:
            pickle.load(f)  # numba's version
            _, overloads = pickle.loads(f.read())
    except Exception:  # unreadable or another numba's: as good as absent
        return set()
    targets = set()
    for key in overloads:
        magic = key[1]
        cc = magic[1] if len(magic) == 2 and isinstance(magic[1], tuple) else None
        targets.add(f"sm_{cc[0]}{cc[1]}" if cc else "cpu")
    return targets


def coverage(target: str) -> tuple[int, int]:
    """(kernels with an entry for ``target`` ("cpu" or "sm_90") in this version's folder,
    kernels of that kind defined so far): whether ``numba-cuzk compile`` has run here."""
    from numba.core.registry import CPUDispatcher

    wanted = [k for k in _KERNELS if isinstance(k, CPUDispatcher) == (target == "cpu")]
    folder = cache_dir()
    have = 0
    for kernel in wanted:
        name = kernel.py_func.__qualname__
        if any(target in _index_targets(i) for i in folder.rglob(f"*.{name}-*.nbi")):
            have += 1
    return have, len(wanted)


def compile_stats() -> dict:
    """Over every kernel defined so far: signatures compiled in this process and
    signatures loaded from the cache (numba's per-dispatcher counters)."""
    compiled = loaded = 0
    for kernel in _KERNELS:
        stats = getattr(kernel, "stats", None)
        if stats is None:  # the simulator's kernels keep none
            continue
        compiled += sum(stats.cache_misses.values())
        loaded += sum(stats.cache_hits.values())
    return {"compiled": compiled, "loaded": loaded, "kernels": len(_KERNELS)}
