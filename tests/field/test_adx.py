"""Fq's product in ADX assembly (field/adx.py) against Python integers, through the symbol
every CPU caller uses (curve/target.field_call), and the binding's choice.

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
from numba_cuzk.field.mont import fq_ops
from numba_cuzk.field.params import FQ
from numba_cuzk.field.target import local_u32
from tests.field.values import edge_values, elements

N = FQ.limbs
POISON = np.uint32(0xA5A5A5A5)
needs_adx = pytest.mark.skipif(not adx.available(), reason="the host has no ADX/BMI2 (or NUMBA_CUZK_ADX=0)")


@lru_cache(maxsize=None)
def _runner():
    mul, sqr = target.field_call(fq_ops.mul, 3, N), target.field_call(fq_ops.sqr, 2, N)

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


def _mont(values: list[int]) -> np.ndarray:
    return codec.to_limbs([v * FQ.r % FQ.modulus for v in values], FQ)


def _products(a: list[int], b: list[int]) -> np.ndarray:
    out = np.full((4, N, len(a)), POISON, dtype=np.uint32)
    _runner()(_mont(a), _mont(b), out)
    return out


def _check(a: list[int], b: list[int]) -> None:
    p = FQ.modulus
    out = _products(a, b)
    for k, want in enumerate(([x * y % p for x, y in zip(a, b)],) * 3 + ([x * x % p for x in a],)):
        raw = codec.from_limbs(out[k], FQ)
        assert all(v < p for v in raw), f"form {k}: a result is not canonical (>= p)"
        assert [v * FQ.r_inv % p for v in raw] == want, f"form {k} differs from Python's integers"


@needs_adx
def test_the_symbol_is_bound_to_the_assembly():
    _products([1], [1])
    for fn, arity in ((fq_ops.mul, 3), (fq_ops.sqr, 2)):
        assert target._BOUND[target._symbol(fn, N)].__qualname__.endswith("_adx")


@needs_adx
def test_every_pair_of_edge_values():
    edges = edge_values(FQ) + [(1 << 64 * k) - 1 for k in range(1, 6)] + [FQ.modulus - (1 << 64 * k) for k in range(6)]
    edges = sorted({v % FQ.modulus for v in edges})
    _check([x for x in edges for _ in edges], [y for _ in edges for y in edges])


@needs_adx
@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(elements(FQ), elements(FQ)), min_size=1, max_size=64))
def test_random_products(pairs):
    _check([x for x, _ in pairs], [y for _, y in pairs])


def test_without_adx_the_symbol_is_llvms_and_agrees():
    """NUMBA_CUZK_ADX=0 binds wide.py's product; the same products come out (a process of
    its own: a symbol is bound once per process)."""
    code = ("from tests.field.test_adx import _products, target, fq_ops, N; import sys;"
            "out = _products([3, 5], [7, 11]);"
            "sys.stdout.write(target._BOUND[target._symbol(fq_ops.mul, N)].__qualname__ + ' ' + out.tobytes().hex())")
    env = os.environ | {adx.ENV: "0"}
    name, hexed = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                                 check=True).stdout.split()
    assert not name.endswith("_adx")
    assert bytes.fromhex(hexed) == _products([3, 5], [7, 11]).tobytes()


def test_schedule_and_field_limits():
    assert len(adx.schedule(6)) < 320  # the Fq product: ~300 instructions, against wide.py's ~500
    with pytest.raises(ValueError, match="at most 6"):
        adx.schedule(7)
