"""``numba-cuzk compile``: every kernel into the kernel cache, in parallel processes.

A kernel's cost is its compilation (a G2 point formula inlined at one call site is ~10 s
of NVVM and ptxas on one core), and one process compiles one kernel at a time. So each
heavy GPU kernel gets a process of its own, which runs that kernel's production path at
a tiny size under kernel_cache.compile_only: the same call site, so the same argument
types and cache entry, compiled and not run. The light GPU kernels go the same way, a
few per process, along every tiny run of gpu_paths() (a proof, the split's proof, NTTs
of the fixed-radix sizes, selfcheck's checks):

    check_gN, accumulate_gN, reduce_gN,           one process each (N = 1, 2)
    fixed_base_mul_gN, xyzz_to_affine_gN,
    sum_selected_gN (the split's)
    gpu_field_1.., gpu_msm_1.., gpu_ntt_1..       the light GPU kernels, a few per process
                                                  by package, compiled along gpu_paths()
    cpu_check_gN, cpu_msm_gN, cpu_setup_gN        the CPU backend's point kernels, run
    cpu_codec, cpu_selfcheck                      field/codec's bulk kernels (KERNEL_MIN on)
                                                  and Fq's products both ways (ADX or not);
                                                  selfcheck's (Fq's mul_sub, batch_inverse)
    cpu_prove    once the cpu_ tasks are done     a tiny setup and proof, run: the CPU's
    gpu_prove    once the GPU tasks are done      light kernels left, and a check that
                                                  all work (heavy kernels from the cache)

Every kernel a command launches is on one of these runs, and the bit/tail split's, which
only the Python API and the engine's config launch (Prover(tail=), EngineConfig.tail: the
PoRep path's); NO_COMMAND_LAUNCHES lists the GPU kernels that are not (their CPU twins
likewise: a Python caller compiles them).

Tasks start longest first, as a process frees up; a task waits only for the ones it
needs. Without a GPU only the CPU tasks run. Each task's process runs one thread of numba
and of arkworks (WORKER_ENV): the parallelism is the processes', and a process per core each
starting a thread per core is a thread per core squared, whose spinning waits slow every
task (each line reports the task's CPU seconds beside its wall seconds to show it).
"""

from __future__ import annotations

import contextlib
import importlib
import multiprocessing
import os
import queue
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import numpy as np

from numba_cuzk import backend, kernel_cache

_TINY_LOG = 6  # the tiny proofs' domain: 2^6 constraints
_SPLIT_LOG = 12  # the split's tiny proof: bit_heavy's smallest size (2129 constraints and public rows)
_TINY_TAIL = 1 << _SPLIT_LOG  # the split's bound on non-bit scalars: that witness's all
_POINTS = 256  # points per tiny check / MSM: the bulk check's minimum (formats/points.py)


# The tasks' processes: one thread each for numba's parallel loops and arkworks' (rayon)
# pool, which both default to a thread per core.
WORKER_ENV = {"NUMBA_NUM_THREADS": "1", "RAYON_NUM_THREADS": "1"}


@dataclass(frozen=True)
class TaskResult:
    """One task's process: its wall time (s, import included), kernel_cache.compile_stats,
    and the CPU time of all its threads (s, user + system)."""

    name: str
    seconds: float
    compiled: int
    loaded: int
    cpu_seconds: float = 0.0


def _generator_points(curve, count: int) -> np.ndarray:
    from numba_cuzk.curve import layout

    return np.ascontiguousarray(np.repeat(layout.points_to_limbs([curve.generator], curve), count, axis=1))


def _curve(name: str):
    from numba_cuzk.curve.params import G1, G2

    return {"G1": G1, "G2": G2}[name]


def _check(curve_name: str, gpu: bool) -> None:
    """A key's point check (formats/points.check's kernel), on the GPU or the CPU."""
    from numba import cuda

    from numba_cuzk.curve import kernels
    from numba_cuzk.curve.point_major import point_major

    curve = _curve(curve_name)
    points = _generator_points(curve, _POINTS)
    if gpu:  # a device key is point-major, as the Prover's copy is
        kernels.check(cuda.device_array(_POINTS, dtype=np.uint8), cuda.to_device(point_major(points)), curve)
    else:
        kernels.check(np.empty(_POINTS, dtype=np.uint8), points, curve)


