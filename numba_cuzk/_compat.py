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
"""

import numpy

if not hasattr(numpy, "row_stack"):
    numpy.row_stack = numpy.vstack


def _unwrap_simulated_arrays() -> None:
    from numba import config

    if config.ENABLE_CUDASIM:
        from numba.cuda.simulator import kernel

        kernel.FakeWithinKernelCUDAArray = lambda fake: fake._ary


_unwrap_simulated_arrays()
