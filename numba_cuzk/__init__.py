"""numba-cuzk: a Groth16 prover for BLS12-381 whose arithmetic runs as Numba CUDA kernels.

The root imports nothing: numba is patched (_compat.py) by the first of the package's
modules that imports numba, so reading a header or a timeline never loads numba.
"""

__version__ = "0.1.0"
