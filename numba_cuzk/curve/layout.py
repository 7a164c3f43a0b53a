"""Reference points (Python ints) <-> the bulk device layout, for tests, benchmarks and
small host-side conversions (bulk byte data goes through encoding.py instead).

The layout is points.py's: (coords * L, n) uint32, Montgomery form, point i in column i,
coordinate k in rows k*L..(k+1)*L-1; an Fq2 coordinate is c0's 12 limbs then c1's.
Affine (x, y) has 2 coordinates, Jacobian (X, Y, Z) 3, XYZZ (X, Y, ZZ, ZZZ) 4. The affine
identity (reference ``None``) is stored as (0, 0).
"""

from __future__ import annotations

import numpy as np

from numba_cuzk.curve.params import CurveParams
from numba_cuzk.field import codec
from numba_cuzk.field.params import FQ

COORDS = {"affine": 2, "jacobian": 3, "xyzz": 4}


def field_to_limbs(values: list, curve: CurveParams) -> np.ndarray:
    """Canonical Fq ints (G1) or Fq2 pairs (G2) -> (L, n) Montgomery limbs."""
    if curve.degree == 1:
        return codec.to_montgomery(codec.to_limbs(values, FQ), FQ)
    parts = [codec.to_limbs([v[k] for v in values], FQ) for k in (0, 1)]
    return np.ascontiguousarray(np.concatenate([codec.to_montgomery(c, FQ) for c in parts]))


def limbs_to_field(limbs: np.ndarray, curve: CurveParams) -> list:
    """(L, n) Montgomery limbs -> canonical ints (G1) or pairs (G2)."""
    n = FQ.limbs
    parts = [
        codec.from_limbs(codec.from_montgomery(np.ascontiguousarray(limbs[k * n:(k + 1) * n]), FQ), FQ)
        for k in range(curve.degree)
    ]
    return parts[0] if curve.degree == 1 else list(zip(*parts))


def pack(coordinates: list[list], curve: CurveParams) -> np.ndarray:
    """k lists of n field elements -> (k * L, n)."""
    return np.ascontiguousarray(np.concatenate([field_to_limbs(c, curve) for c in coordinates]))


def unpack(arr, curve: CurveParams, coords: int) -> list[list]:
    """(coords * L, n) (host or device array) -> coords lists of n field elements."""
    host = arr.copy_to_host() if hasattr(arr, "copy_to_host") else np.asarray(arr)
    L = curve.limbs
    if host.shape[0] != coords * L:
        raise ValueError(f"expected {coords * L} limb rows for {coords} {curve.name} coordinates, got {host.shape[0]}")
    return [limbs_to_field(host[k * L:(k + 1) * L], curve) for k in range(coords)]


def points_to_limbs(points: list, curve: CurveParams, form: str = "affine") -> np.ndarray:
    """Reference points -> (coords * L, n): affine tuples (None = identity) for "affine",
    Jacobian / XYZZ tuples for "jacobian" / "xyzz"."""
    coords = COORDS[form]
    zero = 0 if curve.degree == 1 else (0, 0)
    if form == "affine":
        points = [(zero, zero) if p is None else p for p in points]
    return pack([[p[k] for p in points] for k in range(coords)], curve)


def limbs_to_points(arr, curve: CurveParams, form: str = "affine") -> list:
    """Inverse of points_to_limbs; affine (0, 0) comes back as None."""
    columns = unpack(arr, curve, COORDS[form])
    points = list(zip(*columns))
    if form == "affine":
        zero = 0 if curve.degree == 1 else (0, 0)
        points = [None if p == (zero, zero) else p for p in points]
    return points
