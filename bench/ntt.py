"""NTT device time on the GPU: every pass kernel (numba_cuzk.ntt.kernels.PASS_KERNELS) side
by side in one run, against the arithmetic and memory floors measured in the same run.

Per size (default 2^20, 2^22, 2^24, 2^26), on one resident vector, in place:
- checks first, on the device: at 2^10 every kernel against reference.py (Python ints) for
  ntt, intt, coset_ntt, coset_intt and shift_to_coset; at each benchmark size every kernel
  against radix2 (gpu_pass: one radix-2 stage per trip, the baseline) on the same input, limb for
  limb (at 2^26: ntt, coset_ntt and shift_to_coset only, to save the host copies);
- the upload of the vector from pinned memory (``ntt_fr_logK_upload``: upload + ntt);
- ntt and coset_ntt per kernel, and (at --phase-sizes, 2^20-2^24 by default: 2^26's
  would take most of the run) the prover's NTT phase on a batch of three vectors:
  shift_to_coset, and intt then coset_ntt as the prover ran it before, for radix2 and the
  prover's kernel;
- timing: CUDA events, 2 launches of warm-up, the median of --runs launches, --repeats
  times with the kernels interleaved (so drift hits all alike); ``value`` is the median of
  the repeats' medians, ``repeat_medians_ms`` and ``spread_pct`` show the spread.
Names: ``ntt_fr_logK_<kernel>``, ``coset_ntt_fr_logK_<kernel>``, ``ntt_phase_fr_logK_<kernel>``
(``_unfused``: intt + coset_ntt), and the project's ``ntt_fr_logK`` / ``coset_ntt_fr_logK``
for the kernel the prover uses (transform.VARIANT, named in params): params.timing
``device-throughput`` (events back to back), sppark's figure of the same call (--peer) as
peer; and ``ntt_fr_logK_call`` / ``coset_ntt_fr_logK_call``, ``call-latency``: one call at a
time, synchronized, the host's issue time included.
Floors: arithmetic, (n/2) log2 n Fr products at the Fr mul rate measured here (bench.field's
chained-product kernel); memory, the bytes the passes move (per pass 32 n read + 32 n
written, + 32 n of pre-twiddles after the first, + 32 n of g^i for a coset) at the
device-to-device copy bandwidth measured here. Usage:
    python3 -m bench.ntt [--out FILE] [--sizes 20,22,24,26] [--runs 7] [--repeats 3] [--phase-sizes 20,22,24]
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from numba import config, cuda

from bench import common
from numba_cuzk.field.params import FR
from numba_cuzk.ntt import clear_cache, domain, reference, shift_to_coset, transform
from numba_cuzk.ntt.kernels import PASS_KERNELS

COSET_G = 7
BASELINE = "radix2"
SIMULATOR = bool(config.ENABLE_CUDASIM)
NOMINAL_MUL_GOPS = 37.0  # used only in the simulator, where nothing can be timed
REFERENCE_LOG = 10
KINDS = ("ntt", "intt", "coset_ntt", "coset_intt", "shift")
POISON = 0xA5A5A5A5  # top limb above p's: an output left unwritten never matches


def random_limbs(shape: tuple, rng) -> np.ndarray:
    """Random canonical residues (read as Montgomery form): top limb below p's."""
    a = rng.integers(0, 1 << 32, size=shape, dtype=np.uint32)
    a[..., FR.limbs - 1, :] %= np.uint32(FR.modulus_limbs[-1])
    return a


def time_ms(launch, runs: int) -> list[float]:
    """Device ms per run (CUDA events); wall ms in the simulator, which has no event timing."""
    if not SIMULATOR:
        return common.device_time_ms(launch, runs=runs, warmup=2)
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        launch()
        cuda.synchronize()
        times.append((time.perf_counter() - t0) * 1e3)
    return times


def mul_rate_gops(threads_log: int) -> float:
    """Fr products per second (G/s) of bench.field's chained-product kernel, checked on the CPU."""
    if SIMULATOR:
        return NOMINAL_MUL_GOPS
    from bench.field import run_variant

    r = run_variant("fr_mul", "ptx", FR, 1 << threads_log, 64, 256, np.random.default_rng(1), {})
    return r["gops"]


