"""numba-cuzk: a Groth16 prover for BLS12-381 whose arithmetic runs as Numba CUDA kernels."""

from numba_cuzk import _compat  # noqa: F401  (must precede any numba.cuda import)

__version__ = "0.1.0"
