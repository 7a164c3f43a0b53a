"""Circuits and witnesses: the ConstraintSystem API, the bulk builders, matvec and
check_witness, against a Python-int evaluation of the R1CS (CPU only, small sizes)."""

from __future__ import annotations

import random
import re

import numpy as np
import pytest

from numba_cuzk.circuits import builtin as circuits
from numba_cuzk.field.codec import from_limbs, from_montgomery, to_limbs, to_montgomery
from numba_cuzk.field.params import FR
from numba_cuzk.field.reference import fr
from numba_cuzk.groth16.constraint_system import ONE, ConstraintSystem, LinearCombination
from numba_cuzk.groth16.r1cs import R1CS, SparseMatrix
from numba_cuzk.groth16.witness import check_witness, matvec
from tests.field.values import edge_values

P = FR.modulus
POISON = np.uint32(0xA5A5A5A5)


def reference_matvec(matrix: SparseMatrix, witness: list[int]) -> list[int]:
    """Row sums with Python ints: the ground truth for matvec and check_witness."""
    coefficients = from_limbs(matrix.values, FR)
    return [sum(coefficients[k] * witness[int(matrix.indices[k])]
                for k in range(matrix.indptr[i], matrix.indptr[i + 1])) % P for i in range(matrix.rows)]


def reference_failures(r1cs: R1CS, witness: np.ndarray) -> list[int]:
    """Indices of the constraints the witness breaks, by Python-int evaluation."""
    w = from_limbs(witness, FR)
    a, b, c = (reference_matvec(m, w) for m in (r1cs.a, r1cs.b, r1cs.c))
    return [i for i in range(r1cs.n_constraints) if fr.mul(a[i], b[i]) != c[i]]


def cubic(x: int = 3, out: int | None = None, witness: bool = True) -> ConstraintSystem:
    """x^3 + x + 5 = out, with out public but allocated after x (to_r1cs moves it to wire 1)."""
    cs = ConstraintSystem(witness=witness)
    xv = cs.private(x)
    outv = cs.public(x ** 3 + x + 5 if out is None else out)
    x2 = cs.private(x * x)
    cs.enforce(xv, xv, x2, name="x^2")
    x3 = cs.private(x ** 3)
    cs.enforce(x2, xv, x3, name="x^3")
    cs.enforce(x3 + xv + 5, ONE, outv, name="out")
    return cs


# --------------------------------------------------------------------------------------
# ConstraintSystem


def test_cubic_circuit_is_satisfied_with_public_wire_first():
    cs = cubic()
    r1cs, witness = cs.to_r1cs(), cs.witness()
    assert (r1cs.n_wires, r1cs.n_public, r1cs.n_constraints) == (5, 1, 3)
    assert from_limbs(witness, FR) == [1, 35, 3, 9, 27]  # ONE, out, x, x2, x3
    check_witness(r1cs, witness, cs.constraint_names)
    assert reference_failures(r1cs, witness) == []


@pytest.mark.parametrize(("wire", "expected"), [(4, "constraint 1 (x^3)"), (1, "constraint 2 (out)"),
                                                (2, "constraint 0 (x^2)")])
def test_cubic_wrong_value_names_first_failing_constraint(wire, expected):
    cs = cubic()
    witness = cs.witness()
    witness[:, wire] = to_limbs([from_limbs(witness[:, wire:wire + 1], FR)[0] + 1], FR)[:, 0]
    with pytest.raises(ValueError, match=re.escape(expected) + " is not satisfied"):
        check_witness(cs.to_r1cs(), witness, cs.constraint_names)


def test_cubic_wrong_public_output_is_refused():
    cs = cubic(out=36)
    with pytest.raises(ValueError, match=r"constraint 2 \(out\).*C·w = 0x24$"):
        check_witness(cs.to_r1cs(), cs.witness(), cs.constraint_names)


def test_setup_synthesis_gives_the_same_r1cs_without_values():
    with_values, without = cubic().to_r1cs(), cubic(witness=False).to_r1cs()
    for m in ("a", "b", "c"):
        for field in ("indptr", "indices", "values"):
            assert np.array_equal(getattr(getattr(with_values, m), field), getattr(getattr(without, m), field))
    cs = ConstraintSystem(witness=False)
    assert cs.value(cs.private(None) + 1) is None
    with pytest.raises(ValueError, match="witness=False"):
        cs.witness()


def test_missing_value_is_refused_when_synthesizing_a_witness():
    with pytest.raises(ValueError, match="private variable 0 needs an int value"):
        ConstraintSystem().private(None)


def test_linear_combinations():
    cs = ConstraintSystem()
    x, y = cs.private(10), cs.public(7)
    assert cs.value(x + 3 * y - 1) == 30
    assert cs.value(1 - x) == P - 9
    assert (x - x).terms == {}
    assert (x + x).terms == {x.key: 2}
    assert (-y * 2).terms == {y.key: P - 2}
    assert LinearCombination.of(-1).terms == {ONE.key: P - 1}
    with pytest.raises(TypeError, match="allocate a product"):
        _ = x * y


