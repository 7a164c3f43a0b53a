"""The CUDA kernels of one MSM, in launch order (pippenger.py launches them).

    classify    per scalar: canonical form, kind byte (0 / 1 / other), and for the others
                a histogram of their nonzero digits (atomic counts[w, bucket])
    scan        per window (a block): exclusive prefix sums of the bucket counts (entry
                offsets) and of their partial sums' counts (the runs of plan.chunk
                entries each bucket overlaps), each partial sum's bucket (chunk_buckets);
                resets counts for the next call
    scatter     per scalar: each nonzero digit's entry (index | sign << 31, and LAST_BIT
                in its bucket's last slot) goes to its bucket's next slot (atomic
                cursor): a counting sort by bucket
    accumulate  per run of plan.chunk consecutive entries of a window (in bucket order,
                so every thread adds exactly chunk bases, whatever the buckets' sizes):
                XYZZ partial sums of the affine bases of each bucket in the run (a
                negative digit: acc = -(-acc + P)), madd-2008-s, no atomics; per range
                of ONES_PER scalars: the sum of the bases whose scalar is 1 (the 0/1
                fast path, cuzk's batch_add)
    reduce      combine mode, launched once per level: a bucket's partial sums added in
                groups of COMBINE_PER, strides 1, 16, 256, ... until its first chunk holds
                the bucket sum (a giant bucket costs log16(chunks) rounds, not one thread
                adding all its chunks); segment mode, per (window, segment of buckets):
                running sums plus the segment's offset multiple, unweighted; level mode,
                launched again per level: sums of SUM_PER points within each window until
                one per window is left, written to ``out[:, w]`` (XYZZ). The windows'
                weights 2^(c w) are the host's (pippenger.to_point): on the device they
                were ~c w serial doublings per segment thread, most of the reduce's time

All point data lives in one (4L, slots) ``points`` array: chunk sums, then the 0/1 sums,
then the segment results, then the reduce threads' own slots, then the level sums.
Every kernel is a grid-stride loop, so the simulator can run a few threads (it spends ~1 ms
per simulated thread on scheduling alone, more than a tiny MSM's arithmetic). Kernels
never allocate, synchronize or copy.
"""

from __future__ import annotations

import numpy as np
from numba_cuzk import _compat  # noqa: F401,I001  (numba patched before its first use)
from numba import config, cuda, int32, int64, uint32

from numba_cuzk.curve.params import G1, G2, CurveParams
from numba_cuzk.curve.points import point_ops
from numba_cuzk.field.target import local_u32
from numba_cuzk.field.scalars import N, load_scalar
from numba_cuzk.kernel_cache import gpu_device, gpu_kernel, specialize
from numba_cuzk.msm.digits import KIND_ONE, KIND_OTHER, scalar_kind, signed_digit

