"""snarkjs/circom formats: round trips, the zkey's R^2 coefficients, every header and
section error naming its section, point checks, and (when a snarkjs CLI is on PATH or in
$SNARKJS) files written by snarkjs itself. The fuzzed readers: test_formats_fuzz.py."""

from __future__ import annotations

import dataclasses
import json
import os
import random
import shutil
import struct
import subprocess

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from numba import cuda

from numba_cuzk.curve import layout
from numba_cuzk.curve.params import G1, G2
from numba_cuzk.curve.reference import g1, g2
from numba_cuzk.field import codec
from numba_cuzk.field.params import FQ, FR
from numba_cuzk.groth16.formats import (points, read_proof_json, read_public_json, read_r1cs, read_vk_json, read_wtns,
                                        read_zkey, write_proof_json, write_public_json, write_r1cs, write_vk_json,
                                        write_wtns, write_zkey)
from numba_cuzk.groth16.keys import Coefficients, Proof, ProvingKey
from numba_cuzk.groth16.prove import Prover
from numba_cuzk.groth16.r1cs import R1CS, SparseMatrix
from numba_cuzk.groth16.setup import _coefficients
from tests.conftest import SIMULATOR, outside_judge_missing

R, Q = FR.modulus, FQ.modulus
R_MONT = 1 << 256  # Fr's Montgomery R


# --- builders -------------------------------------------------------------------------

def random_points(ref, rng: random.Random, n: int) -> list:
    """n distinct subgroup points: k*G, then steps of j*G (one addition per point)."""
    p, step = ref.random_point(rng), ref.random_point(rng)
    out = []
    for _ in range(n):
        out.append(p)
        p = ref.add(p, step)
    return out


def random_key(seed: int = 1, n_vars: int = 5, n_public: int = 2, domain_size: int = 8) -> ProvingKey:
    rng = random.Random(seed)
    g1s, g2s = random_points(g1, rng, 4 * n_vars + domain_size + 4), random_points(g2, rng, n_vars + 3)
    k = 2 * domain_size
    values = [rng.randrange(R) for _ in range(k)]
    coefficients = Coefficients(
        matrix=np.array([rng.randrange(2) for _ in range(k)], dtype=np.uint8),
        constraint=np.array([rng.randrange(domain_size) for _ in range(k)], dtype=np.uint32),
        signal=np.array([rng.randrange(n_vars) for _ in range(k)], dtype=np.uint32),
        value=codec.to_limbs(values, FR))
    a = g1s[:n_vars - 1] + [None]  # an unused wire's query point is infinity
    return ProvingKey(
        n_vars=n_vars, n_public=n_public, domain_size=domain_size,
        alpha_g1=g1s.pop(), beta_g1=g1s.pop(), beta_g2=g2s.pop(), gamma_g2=g2s.pop(), delta_g1=g1s.pop(),
        delta_g2=g2s.pop(), ic=g1s[n_vars:2 * n_vars][:n_public + 1], coefficients=coefficients,
        a_g1=layout.points_to_limbs(a, G1), b_g1=layout.points_to_limbs(g1s[2 * n_vars:3 * n_vars], G1),
        b_g2=layout.points_to_limbs(g2s[:n_vars], G2),
        c_g1=layout.points_to_limbs(g1s[3 * n_vars:4 * n_vars][:n_vars - n_public - 1], G1),
        h_g1=layout.points_to_limbs(g1s[4 * n_vars:4 * n_vars + domain_size], G1))


def random_matrix(rng: random.Random, rows: int, n_wires: int) -> SparseMatrix:
    """Rows of 0 to 3 terms; row 0 has one (the defect tests edit it)."""
    counts = [1] + [rng.choice([0, 1, 1, 2, 3]) for _ in range(rows - 1)]
    nnz = sum(counts)
    values = [rng.choice([1, R - 1, rng.randrange(R)]) for _ in range(nnz)]
    return SparseMatrix(indptr=np.concatenate([[0], np.cumsum(counts)]).astype(np.int64),
                        indices=np.array([rng.randrange(n_wires) for _ in range(nnz)], dtype=np.uint32),
                        values=codec.to_limbs(values, FR).reshape(FR.limbs, nnz))


def random_r1cs(seed: int = 2, n_constraints: int = 7, n_wires: int = 6, n_public: int = 2) -> R1CS:
    rng = random.Random(seed)
    return R1CS(n_wires, n_public, *(random_matrix(rng, n_constraints, n_wires) for _ in range(3)))


def sections_of(data: bytes) -> tuple[bytes, list[tuple[int, bytes]]]:
    """A container's magic + version, and its (id, bytes) sections: parsed here
    independently of binfile.py."""
    n = struct.unpack_from("<I", data, 8)[0]
    pos, out = 12, []
    for _ in range(n):
        sid, size = struct.unpack_from("<IQ", data, pos)
        out.append((sid, data[pos + 12:pos + 12 + size]))
        pos += 12 + size
    return data[:8], out


