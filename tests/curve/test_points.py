"""Every point function of points.py in a CUDA kernel (the simulator in CI; the H200 with
``pytest -m gpu``) against the Python-int reference, G1 and G2.

Results are compared as affine points (the projective representatives of two correct
implementations may differ); XYZZ results must also satisfy ZZ^3 = ZZZ^2.
"""

import random
from functools import partial

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from numba_cuzk.curve.params import G1, G2
from numba_cuzk.curve.reference import g1, g2
from tests.conftest import SIMULATOR
from tests.curve import device_harness as dev
from tests.curve.values import jacobian, points, xyzz

pytestmark = pytest.mark.gpu

# (curve, reference, pair): G2 also with each point on a lane pair (field/fq2_pair.py),
# the G2 MSM kernels' formulas on the GPU
CURVES = [pytest.param((G1, g1, False), id="G1"), pytest.param((G2, g2, False), id="G2"),
          pytest.param((G2, g2, True), id="G2-pair")]
EXAMPLES = 3 if SIMULATOR else 20
BATCH = 3 if SIMULATOR else 128  # points per launch: the GPU takes a whole batch at once
MAX_K = 4 if SIMULATOR else 6  # largest scalar of the distributivity property (k launches)
# A batch is the unit of a GPU example (one launch per step), so it is drawn whole; hypothesis
# would otherwise refuse so large a smallest example.
BATCHED = settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.large_base_example])
ALIASES = (dev.ALIAS_NONE, dev.ALIAS_FIRST, dev.ALIAS_SECOND)


def _affine(ref, form, p):
    if form == "affine":
        return p
    if form == "jacobian":
        return ref.from_jacobian(p)
    F = ref.F
    assert F.mul(F.square(p[2]), p[2]) == F.square(p[3]), "XYZZ invariant ZZ^3 = ZZZ^2"
    return ref.from_xyzz(p)


def _represent(ref, form, p, rng):
    if form == "affine":
        return p
    return jacobian(ref, p, rng) if form == "jacobian" else xyzz(ref, p, rng)


EXPECTED = {
    "add": lambda ref, p, q: ref.add(p, q),
    "add_mixed": lambda ref, p, q: ref.add(p, q),
    "dbl": lambda ref, p: ref.double(p),
    "neg": lambda ref, p: ref.neg(p),
    "to_affine": lambda ref, p: p,
    "to_jacobian": lambda ref, p: p,
    "to_xyzz": lambda ref, p: p,
    "from_affine": lambda ref, p: p,
}


def _expected(name, ref, *args):
    return EXPECTED[name.split("_", 1)[1]](ref, *args)


def check_op(curve, ref, pair, name, a, b=None, seed=0):
    """Run ``name`` on affine inputs (converted to its formats with random Z) vs reference."""
    rng = random.Random(seed)
    formats, result = dev.OPS[name]
    inputs = [[_represent(ref, fmt, p, rng) for p in pts] for fmt, pts in zip(formats, (a, b))]
    expect = [_expected(name, ref, *args) for args in zip(*([a] if b is None else [a, b]))]
    for alias in ALIASES[:len(formats) + 1]:
        out = dev.run(curve, name, *inputs, alias=alias, pair=pair)
        assert [_affine(ref, result, p) for p in out] == expect, f"{name} alias={alias}"


BINARY = ["xyzz_add", "xyzz_add_mixed", "jac_add", "jac_add_mixed"]
UNARY = ["xyzz_dbl", "jac_dbl", "xyzz_to_affine", "jac_to_affine", "xyzz_to_jacobian", "jac_to_xyzz",
         "jac_from_affine", "xyzz_from_affine", "aff_neg", "jac_neg", "xyzz_neg"]


@pytest.mark.parametrize("case", CURVES)
@pytest.mark.parametrize("name", BINARY)
def test_additions_special_cases(case, name):
    """Identity on either side, P + P (must double), P + (-P), and generic sums."""
    curve, ref, pair = case
    rng = random.Random(1)
    p, q = ref.random_point(rng), ref.random_point(rng)
    a = [None, p, None, p, p, p, ref.neg(q)]
    b = [None, None, p, p, ref.neg(p), q, p]
    check_op(curve, ref, pair, name, a, b)


@pytest.mark.parametrize("case", CURVES)
@pytest.mark.parametrize("name", UNARY)
def test_unary_functions(case, name):
    curve, ref, pair = case
    rng = random.Random(2)
    check_op(curve, ref, pair, name, [None, ref.generator, ref.random_point(rng)])


