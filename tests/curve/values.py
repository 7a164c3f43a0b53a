"""Points shared by the curve tests: seeded random points, special cases, hypothesis
strategies, and random projective representatives (Z != 1) of affine points."""

from __future__ import annotations

import random
from functools import lru_cache

from hypothesis import strategies as st

from numba_cuzk.curve.reference import Curve

POOL = 4  # random points per curve in points()
SMALL = 8  # largest |k| of the k*G offsets in points()


def random_z(ref: Curve, rng: random.Random):
    F = ref.F
    if ref.params.degree == 1:
        return rng.randrange(1, F.p)
    return (rng.randrange(1, F.p), rng.randrange(F.p))


def jacobian(ref: Curve, p, rng: random.Random):
    return ref.to_jacobian(p, random_z(ref, rng))


def xyzz(ref: Curve, p, rng: random.Random):
    return ref.to_xyzz(p, random_z(ref, rng))


def small_multiples(ref: Curve, count: int) -> list:
    """G, 2G, ..., count*G."""
    out, acc = [], None
    for _ in range(count):
        acc = ref.add(acc, ref.generator)
        out.append(acc)
    return out


@lru_cache(maxsize=None)
def _values(ref: Curve) -> tuple:
    """R + k*G for R infinity, a few seeded random points and their negatives, and
    k = 0, 1, -1, ..., SMALL, -SMALL; infinity first (where hypothesis shrinks to)."""
    rng = random.Random(7)
    randoms = [ref.random_point(rng) for _ in range(POOL)]
    small = [None] + small_multiples(ref, SMALL)
    offsets = [None] + [m for p in small[1:] for m in (p, ref.neg(p))]
    return tuple(ref.add(r, m) for r in [None, *randoms, *map(ref.neg, randoms)] for m in offsets)


def points(ref: Curve):
    """Hypothesis strategy over _values: infinity, small multiples, random points, 153 in
    all, so a batch of tens of draws often holds P and P or P and -P. Drawn from a table: a
    fresh random k*G (double-and-add, ~35 ms) is too slow for thousands of points, and one
    draw per point keeps a batch of hundreds within hypothesis' input size limit."""
    return st.sampled_from(_values(ref))
