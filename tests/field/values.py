"""Input values shared by the field tests: edge cases and hypothesis strategies."""

from __future__ import annotations

from hypothesis import strategies as st

from numba_cuzk.field.params import FieldParams


def edge_values(params: FieldParams) -> list[int]:
    """0, 1, p-1, p-2, limb and word boundaries, R, R^2 and halves: where carries break."""
    p = params.modulus
    values = {0, 1, 2, p - 1, p - 2, p // 2, (p + 1) // 2, params.r, params.r2, params.r_inv}
    for k in range(32, params.bits, 32):
        values |= {(1 << k) - 1, 1 << k, (1 << k) + 1}
    values |= {p - (1 << k) for k in range(0, params.bits - 1, 32)}
    return sorted(v % p for v in values)


def elements(params: FieldParams):
    """Canonical elements, biased towards the edge values."""
    return st.one_of(st.sampled_from(edge_values(params)), st.integers(0, params.modulus - 1))
