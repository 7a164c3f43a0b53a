"""Groth16 proof time on the GPU by phase, keys resident, and the CPU backend in the same run.

For each size 2^K: a built-in circuit (circuits/builtin.py, --circuit, default the
bit-heavy one: a witness of 0s and 1s like Filecoin's) of at most 2^K - n_public - 1
constraints, an insecure local setup (on the GPU), a Prover (queries uploaded once), one
warm-up proof, then --runs proofs. Records (bench/results/groth16-<date>.json):
prove_logK (ms: wall time of prove(), witness upload to verified proof, median), with
params holding the median device ms of each phase (CUDA events: upload, matvec, ntt, msm_a,
msm_b1, msm_b2, msm_c, msm_h, download) and the host epilogue; prove_logK_cpu for the CPU
backend (--cpu sizes, all cores). Every proof is verified (pairing) inside prove(). Usage:
    python3 -m bench.groth16 [--out FILE] [--sizes 16,18,20,22] [--cpu 16] [--runs 5]
"""

from __future__ import annotations

import argparse
import datetime
import statistics
import time

from bench import common
from numba_cuzk.circuits import build
from numba_cuzk.groth16.prove import Prover
from numba_cuzk.groth16.setup import setup
from numba_cuzk.groth16.timing import PhaseTimer


def bench_size(log_n: int, circuit: str, gpu: bool, runs: int, device: str) -> dict:
    t0 = time.perf_counter()
    r1cs, witness = build(circuit, log_n, seed=log_n)
    t_build = time.perf_counter() - t0
    pk = setup(r1cs, gpu=gpu)
    t_setup = time.perf_counter() - t0 - t_build
    prover = Prover(pk, gpu=gpu)
    prover.prove(witness)  # warm-up: compiles, builds NTT tables and MSM workspaces
    walls, phases = [], []
    for _ in range(runs):
        timer = PhaseTimer(prover.stream)
        start = time.perf_counter()
        prover.prove(witness, timer=timer)
        walls.append((time.perf_counter() - start) * 1e3)
        phases.append(timer.durations_ms())
    by_phase = {k: round(statistics.median(p[k] for p in phases), 3) for k in phases[0]}
    name = f"prove_log{log_n}" + ("" if gpu else "_cpu")
    params = {"circuit": circuit, "constraints": r1cs.n_constraints, "wires": r1cs.n_wires, "runs": runs,
              "stat": "median", "phases_ms": by_phase, "setup_s": round(t_setup, 2), "build_s": round(t_build, 2)}
    print(f"{name}: {statistics.median(walls):.1f} ms  {by_phase}  (setup {t_setup:.1f} s)", flush=True)
    return common.record(name, statistics.median(walls), "ms", device, params)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out")
    parser.add_argument("--sizes", default="16,18,20,22")
    parser.add_argument("--cpu", default="16")
    parser.add_argument("--circuit", default="bit_heavy")
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args(argv)
    out = args.out or common.RESULTS / f"groth16-{datetime.date.today().isoformat()}.json"
    for log_n in [int(x) for x in args.sizes.split(",") if x]:
        common.write([bench_size(log_n, args.circuit, True, args.runs, common.gpu_name())], "groth16", out)
    for log_n in [int(x) for x in args.cpu.split(",") if x]:
        common.write([bench_size(log_n, args.circuit, False, max(1, args.runs // 2), common.cpu_name())],
                     "groth16", out)


if __name__ == "__main__":
    main()
