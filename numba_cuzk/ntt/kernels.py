"""NTT kernels: one Stockham pass per launch (device.py's block code), and the table
builder. Each exists as a CUDA kernel and as a parallel CPU function with the same
arguments; transform.py picks one by where the arrays live.

Launch shape of ``gpu_pass``: grid (blocks per vector, batch), THREADS threads; each block
transforms J*R <= 2^10 elements in 33 KiB of shared memory (+ 4 KiB of inner roots);
64 registers, no local memory (ptxas, sm_90).
Per element and pass: 2 x 32 B of global traffic (+32 B of twiddles after the first pass)
against log_r / 2 butterfly products (+1 pre-twiddle): arithmetic dominates at log_r >= 6.
Kernels never allocate, synchronize or copy.
"""

from __future__ import annotations

import numpy as np
from numba import config, cuda, int64, prange, uint32

from numba_cuzk.kernel_cache import cpu_kernel, gpu_kernel
from numba_cuzk.ntt.device import (
    N, ROOT_SLOTS, SLOTS, block_load, block_stage, block_store, load_roots, power_entry,
)
from numba_cuzk.ntt.domain import MAX_RADIX_LOG

THREADS = 256  # per block: 2 butterflies per thread per stage at 2^10 elements per block
# The simulator runs each thread as a Python thread; a warp's worth exercises the same
# strided loops (the kernel strides by blockDim.x) at a tenth of the cost.
LAUNCH_THREADS = 32 if config.ENABLE_CUDASIM else THREADS
# 4 blocks of 256 threads per SM: ptxas then fits the pass in 64 registers with no spills
# (72 unbounded: 3 blocks). 4 x 37 KiB of shared memory fits an H100/H200 SM's 228 KiB.
# The simulator rejects launch_bounds.
MIN_BLOCKS_PER_SM = 4
_PASS_OPTIONS = {} if config.ENABLE_CUDASIM else {"launch_bounds": (THREADS, MIN_BLOCKS_PER_SM)}
BUILD_THREADS = LAUNCH_THREADS


@gpu_kernel(**_PASS_OPTIONS)
def gpu_pass(src, dst, tw, pre, post, roots, log_n, log_r, log_j, log_ns, mode):
    """One pass on (batch, 8, n) arrays; src and dst may be the same array only on the
    last pass (it reads and writes the same index set per block)."""
    buf = cuda.shared.array((N, SLOTS), uint32)
    rt = cuda.shared.array((N, ROOT_SLOTS), uint32)
    tid = int64(cuda.threadIdx.x)
    stride = int64(cuda.blockDim.x)
    b = int64(cuda.blockIdx.y)
    j0 = int64(cuda.blockIdx.x) << log_j
    load_roots(rt, roots, tid, stride, log_r)
    block_load(buf, src, b, j0, tw, pre, tid, stride, log_n, log_r, log_j, log_ns, mode)
    cuda.syncthreads()
    for s in range(log_r):  # run-time trip count: NVVM keeps the loop (see carry.opaque)
        block_stage(buf, rt, 0, s, tid, stride, log_r, log_j)
        cuda.syncthreads()
    block_store(buf, dst, b, j0, post, tid, stride, log_n, log_r, log_j, log_ns, mode)


@cpu_kernel(symbols=False, parallel=True)
def cpu_pass(src, dst, tw, pre, post, roots, log_n, log_r, log_j, log_ns, mode):
    """gpu_pass on all CPU cores: one job per (vector, block of columns), same code."""
    blocks = 1 << (log_n - log_r - log_j)
    for job in prange(src.shape[0] * blocks):
        b = job // blocks
        j0 = (job % blocks) << log_j
        buf = np.empty((N, SLOTS), dtype=np.uint32)
        block_load(buf, src, b, j0, tw, pre, 0, 1, log_n, log_r, log_j, log_ns, mode)
        for s in range(log_r):
            block_stage(buf, roots, MAX_RADIX_LOG - log_r, s, 0, 1, log_r, log_j)
        block_store(buf, dst, b, j0, post, 0, 1, log_n, log_r, log_j, log_ns, mode)


@gpu_kernel
def gpu_powers(out, low, high, log_low, log_ns, shift):
    i = cuda.grid(1)
    if i < out.shape[1]:
        power_entry(i, out, low, high, log_low, log_ns, shift)


@cpu_kernel(symbols=False, parallel=True)
def cpu_powers(out, low, high, log_low, log_ns, shift):
    for i in prange(out.shape[1]):
        power_entry(i, out, low, high, log_low, log_ns, shift)
