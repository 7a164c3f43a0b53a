"""The PTX carry-chain programs, executed on Python integers (no GPU needed).

On the GPU the same programs run as inline asm (test_device.py covers that with -m gpu);
here an emulator with PTX's carry-flag semantics checks the algorithm itself, and that no
instruction without a carry-out ever drops a carry.
"""

import pytest
from hypothesis import given, settings

from numba_cuzk.field.carry import program, render
from numba_cuzk.field.params import FQ, FR
from tests.field.ptx_emulator import run
from tests.field.values import elements


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


@pytest.mark.parametrize("params", [FR, FQ], ids=["Fr", "Fq"])
def test_rendered_ptx_is_one_scoped_block(params):
    text = render(program(params, "mul"))
    assert text.startswith("{") and text.endswith("}")
    assert "madc.hi.cc.u32" in text and "$" + str(3 * params.limbs - 1) in text
