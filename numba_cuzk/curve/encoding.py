"""The standard point encodings of BLS12-381 (zkcrypto/bls12_381, blst, Filecoin), in bulk.

    G1 compressed 48 bytes, uncompressed 96; G2 compressed 96, uncompressed 192.

Coordinates are big-endian; a G2 coordinate c0 + c1 u is written c1 first, then c0. The
three top bits of the first byte are flags: 0x80 compressed, 0x40 point at infinity
(every other bit zero), 0x20 (compressed only) y is the lexicographically largest of
+-y (for Fq2: decided by c1, or by c0 when c1 = 0).

``decode`` parses with numpy over whole arrays (no Python loop per point), then runs
checks.py's per-point decode on the GPU (``device=True``: the result stays there) or on
all CPU cores: square roots for compressed points, the on-curve check for uncompressed
ones and the endomorphism subgroup check for all. The first bad point raises ValueError
("point 17: not on curve"). ``encode`` is the inverse, numpy only.
"""

from __future__ import annotations

import numpy as np
from numba_cuzk import _compat  # noqa: F401,I001  (numba patched before its first use)
from numba import cuda

from numba_cuzk.curve import checks, kernels
from numba_cuzk.curve.params import CurveParams
from numba_cuzk.field import codec
from numba_cuzk.field.params import FQ

FLAG_COMPRESSED = 0x80
FLAG_INFINITY = 0x40
FLAG_SIGN = 0x20

_FORMAT_REASONS = {
    1: "compression flag not set (expected a compressed encoding)",
    2: "compression flag set on an uncompressed encoding",
    3: "infinity flag set but the other bits are not all zero",
    4: "sign flag set on an uncompressed encoding",
    5: "x coordinate is not canonical (>= q)",
    6: "y coordinate is not canonical (>= q)",
    7: "every coordinate byte is zero but the infinity flag is not set (infinity is 0x40 then zeros)",
}


def _rows(data, width: int) -> np.ndarray:
    raw = data.reshape(-1).view(np.uint8) if isinstance(data, np.ndarray) else np.frombuffer(data, dtype=np.uint8)
    if raw.size % width:
        raise ValueError(f"{raw.size} bytes is not a whole number of {width}-byte points")
    return raw.reshape(-1, width)


def _coordinate_limbs(rows: np.ndarray, curve: CurveParams, offset: int) -> np.ndarray:
    """(n, width) bytes -> (L, n) canonical limbs of the coordinate at byte ``offset``
    (G2: c1's 48 bytes come first in the encoding, c0 first in the limbs)."""
    size = FQ.nbytes
    parts = [rows[:, offset + k * size:offset + (k + 1) * size] for k in range(curve.degree)]
    parts = parts[::-1]  # c0 first
    return np.ascontiguousarray(np.concatenate(
        [codec.from_bytes(np.ascontiguousarray(p), FQ, byteorder="big", check=False) for p in parts]))