def container(head: bytes, sections: list[tuple[int, bytes]]) -> bytes:
    return head + struct.pack("<I", len(sections)) + b"".join(struct.pack("<IQ", s, len(b)) + b for s, b in sections)


def edit_section(data: bytes, sid: int, edit) -> bytes:
    head, sections = sections_of(data)
    return container(head, [(s, edit(b) if s == sid else b) for s, b in sections])


def assert_keys_equal(a: ProvingKey, b: ProvingKey) -> None:
    for f in dataclasses.fields(ProvingKey):
        if f.name == "unchecked":  # where the points were read, not what they are
            continue
        x, y = getattr(a, f.name), getattr(b, f.name)
        if isinstance(x, np.ndarray):
            assert type(y) is np.ndarray and y.flags.c_contiguous and y.dtype == x.dtype, f.name
            np.testing.assert_array_equal(x, y, err_msg=f.name)
        elif isinstance(x, Coefficients):
            for g in dataclasses.fields(Coefficients):
                np.testing.assert_array_equal(getattr(x, g.name), getattr(y, g.name), err_msg=g.name)
                assert getattr(x, g.name).dtype == getattr(y, g.name).dtype, g.name
        else:
            assert x == y, f.name


def assert_r1cs_equal(a: R1CS, b: R1CS) -> None:
    assert (a.n_wires, a.n_public) == (b.n_wires, b.n_public)
    for x, y in ((a.a, b.a), (a.b, b.b), (a.c, b.c)):
        for f in ("indptr", "indices", "values"):
            np.testing.assert_array_equal(getattr(x, f), getattr(y, f), err_msg=f)


@pytest.fixture(scope="module")
def key() -> ProvingKey:
    return random_key()


@pytest.fixture(scope="module")
def zkey_bytes(key, tmp_path_factory) -> bytes:
    path = tmp_path_factory.mktemp("zkey") / "key.zkey"
    write_zkey(path, key)
    return path.read_bytes()


def read_bytes_with(reader, data: bytes, tmp_path, **kwargs):
    path = tmp_path / "file.bin"
    path.write_bytes(data)
    return reader(path, **kwargs)


# --- zkey -----------------------------------------------------------------------------

def test_zkey_round_trip(key, zkey_bytes, tmp_path):
    back = read_bytes_with(read_zkey, zkey_bytes, tmp_path)
    assert_keys_equal(key, back)
    write_zkey(tmp_path / "again.zkey", back)
    assert (tmp_path / "again.zkey").read_bytes() == zkey_bytes


def test_zkey_layout(key, zkey_bytes):
    head, sections = sections_of(zkey_bytes)
    assert head == b"zkey" + struct.pack("<I", 1)
    by_id = dict(sections)
    assert [s for s, _ in sections] == list(range(1, 11))
    assert by_id[1] == struct.pack("<I", 1)
    assert by_id[10] == bytes(64) + struct.pack("<I", 0)  # a fresh setup: circuit hash, no contributions
    h = by_id[2]
    assert struct.unpack_from("<I", h, 0)[0] == 48 and int.from_bytes(h[4:52], "little") == Q
    assert struct.unpack_from("<I", h, 52)[0] == 32 and int.from_bytes(h[56:88], "little") == R
    assert struct.unpack_from("<III", h, 88) == (key.n_vars, key.n_public, key.domain_size)
    # alpha1 right after: x, y as 48-byte little-endian Montgomery (x * 2^384 mod q)
    x, y = key.alpha_g1
    assert h[100:148] == (x * 2**384 % Q).to_bytes(48, "little")
    assert h[148:196] == (y * 2**384 % Q).to_bytes(48, "little")
    # B2 point 0: x.c0 | x.c1 | y.c0 | y.c1
    (x0, x1), (y0, y1) = layout.limbs_to_points(key.b_g2[:, :1], G2)[0]
    assert by_id[7][:192] == b"".join((c * 2**384 % Q).to_bytes(48, "little") for c in (x0, x1, y0, y1))
    assert by_id[5][-96:] == bytes(96)  # infinity is all zeros
    assert len(by_id[8]) == 96 * (key.n_vars - key.n_public - 1) and len(by_id[9]) == 96 * key.domain_size


def test_zkey_coefficients_are_stored_times_r_squared(key, tmp_path):
    # setup's coefficient 5 is 5 R^2 in memory, in the file and read back: no conversion
    rows = SparseMatrix(indptr=np.array([0, 0, 0, 0, 1], np.int64), indices=np.array([4], np.uint32),
                        values=codec.to_limbs([5], FR))
    coefficients = _coefficients(SparseMatrix(np.zeros(5, np.int64), np.zeros(0, np.uint32),
                                              np.zeros((8, 0), np.uint32)), rows)
    assert codec.from_limbs(coefficients.value, FR) == [5 * R_MONT**2 % R]
    write_zkey(tmp_path / "k.zkey", dataclasses.replace(key, coefficients=coefficients))
    section = dict(sections_of((tmp_path / "k.zkey").read_bytes())[1])[4]
    assert section == struct.pack("<IIII", 1, 1, 3, 4) + (5 * R_MONT**2 % R).to_bytes(32, "little")
    back = read_zkey(tmp_path / "k.zkey").coefficients
    np.testing.assert_array_equal(back.value, coefficients.value)


