"""Per-block NTT code shared by the CUDA kernel and the CPU backend (kernels.py).

One radix-R Stockham pass (R = 2^log_r, Ns = 2^log_ns stages already done, n = 2^log_n)
computes, for every column j < n/R, with m = j mod Ns and w_X a primitive X-th root:

    v[r] = x[j + r n/R] * w_(Ns R)^(r m)                       pre-twiddle, r < R
    V[k] = sum_r v[r] w_R^(r k)                                 R-point DFT, k < R
    y[(j div Ns) Ns R + m + k Ns] = V[k]

(Stockham autosort: natural order in and out, no bit-reversal pass; see Govindaraju et
al., "High performance discrete Fourier transforms on graphics processors", SC 2008.)
A block owns J = 2^log_j consecutive columns: ``block_load`` gathers their J*R inputs
(rows of J consecutive words per limb: coalesced) into a buffer, ``block_stage`` runs
one radix-2 DIF stage of all J DFTs in it (log_r stages, bit-reversed result), and
``block_store`` writes the outputs back in natural order (runs of >= J consecutive words).

The buffer is (8, SLOTS) uint32: element (row, column jl) at slot p + p // 32 with
p = row*J + jl. The pad word every 32 spreads the bit-reversed rows that ``block_store``
reads across all 32 shared-memory banks (without it 8 rows hit the same bank).

Every function takes (tid, stride): the GPU passes threadIdx.x and blockDim.x and
synchronizes between calls; the CPU passes (0, 1).

mode bits: PRE multiplies input i by pre[i] (coset g^i, first pass), TWIDDLE applies the
pre-twiddle (every pass but the first), POST multiplies output o by post[o & mask]
(inverse: n^-1 or g^-o n^-1, last pass), REVERSE reads input i from (n - i) mod n
(inverse, first pass: intt(A) = n^-1 ntt(A[-k]), so one forward table serves both
directions; reversing the first pass's reads keeps the last pass in place).
"""

from __future__ import annotations

import numpy as np
from numba import int64

from numba_cuzk.field.mont import device, fr_ops
from numba_cuzk.field.target import local_u32
from numba_cuzk.ntt.domain import BLOCK_LOG, MAX_RADIX_LOG

N = fr_ops.limbs
SLOTS = (1 << BLOCK_LOG) + (1 << BLOCK_LOG) // 32
ROOT_SLOTS = 1 << (MAX_RADIX_LOG - 1)

PRE, TWIDDLE, POST, REVERSE = 1, 2, 4, 8

_mul, _add, _sub = fr_ops.mul, fr_ops.add, fr_ops.sub
_M1 = np.int64(0x55555555)
_M2 = np.int64(0x33333333)
_M4 = np.int64(0x0F0F0F0F)
_M8 = np.int64(0x00FF00FF)
_M16 = np.int64(0x0000FFFF)


@device
def bit_reverse(k, bits):
    """The low ``bits`` bits of k (bits in [1, 32]) in reverse order."""
    x = int64(k)
    x = ((x >> 1) & _M1) | ((x & _M1) << 1)
    x = ((x >> 2) & _M2) | ((x & _M2) << 2)
    x = ((x >> 4) & _M4) | ((x & _M4) << 4)
    x = ((x >> 8) & _M8) | ((x & _M8) << 8)
    x = ((x >> 16) & _M16) | ((x & _M16) << 16)
    return x >> (32 - bits)


@device
def slot(row, jl, log_j):
    p = (row << log_j) + jl
    return p + (p >> 5)


@device
def load_roots(rt, roots, tid, stride, log_r):
    """rt[:, i] = w_R^i for i < R/2, from roots (powers of a 2^MAX_RADIX_LOG-th root)."""
    shift = MAX_RADIX_LOG - log_r
    for q in range(tid, N << (log_r - 1), stride):
        limb = q >> (log_r - 1)
        i = q & ((1 << (log_r - 1)) - 1)
        rt[limb, i] = roots[limb, i << shift]


