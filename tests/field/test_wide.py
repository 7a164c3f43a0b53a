"""The CPU target's field functions (wide.py's 64-bit-limb intrinsics behind mont.py's
mul, sqr, add, sub, neg) against Python integers.

Montgomery forms are computed here with Python ints, not with codec (which runs the code
under test). Each function runs twice per element: on stack scratch arrays (as the curve
formulas call it, out aliasing the first input too) and on strided columns of the batch.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from numba import njit

from numba_cuzk.field import codec
from numba_cuzk.field.mont import montgomery
from numba_cuzk.field.params import FQ, FR, FieldParams
from numba_cuzk.field.target import local_u32
from numba_cuzk.field.wide import word_constants
from tests.field.values import edge_values, elements

FIELDS = [FR, FQ]
IDS = ["Fr", "Fq"]
POISON = np.uint32(0xA5A5A5A5)
BINARY = {
    "add": lambda p, a, b: (a + b) % p,
    "sub": lambda p, a, b: (a - b) % p,
    "mul": lambda p, a, b: a * b % p,
}
UNARY = {
    "neg": lambda p, a: -a % p,
    "dbl": lambda p, a: 2 * a % p,
    "sqr": lambda p, a: a * a % p,
    "inv": lambda p, a: pow(a, p - 2, p),
}


@lru_cache(maxsize=None)
def _runner(params: FieldParams, name: str, binary: bool):
    ops = montgomery(params)
    N, f = ops.limbs, getattr(ops, name)

    if binary:
        @njit
        def run(out, aliased, columns, a, b):
            for i in range(a.shape[1]):
                x = local_u32(N)
                y = local_u32(N)
                z = local_u32(N)
                for j in range(N):
                    x[j] = a[j, i]
                    y[j] = b[j, i]
                f(z, x, y)
                f(x, x, y)
                f(columns[:, i], a[:, i], b[:, i])
                for j in range(N):
                    out[j, i] = z[j]
                    aliased[j, i] = x[j]
    else:
        @njit
        def run(out, aliased, columns, a, b):
            for i in range(a.shape[1]):
                x = local_u32(N)
                z = local_u32(N)
                for j in range(N):
                    x[j] = a[j, i]
                f(z, x)
                f(x, x)
                f(columns[:, i], a[:, i])
                for j in range(N):
                    out[j, i] = z[j]
                    aliased[j, i] = x[j]

    return run


def _mont(values: list[int], params: FieldParams) -> np.ndarray:
    return codec.to_limbs([v * (1 << (32 * params.limbs)) % params.modulus for v in values], params)


def _canonical(limbs: np.ndarray, params: FieldParams) -> list[int]:
    return [v * params.r_inv % params.modulus for v in codec.from_limbs(limbs, params)]


def _apply(params: FieldParams, name: str, a: list[int], b: list[int] | None = None) -> list[int]:
    """Results of ``name`` on canonical inputs; asserts the three call forms agree."""
    shape = (params.limbs, len(a))
    out, aliased, columns = (np.full(shape, POISON, dtype=np.uint32) for _ in range(3))
    la = _mont(a, params)
    lb = _mont(b, params) if b is not None else la
    _runner(params, name, b is not None)(out, aliased, columns, la, lb)
    result = _canonical(out, params)
    assert _canonical(aliased, params) == result, f"{name}: out aliasing an input differs"
    assert _canonical(columns, params) == result, f"{name}: strided columns differ"
    assert all(v < params.modulus for v in codec.from_limbs(out, params)), f"{name}: not canonical"
    return result


def _near_r(params: FieldParams) -> list[int]:
    """Montgomery residues near R and 2^(64k): values whose limbs are all ones or zeros."""
    p, big_r = params.modulus, 1 << (32 * params.limbs)
    raw = [big_r - p - 1, big_r - p, (big_r - 1) % p, p - 1, p >> 1, (1 << 64) - 1, 1 << 64, (1 << 128) - 1]
    raw += [p - (1 << k) for k in range(64, params.bits, 64)]
    return [v * params.r_inv % p for v in raw if 0 <= v < p]  # canonical values whose residues are these


@pytest.mark.parametrize("params", FIELDS, ids=IDS)
def test_word_constants(params):
    words, n0 = word_constants(params)
    assert sum(w << (64 * k) for k, w in enumerate(words)) == params.modulus
    assert (params.modulus * n0) % (1 << 64) == (1 << 64) - 1


@pytest.mark.parametrize("params", FIELDS, ids=IDS)
@pytest.mark.parametrize("name", sorted(BINARY))
def test_every_pair_of_edge_values(params, name):
    edges = edge_values(params) + _near_r(params)
    a = [x for x in edges for _ in edges]
    b = [y for _ in edges for y in edges]
    assert _apply(params, name, a, b) == [BINARY[name](params.modulus, x, y) for x, y in zip(a, b)]


@pytest.mark.parametrize("params", FIELDS, ids=IDS)
@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary_edge_values(params, name):
    edges = edge_values(params) + _near_r(params)
    assert _apply(params, name, edges) == [UNARY[name](params.modulus, x) for x in edges]


@pytest.mark.parametrize("params", FIELDS, ids=IDS)
@pytest.mark.parametrize("name", sorted(BINARY) + sorted(UNARY))
def test_random_batches(params, name):
    @settings(max_examples=30, deadline=None)
    @given(st.lists(st.tuples(elements(params), elements(params)), min_size=1, max_size=64))
    def check(pairs):
        a, b = [x for x, _ in pairs], [y for _, y in pairs]
        if name in BINARY:
            assert _apply(params, name, a, b) == [BINARY[name](params.modulus, x, y) for x, y in zip(a, b)]
        else:
            assert _apply(params, name, a) == [UNARY[name](params.modulus, x) for x in a]

    check()


@pytest.mark.parametrize("params", FIELDS, ids=IDS)
def test_matches_portable_product(params):
    """The wide product agrees with mont.py's portable CIOS on raw residues too."""
    ops = montgomery(params)
    mul, mul_cios = ops.mul, ops.mul_cios

    @njit
    def both(a, b, wide, portable):
        for i in range(a.shape[1]):
            mul(wide[:, i], a[:, i], b[:, i])
            mul_cios(portable[:, i], a[:, i], b[:, i])

    rng = np.random.default_rng(7)
    values = [int(v) for v in rng.integers(0, 1 << 62, 256)]
    values = [(v * 0x9E3779B97F4A7C15 ** 7) % params.modulus for v in values]
    a, b = codec.to_limbs(values, params), codec.to_limbs(values[::-1], params)
    wide, portable = np.zeros_like(a), np.ones_like(a)
    both(a, b, wide, portable)
    np.testing.assert_array_equal(wide, portable)