def test_zkey_sections_found_in_any_order(key, zkey_bytes, tmp_path):
    head, sections = sections_of(zkey_bytes)
    shuffled = sections[::-1] + [(77, b"ignored")]
    assert_keys_equal(key, read_bytes_with(read_zkey, container(head, shuffled), tmp_path))


def _drop(sid):
    def edit(data):
        head, sections = sections_of(data)
        return container(head, [(s, b) for s, b in sections if s != sid])
    return edit


def _duplicate(sid):
    def edit(data):
        head, sections = sections_of(data)
        return container(head, sections + [s for s in sections if s[0] == sid])
    return edit


ZKEY_DEFECTS = [
    ("magic", lambda d: b"zkez" + d[4:], r"magic b'zkez', expected 'zkey'"),
    ("version", lambda d: d[:4] + struct.pack("<I", 2) + d[8:], r"version 2 is not supported"),
    ("short", lambda d: d[:10], r"too short for a header"),
    ("truncated", lambda d: d[:-700], r"zkey section 9 \(H points\): expected 768 bytes, file has 148"),
    ("truncated_b2", lambda d: d[:d.index(struct.pack("<IQ", 7, 192 * 5)) + 12 + 100],
     r"zkey section 7 \(B2 points\): expected 960 bytes, file has 100"),
    ("missing_a", _drop(5), r"zkey section 5 \(A points\): missing"),
    ("duplicated_h", _duplicate(9), r"zkey section 9 \(H points\): appears 2 times"),
    ("protocol", lambda d: edit_section(d, 1, lambda b: struct.pack("<I", 2)), r"protocol 2 \(plonk\) is not groth16"),
    ("prime_q", lambda d: edit_section(d, 2, lambda b: b[:4] + (Q + 2).to_bytes(48, "little") + b[52:]),
     r"zkey section 2 \(groth16 header\): q = .* is not BLS12-381's Fq modulus"),
    ("prime_r", lambda d: edit_section(d, 2, lambda b: b[:56] + (R - 2).to_bytes(32, "little") + b[88:]),
     r"zkey section 2 \(groth16 header\): r = .* is not BLS12-381's Fr modulus"),
    ("n8r", lambda d: edit_section(d, 2, lambda b: b[:52] + struct.pack("<I", 48) + b[56:]),
     r"r has 48-byte elements"),
    ("header_size", lambda d: edit_section(d, 2, lambda b: b + b"\0"), r"zkey section 2 .*expected \d+ bytes"),
    ("domain", lambda d: edit_section(d, 2, lambda b: b[:96] + struct.pack("<I", 6) + b[100:]),
     r"domainSize 6 must be a power of two"),
    ("n_public", lambda d: edit_section(d, 2, lambda b: b[:92] + struct.pack("<I", 5) + b[96:]),
     r"nPublic 5 must be < nVars 5"),
    ("ic_size", lambda d: edit_section(d, 3, lambda b: b[:-96]), r"zkey section 3 \(IC\): expected 288 bytes"),
    ("coefficient_count", lambda d: edit_section(d, 4, lambda b: struct.pack("<I", 99) + b[4:]),
     r"zkey section 4 \(coefficients\): expected 4360 bytes"),
    ("coefficient_matrix", lambda d: edit_section(d, 4, lambda b: b[:48] + struct.pack("<I", 2) + b[52:]),
     r"coefficient 1: matrix is not 0 \(A\) or 1 \(B\)"),
    ("coefficient_signal", lambda d: edit_section(d, 4, lambda b: b[:56] + struct.pack("<I", 5) + b[60:]),
     r"coefficient 1: signal is >= nVars 5"),
    ("coefficient_value", lambda d: edit_section(d, 4, lambda b: b[:60] + R.to_bytes(32, "little") + b[92:]),
     r"coefficient 1: value is not reduced"),
    ("coordinate", lambda d: edit_section(d, 6, lambda b: b[:96] + Q.to_bytes(48, "little") + b[144:]),
     r"zkey section 6 \(B1 points\): point 1: coordinate not reduced"),
]


@pytest.mark.parametrize(("edit", "message"), [pytest.param(e, m, id=i) for i, e, m in ZKEY_DEFECTS])
def test_zkey_defects_name_the_section(zkey_bytes, tmp_path, edit, message):
    with pytest.raises(ValueError, match=message):
        read_bytes_with(read_zkey, edit(zkey_bytes), tmp_path)


