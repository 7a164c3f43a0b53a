"""Naive multi-scalar multiplication on Python integers: the ground truth for tests.

Points are the curve reference's affine tuples (None = infinity); scalars are ints (any
size: k and k mod r give the same point on the order-r subgroup).
"""

from __future__ import annotations

from numba_cuzk.curve.reference import Curve


def msm(curve: Curve, points: list, scalars: list[int]):
    """sum_i scalars[i] * points[i] by double-and-add per term."""
    acc = None
    for p, k in zip(points, scalars, strict=True):
        acc = curve.add(acc, curve.mul(p, k % curve.order))
    return acc
