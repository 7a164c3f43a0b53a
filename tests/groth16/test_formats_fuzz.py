"""Fuzzed readers: byte flips and truncations of a real key's zkey, r1cs, wtns and proof.json
(test_prove's cube circuit), each judged by what the format promises.

Each file is cut into fields by a parse of its own (section_spans). A field is CHECKED
where the reader promises to detect any change: point coordinates (reduced, on the curve,
in the subgroup; a zkey's five queries are checked by the Prover that takes the key, so
the zkey's reader here is read_zkey then Prover), header fields (magic, version, primes,
counts that fix a section's size) and the containers' section headers; a file with a
flip or a cut there must raise ValueError naming the file kind. The other fields are read
unchecked by design, each for the reason its Field says: the reader may accept such a
file, and then its result must be the original, or the prover and verifier judge it: a
proof that verifies, or a refusal (ValueError). Half the examples flip only unchecked
fields, so that the judge runs.
"""

from __future__ import annotations

import json
import random
import re
import struct
from dataclasses import dataclass, fields, replace

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from numba_cuzk.field import codec
from numba_cuzk.field.params import FR
from numba_cuzk.groth16 import pairing
from numba_cuzk.groth16.formats import (read_proof_json, read_r1cs, read_wtns, read_zkey, write_proof_json,
                                        write_r1cs, write_wtns, write_zkey)
from numba_cuzk.groth16.keys import Coefficients, ProvingKey
from numba_cuzk.groth16.prove import Prover
from numba_cuzk.groth16.setup import setup
from tests.groth16.test_formats import assert_keys_equal, assert_r1cs_equal, read_bytes_with
from tests.groth16.test_prove import TOXIC, cube_circuit

FUZZ = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
CHECKED, UNCHECKED = True, False
G1_BYTES, G2_BYTES = 96, 192  # a stored affine point
JSON_ALPHABET = b'0123456789",:[]{} x'  # mostly digits: a flipped coordinate digit still reads as a number


@dataclass(frozen=True)
class Field:
    """Bytes [start, end) of a file; ``checked``: a change there must raise; ``why``: what
    the field is, and for an unchecked one why the reader cannot tell."""

    why: str
    start: int
    end: int
    checked: bool
    lifted_by: tuple[str, ...] = ()  # the fields (why's start) whose change lifts the check


@dataclass(frozen=True)
class Cube:
    """The cube circuit's R1CS, witness, key (fixed toxic waste), a proof, and their files."""

    r1cs: object
    witness: np.ndarray
    pk: ProvingKey
    files: dict  # "zkey", "r1cs", "wtns", "proof.json" -> bytes

    @property
    def public(self) -> list[int]:
        return codec.from_limbs(np.ascontiguousarray(self.witness[:, 1:self.pk.n_public + 1]), FR)


@pytest.fixture(scope="module")
def cube(tmp_path_factory) -> Cube:
    r1cs, witness = cube_circuit()
    pk = setup(r1cs, gpu=False, toxic=TOXIC)
    folder = tmp_path_factory.mktemp("cube")
    write_zkey(folder / "zkey", pk)
    write_r1cs(folder / "r1cs", r1cs)
    write_wtns(folder / "wtns", witness)
    write_proof_json(folder / "proof.json", Prover(pk, gpu=False).prove(witness))
    return Cube(r1cs, witness, pk, {name: (folder / name).read_bytes() for name in ("zkey", "r1cs", "wtns",
                                                                                   "proof.json")})


# --- the fields of each file ----------------------------------------------------------

def section_spans(data: bytes) -> list[tuple[int, int, int, int]]:
    """(id, header offset, data offset, data end) of each section of a container."""
    spans, pos = [], 12
    for _ in range(struct.unpack_from("<I", data, 8)[0]):
        sid, size = struct.unpack_from("<IQ", data, pos)
        spans.append((sid, pos, pos + 12, pos + 12 + size))
        pos += 12 + size
    return spans


