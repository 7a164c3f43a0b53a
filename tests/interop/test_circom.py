"""circom circuits proved by numba-cuzk, judged by snarkjs: circom2 compiles them,
snarkjs computes the witness and makes the key (setup, one contribution); `numba-cuzk
prove` (CPU backend) gives proofs that `snarkjs groth16 verify` and `numba-cuzk verify`
accept; snarkjs's own proofs pass `numba-cuzk verify`; tampered proofs and public inputs
fail both verifiers."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from numba_cuzk.curve.reference import g1
from numba_cuzk.field.params import FQ, FR
from numba_cuzk.groth16.formats import read_r1cs, read_wtns, read_zkey, write_wtns
from tests.interop.conftest import CircomBuild, cli, cli_verify
from tests.interop.node import NodeTools

pytestmark = pytest.mark.interop


@pytest.fixture(scope="session")
def ours(circom: CircomBuild, tmp_path_factory) -> tuple[Path, Path]:
    """numba-cuzk's proof.json and public.json of the circuit's witness."""
    folder = tmp_path_factory.mktemp(f"{circom.name}_ours")
    proof, public = folder / "proof.json", folder / "public.json"
    result = cli("prove", "--zkey", circom.zkey, "--witness", circom.wtns, "--r1cs", circom.r1cs,
                 "--proof", proof, "--public", public, "--cpu", "--json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["backend"] == "cpu"
    return proof, public


def test_circuit_shapes(circom: CircomBuild):
    """Each circuit is what its test needs: only products, linear constraints with several
    public inputs and outputs, a constraint count just past a power of two."""
    r1cs = read_r1cs(circom.r1cs)
    linear = np.count_nonzero((np.diff(r1cs.a.indptr) == 0) | (np.diff(r1cs.b.indptr) == 0))  # A or B empty
    want = {"multiply": (29, 2, 0), "circomlib_mix": (43, 11, 6), "over_power": (65, 1, 0)}[circom.name]
    assert (r1cs.n_constraints, r1cs.n_public, linear) == want


def test_contribution_moved_delta(circom: CircomBuild):
    assert read_zkey(circom.zkey, trusted=True).delta_g1 != g1.generator


def test_numba_cuzk_proof_passes_both_verifiers(circom: CircomBuild, ours, tools: NodeTools):
    proof, public = ours
    assert json.loads(public.read_text()) == json.loads(circom.snarkjs_public.read_text())
    judged = tools.snarkjs("groth16", "verify", circom.vk, public, proof, check=False)
    assert judged.returncode == 0 and "OK" in judged.stdout, judged.stdout + judged.stderr
    ours_verdict = cli_verify(circom.vk, public, proof)
    assert ours_verdict.returncode == 0, ours_verdict.stdout + ours_verdict.stderr


def test_snarkjs_proof_passes_numba_cuzk_verify(circom: CircomBuild):
    verdict = cli_verify(circom.vk, circom.snarkjs_public, circom.snarkjs_proof)
    assert verdict.returncode == 0, verdict.stdout + verdict.stderr


def _negate_y(point: list, modulus: int) -> list:
    """-P for a JSON point [x, y, z] (G1: ints as strings; G2: [c0, c1] pairs)."""
    neg = lambda v: str(-int(v) % modulus)  # noqa: E731
    return [point[0], [neg(c) for c in point[1]] if isinstance(point[1], list) else neg(point[1]), point[2]]


def _bump(values: list, index: int) -> None:
    values[index] = str((int(values[index]) + 1) % FR.modulus)


TAMPERS = {
    "pi_a negated": lambda proof, public: proof.update(pi_a=_negate_y(proof["pi_a"], FQ.modulus)),
    "pi_b negated": lambda proof, public: proof.update(pi_b=_negate_y(proof["pi_b"], FQ.modulus)),
    "pi_c replaced by pi_a": lambda proof, public: proof.update(pi_c=proof["pi_a"]),
    "first public input + 1": lambda proof, public: _bump(public, 0),
    "last public input + 1": lambda proof, public: _bump(public, -1),
}


@pytest.mark.parametrize("circom", ["circomlib_mix"], indirect=True)
@pytest.mark.parametrize("tamper", sorted(TAMPERS))
def test_tampered_rejected_by_both_verifiers(circom: CircomBuild, ours, tools: NodeTools, tamper, tmp_path):
    proof, public = (json.loads(path.read_text()) for path in ours)
    TAMPERS[tamper](proof, public)
    (tmp_path / "proof.json").write_text(json.dumps(proof))
    (tmp_path / "public.json").write_text(json.dumps(public))
    judged = tools.snarkjs("groth16", "verify", circom.vk, tmp_path / "public.json", tmp_path / "proof.json",
                           check=False)
    assert judged.returncode == 1 and "Invalid proof" in judged.stdout, judged.stdout + judged.stderr
    verdict = cli_verify(circom.vk, tmp_path / "public.json", tmp_path / "proof.json")
    assert verdict.returncode == 1 and "invalid" in verdict.stdout, verdict.stdout + verdict.stderr


@pytest.mark.parametrize("circom", ["multiply"], indirect=True)
def test_broken_witness_named_before_proving(circom: CircomBuild, tmp_path):
    witness = read_wtns(circom.wtns)
    witness[0, 5] ^= 1  # a private wire: the constraints that use it break
    write_wtns(tmp_path / "bad.wtns", witness)
    result = cli("prove", "--zkey", circom.zkey, "--witness", tmp_path / "bad.wtns", "--r1cs", circom.r1cs,
                 "--proof", tmp_path / "proof.json", "--public", tmp_path / "public.json", "--cpu")
    assert result.exit_code == 2 and "is not satisfied" in result.output, result.output
    assert not (tmp_path / "proof.json").exists()
