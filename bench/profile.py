"""The hot kernels under Nsight Compute: what CUDA events cannot say.

The NTT's pass runs at ~1.8x its product floor and the MSM's accumulation below its add
rate; their stall reasons, issue rates and memory traffic say why. This runs, after a
warm-up outside the profiled range, one 2^24 NTT (three radix-4 passes; or one per pass
kernel of --ntt-variants), one G1 MSM of 2^22 and one G2 MSM of 2^20 random scalars
(none with --no-msm) between cuda.profile_start() and profile_stop(), for ncu's
--profile-from-start off:

    ncu --profile-from-start off --clock-control none --kernel-name regex:'gpu_pass|accumulate_g' \\
        --section WarpStateStats ... python3 -m bench.profile

bench/gpu_check.sh's kernels section runs it. Needs a GPU.
"""

from __future__ import annotations

import argparse

import numpy as np
from numba import cuda

from bench.msm import BaseSet
from numba_cuzk.curve.params import G1, G2
from numba_cuzk.msm import msm, upload_bases
from numba_cuzk.ntt.transform import transform
from tests.msm import inputs


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ntt-log", type=int, default=24)
    parser.add_argument("--g1-log", type=int, default=22)
    parser.add_argument("--g2-log", type=int, default=20)
    parser.add_argument("--ntt-variants", default="", help="pass kernels (comma-separated; default the prover's)")
    parser.add_argument("--no-msm", action="store_true", help="the NTTs only")
    args = parser.parse_args(argv)
    rng = np.random.default_rng(7)
    values = cuda.to_device(inputs.random_scalar_limbs(1 << args.ntt_log, rng))  # canonical < r
    variants = args.ntt_variants.split(",") if args.ntt_variants else [None]
    work = [lambda variant=variant: transform(values, inverse=False, variant=variant) for variant in variants]
    for curve, log_n in () if args.no_msm else ((G1, args.g1_log), (G2, args.g2_log)):
        bases = upload_bases(BaseSet(curve, log_n).device(1 << log_n), curve)
        scalars = cuda.to_device(inputs.random_scalar_limbs(1 << log_n, rng))
        work.append(lambda bases=bases, scalars=scalars: msm(bases, scalars))
    for run in work:  # compiled or loaded, tables and workspaces made
        run()
    cuda.synchronize()
    cuda.profile_start()
    for run in work:
        run()
    cuda.synchronize()
    cuda.profile_stop()
    print(f"bench.profile: profiled {len(work)} runs (NTTs: {len(variants)})", flush=True)


if __name__ == "__main__":
    main()