def container_fields(data: bytes, count_checked: bool, headers_checked: dict[int, tuple[bool, bool]]) -> list:
    """The file header and each section's (id, size) header; ``headers_checked``: sid ->
    (id checked, size checked), CHECKED by default."""
    fields = [Field("magic, version", 0, 8, CHECKED), Field("section count", 8, 12, count_checked)]
    for sid, head, _, _ in section_spans(data):
        id_checked, size_checked = headers_checked.get(sid, (CHECKED, CHECKED))
        fields += [Field(f"section {sid} id", head, head + 4, id_checked),
                   Field(f"section {sid} size", head + 4, head + 12, size_checked)]
    return fields


def split(start: int, parts: list[tuple]) -> list[Field]:
    """Consecutive fields from ``start``: (why, length, checked[, lifted_by]) each."""
    fields = []
    for why, length, *rest in parts:
        fields.append(Field(why, start, start + length, *rest))
        start += length
    return fields


def zkey_fields(data: bytes) -> list[Field]:
    fields = container_fields(data, UNCHECKED, {10: (UNCHECKED, UNCHECKED)})
    fields[1] = Field("section count: 10 -> 9 drops the contributions, which the reader skips", 8, 12, UNCHECKED)
    points = {3: "IC", 5: "A", 6: "B1", 7: "B2", 8: "C", 9: "H"}
    for sid, _, start, end in section_spans(data):
        if sid == 1:
            fields.append(Field("protocol", start, end, CHECKED))
        elif sid == 2:
            fields += split(start, [("n8q", 4, CHECKED), ("q", 48, CHECKED), ("n8r", 4, CHECKED), ("r", 32, CHECKED),
                                    ("nVars, nPublic, domainSize", 12, CHECKED)]
                            + [(f"header point {name}", size, CHECKED) for name, size in
                               (("alpha1", G1_BYTES), ("beta1", G1_BYTES), ("beta2", G2_BYTES), ("gamma2", G2_BYTES),
                                ("delta1", G1_BYTES), ("delta2", G2_BYTES))])
        elif sid == 4:
            fields += [Field("coefficient count", start, start + 4, CHECKED),
                       Field("coefficients: any matrix 0/1, constraint < domainSize, signal < nVars and value < r "
                             "is a circuit", start + 4, end, UNCHECKED)]
        elif sid in points:
            fields.append(Field(f"{points[sid]} points", start, end, CHECKED))
        else:
            fields.append(Field("contributions: MPC history, which the reader skips", start, end, UNCHECKED))
    return fields


# nWires is checked against the labels' size: a file without them (section 3's id or the
# section count changed) may claim more wires than its constraints use
LABELS = ("section count", "section 3 id")


def r1cs_fields(data: bytes) -> list[Field]:
    fields = container_fields(data, UNCHECKED, {3: (UNCHECKED, CHECKED)})
    fields[1] = Field("section count: 3 -> 2 drops the labels, which are optional", 8, 12, UNCHECKED)
    for sid, _, start, end in section_spans(data):
        if sid == 1:
            fields += split(start, [("n8", 4, CHECKED), ("prime", 32, CHECKED), ("nWires", 4, CHECKED, LABELS),
                                    ("nPubOut, nPubIn: any split below nWires is a circuit", 8, UNCHECKED),
                                    ("nPrvIn, nLabels: not used", 12, UNCHECKED), ("mConstraints", 4, CHECKED)])
        elif sid == 2:
            fields.append(Field("constraints: any reduced coefficient on a wire below nWires is a circuit", start, end,
                                UNCHECKED))
        else:
            fields.append(Field("wire labels: not used", start, end, UNCHECKED))
    return fields


def wtns_fields(data: bytes) -> list[Field]:
    fields = container_fields(data, CHECKED, {})
    (_, _, header, _), (_, _, values, end) = section_spans(data)
    return fields + split(header, [("n8", 4, CHECKED), ("prime", 32, CHECKED), ("nWitness", 4, CHECKED)]) + [
        Field("witness values: any value < r is a witness", values, end, UNCHECKED)]


