"""Environment fixes that must run before Numba's CUDA target is used. The only place
the project patches third-party modules. Those that concern numba-cuda run when it loads
(item 7), as do the package's own CUDA-target definitions (``after_cuda_loads``).

1. numba-cuda 0.30 (in maintenance; upstream will not change it) calls
   ``numpy.row_stack``, which numpy 2.5 removed. The H200 image ships numpy 2.5.2, so
   without this no kernel compiles there. ``row_stack`` was always an alias of
   ``vstack``, so restoring the alias changes nothing else.
2. In the CUDA simulator (NUMBA_ENABLE_CUDASIM=1, used by CI), kernels receive each
   device array wrapped in a ``FakeWithinKernelCUDAArray``, which Numba cannot unbox, so
   a simulated kernel could not call the ``@njit`` field functions that real kernels
   call. Handing the kernel the numpy array behind the wrapper gives the same indexing
   semantics for our plain integer arrays and lets the same kernel source run.
3. numba-cuda 0.30 links a kernel once per compute capability and loads that one
   library into every device's context under the same handle; each context unloads it
   when it lets the module go, at exit at the latest. On a host of two GPUs of one kind
   the second unload frees the library twice and glibc aborts the process at exit
   ("double free or corruption", "corrupted size vs. prev_size": every two-H200
   `numba-cuzk run`, never one H200). The driver's cuLibraryUnload is wrapped to unload
   each handle once. A handle the driver reuses for a later library is then never
   unloaded: a leak of a kernel's code until exit, not a crash.
4. numba's and numba-cuda's cache locators: the package's own goes first, so its
   kernels are cached in one folder per version of the code (kernel_cache.py).
5. The simulator's ``cuda.shared.array`` (FakeCUDAShared.array) looks up the block's
   array for the calling line, creates it if missing and stores it, unlocked; its
   threads are Python threads. Two threads that both miss get an array each, and the one
   whose array is overwritten works alone on a private copy: its block's result is wrong.
   That was CI's rare failing proof (an NTT at n = 8 wrong in ~1% of calls with a 10 us
   switch interval, never with one thread per block). The lookup runs under a lock.
6. The simulator runs a block as Python threads and waits for them in a loop that polls
   each thread's ``is_alive`` without ever blocking, so it keeps the GIL for whole switch
   intervals while the block's threads wait for it: more than half of a simulated
   kernel's time on CI's 2 cores (tests/ntt and the affine MSM cases: 214 s, 90 s with
   this). The poll of thread 0 yields the GIL (``time.sleep(0)``), once a pass, and the
   loop is otherwise the simulator's own: its barrier and exception handling unchanged.
7. numba.cuda loads on first use. Its import takes 0.3-0.5 s (numba-cuda's typing, the
   CUDA bindings), which a process that proves on the CPU never uses. It is put in
   sys.modules as a module not yet run (_UnloadedModule): ``from numba import cuda``
   binds it without running it, and the first read of an attribute runs numba-cuda's
   package in place. The object stays the same, so numba's typing of ``cuda.grid`` finds
   the module it registered. The hooks of ``after_cuda_loads`` run right after it, before
   that first read returns. The first read runs under a lock: threads that read at the
   same moment wait for the one that runs it (importlib's LazyLoader, before Python 3.12,
   showed them a module already switched to a plain one and not yet run: 7 of 8 threads
   reading `cuda.jit` at once got AttributeError), and numba-cuda's own reads while it
   runs see the module as it is so far.
"""

import importlib.util
import sys
import threading
import time
import traceback
import types
from typing import Callable

import numpy

if not hasattr(numpy, "row_stack"):
    numpy.row_stack = numpy.vstack

_after_load: list[Callable[[], None]] = []
_loaded = False
_first_read = threading.RLock()  # numba.cuda's first read, and the hooks' list (item 7)


def cuda_loaded() -> bool:
    """Whether numba.cuda has run (item 7): False in a process that proved on the CPU only."""
    return _loaded


def after_cuda_loads(hook: Callable[[], None]) -> None:
    """Run ``hook`` once numba.cuda has loaded: now if it has, else right after it does.
    Under _first_read, so that a hook added by a thread while another runs numba-cuda
    waits for it rather than landing in the list after it was emptied."""
    with _first_read:
        if _loaded:
            hook()
        else:
            _after_load.append(hook)


def _run_after_load() -> None:
    global _loaded
    _loaded = True
    while _after_load:
        _after_load.pop(0)()


_running_in: list[int] = []  # the thread running numba-cuda's package, while it runs