def _msm(curve_name: str, gpu: bool) -> None:
    from numba import cuda

    from numba_cuzk.msm import host_bases, msm, upload_bases

    curve = _curve(curve_name)
    scalars = np.zeros((8, _POINTS), dtype=np.uint32)
    scalars[0] = np.arange(_POINTS)
    points = _generator_points(curve, _POINTS)
    if gpu:
        msm(upload_bases(points, curve), cuda.to_device(scalars), montgomery=True)
    else:
        msm(host_bases(points, curve), scalars, montgomery=True)


def _setup(curve_name: str, gpu: bool) -> None:
    from numba_cuzk.groth16.setup import _FixedBase

    scalars = np.zeros((8, _POINTS), dtype=np.uint32)
    scalars[0] = np.arange(1, _POINTS + 1)
    _FixedBase(gpu=gpu)(scalars, _curve(curve_name))


def _prove(gpu: bool, tail: int | None = None) -> None:
    """A tiny setup and proof; with ``tail`` (GPU), the bit/tail split's (msm/bits.py) on
    a bit-valued witness."""
    from numba_cuzk.circuits import build
    from numba_cuzk.groth16.prove import Prover
    from numba_cuzk.groth16.setup import setup

    r1cs, witness = build("mimc", _TINY_LOG) if tail is None else build("bit_heavy", _SPLIT_LOG)
    pk = setup(r1cs, gpu=gpu, resident=gpu, tail=tail)  # on the GPU resident, as a large key: its point-major copies
    Prover(pk, gpu=gpu, tail=tail).prove(witness)


def _ntt(gpu: bool) -> None:
    """shift_to_coset at the sizes whose passes run the fixed-radix kernels, which a tiny
    proof's does not: 2^10's plan is radices 2^6 and 2^4 (gpu_pass_radix4_r6, _r4: also
    2^11's and 2^17's last pass), 2^16's 2^8 twice (_r8)."""
    from numba import cuda

    from numba_cuzk.field.params import FR
    from numba_cuzk.ntt import shift_to_coset

    for log_n in (10, 16):
        values = np.zeros((FR.limbs, 1 << log_n), dtype=np.uint32)
        shift_to_coset(cuda.to_device(values) if gpu else values, FR.root_of_unity(log_n + 1))


def _selfcheck(gpu: bool) -> None:
    """`numba-cuzk selfcheck`'s checks (Fr's and Fq's mul_sub and batch_inverse) on a few
    elements, on the GPU or the CPU."""
    from numba_cuzk.field.selfcheck import check_fields

    check_fields(2, 0, ["gpu" if gpu else "cpu"])


# GPU kernels that no command launches: `numba-cuzk compile` and a prebuilt archive leave
# them out (a caller of the Python API compiles one at its first launch). Fr's mul_powers
# on device arrays (setup's powers run on the host; its add and scale run on the device
# for a GPU setup, so they are on the paths) and to_montgomery (the prover's witness stays
# canonical: keys.Coefficients); Fq's element-wise
# kernels other than selfcheck's mul_sub and batch_inverse; curve.encoding's decoding and
# to_affine(form="jacobian"); the radix-2 NTT (transform's variant "radix2", benchmarks); the
# batch-affine accumulation (msm/affine.py: plan.affine, opt-in until a measurement makes it
# a default).
NO_COMMAND_LAUNCHES = frozenset({
    "mul_powers_fr", "to_montgomery_fr", "add_fq", "scale_fq", "mul_powers_fq", "to_montgomery_fq",
    "from_montgomery_fq", "decode_g1", "decode_g2", "jacobian_to_affine_g1", "jacobian_to_affine_g2", "gpu_pass",
    "affine_denominators_g1", "invert_groups_g1", "affine_sums_g1", "affine_partials_g1"})


def gpu_paths() -> list[tuple[Callable, tuple]]:
    """(function, arguments): the tiny runs whose launches are every GPU kernel but
    NO_COMMAND_LAUNCHES (every command's and the split's): the light kernels' tasks compile
    along all of them, and commands/ahead records its argument types along them."""
    curves = [(fn, (curve, True)) for curve in ("G1", "G2") for fn in (_check, _msm, _setup)]
    return curves + [(_prove, (True,)), (_prove, (True, _TINY_TAIL)), (_ntt, (True,)), (_selfcheck, (True,))]