def copy_bandwidth_gbs(log_n: int, runs: int) -> float:
    """Device-to-device copy bandwidth (GB/s, bytes read + written) of a (8, 2^log_n) array."""
    src = cuda.device_array((FR.limbs, 1 << log_n), dtype=np.uint32)
    dst = cuda.device_array_like(src)
    ms = common.median(time_ms(lambda: dst.copy_to_device(src), runs))
    return 2 * src.nbytes / (ms * 1e-3) / 1e9


def plan_of(log_n: int, variant: str) -> tuple:
    return domain.plan(log_n, even=PASS_KERNELS[variant].even_radices)


def pass_bytes(log_n: int, variant: str, coset: bool) -> int:
    n_bytes = 32 << log_n
    total = sum(2 * n_bytes + (0 if p.first else n_bytes) for p in plan_of(log_n, variant))
    return total + (n_bytes if coset else 0)


def kernel_resources(variant: str, log_n: int) -> dict:
    """Registers and local memory per thread of the pass kernels ``variant`` runs at 2^log_n
    (PassKernel.gpu_for), by kernel name; empty in the simulator."""
    kernels = {PASS_KERNELS[variant].gpu_for(p) for p in plan_of(log_n, variant)}
    compiled = {k.__name__: list(getattr(k, "overloads", {}).values()) for k in kernels}
    if SIMULATOR or not all(compiled.values()):
        return {}
    return {"regs": {name: o[0].regs_per_thread for name, o in compiled.items()},
            "local_bytes": {name: o[0].local_mem_per_thread for name, o in compiled.items()}}


def apply(kind: str, d, variant: str, out=None):
    """One transform of ``kind`` (KINDS) with ``variant``'s passes; "unfused" is the
    prover's former NTT phase, intt then coset_ntt."""
    if kind == "shift":
        return shift_to_coset(d, COSET_G, out, variant=variant)
    if kind == "unfused":
        src = transform.transform(d, out, inverse=True, variant=variant)
        return transform.transform(src, inverse=False, g=COSET_G, variant=variant)
    g = COSET_G if kind.startswith("coset") else None
    return transform.transform(d, out, inverse=kind.endswith("intt"), g=g, variant=variant)


def check_reference(log_n: int, rng) -> None:
    """Every kernel on the device against reference.py's Python-int transforms."""
    from numba_cuzk.field import codec

    host = random_limbs((FR.limbs, 1 << log_n), rng)
    x = codec.from_limbs(codec.from_montgomery(host, FR), FR)
    truth = {"ntt": reference.ntt(x), "intt": reference.intt(x), "coset_ntt": reference.coset_ntt(x, COSET_G),
             "coset_intt": reference.coset_intt(x, COSET_G),
             "shift": reference.coset_ntt(reference.intt(x), COSET_G)}
    for variant in PASS_KERNELS:
        for kind in KINDS:
            out = cuda.device_array_like(host)
            apply(kind, cuda.to_device(host), variant, out)
            got = codec.from_limbs(codec.from_montgomery(out.copy_to_host(), FR), FR)
            if got != truth[kind]:
                raise AssertionError(f"{variant} {kind} 2^{log_n}: differs from reference.py on the GPU")
    print(f"checked: {', '.join(PASS_KERNELS)} x {', '.join(KINDS)} at 2^{log_n} equal reference.py", flush=True)


def check_against_baseline(log_n: int, host: np.ndarray, kinds: tuple) -> None:
    """Every kernel's output equals radix2's on the same input, limb for limb (poisoned outputs)."""
    d_in = cuda.to_device(host)
    poison = cuda.to_device(np.full(host.shape, POISON, dtype=np.uint32))
    out = cuda.device_array_like(d_in)
    for kind in kinds:
        out.copy_to_device(poison)
        apply(kind, d_in, BASELINE, out)
        expected = out.copy_to_host()
        for variant in PASS_KERNELS:
            if variant == BASELINE:
                continue
            out.copy_to_device(poison)
            apply(kind, d_in, variant, out)
            if not np.array_equal(out.copy_to_host(), expected):
                raise AssertionError(f"{variant} {kind} 2^{log_n}: differs from {BASELINE} on the GPU")
        if not np.array_equal(d_in.copy_to_host(), host):
            raise AssertionError(f"{kind} 2^{log_n}: input modified")
    print(f"checked: 2^{log_n} {', '.join(kinds)}: every kernel equals {BASELINE}", flush=True)


