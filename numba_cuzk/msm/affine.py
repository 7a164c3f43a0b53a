"""Batch-affine bucket accumulation on the GPU (G1): the accumulate stage of plan.affine.

Why. The plain accumulation (kernels.accumulate) adds each run's bases into XYZZ partial
sums with madd-2008-s, 8M + 2S = 10 Fq products an addition, already at ~75-80% of the
products' peak (bench/NOTES.md): at 2^27 that is ~735 of the H MSM's ~1135 ms, and only
fewer products per addition can cut it. An affine addition is lambda = (y2 - y1) / (x2 -
x1), x3 = lambda^2 - x1 - x2, y3 = lambda (x1 - x3) - y1: 2M + 1S and an inversion, and
Montgomery's trick shares one inversion among many independent additions for 3M each.

How. The runs are the plain accumulation's (plan.chunk consecutive entries of a window in
bucket order; a piece is a bucket's part of one run), and each run's pieces are summed as
trees: round r (stride h = 2^(r-1)) adds the pairs (j, j + h), j = 0, 2h, 4h, ... of every
piece at once, in place, in a scratch slot per entry (an affine point, 2L words), until
each piece's sum is in its first slot: ceil(log2 chunk) rounds (a giant bucket is cut
into runs, as in the plain path, and combine adds their partial sums). One round's
additions are independent across all the runs of a wave (plan.affine: 2^affine entry
slots), so a round is three launches:

    affine_denominators  per run: each pair's denominator d (x2 - x1; 2 y1 for a doubling;
                         1 where the sum needs no division: a side is the identity, or
                         P + (-P)), and before it the product of the run's earlier d (the
                         pair's prefix), stored in a slot no round reads again with the
                         pair's position and a link to the run's previous pair; the run's
                         product of all its d in ``totals``. Round 1 reads the bases through
                         the entries (signed), later rounds the scratch slots.
    invert_groups        per group of INVERT_GROUP runs: the inverse of each run's product,
                         with one Fermat inversion (Montgomery's trick over the group)
    affine_sums          per run, its pairs in reverse along the links: 1/d = inverse *
                         prefix, inverse *= d, and the pair's sum into its left slot

Products per addition: 1 (the prefix) + 2 (1/d, inverse *= d) + 3 (lambda, lambda^2,
lambda (x1 - x3)) = 6, a doubling 7, plus the group's share of one inversion (~575
products for INVERT_GROUP runs' pairs) and its 3 per run: ~6.5 against madd-2008-s's 10.
Memory per addition: ~480 bytes (both points read twice, the prefix written and read, the
sum written) where the plain kernel reads one base (96 bytes). The inversion is one chain
of ~575 dependent products: ~0.3 ms of latency per round, the floor of each round.

After the last round ``affine_partials`` writes every piece's sum as an XYZZ partial sum
where kernels.accumulate writes it (points[:, k]), so combine, reduce and levels run as in
the plain path; the 1s' sums (the 0/1 path) are the plain kernel's, launched with a window
of no entries (pippenger._launch).

Special pairs need no inversion of their own: a side is the identity (identity bases, or a
pair that cancelled earlier: affine (0, 0)), P + (-P) (the identity), P + P (the tangent:
numerator 3 x^2, denominator 2 y, in the same batch; y = 0 cannot occur in G1, and would
give the identity rather than a zero denominator that spoils the batch).

Templates (``kernel_cache.specialize`` binds, per curve: L, A = 2L, X = 4L, the field
functions f_* and the point functions aff_is_identity, aff_set_identity, xyzz_from_affine,
store, and the helpers pair_denominator, pair_sum, load_point, bound under their own
names so that the kernels' calls reach the curve's instance), declared below as
placeholders. Instances: affine_denominators_g1, invert_groups_g1, affine_sums_g1,
affine_partials_g1 (G1 only: a G2 point's registers would not fit one thread). Each has
a Python reference on integers below it (``*_reference``), which the tests compare.
"""

from __future__ import annotations

import numpy as np
from numba_cuzk import _compat  # noqa: F401,I001  (numba patched before its first use)
from numba import config, cuda, int64, uint32

