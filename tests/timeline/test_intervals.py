"""Interval arithmetic against a brute force on an integer grid."""

from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from numba_cuzk.timeline import intervals as iv

pairs = st.lists(st.tuples(st.integers(0, 60), st.integers(0, 20)).map(lambda p: (p[0], p[0] + p[1])), max_size=12)


def grid(rows) -> np.ndarray:
    """Which unit cells [k, k+1) of [0, 80) the rows cover."""
    cells = np.zeros(80, dtype=bool)
    for start, end in rows:
        cells[int(start):int(end)] = True
    return cells


@given(pairs)
def test_union_is_sorted_disjoint_and_covers_the_same(rows):
    union = iv.union(iv.as_array(rows))
    assert np.all(union[:, 0] < union[:, 1])
    assert np.all(union[1:, 0] > union[:-1, 1])  # disjoint and not touching
    assert np.array_equal(grid(union), grid(rows))
    assert iv.length(union) == grid(rows).sum()


@given(pairs, st.integers(0, 80), st.integers(0, 80))
def test_clip_keeps_what_lies_inside(rows, a, b):
    a, b = min(a, b), max(a, b)
    clipped = iv.clip(iv.as_array(rows), a, b)
    want = grid(rows)
    want[:a] = want[b:] = False
    assert np.array_equal(grid(clipped), want)
    assert np.all(clipped[:, 1] > clipped[:, 0])


@given(pairs)
def test_covered_matches_the_grid(rows):
    cells = np.arange(80) + 0.5
    assert np.array_equal(iv.covered(iv.union(iv.as_array(rows)), cells), grid(rows))


@given(pairs, pairs)
def test_intersect_matches_the_grid(a, b):
    both = iv.intersect(iv.union(iv.as_array(a)), iv.union(iv.as_array(b)))
    assert np.array_equal(grid(both), grid(a) & grid(b))
    assert np.array_equal(both, iv.union(both))  # a union itself


def test_runs_merge_touching_segments():
    edges = np.array([0.0, 1, 2, 3, 4])
    runs = iv.runs(edges[:-1], edges[1:], np.array([True, True, False, True]))
    assert runs.tolist() == [[0, 2], [3, 4]]
