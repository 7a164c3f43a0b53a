"""Groth16 keys and proofs in memory (snarkjs's zkey / verification_key.json / proof.json
hold the same things; formats/ reads and writes them).

Small points are reference affine tuples (curve/reference.py: canonical Python ints, Fq2
as (c0, c1), None for infinity). Queries are affine points in the curve layout
(curve/layout.py: (2L, count) uint32, Montgomery coordinates, infinity = (0, 0); L = 12
for G1, 24 for G2): zkey sections map onto them without a Python object per point.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

import numpy as np


@dataclass(frozen=True)
class Coefficients:
    """zkey section 4: the nonzero entries of A and B (C is not stored).

    matrix (k,) uint8 (0 = A, 1 = B), constraint (k,) uint32, signal (k,) uint32,
    value (8, k) uint32: coef * R^2 mod r (R = 2^256), as snarkjs files store it: a
    Montgomery product with a canonical witness value w gives coef * w * R, the product's
    Montgomery form, so neither the key nor the witness is converted to prove.
    Rows n_constraints .. n_constraints + n_public of A hold the entry 1 at wire i for
    i = 0..n_public (snarkjs adds them so the public inputs' polynomials are independent).
    """

    matrix: np.ndarray
    constraint: np.ndarray
    signal: np.ndarray
    value: np.ndarray


@dataclass(frozen=True)
class VerifyingKey:
    n_public: int
    alpha_g1: tuple
    beta_g2: tuple
    gamma_g2: tuple
    delta_g2: tuple
    ic: list  # n_public + 1 G1 points


@dataclass(frozen=True)
class ProvingKey:
    """n_vars wires (wire 0 = 1, then n_public public ones); domain_size = 2^log_n >=
    constraints + n_public + 1.

    a_g1, b_g1: (24, n_vars); b_g2: (48, n_vars); c_g1: (24, n_vars - n_public - 1) for
    the private wires; h_g1: (24, domain_size), the Lagrange polynomials of the 2n-point
    domain at its odd points, divided by delta (see prove.py).
    """

    n_vars: int
    n_public: int
    domain_size: int
    alpha_g1: tuple
    beta_g1: tuple
    beta_g2: tuple
    gamma_g2: tuple
    delta_g1: tuple
    delta_g2: tuple
    ic: list
    coefficients: Coefficients
    a_g1: np.ndarray
    b_g1: np.ndarray
    b_g2: np.ndarray
    c_g1: np.ndarray
    h_g1: np.ndarray
    # query field -> where it was read ("C.zkey: section 5 ..."), for the queries whose
    # points are still to be checked on their curve and subgroup: the Prover checks its copy
    unchecked: dict[str, str] = field(default_factory=dict)
    # called by the Prover once every unchecked query passed (key_checks.py records the file)
    after_checks: Callable[[], object] | None = field(default=None, repr=False, compare=False)

    @property
    def log_n(self) -> int:
        return self.domain_size.bit_length() - 1

    @property
    def verifying_key(self) -> VerifyingKey:
        return VerifyingKey(self.n_public, self.alpha_g1, self.beta_g2, self.gamma_g2, self.delta_g2, self.ic)


@dataclass(frozen=True)
class Proof:
    """pi_a (G1), pi_b (G2), pi_c (G1), reference affine tuples."""

    a: tuple
    b: tuple
    c: tuple