def proof_json_fields(data: bytes, proof) -> list[Field]:
    """Each coordinate's decimal digits are checked; the JSON around them is not: keys,
    tags and z decide whether a point is read at all (z = 0 is infinity)."""
    coordinates = [proof.a[0], proof.a[1], *proof.b[0], *proof.b[1], proof.c[0], proof.c[1]]
    spans = sorted((data.index(f'"{v}"'.encode()) + 1, len(str(v))) for v in coordinates)
    fields, pos = [], 0
    for start, length in spans:
        fields += [Field("JSON around the coordinates", pos, start, UNCHECKED),
                   Field("a coordinate's digits", start, start + length, CHECKED)]
        pos = start + length
    return fields + [Field("JSON around the coordinates", pos, len(data), UNCHECKED)]


# --- the fuzzer and the judges ----------------------------------------------------------

def fuzz(read, original: bytes, fields: list[Field], judge, tmp_path, data, kind: str | None,
         alphabet: bytes = b"") -> None:
    """Flip 1-3 bytes (or, half the time, only bytes of unchecked fields, never cutting),
    maybe cut the file, and read it: a changed checked field must raise ValueError
    (naming the ``kind`` file or section, when given); an accepted file goes to ``judge``.
    With an ``alphabet``, a flipped byte becomes another of its bytes (text formats)."""
    unchecked_only = data.draw(st.booleans(), label="unchecked only")
    targets = [f for f in fields if not (unchecked_only and f.checked)]
    rnd = data.draw(st.randoms(use_true_random=False), label="positions")  # uniform: hypothesis's
    blob = bytearray(original)                                             # integers favour a field's first bytes
    for _ in range(data.draw(st.integers(1, 3), label="flips")):
        field = rnd.choice(targets)
        flip(blob, rnd.randrange(field.start, field.end), rnd, alphabet)
    if not unchecked_only and data.draw(st.booleans(), label="cut"):
        blob = blob[:rnd.randrange(len(blob))]
    changed = np.flatnonzero(np.frombuffer(bytes(blob), np.uint8) != np.frombuffer(original[:len(blob)], np.uint8))
    changed = np.concatenate([changed, np.arange(len(blob), len(original))])  # a cut changes the rest
    touched = [f for f in fields if ((changed >= f.start) & (changed < f.end)).any()]
    hit = [f.why for f in touched if f.checked and not any(t.why.startswith(f.lifted_by) for t in touched)]
    try:
        got = read_bytes_with(read, bytes(blob), tmp_path)
    except ValueError as e:
        assert_names(e, kind)
        return
    assert not hit, f"changed {hit}, which the reader checks, but it read the file"
    judge(got)


def flip(blob: bytearray, pos: int, rnd, alphabet: bytes) -> None:
    """Change byte ``pos``: to another byte of ``alphabet`` (text formats), or by a random xor."""
    others = [c for c in alphabet if c != blob[pos]]
    blob[pos] = rnd.choice(others) if alphabet else blob[pos] ^ rnd.randrange(1, 256)


def assert_names(error: ValueError, kind: str | None) -> None:
    named = kind is None or re.search(rf"\b{kind} (file|section)\b", str(error))
    assert named, f"the error names no {kind} file: {error}"


FLIPS_PER_FIELD = 3


@pytest.mark.parametrize("name", ["zkey", "r1cs", "wtns", "proof.json"])
def test_every_checked_field_detects_a_flip(cube, tmp_path, name):
    """Each checked field of each file, one flip at a time (seeded): the fuzz tests' flips
    land on a given field only now and then, so this covers every field in every run."""
    read, fields, kind, alphabet = {
        "zkey": (read_zkey_for_prover, zkey_fields, "zkey", b""), "r1cs": (read_r1cs, r1cs_fields, "r1cs", b""),
        "wtns": (read_wtns, wtns_fields, "wtns", b""),
        "proof.json": (read_proof_json, lambda d: proof_json_fields(d, read_bytes_with(read_proof_json, d, tmp_path)),
                       None, JSON_ALPHABET)}[name]
    original, rnd = cube.files[name], random.Random(name)
    for field in (f for f in fields(original) if f.checked):
        for _ in range(FLIPS_PER_FIELD):
            blob = bytearray(original)
            pos = rnd.randrange(field.start, field.end)
            flip(blob, pos, rnd, alphabet)
            try:
                read_bytes_with(read, bytes(blob), tmp_path)
            except ValueError as e:
                assert_names(e, kind)
                continue
            pytest.fail(f"{name}: byte {pos} ({field.why}) changed from {original[pos]:#04x} to {blob[pos]:#04x}, "
                        "and the file was read")


