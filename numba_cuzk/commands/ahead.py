"""CUDA kernels compiled ahead of time for GPUs this machine does not have (or with no GPU
at all), into the kernel cache entries numba-cuda would have written on such a GPU.

numba-cuda keys a cached kernel (core/caching.py, ``Cache._index_key``) by its argument
types, ``codegen.magic_tuple()`` = (CUDA runtime version from NVRTC, the current
device's compute capability: codegen.py), numba-cuda's version and its bytecode's hash;
the entry (``_Kernel._reduce_states``) pickles the code library: the LLVM IR and, per
compute capability, the PTX and the cubin (linked in-process by nvJitLink, no driver).
Only three steps ask for a device: the compute capability (``get_current_device()`` in
dispatcher.py, ``devices.get_context()`` in codegen.py) and ``_Kernel.bind()``, which
loads the cubin into a context. So an entry for sm_XY is made here by answering those two
with a stand-in device of capability (X, Y), compiling ``_Kernel`` as
``CUDADispatcher.compile`` does, linking its cubin for each target (the LLVM IR does not
depend on the capability above 6.0: nvvmutils.py's atomics are its only use) and saving
it through the dispatcher's own cache. A process on an sm_XY GPU then finds the entry,
and its cubin, without compiling or linking (``get_cubin`` reads the cached one).

The argument types are those of the production launches: recorded in the simulator
(record_signatures) along the tiny paths that ``numba-cuzk compile`` runs on a GPU,
every launch intercepted (kernel_cache.record_launches) and typed as numba-cuda types it
(a simulated device array types as a device array does).
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace

import numpy as np

from numba_cuzk import kernel_cache

TARGETS = ("sm_80", "sm_86", "sm_89", "sm_90", "sm_100", "sm_120")  # A100, A10/3090, L4/4090, H100/H200, B200, 5090


def parse_target(name: str) -> tuple[int, int]:
    """"sm_90" -> (9, 0); ValueError naming the target otherwise."""
    digits = name.removeprefix("sm_")
    if not name.startswith("sm_") or not digits.isdigit() or len(digits) < 2:
        raise ValueError(f"target {name!r}: expected sm_MN, e.g. sm_90")
    return int(digits[:-1]), int(digits[-1])


def describe(value) -> list:
    """A launch argument's type as JSON: ["device", dtype, ndim, layout] (a device array,
    by its numba type), ["array", dtype, ndim, layout, writeable, aligned] (a host array),
    ["int" | "bool" | "float", a value of its type], ["scalar", dtype, 0] or ["tuple", [...]]."""
    numba_type = getattr(value, "_numba_type_", None)
    if numba_type is not None and hasattr(value, "shape"):
        return ["device", np.dtype(str(numba_type.dtype)).str, numba_type.ndim, numba_type.layout]
    if isinstance(value, np.ndarray):
        layout = "C" if value.flags.c_contiguous else "F" if value.flags.f_contiguous else "A"
        return ["array", value.dtype.str, value.ndim, layout, bool(value.flags.writeable), bool(value.flags.aligned)]
    if isinstance(value, (bool, np.bool_)):
        return ["bool", False]
    if isinstance(value, int):  # typed int64, or uint64 past int64's range
        return ["int", 0 if value < 1 << 63 else 1 << 63]
    if isinstance(value, float):
        return ["float", 0.0]
    if isinstance(value, np.generic):
        return ["scalar", value.dtype.str, 0]
    if isinstance(value, tuple):
        return ["tuple", [describe(v) for v in value]]
    raise TypeError(f"a launch argument of type {type(value).__name__}: add it to commands/ahead.describe")


def _array(dtype: str, ndim: int, layout: str, writeable: bool = True) -> np.ndarray:
    """A small array of that dtype, rank and layout (every extent 2, so that an "F"
    array is not also C-contiguous; "A": every other element of a C array)."""
    if layout == "A":
        array = np.zeros((2,) * (ndim - 1) + (4,), dtype=dtype)[..., ::2]
    else:
        array = np.zeros((2,) * ndim, dtype=dtype, order=layout)
    array.flags.writeable = writeable
    return array


def example(desc: list):
    """A value numba-cuda types as the described argument was typed (describe's inverse)."""
    kind, *rest = desc
    if kind == "device":
        return _array(*rest)
    if kind == "array":
        dtype, ndim, layout, writeable, _aligned = rest
        return _array(dtype, ndim, layout, writeable)
    if kind == "scalar":
        return np.dtype(rest[0]).type(rest[1])
    if kind == "tuple":
        return tuple(example(d) for d in rest[0])
    return {"int": int, "bool": bool, "float": float}[kind](rest[0])


def record_signatures(zkey: str | None = None, witness: str | None = None) -> dict[str, list[list]]:
    """{kernel: [each distinct launch's described arguments]} over the GPU paths of
    ``numba-cuzk compile`` (commands/compile.gpu_paths: a key's point check, the MSMs,
    setup's fixed-base products per curve, a tiny setup and proof, the split's, NTTs,
    selfcheck) and, given a ``zkey`` and ``witness``, a ``numba-cuzk prove`` of them, each
    run in this process with every launch recorded and nothing run. Needs the simulator
    (NUMBA_ENABLE_CUDASIM=1): its arrays stand in for device arrays. What the host reads
    back is garbage, so a path may stop with an error after some launches (an untrusted
    key's check refuses it); the next path covers the rest."""
    from numba import config

    from numba_cuzk.commands import compile as tasks

    if not config.ENABLE_CUDASIM:
        raise RuntimeError("record_signatures runs in the simulator (NUMBA_ENABLE_CUDASIM=1)")
    seen: dict[str, list[list]] = {}

    def record(name: str, args: tuple) -> None:
        described = [describe(a) for a in args]
        if described not in seen.setdefault(name, []):
            seen[name].append(described)

    tasks.define_every_kernel()
    paths = tasks.gpu_paths()
    if zkey is not None:
        from numba_cuzk.groth16.files import prove_files

        out = Path(zkey).parent
        paths += [(functools.partial(prove_files, gpu=True, trusted=trusted),
                   (zkey, witness, out / "proof.json", out / "public.json")) for trusted in (False, True)]
    with kernel_cache.record_launches(record):
        for path, args in paths:
            with contextlib.suppress(Exception):  # garbage read back (see the docstring)
                path(*args)
    return seen


def signatures_in_simulator(zkey: str | None = None, witness: str | None = None,
                            scratch_cache: str | None = None) -> dict[str, list[list]]:
    """record_signatures() in a fresh simulator process (this one may have a real CUDA
    target loaded), its CPU kernels cached in ``scratch_cache``: a module may give a CPU
    kernel a global that differs in the simulator, and numba's key would not see it."""
    env = dict(os.environ, NUMBA_ENABLE_CUDASIM="1")
    if scratch_cache is not None:
        env["NUMBA_CUZK_CACHE_DIR"] = scratch_cache
    script = ("import json, sys; from numba_cuzk.commands import ahead; "
              f"print(json.dumps(ahead.record_signatures({zkey!r}, {witness!r})))")
    done = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, check=False)
    if done.returncode:
        raise RuntimeError(f"recording the launches in the simulator failed:\n{done.stderr[-4000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


@contextlib.contextmanager
def stand_in_device(cc: tuple[int, int]) -> Iterator[None]:
    """Within: numba-cuda compiles for, and keys its entries by, a device of capability
    ``cc`` (the two places that ask the driver: see the module docstring)."""
    from numba.cuda import codegen, dispatcher

    device = SimpleNamespace(compute_capability=cc, id=0)
    current, context = dispatcher.get_current_device, codegen.devices.get_context
    dispatcher.get_current_device = lambda: device
    codegen.devices.get_context = lambda *args, **kwargs: SimpleNamespace(device=device)
    try:
        yield
    finally:
        dispatcher.get_current_device, codegen.devices.get_context = current, context


def _arch(cc: tuple[int, int]) -> tuple:
    """The code library's key for ``cc``'s cubin, as a process on that GPU asks for it
    (CUDACodeLibrary._ensure_cc: "a" from 9.0 on, the arch-specific sm_90a)."""
    return (*cc, "a" if cc >= (9, 0) else "")


def compile_kernel(dispatcher, argtypes: tuple, targets: list[tuple[int, int]]) -> None:
    """Save ``dispatcher``'s entry for ``argtypes`` for each of ``targets`` into the kernel
    cache: one compile to LLVM IR (for the first target), then per target its cubin
    (NVVM to LTO-IR, nvJitLink) in an entry of its own, keyed as that GPU looks it up."""
    from numba.cuda.dispatcher import _Kernel

    with stand_in_device(targets[0]):
        kernel = _Kernel(dispatcher.py_func, argtypes, **dispatcher.targetoptions)
    library = kernel._codelibrary
    ptx = dict(library._ptx_cache)
    for cc in targets:
        arch = _arch(cc)
        with stand_in_device(cc):
            cubin = library.get_cubin(cc=arch)
            info = library._linkerinfo_cache.get(arch)
            library._ptx_cache = {arch: ptx[arch]} if arch in ptx else {}
            library._cubin_cache, library._linkerinfo_cache = {arch: cubin}, {arch: info}
            dispatcher._cache.save_overload(argtypes, kernel)
    library._ptx_cache = ptx


def compile_ahead(names: frozenset[str], signatures: dict[str, list[list]], targets: tuple[str, ...]) -> dict:
    """compile_kernel for every recorded signature of the kernels ``names``: a task of
    ``numba-cuzk compile --targets`` (one process). Returns kernel_cache.compile_stats's
    form: {"compiled": entries saved, "loaded": 0}."""
    from numba.cuda.typing.typeof import Purpose, typeof

    from numba_cuzk.commands.compile import define_every_kernel

    define_every_kernel()
    ccs = [parse_target(t) for t in targets]
    saved = 0
    for dispatcher in kernel_cache._KERNELS:
        name = dispatcher.py_func.__qualname__
        for described in signatures.get(name, []) if name in names else []:
            argtypes = tuple(typeof(example(d), Purpose.argument) for d in described)
            compile_kernel(dispatcher, argtypes, ccs)
            saved += len(ccs)
    return {"compiled": saved, "loaded": 0}