SIMULATOR = bool(config.ENABLE_CUDASIM)
THREADS = 4 if SIMULATOR else 128  # per block: point kernels (G1 ~ 200 registers per thread)
SIM_BLOCKS = 2  # grid of the grid-stride kernels in the simulator (the GPU covers all items)
# per block of the scans (scan here, bits.tile_offsets; static shared arrays). One in the
# simulator, whose syncthreads costs ~10 ms; the block scan then reduces to the serial
# loops (GPU tests cover the rest). 256, not 1024: at 1024 threads tile_offsets' registers
# exceed the SM's 64 K (CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES on the H200).
SCAN_THREADS = 1 if SIMULATOR else 256
# Buckets per reduce thread (segment_buckets): a window of B buckets gets B / S threads (2^20:
# 1024 per window at S = 32, 16384 in all), each ~2 S additions in a row, then 2 (c - 1)
# doublings and additions for its offset multiple. S = 32 from a sweep on the H200
# (bench/msm.py --sweep): against 64, G2 2^16 15.9 / 19.3 ms, 2^20 113.2 / 118.7; G1 2^16
# 3.7 / 4.6, 2^20 17.6 / 18.7, 2^24 228.9 / 226.7 (16 wins below 2^18 only, 128 only at
# 2^24, both by < 1 ms): ~14 us an operation in a row for G1, ~53 for G2. A small MSM is
# such rows, not throughput: at 2^14 (c = 11, chunks of 16) its longest row is ~16 + 64 +
# 20 + 9 operations (accumulate, running sums, offset, three levels of sums) at S = 32, and
# ~16 + 8 + 20 + 12 at S = 4, where 4x the reduce threads still fill no SM. So S = 4 up to
# plan.SMALL_MSM scalars. Measured on an H100 (bench/NOTES.md, 2026-12-05), S = 2, 4, 8, 16, 32:
# G2 2^14 4.08, 3.69, 3.62, 3.98, 5.01 ms; G2 2^16 8.39, 6.64, 6.16, 6.62, 7.33; G1 2^14 and
# 2^16 within ~0.3 ms of each other from S = 4 on (launch-bound there).
# The simulator runs one segment per window.
SEGMENT_BUCKETS = 1 << 30 if SIMULATOR else 32
SMALL_SEGMENT_BUCKETS = 1 << 30 if SIMULATOR else 4
ONES_PER = 64  # indices per thread of the 0/1 path
COMBINE_PER = 16  # chunk sums per thread and round of a giant bucket's combine
# points per thread and level of the windows' final sums: each level is SUM_PER - 1
# serial additions per thread (a G2 XYZZ addition is ~70 us on one H200 thread), so 4
# (five levels at 2^20: 3 additions in a row each) against 16 (three: 15 each); with the
# proof's launches in a CUDA graph the extra launches cost the host nothing
SUM_PER = 4
WAIT = -2  # reduce's target for a thread that sits out a step its warp takes
SIGN_BIT = np.uint32(1 << 31)
LAST_BIT = np.uint32(1 << 30)  # the entry ends its bucket: accumulate stores the bucket's partial sum there
INDEX_MASK = np.uint32((1 << 30) - 1)
MAX_SCALARS = 1 << 30  # an entry's index bits
_U31 = np.uint32(31)
_U30 = np.uint32(30)


@gpu_kernel
def classify(scalars, montgomery, c, windows, kinds, counts):
    """kinds[i] <- kind of scalar i; counts[w, |d_w| - 1] += 1 for its nonzero digits."""
    k = local_u32(N)
    for i in range(cuda.grid(1), scalars.shape[1], cuda.gridsize(1)):
        load_scalar(k, scalars, i, montgomery)
        kind = scalar_kind(k)
        kinds[i] = kind
        if kind == KIND_OTHER:
            for w in range(windows):
                d = signed_digit(k, w, c)
                if d != 0:
                    cuda.atomic.add(counts, (w, abs(d) - 1), int32(1))


@gpu_kernel
def scan(counts, chunk, offsets, cursors, chunk_offsets, chunk_buckets):
    """Block w: offsets[w, b] = sum_{b' < b} counts[w, b'] (offsets[w, B] = total), the
    same in chunk_offsets for the bucket's partial sums (``partials``: the runs of
    ``chunk`` entries it overlaps) and chunk_buckets[w, k] = b for each of them;
    cursors = offsets; counts = 0."""
    totals = cuda.shared.array(SCAN_THREADS, int32)
    t = cuda.threadIdx.x
    buckets = counts.shape[1]
    per = (buckets + SCAN_THREADS - 1) // SCAN_THREADS
    start = min(t * per, buckets)
    stop = min(start + per, buckets)
    for w in range(cuda.blockIdx.x, counts.shape[0], cuda.gridDim.x):
        _scan_window(counts, chunk, offsets, cursors, chunk_offsets, chunk_buckets, totals, w, t, start, stop)


@gpu_device
def partials(offset, count, chunk):
    """Runs of ``chunk`` entries (run r: entries [r chunk, (r+1) chunk) of the window) that
    a bucket of ``count`` entries from ``offset`` on overlaps: its partial sums."""
    if count == 0:
        return 0
    return (offset + count - 1) // chunk - offset // chunk + 1