@pytest.mark.parametrize(("field", "curve", "index", "bad", "reason"), [
    ("b_g1", G1, 3, "off_curve", "not on curve"),
    ("b_g2", G2, 2, "off_subgroup", "not in the prime-order subgroup"),
    ("h_g1", G1, 7, "off_subgroup", "not in the prime-order subgroup"),
])
def test_zkey_bad_point_named_unless_trusted(key, tmp_path, field, curve, index, bad, reason):
    rng = random.Random(index)
    ref = points.reference(curve)
    point = ref.point_off_curve(rng) if bad == "off_curve" else ref.point_off_subgroup(rng)
    arr = getattr(key, field).copy()
    arr[:, index:index + 1] = layout.points_to_limbs([point], curve)
    write_zkey(tmp_path / "k.zkey", dataclasses.replace(key, **{field: arr}))
    sid = {"b_g1": 6, "b_g2": 7, "h_g1": 9}[field]
    untrusted = read_zkey(tmp_path / "k.zkey")  # the queries are checked by the Prover, on its copy
    with pytest.raises(ValueError, match=rf"k.zkey: zkey section {sid} \(\w+ points\): point {index}: {reason}"):
        Prover(untrusted, gpu=False)
    trusted = read_zkey(tmp_path / "k.zkey", trusted=True)
    assert trusted.unchecked == {}
    np.testing.assert_array_equal(getattr(trusted, field), arr)


@pytest.mark.parametrize(("field", "bad", "reason"), [
    ("delta_g2", "off_curve", "not on curve"),
    ("delta_g1", "off_subgroup", "not in the prime-order subgroup"),
    ("beta_g2", "off_subgroup", "not in the prime-order subgroup"),
])
def test_zkey_bad_header_point(key, tmp_path, field, bad, reason):
    ref = g2 if field.endswith("g2") else g1
    point = ref.point_off_curve(random.Random(3)) if bad == "off_curve" else ref.point_off_subgroup(random.Random(3))
    write_zkey(tmp_path / "k.zkey", dataclasses.replace(key, **{field: point}))
    with pytest.raises(ValueError, match=rf"zkey section 2 \(groth16 header\): {field}: {reason}"):
        read_zkey(tmp_path / "k.zkey")


@pytest.mark.parametrize("curve", [G1, G2], ids=["g1", "g2"])
@settings(max_examples=10, deadline=None)
@given(k=st.integers(0, 2**64), seed=st.integers(0, 2**32))
def test_point_problem_matches_the_reference(curve, k, seed):
    """points.problem (arkworks' subgroup test) against the reference's Scott test, on
    multiples of the generator (identity at k = 0), off-subgroup and off-curve points."""
    ref = points.reference(curve)
    rng = random.Random(seed)
    for point in (ref.mul(ref.generator, k), None, ref.point_off_subgroup(rng), ref.point_off_curve(rng)):
        expected = (None if ref.in_subgroup_fast(point) else "not in the prime-order subgroup") \
            if ref.is_on_curve(point) else "not on curve"
        assert points.problem(point, curve) == expected


@pytest.mark.parametrize("device", [
    pytest.param(False, id="cpu"),
    pytest.param(True, id="gpu", marks=[pytest.mark.gpu, pytest.mark.skipif(
        SIMULATOR, reason="the subgroup check takes ~40 s a point in the simulator")]),
])
def test_zkey_bulk_point_check(key, tmp_path, monkeypatch, device):
    """Large sections are checked by curve/kernels.decode (forced here for a small key)."""
    monkeypatch.setattr(points, "BULK_CHECK_MIN", 1)
    place = cuda.to_device if device else np.copy
    a = place(key.a_g1)
    points.check(a, G1, "A")  # valid points pass, infinity included, and stay as they were
    np.testing.assert_array_equal(a.copy_to_host() if device else a, key.a_g1)
    arr = key.h_g1.copy()
    arr[:, 5:6] = layout.points_to_limbs([g1.point_off_subgroup(random.Random(5))], G1)
    with pytest.raises(ValueError, match=r"H: point 5: not in the prime-order subgroup"):
        points.check(place(arr), G1, "H")
    if device:  # the whole key, G2 included, checked on the Prover's device copy
        write_zkey(tmp_path / "k.zkey", dataclasses.replace(key, h_g1=arr))
        with pytest.raises(ValueError, match=r"zkey section 9 \(H points\): point 5: not in the prime-order"):
            Prover(read_zkey(tmp_path / "k.zkey"), gpu=True)
        write_zkey(tmp_path / "good.zkey", key)
        good = read_zkey(tmp_path / "good.zkey")
        Prover(good, gpu=True)
        assert_keys_equal(key, good)


# --- r1cs -----------------------------------------------------------------------------

