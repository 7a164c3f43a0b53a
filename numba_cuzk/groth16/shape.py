"""A proving key's shape, as plain data: what memory plans and the file headers share.

Pure Python (no numba, no kernels), so a zkey's header can be read and a plan sized in a
process that never compiles anything (formats/headers.py, memory.py, circuits.key_shape).
"""

from __future__ import annotations

from dataclasses import dataclass

from numba_cuzk.curve.params import G1, G2, CurveParams

# query -> (ProvingKey field, curve)
QUERIES = {"a": ("a_g1", G1), "b1": ("b_g1", G1), "b2": ("b_g2", G2), "c": ("c_g1", G1), "h": ("h_g1", G1)}


@dataclass(frozen=True)
class KeyShape:
    """What a plan needs of a key: n_vars wires (wire 0 = 1, then n_public public ones),
    domain_size n (a power of two), ``coefficients`` nonzero entries of A and B."""

    n_vars: int
    n_public: int
    domain_size: int
    coefficients: int

    @classmethod
    def of(cls, pk) -> KeyShape:
        return cls(pk.n_vars, pk.n_public, pk.domain_size, int(pk.coefficients.matrix.size))

    @property
    def log_n(self) -> int:
        return self.domain_size.bit_length() - 1

    def points(self, query: str) -> int:
        """Points of ``query`` (a, b1, b2, c, h)."""
        return {"c": self.n_vars - self.n_public - 1, "h": self.domain_size}.get(query, self.n_vars)

    def msm_scalars(self, curve: CurveParams) -> int:
        """Scalars of the largest MSM on ``curve``."""
        return max(self.points(q) for q, (_, c) in QUERIES.items() if c is curve)
