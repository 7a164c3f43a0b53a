"""snarkjs's proof.json, public.json and verification_key.json (snarkjs src/groth16_prove.js,
zkey_export_verificationkey.js, groth16_verify.js; ffjavascript's toObject/fromObject).

Numbers are decimal strings. A G1 point is [x, y, z] with z = "1" (affine) or "0"
(infinity, written ["0", "1", "0"]); a G2 point the same with Fq2 pairs [c0, c1], z =
["1", "0"]. The readers accept what snarkjs's do (decimal or 0x-hex strings, plain JSON
integers, a G1/G2 point without z) and check every field: canonical (< q, or < r for
public inputs), points on their curve and in the prime-order subgroup; errors name the
field ("pi_b: not on curve").

A proof written with its public inputs (write_proof_pair) also carries
``public_sha256``, the SHA-256 of public.json's bytes, which snarkjs ignores: proof.json is
renamed last, so a public.json whose digest is not the proof's (``sha256sum public.json``)
was left by a run killed between the two renames, or paired by hand (pair_matches).

verification_key.json: snarkjs also writes vk_alphabeta_12 = e(alpha, beta), but its
verifier (groth16_verify.js) never reads it, so it is not written and is ignored on read.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from typing import Sequence

from numba_cuzk.curve.params import G1, G2, CurveParams
from numba_cuzk.field.params import FQ, FR
from numba_cuzk.fileio import atomic_files, atomic_write
from numba_cuzk.groth16.formats import points
from numba_cuzk.groth16.formats.binfile import PathLike
from numba_cuzk.groth16.keys import Proof, VerifyingKey

PROTOCOL = "groth16"
CURVE = "bls12381"  # ffjavascript's name for the curve
_DECIMAL = re.compile(r"[0-9]{1,200}")  # 200 digits is far above any field element
_HEX = re.compile(r"0x[0-9a-fA-F]{1,100}")


def write_proof_json(path: PathLike, proof: Proof) -> None:
    _dump(path, _proof_object(proof))


def write_proof_pair(proof_path: PathLike, public_path: PathLike, proof: Proof, public: Sequence[int]) -> None:
    """proof.json and public.json written together or not at all (fileio.atomic_files):
    both to temporaries, fsynced, then public.json renamed and proof.json last; a failure
    before both are renamed leaves both files as they were. proof.json's extra field
    ``public_sha256`` is the SHA-256 (hex) of the public.json written with it."""
    proof_text, public_text = proof_pair_texts(proof, public)
    with atomic_files([public_path, proof_path], "w") as (public_file, proof_file):
        public_file.write(public_text)
        proof_file.write(proof_text)


def proof_pair_texts(proof: Proof, public: Sequence[int]) -> tuple[str, str]:
    """(proof.json, public.json) as write_proof_pair writes them: proof.json carrying
    public.json's digest (a daemon sends both texts; its client writes the pair)."""
    public_text = _text(_public_list(public))
    proof_text = _text(_proof_object(proof) | {"public_sha256": hashlib.sha256(public_text.encode()).hexdigest()})
    return proof_text, public_text


def pair_matches(proof_path: PathLike, public_path: PathLike) -> bool | None:
    """Whether public.json is the one its proof.json was written with (write_proof_pair):
    None if the proof carries no digest (snarkjs's, or written alone)."""
    digest = _object(_load(proof_path), "proof.json").get("public_sha256")
    if digest is None:
        return None
    with open(public_path, "rb") as f:
        return hashlib.file_digest(f, "sha256").hexdigest() == digest


def _proof_object(proof: Proof) -> dict:
    return {"pi_a": _g1_json(proof.a), "pi_b": _g2_json(proof.b), "pi_c": _g1_json(proof.c),
            "protocol": PROTOCOL, "curve": CURVE}


def read_proof_json(path: PathLike) -> Proof:
    obj = _object(_load(path), "proof.json")
    _check_tags(obj, "proof.json", required=False)
    return Proof(a=_point(_field(obj, "pi_a"), G1, "pi_a"), b=_point(_field(obj, "pi_b"), G2, "pi_b"),
                 c=_point(_field(obj, "pi_c"), G1, "pi_c"))


def write_public_json(path: PathLike, values: Sequence[int]) -> None:
    """Public inputs (ints in [0, r)) -> a list of decimal strings."""
    _dump(path, _public_list(values))


