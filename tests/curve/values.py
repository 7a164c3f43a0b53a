"""Points shared by the curve tests: seeded random points, special cases, hypothesis
strategies, and random projective representatives (Z != 1) of affine points."""

from __future__ import annotations

import random

from hypothesis import strategies as st

from numba_cuzk.curve.reference import Curve


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


def points(ref: Curve):
    """Hypothesis strategy: infinity, a small multiple of G, or a random k*G."""
    return st.one_of(
        st.just(None),
        st.integers(1, 16).map(lambda k: ref.mul(ref.generator, k)),
        st.integers(1, ref.order - 1).map(lambda k: ref.mul(ref.generator, k)),
    )