from numba_cuzk.curve.params import G1, CurveParams
from numba_cuzk.curve.point_field import single_lane
from numba_cuzk.curve.points import point_ops
from numba_cuzk.field.mont import device
from numba_cuzk.field.target import local_u32
from numba_cuzk.kernel_cache import gpu_kernel, specialize
from numba_cuzk.msm import kernels as K
from numba_cuzk.msm.kernels import INDEX_MASK, LAST_BIT, SIGN_BIT, run_partial

SIMULATOR = bool(config.ENABLE_CUDASIM)
# Runs per inversion: a round's inversions run in parallel (G / INVERT_GROUP threads, G runs
# in the wave: 8192 at 2^18 runs), so their latency (one chain of ~575 products) sets the
# round's floor and their throughput hardly counts; 32 runs share one (~1.5 K pairs in the
# first round of chunk-256 runs). The simulator inverts once per round (~1 s a Fermat
# inversion there).
INVERT_GROUP = 1 << 30 if SIMULATOR else 32
# the sum of a pair (pair_denominator's kind): the chord's or the tangent's (a division),
# or no division: the first point, the second, the identity
CHORD, TANGENT, FIRST, SECOND, NEITHER = 0, 1, 2, 3, 4

# Bound per curve by kernel_cache.specialize (_kernels); these placeholders are never compiled.
L = A = X = 0  # uint32 limbs of a coordinate (12 for G1), an affine point (2L), an XYZZ point (4L)
f_mul = f_sqr = f_add = f_sub = f_dbl = f_neg = f_inv = None  # field operations (point_field.single_lane)
f_copy = f_set_one = f_is_zero = f_eq = None
aff_is_identity = aff_set_identity = xyzz_from_affine = store = None  # point functions (PointOps)
pair_denominator = pair_sum = load_point = _copy_unpaired = None  # the helper templates below, bound per curve


@device
def wave_runs_left(capacity, offsets, runs, first):
    """Runs in the wave from run ``first`` on: its ``capacity``, or fewer at the last."""
    return min(capacity, offsets.shape[0] * runs - first)


@device
def run_span(offsets, runs, chunk, first, i):
    """Run i of the wave from run ``first`` (all windows' runs, ``runs`` a window): (window
    w, its run r, entries [start, stop) of window w, start >= stop for a run past the
    window's entries; row0: the scratch row of entry p is row0 + p)."""
    q = first + i
    w = q // runs
    r = q - w * runs
    start = r * chunk
    stop = min(start + chunk, int64(offsets[w, offsets.shape[1] - 1]))
    return w, r, start, stop, i * chunk - start


@device
def next_pair(entries, w, pos, stop, h):
    """(left, after): the first pair (left, left + h) of a round of stride h whose left is
    at or after ``pos``, a candidate left (a piece's start, or a previous pair's left +
    2h), within entries [pos, stop) of window w; ``after``: the next candidate. left = -1
    when there is none. A piece ends at an entry with LAST_BIT or at ``stop``."""
    while pos + h < stop:
        end = int64(-1)  # the first piece end in [pos, pos + 2h)
        for p in range(pos, min(pos + 2 * h, stop)):
            if entries[w, p] & LAST_BIT:
                end = p
                break
        if end < 0:
            return pos, pos + 2 * h  # the piece goes on
        if end >= pos + h:
            return pos, end + 1  # the piece ends after the partner
        pos = end + 1  # pos has no partner: the next piece
    return int64(-1), stop


def round_pairs_reference(ends: list[bool], h: int) -> list[tuple[int, int]]:
    """Reference of next_pair's walk: the pairs (left, left + h) of one run's round of
    stride h in order, as positions in the run; ends[p]: entry p has LAST_BIT (the run's
    last entry ends a piece too)."""
    pairs, piece = [], 0
    for p in range(len(ends)):
        if ends[p] or p == len(ends) - 1:
            pairs += [(piece + j, piece + j + h) for j in range(0, p + 1 - piece - h, 2 * h)]
            piece = p + 1
    return pairs


