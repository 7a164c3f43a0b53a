"""Proof files are written once: the first proof stored wins, racing writers included,
and a partition counts as stored only once its proof file (written last) exists."""

from __future__ import annotations

import os
import threading

import pytest

from numba_cuzk.cluster import proofs
from numba_cuzk.groth16.formats import read_proof_json
from numba_cuzk.groth16.keys import Proof


def _proofs(key) -> list[Proof]:
    """Distinct valid-looking proofs (points of the key; no proving needed)."""
    g1 = [key.alpha_g1, key.beta_g1, key.delta_g1]
    g2 = [key.beta_g2, key.gamma_g2, key.delta_g2]
    return [Proof(a=g1[i % 3], b=g2[(i // 3) % 3], c=g1[(i + 1) % 3]) for i in range(8)]


def test_first_write_wins(tmp_path, key):
    first, second = _proofs(key)[:2]
    assert proofs.read(tmp_path, "job", 3) is None
    assert proofs.write_once(tmp_path, "job", 3, first, [1, 2]) == (first, [1, 2], True)
    assert proofs.write_once(tmp_path, "job", 3, second, [1, 2]) == (first, [1, 2], False)
    assert proofs.read(tmp_path, "job", 3) == (first, [1, 2])
    assert sorted(os.listdir(tmp_path / "job")) == ["partition-003.proof.json", "partition-003.public.json"]


def test_racing_writers_store_one_proof(tmp_path, key):
    candidates = _proofs(key)
    start = threading.Barrier(len(candidates))
    outcomes = [None] * len(candidates)

    def write(i: int) -> None:
        start.wait()
        outcomes[i] = proofs.write_once(tmp_path, "job", 0, candidates[i], [5])

    threads = [threading.Thread(target=write, args=(i,)) for i in range(len(candidates))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sum(ours for _, _, ours in outcomes) == 1
    stored = read_proof_json(proofs.paths(tmp_path, "job", 0)[0])
    assert all(proof == stored for proof, _, _ in outcomes)  # every writer returns the stored one
    assert len(os.listdir(tmp_path / "job")) == 2  # no temporary file left


def test_public_inputs_alone_are_not_a_stored_proof(tmp_path):
    _, public = proofs.paths(tmp_path, "job", 1)
    public.parent.mkdir()
    public.write_text('["5"]')  # a writer died between its two files
    assert proofs.read(tmp_path, "job", 1) is None


@pytest.mark.parametrize("name", ["job-0", "porep.17", "A_b"])
def test_job_names_that_name_a_directory(name):
    proofs.check_job_name(name)


@pytest.mark.parametrize("name", ["", "..", "../x", "a/b", ".hidden", "a b"])
def test_job_names_refused(name):
    with pytest.raises(ValueError, match="names a directory"):
        proofs.check_job_name(name)
