"""Setup, prove and verify end to end: the CPU backend in CI, the GPU with ``pytest -m gpu``.

The key is checked point by point against the Python-int reference for known toxic waste;
proofs must verify with arkworks and with py_ecc (an independent implementation) and
must fail when any point, or the public input, is changed.
"""

from unittest import mock

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from numba import cuda

from numba_cuzk.curve.layout import limbs_to_points
from numba_cuzk.curve.params import G1, G2
from numba_cuzk.curve.reference import g1, g2
from numba_cuzk.field.codec import from_limbs, to_limbs
from numba_cuzk.field.params import FR
from numba_cuzk.groth16 import pairing
from numba_cuzk.groth16.constraint_system import ConstraintSystem
from numba_cuzk.groth16 import kernels as groth16_kernels
from numba_cuzk.groth16.kernels import csr_matvec, to_csr
from numba_cuzk.groth16.keys import Proof
from numba_cuzk.groth16.prove import Prover
from numba_cuzk.groth16.setup import domain_log, setup
from numba_cuzk.groth16.timing import PhaseTimer
from numba_cuzk.msm import to_point
from tests.conftest import SIMULATOR

R = FR.modulus
TOXIC = {"alpha": 11, "beta": 13, "gamma": 17, "delta": 19, "tau": 123456789}


def cube_circuit(x: int = 3):
    """x^3 + x + 5 = out, out public."""
    cs = ConstraintSystem()
    xv = cs.private(x)
    out = cs.public(x ** 3 + x + 5)
    x2 = cs.private(x * x)
    x3 = cs.private(x ** 3)
    cs.enforce(xv, xv, x2)
    cs.enforce(x2, xv, x3)
    cs.enforce(x3 + xv + 5, 1, out)
    return cs.to_r1cs(), cs.witness()


@pytest.fixture(scope="module")
def cube():
    r1cs, witness = cube_circuit()
    pk = setup(r1cs, gpu=False, toxic=TOXIC)
    return r1cs, witness, pk, Prover(pk, gpu=False)


def _lagrange(tau, size, k):
    root = FR.root_of_unity(size.bit_length() - 1)
    x = pow(root, k, R)
    return (pow(tau, size, R) - 1) * pow(size, -1, R) * x * pow(tau - x, -1, R) % R


def _column(matrix, wire, rows):
    """sum_j matrix[j, wire] L_j(tau) from the CSR (Python ints)."""
    total = 0
    for j in range(matrix.rows):
        for k in range(matrix.indptr[j], matrix.indptr[j + 1]):
            if matrix.indices[k] == wire:
                total += from_limbs(matrix.values[:, k:k + 1], FR)[0] * rows[j]
    return total % R


def test_key_matches_reference(cube):
    r1cs, _, pk, _ = cube
    n = 1 << domain_log(r1cs)
    assert pk.domain_size == n == 8
    tau, G = TOXIC["tau"], g1.generator
    basis = [_lagrange(tau, n, j) for j in range(n)]
    u = [(_column(r1cs.a, i, basis) + (basis[r1cs.n_constraints + i] if i <= r1cs.n_public else 0)) % R
         for i in range(r1cs.n_wires)]
    v = [_column(r1cs.b, i, basis) for i in range(r1cs.n_wires)]
    w = [_column(r1cs.c, i, basis) for i in range(r1cs.n_wires)]
    combo = [(TOXIC["beta"] * a + TOXIC["alpha"] * b + c) % R for a, b, c in zip(u, v, w)]
    assert limbs_to_points(pk.a_g1, G1) == [g1.mul(G, k) for k in u]
    assert limbs_to_points(pk.b_g1, G1) == [g1.mul(G, k) for k in v]
    assert limbs_to_points(pk.b_g2, G2) == [g2.mul(g2.generator, k) for k in v]
    assert pk.ic == [g1.mul(G, k * pow(TOXIC["gamma"], -1, R)) for k in combo[:2]]
    assert limbs_to_points(pk.c_g1, G1) == [g1.mul(G, k * pow(TOXIC["delta"], -1, R)) for k in combo[2:]]
    h = [_lagrange(tau, 2 * n, 2 * j + 1) * pow(TOXIC["delta"], -1, R) for j in range(n)]
    assert limbs_to_points(pk.h_g1, G1) == [g1.mul(G, k) for k in h]


