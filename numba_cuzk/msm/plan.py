"""Window plan of one MSM: window bits c, window count, buckets, chunk size.

Signed (Booth) digits: a canonical scalar k < r < 2^255 is written k = sum_w d_w 2^(c w)
with d_w in [-2^(c-1), 2^(c-1)] (digits.py), so window w needs 2^(c-1) buckets (bucket
|d| - 1; the sign flips the base's y). The top window absorbs the last carry when
c * windows >= 256, hence ``windows = ceil(256 / c)``.

Cost model (in mixed additions, the unit of the bucket phase):
    windows * (n + REDUCE_WEIGHT * 2^(c-1))
n adds to fill the buckets, and the running-sum reduction's 2 full XYZZ additions per
bucket (12M+2S each, against 8M+2S for a mixed add: weight 2 * 1.4). It is minimized over
c in [MIN_BITS, MAX_BITS]; at 2^20 that picks c = 16 (16 windows, 32768 buckets), at 2^24
c = 20 (13 windows). The windows' combination (Horner: ~256 doublings, on the host: see
pippenger.to_point) hardly depends on c.

Chunks: the accumulation gives each thread a run of ``chunk`` consecutive entries of a
window in bucket order, and the thread writes one partial sum per bucket the run holds.
Every thread of a warp adds exactly ``chunk`` bases: with runs aligned to buckets instead
(at most ``chunk`` points of one bucket each), random scalars' Poisson-sized buckets left
a warp ~69% busy, each waiting for its longest chunk. Each bucket a run splits is one
more partial sum for the combine to add (a full XYZZ addition), so runs span
RUN_BUCKETS mean buckets (n / 2^(c-1) entries each): measured on the H200, runs of 4 mean buckets against 1 (chunk 128 against 32) took G1 2^24 from 188.5 to
168.4 ms (the combine and its partials), G1 2^20 14.5 -> 13.6, G2 2^20 50.1 -> 47.7. But
no longer than keeps MIN_RUNS runs in all (fewer threads leave SMs idle: G2 2^16, 20
windows, chunk 16 9.9 ms, 64 10.3, 256 14.0), and never shorter than one mean bucket. A
giant bucket (all scalars equal) spans many runs; its partial sums are added in a tree
by the reduction's combine (pippenger.py's docstring).

Segment: buckets per reduce thread (None: pippenger.segment_buckets, 4 up to 2^16 scalars
and 32 above). Each thread adds ~2 x segment bucket sums in a row, then ~2 (c - 1)
operations for its offset multiple, so a smaller segment shortens the reduction's critical
path and raises its thread count (and the offset work, which is per thread): a tuning
knob for bench/msm.py's --sweep, not a cost-model choice.

Small G2: the model counts the reduction's running sums but not each reduce thread's
offset multiple (~2 (c - 1) additions), nor that a small MSM's time is its longest row of
additions rather than their number. For G2, whose additions take ~4x G1's, that made c too
wide below 2^17: measured on an H100 (bench/NOTES.md, 2026-12-05, the day's device
session), G2 2^14 at c = 9, 10, 11 (the model's), 12: 3.15, 2.66, 3.69, 4.22 ms; 2^16 at
c = 10, 11, 12, 13 (the model's): 5.17, 6.22, 6.14, 6.67 ms. So a G2 plan of at most
SMALL_MSM scalars on the GPU takes at most SMALL_G2_BITS. Not on the CPU backend, whose
MSM is throughput, not rows of latency: on the 2-core CPU (msm/cpu.py, distinct bases) G2
2^14 at c = 10, 11 took 140, 138 ms, 2^16 at c = 10, 12, 13 520-551, 465-490, 480-487 ms.
G1's small MSMs were flat within noise over c on the H100 (2^14: 2.3-2.4 ms at c = 8..12)
and keep the model's choice.

Scatter: windows per scatter launch. Each launch reads every scalar again but writes the
entries of its windows only, 4n bytes per window at random slots, which L2 (50 MB on the
H200) merges into whole sectors while it holds them. So a launch takes as many windows
as SCATTER_BYTES of entries hold (at least one). Measured on the H200 (scatter stage,
ms): G1 2^24 (67 MB a window) 22.1 in one launch, 12.5 two windows a
launch, 11.7 one; G1 2^20 (4 MB) 0.74 / 0.55 / 0.90; G2 2^16 (0.26 MB) 0.13 / 0.55 /
1.03. Past 2^24 (unmeasured: a window far beyond L2, the scalars read once more per
window) one launch as before. Override ``scatter`` to tune (bench/msm.py --sweep).

Registers: a cap on the accumulation kernel's registers per thread (None: ptxas's own
choice, 168 for G1). The accumulation is latency-bound (ncu: 2.93 warps per scheduler,
IPC 1.22 of 4, a fixed-latency dependency its top stall), so more warps per SM may beat
the local-memory traffic of what the cap spills: 128 registers let an SM hold 4 blocks of
128 threads instead of 3, 96 five. A sweep's option (kernels.accumulate_kernel compiles a
capped instance on first use), not a cost-model choice.

Affine: the runs summed in affine coordinates with batched inversions (msm/affine.py, G1
only) instead of XYZZ mixed additions: ~6.5 Fq products an addition against 10, ~480
bytes of memory traffic against ~100, and a Fermat inversion's latency (~0.3 ms) per round,
ceil(log2 chunk) rounds per wave of 2^affine entries (a scratch row of 2L words each:
2^26 rows are 6.4 GB for G1). None: the plain XYZZ accumulation. Off by default until the
H200 has measured it (bench.msm --variant affine=26).
"""

