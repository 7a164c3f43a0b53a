"""The hot kernels' machine code (SASS) and its instruction mix, for counting on the device.

The NTT's radix-4 pass and the MSM's accumulation run below what their products alone
would allow: the next question is which instructions the rest is. This
compiles (from the kernel cache) the kernels a tiny NTT and tiny G1/G2 MSMs launch, then
writes each one's SASS (``Dispatcher.inspect_sass``: nvdisasm, on the H200 image) to
``--out``/<kernel>.sass and the count of every opcode (the mnemonic before the first dot:
IMAD, IADD3, LDS, BAR, SHFL...) and of whole mnemonics to ``--out``/mix.json, and prints
each kernel's top 12. Needs a GPU and nvdisasm on PATH.

    python3 -m bench.sass --out DIR

``--local``: no GPU. Each hot kernel (``local_kernels``: the NTT passes, the MSM's
classify, scan, scatter, accumulate (and G1's register-capped instances) and reduce per
curve, the bit split's scatter_indexed and tile_offsets, bench/field.py's products) is
compiled to PTX for sm_90 (H200) with its decorator's options (launch_bounds) and the
argument types its production launch gives it, assembled by ``ptxas -arch=sm_90 -O3 -v``
and disassembled by ``nvdisasm``, both from PATH (here: PATH=/opt/cudatools:$PATH). The
same files, without signature suffixes (``--out``/<kernel>.sass, mix.json), with ptxas's
"registers", "spill_stores", "spill_loads" and "stack" (bytes) in each entry, and a line
per kernel with them: about a minute for all of them on two cores, most of it the G2
point kernels. The device builds its code otherwise (numba-cuda's default: NVVM to
LTO-IR, then the nvJitLink installed there, with its release's ptxas inside), and this
host's ptxas (13.0 here) may be another release, so counts can differ slightly (nvJitLink
13.0 here gave the same registers, spills and stack for every kernel, and instruction
counts within 0.1%).

    python3 -m bench.sass --local --out DIR [--kernels accumulate_g2,reduce_g2]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import re
import shutil
import subprocess
import tempfile
from collections import Counter
from pathlib import Path
from types import SimpleNamespace
from typing import Iterator

import numpy as np
from numba import cuda

from numba_cuzk.msm import affine
from numba_cuzk.msm import kernels as K
from numba_cuzk.ntt import kernels as ntt_kernels

_OPCODE = re.compile(r"^\s*/\*[0-9a-f]+\*/\s+(?:@!?U?P\w+\s+)?([A-Z][A-Z0-9_.]*)", re.M)
CC = (9, 0)  # the H200's compute capability: --local's target
REGISTER_CAPS = (128, 96)  # accumulate_g1's capped instances listed by --local (plan.registers)
_USAGE = re.compile(r"Compiling entry function '(?P<entry>[^']+)'.*?Function properties for (?P=entry)\s+"
                    r"(?P<stack>\d+) bytes stack frame, (?P<spill_stores>\d+) bytes spill stores, "
                    r"(?P<spill_loads>\d+) bytes spill loads.*?Used (?P<registers>\d+) registers", re.S)


def _compile() -> None:
    """Run the production paths at tiny sizes: every kernel below gets its signatures."""
    from numba_cuzk.curve import layout
    from numba_cuzk.curve.params import G1, G2
    from numba_cuzk.field.codec import to_limbs, to_montgomery
    from numba_cuzk.field.params import FR
    from numba_cuzk.msm import msm, upload_bases
    from numba_cuzk.ntt import ntt, shift_to_coset

    n = 1 << 12
    values = cuda.to_device(to_montgomery(to_limbs(list(range(n)), FR), FR))
    ntt(values)
    for variant in ("radix2", "radix4"):
        shift_to_coset(values, 7, variant=variant)
    for curve in (G1, G2):
        points = np.repeat(layout.points_to_limbs([curve.generator], curve), 256, axis=1)
        scalars = np.zeros((8, 256), dtype=np.uint32)
        scalars[0] = np.arange(3, 259)
        msm(upload_bases(points, curve), cuda.to_device(scalars))
    cuda.synchronize()


def mix(sass: str) -> tuple[Counter, Counter]:
    """(opcode counts, full mnemonic counts) of a SASS listing."""
    names = _OPCODE.findall(sass)
    return Counter(name.split(".")[0] for name in names), Counter(names)


def local_kernels() -> dict[str, tuple[object, tuple]]:
    """{name: (kernel, argument types)} of --local: the argument types are those of arrays
    with the dtype, rank and order of the production launch's (ntt/transform.py,
    msm/pippenger._launch, bench/field.py) and of its Python ints (int64) and bools, as the
    dispatcher types them. Every extent is 2: a Fortran array with an extent 1 would also
    be C-contiguous, and typed "C"."""
    from numba.cuda.typing.typeof import Purpose, typeof

    from bench.field import _kernels as field_kernels
    from numba_cuzk.curve.params import G1, G2
    from numba_cuzk.field.params import FQ, FR
    from numba_cuzk.msm.bits import tile_offsets
    from numba_cuzk.msm.indexed import scatter_indexed

    def u32(rows: int, *, order: str = "C") -> np.ndarray:
        return np.zeros((rows, 2), np.uint32, order=order)

    i32, kinds, table = np.zeros((2, 2), np.int32), np.zeros(2, np.uint8), u32(FR.limbs)
    i32_1d = np.zeros(2, np.int32)
    batch = np.zeros((2, FR.limbs, 2), np.uint32)
    # (src, dst, twiddles, pre, post, roots, log_n, log_r, log_j, log_ns, mode)
    ntt_args = (batch, batch, table, table, table, table, 0, 0, 0, 0, 0)
    fixed_args = ntt_args[:7] + ntt_args[9:]  # without log_r, log_j
    scalar_args = (u32(FR.limbs), True, 0, 0, kinds)  # (scalars, montgomery, c, windows, kinds)
    values = {
        "ntt_pass": (ntt_kernels.gpu_pass, ntt_args),
        "ntt_pass_radix4": (ntt_kernels.gpu_pass_radix4, ntt_args),
        **{f"ntt_pass_radix4_r{log_r}": (kernel, fixed_args) for log_r, kernel in ntt_kernels.PASS_KERNELS["radix4"].fixed},
        "classify": (K.classify, (*scalar_args, i32)),  # + counts
        "scan": (K.scan, (i32, 0, i32, i32, i32, i32)),  # (counts, chunk, offsets, cursors, chunk_offsets, chunk_buckets)
        # (scalars, montgomery, c, first, stop, kinds, offsets, cursors, entries)
        "scatter": (K.scatter, (u32(FR.limbs), True, 0, 0, 0, kinds, i32, i32, u32(2))),
        # + (indices, offset)
        "scatter_indexed": (scatter_indexed, (u32(FR.limbs), True, 0, 0, 0, kinds, i32, i32, u32(2), i32_1d, 0)),
        "tile_offsets": (tile_offsets, (i32, i32, i32_1d)),  # (counts, offsets, totals)
    }
    for curve in (G1, G2):
        kernels, points, suffix = K.POINT_KERNELS[curve.name], u32(4 * curve.limbs), curve.name.lower()
        # (bases: point-major, entries, offsets, chunk_offsets, chunk, kinds, ones_per, ones0, points)
        accumulate_args = (u32(2 * curve.limbs, order="F"), u32(2), i32, i32, 0, kinds, 0, 0, points)
        values[f"accumulate_{suffix}"] = (kernels["accumulate"], accumulate_args)
        if curve is G1:  # plan.registers' variants (the accumulation capped)
            for cap in REGISTER_CAPS:
                values[f"accumulate_{suffix}_r{cap}"] = (K.accumulate_kernel(curve, cap), accumulate_args)
        # (points, chunk_offsets, chunk_buckets, c, max_chunks, segments, seg0, tmp0, src, first, count, per, dst, out)
        values[f"reduce_{suffix}"] = (kernels["reduce"], (points, i32, i32, *[0] * 10, points))
    # the batch-affine accumulation (msm/affine.py, G1): (bases, entries, offsets, runs, chunk, first, h, scratch,
    # totals or inverses, links); invert_groups (values, count, group, out); affine_partials (bases, entries,
    # offsets, chunk_offsets, runs, chunk, first, max_chunks, scratch, points)
    bases, rows, links = u32(2 * G1.limbs, order="F"), np.zeros((2, 2 * G1.limbs), np.uint32), np.zeros(2, np.int32)
    round_args = (bases, u32(2), i32, 0, 0, 0, 0, rows, u32(G1.limbs), links)
    values["affine_denominators_g1"] = (affine.KERNELS["affine_denominators"], round_args)
    values["affine_sums_g1"] = (affine.KERNELS["affine_sums"], round_args)
    values["invert_groups_g1"] = (affine.KERNELS["invert_groups"], (u32(G1.limbs), 0, 0, u32(G1.limbs)))
    values["affine_partials_g1"] = (affine.KERNELS["affine_partials"], (
        bases, u32(2), i32, i32, 0, 0, 0, 0, rows, u32(4 * G1.limbs)))
    for name, params in (("fr_mul", FR), ("fq_mul", FQ), ("fq2_mul", None)):  # (a, b, chain)
        values[name] = (field_kernels(name, "ptx", params)[0], (u32(2), u32(2), 0))
    return {name: (kernel, tuple(typeof(v, Purpose.argument) for v in args)) for name, (kernel, args) in values.items()}


@contextlib.contextmanager
def _device_functions_for(cc: tuple[int, int]) -> Iterator[None]:
    """Within: a kernel's ``cuda.jit(device=True)`` callees compile for ``cc``. numba-cuda
    compiles them for get_current_device()'s compute capability, which needs a GPU."""
    from numba.cuda import dispatcher

    current = dispatcher.get_current_device
    dispatcher.get_current_device = lambda: SimpleNamespace(compute_capability=cc)
    try:
        yield
    finally:
        dispatcher.get_current_device = current