def _codec() -> None:
    """field/codec's CPU kernels, which run from KERNEL_MIN (CHECK_KERNEL_MIN) elements on
    (a large key's Montgomery conversions, a large witness's check), the point-major copy
    of a large key's upload, and the staging of host scalars (msm/staging.py): nothing
    tiny reaches them; and Fq's products both ways (ADX and not:
    curve/target.compile_products), of which a run binds one."""
    from numba_cuzk.curve.point_major import PARALLEL_MIN, point_major
    from numba_cuzk.curve.target import compile_products
    from numba_cuzk.field import codec
    from numba_cuzk.field.params import FQ, FR
    from numba_cuzk.msm.staging import copy_words

    for params in (FR, FQ):
        limbs = codec.to_limbs([1] * codec.KERNEL_MIN, params)
        codec.from_montgomery(codec.to_montgomery(limbs, params), params)
        large = np.zeros((params.limbs, codec.CHECK_KERNEL_MIN), np.uint32)
        codec.first_noncanonical(large, params, out=np.empty_like(large))
    point_major(np.zeros((24, PARALLEL_MIN), dtype=np.uint32))  # a large key's upload
    copy_words(np.empty(8, np.uint32), np.zeros(8, np.uint32), 0, 8)  # host scalars' staging
    compile_products()


def _only(kernels: frozenset[str], fn: Callable, *args) -> None:
    """fn(*args) compiling ``kernels`` alone (kernel_cache.compile_only). Nothing runs, so
    a proof's epilogue refuses what the host reads back (ValueError, after the launches:
    the split's sums are a heavy task's); a compile's error is raised."""
    with kernel_cache.compile_only(kernels), contextlib.suppress(ValueError):
        fn(*args)


def _light(kernels: frozenset[str]) -> None:
    """gpu_paths() compiling ``kernels`` alone. Nothing runs, so what the host reads back
    is garbage and a path may refuse it (after its launches: a proof's epilogue): that is
    expected here, and gpu_prove's real proof checks what was compiled."""
    for fn, args in gpu_paths():
        with contextlib.suppress(Exception):  # see the docstring
            _only(kernels, fn, *args)


@dataclass(frozen=True)
class Task:
    name: str
    fn: Callable
    args: tuple
    after: tuple[str, ...] = ()  # tasks that must end first


_HEAVY_GPU = ("check", "accumulate", "reduce", "fixed_base_mul", "xyzz_to_affine", "sum_selected")


_LIGHT_PER_TASK = 4  # light kernels per process: ~1-3 s each on one core


def _light_groups() -> dict[str, frozenset[str]]:
    """{"gpu_msm": {...}, "gpu_field_1": {...}, ...}: the GPU kernels that are not heavy
    (_HEAVY_GPU), by the package below numba_cuzk that defines them, at most
    _LIGHT_PER_TASK to a group (numbered where a package has more)."""
    from numba.core.registry import CPUDispatcher

    define_every_kernel()
    heavy = {f"{kind}_{curve}" for kind in _HEAVY_GPU for curve in ("g1", "g2")}
    groups: dict[str, set[str]] = {}
    for kernel in kernel_cache._KERNELS:
        name = kernel.py_func.__qualname__
        if isinstance(kernel, CPUDispatcher) or name in heavy:
            continue
        groups.setdefault(f"gpu_{kernel.py_func.__module__.split('.')[1]}", set()).add(name)
    split = {}
    for group, names in sorted(groups.items()):
        ordered = sorted(names)
        parts = [ordered[i:i + _LIGHT_PER_TASK] for i in range(0, len(ordered), _LIGHT_PER_TASK)]
        for i, part in enumerate(parts):
            split[group if len(parts) == 1 else f"{group}_{i + 1}"] = frozenset(part)
    return split


