"""Sparse matrix-vector products over Fr, and the check that a witness satisfies an R1CS.

``matvec`` is A·w (B·w, C·w) of an R1CS on the CPU (kernels.csr_matvec, the prover's
kernel). ``check_witness``
refuses a witness before any GPU work, naming the first constraint it breaks.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from numba_cuzk.field.codec import first_noncanonical, from_limbs, to_montgomery
from numba_cuzk.field.kernels import mul_sub
from numba_cuzk.field.params import FR
from numba_cuzk.groth16.kernels import csr_matvec
from numba_cuzk.groth16.r1cs import R1CS, SparseMatrix

_N = FR.limbs


def matvec(matrix: SparseMatrix, witness_mont: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
    """out[:, i] = sum_j matrix[i, j] * w_j for every row i, on all CPU cores.

    matrix: CSR with canonical coefficients (r1cs.py); witness_mont: (8, n_wires) uint32,
    Montgomery form; out: (8, rows) uint32, or None for a new array. Returns out, in
    Montgomery form. Raises ValueError on a shape mismatch or a wire >= n_wires (the
    loop itself does no bounds checks).
    """
    if witness_mont.dtype != np.uint32 or witness_mont.ndim != 2 or witness_mont.shape[0] != _N:
        raise ValueError(f"witness must be uint32 of shape ({_N}, n_wires), got {witness_mont.dtype} "
                         f"{witness_mont.shape}")
    matrix.check("given to matvec", witness_mont.shape[1])
    if out is None:
        out = np.empty((_N, matrix.rows), dtype=np.uint32)
    elif out.dtype != np.uint32 or out.shape != (_N, matrix.rows) or not out.flags.c_contiguous:
        raise ValueError(f"out must be C-contiguous uint32 of shape ({_N}, {matrix.rows}), got {out.dtype} "
                         f"{out.shape}")
    csr_matvec(out, matrix.indptr, matrix.indices, matrix.values, np.ascontiguousarray(witness_mont), False)
    return out


def validate_witness(witness: np.ndarray, n_wires: int, into: np.ndarray | None = None) -> None:
    """Raise ValueError unless ``witness`` is a uint32 (8, n_wires) array of canonical Fr
    with wire 0 = 1 (the constant wire): what a prover can take, checked on the host.
    ``into``: an (8, n_wires) uint32 buffer (a proof slot's) that gets a copy of the
    witness in the same pass; on an error what it holds is undefined."""
    want = (_N, n_wires)
    if not isinstance(witness, np.ndarray) or witness.dtype != np.uint32 or witness.shape != want:
        raise ValueError(f"witness must be a uint32 array of shape {want}, got "
                         f"{getattr(witness, 'dtype', type(witness).__name__)} {getattr(witness, 'shape', '')}")
    bad = first_noncanonical(witness, FR, out=into)
    if bad >= 0:
        raise ValueError(f"witness wire {bad} is not canonical: it is >= r")
    if from_limbs(witness[:, :1], FR) != [1]:
        raise ValueError(f"witness wire 0 must be 1, got {from_limbs(witness[:, :1], FR)[0]}")


def check_witness(r1cs: R1CS, witness: np.ndarray, names: Sequence[str | None] | None = None) -> None:
    """Raise ValueError unless ``witness`` satisfies every constraint of ``r1cs``.

    witness: (8, n_wires) uint32 canonical Fr with wire 0 = 1 (validate_witness). names:
    optional constraint names (ConstraintSystem.constraint_names), quoted in the error.
    The error names the first failing constraint, with its A·w, B·w and C·w.
    """
    r1cs.check()
    validate_witness(witness, r1cs.n_wires)
    if names is not None and len(names) != r1cs.n_constraints:
        raise ValueError(f"{len(names)} constraint names for {r1cs.n_constraints} constraints")
    w = to_montgomery(witness, FR)
    products = [matvec(m, w) for m in (r1cs.a, r1cs.b, r1cs.c)]
    residual = np.empty_like(products[0])
    mul_sub(residual, *products)  # (A·w)(B·w) - C·w, zero where a constraint holds
    failing = np.flatnonzero(residual.any(axis=0))
    if failing.size:
        raise ValueError(_describe_failure(int(failing[0]), products, names))


def _describe_failure(row: int, products: list[np.ndarray], names: Sequence[str | None] | None) -> str:
    a, b, c = (from_limbs(p[:, row:row + 1], FR)[0] * FR.r_inv % FR.modulus for p in products)
    label = f" ({names[row]})" if names is not None and names[row] else ""
    return (f"constraint {row}{label} is not satisfied: A·w = {a:#x}, B·w = {b:#x}, "
            f"(A·w)(B·w) = {a * b % FR.modulus:#x} != C·w = {c:#x}")
