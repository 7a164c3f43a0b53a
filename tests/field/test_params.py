import pytest

from numba_cuzk.field.params import FQ, FR


@pytest.mark.parametrize("params", [FR, FQ], ids=lambda p: p.name)
def test_montgomery_constants_follow_from_the_modulus(params):
    p, big_r = params.modulus, 1 << (32 * params.limbs)
    assert params.r == big_r % p
    assert params.r2 == big_r * big_r % p
    assert params.r * params.r_inv % p == 1
    assert (p * params.n0 + 1) % (1 << 32) == 0
    assert sum(limb << (32 * j) for j, limb in enumerate(params.modulus_limbs)) == p
    assert 2 * p < big_r  # the spare bit the carry-free bounds in mont.py and carry.py rely on


def test_fr_two_adicity_and_roots_of_unity():
    assert FR.two_adicity == 32
    for log_n in (0, 1, 5, 20, 32):
        w = FR.root_of_unity(log_n)
        assert pow(w, 1 << log_n, FR.modulus) == 1
        if log_n:
            assert pow(w, 1 << (log_n - 1), FR.modulus) == FR.modulus - 1  # primitive


def test_root_of_unity_beyond_two_adicity_is_a_clear_error():
    with pytest.raises(ValueError, match="2-adicity 32"):
        FR.root_of_unity(33)