@pytest.fixture(scope="module")
def r1cs_bytes(tmp_path_factory) -> bytes:
    path = tmp_path_factory.mktemp("r1cs") / "c.r1cs"
    write_r1cs(path, random_r1cs())
    return path.read_bytes()


def test_r1cs_round_trip(tmp_path, r1cs_bytes):
    r1cs = random_r1cs()
    back = read_bytes_with(read_r1cs, r1cs_bytes, tmp_path)
    assert_r1cs_equal(r1cs, back)
    assert back.a.indptr.dtype == np.int64 and back.a.indices.dtype == np.uint32 and back.a.values.flags.c_contiguous


def test_r1cs_layout(r1cs_bytes):
    """Constraint 0's A combination (one term), by hand: u32 count, u32 wire, 32-byte coef."""
    r1cs = random_r1cs()
    head, sections = sections_of(r1cs_bytes)
    assert head == b"r1cs" + struct.pack("<I", 1) and [s for s, _ in sections] == [1, 2, 3]
    header, constraints, labels = (b for _, b in sections)
    assert struct.unpack_from("<I", header)[0] == 32 and int.from_bytes(header[4:36], "little") == R
    assert struct.unpack_from("<IIIIQI", header, 36) == (6, 0, 2, 0, 6, 7)
    wire, coefficient = int(r1cs.a.indices[0]), codec.from_limbs(r1cs.a.values[:, :1], FR)[0]
    assert constraints.startswith(struct.pack("<II", 1, wire) + coefficient.to_bytes(32, "little"))
    assert labels == np.arange(6, dtype="<u8").tobytes()


def test_r1cs_large_round_trip(tmp_path):
    """Enough terms that a per-term Python loop would show; 20k constraints."""
    r1cs = random_r1cs(seed=3, n_constraints=20_000, n_wires=5000, n_public=10)
    write_r1cs(tmp_path / "big.r1cs", r1cs)
    assert_r1cs_equal(r1cs, read_r1cs(tmp_path / "big.r1cs"))


def test_r1cs_sections_in_circom_order(tmp_path, r1cs_bytes):
    head, sections = sections_of(r1cs_bytes)
    order = {2: 0, 1: 1, 3: 2}  # circom writes the constraints before the header
    moved = container(head, sorted(sections, key=lambda s: order[s[0]]))
    assert_r1cs_equal(random_r1cs(), read_bytes_with(read_r1cs, moved, tmp_path))


def _first_term_edit(offset: int, value: bytes):
    """Overwrite bytes at ``offset`` within constraint 0's first A term (the test circuit
    has one)."""
    return lambda d: edit_section(d, 2, lambda b: b[:4 + offset] + value + b[4 + offset + len(value):])


R1CS_DEFECTS = [
    ("magic", lambda d: b"r1cz" + d[4:], r"magic b'r1cz', expected 'r1cs'"),
    ("prime", lambda d: edit_section(d, 1, lambda b: b[:4] + (R + 2).to_bytes(32, "little") + b[36:]),
     r"r1cs section 1 \(header\): prime = .* is not BLS12-381's Fr modulus"),
    ("public", lambda d: edit_section(d, 1, lambda b: b[:40] + struct.pack("<I", 6) + b[44:]),
     r"r1cs section 1 \(header\): 8 public wires, but only 6 wires"),
    ("count", lambda d: edit_section(d, 1, lambda b: b[:60] + struct.pack("<I", 10**6)),
     r"r1cs section 2 \(constraints\): \d+ bytes cannot hold 1000000 constraints"),
    ("few", lambda d: edit_section(d, 1, lambda b: b[:60] + struct.pack("<I", 6)),
     r"r1cs section 2 \(constraints\): \d+ bytes after the last constraint"),
    ("runs_past", lambda d: edit_section(d, 2, lambda b: b[:-8]),
     r"r1cs section 2 \(constraints\): constraint 6 \(C\) runs past the end"),
    ("wire", _first_term_edit(0, struct.pack("<I", 6)),
     r"r1cs section 2 \(constraints\): matrix A: constraint 0 uses wire 6"),
    ("coefficient", _first_term_edit(4, R.to_bytes(32, "little")),
     r"r1cs section 2 \(constraints\): constraint 0 \(A\): coefficient of wire \d+ is not reduced"),
    ("labels", lambda d: edit_section(d, 3, lambda b: b[:-8]), r"r1cs section 3 \(wire2label\): expected 48 bytes"),
    ("missing", _drop(2), r"r1cs section 2 \(constraints\): missing"),
    ("custom_gates", lambda d: d[:8] + struct.pack("<I", 4) + d[12:] + struct.pack("<IQ", 4, 4) + bytes(4),
     r"r1cs section 4 \(custom gates list\): custom gates are PLONK-only"),
]


@pytest.mark.parametrize(("edit", "message"), [pytest.param(e, m, id=i) for i, e, m in R1CS_DEFECTS])
def test_r1cs_defects_name_the_section(r1cs_bytes, tmp_path, edit, message):
    with pytest.raises(ValueError, match=message):
        read_bytes_with(read_r1cs, edit(r1cs_bytes), tmp_path)