class _UnloadedModule(types.ModuleType):
    """numba.cuda before its first read: the first read of an attribute runs its package in
    place, then the hooks, under _first_read; after that it is a plain module."""

    def __getattribute__(self, name: str):
        if threading.get_ident() not in _running_in:  # (while it runs, its own reads see it as it is so far)
            _run_once(self)
        return types.ModuleType.__getattribute__(self, name)


def _run_once(module: types.ModuleType) -> None:
    with _first_read:
        if type(module) is not _UnloadedModule:  # another thread ran it while this one waited
            return
        spec = types.ModuleType.__getattribute__(module, "__spec__")
        _running_in.append(threading.get_ident())
        try:
            spec.loader.exec_module(module)
        finally:
            _running_in.pop()
        module.__class__ = types.ModuleType
        _run_after_load()


def _load_numba_cuda_lazily() -> None:
    import numba

    if "numba.cuda" in sys.modules:  # imported before the package: its hooks run as they come
        _run_after_load()
        return
    spec = importlib.util.find_spec("numba.cuda")
    module = importlib.util.module_from_spec(spec)
    module.__class__ = _UnloadedModule
    sys.modules["numba.cuda"] = module
    numba.cuda = module


def _unwrap_simulated_arrays() -> None:
    from numba import config

    if config.ENABLE_CUDASIM:
        from numba.cuda.simulator import kernel

        kernel.FakeWithinKernelCUDAArray = lambda fake: fake._ary


after_cuda_loads(_unwrap_simulated_arrays)


def locked_shared_arrays(shared_class) -> None:
    """``shared_class.array`` (the simulator's FakeCUDAShared: ``_allocations`` maps a
    kernel's (file, line) to its block's array) with the lookup and the store under one
    lock, so every thread of a block gets the one array of a line. Dynamic shared memory
    (shape 0) and alignment go to the original as before."""
    original = shared_class.array
    lock = threading.Lock()

    def array(self, shape, dtype, alignment=None):
        if shape == 0 or alignment is not None:
            return original(self, shape, dtype, alignment)
        caller = tuple(traceback.extract_stack(sys._getframe(1), limit=1)[-1])[0:2]  # the kernel's line
        with lock:
            found = self._allocations.get(caller)
            if found is None:
                found = self._allocations[caller] = numpy.empty(shape, _as_dtype(dtype))
        return found

    shared_class.array = array


def _as_dtype(dtype):
    from numba.core import types
    from numba.np import numpy_support

    return numpy_support.as_dtype(dtype) if isinstance(dtype, types.Type) else dtype


def _lock_simulated_shared_arrays() -> None:
    from numba import config

    if config.ENABLE_CUDASIM:
        from numba.cuda.simulator import kernelapi

        locked_shared_arrays(kernelapi.FakeCUDAShared)


after_cuda_loads(_lock_simulated_shared_arrays)


def yielding_block_thread(thread_class):
    """A subclass of the simulator's BlockThread whose thread 0 yields the GIL when the
    block's runner asks it is_alive (once per pass over the block's threads)."""

    class YieldingBlockThread(thread_class):
        def is_alive(self) -> bool:
            if self.thread_id == 0:
                time.sleep(0)
            return super().is_alive()

    return YieldingBlockThread


def _yield_in_simulated_blocks() -> None:
    from numba import config

    if config.ENABLE_CUDASIM:
        from numba.cuda.simulator import kernel

        kernel.BlockThread = yielding_block_thread(kernel.BlockThread)


after_cuda_loads(_yield_in_simulated_blocks)


def unload_once(unload):
    """``unload(handle)`` made to act once per handle value (thread-safe)."""
    done: set[int] = set()
    lock = threading.Lock()

    def unload_each_once(handle) -> None:
        with lock:
            if int(handle) in done:
                return
            done.add(int(handle))
        unload(handle)

    return unload_each_once


def install_unload_once(driver) -> None:
    """Make ``driver.cuLibraryUnload`` (numba-cuda's lazily bound driver function) unload
    each handle once. The driver's own wrapper is bound here, once: binding it stores it
    as the attribute, which must not happen again after ours is set."""
    real = driver._cuda_python_wrap_fn("cuLibraryUnload")
    driver.cuLibraryUnload = unload_once(real)


def _unload_each_kernel_library_once() -> None:
    from numba import config

    if config.ENABLE_CUDASIM:  # the simulator's driver loads nothing
        return
    from numba.cuda.cudadrv.driver import driver

    try:
        install_unload_once(driver)
    except (AttributeError, ImportError):  # no cuLibrary API in these bindings: nothing to guard
        pass


after_cuda_loads(_unload_each_kernel_library_once)


def _install_kernel_cache() -> None:
    from numba_cuzk import kernel_cache

    kernel_cache.install()
    after_cuda_loads(kernel_cache.install_cuda)


_install_kernel_cache()
_load_numba_cuda_lazily()