@gpu_device
def block_prefix(totals, t, value):
    """This thread's exclusive prefix of ``value`` over a block of SCAN_THREADS (Hillis-Steele
    over the shared ``totals``, SCAN_THREADS int32); every thread must call it."""
    totals[t] = value
    if SCAN_THREADS > 1:
        cuda.syncthreads()
    step = 1
    while step < SCAN_THREADS:
        a = int32(0)
        if t >= step:
            a = totals[t - step]
        cuda.syncthreads()
        totals[t] += a
        cuda.syncthreads()
        step *= 2
    prefix = totals[t] - value
    if SCAN_THREADS > 1:
        cuda.syncthreads()  # the next prefix (or window) reuses totals
    return prefix


@gpu_device
def _scan_window(counts, chunk, offsets, cursors, chunk_offsets, chunk_buckets, totals, w, t, start, stop):
    # three passes over this thread's buckets: their entries (prefix: the first bucket's
    # offset), their partials (which need the offsets), then the writes
    buckets = counts.shape[1]
    total = int32(0)
    for b in range(start, stop):
        total += counts[w, b]
    run = block_prefix(totals, t, total)
    partial_total = int32(0)
    o = run
    for b in range(start, stop):
        x = counts[w, b]
        partial_total += partials(o, x, chunk)
        o += x
    partial_run = block_prefix(totals, t, partial_total)
    for b in range(start, stop):
        x = counts[w, b]
        offsets[w, b] = run
        cursors[w, b] = run
        chunk_offsets[w, b] = partial_run
        count = partials(run, x, chunk)
        for k in range(partial_run, partial_run + count):
            chunk_buckets[w, k] = b
        partial_run += count
        run += x
        counts[w, b] = 0
    if t == SCAN_THREADS - 1:
        offsets[w, buckets] = run
        chunk_offsets[w, buckets] = partial_run


@gpu_kernel
def scatter(scalars, montgomery, c, first, stop, kinds, offsets, cursors, entries):
    """For windows first <= w < stop: entries[w, slot] = i | (d_w < 0) << 31 at the next
    slot of bucket |d_w| - 1, with LAST_BIT in the bucket's last slot (offsets[w, |d_w|]
    - 1). Launched per group of windows (plan.scatter_windows): the entries written at
    random slots stay in L2 while a launch's windows fill them."""
    k = local_u32(N)
    for i in range(cuda.grid(1), scalars.shape[1], cuda.gridsize(1)):
        if kinds[i] != KIND_OTHER:
            continue
        load_scalar(k, scalars, i, montgomery)
        scatter_digits(k, c, first, stop, uint32(i), offsets, cursors, entries)


@gpu_device
def scatter_digits(k, c, first, stop, index, offsets, cursors, entries):
    """Scalar ``k``'s (N uint32 limbs, canonical) entries for windows first <= w < stop:
    ``index`` (uint32, its base) | (d_w < 0) << 31 at the next slot of bucket |d_w| - 1,
    with LAST_BIT in the bucket's last slot (scatter's and indexed.scatter_indexed's)."""
    for w in range(first, stop):
        d = signed_digit(k, w, c)
        if d != 0:
            b = abs(d) - 1
            slot = cuda.atomic.add(cursors, (w, b), int32(1))
            last = slot == offsets[w, b + 1] - 1
            entries[w, slot] = index | (uint32(d < 0) << _U31) | (uint32(last) << _U30)