# --- wtns -----------------------------------------------------------------------------

WITNESS = [1, 0, R - 1, 12345, 2**200]


def test_wtns_round_trip_and_layout(tmp_path):
    write_wtns(tmp_path / "w.wtns", codec.to_limbs(WITNESS, FR))
    data = (tmp_path / "w.wtns").read_bytes()
    head, sections = sections_of(data)
    assert head == b"wtns" + struct.pack("<I", 2)
    assert sections == [(1, struct.pack("<I", 32) + R.to_bytes(32, "little") + struct.pack("<I", 5)),
                        (2, b"".join(v.to_bytes(32, "little") for v in WITNESS))]
    back = read_wtns(tmp_path / "w.wtns")
    assert back.shape == (8, 5) and back.flags.c_contiguous and codec.from_limbs(back, FR) == WITNESS
    from_bytes = read_wtns(data)  # a daemon's request: parsed in memory, into an array of its own
    assert np.array_equal(from_bytes, back) and from_bytes.flags.owndata and from_bytes.flags.writeable


@pytest.mark.parametrize(("edit", "message"), [
    (lambda d: d[:-1], r"wtns section 2 \(witness\): expected 160 bytes, file has 159"),
    (lambda d: edit_section(d, 1, lambda b: b[:36] + struct.pack("<I", 6)), r"wtns section 2 .*expected 192 bytes"),
    (lambda d: edit_section(d, 1, lambda b: b[:4] + (R + 2).to_bytes(32, "little") + b[36:]),
     r"wtns section 1 \(header\): prime"),
    (lambda d: edit_section(d, 2, lambda b: b[:32] + R.to_bytes(32, "little") + b[64:]),
     r"wtns section 2 \(witness\): value 1 is not reduced"),
    (lambda d: d[:4] + struct.pack("<I", 3) + d[8:], r"version 3 is not supported"),
], ids=["truncated", "count", "prime", "value", "version"])
def test_wtns_defects(tmp_path, edit, message):
    write_wtns(tmp_path / "w.wtns", codec.to_limbs(WITNESS, FR))
    broken = edit((tmp_path / "w.wtns").read_bytes())
    with pytest.raises(ValueError, match=message):
        read_bytes_with(read_wtns, broken, tmp_path)
    with pytest.raises(ValueError, match=message):  # the same refusal from the bytes themselves
        read_wtns(broken)


def test_wtns_write_refuses_noncanonical(tmp_path):
    with pytest.raises(ValueError, match="witness: value 0 is not reduced"):
        write_wtns(tmp_path / "w.wtns", np.array(FR.modulus_limbs, dtype=np.uint32).reshape(FR.limbs, 1))


# --- JSON -----------------------------------------------------------------------------

def test_json_round_trips(key, tmp_path):
    proof = Proof(a=key.alpha_g1, b=key.beta_g2, c=None)
    write_proof_json(tmp_path / "proof.json", proof)
    obj = json.loads((tmp_path / "proof.json").read_text())
    assert obj["pi_a"] == [str(key.alpha_g1[0]), str(key.alpha_g1[1]), "1"]
    assert obj["pi_b"] == [[str(c) for c in key.beta_g2[0]], [str(c) for c in key.beta_g2[1]], ["1", "0"]]
    assert obj["pi_c"] == ["0", "1", "0"] and (obj["protocol"], obj["curve"]) == ("groth16", "bls12381")
    assert read_proof_json(tmp_path / "proof.json") == proof

    write_public_json(tmp_path / "public.json", [0, 33, R - 1])
    assert json.loads((tmp_path / "public.json").read_text()) == ["0", "33", str(R - 1)]
    assert read_public_json(tmp_path / "public.json") == [0, 33, R - 1]

    vk = dataclasses.replace(key.verifying_key, gamma_g2=None)
    write_vk_json(tmp_path / "vk.json", vk)
    obj = json.loads((tmp_path / "vk.json").read_text())
    assert list(obj) == ["protocol", "curve", "nPublic", "vk_alpha_1", "vk_beta_2", "vk_gamma_2", "vk_delta_2", "IC"]
    assert obj["vk_gamma_2"] == [["0", "0"], ["1", "0"], ["0", "0"]]
    assert read_vk_json(tmp_path / "vk.json") == vk