def _tasks(gpu: bool, cpu_backend: bool = True) -> list[Task]:
    """Every task, in the order they start: the longest chains first (G2's kernels; the
    CPU tasks, which cpu_prove waits for), then G1's, then the light kernels. Without
    ``cpu_backend``, the GPU's only."""
    cpu = []
    for curve in ("G2", "G1"):
        suffix = curve.lower()
        cpu += [Task(f"cpu_check_{suffix}", _check, (curve, False)), Task(f"cpu_msm_{suffix}", _msm, (curve, False)),
                Task(f"cpu_setup_{suffix}", _setup, (curve, False))]
    cpu += [Task("cpu_codec", _codec, ()), Task("cpu_selfcheck", _selfcheck, (False,))]
    cpu_prove = Task("cpu_prove", _prove, (False,), after=tuple(t.name for t in cpu))
    if not gpu:
        return cpu + [cpu_prove]
    heavy = {curve: [Task(f"{kind}_{curve.lower()}", _only, (frozenset({f"{kind}_{curve.lower()}"}),
                                                             *_heavy_run(kind, curve))) for kind in _HEAVY_GPU]
             for curve in ("G2", "G1")}
    light = [Task(group, _light, (names,)) for group, names in _light_groups().items()]
    gpu = heavy["G2"] + heavy["G1"] + light
    gpu_prove = Task("gpu_prove", _prove, (True,), after=tuple(t.name for t in gpu))
    if not cpu_backend:
        return gpu + [gpu_prove]
    return heavy["G2"] + cpu + heavy["G1"] + light + [cpu_prove, gpu_prove]


def _heavy_run(kind: str, curve: str) -> tuple:
    """(function, *arguments) that launch the heavy kernel ``kind`` of ``curve`` on the
    GPU: the curve's check, MSM or setup; for the split's sums, the split's tiny proof."""
    if kind == "sum_selected":
        return _prove, True, _TINY_TAIL
    runs = {"check": _check, "accumulate": _msm, "reduce": _msm, "fixed_base_mul": _setup, "xyzz_to_affine": _setup}
    return runs[kind], curve, True


KERNEL_MODULES = ("numba_cuzk.field.codec", "numba_cuzk.field.kernels", "numba_cuzk.curve.kernels",
                  "numba_cuzk.curve.fixed_base", "numba_cuzk.curve.point_major", "numba_cuzk.msm.kernels",
                  "numba_cuzk.msm.cpu", "numba_cuzk.msm.staging", "numba_cuzk.msm.bits",
                  "numba_cuzk.msm.indexed", "numba_cuzk.ntt.kernels", "numba_cuzk.groth16.kernels")


def define_every_kernel() -> None:
    """Import every kernel module, so that kernel_cache lists every kernel (none compiled)."""
    for module in KERNEL_MODULES:
        importlib.import_module(module)


def cache_report() -> dict:
    """kernel_cache.folder_report() plus coverage: for "cpu" and each visible GPU's
    "sm_MN", [kernels cached, kernels defined] (every kernel module imported, nothing
    compiled); and "prebuilt": what `compile --fetch` installed here, or None."""
    import json

    from numba_cuzk.commands.kernel_report import PREBUILT_MANIFEST

    define_every_kernel()
    targets = ["cpu"] + sorted({"sm_" + d["compute_capability"].replace(".", "") for d in backend.describe_devices()})
    try:
        record = json.loads((kernel_cache.cache_dir() / PREBUILT_MANIFEST).read_text())
        prebuilt = {"entries": len(record["files"]), "targets": record["targets"], "sha256": record["archive_sha256"]}
    except (OSError, ValueError, KeyError):
        prebuilt = None
    return kernel_cache.folder_report() | {"coverage": {t: list(kernel_cache.coverage(t)) for t in targets},
                                           "prebuilt": prebuilt}


def _run_task(task: Task) -> TaskResult:
    """``task`` in this (fresh) process: its counts are what its function returns (an
    ahead-of-time task's entries) or else kernel_cache.compile_stats()."""
    start, cpu_start = time.perf_counter(), time.process_time()  # CPU time: every thread of the process
    value = task.fn(*task.args)
    stats = value if isinstance(value, dict) else kernel_cache.compile_stats()
    return TaskResult(task.name, time.perf_counter() - start, stats["compiled"], stats["loaded"],
                      time.process_time() - cpu_start)


def task_names(gpu: bool | None = None, cpu_backend: bool = True) -> list[str]:
    gpu = backend.cuda_available() if gpu is None else gpu
    return [task.name for task in _tasks(gpu, cpu_backend)]


_CLAIM = ".gpu-compiling"  # the process compiling them first, by pid


def compiled_marker(target: str) -> str:
    """The file, in the version's cache folder, that says every kernel for ``target``
    ("sm_90") is there: compile_all finished them, or an archive of them was installed."""
    return f".compiled-{target}"


def device_target() -> str | None:
    """"sm_MN" of the first visible GPU, None without one."""
    devices = backend.describe_devices()
    return "sm_" + devices[0]["compute_capability"].replace(".", "") if devices else None