def test_proofs_verify_and_differ(cube):
    _, witness, pk, prover = cube
    first, second = prover.prove(witness), prover.prove(witness)
    assert first != second  # fresh r, s each time
    for proof in (first, second):
        assert pairing.verify(pk.verifying_key, [35], proof)
        assert not pairing.verify(pk.verifying_key, [36], proof)


def test_changed_points_are_rejected(cube):
    _, witness, pk, prover = cube
    proof = prover.prove(witness)
    vk = pk.verifying_key
    assert not pairing.verify(vk, [35], Proof(g1.double(proof.a), proof.b, proof.c))
    assert not pairing.verify(vk, [35], Proof(proof.a, g2.double(proof.b), proof.c))
    assert not pairing.verify(vk, [35], Proof(proof.a, proof.b, g1.neg(proof.c)))
    assert not pairing.verify(vk, [35], Proof(proof.c, proof.b, proof.a))


def test_prepared_key_is_reused(cube):
    """One PreparedVerifyingKey (e(alpha, beta) computed once) checks many proofs and
    inputs with the answers of the one-shot verify; a wrong input count names itself."""
    _, witness, pk, prover = cube
    verifying = pairing.PreparedVerifyingKey(pk.verifying_key)
    proofs = [prover.prove(witness) for _ in range(2)]
    for proof in proofs:
        for public in ([35], [36], [0]):
            assert verifying.verify(public, proof) == pairing.verify(pk.verifying_key, public, proof) == (public == [35])
    bent = Proof(proofs[0].a, proofs[0].b, g1.double(proofs[0].c))
    assert not verifying.verify([35], bent)
    with pytest.raises(ValueError, match="2 public inputs, the key expects 1"):
        verifying.verify([35, 1], proofs[0])
    with pytest.raises(ValueError, match="public input 0 is not a field element"):
        verifying.verify([R], proofs[0])


def test_verify_with_py_ecc(cube):
    """An independent pairing: py_ecc's optimized BLS12-381."""
    from py_ecc.optimized_bls12_381 import FQ, FQ2, final_exponentiate, pairing as e

    _, witness, pk, prover = cube
    proof = prover.prove(witness)
    p1 = lambda p: (FQ(p[0]), FQ(p[1]), FQ(1))  # noqa: E731
    p2 = lambda p: (FQ2(list(p[0])), FQ2(list(p[1])), FQ2([1, 0]))  # noqa: E731
    ic = g1.add(pk.ic[0], g1.mul(pk.ic[1], 35))
    lhs = e(p2(proof.b), p1(proof.a), final_exponentiate=False)
    rhs = (e(p2(pk.beta_g2), p1(pk.alpha_g1), final_exponentiate=False)
           * e(p2(pk.gamma_g2), p1(ic), final_exponentiate=False)
           * e(p2(pk.delta_g2), p1(proof.c), final_exponentiate=False))
    assert final_exponentiate(lhs) == final_exponentiate(rhs)
    wrong = rhs * e(p2(pk.delta_g2), p1(proof.c), final_exponentiate=False)  # C counted twice
    assert final_exponentiate(lhs) != final_exponentiate(wrong)


def test_proofs_queued_one_behind_the_other_keep_their_own_results(cube):
    """Two proofs enqueued before either is collected (an engine's two GPU workers): each
    slot downloads into its own buffers, so the first proof survives the second's work."""
    _, _, pk, _ = cube
    prover = Prover(pk, gpu=False, slots=2)
    witnesses = [cube_circuit(x)[1] for x in (3, 4)]
    for slot, witness in zip(prover.slots, witnesses):
        slot.load(witness, prover.stream, PhaseTimer())
        prover.enqueue(slot, PhaseTimer())
    publics = [prover.public_inputs(witness) for witness in witnesses]
    assert publics == [[35], [73]]  # two different proofs: 3^3 + 3 + 5, 4^3 + 4 + 5
    for slot, public in zip(prover.slots, publics):
        proof = prover.assemble(prover.collect(slot, PhaseTimer()), public)  # raises if it does not verify
        assert pairing.verify(pk.verifying_key, public, proof)


