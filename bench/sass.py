"""The hot kernels' machine code (SASS) and its instruction mix, for counting on the device.

The NTT's radix-4 pass and the MSM's accumulation run below what their products alone
would allow (bench/NOTES.md): the next question is which instructions the rest is. This
compiles (from the kernel cache) the kernels a tiny NTT and tiny G1/G2 MSMs launch, then
writes each one's SASS (``Dispatcher.inspect_sass``: nvdisasm, on the H200 image) to
``--out``/<kernel>.sass and the count of every opcode (the mnemonic before the first dot:
IMAD, IADD3, LDS, BAR, SHFL...) and of whole mnemonics to ``--out``/mix.json, and prints
each kernel's top 12. Needs a GPU and nvdisasm on PATH.

    python3 -m bench.sass --out DIR
"""

from __future__ import annotations

import argparse
import json
import re
from collections import Counter
from pathlib import Path

import numpy as np
from numba import cuda

from numba_cuzk.msm import kernels as K
from numba_cuzk.ntt import kernels as ntt_kernels

_OPCODE = re.compile(r"^\s*/\*[0-9a-f]+\*/\s+(?:@!?U?P\w+\s+)?([A-Z][A-Z0-9_.]*)", re.M)


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


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", required=True)
    args = parser.parse_args(argv)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    _compile()
    kernels = {"ntt_pass_radix4": ntt_kernels.gpu_pass_radix4, "ntt_pass": ntt_kernels.gpu_pass,
               **{f"{kind}_{curve.lower()}": K.POINT_KERNELS[curve][kind] for curve in ("G1", "G2")
                  for kind in ("accumulate", "reduce")}}
    report = {}
    for name, kernel in kernels.items():
        for k, (sig, sass) in enumerate(kernel.dispatcher.inspect_sass().items()):
            label = f"{name}.{k}"
            (out / f"{label}.sass").write_text(sass)
            ops, full = mix(sass)
            report[label] = {"signature": str(sig), "instructions": sum(ops.values()), "opcodes": dict(ops.most_common()),
                             "mnemonics": dict(full.most_common())}
            top = ", ".join(f"{op} {count}" for op, count in ops.most_common(12))
            print(f"{label}: {sum(ops.values())} instructions: {top}", flush=True)
    (out / "mix.json").write_text(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