def _tool(name: str) -> str:
    path = shutil.which(name)
    if path is None:
        raise SystemExit(f"bench.sass --local: {name} is not on PATH")
    return path


def local_sass(kernel, argtypes: tuple) -> tuple[str, dict]:
    """(SASS, ptxas's {"registers", "spill_stores", "spill_loads", "stack"}) of ``kernel``
    (a cuda.jit dispatcher or GpuKernel) for ``argtypes`` on CC, compiled with its
    decorator's options; no GPU needed."""
    ptxas, nvdisasm = _tool("ptxas"), _tool("nvdisasm")
    options = kernel.targetoptions
    with _device_functions_for(CC):
        ptx, _ = cuda.compile(kernel.py_func, argtypes, device=False, abi="numba", cc=CC, output="ptx",
                              **{key: options[key] for key in ("debug", "lineinfo", "fastmath", "opt", "launch_bounds")})
    limit = [f"-maxrregcount={options['max_registers']}"] if options.get("max_registers") else []
    with tempfile.TemporaryDirectory() as tmp:
        source, cubin = Path(tmp) / "kernel.ptx", Path(tmp) / "kernel.cubin"
        source.write_text(ptx)
        log = subprocess.run([ptxas, f"-arch=sm_{CC[0]}{CC[1]}", "-O3", "-v", *limit, str(source), "-o",
                              str(cubin)], check=True, capture_output=True, text=True)
        usage = _USAGE.search(log.stdout + log.stderr)
        if usage is None:
            raise RuntimeError(f"no resource usage in ptxas's output:\n{log.stdout}{log.stderr}")
        sass = subprocess.run([nvdisasm, "-gi", str(cubin)], check=True, capture_output=True,
                              text=True).stdout
    return sass, {key: int(usage[key]) for key in ("registers", "spill_stores", "spill_loads", "stack")}


