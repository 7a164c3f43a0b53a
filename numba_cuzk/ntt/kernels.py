"""NTT kernels: one Stockham pass per launch (device.py's block code), and the table
builder. Each exists as a CUDA kernel and as a parallel CPU function with the same
arguments; transform.py picks one by where the arrays live, and a pass implementation
by name from PASS_KERNELS (transform.VARIANT unless told).

Launch shape of every pass kernel: grid (blocks per vector, batch), 256 threads; each
block transforms J*R <= 2^10 elements in 33 KiB of shared memory (+ 4 KiB of inner roots).
- ``gpu_pass`` ("radix2"): one radix-2 stage per trip through shared memory and barrier;
  64 registers, no local memory (ptxas, sm_90).
- ``gpu_pass_radix4`` ("radix4"): four elements per thread in registers, two stages per
  trip (device.radix4_group), products in side-by-side pairs; the first group reads
  global memory, the last may store to it; 126 registers, no local memory (ptxas 13.0,
  sm_90, without a GPU; 120 on the H200's nvJitLink).
- ``gpu_pass_radix4_b3`` ("radix4_b3"): the same in <= 80 registers (176 B of spills).
  "radix4" and "radix4_b3" use the swizzled buffer (device.slot), as a compile-time
  constant: decided at run time, every slot was computed both ways (~40 instructions per
  trip).
Per element and pass: 2 x 32 B of global traffic (+32 B of twiddles after the first pass)
against log_r / 2 butterfly products (+1 pre-twiddle): arithmetic dominates at log_r >= 6.
Kernels never allocate, synchronize or copy.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numba import config, cuda, int64, prange, uint32

from numba_cuzk.kernel_cache import cpu_kernel, gpu_kernel
from numba_cuzk.ntt.device import (
    N, ROOT_SLOTS, SLOTS, block_load, block_stage, block_store, direct_store, load_roots, power_entry,
    radix4_group,
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
    block_load(buf, src, b, j0, tw, pre, tid, stride, log_n, log_r, log_j, log_ns, mode, 0)
    cuda.syncthreads()
    for s in range(log_r):  # run-time trip count: NVVM keeps the loop (see carry.opaque)
        block_stage(buf, rt, 0, s, tid, stride, log_r, log_j, 0)
        cuda.syncthreads()
    block_store(buf, dst, b, j0, post, tid, stride, log_n, log_r, log_j, log_ns, mode, 0)


@cpu_kernel(symbols=False, parallel=True)
def cpu_pass(src, dst, tw, pre, post, roots, log_n, log_r, log_j, log_ns, mode):
    """gpu_pass on all CPU cores: one job per (vector, block of columns), same code."""
    blocks = 1 << (log_n - log_r - log_j)
    for job in prange(src.shape[0] * blocks):
        b = job // blocks
        j0 = (job % blocks) << log_j
        buf = np.empty((N, SLOTS), dtype=np.uint32)
        block_load(buf, src, b, j0, tw, pre, 0, 1, log_n, log_r, log_j, log_ns, mode, 0)
        for s in range(log_r):
            block_stage(buf, roots, MAX_RADIX_LOG - log_r, s, 0, 1, log_r, log_j, 0)
        block_store(buf, dst, b, j0, post, 0, 1, log_n, log_r, log_j, log_ns, mode, 0)


THREADS_RADIX4 = 256  # one radix-4 unit (4 elements in registers) per thread at 2^10 elements per block
LAUNCH_THREADS_RADIX4 = 32 if config.ENABLE_CUDASIM else THREADS_RADIX4


def _radix4_options(min_blocks: int) -> dict:
    return {} if config.ENABLE_CUDASIM else {"launch_bounds": (THREADS_RADIX4, min_blocks)}


@cuda.jit(device=True)
def radix4_pass_block(buf, rt, src, dst, tw, pre, post, roots, log_n, log_r, log_j, log_ns, mode):
    """One pass of one block as radix-4 groups (device.radix4_group) at s = log_r mod 2,
    + 2, ..., log_r - 2, after one radix-2 stage (block_load, block_stage) if log_r is odd:
    ceil(log_r / 2) trips through shared memory and barriers, one fewer with a direct
    store (device.direct_store), against log_r + 1 for gpu_pass. One call site of
    radix4_group, its load and store chosen at run time, keeps the kernel small."""
    tid = int64(cuda.threadIdx.x)
    stride = int64(cuda.blockDim.x)
    b = int64(cuda.blockIdx.y)
    j0 = int64(cuda.blockIdx.x) << log_j
    direct = direct_store(log_r, log_j, log_ns)
    swizzle = True
    load_roots(rt, roots, tid, stride, log_r)
    if log_r & 1:
        block_load(buf, src, b, j0, tw, pre, tid, stride, log_n, log_r, log_j, log_ns, mode, swizzle)
        cuda.syncthreads()
        block_stage(buf, rt, 0, 0, tid, stride, log_r, log_j, swizzle)
    cuda.syncthreads()
    for s in range(log_r & 1, log_r - 1, 2):
        to_global = direct and s == log_r - 2
        radix4_group(buf, src, dst, b, j0, tw, pre, post, rt, 0, s, tid, stride,
                     log_n, log_r, log_j, log_ns, mode, swizzle, s == 0, to_global)
        if not to_global:
            cuda.syncthreads()
    if not direct:
        block_store(buf, dst, b, j0, post, tid, stride, log_n, log_r, log_j, log_ns, mode, swizzle)


# Two register budgets for the same pass, to be measured side by side (bench/ntt.py): at
# least 2 blocks of 256 threads per SM (ptxas may use up to 128 registers) or 3 (80).
@gpu_kernel(**_radix4_options(2))
def gpu_pass_radix4(src, dst, tw, pre, post, roots, log_n, log_r, log_j, log_ns, mode):
    """gpu_pass's arguments and result; radix-4 steps in registers (radix4_pass_block)."""
    buf = cuda.shared.array((N, SLOTS), uint32)
    rt = cuda.shared.array((N, ROOT_SLOTS), uint32)
    radix4_pass_block(buf, rt, src, dst, tw, pre, post, roots, log_n, log_r, log_j, log_ns, mode)


