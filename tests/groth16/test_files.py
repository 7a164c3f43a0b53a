"""Groth16 on files through the CLI: `setup` writes a built-in circuit, its witness, a
zkey and a verification key; `prove` times its steps and refuses bad witnesses with one
line naming the problem; `verify` exits 0 (valid), 1 (invalid) or 2 (bad input)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from numba_cuzk.circuits import build
from numba_cuzk.cli import app
from numba_cuzk.groth16.formats import read_wtns, write_r1cs, write_wtns
from tests.conftest import SIMULATOR

REPO = Path(__file__).resolve().parents[2]
STEPS = ["read_witness", "check_witness", "read_zkey", "prepare", "prove", "write"]
PHASES = {"stage", "upload", "matvec", "ntt", "msm_a", "msm_b1", "msm_b2", "msm_c", "msm_h", "download", "blinding", "sync",
          "epilogue"}


def cli(*args):
    # wide enough that typer's error panel does not wrap the messages the tests look for
    return CliRunner().invoke(app, [str(a) for a in args], env={"COLUMNS": "1000"})


@pytest.fixture(scope="module")
def files(tmp_path_factory) -> dict[str, Path]:
    """mimc at 2^6 set up, and proved once: r1cs, wtns, zkey, vk, proof, public."""
    d = tmp_path_factory.mktemp("files")
    paths = {k: d / name for k, name in (("r1cs", "c.r1cs"), ("wtns", "w.wtns"), ("zkey", "c.zkey"),
                                          ("vk", "vk.json"), ("proof", "proof.json"), ("public", "public.json"))}
    result = cli("setup", "--circuit", "mimc", "-k", 6, "--r1cs", paths["r1cs"], "--witness", paths["wtns"],
                 "--zkey", paths["zkey"], "--vk", paths["vk"], "--cpu")
    assert result.exit_code == 0, result.output
    assert "INSECURE" in result.output
    return paths


def prove(files, *extra, witness=None, out: Path | None = None):
    out = out or files["proof"].parent
    return cli("prove", "--zkey", files["zkey"], "--witness", witness or files["wtns"], "--proof",
               out / "proof.json", "--public", out / "public.json", "--cpu", *extra)


def test_prove_times_each_step_then_verify(files):
    result = prove(files, "--r1cs", files["r1cs"], "--json")
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert list(report["steps_ms"]) == STEPS and set(report["prove_phases_ms"]) == PHASES
    assert report["backend"] == "cpu" and report["total_ms"] == pytest.approx(sum(report["steps_ms"].values()), abs=0.1)
    result = cli("verify", "--vk", files["vk"], "--public", files["public"], "--proof", files["proof"])
    assert result.exit_code == 0 and "valid" in result.stdout, result.output


def test_prove_table_and_trusted(files, tmp_path):
    result = prove(files, "--trusted", out=tmp_path)
    assert result.exit_code == 0, result.output
    assert "read_zkey" in result.stdout and "msm_h" in result.stdout and "check_witness" not in result.stdout


def test_verify_rejects_changed_public_input(files, tmp_path):
    public = json.loads(files["public"].read_text())
    public[0] = str(int(public[0]) + 1)
    (tmp_path / "public.json").write_text(json.dumps(public))
    result = cli("verify", "--vk", files["vk"], "--public", tmp_path / "public.json", "--proof", files["proof"],
                 "--json")
    assert result.exit_code == 1 and json.loads(result.stdout) == {"valid": False}, result.output


@pytest.mark.parametrize(("edit", "message"), [
    (lambda proof, public: public.pop(), "1 public inputs, the key"),
    (lambda proof, public: proof["pi_a"].__setitem__(1, "5"), "pi_a: not on"),
    (lambda proof, public: public.__setitem__(0, "x"), "expected a decimal string"),
])
def test_verify_bad_input_exits_2(files, tmp_path, edit, message):
    proof, public = json.loads(files["proof"].read_text()), json.loads(files["public"].read_text())
    edit(proof, public)
    (tmp_path / "proof.json").write_text(json.dumps(proof))
    (tmp_path / "public.json").write_text(json.dumps(public))
    result = cli("verify", "--vk", files["vk"], "--public", tmp_path / "public.json", "--proof", tmp_path / "proof.json")
    assert result.exit_code == 2 and message in result.output, result.output


def test_verify_error_is_one_line(files, tmp_path):
    # Through the real entry point (CliRunner bypasses the app's error printing); verify
    # compiles no kernels, so a fresh process takes about a second.
    proc = subprocess.run([sys.executable, "-m", "numba_cuzk.cli", "verify", "--vk", str(files["vk"]), "--public",
                           str(tmp_path / "missing.json"), "--proof", str(files["proof"])],
                          capture_output=True, text=True, timeout=120, cwd=REPO)
    assert proc.returncode == 2 and proc.stderr.startswith("error: ") and "missing.json" in proc.stderr
    assert proc.stderr.strip().count("\n") == 0 and proc.stdout == ""


def test_prove_refuses_a_broken_witness(files, tmp_path):
    witness = read_wtns(files["wtns"])
    witness[0, -1] ^= 1  # the last private wire: a constraint that uses it breaks
    write_wtns(tmp_path / "bad.wtns", witness)
    checked = prove(files, "--r1cs", files["r1cs"], witness=tmp_path / "bad.wtns", out=tmp_path)
    assert checked.exit_code == 2 and "constraint" in checked.output and "is not satisfied" in checked.output
    unchecked = prove(files, witness=tmp_path / "bad.wtns", out=tmp_path)
    assert unchecked.exit_code == 2 and "does not satisfy the circuit" in unchecked.output
    assert "or the key is corrupt" in unchecked.output and "--r1cs" in unchecked.output  # how to tell which
    assert not (tmp_path / "proof.json").exists()


def test_prove_refuses_files_that_do_not_match(files, tmp_path):
    other_r1cs, other_witness = build("mimc", 5)
    write_r1cs(tmp_path / "other.r1cs", other_r1cs)
    write_wtns(tmp_path / "other.wtns", other_witness)
    result = prove(files, "--r1cs", tmp_path / "other.r1cs", out=tmp_path)
    assert result.exit_code == 2 and "not the same circuit" in result.output, result.output
    result = prove(files, witness=tmp_path / "other.wtns", out=tmp_path)
    assert result.exit_code == 2 and "wires, the key" in result.output and "other.wtns" in result.output
    result = prove(files, witness=tmp_path / "missing.wtns", out=tmp_path)
    assert result.exit_code == 2 and "missing.wtns" in result.output, result.output


@pytest.mark.parametrize(("args", "message"), [
    ([], "give --r1cs FILE, or --circuit NAME"),
    (["--r1cs", "c.r1cs", "--witness", "w.wtns"], "give --r1cs FILE, or --circuit NAME"),
    (["--circuit", "nope"], "'nope' is not one of"),
    (["--r1cs", "missing.r1cs"], "missing.r1cs"),
])
def test_setup_usage_errors(tmp_path, args, message):
    result = cli("setup", *args, "--zkey", tmp_path / "c.zkey", "--vk", tmp_path / "vk.json")
    assert result.exit_code == 2 and message in result.output, result.output
    assert not (tmp_path / "c.zkey").exists()


# --- checks before work, atomic and refused writes, one error path ---------------------

def _no_key_read(monkeypatch):
    from numba_cuzk.groth16 import formats

    monkeypatch.setattr(formats, "read_zkey", lambda *a, **k: pytest.fail("the key was read first"))


def test_prove_checks_its_files_before_reading_the_key(files, tmp_path, monkeypatch):
    """A missing witness, an unwritable --public, a witness of the wrong size: refused in
    milliseconds, before the key's points are checked, and nothing is written."""
    _no_key_read(monkeypatch)
    result = prove(files, witness=tmp_path / "missing.wtns", out=tmp_path)
    assert result.exit_code == 2 and "missing.wtns: no such file" in result.output, result.output
    # /proc takes no new files, even from root: a read-only filesystem
    result = cli("prove", "--zkey", files["zkey"], "--witness", files["wtns"], "--proof", tmp_path / "proof.json",
                 "--public", "/proc/public.json", "--cpu")
    assert result.exit_code == 2 and "/proc/public.json: cannot write" in result.output, result.output
    assert not (tmp_path / "proof.json").exists()
    result = cli("prove", "--zkey", files["zkey"], "--witness", files["wtns"], "--proof", tmp_path / "no" / "p.json",
                 "--cpu")
    assert result.exit_code == 2 and "p.json" in result.output
    short = read_wtns(files["wtns"])[:, :-1]
    write_wtns(tmp_path / "short.wtns", short)
    result = prove(files, witness=tmp_path / "short.wtns", out=tmp_path)
    assert result.exit_code == 2 and "short.wtns" in result.output and "wires, the key" in result.output


