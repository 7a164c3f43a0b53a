"""Standard compressed/uncompressed encodings: known vectors from py-arkworks-bls12381 and
py_ecc, round trips, and every rejection with its reason."""

import random

import numpy as np
import py_arkworks_bls12381 as ark
import pytest
from py_ecc.bls import point_compression
from py_ecc.optimized_bls12_381 import G1 as ECC_G1
from py_ecc.optimized_bls12_381 import G2 as ECC_G2
from py_ecc.optimized_bls12_381 import multiply

from numba_cuzk.curve import encoding, layout
from numba_cuzk.curve.params import G1, G2
from numba_cuzk.curve.reference import g1, g2

SCALARS = [1, 2, 5, 0x1234567890ABCDEF1234567890ABCDEF]
CASES = [pytest.param((G1, g1, ark.G1Point), id="G1"), pytest.param((G2, g2, ark.G2Point), id="G2")]


def _swap_fq2_halves(xy: bytes) -> bytes:
    """arkworks' to_xy_bytes_be writes G2 coordinates c0 first; the standard is c1 first."""
    parts = [xy[k:k + 48] for k in range(0, len(xy), 48)]
    return b"".join(parts[k + 1] + parts[k] for k in range(0, len(parts), 2))


def vectors(curve, point_cls, compressed: bool) -> bytes:
    """Encodings of k*G for SCALARS, then infinity, by py-arkworks-bls12381."""
    out = []
    for k in SCALARS:
        p = point_cls() * ark.Scalar(k)
        if compressed:
            out.append(bytes(p.to_compressed_bytes()))
        else:
            xy = bytes(p.to_xy_bytes_be())
            out.append(_swap_fq2_halves(xy) if curve.degree == 2 else xy)
    width = curve.compressed_bytes if compressed else curve.uncompressed_bytes
    out.append(bytes([0xC0 if compressed else 0x40]) + bytes(width - 1))
    return b"".join(out)


def expected_points(ref):
    return [ref.mul(ref.generator, k) for k in SCALARS] + [None]


def test_generator_vectors_match_py_ecc():
    assert vectors(G1, ark.G1Point, True)[:48] == point_compression.compress_G1(ECC_G1).to_bytes(48, "big")
    z1, z2 = point_compression.compress_G2(multiply(ECC_G2, 5))
    assert vectors(G2, ark.G2Point, True)[192:288] == z1.to_bytes(48, "big") + z2.to_bytes(48, "big")


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("compressed", [True, False], ids=["compressed", "uncompressed"])
def test_encode_known_vectors(case, compressed):
    curve, ref, cls = case
    arr = layout.points_to_limbs(expected_points(ref), curve)
    assert encoding.encode(arr, curve, compressed) == vectors(curve, cls, compressed)


def _rejects(curve, data, compressed, reason, device=False):
    with pytest.raises(ValueError, match=reason):
        encoding.decode(data, curve, compressed, device=device)


@pytest.mark.parametrize("case", CASES)
def test_format_rejections(case):
    """Rules checked on the host before any kernel runs."""
    curve, ref, cls = case
    comp, unc = vectors(curve, cls, True), vectors(curve, cls, False)
    w, W = curve.compressed_bytes, curve.uncompressed_bytes

    def edit(data, width, index, byte0=None, tail=None):
        rows = bytearray(data)
        if byte0 is not None:
            rows[index * width] = byte0
        if tail is not None:
            rows[index * width + 1:(index + 1) * width] = tail
        return bytes(rows)

    _rejects(curve, comp[:-1], True, "whole number")
    _rejects(curve, edit(comp, w, 1, byte0=comp[w] & 0x7F), True, "point 1: compression flag not set")
    _rejects(curve, edit(unc, W, 2, byte0=unc[2 * W] | 0x80), False, "point 2: compression flag set")
    _rejects(curve, edit(unc, W, 0, byte0=unc[0] | 0x20), False, "point 0: sign flag set on an uncompressed")
    _rejects(curve, edit(comp, w, 4, byte0=0xE0), True, "point 4: infinity flag set but")
    _rejects(curve, edit(comp, w, 4, tail=b"\x01" * (w - 1)), True, "point 4: infinity flag set but")
    q_bytes = curve.field.p.to_bytes(48, "big") if curve.degree == 1 else curve.field.p.to_bytes(48, "big") * 2
    bad_x = bytes([0x80 | q_bytes[0]]) + q_bytes[1:]
    _rejects(curve, comp[:w] + bad_x, True, "point 1: x coordinate is not canonical")
    _rejects(curve, unc[:W] + unc[:curve.coordinate_bytes] + q_bytes, False, "point 1: y coordinate is not canonical")
    # all zeros without 0x40 would read as the kernels' (0, 0) infinity: zkcrypto and blst refuse it
    _rejects(curve, unc[:W] + bytes(W), False, "point 1: every coordinate byte is zero but the infinity flag")
    _rejects(curve, comp[:w] + bytes([0x80]) + bytes(w - 1), True, "point 1: every coordinate byte is zero")


def _bad_points(ref):
    rng = random.Random(9)
    return ref.point_off_curve(rng), ref.point_off_subgroup(rng)


def _roundtrip_and_rejections(curve, ref, cls, device):
    expect = expected_points(ref)
    for compressed in (True, False):
        got = encoding.decode(vectors(curve, cls, compressed), curve, compressed, device=device)
        assert layout.limbs_to_points(got, curve) == expect
    off_curve, off_subgroup = _bad_points(ref)
    good = layout.points_to_limbs(expect[:2], curve)
    for bad, reason in ((off_curve, "point 2: not on curve"), (off_subgroup, "point 2: not in the prime-order")):
        arr = np.concatenate([good, layout.points_to_limbs([bad], curve)], axis=1)
        _rejects(curve, encoding.encode(arr, curve, False), False, reason, device)
    # compressed: an x with no curve point, and a point outside the subgroup
    x_only = encoding.encode(np.concatenate([good, layout.points_to_limbs([off_subgroup], curve)], axis=1), curve, True)
    _rejects(curve, x_only, True, "point 2: not in the prime-order", device)
    arr = layout.points_to_limbs([off_subgroup], curve)
    unchecked = encoding.decode_unchecked(encoding.encode(arr, curve, False), curve, False, device=device)
    assert layout.limbs_to_points(unchecked, curve) == [off_subgroup]


def test_decode_cpu():
    """Host arrays: checks on all CPU cores (G1; G2 shares the code, see test_decode_device)."""
    _roundtrip_and_rejections(G1, g1, ark.G1Point, device=False)


@pytest.mark.gpu
@pytest.mark.parametrize("case", CASES)
def test_decode_device(case):
    curve, ref, cls = case
    _roundtrip_and_rejections(curve, ref, cls, device=True)


def test_compressed_x_without_square_root():
    rng = random.Random(10)
    while True:
        x = rng.randrange(g1.F.p)
        if g1.F.sqrt((x * x * x + 4) % g1.F.p) is None:
            break
    data = bytes([0x80 | (x >> 376)]) + (x % (1 << 376)).to_bytes(47, "big")
    _rejects(G1, data, True, "point 0: not on curve")