def load_point_template(out, bases, entries, scratch, w, p, column, from_bases):
    """Template of load_point: out (2L) <- the point at entry position p of window w: its
    base (negated for a negative digit) when ``from_bases`` (round 1), else scratch[column]."""
    if from_bases:
        e = entries[w, p]
        base = bases[:, int64(e & INDEX_MASK)]
        f_copy(out[:L], base[:L])
        if e & SIGN_BIT:
            f_neg(out[L:A], base[L:A])
        else:
            f_copy(out[L:A], base[L:A])
    else:
        for j in range(A):
            out[j] = scratch[column, j]


def pair_denominator_template(d, p1, p2, negate1, negate2):
    """Template of pair_denominator: the kind of p1' + p2' and d, its denominator: x2 - x1
    (CHORD), 2 y1' (TANGENT), 1 (FIRST, SECOND, NEITHER); pk' is the affine pk (the identity
    (0, 0)), negated where ``negatek``. p1, p2 may be global memory: y is read only where
    the identity or equal x needs it (round 1's bases: a third of the sectors not read)."""
    if aff_is_identity(p2):
        f_set_one(d)
        return FIRST
    if aff_is_identity(p1):
        f_set_one(d)
        return SECOND
    if f_eq(p1[:L], p2[:L]):
        if negate1 == negate2:
            same = f_eq(p1[L:A], p2[L:A])
        else:  # y1 = -y2
            f_add(d, p1[L:A], p2[L:A])
            same = f_is_zero(d)
        if same and not f_is_zero(p1[L:A]):
            f_dbl(d, p1[L:A])
            if negate1:
                f_neg(d, d)
            return TANGENT
        f_set_one(d)
        return NEITHER
    f_sub(d, p2[:L], p1[:L])
    return CHORD


def pair_denominator_reference(F, p1, p2) -> tuple[int, int]:
    """Reference of pair_denominator on the reference points p1', p2' (canonical ints, None
    the identity; negated where the kernel is told to): (kind, d)."""
    if p2 is None:
        return FIRST, 1
    if p1 is None:
        return SECOND, 1
    if p1[0] == p2[0]:
        if p1[1] == p2[1] and p1[1] != 0:
            return TANGENT, F.double(p1[1])
        return NEITHER, 1
    return CHORD, F.sub(p2[0], p1[0])


def pair_sum_template(out, p1, p2, kind, inverse):
    """Template of pair_sum: out (2L, may be global memory; no alias of p1, p2) <- p1 + p2
    of ``kind``, ``inverse`` = 1 / its denominator: lambda = (y2 - y1) / (x2 - x1) or
    3 x1^2 / (2 y1), x3 = lambda^2 - x1 - x2, y3 = lambda (x1 - x3) - y1 (3 products, the
    tangent 4)."""
    if kind == FIRST:
        for j in range(A):
            out[j] = p1[j]
        return
    if kind == SECOND:
        for j in range(A):
            out[j] = p2[j]
        return
    if kind == NEITHER:
        aff_set_identity(out)
        return
    lam = local_u32(L)
    t = local_u32(L)
    if kind == TANGENT:
        f_sqr(t, p1[:L])
        f_dbl(lam, t)
        f_add(lam, lam, t)
    else:
        f_sub(lam, p2[L:A], p1[L:A])
    f_mul(lam, lam, inverse)
    f_sqr(t, lam)
    f_sub(t, t, p1[:L])
    f_sub(t, t, p2[:L])  # x3
    f_copy(out[:L], t)
    f_sub(t, p1[:L], t)
    f_mul(t, lam, t)
    f_sub(out[L:A], t, p1[L:A])  # y3


def denominators_reference(F, points: list, pairs: list) -> tuple[list[int], int]:
    """Reference of affine_denominators for one run: (each pair's prefix, the run's product)
    for its ``points`` by position in the run and its round's ``pairs``."""
    prefixes, product = [], 1
    for left, right in pairs:
        prefixes.append(product)
        product = F.mul(product, pair_denominator_reference(F, points[left], points[right])[1])
    return prefixes, product