def interleaved_medians(launches: dict, runs: int, repeats: int) -> dict:
    """{key: ([median per repeat], [every run])}, the launches taking turns within each repeat."""
    result = {key: ([], []) for key in launches}
    for _ in range(repeats):
        for key, launch in launches.items():
            times = time_ms(launch, runs)
            result[key][0].append(common.median(times))
            result[key][1].extend(times)
    return result


def bench_size(log_n: int, args, rng, rate: float, bandwidth: float, device: str) -> list[dict]:
    n = 1 << log_n
    host = random_limbs((FR.limbs, n), rng)
    t0 = time.perf_counter()
    for variant in PASS_KERNELS:
        transform.prepare(log_n, g=COSET_G, variant=variant)
    prepare_ms = (time.perf_counter() - t0) * 1e3
    check_against_baseline(log_n, host, KINDS if log_n < 26 else ("ntt", "coset_ntt", "shift"))
    pinned = cuda.pinned_array(host.shape, dtype=np.uint32)
    pinned[:] = host
    d = cuda.device_array(host.shape, dtype=np.uint32)
    upload = common.median(time_ms(lambda: d.copy_to_device(pinned), args.runs))
    del pinned
    phase = log_n in args.phase_sizes
    if phase:
        batch = cuda.device_array((3, FR.limbs, n), dtype=np.uint32)  # copies of d: values do not move timing
        for k in range(3):
            batch[k].copy_to_device(d)
    launches = {}
    for variant in PASS_KERNELS:
        launches[("ntt", variant)] = lambda v=variant: apply("ntt", d, v)
        launches[("coset_ntt", variant)] = lambda v=variant: apply("coset_ntt", d, v)
        if phase:
            launches[("phase", variant)] = lambda v=variant: apply("shift", batch, v)
    for variant in sorted({BASELINE, transform.VARIANT}) if phase else ():
        launches[("phase_unfused", variant)] = lambda v=variant: apply("unfused", batch, v)
    timed = interleaved_medians(launches, args.runs, args.repeats)
    floor_mul = (n // 2) * log_n / (rate * 1e9) * 1e3
    records = []
    for (kind, variant), (medians, times) in timed.items():
        ms = common.median(medians)
        base_ms = common.median(timed[(kind, BASELINE)][0])
        params = {"variant": variant, "runs": args.runs, "repeats": args.repeats, "warmup": 2,
                  "stat": "median of repeat medians", "repeat_medians_ms": [round(m, 4) for m in medians],
                  "spread_pct": round(100 * (max(medians) - min(medians)) / ms, 2),
                  "min_max_ms": [round(min(times), 4), round(max(times), 4)],
                  "radix_logs": [p.log_r for p in plan_of(log_n, variant)], "in_place": True,
                  "x_vs_radix2": round(base_ms / ms, 3), "prepare_ms_all_kernels": round(prepare_ms, 1),
                  "fr_mul_gops": round(rate, 2), "copy_gbs": round(bandwidth, 1),
                  "verified": f"equals {BASELINE} on the device", **kernel_resources(variant, log_n)}
        if kind.startswith("phase"):
            params["batch"] = 3
            params["calls"] = "intt + coset_ntt" if kind == "phase_unfused" else "shift_to_coset"
            name = f"ntt_phase_fr_log{log_n}_{variant}" + ("_unfused" if kind == "phase_unfused" else "")
            records.append(common.record(name, ms, "ms", device, params, timing=common.DEVICE_THROUGHPUT))
            print(f"{name:36s} {ms:9.3f} ms  spread {params['spread_pct']:5.2f}%", flush=True)
            continue
        coset = kind == "coset_ntt"
        floor_mem = pass_bytes(log_n, variant, coset) / (bandwidth * 1e9) * 1e3
        params.update({"mul_floor_ms": round(floor_mul, 4), "x_mul_floor": round(ms / floor_mul, 3),
                       "mem_floor_ms": round(floor_mem, 4), "x_mem_floor": round(ms / floor_mem, 3)})
        name = f"{kind}_fr_log{log_n}"
        peer = common.same_call_peer(args.peer, f"sppark_{name}")  # None without the same call's figure
        records.append(common.record(f"{name}_{variant}", ms, "ms", device, params, peer,
                                     timing=common.DEVICE_THROUGHPUT))
        if variant == transform.VARIANT:
            records.append(common.record(name, ms, "ms", device, params, peer, timing=common.DEVICE_THROUGHPUT))
            if kind == "ntt":
                records.append(common.record(f"{name}_upload", upload + ms, "ms", device,
                                             {"variant": variant, "upload_ms_pinned": round(upload, 4),
                                              "stat": "median"}, timing=common.DEVICE_THROUGHPUT))
            records.append(call_record(kind, d, variant, log_n, args.runs, device, ms))
        print(f"{name + '_' + variant:36s} {ms:9.3f} ms  spread {params['spread_pct']:5.2f}%  "
              f"x{base_ms / ms:5.2f} vs {BASELINE}  x{ms / floor_mul:5.2f} mul floor  x{ms / floor_mem:5.2f} mem floor",
              flush=True)
    return records


def call_record(kind: str, d, variant: str, log_n: int, runs: int, device: str, throughput_ms: float) -> dict:
    """``<kind>_fr_logK_call``: one transform at a time (common.call_latency_ms), the ~0.1-0.4 ms
    of host issue time that the back-to-back figure overlaps with the run before included."""
    times = common.call_latency_ms(lambda: apply(kind, d, variant), runs=runs) if not SIMULATOR else time_ms(
        lambda: apply(kind, d, variant), runs)
    ms = common.median(times)
    print(f"{kind}_fr_log{log_n}_call {ms:9.3f} ms (device throughput {throughput_ms:.3f} ms: host "
          f"{ms - throughput_ms:+.3f} ms)", flush=True)
    return common.record(f"{kind}_fr_log{log_n}_call", ms, "ms", device, {
        "variant": variant, "runs": runs, "warmup": 2, "stat": "median", "in_place": True,
        "min_max_ms": [round(min(times), 4), round(max(times), 4)],
        "device_throughput_ms": round(throughput_ms, 4)}, timing=common.CALL_LATENCY)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="20,22,24,26", help="log2 sizes, comma-separated")
    parser.add_argument("--runs", type=int, default=7, help="timed launches per repeat (median)")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--phase-sizes", default="20,22,24",
                        help="sizes at which the prover's NTT phase (a batch of 3) is timed too")
    parser.add_argument("--reference-log", type=int, default=REFERENCE_LOG, help="size checked against reference.py")
    parser.add_argument("--mul-threads-log", type=int, default=22)
    parser.add_argument("--peer", default=None,
                        help="sppark's figures from the same call (bench/peer/sppark.sh's JSON lines): the records' peer")
    parser.add_argument("--out", default=None)
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    args.phase_sizes = {int(s) for s in args.phase_sizes.split(",") if s}
    rng = np.random.default_rng(2026)
    device = common.gpu_name()
    started = time.perf_counter()
    print(f"prover's kernel: transform.VARIANT = {transform.VARIANT!r}", flush=True)
    check_reference(args.reference_log, rng)
    print(f"compiled and checked in {time.perf_counter() - started:.0f} s", flush=True)
    rate = mul_rate_gops(args.mul_threads_log)
    bandwidth = copy_bandwidth_gbs(min(max(sizes), 24), args.runs)
    print(f"Fr mul {rate:.2f} G/s{' (nominal: simulator)' if SIMULATOR else ''}, "
          f"d2d copy {bandwidth:.0f} GB/s", flush=True)
    records = [common.record("ntt_bench_fr_mul", rate, "G/s", device, {"threads": 1 << args.mul_threads_log,
                                                                        "chain": 64, "role": "floor"},
                                                                            timing=common.DEVICE_THROUGHPUT),
               common.record("ntt_bench_copy_bw", bandwidth, "GB/s", device, {"role": "floor"},
                             timing=common.DEVICE_THROUGHPUT)]
    path = common.write(records, "ntt", args.out)
    for log_n in sizes:  # written size by size: a run cut short keeps what it measured
        size_records = bench_size(log_n, args, rng, rate, bandwidth, device)
        clear_cache()
        common.write(size_records, "ntt", str(path))
        records += size_records
        print(f"2^{log_n} written to {path} at {time.perf_counter() - started:.0f} s", flush=True)
    print(common.markdown_table(records))
    print(f"wrote {path} in {time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()