def _record(out: Path, label: str, signature, sass: str, usage: dict | None = None) -> dict:
    """Write <label>.sass and print the kernel's line; its mix.json entry (with ``usage``,
    ptxas's counts, after the signature)."""
    (out / f"{label}.sass").write_text(sass)
    ops, full = mix(sass)
    count = sum(ops.values())
    top = ", ".join(f"{op} {n}" for op, n in ops.most_common(12))
    head = "" if usage is None else (f"{usage['registers']} registers, spills {usage['spill_stores']} / "
                                     f"{usage['spill_loads']} B, stack {usage['stack']} B, ")
    print(f"{label}: {head}{count} instructions: {top}", flush=True)
    return {"signature": str(signature), **(usage or {}), "instructions": count, "opcodes": dict(ops.most_common()),
            "mnemonics": dict(full.most_common())}


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", required=True)
    parser.add_argument("--local", action="store_true", help="no GPU: ptxas and nvdisasm for sm_90 (see above)")
    parser.add_argument("--kernels", help="with --local: a comma-separated subset of the kernels")
    args = parser.parse_args(argv)
    if args.kernels and not args.local:
        parser.error("--kernels needs --local")
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    report = {}
    if args.local:
        kernels = local_kernels()
        names = args.kernels.split(",") if args.kernels else list(kernels)
        unknown = sorted(set(names) - set(kernels))
        if unknown:
            parser.error(f"unknown kernels {unknown}; expected some of {', '.join(kernels)}")
        for name in names:
            kernel, argtypes = kernels[name]
            sass, usage = local_sass(kernel, argtypes)
            report[name] = _record(out, name, argtypes, sass, usage)
    else:
        _compile()
        kernels = {"ntt_pass_radix4_r6": ntt_kernels.gpu_pass_radix4_r6, "ntt_pass": ntt_kernels.gpu_pass,
                   **{f"{kind}_{curve.lower()}": K.POINT_KERNELS[curve][kind] for curve in ("G1", "G2")
                      for kind in ("accumulate", "reduce")}}
        for name, kernel in kernels.items():
            for k, (sig, sass) in enumerate(kernel.dispatcher.inspect_sass().items()):
                report[f"{name}.{k}"] = _record(out, f"{name}.{k}", sig, sass)
    (out / "mix.json").write_text(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
