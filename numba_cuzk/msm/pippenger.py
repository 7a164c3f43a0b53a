"""Host side of the MSM: validation, resident bases, cached workspaces, launches.

    result = msm_g1(bases, scalars)          # WindowSums of sum_i scalars[i] * bases[i]
    point = to_point(result)                 # the reference's affine tuple (host Horner)

- ``bases``: a ``Bases`` (``upload_bases`` puts a curve's affine points on the GPU once,
  for many MSMs) or a bare (2L, m) uint32 array of affine points in the curve layout
  (Montgomery coordinates, identity = (0, 0); L = 12 for G1, 24 for G2). The kernels
  read device bases point-major (Fortran order, curve/point_major.py); C-ordered device
  bases are reordered into a copy first, on every call.
- ``scalars``: (8, n) uint32 Fr elements, n <= m (the first n bases are used), canonical
  (default) or Montgomery form (``montgomery=True``: each scalar is multiplied by R^-1).
  Scalars >= r are reduced mod r (k and k mod r give the same point on the subgroup).
- Device bases run on the GPU; host scalars are then copied into the workspace first,
  through pinned memory (staging.py).
  numpy bases run on the CPU backend (cpu.py); device scalars are then copied to the host.
- Result: a ``WindowSums`` (curve, c, sums): the MSM is sum_w 2^(c w) sums[:, w], where
  ``sums`` is (4L, windows) uint32, one XYZZ point (X, Y, ZZ, ZZZ) per window in the curve
  layout (device array on the GPU, numpy on the CPU), windows = ceil(256 / c) for the
  plan's c. ``sums`` is ``out`` if given (shape ``result_shape(n, curve, window)``: no
  allocation at all in steady state); nothing is synchronized. ``to_point`` downloads it
  if needed and combines the windows on the host by Horner's rule (c doublings and one
  addition per window, py-arkworks-bls12381: ~0.4 ms G1, ~0.9 ms G2, where on the device
  each reduce thread paid up to ~250 serial doublings, most of the reduce's time), giving
  the reference's affine tuple (None for the identity). This is sppark's split: its host
  sums the windows too. XYZZ, not affine, on the device: the one inversion of an on-device
  conversion would add ~20 s of kernel compilation per curve. n = 0 gives the identity
  (all-zero sums).

GPU pipeline (kernels.py, on ``stream``): classify -> scan -> scatter (counting sort of
the signed digits by bucket; one launch per plan.scatter_windows windows) -> accumulate
(runs of plan.chunk entries, mixed adds, a partial sum per bucket in the run; and the 0/1
sums) -> combine (each bucket's partial sums, 16 at a time, log16(n / chunk) launches) ->
reduce (running sums per segment of buckets, then each segment's offset multiple: two
launches) -> reduce levels (sums of SUM_PER = 4 points within each window until one per
window is left, copied to ``out``; the 0/1 sums count as window 0's): 5 + scatter's +
log16(n / chunk) + log4(n/64 + segments) launches, 15-33 at 2^16-2^24. The window plan is
plan.py's (override with ``window``/``chunk``/``segment``/``scatter``/``registers``/``affine``).
With plan.affine (G1) the runs are summed in affine coordinates instead (msm/affine.py:
ceil(log2 chunk) rounds of three launches per wave, then the partial sums), and the plain
accumulate kernel adds only the 0/1 path's sums.

0/1 fast path: always on (threshold 0). classify writes a byte per scalar (0, 1, other);
only "other" scalars get digits; the bases of scalars 1 are summed by accumulate's extra
items (ONES_PER = 64 consecutive scalars each, then the level sums): n byte reads when
there are none. Without it every 1 would land in window 0's first bucket, one giant
bucket summed by one thread.

Giant buckets (many equal scalars other than 0/1; the top window, whose digits have only
256 - c (windows - 1) bits, e.g. 9 buckets for n scalars at c = 18): the accumulation's
runs split them into partial sums of ``plan.chunk`` points made in parallel, and combine
adds those in a tree of fan-in 16, so a bucket of n points costs ~15 log16(n / chunk) additions
in a row. (Before the combine, one reduce thread added them all: 2^22 at c = 18 took
1.7 s instead of ~0.1.)

Workspaces: one per (GPU, curve, plan), cached on first use and reused by every call of
that shape (``clear_cache`` drops them); calls of one shape on different streams at the
same time must not share it. Device memory per workspace: entries and digit counts
~ windows * (4 n + 16 * 2^(c-1)) bytes, XYZZ columns (16L bytes each) for
windows * max_chunks chunk sums + n / 64 0/1 sums + a few per reduce thread
(G1 2^24, c = 20: ~0.9 GB + ~2.7 GB), the scalar buffer 32 n bytes.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np
from numba_cuzk import _compat  # noqa: F401,I001  (numba patched before its first use)
from numba import cuda

from numba_cuzk.curve.ark import from_ark, scalar, to_ark
from numba_cuzk.curve.params import G1, G2, CurveParams
from numba_cuzk.curve.point_major import is_point_major, point_major
from numba_cuzk.curve.reference import g1, g2
from numba_cuzk.field import codec
from numba_cuzk.field.params import FQ, FR
from numba_cuzk.field.target import fill_zero, is_device_array
from numba_cuzk.msm import kernels as K
from numba_cuzk.msm.affine import accumulate_affine, affine_buffers
from numba_cuzk.msm.cpu import cpu_msm
from numba_cuzk.msm.indexed import scatter_indexed
from numba_cuzk.msm.plan import SMALL_MSM, Plan, make_plan
from numba_cuzk.msm.staging import stage


@dataclass(frozen=True)
class WindowSums:
    """An MSM result: sum_w 2^(c w) sums[:, w], ``sums`` (4L, windows) uint32 XYZZ columns of
    ``curve`` (device or numpy), windows = ceil(256 / c); or (parts, 4L, windows), the sum
    of ``parts`` such results (a streamed MSM, stream.py). ``to_point`` reads it."""

    curve: CurveParams
    c: int
    sums: object

    def copy_to_host(self, stream=0) -> WindowSums:
        """The same result with numpy sums (asynchronous on ``stream`` into pageable memory,
        as numba's copy_to_host; a host result is returned as is)."""
        if not is_device_array(self.sums):
            return self
        return WindowSums(self.curve, self.c, self.sums.copy_to_host(stream=stream))


@dataclass(frozen=True)
class Bases:
    """Affine points of one curve, (2L, m) uint32, resident where ``points`` lives."""

    curve: CurveParams
    points: object

    @property
    def count(self) -> int:
        return int(self.points.shape[1])

    @property
    def on_device(self) -> bool:
        return is_device_array(self.points)


def upload_bases(points, curve: CurveParams, stream=None) -> Bases:
    """Affine (2L, m) uint32 points -> ``Bases`` on the GPU, point-major (curve/point_major.py:
    the accumulation's random gathers read 3 sectors per G1 base instead of 24): a host
    array is reordered on the host and copied, a device array in C order is reordered
    into a new one (its own memory again, once), a point-major device array kept as is."""
    _check_points(points, curve)
    if not is_device_array(points):
        return Bases(curve, cuda.to_device(point_major(points), stream=stream or 0))
    return Bases(curve, point_major(points, stream=stream))


def host_bases(points, curve: CurveParams) -> Bases:
    """``Bases`` for the CPU backend (a numpy copy of device points)."""
    _check_points(points, curve)
    host = points.copy_to_host() if is_device_array(points) else np.ascontiguousarray(points)
    return Bases(curve, host)


def segment_buckets(n: int) -> int:
    """Buckets per reduce thread of a plan for n scalars without a ``segment`` of its own:
    fewer for small MSMs, whose time is their longest row of additions (kernels.py)."""
    return K.SMALL_SEGMENT_BUCKETS if n <= SMALL_MSM else K.SEGMENT_BUCKETS


@dataclass(frozen=True)
class PointSlots:
    """Columns of a Workspace's ``points`` (4L, total) XYZZ array: [0, ones0) chunk sums
    (max_chunks per window), [ones0, seg0) the 0/1 sums, [seg0, tmp0) segment results
    (``segments`` per window), [tmp0, level0) three slots per reduce thread, then two
    ping-pong regions of ``level_size`` for the level sums. The 0/1 sums lie just before
    window 0's segment results: together they are window 0's points of the first level
    (``first``; the other windows have ``segments``)."""

    segments: int
    ones0: int
    seg0: int
    tmp0: int
    level0: int
    first: int
    level_size: int

    @classmethod
    def of(cls, plan: Plan) -> PointSlots:
        w = plan.windows
        segments = max(1, plan.buckets // (plan.segment or segment_buckets(plan.n)))  # reduce threads per window
        ones0 = w * plan.max_chunks
        seg0 = ones0 + -(-plan.n // K.ONES_PER)
        tmp0 = seg0 + w * segments
        first = seg0 - ones0 + segments
        return cls(segments, ones0, seg0, tmp0, tmp0 + 3 * w * segments, first,
                   _level_items(first, segments, w))  # the first level's, the largest

    @property
    def total(self) -> int:
        return self.level0 + 2 * self.level_size


def workspace_buffers(curve: CurveParams, plan: Plan, host_scalars: bool = True) -> dict:
    """{name: (shape, dtype)} of a Workspace's device buffers (memory plans sum them):
    ``scalars`` (8, n), only with ``host_scalars`` (host scalars are copied into it)."""
    w, b, n = plan.windows, plan.buckets, plan.n
    buffers = {
        "kinds": ((n,), np.uint8), "counts": ((w, b), np.int32), "offsets": ((w, b + 1), np.int32),
        "cursors": ((w, b), np.int32), "chunk_offsets": ((w, b + 1), np.int32),
        "chunk_buckets": ((w, plan.max_chunks), np.int32), "entries": ((w, n), np.uint32),
        "points": ((4 * curve.limbs, PointSlots.of(plan).total), np.uint32),
    }
    if host_scalars:
        buffers["scalars"] = ((FR.limbs, n), np.uint32)
    return buffers | affine_buffers(curve, plan)


def workspace_bytes(curve: CurveParams, plan: Plan, host_scalars: bool = True) -> int:
    """Device bytes of ``Workspace(curve, plan, host_scalars)``."""
    return sum(int(np.prod(shape)) * np.dtype(dtype).itemsize
               for shape, dtype in workspace_buffers(curve, plan, host_scalars).values())


class Workspace:
    """Device buffers of one (curve, plan) (``workspace_buffers``; ``points``' columns:
    ``PointSlots``). It serves MSMs of up to plan.n scalars (``msm(..., workspace=)``);
    ``scalars`` is None without ``host_scalars``."""

    def __init__(self, curve: CurveParams, plan: Plan, host_scalars: bool = True) -> None:
        self.curve, self.plan = curve, plan
        slots = PointSlots.of(plan)
        self.segments, self.ones0, self.seg0, self.tmp0 = slots.segments, slots.ones0, slots.seg0, slots.tmp0
        self.level0, self.first, self.level_size = slots.level0, slots.first, slots.level_size
        self.scalars = None
        for name, (shape, dtype) in workspace_buffers(curve, plan, host_scalars).items():
            setattr(self, name, cuda.device_array(shape, dtype=dtype))
        fill_zero(self.counts)  # scan re-zeroes it
        if plan.affine is not None:
            fill_zero(self.no_entries)


_workspaces: dict = {}


def _cached_workspace(curve: CurveParams, plan: Plan) -> Workspace:
    key = (_device_id(), curve.name, plan)
    if key not in _workspaces:
        _workspaces[key] = Workspace(curve, plan)
    return _workspaces[key]


def clear_cache() -> None:
    _workspaces.clear()


def result_shape(n: int, curve: CurveParams, window: int | None = None) -> tuple[int, int]:
    """Shape of the ``out`` array of a GPU MSM of n scalars: (4L, windows) of the plan."""
    return 4 * curve.limbs, make_plan(n, window, degree=curve.degree).windows


def msm(bases, scalars, *, curve: CurveParams | None = None, montgomery: bool = False,
        window: int | None = None, chunk: int | None = None, segment: int | None = None,
        scatter: int | None = None, registers: int | None = None, affine: int | None = None, out=None,
        stream=None, workspace: Workspace | None = None, mark: Callable[[str], None] | None = None,
        indices=None, offset: int = 0) -> WindowSums:
    """sum_i scalars[i] * bases[i] as its window sums; see the module docstring. With
    ``indices`` (GPU: device (>= n,) int32, bits.py's tail) scalar i multiplies base
    indices[i] - offset instead (indexed.scatter_indexed). With ``workspace`` (GPU; its
    curve, n <= workspace.plan.n) its plan is used (not window/chunk/segment/scatter/
    registers/affine) and nothing is allocated or cached. ``mark`` (GPU, profiling): called with
    each stage's name (STAGES) after its launches, e.g. to record an event."""
    if not isinstance(bases, Bases):
        if curve is None:
            raise ValueError("msm: pass a Bases or the curve of a bare point array")
        bases = Bases(curve, bases)
    curve = bases.curve
    _check_points(bases.points, curve)
    if bases.on_device and not is_point_major(bases.points):  # a copy per call: upload_bases keeps one
        bases = Bases(curve, point_major(bases.points, stream=stream))
    n = _check_scalars(scalars, bases.count if indices is None else K.MAX_SCALARS)  # indices: any base
    plan = make_plan(n, window, chunk, segment, scatter, registers, affine, degree=curve.degree,
                     gpu=bases.on_device) if workspace is None else _workspace_plan(
        workspace, curve, n, (window, chunk, segment, scatter, registers, affine))
    if plan.affine is not None and curve.degree != 1:
        raise ValueError(f"msm: batch-affine accumulation (affine) serves G1 only, not {curve.name}")
    shape = (4 * curve.limbs, plan.windows)
    if out is not None and (out.dtype != np.uint32 or tuple(out.shape) != shape
                            or is_device_array(out) != bases.on_device):
        raise ValueError(f"out must be a uint32 {shape} array on the bases' side, got {out.dtype} {out.shape}")
    if not bases.on_device:
        if indices is not None:
            raise ValueError("msm: indices serve GPU bases only")
        if workspace is not None:
            raise ValueError("msm: a workspace serves GPU bases only")
        host_scalars = scalars.copy_to_host() if is_device_array(scalars) else np.ascontiguousarray(scalars)
        sums = np.zeros(shape, dtype=np.uint32) if out is None else out
        if n:
            cpu_msm(curve, bases.points, host_scalars, montgomery, plan.c, sums)
        else:
            sums[:] = 0
        return WindowSums(curve, plan.c, sums)
    stream = stream or cuda.default_stream()
    sums = cuda.device_array(shape, dtype=np.uint32, stream=stream) if out is None else out
    if n == 0:
        fill_zero(sums, stream)
        return WindowSums(curve, plan.c, sums)
    ws = workspace or _cached_workspace(curve, plan)
    if not is_device_array(scalars):
        if ws.scalars is None or n != plan.n:
            raise ValueError(f"msm: host scalars need a workspace with a scalar buffer for exactly {n}")
        stage(ws.scalars, scalars, stream)  # through pinned memory, on all cores
        scalars = ws.scalars
    if n < plan.n:
        fill_zero(ws.kinds[n:], stream)  # accumulate's 0/1 path reads kinds up to plan.n
    _launch(curve, plan, ws, bases.points, scalars, bool(montgomery), sums, stream, mark or (lambda stage: None),
            indices, offset)
    return WindowSums(curve, plan.c, sums)


def _workspace_plan(workspace: Workspace, curve: CurveParams, n: int, overrides: tuple) -> Plan:
    if any(x is not None for x in overrides):
        raise ValueError("msm: window, chunk, segment, scatter, registers and affine come from the workspace's plan")
    if workspace.curve.name != curve.name or n > workspace.plan.n:
        raise ValueError(f"msm: a {workspace.curve.name} workspace for {workspace.plan.n} scalars cannot serve "
                         f"{n} {curve.name} scalars")
    return workspace.plan


STAGES = ("classify", "scan", "scatter", "accumulate", "combine", "reduce", "levels")


def _launch(curve, plan, ws, bases, scalars, montgomery, out, stream, mark, indices=None, offset=0) -> None:
    kern = K.POINT_KERNELS[curve.name]
    n, c, windows = plan.n, plan.c, plan.windows
    per_scalar = _grid(n)
    per_window = K.SIM_BLOCKS if K.SIMULATOR else windows
    K.classify[per_scalar, K.THREADS, stream](scalars, montgomery, c, windows, ws.kinds, ws.counts)
    mark("classify")
    K.scan[per_window, K.SCAN_THREADS, stream](ws.counts, plan.chunk, ws.offsets, ws.cursors, ws.chunk_offsets,
                                                ws.chunk_buckets)
    mark("scan")
    for first in range(0, windows, plan.scatter_windows):
        stop = min(windows, first + plan.scatter_windows)
        if indices is None:
            K.scatter[per_scalar, K.THREADS, stream](scalars, montgomery, c, first, stop, ws.kinds, ws.offsets,
                                                     ws.cursors, ws.entries)
        else:
            scatter_indexed[per_scalar, K.THREADS, stream](scalars, montgomery, c, first, stop, ws.kinds, ws.offsets,
                                                           ws.cursors, ws.entries, indices, offset)
    mark("scatter")
    lanes = kern["lanes"]  # threads per point (G2: a lane pair)
    # with plan.affine the plain kernel adds the 0/1 path's sums alone (offsets of a window with no
    # entries: every run is empty), and msm/affine.py the runs
    K.accumulate_kernel(curve, plan.registers)[_grid(ws.seg0 * lanes), K.THREADS, stream](
        bases, ws.entries, ws.offsets if plan.affine is None else ws.no_entries, ws.chunk_offsets, plan.chunk,
        ws.kinds, K.ONES_PER, ws.ones0, ws.points)
    if plan.affine is not None:
        accumulate_affine(plan, ws, bases, stream, _grid)
    mark("accumulate")
    reduce = kern["reduce"]
    stride = 1
    while stride < -(-n // plan.chunk) + 1:  # a bucket overlaps at most ceil(n / chunk) + 1 runs
        reduce[_grid(ws.ones0 * lanes), K.THREADS, stream](ws.points, ws.chunk_offsets, ws.chunk_buckets, c,
                                                   plan.max_chunks, -1, 0, 0, stride, 0, 0, K.COMBINE_PER, 0, out)
        stride *= K.COMBINE_PER
    mark("combine")
    items = windows * ws.segments
    for part in (0, 1):  # the running sums, then the offset multiples in step (K.reduce's docstring)
        reduce[_grid(items * lanes), K.THREADS, stream](ws.points, ws.chunk_offsets, ws.chunk_buckets, c,
                                                plan.max_chunks, ws.segments, ws.seg0, ws.tmp0, part, 0, 0, 1, 0, out)
    mark("reduce")
    src, first, count = ws.ones0, ws.first, ws.segments  # window 0: the 0/1 sums and its segments
    level = 0
    while True:  # levels of SUM_PER-point sums per window; the last also writes ``out``
        dst = ws.level0 + (level % 2) * ws.level_size
        reduce[_grid(_level_items(first, count, windows) * lanes), K.THREADS, stream](
            ws.points, ws.chunk_offsets, ws.chunk_buckets, c, plan.max_chunks, 0, ws.seg0, ws.tmp0, src, first,
            count, K.SUM_PER, dst, out)
        if first <= K.SUM_PER and count <= K.SUM_PER:
            break
        src, first, count, level = dst, -(-first // K.SUM_PER), -(-count // K.SUM_PER), level + 1
    mark("levels")


def _level_items(first: int, count: int, windows: int) -> int:
    """Threads of a level: window 0's ceil(first / SUM_PER), the others' ceil(count / SUM_PER)."""
    return -(-first // K.SUM_PER) + (windows - 1) * -(-count // K.SUM_PER)


def _grid(items: int) -> int:
    """Blocks of a grid-stride kernel: one thread per item on the GPU, a few simulated."""
    return K.SIM_BLOCKS if K.SIMULATOR else max(1, (items + K.THREADS - 1) // K.THREADS)


def msm_g1(bases, scalars, **options):
    """msm over G1 (bare arrays are read as G1 points)."""
    return msm(bases, scalars, curve=G1, **options) if not isinstance(bases, Bases) else msm(bases, scalars, **options)


def msm_g2(bases, scalars, **options):
    """msm over G2 (bare arrays are read as G2 points)."""
    return msm(bases, scalars, curve=G2, **options) if not isinstance(bases, Bases) else msm(bases, scalars, **options)


def to_point(result: WindowSums):
    """A ``WindowSums`` (host, or device: then downloaded) -> the MSM as the reference's
    affine tuple, None for the identity: Horner's rule over the windows, top first, in
    arkworks (c doublings and one addition per window) on the affine window sums; sums of
    (parts, 4L, windows) (a streamed MSM's chunks) are first added up by window."""
    degree = result.curve.degree
    step = scalar(1 << result.c)
    sums = result.copy_to_host().sums
    parts = [_affine_sums(part, result.curve) for part in sums.reshape(-1, *sums.shape[-2:])]
    acc = None
    for w in reversed(range(sums.shape[-1])):
        window = to_ark(parts[0][w], degree)
        for part in parts[1:]:
            window = window + to_ark(part[w], degree)
        acc = window if acc is None else acc * step + window
    return from_ark(acc, degree)


def _affine_sums(sums: np.ndarray, curve: CurveParams) -> list:
    """(4L, windows) XYZZ columns -> reference affine tuples (None: ZZ = 0), in Python ints
    with one field inversion for all (Montgomery's trick): ~0.2 ms (G1) to 0.4 ms (G2) for
    16 windows, steadily. The coordinates stay in Montgomery form, as x = X / ZZ and
    y = Y / ZZZ cancel its factor R; codec's conversion (layout.limbs_to_points) is a
    parallel njit whose thread pool took 1-30 ms per call on a busy host."""
    ref = g1 if curve.degree == 1 else g2
    F, L, H = ref.F, curve.limbs, FQ.limbs
    coords = []
    for k in range(4):
        parts = [[v % F.p for v in codec.from_limbs(np.ascontiguousarray(sums[k * L + j * H:k * L + (j + 1) * H]), FQ)]
                 for j in range(curve.degree)]
        coords.append(parts[0] if curve.degree == 1 else list(zip(*parts)))
    X, Y, ZZ, ZZZ = coords
    live = [w for w in range(sums.shape[1]) if ZZ[w] != ref.zero]
    # ZZ^3 = ZZZ^2 on every XYZZ point, so ZZZ = 0 with ZZ != 0 is no point: the sums came
    # corrupt from the device (or unwritten: compile's tasks launch nothing); named, not a
    # ZeroDivisionError of the batch inversion
    broken = [w for w in live if ZZZ[w] == ref.zero]
    if broken:
        raise ValueError(f"{curve.name} MSM: window sum {broken[0]} is not a point (ZZ != 0, ZZZ = 0)")
    inverses = _batch_inverse(F, ref.one, [d for w in live for d in (ZZ[w], ZZZ[w])])
    points = [None] * sums.shape[1]
    for i, w in enumerate(live):
        points[w] = (F.mul(X[w], inverses[2 * i]), F.mul(Y[w], inverses[2 * i + 1]))
    return points


def _batch_inverse(F, one, values: list) -> list:
    """1 / v for each nonzero v: one inversion and 3 products per value."""
    prefix, acc = [], one
    for v in values:
        prefix.append(acc)
        acc = F.mul(acc, v)
    inv = F.inverse(acc) if values else one
    out = [one] * len(values)
    for i in range(len(values) - 1, -1, -1):
        out[i] = F.mul(inv, prefix[i])
        inv = F.mul(inv, values[i])
    return out


def _device_id():
    return cuda.get_current_device().id if not K.SIMULATOR else 0


def _check_points(points, curve: CurveParams) -> None:
    shape = tuple(points.shape)
    if points.dtype != np.uint32 or len(shape) != 2 or shape[0] != 2 * curve.limbs:
        raise ValueError(f"{curve.name} bases must be uint32 of shape ({2 * curve.limbs}, m), got "
                         f"{points.dtype} {shape}")


def _check_scalars(scalars, count: int) -> int:
    shape = tuple(scalars.shape)
    if scalars.dtype != np.uint32 or len(shape) != 2 or shape[0] != FR.limbs:
        raise ValueError(f"scalars must be uint32 of shape ({FR.limbs}, n), got {scalars.dtype} {shape}")
    if shape[1] > count:
        raise ValueError(f"{shape[1]} scalars for {count} bases")
    if shape[1] > K.MAX_SCALARS:
        raise ValueError(f"{shape[1]} scalars: an MSM takes at most {K.MAX_SCALARS} (2^30)")
    return int(shape[1])
