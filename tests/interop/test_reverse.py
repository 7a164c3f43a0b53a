"""numba-cuzk's own setup, judged by snarkjs: a circuit written with the ConstraintSystem
API and a built-in one are set up by `numba-cuzk setup` (insecure, local); snarkjs finds
that the witness satisfies the r1cs and accepts numba-cuzk's proofs under numba-cuzk's
verification key; snarkjs proves with numba-cuzk's zkey, and `numba-cuzk verify`
accepts that proof."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest

from numba_cuzk.field.params import FR
from numba_cuzk.groth16.constraint_system import ONE, ConstraintSystem
from numba_cuzk.groth16.formats import write_r1cs, write_wtns
from tests.interop.conftest import cli, cli_verify
from tests.interop.node import NodeTools

pytestmark = pytest.mark.interop


@dataclass(frozen=True)
class OurSetup:
    r1cs: Path
    wtns: Path
    zkey: Path
    vk: Path


def _write_constraint_system(folder: Path) -> tuple[Path, Path]:
    """Three public inputs, a negative coefficient (a - 2b + 7 < 0 here) and a linear
    constraint: out = (a - 2b + 7) x + x^2 - b."""
    a, b, x = 5, 11, 123456789
    cs = ConstraintSystem()
    av, bv = cs.public(a), cs.public(b)
    out = cs.public(((a - 2 * b + 7) * x + x * x - b) % FR.modulus)
    xv = cs.private(x)
    x2 = cs.private(x * x)
    cs.enforce(xv, xv, x2, name="x^2")
    t = cs.private((a - 2 * b + 7) * x % FR.modulus)
    cs.enforce(av - bv * 2 + 7, xv, t, name="t")
    cs.enforce(t + x2 - bv, ONE, out, name="out")
    write_r1cs(folder / "c.r1cs", cs.to_r1cs())
    write_wtns(folder / "w.wtns", cs.witness())
    return folder / "c.r1cs", folder / "w.wtns"


@pytest.fixture(scope="module", params=["constraint_system", "builtin_mimc"])
def our_setup(request, tmp_path_factory) -> OurSetup:
    folder = tmp_path_factory.mktemp(request.param)
    files = OurSetup(folder / "c.r1cs", folder / "w.wtns", folder / "c.zkey", folder / "verification_key.json")
    if request.param == "constraint_system":
        _write_constraint_system(folder)
        source = ["--r1cs", files.r1cs]
    else:
        source = ["--circuit", "mimc", "--log-constraints", 6, "--r1cs", files.r1cs, "--witness", files.wtns]
    result = cli("setup", *source, "--zkey", files.zkey, "--vk", files.vk, "--cpu")
    assert result.exit_code == 0, result.output
    return files


def test_snarkjs_accepts_our_witness_and_proof(our_setup: OurSetup, tools: NodeTools, tmp_path):
    tools.snarkjs("wtns", "check", our_setup.r1cs, our_setup.wtns)
    proof, public = tmp_path / "proof.json", tmp_path / "public.json"
    result = cli("prove", "--zkey", our_setup.zkey, "--witness", our_setup.wtns, "--r1cs", our_setup.r1cs,
                 "--proof", proof, "--public", public, "--cpu")
    assert result.exit_code == 0, result.output
    judged = tools.snarkjs("groth16", "verify", our_setup.vk, public, proof, check=False)
    assert judged.returncode == 0 and "OK" in judged.stdout, judged.stdout + judged.stderr


def test_snarkjs_proof_with_our_key_passes_numba_cuzk_verify(our_setup: OurSetup, tools: NodeTools, tmp_path):
    proof, public = tmp_path / "proof.json", tmp_path / "public.json"
    tools.snarkjs("groth16", "prove", our_setup.zkey, our_setup.wtns, proof, public)
    verdict = cli_verify(our_setup.vk, public, proof)
    assert verdict.returncode == 0, verdict.stdout + verdict.stderr