def affine_denominators(bases, entries, offsets, runs, chunk, first, h, scratch, totals, links):
    """Template of affine_denominators_g1: round of stride h over runs first .. first + G - 1
    (G = totals.shape[1], the wave; fewer past the last run), run first + i in scratch rows
    i chunk .. (i + 1) chunk - 1, row i chunk + (p - start) for its entry p.

    For each pair (pos, pos + h) of run first + i, in order (next_pair): its kind and d
    (pair_denominator), its prefix (the product of the run's earlier d) into the x words
    of its prefix row, pos - start and the previous pair's row + 1 (0: none) into its y
    words 0 and 1 (the prefix row: the left's in round 1, whose point is still a base;
    the left's + h / 2 after, which the previous round consumed); totals[:, i] <- the
    run's product, links[i] <- its last pair's row + 1 (0: none). Round 1 also copies each
    piece's unpaired last point (an odd piece of 3 or more) from the bases into its row."""
    product = local_u32(L)
    d = local_u32(L)
    point = local_u32(A)
    count = wave_runs_left(totals.shape[1], offsets, runs, first)
    from_bases = h == 1
    for i in range(cuda.grid(1), count, cuda.gridsize(1)):
        w, r, start, stop, row0 = run_span(offsets, runs, chunk, first, i)
        f_set_one(product)
        link = int64(0)
        pos = start
        while True:
            left, pos = next_pair(entries, w, pos, stop, h)
            if left < 0:
                break
            if from_bases:
                e1, e2 = entries[w, left], entries[w, left + h]
                kind = pair_denominator(d, bases[:, int64(e1 & INDEX_MASK)], bases[:, int64(e2 & INDEX_MASK)],
                                        (e1 & SIGN_BIT) != 0, (e2 & SIGN_BIT) != 0)
            else:
                kind = pair_denominator(d, scratch[row0 + left], scratch[row0 + left + h], False, False)
            row = row0 + left + h // 2
            for j in range(L):
                scratch[row, j] = product[j]
            scratch[row, L] = uint32(left - start)
            scratch[row, L + 1] = uint32(link)
            link = row + 1
            if kind <= TANGENT:
                f_mul(product, product, d)
        for j in range(L):
            totals[j, i] = product[j]
        links[i] = link
        if from_bases:
            _copy_unpaired(bases, entries, scratch, w, start, stop, row0, point)


@device
def _unpaired_end(entries, w, p, piece, stop):
    """Whether entry p ends its piece (from ``piece`` on) unpaired in round 1: the piece's
    last entry at an even offset >= 2 (a lone entry's piece needs no slot: affine_partials
    reads its base)."""
    ends = (entries[w, p] & LAST_BIT) != 0 or p == stop - 1
    return ends and p > piece and (p - piece) % 2 == 0


def copy_unpaired_template(bases, entries, scratch, w, start, stop, row0, point):
    """Template of _copy_unpaired (affine_denominators' round 1)."""
    piece = start
    for p in range(start, stop):
        if _unpaired_end(entries, w, p, piece, stop):
            load_point(point, bases, entries, scratch, w, p, 0, True)
            for j in range(A):
                scratch[row0 + p, j] = point[j]
        if entries[w, p] & LAST_BIT:
            piece = p + 1


