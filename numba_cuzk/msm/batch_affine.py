"""The CPU backend's bucket pass in affine coordinates with batched inversions.

Why: an XYZZ mixed addition costs 8M + 2S. An affine addition is
lambda = (y2 - y1) / (x2 - x1), x3 = lambda^2 - x1 - x2, y3 = lambda (x1 - x3) - y1:
2M + 1S and one inversion, and Montgomery's trick shares one inversion among a batch
of independent additions for 3M each: 5M + 1S per addition. Additions of one batch must not depend on each other, so each bucket's
points are first sorted together (counting sort by bucket) and then summed as a tree:
each round adds pairs (0, 1), (2, 3), ... of every bucket at once, halving every
bucket's count, until each bucket holds one point (log2 of the largest bucket rounds;
a giant bucket of equal digits is no special case).

Special pairs take no part in the batch's product (their denominator reads as 1): an
identity (0, 0) on either side (identity bases, or a pair that cancelled), equal x
(P + P doubles, with its own inversion; P + (-P) gives the identity). Points are rows
of 2L contiguous limbs (x, y), Montgomery form.

Templates (``kernel_cache.specialize`` binds, per curve: L, A = 2L, the field functions
f_mul, f_sqr, f_add, f_sub, f_dbl, f_inv (curve/target.field_call), f_copy, f_set_one,
f_is_zero, f_eq, X = 4L and the point functions aff_neg, aff_is_identity, aff_set_identity,
xyzz_set_identity, xyzz_is_identity, add_mixed, add, dbl), declared below as placeholders.
Each template is specialized once per curve as ``<name>_g1_cpu`` and ``<name>_g2_cpu``
(msm/cpu.py's _kernels): bucket_shares_g1_cpu is the CPU kernel, the others its helpers,
bound under their own names so that the templates' calls reach the curve's instance.
"""

from __future__ import annotations

import numpy as np
from numba_cuzk import _compat  # noqa: F401,I001  (numba patched before its first use)
from numba import prange

from numba_cuzk.field.target import local_u32

# Bound per curve by kernel_cache.specialize (msm/cpu.py's _kernels); these placeholders
# are never compiled.
L = A = X = 0  # uint32 limbs of one coordinate (12 for G1, 24 for G2), an affine point (2L), an XYZZ point (4L)
f_mul = f_sqr = f_add = f_sub = f_dbl = f_inv = None  # field operations (curve/target.field_call)
f_copy = f_set_one = f_is_zero = f_eq = None  # field helpers (field_ops(curve))
aff_neg = aff_is_identity = aff_set_identity = None  # affine point functions (PointOps)
xyzz_set_identity = xyzz_is_identity = add_mixed = add = dbl = None  # XYZZ point functions (PointOps)


def pair_denominator(out, points, s):
    """Template: out = x_q - x_p for the pair p, q of rows s, s + 1 of ``points``, or 1 for a
    special pair (see the module docstring); returns whether the pair is special."""
    f_sub(out, points[s + 1, :L], points[s, :L])
    # the identity (0, 0) tested in one pass over both rows: aff_is_identity on the rows'
    # halves (four views) made a first round's pass 1.8x as long (2^14 G1, c = 12: 9.5 ms
    # against 3.7 on two threads; the bucket pass 72 -> 64 ms)
    p_bits = q_bits = np.uint32(0)
    for i in range(A):
        p_bits |= points[s, i]
        q_bits |= points[s + 1, i]
    special = f_is_zero(out) or p_bits == 0 or q_bits == 0
    if special:
        f_set_one(out)
    return special


def pair_sum(out, p, q, inverse):
    """Template: out = p + q (affine; out must not alias p or q) for an ordinary pair,
    ``inverse`` = 1/(x_q - x_p): lambda = (y_q - y_p) * inverse, 2M + 1S."""
    lam = local_u32(L)
    t = local_u32(L)
    f_sub(lam, q[L:A], p[L:A])
    f_mul(lam, lam, inverse)
    f_sqr(t, lam)
    f_sub(t, t, p[:L])
    f_sub(out[:L], t, q[:L])  # x3
    f_sub(t, p[:L], out[:L])
    f_mul(t, lam, t)
    f_sub(out[L:A], t, p[L:A])  # y3


def special_sum(out, p, q):
    """Template: out = p + q for a special pair: an identity on either side, P + (-P), or
    P + P (lambda = 3 x^2 / (2 y) with its own inversion; y != 0 in both groups)."""
    if aff_is_identity(p) or aff_is_identity(q):
        src = q if aff_is_identity(p) else p
        f_copy(out[:L], src[:L])
        f_copy(out[L:A], src[L:A])
        return
    if not f_eq(p[L:A], q[L:A]):
        aff_set_identity(out)
        return
    t = local_u32(L)
    f_dbl(t, p[L:A])
    f_inv(t, t)
    lam = local_u32(L)
    f_sqr(lam, p[:L])
    f_mul(lam, lam, t)
    f_dbl(t, lam)
    f_add(t, t, lam)  # 3 x^2 / (2 y)
    # pair_sum's slope is (y_q - y_p) * inverse: with q = (x, y + 1) and inverse = 3x^2/(2y)
    # it is the tangent's, and its x3, y3 are the doubling's
    point = local_u32(A)
    f_copy(point[:L], q[:L])
    f_set_one(lam)
    f_add(point[L:A], p[L:A], lam)
    pair_sum(out, p, point, t)