@contextlib.contextmanager
def first_run_on_gpu() -> Iterator[bool]:
    """True where a GPU is visible and no run of this version of the code on this machine
    has compiled the GPU's kernels (compiled_marker is absent from its cache folder) or is
    compiling them now: compiling them in parallel first (compile_all(cpu_backend=False),
    ~1 min on the H200's 16 cores) then beats compiling them one by one inside a first
    proof (~4 min). The process told True holds a claim until the block ends; a claim
    whose process is gone (a compile killed or interrupted) is taken over. False where the
    folder cannot be written (kernel_cache warns of it)."""
    folder = kernel_cache.cache_dir()
    claim = folder / _CLAIM
    target = device_target() if backend.cuda_available() else None
    first = target is not None and not (folder / compiled_marker(target)).exists() and _claim(folder, claim)
    try:
        yield first
    finally:
        if first:
            claim.unlink(missing_ok=True)


def _claim(folder: Path, claim: Path) -> bool:
    try:
        folder.mkdir(parents=True, exist_ok=True)
        for _ in range(2):  # a stale claim, removed, then ours
            try:
                with open(claim, "x") as file:
                    file.write(str(os.getpid()))
                return True
            except FileExistsError:
                if _claimer_alive(claim):
                    return False
                claim.unlink(missing_ok=True)
    except OSError:
        pass
    return False


def _claimer_alive(claim: Path) -> bool:
    try:
        pid = int(claim.read_text() or 0)
        os.kill(pid, 0)
    except (OSError, ValueError):  # gone, unreadable, or half written
        return False
    return True


def compile_all(*, gpu: bool | None = None, cpu_backend: bool = True, processes: int | None = None,
                on_done: Callable[[TaskResult], None] | None = None) -> list[TaskResult]:
    """Fill the kernel cache for this machine (the visible GPU when ``gpu``, default: when
    there is one; the CPU backend unless ``cpu_backend`` is False), ``processes`` at a
    time (default: the CPU count), each task in a fresh process, started once the tasks
    it needs have ended. ``on_done`` hears of each task as it ends. A task's error is
    raised once the tasks already running have ended."""
    gpu = backend.cuda_available() if gpu is None else gpu
    results = run_tasks(_tasks(gpu, cpu_backend), processes, on_done)
    if gpu:
        with contextlib.suppress(OSError):  # an unwritable folder: kernel_cache warned of it
            (kernel_cache.cache_dir() / compiled_marker(device_target())).touch()
    return results


def run_tasks(pending: list[Task], processes: int | None = None,
              on_done: Callable[[TaskResult], None] | None = None) -> list[TaskResult]:
    """Run ``pending``, ``processes`` at a time (default: the CPU count), each in a fresh
    process, started once the tasks it needs have ended; ``on_done`` hears of each as it
    ends. A task's error is raised once the tasks already running have ended."""
    pending = list(pending)
    with environment(WORKER_ENV):  # read by each process as it is spawned
        return _run_pool(pending, processes, on_done)


@contextlib.contextmanager
def environment(values: dict[str, str]) -> Iterator[None]:
    """Within: os.environ holds ``values``; then as it was."""
    before = {name: os.environ.get(name) for name in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for name, value in before.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


def _run_pool(pending: list[Task], processes: int | None,
              on_done: Callable[[TaskResult], None] | None) -> list[TaskResult]:
    context = multiprocessing.get_context("spawn")  # a CUDA context does not survive fork
    finished: queue.SimpleQueue = queue.SimpleQueue()
    results: list[TaskResult] = []
    done: set[str] = set()
    running = 0
    with context.Pool(processes or max(1, min(len(pending), os.cpu_count() or 1)), maxtasksperchild=1) as pool:
        while pending or running:
            for task in [t for t in pending if done.issuperset(t.after)]:
                pending.remove(task)
                pool.apply_async(_run_task, (task,), callback=finished.put, error_callback=finished.put)
                running += 1
            if not running:
                raise RuntimeError(f"compile tasks waiting on nothing: {[t.name for t in pending]}")
            result = finished.get()
            running -= 1
            if isinstance(result, BaseException):
                pool.close()
                pool.join()
                raise result
            results.append(result)
            done.add(result.name)
            if on_done is not None:
                on_done(result)
    return results
