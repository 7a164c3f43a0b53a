"""Fq's product in ADX assembly (field/adx.py) against Python integers, through the symbols
every CPU caller uses (curve/target.field_call): Fq's and Fq2's product and square, and
the binding's choice.

Montgomery forms are made here with Python ints. Each product runs three ways: into a
fresh array, into its first input and into its second (out may alias either).
"""

from __future__ import annotations

import os
import subprocess
import sys
from functools import lru_cache

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from numba import njit

from numba_cuzk.curve import target
from numba_cuzk.field import adx, codec
from numba_cuzk.field.fq2 import fq2_ops
from numba_cuzk.field.mont import fq_ops
from numba_cuzk.field.params import FQ
from numba_cuzk.field.reference import fq2
from numba_cuzk.field.target import local_u32
from tests.field.values import edge_values, elements

P = FQ.modulus
POISON = np.uint32(0xA5A5A5A5)
FIELDS = {"Fq": fq_ops, "Fq2": fq2_ops}
needs_adx = pytest.mark.skipif(not adx.available(), reason="the host has no ADX/BMI2 (or NUMBA_CUZK_ADX=0)")


@lru_cache(maxsize=None)
def _runner(field: str):
    ops = FIELDS[field]
    N = ops.limbs
    mul, sqr = target.field_call(ops.mul, 3, N), target.field_call(ops.sqr, 2, N)

    @njit
    def run(a, b, out):
        """out[0] = a b, out[1] = a b into a's copy, out[2] = a b into b's copy, out[3] = a^2."""
        for i in range(a.shape[1]):
            x, y, z = local_u32(N), local_u32(N), local_u32(N)
            for k in range(3):
                for j in range(N):
                    x[j] = a[j, i]
                    y[j] = b[j, i]
                if k == 0:
                    mul(z, x, y)
                elif k == 1:
                    mul(x, x, y)
                else:
                    mul(y, x, y)
                for j in range(N):
                    out[k, j, i] = z[j] if k == 0 else x[j] if k == 1 else y[j]
            for j in range(N):
                x[j] = a[j, i]
            sqr(x, x)
            for j in range(N):
                out[3, j, i] = x[j]

    return run


def _limbs(values: list) -> np.ndarray:
    """Fq ints or Fq2 pairs -> Montgomery limbs, (12 or 24, n)."""
    parts = [(v,) if isinstance(v, int) else v for v in values]
    return np.vstack([codec.to_limbs([p[c] * FQ.r % P for p in parts], FQ) for c in range(len(parts[0]))])


def _values(limbs: np.ndarray, field: str) -> list:
    raw = [codec.from_limbs(limbs[c * FQ.limbs:(c + 1) * FQ.limbs], FQ) for c in range(limbs.shape[0] // FQ.limbs)]
    assert all(v < P for part in raw for v in part), "a result is not canonical (>= p)"
    canonical = [[v * FQ.r_inv % P for v in part] for part in raw]
    return canonical[0] if field == "Fq" else list(zip(*canonical))


def _products(field: str, a: list, b: list) -> np.ndarray:
    out = np.full((4, FIELDS[field].limbs, len(a)), POISON, dtype=np.uint32)
    _runner(field)(_limbs(a), _limbs(b), out)
    return out


def _check(field: str, a: list, b: list) -> None:
    mul = (lambda x, y: x * y % P) if field == "Fq" else fq2.mul
    out = _products(field, a, b)
    want = [mul(x, y) for x, y in zip(a, b)]
    for k in range(3):
        assert _values(out[k], field) == want, f"{field} product, form {k}, differs from Python's integers"
    assert _values(out[3], field) == [mul(x, x) for x in a], f"{field} square differs"


def _edges() -> list[int]:
    words = [(1 << 64 * k) - 1 for k in range(1, 6)] + [P - (1 << 64 * k) for k in range(6)]
    return sorted({v % P for v in edge_values(FQ) + words})


@needs_adx
@pytest.mark.parametrize("field", FIELDS)
def test_the_symbols_are_bound_to_the_assembly(field):
    _check(field, [_edges()[1]] if field == "Fq" else [(1, 2)], [_edges()[2]] if field == "Fq" else [(3, 4)])
    ops = FIELDS[field]
    for fn in (ops.mul, ops.sqr):
        assert target._BOUND[target._symbol(fn, ops.limbs)].__qualname__.endswith("_adx")


@needs_adx
def test_every_pair_of_edge_values():
    edges = _edges()
    _check("Fq", [x for x in edges for _ in edges], [y for _ in edges for y in edges])
    pairs = [(x, y) for x in edges[::3] for y in edges[1::3]]
    _check("Fq2", pairs, pairs[::-1])


@needs_adx
@settings(max_examples=30, deadline=None)
@given(st.lists(st.tuples(elements(FQ), elements(FQ), elements(FQ), elements(FQ)), min_size=1, max_size=32))
def test_random_products(values):
    _check("Fq", [v[0] for v in values], [v[1] for v in values])
    _check("Fq2", [v[:2] for v in values], [v[2:] for v in values])


def test_without_adx_the_symbols_are_llvms_and_agree():
    """NUMBA_CUZK_ADX=0 binds wide.py's products; the same products come out (a process of
    its own: a symbol is bound once per process)."""
    code = ("import sys; from tests.field.test_adx import _products, target, fq2_ops;"
            "out = _products('Fq2', [(3, 5)], [(7, 11)]);"
            "sys.stdout.write(target._BOUND[target._symbol(fq2_ops.mul, 24)].__qualname__ + ' ' + out.tobytes().hex())")
    env = os.environ | {adx.ENV: "0"}
    name, hexed = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                                 check=True).stdout.split()
    assert not name.endswith("_adx")
    assert bytes.fromhex(hexed) == _products("Fq2", [(3, 5)], [(7, 11)]).tobytes()


def test_schedule_and_field_limits():
    assert len(adx.schedule(6)) < 320  # the Fq product: ~300 instructions, against wide.py's ~500
    with pytest.raises(ValueError, match="at most 6"):
        adx.schedule(7)