from __future__ import annotations

from dataclasses import dataclass

SCALAR_BITS = 255  # r < 2^255
DIGIT_BITS = SCALAR_BITS + 1  # room for the top window's carry
MIN_BITS, MAX_BITS = 2, 24
# the widest window the cost model picks: at 2^27 it prefers c = 22 (1681 M modelled
# additions) to 23 (1751 M) and 24 (1733 M); wider ones are for sweeps (bench.msm --sweep
# window=..., Prover(window=)), whose G1 workspace at 2^27, c = 24, is ~19 GB of points
CHOSEN_BITS = 22
REDUCE_WEIGHT = 2.8
MIN_CHUNK, MAX_CHUNK = 8, 256
RUN_BUCKETS = 4  # mean buckets per run (see Chunks above)
MIN_RUNS = 1 << 16  # runs of all windows, at least
SCATTER_BYTES = 32 << 20  # entries a scatter launch writes (see Scatter above)
MIN_REGISTERS, MAX_REGISTERS = 64, 255  # the accumulation's register cap (see Registers above)
MIN_AFFINE, MAX_AFFINE = 1, 30  # log2 of a batch-affine wave's scratch rows (see Affine above)
# a GPU MSM of at most SMALL_MSM scalars is its longest row of additions, not their number:
# short reduce segments (pippenger.segment_buckets) and, for G2, a narrower window (Small G2)
SMALL_MSM, SMALL_G2_BITS = 1 << 16, 10


@dataclass(frozen=True)
class Plan:
    """c: window bits; windows: ceil(256 / c); buckets: 2^(c-1) per window;
    chunk: the points one accumulation thread sums (a run); max_chunks: bound on the
    partial sums of one window (each run gives one, plus one per bucket that begins
    inside a run: <= ceil(n / chunk) + buckets); segment, scatter, registers, affine: see
    above."""

    n: int
    c: int
    chunk: int
    segment: int | None = None
    scatter: int | None = None
    registers: int | None = None
    affine: int | None = None

    @property
    def scatter_windows(self) -> int:
        """Windows per scatter launch (see Scatter above)."""
        if self.scatter is not None:
            return min(self.windows, self.scatter)
        window_bytes = 4 * self.n
        if window_bytes > 2 * SCATTER_BYTES:
            return self.windows
        return min(self.windows, max(1, SCATTER_BYTES // window_bytes))

    @property
    def windows(self) -> int:
        return -(-DIGIT_BITS // self.c)

    @property
    def buckets(self) -> int:
        return 1 << (self.c - 1)

    @property
    def max_chunks(self) -> int:
        return -(-self.n // self.chunk) + self.buckets


def cost(n: int, c: int) -> float:
    """Modelled additions of the bucket phase (see the module docstring)."""
    return -(-DIGIT_BITS // c) * (n + REDUCE_WEIGHT * (1 << (c - 1)))


def best_window(n: int, degree: int = 1, gpu: bool = True) -> int:
    """The c in [MIN_BITS, CHOSEN_BITS] of least ``cost`` (the smaller c on ties); for a GPU
    G2 MSM (``degree`` 2) of at most SMALL_MSM scalars, at most SMALL_G2_BITS (see Small G2)."""
    c = min(range(MIN_BITS, CHOSEN_BITS + 1), key=lambda c: (cost(max(n, 1), c), c))
    return min(c, SMALL_G2_BITS) if gpu and degree == 2 and n <= SMALL_MSM else c


def make_plan(n: int, window: int | None = None, chunk: int | None = None, segment: int | None = None,
              scatter: int | None = None, registers: int | None = None, affine: int | None = None, *,
              degree: int = 1, gpu: bool = True) -> Plan:
    """The plan for n scalars of a G1 (``degree`` 1) or G2 (2) MSM on the GPU (or, ``gpu``
    False, the CPU backend); ``window``, ``chunk``, ``segment``, ``scatter``, ``registers``
    and ``affine`` override the choices (tuning)."""
    c = best_window(n, degree, gpu) if window is None else window
    if not MIN_BITS <= c <= MAX_BITS:
        raise ValueError(f"window bits must be in [{MIN_BITS}, {MAX_BITS}], got {c}")
    if chunk is None:
        mean = max(1, n >> (c - 1))
        most = max(1, -(-DIGIT_BITS // c) * n // MIN_RUNS)  # entries per run that keep MIN_RUNS runs
        longest = min((RUN_BUCKETS * mean - 1).bit_length(), most.bit_length() - 1)
        chunk = min(MAX_CHUNK, max(MIN_CHUNK, 1 << max((mean - 1).bit_length(), longest)))
    if chunk < 1:
        raise ValueError(f"chunk must be >= 1, got {chunk}")
    if segment is not None and (segment < 1 or segment & (segment - 1)):
        raise ValueError(f"segment must be a power of two, got {segment}")
    if scatter is not None and scatter < 1:
        raise ValueError(f"scatter must be >= 1 windows per launch, got {scatter}")
    if registers is not None and not MIN_REGISTERS <= registers <= MAX_REGISTERS:
        raise ValueError(f"registers must be in [{MIN_REGISTERS}, {MAX_REGISTERS}], got {registers}")
    if affine is not None and not MIN_AFFINE <= affine <= MAX_AFFINE:
        raise ValueError(f"affine (log2 of a wave's scratch rows) must be in [{MIN_AFFINE}, {MAX_AFFINE}], got {affine}")
    return Plan(n=n, c=c, chunk=chunk, segment=segment, scatter=scatter, registers=registers, affine=affine)
