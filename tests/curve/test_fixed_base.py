"""fixed_base.py: the table and k_i * P in bulk, on the CPU cores and in a CUDA kernel
(the simulator in CI, the GPU with ``-m gpu``), against the reference's double-and-add.

Scalars are the edge cases (0, 1, 2, r-1, and r, r+1, 2^255-1, 2^256-1, which must be
reduced mod r) followed by a progression k0 + i*step whose expected points cost one
reference addition each, so the GPU run can check thousands of points.
"""

import random
from functools import lru_cache

import numpy as np
import pytest
from numba import cuda

from numba_cuzk.curve import layout
from numba_cuzk.curve.fixed_base import (
    MAX_WINDOW, SCALAR_BITS, WINDOW, best_window, fixed_base_mul, fixed_base_table, table_scalars, widen, windows_of,
)
from numba_cuzk.curve.params import G1, G2, R
from numba_cuzk.curve.reference import g1, g2
from numba_cuzk.field.params import FR
from tests.conftest import SIMULATOR

CURVES = [pytest.param((G1, g1), id="G1"), pytest.param((G2, g2), id="G2")]
EDGES = [0, 1, 2, R - 1, R, R + 1, 2**255 - 1, 2**256 - 1]
POISON = np.uint32(0xA5A5A5A5)
GPU_N = 12 if SIMULATOR else 3000  # the GPU: many blocks, ragged AFFINE_CHUNKs


@lru_cache(maxsize=None)
def _table(curve, window=WINDOW, base=None):
    return fixed_base_table(base or curve.generator, curve, window)


def _case(ref, n: int, seed: int, base=None) -> tuple[list[int], list]:
    """n scalars (EDGES, then a progression) and their reference multiples of ``base``
    (default G)."""
    rng = random.Random(seed)
    base = base or ref.generator
    k0, step = rng.randrange(R), rng.randrange(R)
    scalars = EDGES + [(k0 + i * step) % R for i in range(n - len(EDGES))]
    expected = [ref.mul(base, k) for k in EDGES]
    if n > len(EDGES):
        delta = ref.mul(base, step)
        expected.append(ref.mul(base, k0))
        while len(expected) < n:
            expected.append(ref.add(expected[-1], delta))
    return scalars, expected


def _poisoned(curve, n: int) -> np.ndarray:
    return np.full((2 * curve.limbs, n), POISON, dtype=np.uint32)


def _mul_cpu(curve, scalars: list[int], window=WINDOW, base=None, montgomery=False) -> list:
    if montgomery:
        scalars = [k * FR.r % R for k in scalars]
    out = _poisoned(curve, len(scalars))
    fixed_base_mul(out, _raw_limbs(scalars), _table(curve, window, base), curve, montgomery=montgomery)
    return layout.limbs_to_points(out, curve)


def _raw_limbs(scalars: list[int]) -> np.ndarray:
    """(8, n) limbs of scalars < 2^256, including those >= r (codec.to_limbs refuses them)."""
    return np.array([[(k >> (32 * j)) & 0xFFFFFFFF for k in scalars] for j in range(FR.limbs)], dtype=np.uint32)


@pytest.mark.parametrize("case", CURVES)
def test_table_entries(case):
    curve, ref = case
    table = _table(curve)
    windows = windows_of(WINDOW)
    assert table.shape == (2 * curve.limbs, windows << WINDOW)
    picks = [(0, 0), (0, 1), (0, 2), (1, 1), (5, 77), (windows - 1, 0), (windows - 1, 255)]
    columns = [w * 256 + j for w, j in picks]
    got = layout.limbs_to_points(np.ascontiguousarray(table[:, columns]), curve)
    assert got == [ref.mul(ref.generator, j << (WINDOW * w)) for w, j in picks]


@pytest.mark.parametrize("case", CURVES)
def test_mul_cpu(case):
    curve, ref = case
    scalars, expected = _case(ref, 12, seed=1)
    assert _mul_cpu(curve, scalars) == expected


def test_mul_cpu_montgomery_scalars():
    scalars, expected = _case(g1, 12, seed=2)
    assert _mul_cpu(G1, scalars, montgomery=True) == expected


def test_mul_cpu_other_base_and_window():
    """A base other than G; 5-bit windows, whose digits straddle limb boundaries."""
    base = g1.mul(g1.generator, 0xC0FFEE)
    scalars, expected = _case(g1, 12, seed=4, base=base)
    assert _mul_cpu(G1, scalars, window=5, base=base) == expected


