import random
from unittest import mock

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from numba_cuzk.field import codec
from numba_cuzk.field.params import FQ, FR
from numba_cuzk.field.reference import fq, fr
from tests.field.values import edge_values

FIELDS = [(FR, fr), (FQ, fq)]
IDS = ["Fr", "Fq"]


@pytest.mark.parametrize("params,ref", FIELDS, ids=IDS)
def test_int_limb_roundtrip_and_layout(params, ref):
    values = edge_values(params) + [random.randrange(params.modulus) for _ in range(200)]
    limbs = codec.to_limbs(values, params)
    assert limbs.shape == (params.limbs, len(values)) and limbs.dtype == np.uint32
    assert limbs.flags.c_contiguous
    assert int(limbs[0, 1]) == values[1] & 0xFFFFFFFF  # limb 0 is the least significant
    assert codec.from_limbs(limbs, params) == values


@pytest.mark.parametrize("params,ref", FIELDS, ids=IDS)
def test_montgomery_roundtrip(params, ref):
    values = edge_values(params) + [random.randrange(params.modulus) for _ in range(200)]
    mont = codec.to_montgomery(codec.to_limbs(values, params), params)
    assert codec.from_limbs(mont, params) == [ref.to_montgomery(v) for v in values]
    assert codec.from_limbs(codec.from_montgomery(mont, params), params) == values


@pytest.mark.parametrize("params,ref", FIELDS, ids=IDS)
@pytest.mark.parametrize("byteorder", ["little", "big"])
def test_bytes_roundtrip(params, ref, byteorder):
    values = edge_values(params)
    raw = codec.to_bytes(codec.to_limbs(values, params), params, byteorder)
    assert raw == b"".join(v.to_bytes(params.nbytes, byteorder) for v in values)
    assert codec.from_limbs(codec.from_bytes(raw, params, byteorder), params) == values


@given(st.integers(0, 40), st.integers(0, 3))
def test_noncanonical_bytes_name_the_index(index, excess):
    values = [random.randrange(FQ.modulus) for _ in range(41)]
    raw = bytearray(codec.to_bytes(codec.to_limbs(values, FQ), FQ))
    raw[index * 48:(index + 1) * 48] = (FQ.modulus + excess).to_bytes(48, "little")
    with pytest.raises(ValueError, match=f"element {index} \\(byte offset {index * 48}\\)"):
        codec.from_bytes(bytes(raw), FQ)
    assert codec.from_bytes(bytes(raw), FQ, check=False).shape == (12, 41)  # the trusted path


def test_wrong_byte_length_and_bad_values_are_clear_errors():
    with pytest.raises(ValueError, match="not a whole number of 32-byte Fr"):
        codec.from_bytes(b"\x00" * 33, FR)
    with pytest.raises(ValueError, match="index 2 is not in"):
        codec.to_limbs([1, 2, FR.modulus, 3], FR)
    with pytest.raises(ValueError, match="index 0 is not in"):
        codec.to_limbs([-1], FR)
    with pytest.raises(ValueError, match="byteorder"):
        codec.from_bytes(b"\x00" * 32, FR, byteorder="middle")
    with pytest.raises(ValueError, match="shape \\(8, n\\)"):
        codec.from_limbs(np.zeros((12, 3), dtype=np.uint32), FR)


def test_reduce_takes_values_mod_p():
    limbs = codec.to_limbs([FR.modulus + 5, -1], FR, reduce=True)
    assert codec.from_limbs(limbs, FR) == [5, FR.modulus - 1]


def _noncanonical_by_ints(limbs, params) -> int:
    """The reference: the first index whose value, as a Python int, is >= p."""
    return next((i for i, v in enumerate(codec.from_limbs(limbs, params)) if v >= params.modulus), -1)


@pytest.mark.parametrize("params,ref", FIELDS, ids=IDS)
@settings(deadline=None, max_examples=30)  # the first example loads (or compiles) the kernel
@given(positions=st.lists(st.integers(0, codec.KERNEL_MIN + 99), max_size=3),
       excess=st.sampled_from([0, 1, 2**32, 2**200]), copy=st.booleans(), kernel=st.booleans())
def test_first_noncanonical_matches_the_ints(params, ref, positions, excess, copy, kernel):
    # from CHECK_KERNEL_MIN on (lowered here, ``kernel``) the check is one parallel pass that
    # can also copy, below it numpy's; edge values (0, 1, p - 1) fill the rest, p + excess
    # (p itself at 0) go at ``positions``
    n = codec.KERNEL_MIN + 100
    rng = np.random.default_rng(len(positions) + excess % 7)
    base = codec.to_limbs(edge_values(params), params)
    limbs = np.ascontiguousarray(base[:, rng.integers(0, base.shape[1], n)])
    top = params.modulus + excess
    for i in positions:
        limbs[:, i] = [(min(top, 2 ** (32 * params.limbs) - 1) >> (32 * j)) & 0xFFFFFFFF for j in range(params.limbs)]
    out = np.full_like(limbs, 0xDEADBEEF) if copy else None  # poisoned
    with mock.patch.object(codec, "CHECK_KERNEL_MIN", n if kernel else n + 1):
        assert codec.first_noncanonical(limbs, params, out=out) == _noncanonical_by_ints(limbs, params)
    if copy:
        assert np.array_equal(out, limbs)


@pytest.mark.parametrize("n", [5, codec.KERNEL_MIN + 3])
def test_first_noncanonical_refuses_a_mismatched_buffer(n):
    limbs = codec.to_limbs([1] * n, FR)
    with pytest.raises(ValueError, match="C-contiguous uint32 of shape"):
        codec.first_noncanonical(limbs, FR, out=np.empty((8, n + 1), np.uint32))
    small = codec.to_limbs([FR.modulus - 1, 3], FR)
    out = np.zeros_like(small)
    assert codec.first_noncanonical(small, FR, out=out) == -1 and np.array_equal(out, small)
