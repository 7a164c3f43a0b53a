"""Many tiny proofs on the CPU backend, each checked: a hunt for rare wrong results.

On the H200 host (16 cores, while `numba-cuzk compile` loaded them) the CPU backend's
2^6 proof inside `numba-cuzk compile` once failed its pairing check; 200 runs
on the 2-core development machine passed. Each round here draws a new key (random toxic
waste) for the mimc circuit and proves on the CPU; a proof that fails its check has its
five MSMs recomputed on the CPU and, with a GPU, on the GPU, and the key tried on the GPU,
to name the part at fault (setup or prove, which MSM), and its key and witness written to --keep for a replay elsewhere. Prints one line
per failure and a summary: `cpu_soak: F failed of N (threading layer L, T threads)`.

    python3 -m bench.cpu_soak [--rounds 100] [--log 6] [--keep DIR]
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numba

from numba_cuzk import backend
from numba_cuzk.circuits import build
from numba_cuzk.groth16.formats import write_wtns, write_zkey
from numba_cuzk.groth16.prove import Prover
from numba_cuzk.groth16.setup import setup
from numba_cuzk.groth16.timing import PhaseTimer
from numba_cuzk.msm.pippenger import to_point


def parts(prover: Prover, witness) -> dict:
    """The five MSMs of ``witness`` as affine points (no randomness: r and s come later)."""
    slot = prover.slots[0]
    slot.load(witness, prover.stream, PhaseTimer(prover.stream))
    return {name: to_point(sums) for name, sums in prover.device_work(slot, PhaseTimer(prover.stream)).items()}


def diagnose(pk, witness, keep: Path | None, index: int) -> str:
    """Which parts differ between two CPU runs and, with a GPU, between the CPU and the GPU."""
    first, second = parts(Prover(pk, gpu=False), witness), parts(Prover(pk, gpu=False), witness)
    report = [f"cpu rerun differs in {[n for n in first if first[n] != second[n]]}"]
    if backend.cuda_available():
        device = parts(Prover(pk, gpu=True), witness)
        report.append(f"cpu vs gpu differ in {[n for n in first if first[n] != device[n]]}")
        try:
            Prover(pk, gpu=True).prove(witness)
            report.append("the GPU's proof with this key verifies")
        except ValueError:
            report.append("the GPU's proof with this key fails too: the key (CPU setup) is at fault")
    if keep is not None:
        keep.mkdir(parents=True, exist_ok=True)
        write_zkey(keep / f"fail-{index}.zkey", pk)
        write_wtns(keep / f"fail-{index}.wtns", witness)
        report.append(f"kept {keep}/fail-{index}.zkey, .wtns")
    return "; ".join(report)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=100)
    parser.add_argument("--log", type=int, default=6)
    parser.add_argument("--keep", type=Path)
    args = parser.parse_args(argv)
    r1cs, witness = build("mimc", args.log)
    failed, start = 0, time.perf_counter()
    for i in range(args.rounds):
        pk = setup(r1cs, gpu=False)
        try:
            Prover(pk, gpu=False).prove(witness)
        except ValueError as error:
            failed += 1
            print(f"cpu_soak round {i}: {error}; {diagnose(pk, witness, args.keep, i)}", flush=True)
    try:
        layer = numba.threading_layer()
    except ValueError:  # no parallel function ran
        layer = "none"
    print(f"cpu_soak: {failed} failed of {args.rounds} in {time.perf_counter() - start:.1f} s "
          f"(threading layer {layer}, {numba.get_num_threads()} threads)", flush=True)


if __name__ == "__main__":
    main()
