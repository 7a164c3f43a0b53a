"""One-shot `prove` on files: a key's point checks done once per machine (key_checks.py),
proof.json and public.json written as a pair, and refusals that name the file, the
section and the index."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from numba_cuzk import fileio
from numba_cuzk.groth16 import key_checks
from numba_cuzk.groth16 import prove as prove_module
from numba_cuzk.groth16.files import prove_files
from numba_cuzk.groth16.formats import pair_matches, read_r1cs, read_wtns, write_r1cs, write_wtns
from numba_cuzk.groth16.formats.binfile import BinFile
from numba_cuzk.groth16.formats.headers import ZKEY
from tests.groth16.test_files import cli, files  # noqa: F401  (the module fixture: mimc 2^6 set up)

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def checks(monkeypatch, tmp_path) -> list[str]:
    """The queries the Prover checks, in order (the check itself skipped: the point checks
    have tests of their own, these count them); the records in a folder of the test's own."""
    seen: list[str] = []

    def counted(points, curve, where, stream=None):
        seen.append(where)

    monkeypatch.setattr(prove_module, "check_points", counted)
    monkeypatch.setattr(key_checks, "records_dir", lambda: tmp_path / "records")
    return seen


def _prove(zkey: Path, files, out: Path, **options):  # noqa: F811
    return prove_files(zkey, files["wtns"], out / "proof.json", out / "public.json", gpu=False, **options)


def _section_offset(zkey: Path, sid: int) -> int:
    return BinFile(ZKEY, zkey).sections[sid][0][0]


def test_a_key_is_checked_once_then_again_when_a_byte_changes(files, checks, tmp_path):  # noqa: F811
    zkey = tmp_path / "c.zkey"
    shutil.copy(files["zkey"], zkey)
    _prove(zkey, files, tmp_path)
    assert len(checks) == 5 and len(list((tmp_path / "records").iterdir())) == 1
    _prove(zkey, files, tmp_path)
    assert len(checks) == 5  # the record: no checks
    data = bytearray(zkey.read_bytes())
    data[_section_offset(zkey, 10)] ^= 1  # the circuit hash: the key proves as before, its bytes differ
    zkey.write_bytes(bytes(data))
    _prove(zkey, files, tmp_path)
    assert len(checks) == 10
    _prove(zkey, files, tmp_path, recheck=True)
    assert len(checks) == 15


def test_a_record_copied_to_another_files_name_is_not_trusted(files, checks, tmp_path):  # noqa: F811
    first, second = tmp_path / "first.zkey", tmp_path / "second.zkey"
    shutil.copy(files["zkey"], first)
    data = bytearray(first.read_bytes())
    data[_section_offset(first, 10)] ^= 1
    second.write_bytes(bytes(data))
    _prove(first, files, tmp_path)
    (record,) = (tmp_path / "records").iterdir()
    digest, _ = key_checks.file_digest(second)
    shutil.copy(record, key_checks.record_path(digest))  # "second passed" in first's words
    _prove(second, files, tmp_path)
    assert len(checks) == 10
    own = key_checks.record_path(digest)  # written by that check
    assert json.loads(own.read_text())["digest"] == digest
    own.write_text(json.dumps(json.loads(own.read_text()) | {"checker": "an older checker"}))
    _prove(second, files, tmp_path)
    assert len(checks) == 15
    own.write_text("{")
    _prove(second, files, tmp_path)
    assert len(checks) == 20


def test_two_checker_versions_keep_a_record_each(files, checks, tmp_path, monkeypatch):  # noqa: F811
    """Two versions of the package on one machine (a daemon and a newer CLI, say) do not
    evict each other's record, so neither checks the key again after its first time."""
    zkey = tmp_path / "c.zkey"
    shutil.copy(files["zkey"], zkey)
    ours = key_checks.CHECKER_VERSION
    for version, total in ((ours, 5), ("another", 10), (ours, 10), ("another", 10)):
        monkeypatch.setattr(key_checks, "CHECKER_VERSION", version)
        _prove(zkey, files, tmp_path)
        assert len(checks) == total
    assert len(list((tmp_path / "records").iterdir())) == 2


def test_cli_recheck_checks_again(files, checks, tmp_path):  # noqa: F811
    zkey = tmp_path / "c.zkey"
    shutil.copy(files["zkey"], zkey)
    base = ["prove", "--zkey", zkey, "--witness", files["wtns"], "--proof", tmp_path / "p.json", "--public",
            tmp_path / "pub.json", "--cpu"]
    for extra, total in (([], 5), ([], 5), (["--recheck"], 10)):
        result = cli(*base, *extra)
        assert result.exit_code == 0, result.output
        assert len(checks) == total


def test_the_digest_taken_beside_the_imports_is_the_files(tmp_path):
    path = tmp_path / "k.zkey"
    path.write_bytes(bytes(range(256)) * 4099)
    assert key_checks.digest_in_background(path).result(timeout=60) == key_checks.file_digest(path)
    with pytest.raises(FileNotFoundError):
        key_checks.digest_in_background(tmp_path / "absent.zkey").result(timeout=60)


# --- the outputs as a pair --------------------------------------------------------------

def _old_pair(out: Path) -> dict[Path, bytes]:
    old = {out / "proof.json": b"old proof", out / "public.json": b"old public"}
    for path, data in old.items():
        path.write_bytes(data)
    return old