def proves_or_refuses(pk: ProvingKey, witness: np.ndarray) -> None:
    """The prover's verdict on a key or witness that no reader can judge: ValueError, or a
    proof that verifies."""
    prover = Prover(pk, gpu=False)
    try:
        proof = prover.prove(witness)
    except ValueError:
        return
    assert pairing.verify(pk.verifying_key, prover.public_inputs(witness), proof), "a proof that does not verify"


def read_zkey_for_prover(path) -> ProvingKey:
    """read_zkey, then the Prover, which checks the five queries' points on its own copy."""
    pk = read_zkey(path)
    Prover(pk, gpu=False)
    return pk


@FUZZ
@given(data=st.data())
def test_zkey_fuzz(cube, tmp_path, data):
    def judge(pk: ProvingKey) -> None:
        ours, theirs = cube.pk.coefficients, pk.coefficients
        if any(not np.array_equal(getattr(ours, f.name), getattr(theirs, f.name)) for f in fields(Coefficients)):
            proves_or_refuses(pk, cube.witness)
        assert_keys_equal(cube.pk, replace(pk, coefficients=ours))  # the rest is checked, or skipped

    fuzz(read_zkey_for_prover, cube.files["zkey"], zkey_fields(cube.files["zkey"]), judge, tmp_path, data, "zkey")


@FUZZ
@given(data=st.data())
def test_r1cs_fuzz(cube, tmp_path, data):
    def judge(r1cs) -> None:
        try:
            assert_r1cs_equal(cube.r1cs, r1cs)
            return
        except AssertionError:
            pass
        proves_or_refuses(setup(r1cs, gpu=False), cube.witness)  # another circuit: the witness may not fit it

    fuzz(read_r1cs, cube.files["r1cs"], r1cs_fields(cube.files["r1cs"]), judge, tmp_path, data, "r1cs")


@FUZZ
@given(data=st.data())
def test_wtns_fuzz(cube, tmp_path, data):
    def judge(witness: np.ndarray) -> None:
        if not np.array_equal(witness, cube.witness):
            proves_or_refuses(cube.pk, witness)

    fuzz(read_wtns, cube.files["wtns"], wtns_fields(cube.files["wtns"]), judge, tmp_path, data, "wtns")


@FUZZ
@given(data=st.data())
def test_proof_json_fuzz(cube, tmp_path, data):
    original = read_bytes_with(read_proof_json, cube.files["proof.json"], tmp_path)

    def judge(proof) -> None:
        if proof != original:
            assert not pairing.verify(cube.pk.verifying_key, cube.public, proof), "a changed proof verifies"

    fuzz(read_proof_json, cube.files["proof.json"], proof_json_fields(cube.files["proof.json"], original), judge,
         tmp_path, data, None, JSON_ALPHABET)


@pytest.mark.parametrize("point", ["pi_a", "pi_b", "pi_c"])
def test_proof_json_z_zero_is_infinity_and_refused(cube, tmp_path, point):
    """The one change of proof.json's unchecked JSON that still reads as another proof:
    z = 0 makes a point infinity (snarkjs's convention), and the verifier refuses it."""
    obj = json.loads(cube.files["proof.json"])
    obj[point][2] = ["0", "0"] if point == "pi_b" else "0"
    proof = read_bytes_with(read_proof_json, json.dumps(obj).encode(), tmp_path)
    assert getattr(proof, point[-1]) is None
    assert not pairing.verify(cube.pk.verifying_key, cube.public, proof)
