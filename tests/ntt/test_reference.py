"""The textbook NTT against the definition: DFT, interpolation, cosets, convolution."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from numba_cuzk.field.params import FR
from numba_cuzk.ntt import reference as ref
from tests.ntt.vectors import COSET_G, P, random_ints


@pytest.mark.parametrize("log_n", range(0, 7))
def test_ntt_is_the_dft(log_n):
    a = random_ints(1 << log_n, seed=log_n)
    assert ref.ntt(a) == ref.dft(a)


@pytest.mark.parametrize("log_n", range(0, 9))
def test_intt_inverts_ntt(log_n):
    a = random_ints(1 << log_n, seed=100 + log_n)
    assert ref.intt(ref.ntt(a)) == a
    assert ref.coset_intt(ref.coset_ntt(a, COSET_G), COSET_G) == a


@pytest.mark.parametrize("log_n", range(0, 6))
def test_coset_ntt_evaluates_on_the_shifted_domain(log_n):
    n = 1 << log_n
    a = random_ints(n, seed=200 + log_n)
    w = FR.root_of_unity(log_n)
    assert ref.coset_ntt(a, COSET_G) == [ref.evaluate(a, COSET_G * pow(w, k, P) % P) for k in range(n)]


def test_roots_are_snarkjs_roots():
    # snarkjs (ffjavascript) derives Fr's roots from the non-residue 5; arkworks uses 7.
    assert FR.root_of_unity(FR.two_adicity) == pow(5, FR.odd_part, P)
    w = FR.root_of_unity(5)
    assert pow(w, 16, P) == P - 1


@settings(max_examples=30, deadline=None)
@given(st.integers(1, 6), st.randoms(use_true_random=False))
def test_convolution_theorem(log_n, rnd):
    n = 1 << log_n
    a = [rnd.randrange(P) for _ in range(n)]
    b = [rnd.randrange(P) for _ in range(n)]
    cyclic = [sum(a[i] * b[(k - i) % n] for i in range(n)) % P for k in range(n)]
    assert ref.intt([x * y % P for x, y in zip(ref.ntt(a), ref.ntt(b))]) == cyclic


@pytest.mark.parametrize("n", [3, 6, 12, 0])
def test_bad_sizes_raise(n):
    with pytest.raises(ValueError, match="power of two"):
        ref.ntt([1] * n)
