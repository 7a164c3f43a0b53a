"""MSM on the GPU: G1 at 2^16-2^24, G2 at 2^16-2^22, each result checked, each size timed two
ways, against sppark's msm_t on the same inputs in the same call (--sppark).

Records (bench/results/msm/, ms), params.timing saying how each was timed:
- msm_<curve>_logK, ``device-throughput``: bases resident, scalars on the device, CUDA
  events back to back: the kernels up to the window sums, without the host's Horner
  combination; stages_ms: each stage's device ms (classify, scan, scatter, accumulate,
  combine, reduce, levels; events between them); floor_ms = windows * n / add_rate and the
  ratio to it.
- msm_<curve>_logK_call, ``call-latency``: one call at a time to an affine point
  (to_point(msm(...)) with the scalars on the device), the host's work included; peer:
  sppark's invoke with device scalars (same inputs, same call); arkworks_ms where timed.
- msm_<curve>_logK_upload, ``call-latency``: the same with host scalars (pageable memory,
  staged through pinned buffers: msm/staging.py), host scalars in, affine point out, for G1
  and G2; peer: sppark's invoke with host scalars; params host_combine_ms (to_point alone)
  and the upload's parts (stage_ms, host_copy_gbs, dma_gbs: upload_parts).
- msm_g1_logK_bits (90% of the scalars in {0, 1}); msm_g1_add_rate / msm_g2_add_rate (G
  adds/s: the accumulate kernel on perfectly balanced buckets of 32 random bases, the MSM's
  own mixed-add rate with its gathers), both device-throughput.

Bases: P_i = T1[i mod 4096] + T2[i div 4096], T1 = (1..4096) Q1 and T2 = (1..) Q2 for random
Q1, Q2 (arkworks additions), summed on the GPU and made affine by the curve package's
batched inversion: n distinct points, never a tiled small set. Every result is checked
before timing against the closed form sum s_i k_i G (bench/msm_check.py), and against
arkworks' multiexp_unchecked at 2^16 and 2^20 (G1) and 2^16 (G2; the 0/1 scalars too);
sppark's result must equal ours. --check-g1 / --check-g2 check more sizes without timing
them (the prover's 2^25-2^27). Usage:
    python3 -m bench.msm [--out FILE] [--g1 16,18,20,22,24] [--g2 16,20,22] [--runs 5]
                         [--sppark /tmp/sppark_msm] [--check-g1 25,26,27] [--sweep KEY=V1,V2,...] ...

--sweep times each size again with msm's plan override KEY (window, chunk, segment, scatter,
registers or affine: see plan.py) set to each value, its result checked against the default plan's,
recorded as msm_<curve>_logK_<KEY><V> (median of --runs, spread_pct, stages_ms); --variant
KEY=V,KEY=V times one plan with several overrides together
(msm_<curve>_logK_<KEY><V>_<KEY><V>); e.g. ``--g1 "" --g2 16,20,22 --sweep
segment=16,32,128 --sweep chunk=16,64``; ``--sweep threads=64,256``: threads per block of
every launch (kernels.THREADS); ``--sweep window_delta=-1,1``: the window bits each size's
plan picks, plus each value (recorded as msm_<curve>_logK_window<c>), to check the cost
model's choice at every size in one run. No recompilation (but for registers, whose capped
accumulate kernel compiles on first use): one run tunes them all.

--plans-only (bench_plans): for each size only the default plan and the --variant plans,
each result checked against the closed form, device-throughput with the spread; e.g. the
2^27 H MSM's variants (bench/NOTES.md, issue 35 part 2):
    python3 -m bench.msm --g1 24,27 --g2 "" --runs 3 --plans-only --variant scatter=1 \
        --variant window=20,scatter=1 --variant registers=128 ...
"""

from __future__ import annotations

import argparse
import os
import subprocess
import time
from functools import lru_cache

import numpy as np
from numba import cuda

