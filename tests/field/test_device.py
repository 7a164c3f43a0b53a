"""Every field device function against the Python-int reference, in a CUDA kernel.

CI runs these in the simulator on small batches; ``pytest -m gpu`` on the H200 runs them
on the GPU, where mul/sqr are the PTX carry chains, with a large random batch as well.
"""

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from numba_cuzk.field.params import FQ, FR
from numba_cuzk.field.reference import fq, fq2, fr
from tests.conftest import SIMULATOR
from tests.field import device_harness as dev
from tests.field.values import edge_values, elements

pytestmark = pytest.mark.gpu

FIELDS = [(FR, fr), (FQ, fq)]
IDS = ["Fr", "Fq"]
BATCH = 8 if SIMULATOR else 256
BIG = 64 if SIMULATOR else 1 << 16
EXAMPLES = 10 if SIMULATOR else 40

BINARY = {
    "add": lambda f, a, b: f.add(a, b),
    "sub": lambda f, a, b: f.sub(a, b),
    "mul": lambda f, a, b: f.mul(a, b),
    "mul_cios": lambda f, a, b: f.mul(a, b),
}
UNARY = {
    "neg": lambda f, a: f.neg(a),
    "dbl": lambda f, a: f.double(a),
    "sqr": lambda f, a: f.square(a),
    "sqr_cios": lambda f, a: f.square(a),
    "inv": lambda f, a: f.inverse(a) if a else 0,
}


def _batches(params):
    return st.lists(elements(params), min_size=1, max_size=BATCH)


def _pairs(params, ref, name):
    @settings(max_examples=EXAMPLES, deadline=None)
    @given(_batches(params), st.randoms(use_true_random=False))
    def check(a, rnd):
        b = [rnd.choice(a + edge_values(params)) for _ in a]
        expect = [BINARY[name](ref, x, y) for x, y in zip(a, b)]
        out, aliased = dev.apply(params, name, a, b)
        assert out == expect and aliased == expect

    check()


@pytest.mark.parametrize("params,ref", FIELDS, ids=IDS)
@pytest.mark.parametrize("name", sorted(BINARY))
def test_binary_functions(params, ref, name):
    _pairs(params, ref, name)


@pytest.mark.parametrize("params,ref", FIELDS, ids=IDS)
@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary_functions(params, ref, name):
    @settings(max_examples=EXAMPLES, deadline=None)
    @given(_batches(params))
    def check(a):
        expect = [UNARY[name](ref, x) for x in a]
        out, aliased = dev.apply(params, name, a)
        assert out == expect and aliased == expect

    check()


@pytest.mark.parametrize("params,ref", FIELDS, ids=IDS)
def test_every_pair_of_edge_values(params, ref):
    edges = edge_values(params)
    a = [x for x in edges for _ in edges]
    b = [y for _ in edges for y in edges]
    for name in ("add", "sub", "mul"):
        out, _ = dev.apply(params, name, a, b)
        assert out == [BINARY[name](ref, x, y) for x, y in zip(a, b)], name
    out, _ = dev.apply(params, "sqr", edges)
    assert out == [ref.square(x) for x in edges]


def _lazy_values(params) -> list[int]:
    """[0, 2p): the edge values, the same shifted by p, and the top of the range."""
    p = params.modulus
    return [v + k for v in edge_values(params) for k in (0, p)] + [2 * p - 1, 2 * p - 2]


@pytest.mark.parametrize("params", [FR, FQ], ids=IDS)
@pytest.mark.parametrize("name", ["add_lazy", "sub_lazy", "mul_lazy"])
def test_lazy_functions(params, name):
    """Results in [0, 2p) congruent to the canonical ones, for inputs in [0, 2p) (mul_lazy's
    first operand canonical), and reduce_once's canonical result of each."""
    p = params.modulus
    lazy = _lazy_values(params)
    rnd = random.Random(7)
    a = lazy + [rnd.randrange(2 * p) for _ in range(BATCH)]
    b = [rnd.choice(lazy) for _ in lazy] + [rnd.randrange(2 * p) for _ in range(BATCH)]
    if name == "mul_lazy":
        a = [x % p for x in a]
    expect = {"add_lazy": lambda x, y: x + y, "sub_lazy": lambda x, y: x - y,
              "mul_lazy": lambda x, y: x * y * params.r_inv}[name]
    out, aliased = dev.apply_raw(params, name, a, b)
    assert out == aliased
    assert all(0 <= r < 2 * p and (r - expect(x, y)) % p == 0 for r, x, y in zip(out, a, b))
    reduced, _ = dev.apply_raw(params, "reduce_once", out)
    assert reduced == [r % p for r in out]


@pytest.mark.parametrize("params,ref", FIELDS, ids=IDS)
def test_large_random_batch(params, ref):
    a = [random.randrange(params.modulus) for _ in range(BIG)]
    b = [random.randrange(params.modulus) for _ in range(BIG)]
    out, _ = dev.apply(params, "mul", a, b)
    assert out == [x * y % params.modulus for x, y in zip(a, b)]
    out, _ = dev.apply(params, "sqr", a)
    assert out == [x * x % params.modulus for x in a]