def test_setup_refuses_to_replace_a_key_without_force(files, tmp_path, monkeypatch):
    from numba_cuzk.groth16 import setup as groth16_setup
    from numba_cuzk.groth16.formats import read_zkey

    key = tmp_path / "ceremony.zkey"
    key.write_bytes(b"a ceremony's key")
    monkeypatch.setattr(groth16_setup, "setup", lambda r1cs, gpu: read_zkey(files["zkey"], trusted=True))
    result = cli("setup", "--r1cs", files["r1cs"], "--zkey", key, "--vk", tmp_path / "vk.json", "--cpu")
    assert result.exit_code == 2 and "ceremony.zkey: already exists (give --force" in result.output, result.output
    assert key.read_bytes() == b"a ceremony's key" and not (tmp_path / "vk.json").exists()
    result = cli("setup", "--r1cs", files["r1cs"], "--zkey", key, "--vk", tmp_path / "vk.json", "--cpu", "--force")
    assert result.exit_code == 0, result.output
    assert key.read_bytes() == files["zkey"].read_bytes()


@pytest.mark.parametrize(("content", "message"), [
    (b'{"pi_a": [1, 2,', "proof.json: not JSON: Expecting value at line 1"),
    (b'{"pi_a": [' + b"7" * 5000 + b"]}", "a number of 5000 digits"),
    (b"[" * 40 + b"]" * 40, "nested too deeply"),
    (b" " * (9 << 20), "larger than any snarkjs JSON file"),
])
def test_bad_json_names_its_file(files, tmp_path, content, message):
    (tmp_path / "proof.json").write_bytes(content)
    result = cli("verify", "--vk", files["vk"], "--public", files["public"], "--proof", tmp_path / "proof.json")
    assert result.exit_code == 2 and message in result.output, result.output
    assert "set_int_max_str_digits" not in result.output and "Traceback" not in result.output