@gpu_kernel(**_radix4_options(3))
def gpu_pass_radix4_b3(src, dst, tw, pre, post, roots, log_n, log_r, log_j, log_ns, mode):
    """gpu_pass_radix4 in at most 80 registers (3 blocks per SM)."""
    buf = cuda.shared.array((N, SLOTS), uint32)
    rt = cuda.shared.array((N, ROOT_SLOTS), uint32)
    radix4_pass_block(buf, rt, src, dst, tw, pre, post, roots, log_n, log_r, log_j, log_ns, mode)


@cpu_kernel(parallel=True)
def cpu_pass_radix4(src, dst, tw, pre, post, roots, log_n, log_r, log_j, log_ns, mode):
    """radix4_pass_block on all CPU cores: one job per (vector, block of columns)."""
    blocks = 1 << (log_n - log_r - log_j)
    shift = MAX_RADIX_LOG - log_r
    direct = direct_store(log_r, log_j, log_ns)
    swizzle = True
    for job in prange(src.shape[0] * blocks):
        b = job // blocks
        j0 = (job % blocks) << log_j
        buf = np.empty((N, SLOTS), dtype=np.uint32)
        if log_r & 1:
            block_load(buf, src, b, j0, tw, pre, 0, 1, log_n, log_r, log_j, log_ns, mode, swizzle)
            block_stage(buf, roots, shift, 0, 0, 1, log_r, log_j, swizzle)
        for s in range(log_r & 1, log_r - 1, 2):
            radix4_group(buf, src, dst, b, j0, tw, pre, post, roots, shift, s, 0, 1,
                         log_n, log_r, log_j, log_ns, mode, swizzle, s == 0, direct and s == log_r - 2)
        if not direct:
            block_store(buf, dst, b, j0, post, 0, 1, log_n, log_r, log_j, log_ns, mode, swizzle)


@dataclass(frozen=True)
class PassKernel:
    """A pass implementation: its CUDA kernel and CPU twin (same arguments), the threads per
    block it is launched with, and whether it wants domain.plan's even radices."""

    gpu: object
    cpu: object
    threads: int
    even_radices: bool


PASS_KERNELS = {
    "radix2": PassKernel(gpu_pass, cpu_pass, LAUNCH_THREADS, False),
    "radix4": PassKernel(gpu_pass_radix4, cpu_pass_radix4, LAUNCH_THREADS_RADIX4, True),
    "radix4_b3": PassKernel(gpu_pass_radix4_b3, cpu_pass_radix4, LAUNCH_THREADS_RADIX4, True),
}


@gpu_kernel
def gpu_powers(out, low, high, log_low, log_ns, shift):
    i = cuda.grid(1)
    if i < out.shape[1]:
        power_entry(i, out, low, high, log_low, log_ns, shift)


@cpu_kernel(symbols=False, parallel=True)
def cpu_powers(out, low, high, log_low, log_ns, shift):
    for i in prange(out.shape[1]):
        power_entry(i, out, low, high, log_low, log_ns, shift)
