"""point_major.py: the device kernel and the CPU copy against numpy's Fortran-order copy,
on random shapes and values, and the arrays it keeps or refuses."""

from unittest import mock

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from numba import cuda

from numba_cuzk.curve import point_major as point_major_module
from numba_cuzk.curve.point_major import is_point_major, point_major

ROWS = st.sampled_from([1, 24, 48])  # a coordinate, a G1 point, a G2 point


def _points(rows: int, n: int, seed: int) -> np.ndarray:
    return np.random.default_rng(seed).integers(0, 1 << 32, size=(rows, n), dtype=np.uint32)


@pytest.mark.parametrize("parallel_min", [point_major_module.PARALLEL_MIN, 1], ids=["numpy", "kernel"])
@settings(max_examples=25, deadline=None)
@given(rows=ROWS, n=st.integers(0, 9000), seed=st.integers(0, 2**32 - 1))
def test_cpu_copy_matches_numpy(parallel_min, rows, n, seed):
    """numpy's copy below PARALLEL_MIN points, the parallel kernel from it on (forced here
    for small arrays: runs of _RUN points and a partial last run)."""
    points = _points(rows, n, seed)
    with mock.patch.object(point_major_module, "PARALLEL_MIN", parallel_min):
        out = point_major(points)
    assert out.flags.f_contiguous and np.array_equal(out, np.asfortranarray(points))
    assert np.array_equal(points, _points(rows, n, seed))  # the source is left as it was


@pytest.mark.gpu
@settings(max_examples=10, deadline=None)
@given(rows=ROWS, n=st.integers(1, 700), seed=st.integers(0, 2**32 - 1))
def test_device_kernel_matches_numpy(rows, n, seed):
    points = _points(rows, n, seed)
    out = cuda.to_device(np.full((rows, n), 0xDEADBEEF, dtype=np.uint32, order="F"))  # poisoned
    point_major(cuda.to_device(points), out=out)
    host = out.copy_to_host()
    assert host.flags.f_contiguous and np.array_equal(host, points)


@pytest.mark.gpu
def test_point_major_arrays_are_kept_and_others_copied():
    points = _points(24, 40, 7)
    major = np.asfortranarray(points)
    assert point_major(major) is major
    device = cuda.to_device(major)
    assert is_point_major(device) and point_major(device) is device
    copied = point_major(cuda.to_device(points))
    assert is_point_major(copied) and np.array_equal(copied.copy_to_host(), points)
    assert np.array_equal(point_major(points[:, ::2]), points[:, ::2])  # any strides in


def test_refusals():
    points = _points(24, 8, 3)
    with pytest.raises(ValueError, match="Fortran-ordered uint32 \\(24, 8\\)"):
        point_major(points, out=np.empty((24, 8), np.uint32))  # C order
    with pytest.raises(ValueError, match="Fortran-ordered"):
        point_major(points, out=np.empty((24, 9), np.uint32, order="F"))
    with pytest.raises(ValueError, match="same side"):
        point_major(points, out=cuda.to_device(np.empty((24, 8), np.uint32, order="F")))
