"""NTT kernels: one Stockham pass per launch (device.py's block code), and the table
builder. Each exists as a CUDA kernel and as a parallel CPU function with the same
arguments; transform.py picks one by where the arrays live, and a pass implementation
by name from PASS_KERNELS (transform.VARIANT unless told).

Launch shape of every pass kernel: grid (blocks per vector, batch), 256 threads; each
block transforms J*R <= 2^10 elements in 32 KiB of shared memory (+ 4 KiB of inner roots),
element-major (device.py: each element moves as two 16-byte vectors).
- ``gpu_pass`` ("radix2"): one radix-2 stage per trip through shared memory and barrier;
  64 registers, no local memory (ptxas, sm_90).
- ``gpu_pass_radix4`` ("radix4"): four elements per thread in registers, two stages per
  trip (device.radix4_group), products in side-by-side pairs; the first group reads
  global memory, the last may store to it; 128 registers and 16 B of spills (ptxas 13.0,
  sm_90). The passes of even radix 2^4, 2^6, 2^8 with a full block (every pass of 2^10
  and up but an odd one) run ``gpu_pass_radix4_r4/_r6/_r8``: the same code with the radix
  a compile-time constant (radix4_pass_fixed), 124-128 registers and no spills.
Per element and pass: 2 x 32 B of global traffic (+32 B of twiddles after the first pass)
against log_r / 2 butterfly products (+1 pre-twiddle): arithmetic dominates at log_r >= 6.
Kernels never allocate, synchronize or copy.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numba_cuzk import _compat  # noqa: F401,I001  (numba patched before its first use)
from numba import config, cuda, int64, prange, uint32

from numba_cuzk.kernel_cache import cpu_kernel, gpu_device, gpu_kernel
from numba_cuzk.ntt.device import (
    N, ROOT_SLOTS, SLOTS, block_load, block_stage, block_store, direct_store, load_roots, power_entry,
    radix4_group,
)
from numba_cuzk.ntt.domain import BLOCK_LOG, MAX_RADIX_LOG, Pass

THREADS = 256  # per block: 2 butterflies per thread per stage at 2^10 elements per block
# The simulator runs each thread as a Python thread; a warp's worth exercises the same
# strided loops (the kernel strides by blockDim.x) at a tenth of the cost.
LAUNCH_THREADS = 32 if config.ENABLE_CUDASIM else THREADS
# 4 blocks of 256 threads per SM: ptxas then fits the pass in 64 registers with no spills
# (72 unbounded: 3 blocks). 4 x 36 KiB of shared memory fits an H100/H200 SM's 228 KiB.
# The simulator rejects launch_bounds.
MIN_BLOCKS_PER_SM = 4
_PASS_OPTIONS = {} if config.ENABLE_CUDASIM else {"launch_bounds": (THREADS, MIN_BLOCKS_PER_SM)}
BUILD_THREADS = LAUNCH_THREADS
# Bytes: the buffers' 32-byte elements move as two 16-byte vectors (device.py). The
# simulator rejects an alignment (and has no vectors).
ALIGN = None if config.ENABLE_CUDASIM else 16


@gpu_device
def block_origin(log_j):
    """(tid, stride, b, j0) of a pass block: the thread, the threads per block (the loops'
    stride), the vector of the batch and the block's first column."""
    return int64(cuda.threadIdx.x), int64(cuda.blockDim.x), int64(cuda.blockIdx.y), int64(cuda.blockIdx.x) << log_j


@gpu_kernel(**_PASS_OPTIONS)
def gpu_pass(src, dst, tw, pre, post, roots, log_n, log_r, log_j, log_ns, mode):
    """One pass on (batch, 8, n) arrays; src and dst may be the same array only on the
    last pass (it reads and writes the same index set per block)."""
    buf = cuda.shared.array((SLOTS, N), uint32, alignment=ALIGN)
    rt = cuda.shared.array((ROOT_SLOTS, N), uint32, alignment=ALIGN)
    tid, stride, b, j0 = block_origin(log_j)
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
        buf = np.empty((SLOTS, N), dtype=np.uint32)
        block_load(buf, src, b, j0, tw, pre, 0, 1, log_n, log_r, log_j, log_ns, mode)
        for s in range(log_r):
            block_stage(buf, roots, MAX_RADIX_LOG - log_r, s, 0, 1, log_r, log_j)
        block_store(buf, dst, b, j0, post, 0, 1, log_n, log_r, log_j, log_ns, mode)