def test_bad_witnesses_are_refused(cube):
    _, witness, _, prover = cube
    wrong = witness.copy()
    wrong[:, 2] = to_limbs([4], FR)[:, 0]  # x = 4 breaks x^2 = 9
    with pytest.raises(ValueError, match="does not satisfy"):
        prover.prove(wrong)
    with pytest.raises(ValueError, match="shape"):
        prover.prove(witness[:, :3])
    big = witness.copy()
    big[:, 3] = np.array(FR.modulus_limbs, np.uint32)  # r itself: not canonical
    with pytest.raises(ValueError, match="wire 3"):
        prover.prove(big)
    one = witness.copy()
    one[:, 0] = 0
    with pytest.raises(ValueError, match="wire 0"):
        prover.prove(one)


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 40), st.integers(0, 300), st.integers(0, 2**32 - 1))
def test_to_csr_is_a_stable_sort_by_row(rows, nnz, seed):
    """The parallel counting sort against numpy's stable argsort, on fresh random
    entries: every row's entries in their original order, rows that have none, a row
    that holds them all (rows = 1)."""
    rng = np.random.default_rng(seed)
    row_of = rng.integers(0, rows, nnz).astype(np.int64)
    cols = rng.integers(0, 1 << 32, nnz, dtype=np.uint32)
    values = rng.integers(0, 1 << 32, (8, nnz), dtype=np.uint32)
    indptr, indices, vals = to_csr(rows, row_of, cols, values)
    order = np.argsort(row_of, kind="stable")
    assert np.array_equal(indptr, np.concatenate([[0], np.cumsum(np.bincount(row_of, minlength=rows))]))
    assert np.array_equal(indices, cols[order]) and np.array_equal(vals, values[:, order])


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 40), st.integers(0, 300), st.integers(0, 2**32 - 1))
def test_to_csr_of_rows_in_order_is_the_counting_sort_without_it(rows, nnz, seed):
    """Entries already in row order (a zkey's): the same CSR as the counting sort gives,
    and the sort's CPU kernel never called (a GPU prove starts no numba CPU target)."""
    rng = np.random.default_rng(seed)
    row_of = np.sort(rng.integers(0, rows, nnz)).astype(np.int64)
    cols = rng.integers(0, 1 << 32, nnz, dtype=np.uint32)
    values = rng.integers(0, 1 << 32, (8, nnz), dtype=np.uint32)
    with mock.patch.object(groth16_kernels, "_place_by_row", side_effect=AssertionError("sorted again")):
        indptr, indices, vals = to_csr(rows, row_of, cols, values)
    assert np.array_equal(indptr, np.concatenate([[0], np.cumsum(np.bincount(row_of, minlength=rows))]))
    if nnz:  # the counting sort itself (to_csr takes it only for entries out of order)
        assert all(np.array_equal(a, b) for a, b in zip((indices, vals),
                                                         groth16_kernels._counting_sort(indptr, row_of, cols, values)))
    assert indices.dtype == np.uint32 and vals.dtype == np.uint32 and vals.shape == (8, nnz)


@pytest.mark.gpu
def test_csr_matvec_kernel_matches_cpu():
    """The CUDA kernel (simulator in CI) against the CPU loop and Python ints, edge values."""
    rng = np.random.default_rng(3)
    rows = 6
    row_of = np.array([0, 0, 1, 3, 3, 3, 5], dtype=np.int64)
    cols = np.array([0, 4, 2, 1, 1, 3, 4], dtype=np.int64)
    coef_ints = [0, 1, R - 1, 2, R - 1, 12345, int(rng.integers(1 << 62)) ** 4 % R]
    wire_ints = [1, R - 1, 0, 7, 1 << 200]
    values = to_limbs(coef_ints, FR)
    witness = np.ascontiguousarray(to_limbs([x * FR.r % R for x in wire_ints], FR))  # Montgomery
    indptr, indices, vals = to_csr(rows, row_of, cols, values)
    cpu = np.full((8, rows), 0xA5A5A5A5, np.uint32)
    csr_matvec(cpu, indptr, indices, vals, witness, False)
    gpu = cuda.to_device(np.full((8, rows), 0xA5A5A5A5, np.uint32))
    csr_matvec(gpu, *(cuda.to_device(x) for x in (indptr, indices, vals, witness)), False)
    want = [0] * rows
    for r, c, k in zip(row_of, cols, coef_ints):
        want[r] = (want[r] + k * wire_ints[c]) % R
    assert [x * FR.r_inv % R for x in from_limbs(cpu, FR)] == want
    assert np.array_equal(gpu.copy_to_host(), cpu)