from bench import common, msm_check
from numba_cuzk.curve import kernels as curve_kernels
from numba_cuzk.curve.params import G1, G2
from numba_cuzk.curve.points import point_ops
from numba_cuzk.field.target import local_u32
from numba_cuzk.groth16.memory import flush_deferred_frees
from numba_cuzk.msm import clear_cache, msm, result_shape, to_point, upload_bases
from numba_cuzk.msm import kernels as K
from numba_cuzk.msm.plan import make_plan
from numba_cuzk.msm.staging import copy_words, stage
from tests.msm import inputs

TABLE_LOG = 12
ARK_CHECK = {"G1": (16, 20), "G2": (16,)}
ARK_PEER = (16, 20)
RATE_LOG, RATE_CHUNK = 20, 32
PLAN_KEYS = ("window", "chunk", "segment", "scatter", "registers", "affine")  # msm's plan overrides (plan.py)
# and threads per block; window bits relative to the plan's
SWEEP_KEYS = (*PLAN_KEYS, "threads", "window_delta")


@lru_cache(maxsize=None)
def _gather(curve):
    """pairs[:, 2i], pairs[:, 2i+1] = XYZZ of T1[i mod |T1|], T2[i div |T1|]."""
    P = point_ops(curve)
    A, X = 2 * P.limbs, 4 * P.limbs
    load, store, from_affine = P.load, P.store, P.xyzz_from_affine

    @cuda.jit
    def gather(t1, t2, log_t1, first, n, pairs):
        i = cuda.grid(1)
        if i < n:
            a = local_u32(A)
            x = local_u32(X)
            load(a, t1, (first + i) & ((1 << log_t1) - 1), 2)
            from_affine(x, a)
            store(pairs, 2 * i, x, 4)
            load(a, t2, (first + i) >> log_t1, 2)
            from_affine(x, a)
            store(pairs, 2 * i + 1, x, 4)

    return gather


@cuda.jit
def _put_columns(dst, src, first):
    """dst[:, first + i] = src[:, i]: a chunk of bases into the whole set."""
    i = cuda.grid(1)
    if i < src.shape[1]:
        for row in range(src.shape[0]):
            dst[row, first + i] = src[row, i]


CHUNK_LOG = 22  # bases built 2^22 at a time: the XYZZ pairs of 2^27 G2 bases at once would take 154 GB