# --------------------------------------------------------------------------------------
# check_witness: malformed inputs


def test_check_witness_refuses_malformed_witnesses():
    cs = cubic()
    r1cs, witness = cs.to_r1cs(), cs.witness()
    with pytest.raises(ValueError, match=r"shape \(8, 5\)"):
        check_witness(r1cs, witness[:, :4])
    not_one = witness.copy()
    not_one[0, 0] = 2
    with pytest.raises(ValueError, match="wire 0 must be 1"):
        check_witness(r1cs, not_one)
    too_big = witness.copy()
    too_big[:, 3] = FR.modulus_array
    with pytest.raises(ValueError, match="wire 3 is not canonical"):
        check_witness(r1cs, too_big)
    with pytest.raises(ValueError, match="2 constraint names for 3"):
        check_witness(r1cs, witness, ["a", "b"])


# --------------------------------------------------------------------------------------
# matvec


def random_matrix(rows: int, n_wires: int, values: list[int], rng: random.Random) -> SparseMatrix:
    """CSR with 0-5 terms per row (some rows empty), coefficients drawn from ``values``."""
    lengths = [rng.randrange(6) for _ in range(rows)]
    nnz = sum(lengths)
    return SparseMatrix(indptr=np.cumsum([0] + lengths, dtype=np.int64),
                        indices=np.array([rng.randrange(n_wires) for _ in range(nnz)], dtype=np.uint32),
                        values=to_limbs([rng.choice(values) for _ in range(nnz)], FR))


@pytest.mark.parametrize("seed", range(4))
def test_matvec_matches_python_ints(seed):
    rng = random.Random(seed)
    pool = edge_values(FR) + [rng.randrange(P) for _ in range(20)]  # 0, 1, r-1 among them
    n_wires, rows = 1 + rng.randrange(40), 1 + rng.randrange(200)
    matrix = random_matrix(rows, n_wires, pool, rng)
    witness = [rng.choice(pool) for _ in range(n_wires)]
    out = np.full((FR.limbs, rows), POISON, dtype=np.uint32)
    assert matvec(matrix, to_montgomery(to_limbs(witness, FR), FR), out) is out
    assert from_limbs(from_montgomery(out, FR), FR) == reference_matvec(matrix, witness)


def test_matvec_sums_to_r_minus_one_and_wraps():
    """One row, wire 1 twice: (-1)*1 + 1*(-1) + (-1)*(-1) = -1 mod r."""
    matrix = SparseMatrix(indptr=np.array([0, 3], dtype=np.int64), indices=np.array([0, 1, 1], dtype=np.uint32),
                          values=to_limbs([P - 1, 1, P - 1], FR))
    out = matvec(matrix, to_montgomery(to_limbs([1, P - 1], FR), FR))
    assert from_limbs(from_montgomery(out, FR), FR) == [P - 1]


def test_matvec_refuses_a_wire_beyond_the_witness():
    matrix = SparseMatrix(indptr=np.array([0, 1], dtype=np.int64), indices=np.array([3], dtype=np.uint32),
                          values=to_limbs([1], FR))
    with pytest.raises(ValueError, match="uses wire 3 >= 3 wires"):
        matvec(matrix, np.zeros((FR.limbs, 3), dtype=np.uint32))


# --------------------------------------------------------------------------------------
# Bulk builders


SMALL = {
    "mimc": (lambda: circuits.mimc_chain(40, seed=1), circuits.mimc_constraints(40)),
    "merkle_w2": (lambda: circuits.merkle_path(3, 2, seed=2), circuits.merkle_constraints(3, 2)),
    "merkle_w5": (lambda: circuits.merkle_path(2, 5, seed=3), circuits.merkle_constraints(2, 5)),
    "bit_heavy": (lambda: circuits.bit_heavy(3, 2, seed=4), circuits.bit_heavy_constraints(3, 2)),
}


@pytest.fixture(scope="module", params=sorted(SMALL))
def small_circuit(request):
    make, n_constraints = SMALL[request.param]
    r1cs, witness = make()
    assert r1cs.n_constraints == n_constraints
    return r1cs, witness


def test_builder_witness_satisfies_its_r1cs(small_circuit):
    r1cs, witness = small_circuit
    check_witness(r1cs, witness)
    assert reference_failures(r1cs, witness) == []


@pytest.mark.parametrize("trial", range(6))
def test_builder_catches_one_changed_wire(small_circuit, trial):
    r1cs, witness = small_circuit
    wire = random.Random(trial).randrange(1, r1cs.n_wires)  # wire 0 has its own check
    bad = witness.copy()
    bad[0, wire] ^= 1  # value ^ 1 < r unless the value is r - 1 (random values: never)
    first = reference_failures(r1cs, bad)
    assert first, f"wire {wire} is unconstrained"
    with pytest.raises(ValueError, match=f"^constraint {first[0]} is not satisfied"):
        check_witness(r1cs, bad)