# accumulate and reduce, the point kernels, exist once per curve: accumulate_g1,
# accumulate_g2, reduce_g1, reduce_g2 (POINT_KERNELS, built by _point_kernels below), and
# on demand accumulate_g1_r<N>, register-capped (accumulate_kernel). The
# templates read the names declared here, which kernel_cache.specialize binds per instance
# to the curve's values (a copy of this module's globals with the bindings on top): the
# values below are placeholders that no kernel is compiled with. On the GPU G2's are over
# point_ops(G2, pair=True), a lane pair per point (field/fq2_pair.py), so each item is
# LANES threads of the grid.
X = 0  # uint32 limbs of one XYZZ point per thread: 4 L (L = 12 for G1 and G2's lane pairs)
A = 0  # uint32 limbs of one affine point per thread: 2 L
LANES = 1  # threads per point: 1 (G1), 2 (G2's lane pair)
base_in_memory = True  # the affine bases are read in place (G1), or loaded into registers ahead
load = None  # PointOps.load(out, arr, i, coords): one point (a lane's half) of a bulk array
store = None  # PointOps.store(arr, i, p, coords)
xyzz_neg = None  # PointOps.xyzz_neg(out, p)
xyzz_set_identity = None  # PointOps.xyzz_set_identity(out)
add_mixed = None  # PointOps.xyzz_add_mixed(out, p, q): XYZZ p + affine q, madd-2008-s
add_unless_equal = None  # PointOps.xyzz_add_unless_equal(out, p, q) -> False where p == q
dbl = None  # PointOps.xyzz_dbl(out, p), dbl-2008-s-1
#
# Few call sites of point formulas: NVVM inlines the whole formula (with its doubling
# branch) at every site, and a G2 site costs ~20 s of compilation. So reduce runs its
# running sums, offset multiples and tree levels as a sequence of ``dst = s1 + s2``
# operations on columns of the one ``points`` array, computed by a small state machine
# around one ``xyzz_add_unless_equal`` and one ``xyzz_dbl`` (s1 = s2: the offset multiple's
# doublings, at 6M + 3S instead of the addition's 4M and compare first; and the addition of
# two equal sums): the addition's own doubling branch would be a second dbl site.


@gpu_device
def entry(entries, kinds, w, s):
    """(base index, negative digit, last of its bucket, adds its base) of entry s of window
    w; w < 0: scalar s of the 0/1 path."""
    if w >= 0:
        e = entries[w, s]
        return int64(e & INDEX_MASK), (e & SIGN_BIT) != uint32(0), (e & LAST_BIT) != uint32(0), True
    return int64(s), False, False, kinds[s] == KIND_ONE


@gpu_device
def run_partial(offsets, chunk_offsets, w, r, start, chunk, max_chunks):
    """The points column of run r's first partial sum (window w, its first entry
    ``start``): w * max_chunks + the first partial of start's bucket lo + the run's rank
    among lo's runs (0 unless lo began in an earlier run). accumulate's numbering, which
    combine and reduce read (affine.affine_partials' too)."""
    lo = 0  # invariant offsets[w, lo] <= start < offsets[w, hi]: lo is start's bucket
    hi = offsets.shape[1] - 1
    while hi - lo > 1:
        mid = (lo + hi) >> 1
        if offsets[w, mid] <= start:
            lo = mid
        else:
            hi = mid
    return w * max_chunks + chunk_offsets[w, lo] + r - offsets[w, lo] // chunk