@pytest.mark.gpu
@pytest.mark.parametrize("case", CURVES)
def test_mul_device(case):
    curve, ref = case
    scalars, expected = _case(ref, GPU_N, seed=3)
    out = cuda.to_device(_poisoned(curve, GPU_N))
    table = fixed_base_table(curve.generator, curve, to_device=True)
    fixed_base_mul(out, cuda.to_device(_raw_limbs(scalars)), table, curve)
    assert layout.limbs_to_points(out.copy_to_host(), curve) == expected


def test_best_window_weighs_the_products_against_the_table():
    assert best_window(0) == best_window(1000) == WINDOW  # the host's table: nothing to build
    assert best_window(4 << 27) == best_window(1 << 27) == MAX_WINDOW  # a 2^27 key: 16 additions a point
    chosen = [best_window(1 << k) for k in range(10, 31)]
    assert chosen == sorted(chosen) and WINDOW < best_window(1 << 20) < MAX_WINDOW


@pytest.mark.parametrize("window", [9, 11, 16])
def test_table_scalars_are_each_entrys_multiple(window):
    scalars = table_scalars(window)
    values = [sum(int(scalars[j, col]) << (32 * j) for j in range(8)) for col in range(scalars.shape[1])]
    size, top = 1 << window, windows_of(window) - 1
    reached = 1 << (SCALAR_BITS - window * top)  # the top row's digits of scalars < r < 2^255
    want = [d << (window * w) if w < top or d < reached else 0 for w in range(top + 1) for d in range(size)]
    assert values == want


@pytest.mark.parametrize("case", CURVES)
def test_widened_table_is_the_hosts_where_a_scalar_reaches(case):
    """widen's entries (products by the 8-bit table, on the CPU cores) equal the host's
    table of that window, but for the top row's digits no scalar < r has: the identity."""
    curve, _ = case
    window = 9
    got, want = widen(_table(curve), curve, window), _table(curve, window)
    top = (windows_of(window) - 1) << window
    reached = top + (1 << (SCALAR_BITS - window * (windows_of(window) - 1)))
    assert np.array_equal(got[:, :reached], want[:, :reached])
    assert not got[:, reached:].any()


def test_mul_cpu_by_a_widened_table():
    """Products by an 11-bit table made by widen (digits straddle limbs), edge scalars >= r too."""
    scalars, expected = _case(g1, 16, seed=5)
    out = _poisoned(G1, len(scalars))
    fixed_base_mul(out, _raw_limbs(scalars), widen(_table(G1), G1, 11), G1)
    assert layout.limbs_to_points(out, G1) == expected


@pytest.mark.gpu
@pytest.mark.skipif(SIMULATOR, reason="a 16-bit table is 2^20 products: minutes in the simulator")
@pytest.mark.parametrize("case", CURVES)
def test_mul_device_by_the_widest_table(case):
    """The window setup uses at 2^27 (16 bits, 16 additions a point), widened on the GPU."""
    curve, ref = case
    scalars, expected = _case(ref, GPU_N, seed=6)
    out = cuda.to_device(_poisoned(curve, GPU_N))
    table = widen(fixed_base_table(curve.generator, curve, to_device=True), curve, MAX_WINDOW)
    fixed_base_mul(out, cuda.to_device(_raw_limbs(scalars)), table, curve)
    assert layout.limbs_to_points(out.copy_to_host(), curve) == expected


def test_rejects_bad_arguments():
    table = _table(G1)
    scalars = np.zeros((8, 3), np.uint32)
    with pytest.raises(ValueError, match="scalars"):
        fixed_base_mul(_poisoned(G1, 3), np.zeros((9, 3), np.uint32), table, G1)
    with pytest.raises(ValueError, match="points"):
        fixed_base_mul(_poisoned(G1, 2), scalars, table, G1)
    with pytest.raises(ValueError, match="table"):
        fixed_base_mul(_poisoned(G2, 3), scalars, table, G2)
    with pytest.raises(ValueError, match="fixed-base table size"):
        fixed_base_mul(_poisoned(G1, 3), scalars, np.zeros((24, 1000), np.uint32), G1)
    with pytest.raises(ValueError, match="window"):
        fixed_base_table(G1.generator, G1, window=17)
    with pytest.raises(ValueError, match="not on"):
        fixed_base_table((1, 1), G1)
    assert fixed_base_mul(_poisoned(G1, 0), np.zeros((8, 0), np.uint32), table, G1).shape == (24, 0)