def _public_list(values: Sequence[int]) -> list[str]:
    for i, v in enumerate(values):
        if isinstance(v, bool) or not isinstance(v, int) or not 0 <= v < FR.modulus:
            raise ValueError(f"public input {i}: {v!r} is not an integer in [0, r)")
    return [str(v) for v in values]


def read_public_json(path: PathLike) -> list[int]:
    values = _load(path)
    if not isinstance(values, list):
        raise ValueError(f"public.json: expected a list of decimal strings, got {type(values).__name__}")
    return [_integer(v, f"public input {i}", FR) for i, v in enumerate(values)]


def write_vk_json(path: PathLike, vk: VerifyingKey, *, replace: bool = True) -> None:
    if len(vk.ic) != vk.n_public + 1:
        raise ValueError(f"IC: {len(vk.ic)} points, expected nPublic + 1 = {vk.n_public + 1}")
    _dump(path, {"protocol": PROTOCOL, "curve": CURVE, "nPublic": vk.n_public,
                 "vk_alpha_1": _g1_json(vk.alpha_g1), "vk_beta_2": _g2_json(vk.beta_g2),
                 "vk_gamma_2": _g2_json(vk.gamma_g2), "vk_delta_2": _g2_json(vk.delta_g2),
                 "IC": [_g1_json(p) for p in vk.ic]}, replace=replace)


def read_vk_json(path: PathLike) -> VerifyingKey:
    obj = _object(_load(path), "verification_key.json")
    _check_tags(obj, "verification_key.json", required=True)
    ic = _field(obj, "IC")
    if not isinstance(ic, list) or not ic:
        raise ValueError("IC: expected a non-empty list of G1 points")
    n_public = _field(obj, "nPublic")
    if isinstance(n_public, bool) or not isinstance(n_public, int) or n_public != len(ic) - 1:
        raise ValueError(f"nPublic: {n_public!r}, but IC has {len(ic)} points (expected nPublic + 1)")
    return VerifyingKey(n_public=n_public, alpha_g1=_point(_field(obj, "vk_alpha_1"), G1, "vk_alpha_1"),
                        beta_g2=_point(_field(obj, "vk_beta_2"), G2, "vk_beta_2"),
                        gamma_g2=_point(_field(obj, "vk_gamma_2"), G2, "vk_gamma_2"),
                        delta_g2=_point(_field(obj, "vk_delta_2"), G2, "vk_delta_2"),
                        ic=[_point(p, G1, f"IC[{i}]") for i, p in enumerate(ic)])


# --- writing ------------------------------------------------------------------------

def _dump(path: PathLike, obj, replace: bool = True) -> None:
    """Write ``obj`` as JSON, atomically (fileio.atomic_write)."""
    with atomic_write(path, "w", replace=replace) as f:
        f.write(_text(obj))


def _text(obj) -> str:
    return json.dumps(obj, indent=1)  # snarkjs writes with one space of indentation


def _g1_json(p) -> list:
    return ["0", "1", "0"] if p is None else [str(p[0]), str(p[1]), "1"]


def _g2_json(p) -> list:
    if p is None:
        return [["0", "0"], ["1", "0"], ["0", "0"]]
    return [[str(c) for c in p[0]], [str(c) for c in p[1]], ["1", "0"]]


# --- reading ------------------------------------------------------------------------

MAX_DEPTH = 16  # snarkjs's files nest 3 deep; the C parser can overflow the C stack on deep input
# A proof is ~1 KB and a verification key ~1 KB + 200 B per public input: 8 MiB holds
# 40,000 public inputs, and bounds the parser's memory (60 MB of brackets took 1.8 GB).
MAX_JSON_BYTES = 8 << 20
_MAX_DIGITS = 200  # a field element has at most 115 decimal digits