def invert_groups(values, count, group, out):
    """Template of invert_groups_g1: out[:, k] <- 1 / values[:, k] for k < count ((L, >=
    count) Montgomery Fq, none zero), by groups of ``group`` columns per thread: one
    Fermat inversion and 3 products per value (Montgomery's trick; out holds the prefixes
    in between)."""
    acc = local_u32(L)
    t = local_u32(L)
    for g in range(cuda.grid(1), (count + group - 1) // group, cuda.gridsize(1)):
        lo = g * group
        hi = min(lo + group, count)
        f_set_one(acc)
        for k in range(lo, hi):
            for j in range(L):
                out[j, k] = acc[j]
            f_mul(acc, acc, values[:, k])
        f_inv(acc, acc)
        for k in range(hi - 1, lo - 1, -1):
            f_mul(t, acc, out[:, k])
            f_mul(acc, acc, values[:, k])
            for j in range(L):
                out[j, k] = t[j]


def invert_groups_reference(F, values: list[int]) -> list[int]:
    """Reference of invert_groups: each value's inverse (canonical ints)."""
    return [F.inverse(v) for v in values]


def affine_sums(bases, entries, offsets, runs, chunk, first, h, scratch, inverses, links):
    """Template of affine_sums_g1: the round of affine_denominators (same arguments, and
    inverses[:, i] = 1 / totals[:, i]): each pair of run first + i, from its last along
    the links, gets 1 / d = inverse * prefix, then inverse *= d, and its sum (pair_sum)
    in its left's row. The next pair's row is read before this pair's sum is stored (no
    pair's rows are another's), so its loads wait on nothing but themselves."""
    inverse = local_u32(L)
    t = local_u32(L)
    ahead = local_u32(L)
    d = local_u32(L)
    p1 = local_u32(A)
    p2 = local_u32(A)
    count = wave_runs_left(inverses.shape[1], offsets, runs, first)
    from_bases = h == 1
    for i in range(cuda.grid(1), count, cuda.gridsize(1)):
        w, r, start, stop, row0 = run_span(offsets, runs, chunk, first, i)
        for j in range(L):
            inverse[j] = inverses[j, i]
        link = int64(links[i])
        left = _read_link(scratch, link, start, ahead)
        while link > 0:
            for j in range(L):
                t[j] = ahead[j]
            link = int64(scratch[link - 1, L + 1])
            load_point(p1, bases, entries, scratch, w, left, row0 + left, from_bases)
            load_point(p2, bases, entries, scratch, w, left + h, row0 + left + h, from_bases)
            after = _read_link(scratch, link, start, ahead)
            kind = pair_denominator(d, p1, p2, False, False)
            f_mul(t, inverse, t)
            if kind <= TANGENT:
                f_mul(inverse, inverse, d)
            pair_sum(scratch[row0 + left], p1, p2, kind, t)
            left = after


@device
def _read_link(scratch, link, start, prefix):
    """prefix <- the prefix in row link - 1 (link > 0), and its pair's left entry; -1 for link 0."""
    if link <= 0:
        return int64(-1)
    for j in range(prefix.shape[0]):
        prefix[j] = scratch[link - 1, j]
    return start + int64(scratch[link - 1, prefix.shape[0]])


def sums_reference(curve, points: list, pairs: list) -> dict[int, object]:
    """Reference of affine_sums for one run: {left: points[left] + points[right]} for its
    round's ``pairs`` (the reference group law of ``curve``, curve/reference.Curve)."""
    return {left: curve.add(points[left], points[right]) for left, right in pairs}


def affine_partials(bases, entries, offsets, chunk_offsets, runs, chunk, first, max_chunks, scratch, points):
    """Template of affine_partials_g1: after the last round, each piece of run first + i
    -> its XYZZ sum at points[:, k], k as kernels.accumulate numbers the run's partial
    sums (kernels.run_partial): its first row's point, or its base for a piece of one entry."""
    point = local_u32(A)
    xyzz = local_u32(X)
    count = wave_runs_left(scratch.shape[0] // chunk, offsets, runs, first)
    for i in range(cuda.grid(1), count, cuda.gridsize(1)):
        w, r, start, stop, row0 = run_span(offsets, runs, chunk, first, i)
        if start >= stop:
            continue
        k = run_partial(offsets, chunk_offsets, w, r, start, chunk, max_chunks)
        piece = start
        for p in range(start, stop):
            if (entries[w, p] & LAST_BIT) != 0 or p == stop - 1:
                load_point(point, bases, entries, scratch, w, piece, row0 + piece, p == piece)
                xyzz_from_affine(xyzz, point)
                store(points, k, xyzz, 4)
                k += 1
                piece = p + 1


def partials_reference(points: list, ends: list[bool]) -> list:
    """Reference of affine_partials for one run: its pieces' sums in order, each its first
    position's point after the last round (``points`` by position; ``ends`` as in
    round_pairs_reference)."""
    sums, piece = [], 0
    for p in range(len(ends)):
        if ends[p] or p == len(ends) - 1:
            sums.append(points[piece])
            piece = p + 1
    return sums


def _kernels(curve: CurveParams) -> dict:
    """{name: kernel} of ``curve``: the four templates with its field and point functions."""
    F, P = single_lane(curve), point_ops(curve)
    name = curve.name.lower()
    bound = dict(L=F.limbs, A=2 * F.limbs, X=4 * F.limbs, f_mul=F.mul, f_sqr=F.sqr, f_add=F.add, f_sub=F.sub,
                 f_dbl=F.dbl, f_neg=F.neg, f_inv=F.inv, f_copy=F.copy, f_set_one=F.set_one, f_is_zero=F.is_zero,
                 f_eq=F.eq, aff_is_identity=P.aff_is_identity, aff_set_identity=P.aff_set_identity,
                 xyzz_from_affine=P.xyzz_from_affine, store=P.store)
    for helper, template in (("load_point", load_point_template), ("pair_denominator", pair_denominator_template),
                             ("pair_sum", pair_sum_template), ("_copy_unpaired", copy_unpaired_template)):
        bound[helper] = device(specialize(template, f"{helper.strip('_')}_{name}", **bound))
    return {kernel: gpu_kernel(specialize(template, f"{kernel}_{name}", **bound))
            for kernel, template in (("affine_denominators", affine_denominators), ("invert_groups", invert_groups),
                                     ("affine_sums", affine_sums), ("affine_partials", affine_partials))}


KERNELS = _kernels(G1)


def wave_runs(plan) -> int:
    """Runs per wave of ``plan`` (plan.affine: log2 of the scratch rows), all of them at most."""
    runs = plan.windows * -(-plan.n // plan.chunk)
    return max(1, min(runs, (1 << plan.affine) // plan.chunk))


def affine_buffers(curve: CurveParams, plan) -> dict:
    """{name: (shape, dtype)} of the workspace's buffers for plan.affine (none without it):
    ``scratch`` (rows, 2L) uint32, a point a row (a wave's entries: 2^plan.affine rows at
    most), ``totals`` and ``inverses`` (L, wave runs) uint32, ``links`` (wave runs,) int32,
    and ``no_entries`` (1, 1) int32, the offsets of a window with no entries (the plain
    accumulation's 0/1 items alone)."""
    if plan.affine is None:
        return {}
    g, L = wave_runs(plan), curve.limbs
    return {"scratch": ((g * plan.chunk, 2 * L), np.uint32), "totals": ((L, g), np.uint32),
            "inverses": ((L, g), np.uint32), "links": ((g,), np.int32), "no_entries": ((1, 1), np.int32)}


def accumulate_affine(plan, ws, bases, stream, grid) -> None:
    """The runs' partial sums of ``plan`` (plan.affine) into ws.points, as the plain
    accumulation's: per wave of wave_runs(plan) runs, ceil(log2 chunk) rounds of three
    launches, then affine_partials; ``ws``: the Workspace (its entries, offsets,
    chunk_offsets, points and affine_buffers), ``grid(items)``: blocks for items threads."""
    k = KERNELS
    runs = -(-plan.n // plan.chunk)
    total, per_wave = plan.windows * runs, ws.totals.shape[1]
    rounds = (plan.chunk - 1).bit_length()
    threads = K.THREADS
    for first in range(0, total, per_wave):
        count = min(per_wave, total - first)
        blocks = grid(count)
        for r in range(rounds):
            h = 1 << r
            k["affine_denominators"][blocks, threads, stream](bases, ws.entries, ws.offsets, runs, plan.chunk, first,
                                                              h, ws.scratch, ws.totals, ws.links)
            k["invert_groups"][grid(-(-count // INVERT_GROUP)), threads, stream](ws.totals, count, INVERT_GROUP,
                                                                                 ws.inverses)
            k["affine_sums"][blocks, threads, stream](bases, ws.entries, ws.offsets, runs, plan.chunk, first, h,
                                                      ws.scratch, ws.inverses, ws.links)
        k["affine_partials"][blocks, threads, stream](bases, ws.entries, ws.offsets, ws.chunk_offsets, runs,
                                                      plan.chunk, first, plan.max_chunks, ws.scratch, ws.points)