def test_json_readers_accept_snarkjs_variants(key, tmp_path):
    """Hex strings and integers (ffjavascript's unstringifyBigInts), points without z,
    unknown keys such as vk_alphabeta_12."""
    (x, y), ((b0, b1), (b2, b3)) = key.alpha_g1, key.beta_g2
    proof = {"pi_a": [hex(x), y], "pi_b": [[str(b0), str(b1)], [str(b2), str(b3)]], "pi_c": ["5", "7", "0"]}
    (tmp_path / "p.json").write_text(json.dumps(proof))
    assert read_proof_json(tmp_path / "p.json") == Proof(a=key.alpha_g1, b=key.beta_g2, c=None)
    write_vk_json(tmp_path / "vk.json", key.verifying_key)
    obj = json.loads((tmp_path / "vk.json").read_text())
    obj["vk_alphabeta_12"], obj["curve"] = [[["1", "0"]] * 3] * 2, "BLS12-381"
    (tmp_path / "vk.json").write_text(json.dumps(obj))
    assert read_vk_json(tmp_path / "vk.json") == key.verifying_key


def _proof_with(key, **changes) -> dict:
    obj = {"pi_a": [str(c) for c in key.alpha_g1] + ["1"],
           "pi_b": [[str(c) for c in key.beta_g2[0]], [str(c) for c in key.beta_g2[1]], ["1", "0"]],
           "pi_c": [str(c) for c in key.delta_g1] + ["1"], "protocol": "groth16", "curve": "bls12381"}
    obj.update(changes)
    return obj


@pytest.mark.parametrize(("change", "message"), [
    (lambda k: {"pi_b": [[str(c) for c in k.beta_g2[0]], ["1", "2"], ["1", "0"]]}, r"pi_b: not on curve"),
    (lambda k: {"pi_a": [str(c) for c in g1.point_off_subgroup(random.Random(1))]}, r"pi_a: not in the prime-order"),
    (lambda k: {"pi_c": [str(Q), "2", "1"]}, r"pi_c: x: \d+ is not in \[0, q\)"),
    (lambda k: {"pi_b": [["1", "2"], ["3"], ["1", "0"]]}, r"pi_b: y: expected \[c0, c1\]"),
    (lambda k: {"pi_a": ["1", "2", "3"]}, r"pi_a: z must be 1 \(affine\) or 0"),
    (lambda k: {"pi_a": ["1", "-2", "1"]}, r"pi_a: y: expected a decimal string"),
    (lambda k: {"pi_a": "12"}, r"pi_a: expected \[x, y, z\]"),
    (lambda k: {"protocol": "plonk"}, r"protocol 'plonk' is not 'groth16'"),
    (lambda k: {"curve": "bn128"}, r"curve 'bn128' is not 'bls12381'"),
], ids=["not_on_curve", "subgroup", "noncanonical", "fq2_shape", "z", "sign", "shape", "protocol", "curve"])
def test_proof_json_errors_name_the_field(key, tmp_path, change, message):
    (tmp_path / "p.json").write_text(json.dumps(_proof_with(key, **change(key))))
    with pytest.raises(ValueError, match=message):
        read_proof_json(tmp_path / "p.json")


def test_proof_json_missing_field(key, tmp_path):
    obj = _proof_with(key)
    del obj["pi_c"]
    (tmp_path / "p.json").write_text(json.dumps(obj))
    with pytest.raises(ValueError, match="pi_c: missing"):
        read_proof_json(tmp_path / "p.json")


@pytest.mark.parametrize(("text", "message"), [
    (json.dumps(["1", str(R)]), r"public input 1: \d+ is not in \[0, r\)"),
    (json.dumps(["1", "1.5"]), r"public input 1: expected a decimal string"),
    (json.dumps(["1", True]), r"public input 1: expected a decimal string"),
    (json.dumps({"a": 1}), r"public.json: expected a list"),
    ("[1, ", r"Expecting value|Expecting"),
    ("[" * 100_000, r"nested too deeply|Expecting"),
])
def test_public_json_errors(tmp_path, text, message):
    (tmp_path / "public.json").write_text(text)
    with pytest.raises(ValueError, match=message):
        read_public_json(tmp_path / "public.json")


def test_public_json_write_refuses_out_of_range(tmp_path):
    with pytest.raises(ValueError, match=r"public input 1: .* not an integer in \[0, r\)"):
        write_public_json(tmp_path / "public.json", [1, R])


def test_vk_json_errors(key, tmp_path):
    write_vk_json(tmp_path / "vk.json", key.verifying_key)
    obj = json.loads((tmp_path / "vk.json").read_text())
    for change, message in (({"nPublic": 5}, r"nPublic: 5, but IC has 3 points"),
                            ({"IC": obj["IC"][:2] + [["1", "1", "1"]], "nPublic": 2}, r"IC\[2\]: not on curve"),
                            ({"vk_delta_2": obj["vk_delta_2"][:1]}, r"vk_delta_2: expected \[x, y, z\]"),
                            ({"curve": "bn128"}, r"curve 'bn128'")):
        (tmp_path / "bad.json").write_text(json.dumps({**obj, **change}))
        with pytest.raises(ValueError, match=message):
            read_vk_json(tmp_path / "bad.json")
    del obj["curve"]
    (tmp_path / "bad.json").write_text(json.dumps(obj))
    with pytest.raises(ValueError, match="curve: missing"):
        read_vk_json(tmp_path / "bad.json")