def test_a_failure_between_the_renames_changes_neither_file(files, tmp_path, monkeypatch):  # noqa: F811
    old = _old_pair(tmp_path)
    real, calls = fileio.os.replace, []

    def fail_second(src, dst):
        calls.append(dst)
        if len(calls) == 2:
            raise OSError(28, "No space left on device (injected)")
        return real(src, dst)

    monkeypatch.setattr(fileio.os, "replace", fail_second)
    with pytest.raises(OSError, match="injected"):
        prove_files(files["zkey"], files["wtns"], tmp_path / "proof.json", tmp_path / "public.json", gpu=False,
                    trusted=True)
    assert [Path(p).name for p in calls[:2]] == ["public.json", "proof.json"]  # proof.json renamed last
    assert {p: p.read_bytes() for p in old} == old
    assert sorted(p.name for p in tmp_path.iterdir()) == ["proof.json", "public.json"]  # no temporaries


def test_a_good_pair_matches_and_a_mixed_one_does_not(files, tmp_path):  # noqa: F811
    prove_files(files["zkey"], files["wtns"], tmp_path / "proof.json", tmp_path / "public.json", gpu=False,
                trusted=True)
    assert pair_matches(tmp_path / "proof.json", tmp_path / "public.json") is True
    public = json.loads((tmp_path / "public.json").read_text())
    (tmp_path / "other.json").write_text(json.dumps(public[::-1] + ["1"]))
    assert pair_matches(tmp_path / "proof.json", tmp_path / "other.json") is False
    proof = json.loads((tmp_path / "proof.json").read_text())
    del proof["public_sha256"]
    (tmp_path / "snarkjs_proof.json").write_text(json.dumps(proof))
    assert pair_matches(tmp_path / "snarkjs_proof.json", tmp_path / "public.json") is None


FSIZE_CHILD = """
import resource, sys
from pathlib import Path
from numba_cuzk.curve.reference import g1, g2
from numba_cuzk.groth16.formats import write_proof_pair
from numba_cuzk.groth16.keys import Proof
out = Path(sys.argv[1])
resource.setrlimit(resource.RLIMIT_FSIZE, (int(sys.argv[2]), resource.RLIM_INFINITY))
try:
    write_proof_pair(out / "proof.json", out / "public.json", Proof(g1.generator, g2.generator, g1.generator), [7, 8])
except OSError as exc:
    print("refused:", exc)
"""


@pytest.mark.parametrize("limit", [400])  # public.json fits, proof.json does not: the case that lost data
def test_a_file_size_limit_changes_neither_file(tmp_path, limit):
    old = _old_pair(tmp_path)
    proc = subprocess.run([sys.executable, "-c", FSIZE_CHILD, str(tmp_path), str(limit)], capture_output=True,
                          text=True, timeout=300, cwd=REPO)
    assert proc.returncode == 0 and "File too large" in proc.stdout, proc.stdout + proc.stderr
    assert {p: p.read_bytes() for p in old} == old
    assert sorted(p.name for p in tmp_path.iterdir()) == ["proof.json", "public.json"]


# --- refusals name the file, the section and the index ------------------------------------

def _prove_cli(files, tmp_path, *extra, zkey=None, witness=None):  # noqa: F811
    return cli("prove", "--zkey", zkey or files["zkey"], "--witness", witness or files["wtns"], "--proof",
               tmp_path / "proof.json", "--public", tmp_path / "public.json", "--cpu", *extra)


def test_wire_0_not_1_names_the_witness_section_and_value(files, tmp_path):  # noqa: F811
    witness = read_wtns(files["wtns"])
    witness[0, 0] = 2
    write_wtns(tmp_path / "bad.wtns", witness)
    result = _prove_cli(files, tmp_path, witness=tmp_path / "bad.wtns")
    assert result.exit_code == 2, result.output
    assert "bad.wtns: wtns section 2 (witness): value 0 (wire 0, the constant) must be 1, got 2" in result.output


def test_the_self_check_names_the_key_and_the_witness(files, tmp_path):  # noqa: F811
    witness = read_wtns(files["wtns"])
    witness[0, -1] ^= 1
    write_wtns(tmp_path / "bad.wtns", witness)
    result = _prove_cli(files, tmp_path, witness=tmp_path / "bad.wtns")
    assert result.exit_code == 2, result.output
    assert f"{files['zkey']} with {tmp_path / 'bad.wtns'}: the proof does not verify" in result.output


def test_an_off_curve_point_under_trusted_names_its_section_and_index(files, tmp_path):  # noqa: F811
    data = bytearray(files["zkey"].read_bytes())
    offset = _section_offset(files["zkey"], 9) + 3 * 96 + 48  # H point 3's y (Montgomery, little-endian)
    data[offset] ^= 1
    (tmp_path / "bad.zkey").write_bytes(bytes(data))
    result = _prove_cli(files, tmp_path, "--trusted", zkey=tmp_path / "bad.zkey")
    assert result.exit_code == 2, result.output
    assert "bad.zkey: zkey section 9 (H points): point 3: not on curve" in result.output, result.output
    assert not (tmp_path / "proof.json").exists()


def test_a_corrupt_r1cs_is_blamed_on_the_r1cs(files, tmp_path):  # noqa: F811
    r1cs = read_r1cs(files["r1cs"])
    r1cs.a.values[0, 0] ^= 1  # a coefficient: the witness no longer satisfies constraint 0's row
    write_r1cs(tmp_path / "bad.r1cs", r1cs)
    result = _prove_cli(files, tmp_path, "--r1cs", tmp_path / "bad.r1cs")
    assert result.exit_code == 2, result.output
    assert f"does not satisfy {tmp_path / 'bad.r1cs'} (r1cs section 2 (constraints)): constraint" in result.output
    data = bytearray(files["r1cs"].read_bytes())
    (tmp_path / "short.r1cs").write_bytes(bytes(data[:-40]))
    result = _prove_cli(files, tmp_path, "--r1cs", tmp_path / "short.r1cs")
    assert result.exit_code == 2 and f"{tmp_path / 'short.r1cs'}: " in result.output, result.output
    assert str(files["wtns"]) not in result.output
