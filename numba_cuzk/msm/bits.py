"""The bit-valued witness: sums of selected bases for the 1s, Pippenger for the rest.

    split = BitSplit(n, tail=1 << 16)            # device buffers (bit_buffers: the memory plan's)
    split.split(witness, stream)                 # once per proof: indices of the 1s and of the tail
    result = split.msm(bases, out, workspace, stream, first=0)   # WindowSums, (2, 4L, windows)

A PoRep witness is ~99.99% 0s and 1s (builtin.bit_heavy: all wires but 2 x 16 words).
A 0/1 scalar needs no bucket: the MSM is the sum of the bases whose scalar is 1 (cuzk's
batch addition) plus Pippenger over the other scalars only (cuzk's tail MSM). The split
is made once per proof and serves the four witness MSMs (A, B1, B2 and C):

1. ``bit_kinds``: a kind byte per scalar (0 / 1 / other; digits.scalar_kind).
2. ``tile_counts``: per tile of TILE scalars, its 1s and its others.
3. ``tile_offsets`` (one block): exclusive prefix sums of both counts, and the totals.
4. ``tile_compact``: the indices of the 1s (``ones``) and of the others (``tail``) in
   increasing order (order kept: C's wires, from ``first`` on, are a suffix of each list).
5. ``gather_tail``: the tail's scalars into a compact (8, tail) array, zero past the
   tail's end and for indices below ``first``.

Density (``base_density``, once per key): a byte per wire, whether the query's base is
not the identity (bit_heavy: A 36% of wires, B 68%, C 96%; wires below ``first`` 0 for
C). With it, ``select`` makes a query's own list of 1s on dense bases (dense_counts,
tile_offsets, dense_compact over the kind bytes: ~0.3 ms at 2^27), so sum_selected adds
only bases that count: A's 1s on dense bases are 18% of the wires, not the 42% of all 1s.

Per MSM, ``sum_selected_g1`` / ``_g2`` gives each thread SELECTED_PER consecutive entries
of ``ones`` (so every thread of a warp adds, in step: the 0/1 path of kernels.accumulate
reads every scalar's kind and a warp adds whenever one lane has a 1, ~44% of lanes busy
on bit_heavy's witness), mixed additions into one XYZZ accumulator each, then sums of
SUM_PER partial sums per level (kernels.reduce_gN's level mode over one "window") into
``out[1][:, 0]``; the tail is pippenger.msm over the gathered scalars with an
``indices`` map (indexed.py), so its bases are read in place, planned for ``tail``
scalars (a small window: its buckets' reduction costs ~2^(c-1), not the 2^21 of a plan
for 2^27 scalars). ``out[0]`` holds the tail's window sums; to_point adds the two parts.

A witness with more than ``tail`` non-bit scalars would lose some: ``totals`` (downloaded
with the results) lets the caller refuse it (``check_totals``), never a wrong proof.
"""

from __future__ import annotations

import numpy as np

from numba_cuzk import _compat  # noqa: F401,I001  (numba patched before its first use)
from numba import config, cuda, int32, int64

from numba_cuzk.curve.params import G1, G2, CurveParams
from numba_cuzk.curve.points import point_ops
from numba_cuzk.field.params import FR
from numba_cuzk.field.scalars import N, load_scalar
from numba_cuzk.field.target import fill_zero, local_u32
from numba_cuzk.kernel_cache import gpu_kernel, specialize
from numba_cuzk.msm import kernels as K
from numba_cuzk.msm.digits import KIND_ONE, KIND_OTHER, scalar_kind
from numba_cuzk.msm.kernels import SCAN_THREADS, block_prefix
from numba_cuzk.msm.pippenger import Bases, WindowSums, Workspace, msm

SIMULATOR = bool(config.ENABLE_CUDASIM)
# scalars per tile of the split: each thread of tile_counts / tile_compact reads 256
# consecutive kind bytes (two 128-byte lines); 2^27 scalars make 2^19 tiles, whose scan
# is one block's ~2 x 512 serial steps per thread. (Tests pass 3: tile edges crossed.)
TILE = 256
# selected bases per thread of sum_selected: 58 M 1s (bit_heavy at 2^27) keep 227 K
# threads busy (an H200 holds ~50 K G1 threads at once) and leave 2^27 / 256 = 512 K
# partial sums for the levels (~0.7 M XYZZ additions, ~1% of the 1s' mixed ones).
# (Tests pass 3: several items and levels.)
SELECTED_PER = 256
ONES, OTHERS = 0, 1  # columns of counts, offsets and totals
DENSE_ROWS = 4  # density maps kept: one per witness query (A, B1, B2, C)


