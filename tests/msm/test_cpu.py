"""The CPU backend's own paths (msm/cpu.py, msm/batch_affine.py) against the reference:
identity bases skipped (a Groth16 B query), several bucket slices per window, buckets
deep enough for several tree rounds, P + P and P + (-P) inside a bucket's tree."""

import random

import pytest

from numba_cuzk.curve import layout
from numba_cuzk.curve.params import G1, G2
from numba_cuzk.msm import cpu, host_bases, msm, reference as ref, to_point
from tests.msm import inputs

N = 40


def _msm(curve, pts, values, **options):
    bases = host_bases(layout.points_to_limbs(pts, curve), curve)
    return to_point(msm(bases, inputs.scalar_limbs(values), **options))


def _expect(curve, pts, values):
    return ref.msm(inputs.reference_curve(curve), pts, values)


@pytest.mark.parametrize("curve", [G1, G2], ids=["G1", "G2"])
def test_mostly_identity_bases(curve):
    rng = random.Random(31)
    pts = inputs.multiples(curve, N, rng)
    pts = [p if i in (2, 17, 33) else None for i, p in enumerate(pts)]
    values = [rng.randrange(inputs.R) for _ in range(N)]
    assert _msm(curve, pts, values) == _expect(curve, pts, values)
    assert _msm(curve, [None] * N, values) is None


@pytest.mark.parametrize("tasks", [1, 7, 64])
def test_bucket_slices(monkeypatch, tasks):
    """Windows split into 1 .. many bucket slices (each share offset by lo * its sum)."""
    monkeypatch.setattr(cpu, "TASKS_PER_THREAD", tasks)
    rng = random.Random(32)
    pts = inputs.multiples(G1, N, rng)
    values = [rng.randrange(inputs.R) for _ in range(N)]
    assert _msm(G1, pts, values, window=6) == _expect(G1, pts, values)


def test_deep_buckets_with_doublings_and_cancellations():
    """Few buckets (window 2), so every bucket's tree has several rounds; repeated and
    negated bases meet inside them (P + P doubles, P + (-P) is the identity)."""
    rng = random.Random(33)
    pts = inputs.multiples(G1, N, rng)
    curve = inputs.reference_curve(G1)
    pts[5] = pts[4]
    pts[7] = curve.neg(pts[6])
    pts[9] = pts[8] = pts[4]
    values = [rng.randrange(inputs.R) for _ in range(N)]
    values[5] = values[4] = values[8] = values[9]
    values[7] = values[6]
    assert _msm(G1, pts, values, window=2) == _expect(G1, pts, values)


def test_bucket_slices_bounds():
    assert cpu.bucket_slices(windows=20, buckets=4096, threads=2) == 1
    assert cpu.bucket_slices(windows=13, buckets=1 << 19, threads=16) == 3
    assert cpu.bucket_slices(windows=128, buckets=2, threads=1024) == 2
