"""Rank-1 constraint systems: sum_j A[i,j] w_j * sum_j B[i,j] w_j = sum_j C[i,j] w_j.

Wires (signals): wire 0 is the constant 1, then ``n_public`` public wires, then the
private ones (circom's order: outputs, public inputs, then the rest). A witness is an
(8, n_wires) uint32 array of canonical Fr elements (field layout, codec.to_limbs).

Each matrix is CSR over constraints: row i's terms are ``indices[indptr[i]:indptr[i+1]]``
(wire ids, uint32) with coefficients ``values[:, indptr[i]:indptr[i+1]]`` ((8, nnz) uint32,
canonical Fr). No duplicate wire within a row is required.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from numba_cuzk.field.params import FR


@dataclass(frozen=True)
class SparseMatrix:
    """CSR rows of one R1CS matrix: indptr (rows + 1,) int64, indices (nnz,) uint32,
    values (8, nnz) uint32 canonical Fr."""

    indptr: np.ndarray
    indices: np.ndarray
    values: np.ndarray

    @property
    def rows(self) -> int:
        return len(self.indptr) - 1

    @property
    def nnz(self) -> int:
        return int(self.indptr[-1])

    def check(self, name: str, n_wires: int) -> None:
        """Raise ValueError naming the matrix and the first malformed entry."""
        if self.indptr.ndim != 1 or self.indptr[0] != 0 or np.any(np.diff(self.indptr) < 0):
            raise ValueError(f"matrix {name}: indptr must start at 0 and not decrease")
        if self.indices.shape != (self.nnz,) or self.values.shape != (FR.limbs, self.nnz):
            raise ValueError(f"matrix {name}: {self.nnz} terms but indices {self.indices.shape} "
                             f"and values {self.values.shape}")
        bad = np.flatnonzero(self.indices >= n_wires)
        if bad.size:
            row = int(np.searchsorted(self.indptr, bad[0], side="right") - 1)
            raise ValueError(f"matrix {name}: constraint {row} uses wire {int(self.indices[bad[0]])} "
                             f">= {n_wires} wires")


@dataclass(frozen=True)
class R1CS:
    """A constraint system: n_wires wires (wire 0 = 1, then n_public public wires), and
    matrices a, b, c with one row per constraint."""

    n_wires: int
    n_public: int
    a: SparseMatrix
    b: SparseMatrix
    c: SparseMatrix

    @property
    def n_constraints(self) -> int:
        return self.a.rows

    def check(self) -> None:
        if not 0 <= self.n_public < self.n_wires:
            raise ValueError(f"{self.n_public} public wires of {self.n_wires}")
        for name, m in (("A", self.a), ("B", self.b), ("C", self.c)):
            if m.rows != self.n_constraints:
                raise ValueError(f"matrix {name} has {m.rows} rows, A has {self.n_constraints}")
            m.check(name, self.n_wires)