@pytest.mark.gpu
@pytest.mark.skipif(SIMULATOR, reason="a whole GPU proof is minutes in the simulator; its kernels are tested there")
def test_gpu_proof_verifies_and_matches_cpu_parts():
    from numba_cuzk.circuits import build

    r1cs, witness = build("bit_heavy", 12, seed=1)
    pk = setup(r1cs, gpu=True)
    gpu, cpu = Prover(pk, gpu=True), Prover(pk, gpu=False)
    timer = PhaseTimer(gpu.stream)
    proof = gpu.prove(witness, timer=timer)
    assert pairing.verify(pk.verifying_key, gpu.public_inputs(witness), proof)
    assert set(timer.durations_ms()) >= {"ntt", "msm_a", "msm_b2", "msm_h", "epilogue"}
    for prover in (gpu, cpu):
        prover.slots[0].load(witness, prover.stream, PhaseTimer(prover.stream))
    on_gpu, on_cpu = gpu.device_work(gpu.slots[0], PhaseTimer(gpu.stream)), cpu.device_work(cpu.slots[0], PhaseTimer())
    assert {k: to_point(v) for k, v in on_gpu.items()} == {k: to_point(v) for k, v in on_cpu.items()}
    # queued one behind the other on the stream, collected afterwards: each as proved alone
    queued = Prover(pk, gpu=True, slots=2)
    others = [build("bit_heavy", 12, seed=seed)[1] for seed in (2, 3)]
    for slot, w in zip(queued.slots, others):
        slot.load(w, queued.stream, PhaseTimer(queued.stream))
        queued.enqueue(slot, PhaseTimer(queued.stream))
    for slot, w in zip(queued.slots, others):
        cpu.slots[0].load(w, None, PhaseTimer())
        alone = cpu.device_work(cpu.slots[0], PhaseTimer())
        got = queued.collect(slot, PhaseTimer(queued.stream))
        assert {k: to_point(v) for k, v in got.items()} == {k: to_point(v) for k, v in alone.items()}


@pytest.mark.gpu
@pytest.mark.skipif(SIMULATOR, reason="CUDA graphs need a GPU (the simulator has no capture)")
def test_graph_replays_match_direct_launches():
    """A Prover on a stream of its own replays one CUDA graph per slot: every replay gives
    the window sums of direct launches for its own witness (the graph reads the slot's
    buffers, not the capture's values), and its timer gets the phases in order."""
    from numba_cuzk.circuits import build

    r1cs, witness = build("bit_heavy", 12, seed=1)
    pk = setup(r1cs, gpu=True)
    graphed = Prover(pk, gpu=True, stream=cuda.stream(), slots=2)
    direct = Prover(pk, gpu=True, stream=cuda.stream(), graphs=False)
    graphed.warm_up()
    assert graphed.graphs and all(slot.graph is not None for slot in graphed.slots)
    witnesses = [build("bit_heavy", 12, seed=seed)[1] for seed in (2, 3, 4, 5)]
    for round_ in (witnesses[:2], witnesses[2:]):  # each slot's graph replayed twice
        timers = [PhaseTimer(graphed.stream) for _ in round_]
        for slot, w, timer in zip(graphed.slots, round_, timers):
            slot.load(w, graphed.stream, PhaseTimer(graphed.stream))
            graphed.enqueue(slot, timer)
        for slot, w, timer in zip(graphed.slots, round_, timers):
            got = graphed.collect(slot, timer)
            direct.slots[0].load(w, direct.stream, PhaseTimer(direct.stream))
            alone = direct.device_work(direct.slots[0], PhaseTimer(direct.stream))
            assert {k: to_point(v) for k, v in got.items()} == {k: to_point(v) for k, v in alone.items()}
            phases = [(name, start, end) for name, start, end in timer.intervals_ms() if name != "sync"]
            assert [name for name, _, _ in phases][:3] == ["matvec", "ntt", "msm_a"]
            assert all(start <= end for _, start, end in phases)
            assert all(a[2] <= b[1] + 1e-3 for a, b in zip(phases, phases[1:]))
    proof = graphed.prove(witnesses[0])  # prove() on slot 0, its graph again; raises unless it verifies
    assert pairing.verify(pk.verifying_key, graphed.public_inputs(witnesses[0]), proof)


