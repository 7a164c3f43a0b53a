"""msm/staging.py: host scalars reach the device unchanged through the pinned pieces, for
sizes around the piece (one piece, a ragged last one, many with both buffers reused),
and copy_words against numpy's slice copy."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from numba import cuda

from numba_cuzk.msm import staging


@settings(max_examples=25, deadline=None)
@given(total=st.integers(0, 200_000), lo=st.integers(0, 1000), seed=st.integers(0, 2**32 - 1))
def test_copy_words_matches_numpy(total, lo, seed):
    src = np.random.default_rng(seed).integers(0, 1 << 32, size=total + lo, dtype=np.uint32)
    dst = np.full(total + 5, 0xDEADBEEF, dtype=np.uint32)
    staging.copy_words(dst, src, lo, total)
    assert np.array_equal(dst[:total], src[lo:lo + total]) and (dst[total:] == 0xDEADBEEF).all()


@pytest.mark.gpu
@pytest.mark.parametrize("n", [1, 124, 125, 126, 1000])
def test_stage_copies_every_piece(monkeypatch, n):
    monkeypatch.setattr(staging, "PIECE", 1000)  # 8 n words: 1 to 8 pieces
    monkeypatch.setattr(staging, "_staging", {})
    host = np.random.default_rng(n).integers(0, 1 << 32, size=(8, n), dtype=np.uint32)
    stream = cuda.stream()
    for round_ in range(2):  # the second round reuses buffers whose events were recorded
        device = cuda.to_device(np.full((8, n), 0xDEADBEEF, dtype=np.uint32))
        staging.stage(device, host + round_, stream)
        stream.synchronize()
        assert np.array_equal(device.copy_to_host(), host + round_)
