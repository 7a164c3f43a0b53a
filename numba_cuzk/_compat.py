"""Environment fixes that must run before Numba's CUDA target is used. The only place
the project patches third-party modules.

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
"""

import threading

import numpy

if not hasattr(numpy, "row_stack"):
    numpy.row_stack = numpy.vstack


def _unwrap_simulated_arrays() -> None:
    from numba import config

    if config.ENABLE_CUDASIM:
        from numba.cuda.simulator import kernel

        kernel.FakeWithinKernelCUDAArray = lambda fake: fake._ary


_unwrap_simulated_arrays()


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


_unload_each_kernel_library_once()


def _install_kernel_cache() -> None:
    from numba_cuzk import kernel_cache

    kernel_cache.install()


_install_kernel_cache()
