"""The sorting kernels on their own: scan (prefix sums per window, of entries and of the
buckets' partial sums, and each partial sum's bucket) against numpy, and classify + scan +
scatter as a counting sort whose buckets hold exactly the digits, each bucket's last entry
flagged."""

import numpy as np
import pytest
from numba import cuda

from numba_cuzk.msm import kernels as K
from numba_cuzk.msm.digits import KIND_OTHER
from numba_cuzk.msm.plan import DIGIT_BITS
from tests.conftest import SIMULATOR
from tests.msm import inputs

pytestmark = pytest.mark.gpu


@pytest.fixture
def scan_threads(monkeypatch):
    """The simulator runs the scan with one thread (its syncthreads is slow); here it runs
    the block scan with 4 (the simulated kernel reads the module constant when it runs)."""
    if SIMULATOR:
        monkeypatch.setattr(K, "SCAN_THREADS", 4)
    return K.SCAN_THREADS


@pytest.mark.parametrize("buckets", [1, 3, 64, 1000])
def test_scan(scan_threads, buckets):
    rng = np.random.default_rng(buckets)
    windows, chunk = 3, 4
    counts = rng.integers(0, 12, size=(windows, buckets), dtype=np.int32)
    counts[1] = 0
    d_counts = cuda.to_device(counts)
    offsets = cuda.device_array((windows, buckets + 1), dtype=np.int32)
    chunk_offsets = cuda.device_array((windows, buckets + 1), dtype=np.int32)
    cursors = cuda.device_array((windows, buckets), dtype=np.int32)
    total_partials = windows * buckets * 12  # more than enough: poisoned beyond the real ones
    chunk_buckets = cuda.to_device(np.full((windows, total_partials), -7, dtype=np.int32))
    K.scan[2, scan_threads](d_counts, chunk, offsets, cursors, chunk_offsets, chunk_buckets)
    want = np.zeros((windows, buckets + 1), dtype=np.int64)
    want[:, 1:] = np.cumsum(counts, axis=1)
    # a bucket's partials: the runs of ``chunk`` consecutive entries of its window it overlaps
    first, last = want[:, :-1] // chunk, (want[:, 1:] - 1) // chunk
    want_chunks = np.zeros_like(want)
    want_chunks[:, 1:] = np.cumsum(np.where(counts > 0, last - first + 1, 0), axis=1)
    assert np.array_equal(offsets.copy_to_host(), want)
    assert np.array_equal(chunk_offsets.copy_to_host(), want_chunks)
    assert np.array_equal(cursors.copy_to_host(), want[:, :-1])
    assert not d_counts.copy_to_host().any()
    labels = chunk_buckets.copy_to_host()
    for w in range(windows):
        sizes = np.diff(want_chunks[w])
        assert np.array_equal(labels[w, :want_chunks[w, -1]], np.repeat(np.arange(buckets), sizes))
        assert (labels[w, want_chunks[w, -1]:] == -7).all()


def test_counting_sort():
    n, c = 40 if SIMULATOR else 5000, 4
    windows, buckets = -(-DIGIT_BITS // c), 1 << (c - 1)
    scalars = inputs.random_scalar_limbs(n, np.random.default_rng(3))
    scalars[:, :4] = 0
    scalars[0, 1] = 1
    d_scalars = cuda.to_device(scalars)
    kinds = cuda.device_array(n, dtype=np.uint8)
    counts = cuda.to_device(np.zeros((windows, buckets), dtype=np.int32))
    offsets = cuda.device_array((windows, buckets + 1), dtype=np.int32)
    chunk_offsets = cuda.device_array((windows, buckets + 1), dtype=np.int32)
    cursors = cuda.device_array((windows, buckets), dtype=np.int32)
    chunk_buckets = cuda.device_array((windows, n + buckets), dtype=np.int32)
    entries = cuda.device_array((windows, n), dtype=np.uint32)
    K.classify[2, K.THREADS](d_scalars, False, c, windows, kinds, counts)
    K.scan[2, K.SCAN_THREADS](counts, 2, offsets, cursors, chunk_offsets, chunk_buckets)
    for first, stop in ((0, 1), (1, 10), (10, windows)):  # launches per group of windows (plan.scatter_windows)
        K.scatter[2, K.THREADS](d_scalars, False, c, first, stop, kinds, offsets, cursors, entries)
    kind = kinds.copy_to_host()
    assert list(kind[:4]) == [0, 1, 0, 0] and (kind[4:] == KIND_OTHER).all()
    off, ent = offsets.copy_to_host(), entries.copy_to_host()
    values = inputs.limbs_to_ints(scalars)
    for w in range(windows):
        digits = {}
        for b in range(buckets):
            bucket = ent[w, off[w, b]:off[w, b + 1]]
            last = (bucket & K.LAST_BIT) != 0
            assert list(last) == [False] * (len(bucket) - 1) + [True] * (len(bucket) > 0)
            for e in bucket:
                i, sign = int(e & K.INDEX_MASK), -1 if int(e) >> 31 else 1
                digits[i] = sign * (b + 1)
        for i, v in enumerate(values):
            raw = (v >> (c * w)) & ((1 << c) - 1)
            borrow_in = (v >> (c * w - 1)) & 1 if w else 0
            d = raw + borrow_in - ((raw >> (c - 1)) << c)
            assert digits.get(i, 0) == (d if kind[i] == KIND_OTHER else 0)