def tiles(n: int, tile: int = TILE) -> int:
    return max(1, -(-n // tile))


def selected_items(n: int, per: int = SELECTED_PER) -> int:
    """Partial sums of sum_selected for up to n selected bases, ``per`` a thread."""
    return max(1, -(-n // per))


def _level_size(items: int) -> int:
    return -(-items // K.SUM_PER)


def bit_buffers(n: int, tail: int, tile: int = TILE, per: int = SELECTED_PER) -> dict:
    """{name: (shape, dtype)} of a BitSplit's device buffers for n scalars and a tail of
    ``tail``; "partials_g1" / "partials_g2": sum_selected's XYZZ columns per curve (shared
    by that curve's MSMs, which run one after the other on one stream); "dense": the
    density maps (``density``), DENSE_ROWS of them."""
    t = tiles(n, tile)
    items = selected_items(n, per)
    columns = items + 2 * _level_size(items)
    return {"kinds": ((n,), np.uint8), "counts": ((t, 2), np.int32), "offsets": ((t, 2), np.int32),
            "totals": ((2,), np.int32), "ones": ((n,), np.int32), "tail": ((max(tail, 1),), np.int32),
            "selected_totals": ((2,), np.int32), "dense": ((DENSE_ROWS, n), np.uint8),
            "tail_scalars": ((FR.limbs, max(tail, 1)), np.uint32),
            "partials_g1": ((4 * G1.limbs, columns), np.uint32), "partials_g2": ((4 * G2.limbs, columns), np.uint32)}


def bit_bytes(n: int, tail: int, tile: int = TILE, per: int = SELECTED_PER) -> int:
    """Device bytes of ``BitSplit(n, tail, tile, per)`` (the memory plan's item)."""
    return sum(int(np.prod(s)) * np.dtype(d).itemsize for s, d in bit_buffers(n, tail, tile, per).values())


# ---------------------------------------------------------------------------------------
# the split (curve-independent)


@gpu_kernel
def bit_kinds(scalars, kinds):
    """kinds[i] <- digits.scalar_kind of canonical scalar i (scalars (8, n) canonical)."""
    k = local_u32(N)
    for i in range(cuda.grid(1), scalars.shape[1], cuda.gridsize(1)):
        load_scalar(k, scalars, i, False)
        kinds[i] = scalar_kind(k)


@gpu_kernel
def tile_counts(kinds, tile, counts):
    """counts[t] <- (1s, others) among kinds[t tile, (t + 1) tile)."""
    n = kinds.shape[0]
    for t in range(cuda.grid(1), counts.shape[0], cuda.gridsize(1)):
        ones = others = int32(0)
        for i in range(t * tile, min(n, (t + 1) * tile)):
            kind = kinds[i]
            ones += int32(kind == KIND_ONE)
            others += int32(kind == KIND_OTHER)
        counts[t, 0] = ones
        counts[t, 1] = others


@gpu_kernel
def tile_offsets(counts, offsets, totals):
    """One block of kernels.SCAN_THREADS: offsets[:, k] <- exclusive prefix sums of
    counts[:, k], totals[k] <- sums (2^27 scalars: 2^19 tiles, 2048 per thread)."""
    shared = cuda.shared.array(SCAN_THREADS, int32)
    t = cuda.threadIdx.x
    n = counts.shape[0]
    per = (n + SCAN_THREADS - 1) // SCAN_THREADS
    start = min(t * per, n)
    stop = min(start + per, n)
    for k in range(2):
        total = int32(0)
        for j in range(start, stop):
            total += counts[j, k]
        run = block_prefix(shared, t, total)
        for j in range(start, stop):
            offsets[j, k] = run
            run += counts[j, k]
        if t == SCAN_THREADS - 1:
            totals[k] = run


@gpu_kernel
def tile_compact(kinds, tile, offsets, ones, tail):
    """Tile t writes its 1s' indices to ones[offsets[t, 0] ..] and its others' to
    tail[offsets[t, 1] ..] in increasing order (tail entries past its length are dropped:
    check_totals refuses such a witness)."""
    n = kinds.shape[0]
    capacity = tail.shape[0]
    for t in range(cuda.grid(1), offsets.shape[0], cuda.gridsize(1)):
        a = int64(offsets[t, 0])
        b = int64(offsets[t, 1])
        for i in range(t * tile, min(n, (t + 1) * tile)):
            kind = kinds[i]
            if kind == KIND_ONE:
                ones[a] = i
                a += 1
            elif kind == KIND_OTHER:
                if b < capacity:
                    tail[b] = i
                b += 1


@gpu_kernel
def gather_tail(scalars, tail, totals, first, out):
    """out[:, j] <- scalars[:, tail[j]] for the tail's j with tail[j] >= first, else 0."""
    count = min(int64(totals[1]), int64(out.shape[1]))
    for j in range(cuda.grid(1), out.shape[1], cuda.gridsize(1)):
        i = int64(-1)
        if j < count:
            i = int64(tail[j])
        if i >= first:
            for limb in range(N):
                out[limb, j] = scalars[limb, i]
        else:
            for limb in range(N):
                out[limb, j] = 0


@gpu_kernel
def base_density(points, first, dense):
    """dense[i + first] <- 1 if base i of point-major ``points`` (2L, m) is not the
    identity (0, 0), else 0; dense[:first] <- 0."""
    rows = points.shape[0]
    for i in range(cuda.grid(1), dense.shape[0], cuda.gridsize(1)):
        live = 0
        j = i - first
        if 0 <= j < points.shape[1]:
            for r in range(rows):
                if points[r, j] != 0:
                    live = 1
        dense[i] = live


@gpu_kernel
def dense_counts(kinds, dense, tile, counts):
    """counts[t] <- (1s on dense bases, 0) among kinds[t tile, (t + 1) tile)."""
    n = kinds.shape[0]
    for t in range(cuda.grid(1), counts.shape[0], cuda.gridsize(1)):
        ones = int32(0)
        for i in range(t * tile, min(n, (t + 1) * tile)):
            ones += int32(kinds[i] == KIND_ONE and dense[i] != 0)
        counts[t, 0] = ones
        counts[t, 1] = 0


@gpu_kernel
def dense_compact(kinds, dense, tile, offsets, ones):
    """Tile t writes the indices of its 1s on dense bases to ones[offsets[t, 0] ..]."""
    n = kinds.shape[0]
    for t in range(cuda.grid(1), offsets.shape[0], cuda.gridsize(1)):
        a = int64(offsets[t, 0])
        for i in range(t * tile, min(n, (t + 1) * tile)):
            if kinds[i] == KIND_ONE and dense[i] != 0:
                ones[a] = i
                a += 1


def density_reference(points: np.ndarray, first: int, n: int) -> np.ndarray:
    """CPU reference of base_density: (n,) uint8."""
    dense = np.zeros(n, dtype=np.uint8)
    live = np.any(points != 0, axis=0)
    dense[first:first + live.size] = live[:max(0, n - first)]
    return dense


def split_reference(scalars: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """CPU reference of the split: (indices of the scalars equal to 1, indices of the
    others that are not 0), both increasing, for canonical (8, n) scalars (< r)."""
    high = np.any(scalars[1:] != 0, axis=0)
    one = ~high & (scalars[0] == 1)
    other = high | (scalars[0] > 1)
    return np.flatnonzero(one).astype(np.int32), np.flatnonzero(other).astype(np.int32)


# ---------------------------------------------------------------------------------------
# the selected sums (one kernel per curve: sum_selected_g1, sum_selected_g2)

# Names sum_selected reads, bound per curve by kernel_cache.specialize (_selected_kernel);
# these placeholders are never compiled.
X = A = LANES = 0  # limbs of an XYZZ and an affine point; threads per point (2: a lane pair)
base_in_memory = True  # one thread per point reads its base in place (G1); a lane pair loads it
load = store = None  # PointOps.load(out, arr, i, coords) / .store(arr, i, p, coords)
xyzz_set_identity = add_mixed = None  # PointOps.xyzz_set_identity(p), .xyzz_add_mixed(out, p, q)


def sum_selected(bases, selected, totals, first, per, points):
    """Template of sum_selected_g1 and sum_selected_g2: item g < selected_items(len(selected),
    per) <- the XYZZ sum of bases[:, selected[s] - first] over s in [g per, (g + 1) per),
    s < totals[0], selected[s] >= first (points[:, g]; identity when none)."""
    acc = local_u32(X)
    base = local_u32(A)
    ahead = local_u32(A)
    total = int64(totals[0])
    items = (selected.shape[0] + per - 1) // per
    for g in range(cuda.grid(1) // LANES, items, cuda.gridsize(1) // LANES):
        start = g * per
        stop = min(start + per, total)
        xyzz_set_identity(acc)
        if not base_in_memory and start < stop:
            load(ahead, bases, max(int64(selected[start]) - first, int64(0)), 2)
        for s in range(start, stop):
            index = int64(selected[s]) - first
            if not base_in_memory:
                # a lane pair holds its base in registers: the next one's loads are issued
                # now, to arrive while this addition runs (as kernels.accumulate)
                for j in range(A):
                    base[j] = ahead[j]
                if s + 1 < stop:
                    load(ahead, bases, max(int64(selected[s + 1]) - first, int64(0)), 2)
            if index >= 0:
                if base_in_memory:
                    add_mixed(acc, acc, bases[:, index])
                else:
                    add_mixed(acc, acc, base)
        store(points, g, acc, 4)


def _selected_kernel(curve: CurveParams):
    P = point_ops(curve, pair=curve.degree == 2 and not SIMULATOR)
    kernel = gpu_kernel(specialize(
        sum_selected, f"sum_selected_{curve.name.lower()}", X=4 * P.limbs, A=2 * P.limbs, LANES=P.lanes,
        load=P.load, store=P.store, xyzz_set_identity=P.xyzz_set_identity, add_mixed=P.xyzz_add_mixed,
        base_in_memory=curve.degree == 1))
    return kernel, P.lanes


SELECTED_KERNELS = {curve.name: _selected_kernel(curve) for curve in (G1, G2)}
sum_selected_g1 = SELECTED_KERNELS["G1"][0]
sum_selected_g2 = SELECTED_KERNELS["G2"][0]


def _grid(items: int) -> int:
    return K.SIM_BLOCKS if K.SIMULATOR else max(1, (items + K.THREADS - 1) // K.THREADS)


class TailOverflow(ValueError):
    """A witness with more non-bit scalars than the tail its prover was planned for."""


def check_totals(totals: np.ndarray, tail: int) -> None:
    """TailOverflow when a split's downloaded ``totals`` hold more others than ``tail``."""
    others = int(totals[OTHERS])
    if others > tail:
        raise TailOverflow(f"the witness has {others} scalars other than 0 and 1, the prover's bit/tail split was "
                           f"planned for at most {tail} (Prover(tail=...)): plan a larger tail, or none")


class BitSplit:
    """Device buffers (``bit_buffers``) of the split of n scalars with room for ``tail``
    non-bit ones, and the MSMs on it (``tile``, ``per``: TILE and SELECTED_PER)."""

    def __init__(self, n: int, tail: int, stream=0, tile: int = TILE, per: int = SELECTED_PER) -> None:
        if n < 1 or tail < 1 or tile < 1 or per < 1:
            raise ValueError(f"a bit split needs n, tail, tile, per >= 1, got {n}, {tail}, {tile}, {per}")
        self.n, self.tail_capacity, self.tile, self.per = n, tail, tile, per
        for name, (shape, dtype) in bit_buffers(n, tail, tile, per).items():
            setattr(self, name, cuda.device_array(shape, dtype=dtype, stream=stream))
        self.items = selected_items(n, per)
        self.level_size = _level_size(self.items)
        self._dummy_offsets = cuda.to_device(np.zeros((1, 2), dtype=np.int32), stream=stream)  # one "window"
        self._dummy_buckets = cuda.to_device(np.zeros((1, 1), dtype=np.int32), stream=stream)
        self._gathered = None  # the ``first`` the tail's scalars were last gathered for
        self._selected = False  # ones holds one query's dense 1s (select), not all of them

    def split(self, scalars, stream) -> None:
        """``ones``, ``tail`` and ``totals`` of (8, n) canonical device ``scalars``."""
        if tuple(scalars.shape) != (FR.limbs, self.n):
            raise ValueError(f"the split serves ({FR.limbs}, {self.n}) scalars, got {tuple(scalars.shape)}")
        t = self.counts.shape[0]
        bit_kinds[_grid(self.n), K.THREADS, stream](scalars, self.kinds)
        tile_counts[_grid(t), K.THREADS, stream](self.kinds, self.tile, self.counts)
        tile_offsets[1, SCAN_THREADS, stream](self.counts, self.offsets, self.totals)
        tile_compact[_grid(t), K.THREADS, stream](self.kinds, self.tile, self.offsets, self.ones, self.tail)
        self._scalars, self._gathered, self._selected = scalars, None, False

    def gather(self, first: int, stream) -> None:
        """The tail's scalars at indices >= ``first`` into ``tail_scalars`` (after ``split``)."""
        if self._gathered != first:
            gather_tail[_grid(self.tail_capacity), K.THREADS, stream](self._scalars, self.tail, self.totals, first,
                                                                     self.tail_scalars)
            self._gathered = first

    def density(self, bases: Bases, first: int, dense, stream) -> None:
        """``dense`` ((n,) uint8 device) <- base_density of ``bases`` from wire ``first`` on."""
        base_density[_grid(self.n), K.THREADS, stream](bases.points, first, dense)

    def select(self, dense, stream) -> None:
        """The split's 1s whose ``dense`` byte is set, into ``ones`` and selected_totals[0]
        (after ``split``; sum_selected then reads them)."""
        t = self.counts.shape[0]
        dense_counts[_grid(t), K.THREADS, stream](self.kinds, dense, self.tile, self.counts)
        tile_offsets[1, SCAN_THREADS, stream](self.counts, self.offsets, self.selected_totals)
        dense_compact[_grid(t), K.THREADS, stream](self.kinds, dense, self.tile, self.offsets, self.ones)
        self._selected = True

    def msm(self, bases: Bases, out, workspace: Workspace, stream, first: int = 0, dense=None) -> WindowSums:
        """sum_(i >= first) s_i bases[i - first] of the split's scalars s, as WindowSums
        with sums = ``out`` ((2, 4L, windows) device; windows of ``workspace``'s plan,
        which serves ``tail`` scalars): ``out[0]`` the tail's window sums, ``out[1][:, 0]`` the sum
        of the selected bases (its other columns zero). ``dense`` (``density``'s bytes for
        these bases and ``first``): only the 1s on dense bases are added."""
        curve = bases.curve
        shape = (2, 4 * curve.limbs, workspace.plan.windows)
        if tuple(out.shape) != shape:
            raise ValueError(f"out must be {shape}, got {tuple(out.shape)}")
        self.gather(first, stream)
        msm(bases, self.tail_scalars, out=out[0], stream=stream, workspace=workspace, indices=self.tail,
            offset=first)
        if dense is not None:
            self.select(dense, stream)
        elif self._selected:
            raise ValueError("the 1s were selected for another query's density: split again, or pass its dense")
        self.selected_sum(bases, first, out[1], stream)
        return WindowSums(curve, workspace.plan.c, out)

    def selected_sum(self, bases: Bases, first: int, out, stream) -> None:
        """out[:, 0] <- sum of bases[:, i - first] over the 1s' indices i >= first (XYZZ),
        out[:, 1:] <- 0."""
        curve = bases.curve
        kernel, lanes = SELECTED_KERNELS[curve.name]
        points = getattr(self, f"partials_{curve.name.lower()}")
        fill_zero(out, stream)
        totals = self.selected_totals if self._selected else self.totals
        kernel[_grid(self.items * lanes), K.THREADS, stream](bases.points, self.ones, totals, first, self.per,
                                                             points)
        reduce = K.POINT_KERNELS[curve.name]["reduce"]
        src, count, level = 0, self.items, 0
        while True:  # SUM_PER-point sums per level, as pippenger's window levels; the last writes out[:, 0]
            dst = self.items + (level % 2) * self.level_size
            reduce[_grid(-(-count // K.SUM_PER) * lanes), K.THREADS, stream](
                points, self._dummy_offsets, self._dummy_buckets, 1, 1, 0, 0, 0, src, count, 0, K.SUM_PER, dst, out)
            if count <= K.SUM_PER:
                break
            src, count, level = dst, -(-count // K.SUM_PER), level + 1