@pytest.mark.parametrize("params,ref", FIELDS, ids=IDS)
def test_montgomery_conversions(params, ref):
    values = edge_values(params)
    to_mont, _ = dev.apply(params, "to_mont", values, montgomery_in=False, montgomery_out=False)
    assert to_mont == [ref.to_montgomery(v) for v in values]
    back, _ = dev.apply(params, "from_mont", values, montgomery_in=False, montgomery_out=False)
    assert back == [ref.from_montgomery(v) for v in values]


@pytest.mark.parametrize("params,ref", FIELDS, ids=IDS)
def test_pow(params, ref):
    a = edge_values(params)[:BATCH]
    for e in (0, 1, 2, 5, (1 << 64) + 3, params.modulus - 1, params.odd_part):
        assert dev.power(params, a, e) == [pow(x, e, params.modulus) for x in a], e


@pytest.mark.parametrize("params,ref", FIELDS, ids=IDS)
def test_eq_and_is_zero(params, ref):
    a = edge_values(params)
    b = list(a)
    b[1] = a[2]
    equal, zero = dev.predicates(params, a, b)
    assert equal == [x == y for x, y in zip(a, b)]
    assert zero == [x == 0 for x in a]


def _fq2_elements():
    return st.tuples(elements(FQ), elements(FQ))


@settings(max_examples=EXAMPLES, deadline=None)
@given(st.lists(_fq2_elements(), min_size=1, max_size=BATCH), st.lists(_fq2_elements(), min_size=1, max_size=BATCH))
def test_fq2_functions(a, b):
    n = min(len(a), len(b))
    a, b = a[:n], b[:n]
    assert dev.fq2_apply("mul", a, b) == [fq2.mul(x, y) for x, y in zip(a, b)]
    assert dev.fq2_apply("sqr", a, b) == [fq2.square(x) for x in a]
    assert dev.fq2_apply("mul_by_nonresidue", a, b) == [fq2.mul(x, (1, 1)) for x in a]
    assert dev.fq2_apply("inv", a, b) == [fq2.inverse(x) if x != (0, 0) else (0, 0) for x in a]
    assert dev.fq2_apply("add", a, b) == [fq2.add(x, y) for x, y in zip(a, b)]
    assert dev.fq2_apply("sub", a, b) == [fq2.sub(x, y) for x, y in zip(a, b)]
    assert dev.fq2_apply("neg", a, b) == [fq2.neg(x) for x in a]
    assert dev.fq2_apply("conj", a, b) == [fq2.conjugate(x) for x in a]


@settings(max_examples=EXAMPLES, deadline=None)
@given(st.lists(_fq2_elements(), min_size=1, max_size=BATCH), st.lists(_fq2_elements(), min_size=1, max_size=BATCH))
def test_fq2_pair_functions(a, b):
    """fq2_pair.py, each element on a lane pair (the simulator's pairs exchange in Python),
    against the reference: with a = b too (squares through mul, x - x)."""
    n = min(len(a), len(b))
    a, b = a[:n], b[:n]
    for left, right in ((a, b), (a, a)):
        assert dev.fq2_pair_apply("mul", left, right) == [fq2.mul(x, y) for x, y in zip(left, right)]
        assert dev.fq2_pair_apply("mul2", left, right) == [fq2.add(fq2.mul(x, y), fq2.square(y))
                                                           for x, y in zip(left, right)]
        assert dev.fq2_pair_apply("add", left, right) == [fq2.add(x, y) for x, y in zip(left, right)]
        assert dev.fq2_pair_apply("sub", left, right) == [fq2.sub(x, y) for x, y in zip(left, right)]
    assert dev.fq2_pair_apply("sqr", a, b) == [fq2.square(x) for x in a]
    assert dev.fq2_pair_apply("inv", a, b) == [fq2.inverse(x) if x != (0, 0) else (0, 0) for x in a]
    assert dev.fq2_pair_apply("neg", a, b) == [fq2.neg(x) for x in a]
    assert dev.fq2_pair_apply("dbl", a, b) == [fq2.add(x, x) for x in a]


def test_fq2_pair_predicates_agree_across_the_pair():
    edges = edge_values(FQ)
    a = [(0, 0), (0, 1), (1, 0), (edges[-1], edges[-1]), (5, 7), (5, 7)]
    b = [(0, 0), (0, 0), (1, 0), (edges[-1], 0), (5, 7), (7, 5)]
    flags, ones = dev.fq2_pair_flags(a, b)
    equal, zero = [x == y for x, y in zip(a, b)], [x == (0, 0) for x in a]
    assert [bool(v) for v in flags[0]] == [bool(v) for v in flags[1]] == equal
    assert [bool(v) for v in flags[2]] == [bool(v) for v in flags[3]] == zero
    assert not flags[4:].any()
    assert ones == [(1, 0) if x == (0, 0) else x for x in a]  # set_one and select