def _load(path: PathLike):
    """The JSON value of the file at ``path``; ValueError naming the file for one larger
    than MAX_JSON_BYTES (before reading it), nested too deeply, or not JSON."""
    with open(path, "rb") as f:
        size = os.fstat(f.fileno()).st_size
        data = f.read(MAX_JSON_BYTES + 1)  # st_size is 0 for a pipe or /proc file
    if max(size, len(data)) > MAX_JSON_BYTES:
        raise ValueError(f"{path}: {max(size, len(data))} bytes, larger than any snarkjs JSON file "
                         f"(limit {MAX_JSON_BYTES} bytes)")
    if _too_deep(data):
        raise ValueError(f"{path}: JSON nested too deeply (more than {MAX_DEPTH} levels)")
    try:
        return json.loads(data, parse_int=_json_int)
    except json.JSONDecodeError as exc:
        raise ValueError(f"{path}: not JSON: {exc.msg} at line {exc.lineno} column {exc.colno} "
                         f"(offset {exc.pos})") from None
    except UnicodeDecodeError as exc:
        raise ValueError(f"{path}: not JSON: not UTF-8 text at offset {exc.start}") from None


def _json_int(text: str) -> int:
    """A JSON integer, refused past _MAX_DIGITS (Python's own limit, 4300, would print a
    hint about sys.set_int_max_str_digits)."""
    if len(text.lstrip("-")) > _MAX_DIGITS:
        raise ValueError(f"a number of {len(text.lstrip('-'))} digits: no field element is that long")
    return int(text)


def _too_deep(data: bytes) -> bool:
    """Whether brackets outside strings nest deeper than MAX_DEPTH (one pass, no recursion)."""
    depth, in_string, escaped = 0, False, False
    for byte in data:
        if in_string:
            escaped, in_string = (not escaped and byte == 0x5C), (escaped or byte != 0x22)
        elif byte == 0x22:
            in_string = True
        elif byte in (0x5B, 0x7B):
            depth += 1
            if depth > MAX_DEPTH:
                return True
        elif byte in (0x5D, 0x7D):
            depth -= 1
    return False


def _object(obj, what: str) -> dict:
    if not isinstance(obj, dict):
        raise ValueError(f"{what}: expected a JSON object, got {type(obj).__name__}")
    return obj


def _field(obj: dict, key: str):
    if key not in obj:
        raise ValueError(f"{key}: missing")
    return obj[key]


def _check_tags(obj: dict, what: str, required: bool) -> None:
    """protocol must be groth16 and curve BLS12-381 (named as snarkjs normalizes it:
    letters and digits, any case); a proof may omit them (snarkjs's verifier reads
    neither from the proof)."""
    for key, want in (("protocol", PROTOCOL), ("curve", CURVE)):
        if key not in obj and not required:
            continue
        value = _field(obj, key)
        if not isinstance(value, str) or re.sub(r"[^a-z0-9]", "", value.lower()) != want:
            raise ValueError(f"{what}: {key} {value!r} is not {want!r}")


def _integer(value, where: str, field) -> int:
    """A decimal or 0x-hex string (or a JSON integer) in [0, field.modulus)."""
    if isinstance(value, str) and _DECIMAL.fullmatch(value):
        v = int(value)
    elif isinstance(value, str) and _HEX.fullmatch(value):
        v = int(value, 16)
    elif isinstance(value, int) and not isinstance(value, bool):
        v = value
    else:
        raise ValueError(f"{where}: expected a decimal string, got {str(value)[:40]!r}")
    if not 0 <= v < field.modulus:
        raise ValueError(f"{where}: {v} is not in [0, {'r' if field is FR else 'q'})")
    return v


def _element(value, where: str, curve: CurveParams):
    """An Fq element (G1) or an Fq2 pair [c0, c1] (G2)."""
    if curve.degree == 1:
        return _integer(value, where, FQ)
    if not isinstance(value, list) or len(value) != 2:
        raise ValueError(f"{where}: expected [c0, c1]")
    return tuple(_integer(c, f"{where}.c{k}", FQ) for k, c in enumerate(value))


def _point(value, curve: CurveParams, where: str):
    """[x, y] or [x, y, z] -> a reference affine point (None for z = 0), checked."""
    if not isinstance(value, list) or len(value) not in (2, 3):
        raise ValueError(f"{where}: expected [x, y, z]")
    one, zero = (1, 0) if curve.degree == 1 else ((1, 0), (0, 0))
    z = _element(value[2], f"{where}: z", curve) if len(value) == 3 else one
    if z == zero:
        return None
    if z != one:
        raise ValueError(f"{where}: z must be 1 (affine) or 0 (infinity)")
    point = (_element(value[0], f"{where}: x", curve), _element(value[1], f"{where}: y", curve))
    reason = points.problem(point, curve)
    if reason:
        raise ValueError(f"{where}: {reason}")
    return point
