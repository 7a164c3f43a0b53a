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

The buffer is (SLOTS, 8) uint32, element-major and 16-byte aligned: an element's 8 limbs
are 32 consecutive bytes, which NVVM moves with two 16-byte shared-memory instructions
(ld/st.shared.v4) instead of eight 4-byte ones. Element (row, column jl) lives at slot
``slot(row, jl, log_j)``: p = row J + jl with its low 2 bits XORed by all its higher 2-bit
digits, so that every access pattern of the passes (rows at a stride, bit-reversed rows)
spreads each quarter-warp over 4 different p mod 4: two-way conflicts, the fewest a
32-byte element allows a 16-byte access (tests/ntt/test_pass_kernels.py counts them).

Every function takes (tid, stride): the GPU passes threadIdx.x and blockDim.x and
synchronizes between calls; the CPU passes (0, 1). The loops over a block's items are
while loops: range() with a run-time step computes its trip count by a 64-bit division
on every call (~40 instructions per thread and call, as many as a radix-4 group's loop
control).

mode bits: PRE multiplies input i by pre[i] (coset g^i, first pass), TWIDDLE applies the
pre-twiddle (every pass but the first), POST multiplies output o by post[o & mask]
(inverse: n^-1 or g^-o n^-1, last pass), REVERSE reads input i from (n - i) mod n
(inverse, first pass: intt(A) = n^-1 ntt(A[-k]), so one forward table serves both
directions; reversing the first pass's reads keeps the last pass in place), FINAL
reduces the outputs from [0, 2p) to canonical residues (last pass).
"""

from __future__ import annotations

import numpy as np
from numba_cuzk import _compat  # noqa: F401,I001  (numba patched before its first use)
from numba import cuda, int64, uint32
from numba.core import extending as cpu_extending

from numba_cuzk.field.mont import device, fr_ops
from numba_cuzk.field.target import cuda_overload, local_u32
from numba_cuzk.ntt.domain import BLOCK_LOG, MAX_RADIX_LOG

N = fr_ops.limbs
SLOTS = 1 << BLOCK_LOG
ROOT_SLOTS = 1 << (MAX_RADIX_LOG - 1)

PRE, TWIDDLE, POST, REVERSE, FINAL = 1, 2, 4, 8, 16

# Values between a transform's stages and passes are lazy, in [0, 2p) (mont.py): products
# skip their final subtraction and the last pass (FINAL) reduces each output once. Every
# product's first operand is a canonical table entry (root, twiddle, coset factor).
_mul, _add, _sub, _reduce = fr_ops.mul_lazy, fr_ops.add_lazy, fr_ops.sub_lazy, fr_ops.reduce_once
_mul_canonical = fr_ops.mul  # the tables' entries
_M1 = np.int64(0x55555555)
_M2 = np.int64(0x33333333)
_M4 = np.int64(0x0F0F0F0F)
_M8 = np.int64(0x00FF00FF)
_M16 = np.int64(0x0000FFFF)


def bit_reverse(k, bits):
    """The low ``bits`` bits of k (bits in [1, 32]) in reverse order: one brev instruction
    in a CUDA kernel, five mask-and-shift swaps elsewhere."""
    return _swap_bits(k, bits)


@device
def _swap_bits(k, bits):
    x = int64(k)
    x = ((x >> 1) & _M1) | ((x & _M1) << 1)
    x = ((x >> 2) & _M2) | ((x & _M2) << 2)
    x = ((x >> 4) & _M4) | ((x & _M4) << 4)
    x = ((x >> 8) & _M8) | ((x & _M8) << 8)
    x = ((x >> 16) & _M16) | ((x & _M16) << 16)
    return x >> (32 - bits)


@cpu_extending.overload(bit_reverse, inline="always")
def _bit_reverse_cpu(k, bits):
    return lambda k, bits: _swap_bits(k, bits)


@cuda_overload(bit_reverse, inline="always")
def _bit_reverse_cuda(k, bits):
    return lambda k, bits: int64(cuda.brev(uint32(k))) >> (32 - bits)


@device
def slot(row, jl, log_j):
    """Where element (row, column jl) lives in the buffer: p = row J + jl with its low 2 bits
    XORed by the XOR of its 2-bit digits above them (p < 2^10: digits 1 to 4). A
    permutation of every aligned run of 4 slots."""
    p = (row << log_j) + jl
    return p ^ (((p >> 2) ^ (p >> 4) ^ (p >> 6) ^ (p >> 8)) & 3)


@device
def move(buf, p, x, to_buf):
    """x <-> buf[p] (to_buf: registers to buf). One element's 8 limbs in a row: NVVM merges
    them into two 16-byte accesses, which stores interleaved with another slot's would
    prevent (the slots might be equal)."""
    for limb in range(N):
        if to_buf:
            buf[p, limb] = x[limb]
        else:
            x[limb] = buf[p, limb]


@device
def load_roots(rt, roots, tid, stride, log_r):
    """rt[i] = w_R^i for i < R/2, from roots (powers of a 2^MAX_RADIX_LOG-th root); both
    element-major (rows of 8 limbs)."""
    shift = MAX_RADIX_LOG - log_r
    q = tid
    while q < N << (log_r - 1):
        limb = q >> (log_r - 1)
        i = q & ((1 << (log_r - 1)) - 1)
        rt[i, limb] = roots[i << shift, limb]
        q += stride


@device
def twiddle_index(r, m, log_r, log_j, log_ns):
    """Where a pass's pre-twiddle w_(Ns R)^(r m) (r < R, m < Ns) lives in its table: entries
    in (m div A, r, m mod A) order, A = 2^min(log_j, log_ns) the consecutive m a block
    reads. A block's R x A twiddles are then one run per limb, and a warp's rows at a
    stride share 128-byte lines (r-major order: runs of A words, 16 bytes at A = 4, every
    row 2 MiB from the next in the 2^24 transform's last pass)."""
    log_a = min(log_j, log_ns)
    return ((((m >> log_a) << log_r) + r) << log_a) + (m & ((1 << log_a) - 1))


@device
def twiddle_exponent(i, log_r, log_a):
    """r m for entry i of a pass's twiddle table (twiddle_index's inverse)."""
    r = (i >> log_a) & ((1 << log_r) - 1)
    m = ((i >> (log_a + log_r)) << log_a) + (i & ((1 << log_a) - 1))
    return r * m


@device
def load_element(x, y, src, b, j, r, tw, pre, log_n, log_r, log_j, log_ns, mode):
    """x = input row r of column j of a pass, times its coset factor (PRE) and
    pre-twiddle (TWIDDLE); y is scratch."""
    i = j + (r << (log_n - log_r))
    if mode & REVERSE:
        i = (-i) & ((1 << log_n) - 1)
    for limb in range(N):
        x[limb] = src[b, limb, i]
    if mode & PRE:
        for limb in range(N):
            y[limb] = pre[limb, i]
        _mul(x, y, x)
    m = j & ((1 << log_ns) - 1)
    if mode & TWIDDLE and r != 0 and m != 0:  # w^0 = 1: no product
        k = twiddle_index(r, m, log_r, log_j, log_ns)
        for limb in range(N):
            y[limb] = tw[limb, k]
        _mul(x, y, x)


@device
def store_element(x, y, dst, b, j, k, post, log_r, log_ns, mode):
    """Output k of column j of a pass to its natural-order place, times post (POST); y is scratch."""
    o = ((j >> log_ns) << (log_ns + log_r)) + (j & ((1 << log_ns) - 1)) + (k << log_ns)
    if mode & POST:
        for limb in range(N):
            y[limb] = post[limb, o & (post.shape[1] - 1)]
        _mul(x, y, x)
    if mode & FINAL:
        _reduce(x, x)
    for limb in range(N):
        dst[b, limb, o] = x[limb]


@device
def block_load(buf, src, b, j0, tw, pre, tid, stride, log_n, log_r, log_j, log_ns, mode):
    x = local_u32(N)
    y = local_u32(N)
    q = tid
    while q < 1 << (log_r + log_j):
        jl = q & ((1 << log_j) - 1)
        r = q >> log_j
        load_element(x, y, src, b, j0 + jl, r, tw, pre, log_n, log_r, log_j, log_ns, mode)
        move(buf, slot(r, jl, log_j), x, True)
        q += stride


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
    t = tid
    while t < 1 << (log_r + log_j - 1):
        jl = t & j_mask
        u = t >> log_j
        p = u & h_mask
        r0 = ((u >> log_h) << (log_h + 1)) + p
        s0 = slot(r0, jl, log_j)
        s1 = slot(r0 + (1 << log_h), jl, log_j)
        move(buf, s0, x, False)
        move(buf, s1, y, False)
        _sub(w, x, y)
        _add(x, x, y)
        if p != 0:  # w_R^0 = 1: the last stage has no products at all
            root = (p << s) << rt_shift
            for limb in range(N):
                y[limb] = rt[root, limb]
            _mul(w, y, w)
        move(buf, s0, x, True)
        move(buf, s1, w, True)
        t += stride


@device
def butterfly(a, b, t, w, rt, root):
    """Radix-2 DIF butterfly (a, b) <- (a + b, (a - b) rt[root]); root 0 (w^0 = 1) skips
    the product. t and w are scratch."""
    _sub(t, a, b)
    _add(a, a, b)
    if root != 0:
        for limb in range(N):
            w[limb] = rt[root, limb]
        _mul(b, w, t)
    else:
        for limb in range(N):
            b[limb] = t[limb]


@device
def move4(buf, x0, x1, x2, x3, r0, h2, jl, log_j, to_buf):
    """x0..x3 <-> rows r0 + {0, h2, 2 h2, 3 h2} of column jl in buf (to_buf: registers to
    buf). The slots are computed where used: kept live across the butterflies they cost
    9 registers (ptxas: 127 against 118)."""
    move(buf, slot(r0, jl, log_j), x0, to_buf)
    move(buf, slot(r0 + h2, jl, log_j), x1, to_buf)
    move(buf, slot(r0 + 2 * h2, jl, log_j), x2, to_buf)
    move(buf, slot(r0 + 3 * h2, jl, log_j), x3, to_buf)


@device
def load_root(w, rt, root):
    for limb in range(N):
        w[limb] = rt[root, limb]


@device
def butterfly_pair(a0, b0, w0, a1, b1, w1, t0, t1):
    """Two independent radix-2 DIF butterflies (a, b) <- (a + b, (a - b) w) with both
    products unconditional and side by side: one basic block, so ptxas interleaves their
    carry chains (a branch around each product, as in ``butterfly``, runs them one after
    the other). A root w^0 = 1 costs a product by one where a whole warp could have
    skipped it, which at h2 >= 2 no warp does (p varies across its threads)."""
    _sub(t0, a0, b0)
    _add(a0, a0, b0)
    _sub(t1, a1, b1)
    _add(a1, a1, b1)
    _mul(b0, w0, t0)
    _mul(b1, w1, t1)


@device
def scale_pair(x0, i0, x1, i1, table, w0, w1):
    """x0 *= table[:, i0] and x1 *= table[:, i1], side by side (as butterfly_pair)."""
    for limb in range(N):
        w0[limb] = table[limb, i0]
        w1[limb] = table[limb, i1]
    _mul(x0, w0, x0)
    _mul(x1, w1, x1)


@device
def load4(x0, x1, x2, x3, w0, w1, src, b, j, r0, h2, tw, pre, log_n, log_r, log_j, log_ns, mode):
    """Rows r0 + {0, h2, 2 h2, 3 h2} of column j as load_element reads them, their coset
    factors (PRE) and pre-twiddles (TWIDDLE) in pairs of side-by-side products. The
    pre-twiddle table holds w^0 = 1 at r = 0 or m = 0, so no product is skipped (the
    threads that could skip one share a warp with threads that cannot)."""
    mask = (1 << log_n) - 1
    i0 = j + (r0 << (log_n - log_r))
    di = h2 << (log_n - log_r)
    i1 = i0 + di
    i2 = i1 + di
    i3 = i2 + di
    if mode & REVERSE:
        i0 = (-i0) & mask
        i1 = (-i1) & mask
        i2 = (-i2) & mask
        i3 = (-i3) & mask
    for limb in range(N):
        x0[limb] = src[b, limb, i0]
        x1[limb] = src[b, limb, i1]
        x2[limb] = src[b, limb, i2]
        x3[limb] = src[b, limb, i3]
    if mode & PRE:
        scale_pair(x0, i0, x1, i1, pre, w0, w1)
        scale_pair(x2, i2, x3, i3, pre, w0, w1)
    if mode & TWIDDLE:
        k = twiddle_index(r0, j & ((1 << log_ns) - 1), log_r, log_j, log_ns)
        dk = h2 << min(log_j, log_ns)
        scale_pair(x0, k, x1, k + dk, tw, w0, w1)
        scale_pair(x2, k + 2 * dk, x3, k + 3 * dk, tw, w0, w1)


@device
def store4(x0, x1, x2, x3, w0, w1, dst, b, j, r0, h2, post, log_r, log_ns, mode):
    """Rows r0 + {0, h2, 2 h2, 3 h2} (bit-reversed output indices k) of column j to their
    natural-order places as store_element writes them, the POST factors in pairs."""
    base = ((j >> log_ns) << (log_ns + log_r)) + (j & ((1 << log_ns) - 1))
    o0 = base + (bit_reverse(r0, log_r) << log_ns)
    o1 = base + (bit_reverse(r0 + h2, log_r) << log_ns)
    o2 = base + (bit_reverse(r0 + 2 * h2, log_r) << log_ns)
    o3 = base + (bit_reverse(r0 + 3 * h2, log_r) << log_ns)
    if mode & POST:
        mask = post.shape[1] - 1
        scale_pair(x0, o0 & mask, x1, o1 & mask, post, w0, w1)
        scale_pair(x2, o2 & mask, x3, o3 & mask, post, w0, w1)
    if mode & FINAL:
        _reduce(x0, x0)
        _reduce(x1, x1)
        _reduce(x2, x2)
        _reduce(x3, x3)
    for limb in range(N):
        dst[b, limb, o0] = x0[limb]
        dst[b, limb, o1] = x1[limb]
        dst[b, limb, o2] = x2[limb]
        dst[b, limb, o3] = x3[limb]


@device
def radix4_group(buf, src, dst, b, j0, tw, pre, post, rt, rt_shift, s, tid, stride,
                 log_n, log_r, log_j, log_ns, mode, from_global, to_global):
    """Radix-2 DIF stages s and s + 1 (s + 2 <= log_r) of all J DFTs, two stages per trip
    through shared memory: unit q (column jl, u < R/4) holds rows r0 + {0, h2, h1, h1 + h2}
    (h1 = R >> (s+1), h2 = h1 / 2, r0 = r mod h2 + multiples of 2 h1) in registers: stage s
    pairs (r0, r0 + h1) and (r0 + h2, r0 + h1 + h2) with roots w_R^(p 2^s) for p = r0 mod h1
    and p + h2; stage s + 1 pairs (r0, r0 + h2) and (r0 + h1, r0 + h1 + h2), both with
    w_R^(p 2^(s+1)). Stage s + 1's bit-reversed rows are those of block_stage.

    from_global: rows come from src (as block_load: pre-twiddles, coset, reversal) instead
    of buf; to_global: results go to dst in natural order (as block_store: POST) instead of
    buf. Both at once would let a thread overwrite an element another has yet to read (the
    last pass is in place): callers never ask for both.

    Products go in side-by-side pairs (butterfly_pair; load4 and store4 for the coset,
    pre-twiddle and POST factors), except in the last group (h2 = 1), where p = 0 in every
    thread and 3 of the 4 butterflies skip their product warp-wide (``butterfly``)."""
    x0 = local_u32(N)
    x1 = local_u32(N)
    x2 = local_u32(N)
    x3 = local_u32(N)
    t0 = local_u32(N)
    t1 = local_u32(N)
    w0 = local_u32(N)
    w1 = local_u32(N)
    log_h2 = log_r - s - 2
    h2 = 1 << log_h2
    q = tid
    while q < 1 << (log_r + log_j - 2):
        jl = q & ((1 << log_j) - 1)
        u = q >> log_j
        p = u & (h2 - 1)
        r0 = ((u >> log_h2) << (log_h2 + 2)) + p
        if from_global:
            load4(x0, x1, x2, x3, w0, w1, src, b, j0 + jl, r0, h2, tw, pre, log_n, log_r, log_j, log_ns, mode)
        else:
            move4(buf, x0, x1, x2, x3, r0, h2, jl, log_j, False)
        if h2 == 1:
            butterfly(x0, x2, t0, w0, rt, 0)
            butterfly(x1, x3, t0, w0, rt, (h2 << s) << rt_shift)
            butterfly(x0, x1, t0, w0, rt, 0)
            butterfly(x2, x3, t0, w0, rt, 0)
        else:
            load_root(w0, rt, (p << s) << rt_shift)
            load_root(w1, rt, ((p + h2) << s) << rt_shift)
            butterfly_pair(x0, x2, w0, x1, x3, w1, t0, t1)
            load_root(w0, rt, (p << (s + 1)) << rt_shift)  # stage s + 1: one root for both
            butterfly_pair(x0, x1, w0, x2, x3, w0, t0, t1)
        if to_global:
            store4(x0, x1, x2, x3, w0, w1, dst, b, j0 + jl, r0, h2, post, log_r, log_ns, mode)
        else:
            move4(buf, x0, x1, x2, x3, r0, h2, jl, log_j, True)
        q += stride


@device
def direct_store(log_r, log_j, log_ns):
    """Whether a radix-4 pass's last group (s = log_r - 2) stores straight to dst: when its
    runs of J consecutive outputs are as coalesced as block_store's (Ns >= J), and it is
    not also the group that reads src (log_r >= 3)."""
    return log_ns >= log_j and log_r >= 3


@device
def block_store(buf, dst, b, j0, post, tid, stride, log_n, log_r, log_j, log_ns, mode):
    x = local_u32(N)
    y = local_u32(N)
    # Consecutive q -> consecutive output addresses: a = min(J, Ns) columns share a run.
    log_a = min(log_j, log_ns)
    run_mask = (1 << (log_a + log_r)) - 1
    a_mask = (1 << log_a) - 1
    q = tid
    while q < 1 << (log_r + log_j):
        rem = q & run_mask
        k = rem >> log_a
        jl = ((q >> (log_a + log_r)) << log_a) + (rem & a_mask)
        move(buf, slot(bit_reverse(k, log_r), jl, log_j), x, False)
        store_element(x, y, dst, b, j0 + jl, k, post, log_r, log_ns, mode)
        q += stride


@device
def power_entry(i, out, low, high, log_low, log_r, log_a, shift):
    """out[:, i] = base^e from split tables (domain.split_powers): e = i if log_r = 0
    (coset tables), else e = (r m) << shift for entry i = twiddle_index(r, m) of a pass
    twiddle table with 2^log_a columns per block."""
    x = local_u32(N)
    y = local_u32(N)
    e = int64(i)
    if log_r > 0:
        e = twiddle_exponent(e, log_r, log_a) << shift
    for limb in range(N):
        x[limb] = low[limb, e & ((1 << log_low) - 1)]
        y[limb] = high[limb, e >> log_low]
    _mul_canonical(x, x, y)
    for limb in range(N):
        out[limb, i] = x[limb]
