"""The PTX carry-chain programs, executed on Python integers (no GPU needed).

On the GPU the same programs run as inline asm (test_device.py covers that with -m gpu);
here an emulator with PTX's carry-flag semantics checks the algorithm itself, and that no
instruction without a carry-out ever drops a carry.
"""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from numba_cuzk.field.carry import program, render
from numba_cuzk.field.params import FQ, FR
from tests.field.ptx_emulator import run
from tests.field.values import edge_values, elements


def _limbs(x: int, n: int, first: int) -> dict:
    return {f"${first + j}": (x >> (32 * j)) & 0xFFFFFFFF for j in range(n)}


def _result(regs: dict, n: int) -> int:
    return sum(regs[f"${j}"] << (32 * j) for j in range(n))


def _check_mul(params, a, b):
    n, p = params.limbs, params.modulus
    regs = run(program(params, "mul"), _limbs(a, n, n) | _limbs(b, n, 2 * n))
    assert _result(regs, n) == a * b * params.r_inv % p


def _check_sqr(params, a):
    n, p = params.limbs, params.modulus
    regs = run(program(params, "sqr"), _limbs(a, n, n))
    assert _result(regs, n) == a * a * params.r_inv % p


@settings(max_examples=200)
@given(elements(FR), elements(FR))
def test_fr_mul_program(a, b):
    _check_mul(FR, a, b)


@settings(max_examples=200)
@given(elements(FQ), elements(FQ))
def test_fq_mul_program(a, b):
    _check_mul(FQ, a, b)


@settings(max_examples=200)
@given(elements(FR))
def test_fr_sqr_program(a):
    _check_sqr(FR, a)


@settings(max_examples=200)
@given(elements(FQ))
def test_fq_sqr_program(a):
    _check_sqr(FQ, a)


def _check_linear(params, a, b):
    n, p = params.limbs, params.modulus
    both = _limbs(a, n, n) | _limbs(b, n, 2 * n)
    assert _result(run(program(params, "add"), both), n) == (a + b) % p
    assert _result(run(program(params, "sub"), both), n) == (a - b) % p
    assert _result(run(program(params, "neg"), _limbs(a, n, n)), n) == -a % p


@settings(max_examples=200)
@given(elements(FR), elements(FR))
def test_fr_add_sub_neg_programs(a, b):
    _check_linear(FR, a, b)


@settings(max_examples=200)
@given(elements(FQ), elements(FQ))
def test_fq_add_sub_neg_programs(a, b):
    _check_linear(FQ, a, b)


@pytest.mark.parametrize("params", [FR, FQ], ids=["Fr", "Fq"])
def test_add_sub_neg_programs_at_the_edges(params):
    """0, 1, p - 1 and equal operands: the carry, the borrow and neg(0) = 0 (not p)."""
    p = params.modulus
    for a in (0, 1, p - 1, p // 2, p // 2 + 1):
        for b in (0, 1, p - 1, a):
            _check_linear(params, a, b)


def lazy_elements(params):
    """Values in [0, 2p), the lazy operations' domain, biased towards its edges (p - 1, p,
    p + 1, 2p - 1) and the canonical edge values shifted by p."""
    p = params.modulus
    edges = [v + k for v in edge_values(params) for k in (0, p)] + [p, p + 1, 2 * p - 1, 2 * p - 2]
    return st.one_of(st.sampled_from(edges), st.integers(0, 2 * p - 1))


def _check_lazy(params, a, b):
    """The lazy programs on a, b in [0, 2p) (mul_lazy's first operand canonical): results
    congruent and in [0, 2p); reduce lands in [0, p)."""
    n, p = params.limbs, params.modulus
    cases = (("add_lazy", a, b, a + b), ("sub_lazy", a, b, a - b), ("mul_lazy", a % p, b, a * b * params.r_inv))
    for name, x, y, expect in cases:
        result = _result(run(program(params, name), _limbs(x, n, n) | _limbs(y, n, 2 * n)), n)
        assert 0 <= result < 2 * p and (result - expect) % p == 0, (name, x, y)
    assert _result(run(program(params, "reduce"), _limbs(a, n, n)), n) == a % p


@settings(max_examples=200)
@given(lazy_elements(FR), lazy_elements(FR))
def test_fr_lazy_programs(a, b):
    _check_lazy(FR, a, b)


@settings(max_examples=100)
@given(lazy_elements(FQ), lazy_elements(FQ))
def test_fq_lazy_programs(a, b):
    _check_lazy(FQ, a, b)


@pytest.mark.parametrize("params", [FR, FQ], ids=["Fr", "Fq"])
def test_lazy_programs_at_the_edges(params):
    """The largest inputs (2p - 1, both operands), p itself, 0 and 1."""
    p = params.modulus
    for a in (0, 1, p - 1, p, p + 1, 2 * p - 1):
        for b in (0, 1, p, 2 * p - 1, a):
            _check_lazy(params, a, b)


@pytest.mark.parametrize("params", [FR, FQ], ids=["Fr", "Fq"])
def test_rendered_ptx_is_one_scoped_block(params):
    text = render(program(params, "mul"))
    assert text.startswith("{") and text.endswith("}")
    assert "madc.hi.cc.u32" in text and "$" + str(3 * params.limbs - 1) in text
