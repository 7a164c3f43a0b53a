"""Reference points <-> py-arkworks-bls12381 points, for the host's few group operations
(an MSM's window sums, a proof's epilogue) at Rust speed.

arkworks' ``xy`` byte format is x || y, 48-byte little-endian canonical Fq each (G2: x.c0
x.c1 y.c0 y.c1), all zeros for infinity.
"""

from __future__ import annotations

import py_arkworks_bls12381 as ark

from numba_cuzk.field.params import FQ, FR

_FQ_BYTES = FQ.nbytes


def to_ark(point, degree: int):
    """Reference affine tuple (None = infinity) -> arkworks G1Point (degree 1) or G2Point."""
    cls = ark.G1Point if degree == 1 else ark.G2Point
    if point is None:
        return cls.identity()
    words = [point[0], point[1]] if degree == 1 else [*point[0], *point[1]]
    return cls.from_xy_bytes_unchecked_le(b"".join(w.to_bytes(_FQ_BYTES, "little") for w in words))


def from_ark(point, degree: int):
    """arkworks point -> reference affine tuple (None = infinity)."""
    raw = point.to_xy_bytes_le()
    words = [int.from_bytes(raw[k:k + _FQ_BYTES], "little") for k in range(0, len(raw), _FQ_BYTES)]
    if not any(words):
        return None
    return (words[0], words[1]) if degree == 1 else ((words[0], words[1]), (words[2], words[3]))


def scalar(k: int):
    return ark.Scalar(k % FR.modulus)