# --- snarkjs itself -------------------------------------------------------------------

SNARKJS = os.environ.get("SNARKJS") or shutil.which("snarkjs")


@pytest.mark.slow
@pytest.mark.interop
def test_snarkjs_interoperates(tmp_path):
    """Our r1cs and wtns pass snarkjs's witness check; a snarkjs setup's zkey reads as
    snarkjs itself exports it; a snarkjs proof and vk read back; the zkey and vk we
    write give proofs snarkjs accepts. Without snarkjs: skipped, or failed under CI=true."""
    if not SNARKJS:
        outside_judge_missing("no snarkjs CLI for test_formats.py (set $SNARKJS or put snarkjs on PATH)")

    def snarkjs(*args):
        subprocess.run([SNARKJS, *map(str, args)], cwd=tmp_path, check=True, capture_output=True, timeout=120)

    def matrix(rows):  # [[(wire, coef), ...] per constraint]
        terms = [t for row in rows for t in row]
        return SparseMatrix(np.array([0] + list(np.cumsum([len(r) for r in rows])), dtype=np.int64),
                            np.array([w for w, _ in terms], dtype=np.uint32), codec.to_limbs([c for _, c in terms], FR))

    # wires 1 = out (public), 2 = x, 3 = y: x * x = y, (y + 2) * x = out; x = 3
    write_r1cs(tmp_path / "c.r1cs", R1CS(4, 1, matrix([[(2, 1)], [(3, 1), (0, 2)]]), matrix([[(2, 1)], [(2, 1)]]),
                                         matrix([[(3, 1)], [(1, 1)]])))
    write_wtns(tmp_path / "w.wtns", codec.to_limbs([1, 33, 3, 9], FR))
    snarkjs("wtns", "check", "c.r1cs", "w.wtns")
    snarkjs("powersoftau", "new", "bls12381", "4", "p0.ptau")
    snarkjs("powersoftau", "contribute", "p0.ptau", "p1.ptau", "-e=test")
    snarkjs("powersoftau", "prepare", "phase2", "p1.ptau", "p.ptau")
    snarkjs("groth16", "setup", "c.r1cs", "p.ptau", "c.zkey")
    snarkjs("zkey", "export", "json", "c.zkey", "c.json")
    snarkjs("zkey", "export", "verificationkey", "c.zkey", "vk.json")
    snarkjs("groth16", "prove", "c.zkey", "w.wtns", "proof.json", "public.json")

    pk = read_zkey(tmp_path / "c.zkey")
    ref = json.loads((tmp_path / "c.json").read_text())

    def p1(p):  # snarkjs's exported G1 / G2 objects -> reference points
        return None if p[2] == "0" else (int(p[0]), int(p[1]))

    def p2(p):
        return None if p[2] == ["0", "0"] else tuple(tuple(int(c) for c in xy) for xy in p[:2])

    assert (pk.n_vars, pk.n_public, pk.domain_size) == (ref["nVars"], ref["nPublic"], ref["domainSize"])
    assert (pk.alpha_g1, pk.beta_g2, pk.delta_g1) == (p1(ref["vk_alpha_1"]), p2(ref["vk_beta_2"]),
                                                      p1(ref["vk_delta_1"]))
    assert pk.ic == [p1(p) for p in ref["IC"]]
    assert layout.limbs_to_points(pk.b_g2, G2) == [p2(p) for p in ref["B2"]]
    assert layout.limbs_to_points(pk.c_g1, G1) == [p1(p) for p in ref["C"] if p is not None]
    assert layout.limbs_to_points(pk.h_g1, G1) == [p1(p) for p in ref["hExps"]]
    canonical = [v * pow(R_MONT, -2, R) % R for v in codec.from_limbs(pk.coefficients.value, FR)]
    assert [(int(m), int(c), int(s), v) for m, c, s, v in zip(
        pk.coefficients.matrix, pk.coefficients.constraint, pk.coefficients.signal, canonical)] == [
        (e["matrix"], e["constraint"], e["signal"], int(e["value"])) for e in ref["ccoefs"]]
    assert read_vk_json(tmp_path / "vk.json") == pk.verifying_key
    assert read_public_json(tmp_path / "public.json") == [33]
    read_proof_json(tmp_path / "proof.json")

    write_zkey(tmp_path / "ours.zkey", pk)
    write_vk_json(tmp_path / "ours_vk.json", pk.verifying_key)
    snarkjs("groth16", "prove", "ours.zkey", "w.wtns", "p2.json", "pub2.json")
    write_proof_json(tmp_path / "p3.json", read_proof_json(tmp_path / "p2.json"))
    write_public_json(tmp_path / "pub3.json", read_public_json(tmp_path / "pub2.json"))
    snarkjs("groth16", "verify", "ours_vk.json", "pub3.json", "p3.json")
