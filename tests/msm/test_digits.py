"""Signed window digits and the window plan."""

import random

import numpy as np
import pytest
from numba import njit

from numba_cuzk.field.target import local_u32
from numba_cuzk.field.scalars import N, load_scalar
from numba_cuzk.msm.digits import scalar_kind, signed_digit
from numba_cuzk.msm.plan import DIGIT_BITS, MAX_BITS, MIN_BITS, best_window, make_plan
from tests.msm import inputs

R = inputs.R


@njit
def _digits(scalars, i, montgomery, c, windows, out):
    k = local_u32(N)
    load_scalar(k, scalars, i, montgomery)
    for w in range(windows):
        out[w] = signed_digit(k, w, c)
    return scalar_kind(k)


VALUES = [0, 1, 2, R - 1, R, R + 1, 2 * R, 2**255, 2**256 - 1] + [random.Random(1).randrange(2**256) for _ in range(20)]


@pytest.mark.parametrize("c", range(MIN_BITS, MAX_BITS + 1))
@pytest.mark.parametrize("montgomery", [False, True])
def test_digits_recompose_the_reduced_scalar(c, montgomery):
    windows = -(-DIGIT_BITS // c)
    limbs = inputs.scalar_limbs(VALUES)
    for i, v in enumerate(VALUES):
        out = np.zeros(windows, dtype=np.int64)
        kind = _digits(limbs, i, montgomery, c, windows, out)
        want = v % R if not montgomery else (v % R) * pow(2**256, -1, R) % R
        assert sum(int(d) << (c * w) for w, d in enumerate(out)) == want
        assert all(abs(int(d)) <= 1 << (c - 1) for d in out)
        assert kind == (0 if want == 0 else 1 if want == 1 else 2)


def test_plan():
    assert best_window(1 << 20) == 16 and make_plan(1 << 20).windows == 16
    assert best_window(1 << 24) == 20
    for log_n in range(0, 27):
        p = make_plan(1 << log_n)
        assert MIN_BITS <= p.c <= MAX_BITS and p.windows * p.c >= DIGIT_BITS
        assert p.chunk & (p.chunk - 1) == 0 and p.max_chunks * p.chunk >= p.n
    with pytest.raises(ValueError):
        make_plan(10, window=1)
    with pytest.raises(ValueError):
        make_plan(10, chunk=0)


def test_scatter_windows():
    """Scatter launches take the windows whose entries fit SCATTER_BYTES (the measured
    sizes: all at 2^16, 8 at 2^20, 1 at 2^24), all past 2^24; an override wins."""
    assert [make_plan(1 << k).scatter_windows for k in (16, 20, 24, 25, 27)] == [20, 8, 1, 13, 12]
    assert make_plan(1 << 24, scatter=4).scatter_windows == 4 and make_plan(1 << 16, scatter=99).scatter_windows == 20