def accumulate(bases, entries, offsets, chunk_offsets, chunk, kinds, ones_per, ones0, points):
    """Template of accumulate_g1 and accumulate_g2 (_point_kernels), and of the
    register-capped accumulate_g1_r<N> / _g2_r<N> (accumulate_kernel).

    Item g < ones0 = windows * max_chunks: run r of window w (g = w * max_chunks + r), its
    entries [r chunk, (r + 1) chunk) in bucket order; the partial sum of each bucket
    they hold -> points[:, w * max_chunks + k], consecutive k from the run's first,
    chunk_offsets[w, b] + the run's rank among the runs of b, its first entry's bucket
    (each bucket the run ends holds its last partial sum, so the next bucket's first is
    the next k). Item g >= ones0: the 0/1 path, the sum of the bases i with scalar 1 in
    [(g - ones0) * ones_per, + ones_per) -> points[:, g].

    One loop over the run's entries, a partial sum stored where an entry carries LAST_BIT
    (and at the run's end): a warp's threads add in step, chunk additions each, and the
    loop keeps no bucket index. A loop per bucket inside a loop over the run's buckets
    made every thread of a warp wait, at each bucket, for the longest one; the index cost
    40 registers (G1 208 against 166)."""
    acc = local_u32(X)
    base = local_u32(A)
    ahead = local_u32(A)
    buckets = offsets.shape[1] - 1
    max_chunks = ones0 // offsets.shape[0]
    n = kinds.shape[0]
    items = ones0 + (n + ones_per - 1) // ones_per
    for g in range(cuda.grid(1) // LANES, items, cuda.gridsize(1) // LANES):
        w = int64(-1)
        k = g
        if g < ones0:
            w = g // max_chunks
            r = g - w * max_chunks
            start = r * chunk
            stop = min(start + chunk, int64(offsets[w, buckets]))
            if start >= stop:
                continue
            k = run_partial(offsets, chunk_offsets, w, r, start, chunk, max_chunks)
        else:
            start = (g - ones0) * ones_per
            stop = min(start + ones_per, n)
        xyzz_set_identity(acc)
        if not base_in_memory:
            load(ahead, bases, entry(entries, kinds, w, start)[0], 2)
        for s in range(start, stop):
            index, negative, ends, live = entry(entries, kinds, w, s)
            if not base_in_memory:
                # a lane pair holds its base in registers: the next one's loads are issued
                # here, to arrive while this addition runs (the gathers' latency hidden)
                for j in range(A):
                    base[j] = ahead[j]
                if s + 1 < stop:
                    load(ahead, bases, entry(entries, kinds, w, s + 1)[0], 2)
            if live:
                # acc - P = -(-acc + P): negating acc (two Fq subtractions) lets the affine
                # base stay in global memory, read by the formula where it needs it: 24
                # registers fewer than a local copy (G1). A lane pair loads its halves.
                if negative:
                    xyzz_neg(acc, acc)
                if base_in_memory:
                    add_mixed(acc, acc, bases[:, index])
                else:
                    add_mixed(acc, acc, base)
                if negative:
                    xyzz_neg(acc, acc)
            if ends or s == stop - 1:
                store(points, k, acc, 4)
                k += 1
                xyzz_set_identity(acc)


@gpu_device
def _reduce_items(segments, windows, max_chunks, first_items, count_items):
    """reduce's items in its mode: windows x segments, windows x max_chunks (combine), or
    the level's groups."""
    if segments > 0:
        return windows * segments
    if segments < 0:
        return windows * max_chunks
    return first_items + (windows - 1) * count_items


@gpu_device
def _segment_item(item, segments, buckets, tmp0, seg0):
    """Segment mode's item (w, t): (w, lo, ACC's slot, TOT's, Y's, its top bucket, its
    result's slot)."""
    w = item // segments
    size = buckets // segments
    lo = (item - w * segments) * size
    acc = tmp0 + 3 * item
    return w, lo, acc, acc + 1, acc + 2, lo + size - 1, seg0 + item


def reduce(points, chunk_offsets, chunk_buckets, c, max_chunks, segments, seg0, tmp0, src, first, count, per,
           dst, out):
    """Template of reduce_g1 and reduce_g2 (_point_kernels): three modes, as a grid-stride
    loop over items.

    segments < 0 (combine, stride s = src): item g = (w, j) of windows x max_chunks,
    chunk j of bucket b = chunk_buckets[w, j] at position t = j - chunk_offsets[w, b]:
    if t is a multiple of per * s, chunk j += chunks j + s, j + 2s, ... (< j + per s,
    within the bucket). After strides 1, per, per^2, ... past the bucket's chunk
    count, its first chunk holds the bucket sum.
    segments > 0: item (w, t) of windows x segments sums the buckets [t S, (t+1) S) of
    window w (S = B / segments) by running sums over the bucket sums (the first chunk
    of each, points[:, w * max_chunks + j]): TOT = sum (b - lo + 1) B_b, ACC = sum
    B_b; then lo ACC + TOT -> points[:, seg0 + item] (its own slots ACC, TOT, and Y
    at tmp0 + 3 item + 0, 1, 2), not weighted by its window's 2^(c w). Two launches:
    src = 0 the running sums (ACC, TOT), src = 1 the rest, in step across a warp: Y = 2Y
    for every thread, then Y += ACC for the threads whose bit of lo is set while the
    others wait, bit by bit. In one launch the threads left the running sums a few
    steps apart (a bucket's partial sums vary) and their doublings and additions fell on
    the same steps, where a warp runs both.
    segments == 0: per-window sums of groups of ``per`` points. Window 0's points are
    points[:, src .. src + first), window w >= 1's the ``count`` after them,
    points[:, src + first + (w - 1) count ..); its sums go to points[:, dst ..) in the
    same layout (ceil(first / per), then ceil(count / per) per window), so the next
    level reads them with first, count = those. Once first, count <= per (one item per
    window), window w's sum also goes to out[:, w] (XYZZ: an affine conversion here,
    one inversion, would cost ~20 s of compilation).
    """
    a = local_u32(X)
    b = local_u32(X)
    windows = chunk_offsets.shape[0]
    buckets = chunk_offsets.shape[1] - 1
    first_items = (first + per - 1) // per
    count_items = (count + per - 1) // per
    items = _reduce_items(segments, windows, max_chunks, first_items, count_items)
    for item in range(cuda.grid(1) // LANES, items, cuda.gridsize(1) // LANES):
        xyzz_set_identity(a)
        w = lo = acc = tot = y = bucket = j = k = stop = s1 = s2 = int64(0)
        step = int64(1)
        phase = 1 if segments > 0 and src == 1 else 0
        bit = int64(c) - 2  # lo < B = 2^(c-1)
        doubled = False
        if segments > 0:
            w, lo, acc, tot, y, bucket, result = _segment_item(item, segments, buckets, tmp0, seg0)
            if phase == 0:
                store(points, acc, a, 4)
                store(points, tot, a, 4)
                store(points, y, a, 4)
            j = int64(chunk_offsets[w, bucket])
        elif segments < 0:
            w = item // max_chunks
            j = item - w * max_chunks
            if j >= chunk_offsets[w, buckets]:
                continue
            bucket = int64(chunk_buckets[w, j])
            head = int64(chunk_offsets[w, bucket])
            if (j - head) % (per * src) != 0:
                continue
            result = item
            step = src
            k = item + step
            stop = min(item + per * step, w * max_chunks + int64(chunk_offsets[w, bucket + 1]))
        else:
            if item < first_items:
                w = int64(0)
                k = src + item * per
                stop = min(k + per, src + first)
            else:
                w = 1 + (item - first_items) // count_items
                begin = src + first + (w - 1) * count
                k = begin + (item - first_items - (w - 1) * count_items) * per
                stop = min(k + per, begin + count)
            result = dst + item
            store(points, result, a, 4)
        while True:  # one operation target = s1 + s2 per round, at the one add and dbl site
            target = int64(-1)
            if segments > 0:
                if phase == 0:  # ACC += bucket sum, then TOT += ACC; buckets downwards
                    if j < chunk_offsets[w, bucket + 1]:
                        target, s1, s2 = acc, acc, w * max_chunks + j
                        j = int64(chunk_offsets[w, bucket + 1])
                    else:
                        target, s1, s2 = tot, tot, acc
                        bucket -= 1
                        if bucket < lo:
                            phase = 2  # the first launch's end
                        else:
                            j = int64(chunk_offsets[w, bucket])
                elif phase == 1:  # Y = lo ACC, bit by bit: Y = 2 Y, then Y += ACC or wait
                    if bit < 0:
                        target, s1, s2 = result, y, tot
                        phase = 2
                    elif not doubled:
                        target, s1, s2 = y, y, y
                        doubled = True
                    else:
                        target, s1, s2 = (y, y, acc) if (lo >> bit) & 1 else (WAIT, s1, s2)
                        doubled = False
                        bit -= 1
            elif k < stop:
                target, s1, s2 = result, result, k
                k += step
            if target == -1:
                break
            if target == WAIT:
                continue
            load(a, points, s1, 4)
            double = s1 == s2  # the offset multiple's c doublings: dbl-2008-s itself
            if not double:  # s2 loaded (G1: 220 registers, 242 read in place)
                load(b, points, s2, 4)
                double = not add_unless_equal(a, a, b)
            if double:  # also two equal sums: a is unchanged and a + a = 2a
                dbl(a, a)
            store(points, target, a, 4)
        if segments == 0 and first <= per and count <= per:
            load(a, points, result, 4)
            store(out, item, a, 4)


# No launch bounds: accumulate_g1 wants <= 170 registers (3 blocks of 128 per SM, the
# warps that hide the additions' carry chains; ncu showed fixed-latency stalls), and
# ptxas (sm_90) now allocates 168 unbounded (bench.sass --local). Check that count after
# an edit of the formulas; the simulator rejects launch_bounds.


def _bindings(curve: CurveParams) -> tuple[dict, int]:
    """(the names the point templates take from ``specialize`` for ``curve``, threads per
    point)."""
    P = point_ops(curve, pair=curve.degree == 2 and not SIMULATOR)
    bindings = dict(
        X=4 * P.limbs, A=2 * P.limbs, LANES=P.lanes, load=P.load, store=P.store, xyzz_neg=P.xyzz_neg,
        xyzz_set_identity=P.xyzz_set_identity, add_mixed=P.xyzz_add_mixed,
        add_unless_equal=P.xyzz_add_unless_equal, dbl=P.xyzz_dbl, base_in_memory=curve.degree == 1,
    )
    return bindings, P.lanes


def _point_kernels(curve: CurveParams) -> dict:
    """{"accumulate": accumulate_gN, "reduce": reduce_gN, "lanes": threads per point} for
    ``curve``: G1 one thread per point, G2 a lane pair (point_ops(G2, pair=True)). The
    simulator has no warp shuffles, and its Python lane exchange made a 12-point G2 MSM
    take 7 s instead of 0.05: there G2 keeps one thread per point, its bases loaded as the
    pair's are (the pair arithmetic is tested on its own: tests/field/test_device.py and
    tests/curve/test_points.py, G2-pair)."""
    bindings, lanes = _bindings(curve)
    suffix = curve.name.lower()
    kernels = {name: gpu_kernel(specialize(template, f"{name}_{suffix}", **bindings))
               for name, template in (("accumulate", accumulate), ("reduce", reduce))}
    return {**kernels, "lanes": lanes}


POINT_KERNELS = {curve.name: _point_kernels(curve) for curve in (G1, G2)}
_CAPPED: dict = {}


def accumulate_kernel(curve: CurveParams, registers: int | None = None):
    """The accumulate instance of ``curve``: POINT_KERNELS' (``registers`` None), or
    ``accumulate_<curve>_r<registers>``, compiled with ptxas's register cap (plan.registers:
    a sweep's occupancy variant, built on first use; at 168 registers an SM holds 3 blocks
    of 128 threads, 4 at <= 128, 5 at <= 96, the rest spilled to local memory). The
    simulator has no register cap: there the instance is compiled without it."""
    if registers is None:
        return POINT_KERNELS[curve.name]["accumulate"]
    key = (curve.name, registers)
    if key not in _CAPPED:
        name = f"accumulate_{curve.name.lower()}_r{registers}"
        options = {} if SIMULATOR else {"max_registers": registers}
        _CAPPED[key] = gpu_kernel(specialize(accumulate, name, **_bindings(curve)[0]), **options)
    return _CAPPED[key]