class BaseSet:
    """Tables of a curve (arkworks points and device limbs) and bases built from them."""

    def __init__(self, curve, max_log: int) -> None:
        self.curve = curve
        self.t1 = inputs.ark_multiples(curve, 1 << TABLE_LOG, 101)
        self.t2 = inputs.ark_multiples(curve, 1 << max(0, max_log - TABLE_LOG), 202)
        self.d1 = cuda.to_device(inputs.ark_points_to_limbs(self.t1, curve))
        self.d2 = cuda.to_device(inputs.ark_points_to_limbs(self.t2, curve))

    def device(self, n: int):
        """(2L, n) affine bases on the GPU, built CHUNK_LOG at a time."""
        if n <= 1 << CHUNK_LOG:
            return self._chunk(0, n)
        out = cuda.device_array((2 * self.curve.limbs, n), dtype=np.uint32)
        for first in range(0, n, 1 << CHUNK_LOG):
            chunk = self._chunk(first, min(1 << CHUNK_LOG, n - first))
            _put_columns[(chunk.shape[1] + 127) // 128, 128](out, chunk, first)
        cuda.synchronize()
        return out

    def _chunk(self, first: int, n: int):
        """Bases first..first+n-1 (the reduce kernel's sum mode adds the pairs)."""
        X = 4 * self.curve.limbs
        pairs = cuda.device_array((X, 3 * n), dtype=np.uint32)
        blocks = (n + 127) // 128
        _gather(self.curve)[blocks, 128](self.d1, self.d2, TABLE_LOG, first, n, pairs)
        dummy_offsets = cuda.to_device(np.zeros((1, 2), dtype=np.int32))
        dummy_out = cuda.device_array((X, 1), dtype=np.uint32)
        dummy_buckets = cuda.to_device(np.zeros((1, 1), dtype=np.int32))
        kernels = K.POINT_KERNELS[self.curve.name]
        kernels["reduce"][-(-n * kernels["lanes"] // K.THREADS), K.THREADS](
            pairs, dummy_offsets, dummy_buckets, 1, 0, 0, 0, 0, 0, 2 * n, 0, 2, 2 * n, dummy_out)
        out = cuda.device_array((2 * self.curve.limbs, n), dtype=np.uint32)
        curve_kernels.to_affine(out, pairs[:, 2 * n:], self.curve, "xyzz")
        cuda.synchronize()
        return out

    def ark(self, n: int) -> list:
        mask = (1 << TABLE_LOG) - 1
        return [self.t1[i & mask] + self.t2[i >> TABLE_LOG] for i in range(n)]


def add_rate(curve, bases, runs: int) -> float:
    """Mixed adds per second (G/s) of the accumulate kernel on 2^RATE_LOG random bases in
    buckets of exactly RATE_CHUNK: the MSM's bucket step without imbalance or sorting."""
    ms = common.median(common.device_time_ms(accumulate_launch(curve, bases), runs=runs, warmup=1))
    return (1 << RATE_LOG) / (ms * 1e-3) / 1e9


def accumulate_launch(curve, bases, log_n: int = RATE_LOG):
    """One launch of the accumulate kernel over 2^log_n bases in buckets of RATE_CHUNK
    (a callable; add_rate times it, bench.counters reads its counters)."""
    n = 1 << log_n
    chunks = n // RATE_CHUNK
    rng = np.random.default_rng(5)
    entries = rng.permutation(n).astype(np.uint32).reshape(1, n)
    entries[0, RATE_CHUNK - 1::RATE_CHUNK] |= K.LAST_BIT  # each bucket's last entry
    offsets = cuda.to_device((np.arange(chunks + 1, dtype=np.int32) * RATE_CHUNK).reshape(1, -1))
    chunk_offsets = cuda.to_device(np.arange(chunks + 1, dtype=np.int32).reshape(1, -1))
    d_entries = cuda.to_device(entries)
    kinds = cuda.to_device(np.zeros(1, dtype=np.uint8))  # one scalar 0: the 0/1 item sums nothing
    points = cuda.device_array((4 * curve.limbs, chunks + 1), dtype=np.uint32)
    kernels = K.POINT_KERNELS[curve.name]
    blocks = -(-chunks * kernels["lanes"] // K.THREADS)
    kernel = kernels["accumulate"]
    return lambda: kernel[blocks, K.THREADS](bases, d_entries, offsets, chunk_offsets, RATE_CHUNK, kinds,
                                             K.ONES_PER, chunks, points)


def time_msm(bases, scalars, out, runs: int) -> float:
    """Device ms of the MSM's kernels (CUDA events): the window sums, not their combination."""
    return common.median(common.device_time_ms(lambda: msm(bases, scalars, out=out), runs=runs, warmup=2))


def stage_ms(bases, scalars, out, runs: int, **options) -> dict[str, float]:
    """Device ms of each stage of the MSM's launches (pippenger.STAGES), medians over runs
    after a warm-up: CUDA events recorded between the stages; ``options``: msm's plan
    overrides."""
    per_run = []
    for _ in range(runs + 1):
        events = []

        def mark(stage: str) -> None:
            events.append((stage, cuda.event()))
            events[-1][1].record()

        start = cuda.event()
        start.record()
        msm(bases, scalars, out=out, mark=mark, **options)
        events[-1][1].synchronize()
        edges = [start] + [e for _, e in events]
        per_run.append({stage: a.elapsed_time(b) for (stage, _), a, b in zip(events, edges, edges[1:])})
    return {stage: round(common.median([run[stage] for run in per_run[1:]]), 3) for stage in per_run[0]}


def time_msm_to_point(bases, scalars, out, runs: int) -> tuple[float, float]:
    """(wall ms of to_point(msm(...)): upload of host scalars, kernels, download of the window
    sums, host Horner combination; wall ms of that combination alone), medians after warm-up."""
    def wall(call) -> float:
        cuda.synchronize()
        t0 = time.perf_counter()
        call()
        return (time.perf_counter() - t0) * 1e3

    for _ in range(2):
        to_point(msm(bases, scalars, out=out))
    total = common.median([wall(lambda: to_point(msm(bases, scalars, out=out))) for _ in range(runs)])
    host = msm(bases, scalars, out=out).copy_to_host()
    return total, common.median([wall(lambda: to_point(host)) for _ in range(runs)])


def upload_parts(scalars: np.ndarray, runs: int) -> dict:
    """Where the upload's time goes (medians): stage_ms (wall of staging.stage into a device
    buffer, its DMAs awaited), host_copy_gbs (staging.copy_words into a pinned buffer of the
    whole size: the host copy alone) and dma_gbs (that pinned buffer to the device)."""
    device = cuda.device_array_like(scalars)
    pinned = cuda.pinned_array(scalars.shape, dtype=np.uint32)
    flat, gb = scalars.reshape(-1), scalars.nbytes / 1e9

    def wall(call) -> float:
        t0 = time.perf_counter()
        call()
        cuda.synchronize()
        return time.perf_counter() - t0

    def stage_once():
        stage(device, scalars, cuda.default_stream())  # as msm passes it: asynchronous copies

    copy = lambda: copy_words(pinned.reshape(-1), flat, 0, flat.size)  # noqa: E731
    dma = lambda: device.copy_to_device(pinned)  # noqa: E731
    for call in (stage_once, copy, dma):
        call()
    return {"stage_ms": round(1e3 * common.median([wall(stage_once) for _ in range(runs)]), 3),
            "host_copy_gbs": round(gb / common.median([wall(copy) for _ in range(runs)]), 2),
            "dma_gbs": round(gb / common.median([wall(dma) for _ in range(runs)]), 2)}


def ark_time_ms(points, scalars, curve, runs: int = 3) -> float:
    """Wall ms of arkworks' multiexp_unchecked (Rayon: all cores), scalars converted first."""
    scalars = inputs.ark_scalars(scalars)
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        inputs.ark_msm(points, scalars, curve)
        times.append((time.perf_counter() - t0) * 1e3)
    return common.median(times)


def parse_sweep(items: list[str]) -> list[tuple[str, int]]:
    """["segment=16,32", ...] -> [("segment", 16), ("segment", 32), ...]."""
    out = []
    for item in items:
        key, _, values = item.partition("=")
        if key not in SWEEP_KEYS or not values:
            raise SystemExit(f"--sweep wants KEY=V1,V2 with KEY in {SWEEP_KEYS}, got {item!r}")
        out += [(key, int(v)) for v in values.split(",")]
    return out


def parse_variant(spec: str) -> dict[str, int]:
    """"window=20,scatter=1" -> {"window": 20, "scatter": 1}: one plan, its overrides together."""
    overrides = {}
    for item in spec.split(","):
        key, _, value = item.partition("=")
        if key not in PLAN_KEYS or not value.lstrip("-").isdigit() or key in overrides:
            raise SystemExit(f"--variant wants KEY=V[,KEY=V...] with distinct KEYs in {PLAN_KEYS}, got {spec!r}")
        overrides[key] = int(value)
    return overrides


def variant_name(overrides: dict[str, int]) -> str:
    """{"window": 20, "scatter": 1} -> "window20_scatter1" (a record name's suffix)."""
    return "_".join(f"{key}{value}" for key, value in overrides.items())


def variant_record(curve, log_n: int, bases, d_scalars, want, runs: int, device: str, params: dict,
                   overrides: dict[str, int], rate: float | None = None) -> dict:
    """msm_<curve>_logK[_<variant>]: the plan with ``overrides`` (none: the plain plan), its
    result equal to ``want`` (the closed form's, or the plain plan's) before it is timed
    (device-throughput, median of ``runs`` after a warm-up, spread_pct = (max - min) /
    median of them), stages_ms; floor_ms and vs_floor where the add ``rate`` (G/s) is known."""
    n = 1 << log_n
    plan = make_plan(n, **overrides, degree=curve.degree)
    out = cuda.device_array(result_shape(n, curve, plan.c), dtype=np.uint32)  # its window count
    label = f"{curve.name} 2^{log_n} {variant_name(overrides) or 'plain'}"
    if to_point(msm(bases, d_scalars, out=out, **overrides)) != want:
        raise AssertionError(f"{label}: the result differs from the {params['checked']}")
    times = common.device_time_ms(lambda: msm(bases, d_scalars, out=out, **overrides), runs=runs, warmup=1)
    ms = common.median(times)
    stages = stage_ms(bases, d_scalars, out, runs, **overrides)
    plan_params = {"window": plan.c, "windows": plan.windows, "chunk": plan.chunk, "segment": plan.segment,
                   "scatter_windows": plan.scatter_windows, "registers": plan.registers, "affine": plan.affine}
    spread = {"runs": runs, "stat": "median", "spread_pct": round(100 * (max(times) - min(times)) / ms, 2),
              "runs_ms": [round(t, 3) for t in times]}
    floor = {}
    if rate:
        floor_ms = plan.windows * n / (rate * 1e9) * 1e3
        floor = {"floor_ms": round(floor_ms, 3), "vs_floor": round(ms / floor_ms, 2)}
    print(f"{label}: {ms:.2f} ms (spread {spread['spread_pct']}%), stages {stages}", flush=True)
    name = "_".join(x for x in (f"msm_{curve.name.lower()}_log{log_n}", variant_name(overrides)) if x)
    return common.record(name, ms, "ms", device, params | plan_params | spread | floor | {"stages_ms": stages},
                         timing=common.DEVICE_THROUGHPUT)


def bench_plans(curve, logs: list[int], variants: list[dict[str, int]], runs: int, device: str, rng,
                results) -> list[dict]:
    """--plans-only: per size, random scalars on bases resident on the device, the plain plan
    and each of ``variants`` (plan overrides), each checked against the closed form and
    timed (variant_record); no add rate, call-latency records, 0/1 scalars or peers. Each
    size's records are written as soon as it is measured."""
    records = []
    base_set = BaseSet(curve, max(logs))
    for log_n in logs:
        first = len(records)
        t0 = time.perf_counter()
        n = 1 << log_n
        bases = upload_bases(base_set.device(n), curve)
        build_s = time.perf_counter() - t0
        scalars = inputs.random_scalar_limbs(n, rng)
        d_scalars = cuda.to_device(scalars)
        t1 = time.perf_counter()
        want = msm_check.closed_form(curve, scalars)
        params = {"checked": "closed form (sum s_i k_i G)", "bases_build_s": round(build_s, 1),
                  "closed_form_s": round(time.perf_counter() - t1, 1), "scalars": "random, device"}
        print(f"{curve.name} 2^{log_n}: bases built in {build_s:.1f} s, closed form in "
              f"{params['closed_form_s']} s", flush=True)
        for overrides in [{}, *variants]:
            records.append(variant_record(curve, log_n, bases, d_scalars, want, runs, device, params, overrides))
            clear_cache()  # one workspace per plan (2^27, c = 24: 37.5 GB): freed before the next is made
            flush_deferred_frees()
        common.write(records[first:], "msm", results)
        print(f"{curve.name} 2^{log_n}: {len(records) - first} plans [{time.perf_counter() - t0:.1f} s]", flush=True)
        del bases, d_scalars
    return records


def bench_curve(curve, logs: list[int], runs: int, device: str, bits: bool, rng, results,
                sweep: list[tuple[str, int]] = (), sppark: str | None = None, arkworks: bool = True,
                variants: list[dict[str, int]] = ()) -> list[dict]:
    """Records of one curve, each size's appended to ``results`` as soon as it is measured
    (a run cut short by a time limit keeps what it measured); ``arkworks``: check against
    arkworks and time it at ARK_CHECK's and ARK_PEER's sizes; ``sweep`` and ``variants``:
    plans timed after the default one (variant_record)."""
    records = []
    base_set = BaseSet(curve, max(max(logs), RATE_LOG))
    name = curve.name.lower()
    t0 = time.perf_counter()
    rate_bases = upload_bases(base_set.device(1 << RATE_LOG), curve)
    rate = add_rate(curve, rate_bases.points, runs)
    del rate_bases
    records.append(common.record(f"msm_{name}_add_rate", rate, "G/s", device,
                                 {"chunk": RATE_CHUNK, "log_n": RATE_LOG, "kernel": "accumulate"},
                                 timing=common.DEVICE_THROUGHPUT))
    common.write(records[-1:], "msm", results)
    print(f"{curve.name} bucket add rate {rate:.3f} G/s ({time.perf_counter() - t0:.1f} s incl. compile)", flush=True)
    for log_n in logs:
        first = len(records)
        t0 = time.perf_counter()
        n = 1 << log_n
        plan = make_plan(n, degree=curve.degree)
        built = base_set.device(n)
        host_bases = built.copy_to_host() if sppark else None
        bases = upload_bases(built, curve)
        del built
        scalars = inputs.random_scalar_limbs(n, rng)
        d_scalars = cuda.to_device(scalars)
        out = cuda.device_array(result_shape(n, curve), dtype=np.uint32)
        got = to_point(msm(bases, d_scalars, out=out))
        checked = msm_check.check(curve, log_n, scalars, got)
        ark_ms = None
        if arkworks and (log_n in ARK_CHECK[curve.name] or (curve is G1 and log_n in ARK_PEER)):
            ark_points = base_set.ark(n)
            want = inputs.ark_to_reference(inputs.ark_msm(ark_points, scalars, curve), curve)
            if got != want:
                raise AssertionError(f"{curve.name} 2^{log_n}: GPU result differs from arkworks")
            checked += ", arkworks"
            if log_n in ARK_PEER:
                ark_ms = round(ark_time_ms(ark_points, scalars, curve), 3)
        floor = plan.windows * n / (rate * 1e9) * 1e3
        params = {"window": plan.c, "windows": plan.windows, "chunk": plan.chunk, "runs": runs, "stat": "median",
                  "checked": checked, "floor_ms": round(floor, 3)}
        ms = time_msm(bases, d_scalars, out, runs)
        stages = stage_ms(bases, d_scalars, out, runs)
        print(f"{curve.name} 2^{log_n} stages (ms): {stages}", flush=True)
        records.append(common.record(f"msm_{name}_log{log_n}", ms, "ms", device,
                                     params | {"vs_floor": round(ms / floor, 2), "stages_ms": stages},
                                     timing=common.DEVICE_THROUGHPUT))
        peer_figures, agreed = None, {}
        if sppark:
            # ours is the closed form's; a sppark result that differs is flagged on the records, not fatal:
            # the later sizes still run
            try:
                peer_figures = msm_check.sppark_msm(sppark, curve, host_bases, scalars, runs)
            except (RuntimeError, OSError, ValueError, subprocess.TimeoutExpired) as exc:
                print(f"{curve.name} 2^{log_n}: sppark's MSM failed, no peer: {exc}", flush=True)
            if peer_figures:
                same = msm_check.sppark_point(peer_figures, curve) == got
                agreed = {"sppark_result": "equal" if same else "DIFFERS (layout of the inputs handed over?)"}
                print(f"{curve.name} 2^{log_n} sppark: host scalars {peer_figures['upload_ms']:.2f} ms, device "
                      f"scalars {peer_figures['device_ms']:.2f} ms, result {agreed['sppark_result']}", flush=True)
        del host_bases
        records += call_records(curve, log_n, bases, scalars, d_scalars, out, runs, device, params | agreed, floor,
                                peer_figures, ark_ms)
        if bits:
            b = inputs.bits_scalar_limbs(n, rng)
            d_b = cuda.to_device(b)
            got_b = to_point(msm(bases, d_b, out=out))
            if arkworks and log_n == min(ARK_CHECK[curve.name]):
                want_b = inputs.ark_to_reference(inputs.ark_msm(base_set.ark(n), b, curve), curve)
                if got_b != want_b:
                    raise AssertionError(f"{curve.name} 2^{log_n}: 0/1 scalars differ from arkworks")
            ms_b = time_msm(bases, d_b, out, runs)
            records.append(common.record(f"msm_{name}_log{log_n}_bits", ms_b, "ms", device,
                                         params | {"share_01": 0.9}, timing=common.DEVICE_THROUGHPUT))
        plans = []
        for key, value in sweep:
            if key == "window_delta":
                key, value = "window", make_plan(n, degree=curve.degree).c + value
            if key == "threads":
                records.append(block_size_record(bases, d_scalars, out, got, runs, value, name, log_n, device, params))
                continue
            plans.append({key: value})
        for overrides in plans + list(variants):
            records.append(variant_record(curve, log_n, bases, d_scalars, got, runs, device,
                                          params | {"checked": "default plan's result"}, overrides, rate))
            clear_cache()  # one workspace per plan: drop the swept one
        common.write(records[first:], "msm", results)
        print(f"{curve.name} 2^{log_n}: {ms:.2f} ms (floor {floor:.2f}) [{time.perf_counter() - t0:.1f} s]", flush=True)
        del bases, d_scalars
        clear_cache()
    return records


def call_records(curve, log_n: int, bases, scalars: np.ndarray, d_scalars, out, runs: int, device: str,
                 params: dict, floor: float, sppark: dict | None, ark_ms: float | None) -> list[dict]:
    """The two call-latency records, each call whole to an affine point (to_point): ``_call``
    (scalars resident on the device) and ``_upload`` (host scalars in, staged through pinned
    buffers), with sppark's msm_t::invoke on the same inputs in the same call as peer."""
    name = curve.name.lower()
    call_ms = common.median(common.call_latency_ms(lambda: to_point(msm(bases, d_scalars, out=out)), runs=runs))
    ms_up, ms_combine = time_msm_to_point(bases, scalars, out, runs)
    parts = upload_parts(scalars, runs)
    print(f"{curve.name} 2^{log_n}: call {call_ms:.2f} ms, upload {ms_up:.2f} ms wall; {parts}", flush=True)
    extra = {"host_combine_ms": round(ms_combine, 3), **({"arkworks_ms": ark_ms, "arkworks_threads": os.cpu_count()}
                                                          if ark_ms else {})}
    return [
        common.record(f"msm_{name}_log{log_n}_call", call_ms, "ms", device,
                      params | {"vs_floor": round(call_ms / floor, 2), "scalars": "device", **extra,
                                "timed": "wall per call: kernels, download, to_point"},
                      msm_check.peer(sppark, "device_ms") if sppark else None, timing=common.CALL_LATENCY),
        common.record(f"msm_{name}_log{log_n}_upload", ms_up, "ms", device,
                      params | {"vs_floor": round(ms_up / floor, 2), "scalars": "host", **extra, **parts,
                                "timed": "wall per call: upload, kernels, download, to_point"},
                      msm_check.peer(sppark, "upload_ms") if sppark else None, timing=common.CALL_LATENCY),
    ]


def check_sizes(curve, logs: list[int], rng) -> None:
    """The plan of each size in ``logs`` checked on the device against the closed form, no
    timing (2^25-2^27: the prover's sizes beyond the timed ones)."""
    if not logs:
        return
    base_set = BaseSet(curve, max(logs))
    for log_n in logs:
        t0 = time.perf_counter()
        n = 1 << log_n
        bases = upload_bases(base_set.device(n), curve)
        scalars = inputs.random_scalar_limbs(n, rng)
        got = to_point(msm(bases, cuda.to_device(scalars), out=cuda.device_array(result_shape(n, curve),
                                                                                 dtype=np.uint32)))
        checked = msm_check.check(curve, log_n, scalars, got)
        print(f"{curve.name} 2^{log_n}: plan {make_plan(n, degree=curve.degree)} checked: {checked} [{time.perf_counter() - t0:.1f} s]",
              flush=True)
        del bases
        clear_cache()


def block_size_record(bases, scalars, out, expected, runs: int, threads: int, name: str, log_n: int, device: str,
                      params: dict) -> dict:
    """The MSM with ``threads`` per block in its point kernels' launches (K.THREADS: no
    recompilation, registers decide how many blocks an SM holds), checked, then timed."""
    default, K.THREADS = K.THREADS, threads
    try:
        if to_point(msm(bases, scalars, out=out)) != expected:
            raise AssertionError(f"{name} 2^{log_n}: {threads} threads per block differ from {default}")
        ms = time_msm(bases, scalars, out, runs)
    finally:
        K.THREADS = default
    print(f"{name} 2^{log_n} threads={threads}: {ms:.2f} ms", flush=True)
    return common.record(f"msm_{name}_log{log_n}_threads{threads}", ms, "ms", device, params | {"threads": threads},
                         timing=common.DEVICE_THROUGHPUT)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out")
    parser.add_argument("--g1", default="16,18,20,22,24")
    parser.add_argument("--g2", default="16,20,22")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--sppark", help="bench/peer/sppark.sh's sppark_msm binary: sppark's MSM on the same bases "
                                         "and scalars, the _call and _upload records' peer")
    parser.add_argument("--no-arkworks", action="store_true", help="no arkworks check or timing (the closed form "
                        "still checks every size): a minute less at G1 2^20")
    parser.add_argument("--check-g1", default="", help="G1 sizes only checked against the closed form (e.g. 25,26,27)")
    parser.add_argument("--check-g2", default="", help="G2 sizes only checked against the closed form")
    parser.add_argument("--sweep", action="append", default=[],
                        help="KEY=V1,V2 (window, chunk, segment, scatter, registers, affine, threads, window_delta)")
    parser.add_argument("--variant", action="append", default=[],
                        help="KEY=V[,KEY=V...]: one plan with all these overrides (window, chunk, segment, scatter, "
                             "registers, affine), timed after the default plan")
    parser.add_argument("--plans-only", action="store_true",
                        help="only the default plan and the --variant plans of each size, each checked against the "
                             "closed form (bench_plans): no add rate, call-latency records, 0/1 scalars or peers")
    args = parser.parse_args(argv)
    sweep = parse_sweep(args.sweep)
    variants = [parse_variant(spec) for spec in args.variant]
    if args.plans_only and (sweep or args.sppark or args.check_g1 or args.check_g2):
        parser.error("--plans-only takes --variant plans only (no --sweep, --sppark or --check-*)")
    device = common.gpu_name()
    rng = np.random.default_rng(2026)
    t0 = time.perf_counter()
    out = args.out or common.result_path("msm", [device])
    records = []
    for curve, sizes, bits in ((G1, args.g1, True), (G2, args.g2, False)):
        logs = [int(x) for x in sizes.split(",") if x]
        if logs and args.plans_only:
            records += bench_plans(curve, logs, variants, args.runs, device, rng, out)
        elif logs:
            records += bench_curve(curve, logs, args.runs, device, bits, rng, out, sweep, args.sppark,
                                   not args.no_arkworks, variants)
    for curve, sizes in ((G1, args.check_g1), (G2, args.check_g2)):
        check_sizes(curve, [int(x) for x in sizes.split(",") if x], rng)
    path = out
    print(f"{'name':24s} {'value':>10s} {'floor ms':>9s} {'x floor':>8s}  peer")
    for r in records:
        p = r["params"]
        peer = f"{r['peer']['name']}: {r['peer']['value']} {r['peer']['unit']}" if "peer" in r else ""
        print(f"{r['name']:24s} {r['value']:>10.3f} {p.get('floor_ms', ''):>9} {p.get('vs_floor', ''):>8}  {peer}")
    print(f"wrote {len(records)} records to {path} in {time.perf_counter() - t0:.0f} s")


if __name__ == "__main__":
    main()