@pytest.mark.parametrize("case", CURVES)
def test_predicates(case):
    curve, ref, pair = case
    run = partial(dev.run, curve, pair=pair)
    rng = random.Random(3)
    p, q = ref.random_point(rng), ref.random_point(rng)
    a, b = [None, p, p, None, p], [None, p, q, p, None]
    for name, form in (("jac_eq", jacobian), ("xyzz_eq", xyzz)):
        out = run(name, [form(ref, x, rng) for x in a], [form(ref, x, rng) for x in b])
        assert out == [x == y for x, y in zip(a, b)]
    assert run("aff_on_curve", [None, p, ref.point_off_curve(rng)]) == [True, True, False]
    assert run("jac_is_identity", [jacobian(ref, x, rng) for x in a]) == [x is None for x in a]
    assert run("xyzz_is_identity", [xyzz(ref, x, rng) for x in a]) == [x is None for x in a]
    assert run("aff_is_identity", a) == [x is None for x in a]


@pytest.mark.parametrize("case", CURVES)
def test_group_axioms(case):
    """Associativity, identity, inverse and commutativity of xyzz_add and mixed addition,
    hypothesis-driven: each example is one batch of BATCH triples, one launch per step."""
    curve, ref, pair = case
    run = partial(dev.run, curve, pair=pair)

    @BATCHED
    @given(st.lists(st.tuples(points(ref), points(ref), points(ref)), min_size=BATCH, max_size=BATCH),
           st.integers(0, 2**32 - 1))
    def check(triples, seed):
        # Z coordinates from a seed: hypothesis' randoms() would draw 48 bytes of its input
        # per Z, past its size limit for a batch; a failing seed still replays
        rnd = random.Random(seed)
        a, b, c = (list(t) for t in zip(*triples))
        X = lambda pts: [xyzz(ref, p, rnd) for p in pts]  # noqa: E731
        aff = lambda out: [ref.from_xyzz(p) for p in out]  # noqa: E731
        ab = run("xyzz_add_mixed", X(a), b)
        bc = run("xyzz_add_mixed", X(b), c)
        left = aff(run("xyzz_add_mixed", ab, c))
        right = aff(run("xyzz_add", X(a), bc))
        assert left == right == [ref.add(ref.add(x, y), z) for x, y, z in zip(a, b, c)]
        assert aff(run("xyzz_add", X(b), X(a))) == aff(ab)
        neg_a = run("aff_neg", a)
        assert aff(run("xyzz_add_mixed", X(a), neg_a)) == [None] * len(a)

    check()


@pytest.mark.parametrize("case", CURVES)
def test_scalar_identities(case):
    """9G + 5G == 12G + 2G by Jacobian mixed addition."""
    curve, ref, pair = case
    run = partial(dev.run, curve, pair=pair)
    mult = {k: ref.mul(ref.generator, k) for k in (2, 5, 9, 12)}
    sums = run("jac_add_mixed", [ref.to_jacobian(mult[9]), ref.to_jacobian(mult[12])], [mult[5], mult[2]])
    assert ref.from_jacobian(sums[0]) == ref.from_jacobian(sums[1]) == ref.mul(ref.generator, 14)


@pytest.mark.parametrize("case", CURVES)
def test_scalar_distributivity(case):
    """k(P + Q) == kP + kQ with the multiples built by k device additions (XYZZ, mixed XYZZ,
    mixed Jacobian) from the identity, and 2^k P by k doublings in both forms, on batches of
    (P, Q). k >= 3: the additions take the identity, the P + P and the generic path."""
    curve, ref, pair = case
    run = partial(dev.run, curve, pair=pair)

    @BATCHED
    @given(st.lists(st.tuples(points(ref), points(ref)), min_size=BATCH, max_size=BATCH),
           st.integers(3, MAX_K), st.integers(0, 2**32 - 1))
    def check(pairs, k, seed):
        rnd = random.Random(seed)
        p, q = (list(t) for t in zip(*pairs))
        pq = run("xyzz_add", [xyzz(ref, x, rnd) for x in p], [xyzz(ref, x, rnd) for x in q])
        acc_pq = acc_p = [xyzz(ref, None, rnd)] * len(p)
        acc_q = [jacobian(ref, None, rnd)] * len(q)
        for _ in range(k):
            acc_pq = run("xyzz_add", acc_pq, pq)
            acc_p = run("xyzz_add_mixed", acc_p, p)
            acc_q = run("jac_add_mixed", acc_q, q)
        both = run("xyzz_add", acc_p, run("jac_to_xyzz", acc_q))
        expect = [ref.mul(ref.add(x, y), k) for x, y in zip(p, q)]
        assert [ref.from_xyzz(s) for s in both] == [ref.from_xyzz(s) for s in acc_pq] == expect
        d_xyzz, d_jac = [xyzz(ref, x, rnd) for x in p], [jacobian(ref, x, rnd) for x in p]
        for _ in range(k):
            d_xyzz, d_jac = run("xyzz_dbl", d_xyzz), run("jac_dbl", d_jac)
        expect = [ref.mul(x, 1 << k) for x in p]
        assert [ref.from_xyzz(s) for s in d_xyzz] == [ref.from_jacobian(s) for s in d_jac] == expect

    check()