def sort_by_bucket(bases, digits, w, lo, hi):
    """Template: (points, start): the bases ((n, 2L) rows) of window w's digits in buckets
    lo..hi-1 (bucket |d| - 1, negated for d < 0) as (m, 2L) rows, bucket b's at rows
    start[b] .. start[b + 1] - 1."""
    n = digits.shape[1]
    width = hi - lo
    start = np.zeros(width + 1, dtype=np.int64)
    for i in range(n):
        d = digits[w, i]
        b = abs(d) - 1 - lo
        if d != 0 and 0 <= b < width:
            start[b + 1] += 1
    for b in range(width):
        start[b + 1] += start[b]
    points = np.empty((max(start[width], 1), A), dtype=np.uint32)
    fill = start[:width].copy()
    for i in range(n):
        d = digits[w, i]
        b = abs(d) - 1 - lo
        if d != 0 and 0 <= b < width:
            row = points[fill[b]]
            for j in range(A):
                row[j] = bases[i, j]
            if d < 0:
                aff_neg(row, row)
            fill[b] += 1
    return points, start


def sum_buckets(points, start, count, inverses, denominators, specials):
    """Template: one round: every bucket's pairs (0, 1), (2, 3), ... added at once with one
    inversion; bucket b's count[b] points (at rows start[b]..) become ceil(count[b] / 2).
    Returns the number of pairs added (0: every bucket holds at most one point)."""
    width = count.shape[0]
    acc = local_u32(L)
    f_set_one(acc)
    k = 0
    for b in range(width):  # inverses[k] = product of the denominators before pair k
        for j in range(count[b] // 2):
            s = start[b] + 2 * j
            f_copy(inverses[k], acc)
            specials[k] = pair_denominator(denominators[k], points, s)
            f_mul(acc, acc, denominators[k])
            k += 1
    if k == 0:
        return 0
    f_inv(acc, acc)
    pairs = k
    for k in range(pairs - 1, -1, -1):  # inverses[k] = 1 / denominator k
        f_mul(inverses[k], inverses[k], acc)
        f_mul(acc, acc, denominators[k])
    out = local_u32(A)
    k = 0
    for b in range(width):  # pair j's sum to row j: rows 2j, 2j+1 >= j are still unread
        s = start[b]
        for j in range(count[b] // 2):
            if specials[k]:
                special_sum(out, points[s + 2 * j], points[s + 2 * j + 1])
            else:
                pair_sum(out, points[s + 2 * j], points[s + 2 * j + 1], inverses[k])
            f_copy(points[s + j][:L], out[:L])
            f_copy(points[s + j][L:A], out[L:A])
            k += 1
        if count[b] & 1:
            last = points[s + count[b] - 1]
            f_copy(points[s + count[b] // 2][:L], last[:L])
            f_copy(points[s + count[b] // 2][L:A], last[L:A])
        count[b] = (count[b] + 1) // 2
    return pairs


def bucket_shares(bases, digits, c, slices, shares):
    """Template of bucket_shares_g1_cpu and bucket_shares_g2_cpu (msm/cpu.py): bases (n, 2L)
    rows; shares[w * slices + s] (4L,) XYZZ <- bucket slice s's share of window w's sum: for
    buckets lo..hi-1, total = sum (b - lo + 1) B_b by running sums (runs of empty buckets as
    one multiple), plus lo * sum B_b."""
    buckets = 1 << (c - 1)
    width = -(-buckets // slices)
    for task in prange(shares.shape[0]):
        w, lo = task // slices, (task % slices) * width
        hi = min(buckets, lo + width)
        points, start = sort_by_bucket(bases, digits, w, lo, hi)
        count = start[1:] - start[:-1]
        inverses = np.empty((max(points.shape[0] // 2, 1), L), dtype=np.uint32)
        denominators = np.empty_like(inverses)
        specials = np.empty(inverses.shape[0], dtype=np.bool_)
        while sum_buckets(points, start, count, inverses, denominators, specials) > 0:
            pass
        acc = local_u32(X)
        total = local_u32(X)
        scratch = local_u32(X)
        xyzz_set_identity(acc)
        xyzz_set_identity(total)
        gap = 0  # buckets since acc last changed, each owing total += acc
        for b in range(hi - lo - 1, -1, -1):
            if count[b] == 1:
                add_multiple(total, acc, gap, scratch)
                add_mixed(acc, acc, points[start[b]])
                gap = 0
            gap += 1
        add_multiple(total, acc, gap, scratch)
        add_multiple(total, acc, lo, scratch)
        for j in range(X):
            shares[task, j] = total[j]


def add_multiple(total, p, k, scratch):
    """Template: total += k p (XYZZ, k >= 0; double and add in scratch, so a run of k
    empty buckets costs ~2 log2(k) additions instead of k)."""
    if k == 0 or xyzz_is_identity(p):
        return
    if k == 1:
        add(total, total, p)
        return
    top = 0
    while k >> (top + 1):
        top += 1
    for j in range(X):
        scratch[j] = p[j]
    for bit in range(top - 1, -1, -1):
        dbl(scratch, scratch)
        if (k >> bit) & 1:
            add(scratch, scratch, p)
    add(total, total, scratch)