THREADS_RADIX4 = 256  # one radix-4 unit (4 elements in registers) per thread at 2^10 elements per block
LAUNCH_THREADS_RADIX4 = 32 if config.ENABLE_CUDASIM else THREADS_RADIX4
# At least 2 blocks of 256 threads per SM: ptxas may use up to 128 registers. (3 blocks,
# 80 registers, spilled and ran 5-8% slower.)
_RADIX4_OPTIONS = {} if config.ENABLE_CUDASIM else {"launch_bounds": (THREADS_RADIX4, 2)}


@gpu_device
def radix4_pass_block(buf, rt, src, dst, tw, pre, post, roots, log_n, log_r, log_j, log_ns, mode):
    """One pass of one block as radix-4 groups (device.radix4_group) at s = log_r mod 2,
    + 2, ..., log_r - 2, after one radix-2 stage (block_load, block_stage) if log_r is odd:
    ceil(log_r / 2) trips through shared memory and barriers, one fewer with a direct
    store (device.direct_store), against log_r + 1 for gpu_pass. One call site of
    radix4_group, its load and store chosen at run time, keeps the kernel small."""
    tid, stride, b, j0 = block_origin(log_j)
    direct = direct_store(log_r, log_j, log_ns)
    load_roots(rt, roots, tid, stride, log_r)
    if log_r & 1:
        block_load(buf, src, b, j0, tw, pre, tid, stride, log_n, log_r, log_j, log_ns, mode)
        cuda.syncthreads()
        block_stage(buf, rt, 0, 0, tid, stride, log_r, log_j)
    cuda.syncthreads()
    for s in range(log_r & 1, log_r - 1, 2):
        to_global = direct and s == log_r - 2
        radix4_group(buf, src, dst, b, j0, tw, pre, post, rt, 0, s, tid, stride,
                     log_n, log_r, log_j, log_ns, mode, s == 0, to_global)
        if not to_global:
            cuda.syncthreads()
    if not direct:
        block_store(buf, dst, b, j0, post, tid, stride, log_n, log_r, log_j, log_ns, mode)


@gpu_device
def radix4_pass_fixed(buf, rt, src, dst, tw, pre, post, roots, log_n, log_r, log_ns, mode):
    """radix4_pass_block for an even log_r in [4, 8] given as a literal, with
    log_j = BLOCK_LOG - log_r: the groups written out one by one, so that every shift,
    mask, trip count and branch that depends on log_r, log_j or s folds to a constant
    (4% off the 2^24 transform)."""
    log_j = BLOCK_LOG - log_r
    tid, stride, b, j0 = block_origin(log_j)
    direct = direct_store(log_r, log_j, log_ns)
    load_roots(rt, roots, tid, stride, log_r)
    cuda.syncthreads()
    radix4_group(buf, src, dst, b, j0, tw, pre, post, rt, 0, 0, tid, stride,
                 log_n, log_r, log_j, log_ns, mode, True, False)
    cuda.syncthreads()
    if log_r >= 6:
        radix4_group(buf, src, dst, b, j0, tw, pre, post, rt, 0, 2, tid, stride,
                     log_n, log_r, log_j, log_ns, mode, False, False)
        cuda.syncthreads()
    if log_r >= 8:
        radix4_group(buf, src, dst, b, j0, tw, pre, post, rt, 0, 4, tid, stride,
                     log_n, log_r, log_j, log_ns, mode, False, False)
        cuda.syncthreads()
    radix4_group(buf, src, dst, b, j0, tw, pre, post, rt, 0, log_r - 2, tid, stride,
                 log_n, log_r, log_j, log_ns, mode, False, direct)
    if not direct:
        cuda.syncthreads()
        block_store(buf, dst, b, j0, post, tid, stride, log_n, log_r, log_j, log_ns, mode)


@gpu_kernel(**_RADIX4_OPTIONS)
def gpu_pass_radix4(src, dst, tw, pre, post, roots, log_n, log_r, log_j, log_ns, mode):
    """gpu_pass's arguments and result; radix-4 steps in registers (radix4_pass_block)."""
    buf = cuda.shared.array((SLOTS, N), uint32, alignment=ALIGN)
    rt = cuda.shared.array((ROOT_SLOTS, N), uint32, alignment=ALIGN)
    radix4_pass_block(buf, rt, src, dst, tw, pre, post, roots, log_n, log_r, log_j, log_ns, mode)


@gpu_kernel(**_RADIX4_OPTIONS)
def gpu_pass_radix4_r4(src, dst, tw, pre, post, roots, log_n, log_ns, mode):
    """gpu_pass_radix4 at log_r = 4, log_j = 6 (radix4_pass_fixed)."""
    buf = cuda.shared.array((SLOTS, N), uint32, alignment=ALIGN)
    rt = cuda.shared.array((ROOT_SLOTS, N), uint32, alignment=ALIGN)
    radix4_pass_fixed(buf, rt, src, dst, tw, pre, post, roots, log_n, 4, log_ns, mode)