def test_bit_heavy_witness_is_mostly_zeros_and_ones():
    _, witness = circuits.bit_heavy(4, 3, seed=5)
    small = ~witness[1:].any(axis=0) & (witness[0] <= 1)
    assert small.mean() >= 0.8
    assert 0.2 < witness[0][small].mean() < 0.8  # both bits occur, not a constant


@pytest.mark.parametrize("name", circuits.CIRCUITS)
def test_split_tail_holds_every_non_bit_scalar(name):
    """A circuit's split_tail (the bit/tail split's capacity) is at least its witnesses'
    count of scalars other than 0 and 1, whatever the seed; dense circuits have none."""
    tail = circuits.split_tail(name)
    if name != "bit_heavy":
        assert tail is None
        return
    for seed in range(4):
        witness = circuits.witness(name, 12, seed)
        others = int((witness[1:].any(axis=0) | (witness[0] > 1)).sum())
        assert 0 < others <= 2 * circuits.BIT_HEAVY_WORDS <= tail
    with pytest.raises(ValueError, match="unknown circuit 'sha'"):
        circuits.split_tail("sha")


def test_bit_heavy_rounds_match_the_bitwise_definition():
    """The Numba rounds (whole words) against the definition on bit arrays: x XOR (y AND z)
    plus v, operands rolled and rotated as _word_operands does; edge words 0 and 2^32 - 1."""
    rng = np.random.default_rng(3)
    for words_in in (rng.integers(0, 1 << 32, size=5, dtype=np.uint64), np.zeros(4, np.uint64),
                     np.full(4, (1 << 32) - 1, np.uint64)):
        bits_in, g, h, s = circuits._bit_heavy_values(words_in, 3)
        state = ((words_in[:, None] >> np.arange(32, dtype=np.uint64)) & 1).astype(np.uint8)
        assert np.array_equal(bits_in, state)
        for r in range(3):
            x, y, z, v = circuits._word_operands(state)
            assert np.array_equal(g[r], y & z) and np.array_equal(h[r], x ^ (y & z))
            total = circuits._pack(h[r]) + circuits._pack(v)
            assert np.array_equal(s[r], (total[:, None] >> np.arange(33, dtype=np.uint64)) & 1)
            state = s[r, :, :32]


@pytest.mark.parametrize("name", circuits.CIRCUITS)
def test_build_fills_the_domain(name):
    k = 12
    r1cs, witness = circuits.build(name, k, seed=6)
    budget = (1 << k) - r1cs.n_public - 1
    step = {"mimc": 3, "merkle": circuits.merkle_constraints(2, circuits.MERKLE_WIDTH) - circuits.merkle_constraints(
        1, circuits.MERKLE_WIDTH), "bit_heavy": 98 * circuits.BIT_HEAVY_WORDS}[name]
    assert budget - step < r1cs.n_constraints <= budget
    check_witness(r1cs, witness)


def test_build_seeds_and_errors():
    _, w1 = circuits.build("mimc", 8, seed=1)
    _, w1_again = circuits.build("mimc", 8, seed=1)
    _, w2 = circuits.build("mimc", 8, seed=2)
    assert np.array_equal(w1, w1_again) and not np.array_equal(w1, w2)
    with pytest.raises(ValueError, match="too small for circuit 'bit_heavy'"):
        circuits.build("bit_heavy", 10)
    with pytest.raises(ValueError, match="unknown circuit"):
        circuits.build("sha", 10)


@pytest.mark.parametrize("name", circuits.CIRCUITS)
def test_seeds_are_instances_of_one_r1cs(name):
    """Partitions of a job share a proving key: only the witness may depend on the seed."""
    k = 12 if name == "bit_heavy" else 8
    (r1, w1), (r2, w2) = circuits.build(name, k, seed=1), circuits.build(name, k, seed=2)
    assert not np.array_equal(w1, w2)
    for m1, m2 in ((r1.a, r2.a), (r1.b, r2.b), (r1.c, r2.c)):
        assert all(np.array_equal(getattr(m1, f), getattr(m2, f)) for f in ("indptr", "indices", "values"))
    check_witness(r1, w2)


@pytest.mark.parametrize("name", circuits.CIRCUITS)
def test_witness_alone_is_the_builds_witness(name):
    """circuits.witness (a partition's synthesis) gives build's witness for every seed."""
    k = 12 if name == "bit_heavy" else 8
    for seed in (0, 3):
        assert np.array_equal(circuits.witness(name, k, seed), circuits.build(name, k, seed)[1])


def test_witness_alone_does_not_build_the_r1cs():
    """bit_heavy's R1CS is ~6x its witness: a synthesis that built it would peak far above
    the witness (numpy's allocations are traced)."""
    import tracemalloc

    tracemalloc.start()
    try:
        w = circuits.witness("bit_heavy", 16, seed=1)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    r1cs, _ = circuits.build("bit_heavy", 16, seed=1)
    r1cs_bytes = sum(x.nbytes for m in (r1cs.a, r1cs.b, r1cs.c) for x in (m.indptr, m.indices, m.values))
    assert r1cs_bytes > 5 * w.nbytes
    assert peak < 2 * w.nbytes, f"synthesis peaked at {peak} B for a {w.nbytes} B witness"