@device
def block_load(buf, src, b, j0, tw, pre, tid, stride, log_n, log_r, log_j, log_ns, mode):
    x = local_u32(N)
    y = local_u32(N)
    log_cols = log_n - log_r
    ns_mask = (1 << log_ns) - 1
    n_mask = (1 << log_n) - 1
    for q in range(tid, 1 << (log_r + log_j), stride):
        jl = q & ((1 << log_j) - 1)
        r = q >> log_j
        j = j0 + jl
        i = j + (r << log_cols)
        if mode & REVERSE:
            i = (-i) & n_mask
        for limb in range(N):
            x[limb] = src[b, limb, i]
        if mode & PRE:
            for limb in range(N):
                y[limb] = pre[limb, i]
            _mul(x, x, y)
        if mode & TWIDDLE:
            k = (r << log_ns) + (j & ns_mask)  # w_(Ns R)^(r m) = tw[r Ns + m]
            if r != 0 and (j & ns_mask) != 0:  # w^0 = 1: skip the product
                for limb in range(N):
                    y[limb] = tw[limb, k]
                _mul(x, x, y)
        p = slot(r, jl, log_j)
        for limb in range(N):
            buf[limb, p] = x[limb]


@device
def block_stage(buf, rt, rt_shift, s, tid, stride, log_r, log_j):
    """Radix-2 DIF stage s < log_r on all columns: pairs rows (r0, r0 + h), h = R >> (s+1);
    (a, b) <- (a + b, (a - b) w_R^(p 2^s)) with p = r0 mod h."""
    x = local_u32(N)
    y = local_u32(N)
    w = local_u32(N)
    log_h = log_r - 1 - s
    h_mask = (1 << log_h) - 1
    j_mask = (1 << log_j) - 1
    for t in range(tid, 1 << (log_r + log_j - 1), stride):
        jl = t & j_mask
        u = t >> log_j
        p = u & h_mask
        r0 = ((u >> log_h) << (log_h + 1)) + p
        s0 = slot(r0, jl, log_j)
        s1 = slot(r0 + (1 << log_h), jl, log_j)
        for limb in range(N):
            x[limb] = buf[limb, s0]
            y[limb] = buf[limb, s1]
        _sub(w, x, y)
        _add(x, x, y)
        if p != 0:  # w_R^0 = 1: the last stage has no products at all
            root = (p << s) << rt_shift
            for limb in range(N):
                y[limb] = rt[limb, root]
            _mul(w, w, y)
        for limb in range(N):
            buf[limb, s0] = x[limb]
            buf[limb, s1] = w[limb]


@device
def block_store(buf, dst, b, j0, post, tid, stride, log_n, log_r, log_j, log_ns, mode):
    x = local_u32(N)
    y = local_u32(N)
    # Consecutive q -> consecutive output addresses: a = min(J, Ns) columns share a run.
    log_a = min(log_j, log_ns)
    run_mask = (1 << (log_a + log_r)) - 1
    a_mask = (1 << log_a) - 1
    ns_mask = (1 << log_ns) - 1
    post_mask = post.shape[1] - 1
    for q in range(tid, 1 << (log_r + log_j), stride):
        rem = q & run_mask
        k = rem >> log_a
        jl = ((q >> (log_a + log_r)) << log_a) + (rem & a_mask)
        j = j0 + jl
        o = ((j >> log_ns) << (log_ns + log_r)) + (j & ns_mask) + (k << log_ns)
        p = slot(bit_reverse(k, log_r), jl, log_j)
        for limb in range(N):
            x[limb] = buf[limb, p]
        if mode & POST:
            for limb in range(N):
                y[limb] = post[limb, o & post_mask]
            _mul(x, x, y)
        for limb in range(N):
            dst[b, limb, o] = x[limb]


@device
def power_entry(i, out, low, high, log_low, log_ns, shift):
    """out[:, i] = base^e from split tables (domain.split_powers): e = i if log_ns < 0
    (coset tables), else e = (r m) << shift with i = r Ns + m (pass twiddle tables)."""
    x = local_u32(N)
    y = local_u32(N)
    e = int64(i)
    if log_ns >= 0:
        e = ((e >> log_ns) * (e & ((1 << log_ns) - 1))) << shift
    for limb in range(N):
        x[limb] = low[limb, e & ((1 << log_low) - 1)]
        y[limb] = high[limb, e >> log_low]
    _mul(x, x, y)
    for limb in range(N):
        out[limb, i] = x[limb]