def test_os_errors_name_their_file(files, tmp_path):
    result = cli("verify", "--vk", tmp_path, "--public", files["public"], "--proof", files["proof"])
    assert result.exit_code == 2 and f"{tmp_path}: not a file" in result.output, result.output


def test_a_bug_shows_its_traceback_and_says_so(files, monkeypatch):
    from numba_cuzk.groth16 import formats

    def broken(*args, **kwargs):
        raise KeyError("an internal table")
    monkeypatch.setattr(formats, "read_vk_json", broken)
    result = cli("verify", "--vk", files["vk"], "--public", files["public"], "--proof", files["proof"])
    assert result.exit_code == 3, result.output
    assert "Traceback" in result.output and "this is a bug in numba-cuzk" in result.output


def test_a_corrupt_key_is_not_blamed_on_the_witness(files, tmp_path):
    """A coefficient changed in the zkey: the proof fails its own check, and the message
    says the key may be at fault; with --r1cs the witness passes, so it is the key."""
    from numba_cuzk.groth16.formats.binfile import BinFile
    from numba_cuzk.groth16.formats.zkey import ZKEY

    data = bytearray(files["zkey"].read_bytes())
    offset, _ = BinFile(ZKEY, files["zkey"]).sections[4][0]
    data[offset + 4 + 12] ^= 1  # u32 count, then the first coefficient: matrix, constraint, signal, value
    (tmp_path / "bad.zkey").write_bytes(bytes(data))
    result = cli("prove", "--zkey", tmp_path / "bad.zkey", "--witness", files["wtns"], "--r1cs", files["r1cs"],
                 "--proof", tmp_path / "proof.json", "--public", tmp_path / "public.json", "--cpu", "--trusted")
    assert result.exit_code == 2, result.output
    assert "or the key is corrupt" in result.output and "bad.zkey with" in result.output, result.output
    assert "satisfies" in result.output and "the key is at fault" in result.output  # --r1cs passed: the key
    assert not (tmp_path / "proof.json").exists()


@pytest.mark.gpu
@pytest.mark.skipif(SIMULATOR, reason="without a GPU `prove` runs the CPU backend: on a GPU only (-m gpu)")
def test_a_gpu_prove_starts_no_cpu_kernel(files, tmp_path):
    """`prove` on the GPU backend, in a process of its own: numba's CPU target never starts
    (its runtime and first cached kernel were 50-150 ms of a GPU one-shot on the H100)."""
    code = ("import json, sys\nfrom numba.core.registry import CPUDispatcher\nfrom numba.core.runtime import nrt\n"
            "from numba_cuzk import kernel_cache\nfrom numba_cuzk.cli import app\n"
            "try:\n    app(sys.argv[1:])\nexcept SystemExit as exit:\n    assert not exit.code, exit.code\n"
            "print(json.dumps({'runtime': nrt.rtsys._init,\n"
            "                  'kernels': [k.py_func.__name__ for k in kernel_cache._KERNELS\n"
            "                              if isinstance(k, CPUDispatcher) and k.overloads]}))")  # not the GPU's
    args = ("prove", "--zkey", files["zkey"], "--witness", files["wtns"], "--proof", tmp_path / "proof.json",
            "--public", tmp_path / "public.json", "--json")
    proc = subprocess.run([sys.executable, "-c", code, *map(str, args)], capture_output=True, text=True, timeout=600,
                          cwd=REPO)
    assert proc.returncode == 0, proc.stderr[-3000:]
    report, started = proc.stdout.rstrip().rsplit("\n", 1)
    assert json.loads(report)["backend"] == "gpu"
    assert json.loads(started) == {"runtime": False, "kernels": []}
