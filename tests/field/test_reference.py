"""The Python-int reference against py_ecc, an implementation nobody here wrote."""

from hypothesis import given, settings
from py_ecc.fields import bls12_381_FQ as EccFq
from py_ecc.fields import bls12_381_FQ2 as EccFq2

from numba_cuzk.field.params import FQ, FR
from numba_cuzk.field.reference import fq, fq2, fr
from tests.field.values import elements


@given(elements(FQ), elements(FQ))
def test_fq_matches_py_ecc(a, b):
    assert fq.mul(a, b) == int(EccFq(a) * EccFq(b))
    assert fq.add(a, b) == int(EccFq(a) + EccFq(b))
    assert fq.sub(a, b) == int(EccFq(a) - EccFq(b))
    if a:
        assert fq.inverse(a) == int(EccFq(1) / EccFq(a))


@settings(max_examples=30)
@given(elements(FQ), elements(FQ), elements(FQ), elements(FQ))
def test_fq2_matches_py_ecc(a0, a1, b0, b1):
    ours = fq2.mul((a0, a1), (b0, b1))
    theirs = EccFq2([a0, a1]) * EccFq2([b0, b1])
    assert ours == tuple(int(c) for c in theirs.coeffs)
    if (a0, a1) != (0, 0):
        inv = EccFq2([1, 0]) / EccFq2([a0, a1])
        assert fq2.inverse((a0, a1)) == tuple(int(c) for c in inv.coeffs)


@settings(max_examples=30)
@given(elements(FQ), elements(FQ))
def test_fq2_sqrt_of_a_square(a0, a1):
    square = fq2.square((a0, a1))
    root = fq2.sqrt(square)
    assert root is not None and fq2.square(root) == square


@given(elements(FR))
def test_sqrt_in_fr_and_fq(a):
    for field in (fr, fq):
        x = a % field.p
        root = field.sqrt(x * x % field.p)
        assert root * root % field.p == x * x % field.p


def test_non_squares_have_no_root():
    assert fq.sqrt(FQ.nonresidue) is None
    assert fr.sqrt(FR.nonresidue) is None
    assert fq2.sqrt((FQ.nonresidue, 0)) is not None  # every Fq element is a square in Fq2
    assert fq2.sqrt((1, 1)) is None  # norm 2 is a non-residue in Fq
