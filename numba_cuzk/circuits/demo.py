"""The README's demo: a built-in circuit, an insecure local setup, proofs, verification,
and the time of every step, on the GPU when there is one and on all CPU cores otherwise.

    report = run_demo("mimc", log_constraints=10, proofs=3)

The first proof includes loading every kernel it uses from the kernel cache, or compiling
them on a machine's first run (tens of seconds on a small CPU); later proofs show the
steady state.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from numba_cuzk import backend
from numba_cuzk.circuits import build
from numba_cuzk.groth16 import pairing
from numba_cuzk.groth16.prove import Prover
from numba_cuzk.groth16.setup import setup
from numba_cuzk.groth16.timing import PhaseTimer


@dataclass
class DemoReport:
    """Times in ms; ``phases`` holds one {phase: ms} dict per proof (device time on the GPU)."""

    circuit: str
    constraints: int
    wires: int
    backend: str
    build_ms: float
    setup_ms: float
    prove_ms: list[float] = field(default_factory=list)
    phases: list[dict] = field(default_factory=list)
    verified: list[bool] = field(default_factory=list)


def run_demo(circuit: str = "mimc", log_constraints: int = 10, proofs: int = 2, gpu: bool | None = None,
             progress=None) -> DemoReport:
    """Build, set up, prove ``proofs`` times and verify each; ``progress(step)`` is called
    with a short description before each step (for a status line)."""
    gpu = backend.cuda_available() if gpu is None else gpu
    say = progress or (lambda step: None)
    clock = time.perf_counter
    say(f"building {circuit} (2^{log_constraints} constraints)")
    t0 = clock()
    r1cs, witness = build(circuit, log_constraints, seed=1)
    t1 = clock()
    say("insecure local setup")
    pk = setup(r1cs, gpu=gpu)
    t2 = clock()
    report = DemoReport(circuit, r1cs.n_constraints, r1cs.n_wires, "gpu" if gpu else "cpu",
                        (t1 - t0) * 1e3, (t2 - t1) * 1e3)
    prover = Prover(pk, gpu=gpu)
    public = prover.public_inputs(witness)
    verifying = pairing.PreparedVerifyingKey(pk.verifying_key)
    for k in range(proofs):
        say(f"proof {k + 1} of {proofs}" + (" (includes loading the kernels)" if k == 0 else ""))
        timer = PhaseTimer(prover.stream)
        start = clock()
        proof = prover.prove(witness, timer=timer)
        report.prove_ms.append((clock() - start) * 1e3)
        report.phases.append(timer.durations_ms())
        report.verified.append(verifying.verify(public, proof))
    return report