def _noncanonical(limbs: np.ndarray) -> np.ndarray:
    """Bool per point: some Fq component >= q."""
    bad = np.zeros(limbs.shape[1], dtype=bool)
    for k in range(limbs.shape[0] // FQ.limbs):
        part = limbs[k * FQ.limbs:(k + 1) * FQ.limbs]
        less = np.zeros(part.shape[1], dtype=bool)
        equal = np.ones(part.shape[1], dtype=bool)
        for j in range(FQ.limbs - 1, -1, -1):
            pj = np.uint32(FQ.modulus_limbs[j])
            less |= equal & (part[j] < pj)
            equal &= part[j] == pj
        bad |= ~less
    return bad


def _raise_first(codes: np.ndarray, reasons: dict) -> None:
    bad = np.flatnonzero(codes)
    if bad.size:
        i = int(bad[0])
        raise ValueError(f"point {i}: {reasons[int(codes[i])]}")


def parse(data, curve: CurveParams, compressed: bool) -> tuple[np.ndarray, np.ndarray]:
    """Bytes -> ((2L, n) canonical coordinates, per-point checks.* flags), every format
    rule checked (flags, canonical coordinates); curve and subgroup checks come later."""
    width = curve.compressed_bytes if compressed else curve.uncompressed_bytes
    rows = _rows(data, width)
    n = rows.shape[0]
    first = rows[:, 0]
    is_compressed = (first & FLAG_COMPRESSED) != 0
    infinity = (first & FLAG_INFINITY) != 0
    sign = (first & FLAG_SIGN) != 0
    body = rows.copy()
    body[:, 0] &= 0x1F
    codes = np.zeros(n, dtype=np.uint8)
    size = curve.coordinate_bytes
    x = _coordinate_limbs(body, curve, 0)
    y = _coordinate_limbs(body, curve, size) if not compressed else np.zeros_like(x)
    rules = [
        # all zeros would read as (0, 0), the kernels' infinity; zkcrypto and blst refuse it
        (7, ~infinity & ~body.any(axis=1)),
        (6, ~infinity & _noncanonical(y)) if not compressed else (6, np.zeros(n, dtype=bool)),
        (5, ~infinity & _noncanonical(x)),
        (4, sign & ~is_compressed),
        (3, infinity & (sign | body.any(axis=1))),
        (2, is_compressed) if not compressed else (1, ~is_compressed),
    ]
    for code, mask in rules:  # the last rule wins: format errors before value errors
        codes[mask] = code
    _raise_first(codes, _FORMAT_REASONS)
    flags = np.where(infinity, checks.INFINITY, np.uint32(0)).astype(np.uint32)
    flags |= np.where(sign, checks.SIGN, np.uint32(0)).astype(np.uint32)
    if compressed:
        flags |= checks.COMPRESSED
    return np.ascontiguousarray(np.concatenate([x, y])), flags


def decode(data, curve: CurveParams, compressed: bool, device: bool = False, stream=None):
    """Encoded points -> (2L, n) uint32 affine Montgomery points, fully checked.

    Checks every point: flags consistent, coordinates canonical (< q), on the curve, in
    the prime-order subgroup. Raises ValueError naming the first bad point and why.
    ``device=True`` runs the checks on the GPU and returns a device array.
    """
    return _decode(data, curve, compressed, device, stream, check=True)


def decode_unchecked(data, curve: CurveParams, compressed: bool, device: bool = False, stream=None):
    """Like ``decode`` but WITHOUT the on-curve and subgroup checks: only for trusted,
    already-validated files (e.g. our own parameter caches). Format rules (flags,
    canonical coordinates) are still enforced; compressed points are still decompressed
    and a compressed x with no square root still raises."""
    return _decode(data, curve, compressed, device, stream, check=False)


def _decode(data, curve, compressed, device, stream, check):
    coords, flags = parse(data, curve, compressed)
    if check:
        flags |= checks.CHECK
    status = np.zeros(coords.shape[1], dtype=np.uint32)
    if device:
        d_coords = cuda.to_device(coords, stream=stream or 0)
        d_status = cuda.to_device(status, stream=stream or 0)
        kernels.decode(d_status, d_coords, cuda.to_device(flags, stream=stream or 0), curve, stream)
        status = d_status.copy_to_host(stream=stream or 0)
        if stream:
            stream.synchronize()
        _raise_first(status, checks.STATUS_REASONS)
        return d_coords
    kernels.decode(status, coords, flags, curve)
    _raise_first(status, checks.STATUS_REASONS)
    return coords


def encode(points, curve: CurveParams, compressed: bool) -> bytes:
    """(2L, n) affine Montgomery points (host or device; (0, 0) = infinity) -> bytes."""
    host = points.copy_to_host() if hasattr(points, "copy_to_host") else np.asarray(points)
    L = curve.limbs
    if host.dtype != np.uint32 or host.ndim != 2 or host.shape[0] != 2 * L:
        raise ValueError(f"expected uint32 {curve.name} affine points of shape ({2 * L}, n), got {host.dtype} {host.shape}")
    n = host.shape[1]
    canonical = np.concatenate([
        codec.from_montgomery(np.ascontiguousarray(host[k * FQ.limbs:(k + 1) * FQ.limbs]), FQ)
        for k in range(2 * curve.degree)])
    infinity = ~canonical.any(axis=0)

    def coordinate_bytes(c: int) -> np.ndarray:  # (n, coordinate_bytes), c1 first for G2
        parts = [canonical[(c * curve.degree + k) * FQ.limbs:(c * curve.degree + k + 1) * FQ.limbs]
                 for k in range(curve.degree)][::-1]
        return np.concatenate([np.frombuffer(codec.to_bytes(np.ascontiguousarray(p), FQ, "big"), np.uint8)
                               .reshape(n, FQ.nbytes) for p in parts], axis=1)

    x = coordinate_bytes(0)
    if compressed:
        y = canonical[L:2 * L]
        out = x.copy()
        out[:, 0] |= FLAG_COMPRESSED
        out[_largest(y), 0] |= FLAG_SIGN
    else:
        out = np.concatenate([x, coordinate_bytes(1)], axis=1)
    out[infinity] = 0
    out[infinity, 0] = FLAG_INFINITY | (FLAG_COMPRESSED if compressed else 0)
    return out.tobytes()


def _largest(y: np.ndarray) -> np.ndarray:
    """Lexicographically largest per point, from canonical limbs (L, n)."""
    half = (FQ.modulus - 1) // 2

    def gt_half(part):
        greater = np.zeros(part.shape[1], dtype=bool)
        equal = np.ones(part.shape[1], dtype=bool)
        for j in range(FQ.limbs - 1, -1, -1):
            hj = np.uint32((half >> (32 * j)) & 0xFFFFFFFF)
            greater |= equal & (part[j] > hj)
            equal &= part[j] == hj
        return greater

    n = FQ.limbs
    if y.shape[0] == n:
        return gt_half(y)
    c0, c1 = y[:n], y[n:]
    return np.where(c1.any(axis=0), gt_half(c1), gt_half(c0))
