"""Inputs for the MSM tests and benchmark: points (reference tuples and the device
layout), scalars in the field layout, and py-arkworks-bls12381 as a peer.

Points are multiples of one random point (P, 2P, 3P, ...: one addition each, so hundreds
of reference points cost milliseconds), which is all an MSM test needs; large sets come
from arkworks (additions in Rust).
"""

from __future__ import annotations

import random

import numpy as np

from numba_cuzk.curve import layout
from numba_cuzk.curve.params import CurveParams
from numba_cuzk.curve.reference import Curve, g1, g2
from numba_cuzk.field import codec
from numba_cuzk.field.params import FR
from numba_cuzk.curve.ark import from_ark

R = FR.modulus


def reference_curve(curve: CurveParams) -> Curve:
    return g1 if curve.degree == 1 else g2


def multiples(curve: CurveParams, n: int, rng: random.Random) -> list:
    """[P, 2P, ..., nP] for a random P (reference affine tuples)."""
    C = reference_curve(curve)
    p = C.random_point(rng)
    out, acc = [], None
    for _ in range(n):
        acc = C.add(acc, p)
        out.append(acc)
    return out


def scalar_limbs(values: list[int]) -> np.ndarray:
    """ints in [0, 2^256) -> (8, n) uint32 limbs, no reduction."""
    out = np.zeros((FR.limbs, len(values)), dtype=np.uint32)
    for i, v in enumerate(values):
        for j in range(FR.limbs):
            out[j, i] = (v >> (32 * j)) & 0xFFFFFFFF
    return out


def to_montgomery(values: list[int]) -> list[int]:
    return [v * FR.r % R for v in values]


def random_scalar_limbs(n: int, rng: np.random.Generator) -> np.ndarray:
    """n random canonical scalars < r as (8, n) limbs (top limb kept below r's)."""
    a = rng.integers(0, 1 << 32, size=(FR.limbs, n), dtype=np.uint32)
    a[FR.limbs - 1] %= np.uint32(FR.modulus_limbs[-1])
    return a


def bits_scalar_limbs(n: int, rng: np.random.Generator, share: float = 0.9) -> np.ndarray:
    """Scalars of which ``share`` are 0 or 1 (half each), the rest random < r."""
    a = random_scalar_limbs(n, rng)
    small = rng.random(n) < share
    a[:, small] = 0
    a[0, small] = rng.integers(0, 2, size=int(small.sum()), dtype=np.uint32)
    return a


def limbs_to_ints(limbs: np.ndarray) -> list[int]:
    return codec.from_limbs(limbs, FR)


# --- py-arkworks-bls12381 --------------------------------------------------------------
def ark_module():
    import py_arkworks_bls12381 as ark

    return ark


def ark_point_class(curve: CurveParams):
    ark = ark_module()
    return ark.G1Point if curve.degree == 1 else ark.G2Point


def ark_to_reference(point, curve: CurveParams):
    """An arkworks point -> reference affine tuple (None for the identity)."""
    return from_ark(point, curve.degree)


def ark_multiples(curve: CurveParams, n: int, seed: int) -> list:
    """[Q, 2Q, ..., nQ] as arkworks points, Q = seed-th random multiple of the generator."""
    ark = ark_module()
    cls = ark_point_class(curve)
    q = cls() * ark.Scalar(seed * 0x9E3779B97F4A7C15 % R)
    out, acc = [], cls.identity()
    for _ in range(n):
        acc = acc + q
        out.append(acc)
    return out


def ark_points_to_limbs(points: list, curve: CurveParams) -> np.ndarray:
    return layout.points_to_limbs([ark_to_reference(p, curve) for p in points], curve)


def ark_scalars(scalars: np.ndarray) -> list:
    """Canonical (8, n) scalar limbs -> arkworks Scalars."""
    ark = ark_module()
    raw = np.ascontiguousarray(scalars.T).astype("<u4").tobytes()
    return [ark.Scalar.from_le_bytes(raw[32 * i:32 * i + 32]) for i in range(scalars.shape[1])]


def ark_msm(points: list, scalars, curve: CurveParams):
    """multiexp_unchecked of arkworks points and scalars: (8, n) canonical limbs or a list
    from ``ark_scalars``."""
    ks = ark_scalars(scalars) if isinstance(scalars, np.ndarray) else scalars
    return ark_point_class(curve).multiexp_unchecked(points, ks)