@gpu_kernel(**_RADIX4_OPTIONS)
def gpu_pass_radix4_r6(src, dst, tw, pre, post, roots, log_n, log_ns, mode):
    """gpu_pass_radix4 at log_r = 6, log_j = 4 (radix4_pass_fixed)."""
    buf = cuda.shared.array((SLOTS, N), uint32, alignment=ALIGN)
    rt = cuda.shared.array((ROOT_SLOTS, N), uint32, alignment=ALIGN)
    radix4_pass_fixed(buf, rt, src, dst, tw, pre, post, roots, log_n, 6, log_ns, mode)


@gpu_kernel(**_RADIX4_OPTIONS)
def gpu_pass_radix4_r8(src, dst, tw, pre, post, roots, log_n, log_ns, mode):
    """gpu_pass_radix4 at log_r = 8, log_j = 2 (radix4_pass_fixed)."""
    buf = cuda.shared.array((SLOTS, N), uint32, alignment=ALIGN)
    rt = cuda.shared.array((ROOT_SLOTS, N), uint32, alignment=ALIGN)
    radix4_pass_fixed(buf, rt, src, dst, tw, pre, post, roots, log_n, 8, log_ns, mode)


@cpu_kernel(parallel=True)
def cpu_pass_radix4(src, dst, tw, pre, post, roots, log_n, log_r, log_j, log_ns, mode):
    """radix4_pass_block on all CPU cores: one job per (vector, block of columns)."""
    blocks = 1 << (log_n - log_r - log_j)
    shift = MAX_RADIX_LOG - log_r
    direct = direct_store(log_r, log_j, log_ns)
    for job in prange(src.shape[0] * blocks):
        b = job // blocks
        j0 = (job % blocks) << log_j
        buf = np.empty((SLOTS, N), dtype=np.uint32)
        if log_r & 1:
            block_load(buf, src, b, j0, tw, pre, 0, 1, log_n, log_r, log_j, log_ns, mode)
            block_stage(buf, roots, shift, 0, 0, 1, log_r, log_j)
        for s in range(log_r & 1, log_r - 1, 2):
            radix4_group(buf, src, dst, b, j0, tw, pre, post, roots, shift, s, 0, 1,
                         log_n, log_r, log_j, log_ns, mode, s == 0, direct and s == log_r - 2)
        if not direct:
            block_store(buf, dst, b, j0, post, 0, 1, log_n, log_r, log_j, log_ns, mode)


@dataclass(frozen=True)
class PassKernel:
    """A pass implementation: its CUDA kernel and CPU twin (same arguments), the threads per
    block it is launched with, whether it wants domain.plan's even radices, and the CUDA
    kernels specialized to one radix (``fixed``: (log_r, kernel) pairs, for passes with
    log_j = BLOCK_LOG - log_r; arguments without log_r and log_j)."""

    gpu: object
    cpu: object
    threads: int
    even_radices: bool
    fixed: tuple = ()

    def gpu_for(self, p: Pass):
        """The CUDA kernel that runs pass ``p``: one of ``fixed`` where one fits, else gpu."""
        fixed = dict(self.fixed).get(p.log_r) if p.log_j == BLOCK_LOG - p.log_r else None
        return self.gpu if fixed is None else fixed

    def launch(self, p: Pass, grid: tuple, stream, tables: tuple, mode: int) -> None:
        """Queue pass ``p`` on ``stream``: tables = (src, dst, tw, pre, post, roots)."""
        kernel = self.gpu_for(p)
        if kernel is self.gpu:
            kernel[grid, self.threads, stream](*tables, p.log_n, p.log_r, p.log_j, p.log_ns, mode)
        else:
            kernel[grid, self.threads, stream](*tables, p.log_n, p.log_ns, mode)


PASS_KERNELS = {
    "radix2": PassKernel(gpu_pass, cpu_pass, LAUNCH_THREADS, False),
    "radix4": PassKernel(gpu_pass_radix4, cpu_pass_radix4, LAUNCH_THREADS_RADIX4, True,
                         ((4, gpu_pass_radix4_r4), (6, gpu_pass_radix4_r6), (8, gpu_pass_radix4_r8))),
}


@gpu_kernel
def gpu_powers(out, low, high, log_low, log_r, log_a, shift):
    i = cuda.grid(1)
    if i < out.shape[1]:
        power_entry(i, out, low, high, log_low, log_r, log_a, shift)


@cpu_kernel(symbols=False, parallel=True)
def cpu_powers(out, low, high, log_low, log_r, log_a, shift):
    for i in prange(out.shape[1]):
        power_entry(i, out, low, high, log_low, log_r, log_a, shift)