def test_a_captured_graph_keeps_the_ntt_tables_it_reads(monkeypatch):
    """A graph holds bare pointers: the Prover keeps every NTT table cached at capture,
    so that the coset cache's eviction or clear_cache cannot free what a replay reads."""
    from contextlib import contextmanager
    from types import SimpleNamespace

    from numba_cuzk import cuda_graph, ntt

    ntt.clear_cache()
    values = cuda.to_device(np.zeros((8, 16), dtype=np.uint32))
    ntt.shift_to_coset(values, 7, workspace=cuda.device_array((8, 16), dtype=np.uint32))
    tables = ntt.cached_arrays()
    assert len(tables) >= 3  # twiddles, the coset table, constants

    @contextmanager
    def capture(stream):
        yield SimpleNamespace(graph="graph")

    monkeypatch.setattr(cuda_graph, "capture", capture)
    prover = SimpleNamespace(stream=object(), graphs=True, graph_tables=[], _steps=lambda slot, timer: None)
    slot = SimpleNamespace(graph=None, graph_marks=None)
    Prover._capture(prover, slot)
    ntt.clear_cache()
    assert slot.graph == "graph" and ntt.cached_arrays() == []
    assert all(any(kept is t for kept in prover.graph_tables) for t in tables)


@pytest.mark.gpu
@pytest.mark.skipif(SIMULATOR, reason="a whole GPU proof is minutes in the simulator; the split's kernels are tested "
                                      "there (tests/msm/test_bits.py)")
def test_gpu_bit_tail_split_matches_plain_msms():
    """Prover(tail=): bit_heavy 2^16 (32 non-bit wires) proved through the split: its five
    MSMs equal the plain Prover's, the proof verifies, in a CUDA graph too; a MiMC witness
    (every wire non-bit) past the tail is refused at collect, not proved wrong."""
    from numba_cuzk.circuits import build
    from numba_cuzk.msm.bits import TailOverflow

    r1cs, witness = build("bit_heavy", 16, seed=4)
    pk = setup(r1cs, gpu=True)
    plain, split = Prover(pk, gpu=True), Prover(pk, gpu=True, tail=64, stream=cuda.stream(), slots=2)
    assert split.memory.bits == ("a", "b1", "b2", "c") and "G2" not in split.workspaces
    timer = PhaseTimer(split.stream)
    proof = split.prove(witness, timer=timer)
    assert pairing.verify(pk.verifying_key, split.public_inputs(witness), proof)
    assert "split" in timer.durations_ms()
    split.warm_up()  # graphs captured
    for prover in (plain, split):
        prover.slots[0].load(witness, prover.stream, PhaseTimer(prover.stream))
    want = {k: to_point(v) for k, v in plain.device_work(plain.slots[0], PhaseTimer(plain.stream)).items()}
    got = {k: to_point(v) for k, v in split.device_work(split.slots[0], PhaseTimer(split.stream)).items()}
    assert got == want
    r1cs, dense = build("mimc", 10, seed=1)
    pk = setup(r1cs, gpu=True)
    with pytest.raises(TailOverflow, match="planned for at most 64"):
        Prover(pk, gpu=True, tail=64).prove(dense)
    roomy = Prover(pk, gpu=True, tail=1 << 12)
    assert pairing.verify(pk.verifying_key, roomy.public_inputs(dense), roomy.prove(dense))


def test_blinding_gives_the_proof_its_r_and_s(cube):
    """A proof assembled with a drawn Blinding is Groth16's A = alpha + A' + r delta,
    B = beta + B' + s delta, C = C' + H' + s A + r B1 - r s delta (B1 = beta + B1' + s delta),
    worked out here in the reference's integers; each draw is fresh."""
    _, witness, pk, prover = cube
    slot = prover.slots[0]
    slot.load(witness, prover.stream, PhaseTimer())
    msm = {name: to_point(sums) for name, sums in prover.device_work(slot, PhaseTimer()).items()}
    blinding = prover.epilogue_key.blinding()
    assert blinding.r != prover.epilogue_key.blinding().r
    r, s = blinding.r, blinding.s
    proof = prover.assemble(prover.device_work(slot, PhaseTimer()), prover.public_inputs(witness), blinding=blinding)
    a = g1.add(g1.add(pk.alpha_g1, msm["a"]), g1.mul(pk.delta_g1, r))
    b1 = g1.add(g1.add(pk.beta_g1, msm["b1"]), g1.mul(pk.delta_g1, s))
    c = g1.add(g1.add(msm["c"], msm["h"]), g1.add(g1.mul(a, s), g1.mul(b1, r)))
    assert proof.a == a
    assert proof.b == g2.add(g2.add(pk.beta_g2, msm["b2"]), g2.mul(pk.delta_g2, s))
    assert proof.c == g1.add(c, g1.neg(g1.mul(pk.delta_g1, r * s % R)))
