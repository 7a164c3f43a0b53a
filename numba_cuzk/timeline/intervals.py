"""Interval arithmetic on numpy arrays of shape (n, 2): rows [start_ms, end_ms].

A *union* is sorted, disjoint and non-touching (the form ``union`` returns); lengths and
coverage tests are only asked of unions, so overlapping intervals are never counted twice.
"""

from __future__ import annotations

import numpy as np

EMPTY = np.zeros((0, 2))


def as_array(pairs) -> np.ndarray:
    """Rows [start_ms, end_ms] as a float (n, 2) array (empty input gives EMPTY)."""
    array = np.asarray(pairs, dtype=float).reshape(-1, 2)
    return array if len(array) else EMPTY


def clip(intervals: np.ndarray, start_ms: float, end_ms: float) -> np.ndarray:
    """The parts of ``intervals`` inside [start_ms, end_ms]; empty parts dropped."""
    clipped = np.clip(intervals, start_ms, end_ms)
    return clipped[clipped[:, 1] > clipped[:, 0]]


def union(intervals: np.ndarray) -> np.ndarray:
    """Merge overlapping or touching intervals into a sorted disjoint union; empty
    intervals vanish."""
    intervals = intervals[intervals[:, 1] > intervals[:, 0]]
    if not len(intervals):
        return EMPTY
    ordered = intervals[np.argsort(intervals[:, 0], kind="stable")]
    reach = np.maximum.accumulate(ordered[:, 1])  # furthest end so far
    # A new run starts where an interval begins after everything before it has ended.
    first = np.concatenate([[True], ordered[1:, 0] > reach[:-1]])
    last = np.concatenate([first[1:], [True]])
    return np.column_stack([ordered[first, 0], reach[last]])


def length(union_: np.ndarray) -> float:
    """Total length (ms) of a union."""
    return float(np.sum(union_[:, 1] - union_[:, 0]))


def covered(union_: np.ndarray, points: np.ndarray) -> np.ndarray:
    """Boolean mask: which ``points`` (ms) lie inside ``union_`` (half-open rows)."""
    if not len(union_):
        return np.zeros(len(points), dtype=bool)
    row = np.searchsorted(union_[:, 0], points, side="right") - 1
    return (row >= 0) & (points < union_[np.maximum(row, 0), 1])


def intersect(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """The intersection of two unions, as a union."""
    edges = np.unique(np.concatenate([a.ravel(), b.ravel()]))
    starts, ends = edges[:-1], edges[1:]
    mids = (starts + ends) / 2
    return runs(starts, ends, covered(a, mids) & covered(b, mids))


def runs(starts: np.ndarray, ends: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """The union of the segments [starts[i], ends[i]] where ``mask`` holds."""
    return union(np.column_stack([starts[mask], ends[mask]]))
