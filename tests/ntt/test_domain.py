"""Size checks, the pass plan and the host root tables."""

import numpy as np
import pytest

from numba_cuzk.field.params import FR
from numba_cuzk.ntt import domain
from tests.ntt.vectors import P, from_mont


@pytest.mark.parametrize("log_n", range(1, domain.MAX_LOG_N + 1))
@pytest.mark.parametrize("max_radix_log", [6, 7, 8])
def test_plan_covers_every_stage(log_n, max_radix_log):
    passes = domain.plan(log_n, max_radix_log)
    assert sum(p.log_r for p in passes) == log_n
    assert len(passes) == -(-log_n // max_radix_log)
    assert max(p.log_r for p in passes) - min(p.log_r for p in passes) <= 1
    log_ns = 0
    for p in passes:
        assert p.log_ns == log_ns and 1 <= p.log_r <= max_radix_log
        assert p.log_j + p.log_r <= domain.BLOCK_LOG and p.log_j + p.log_r <= log_n
        assert p.blocks >= 1
        log_ns += p.log_r
    assert passes[0].first and passes[-1].last


def test_plan_of_the_benchmark_sizes():
    assert [p.log_r for p in domain.plan(24)] == [8, 8, 8]
    assert [p.log_r for p in domain.plan(20)] == [7, 7, 6]
    assert [p.log_j for p in domain.plan(24)] == [2, 2, 2]


@pytest.mark.parametrize("n", [0, 1, 3, 6, 1000, (1 << 20) + 1, -4])
def test_non_powers_of_two_raise(n):
    with pytest.raises(ValueError, match=str(n)):
        domain.check_size(n)


@pytest.mark.parametrize("log_n", [29, 32, 33, 40])
def test_sizes_beyond_the_maximum_raise(log_n):
    with pytest.raises(ValueError, match=f"2\\^{log_n}"):
        domain.check_size(1 << log_n)


def test_split_powers():
    base = 12345
    low, high, log_low = domain.split_powers(base, 7, scale=3)
    lo, hi = from_mont(low), from_mont(high)
    assert log_low == 4 and len(lo) == 16 and len(hi) == 8
    for e in range(1 << 7):
        assert lo[e % 16] * hi[e >> 4] % P == 3 * pow(base, e, P) % P


def test_inner_roots():
    table = domain.inner_roots()
    assert table.dtype == np.uint32 and table.flags.c_contiguous
    assert table.shape == (1 << (domain.ROOT_TABLE_LOG - 1), FR.limbs)  # element-major
    w = FR.root_of_unity(domain.ROOT_TABLE_LOG)
    assert from_mont(table.T) == [pow(w, i, P) for i in range(1 << (domain.ROOT_TABLE_LOG - 1))]
