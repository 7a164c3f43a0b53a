"""Prebuilt kernels (commands/prebuilt.py, commands/ahead.py): an archive built in one
folder and installed in a fresh one serves a process that then compiles nothing; a
tampered, foreign or mislabelled archive is refused; CUDA entries are made without a GPU.
Each case runs fresh Python processes (tests/test_kernel_cache.run): the simulator has no
machine code, so in CI the CPU kernels are what is counted; ``-m gpu`` builds the GPU's
kernels with the GPU hidden and counts a whole prove's compilations on it."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest

from numba_cuzk import kernel_cache
from numba_cuzk.commands import ahead, prebuilt
from tests.conftest import SIMULATOR
from tests.test_kernel_cache import CONVERSION, ROOT, run

ORIGIN = CONVERSION.replace("print(json.dumps(", """from numba_cuzk.commands import kernel_report
row = next(r for r in kernel_report.kernel_rows() if r.name == "to_mont_fr_cpu")
print(json.dumps({"origin": row.targets} | """)


@pytest.fixture(scope="module")
def archive(tmp_path_factory) -> tuple[Path, str]:
    """(archive, its SHA-256) of the CPU kernel a Montgomery conversion compiles."""
    tmp = tmp_path_factory.mktemp("prebuilt")
    stats, _ = run(CONVERSION, tmp / "staging")
    assert stats["compiled"] > 0
    out = tmp / "kernels.tar.gz"
    return out, prebuilt.pack(Path(stats["folder"]), out, ["cpu"])


def _install(archive: Path, cache: Path, monkeypatch, sha256: str | None = None) -> dict:
    monkeypatch.setenv("NUMBA_CUZK_CACHE_DIR", str(cache))
    return prebuilt.install(archive, sha256)


def test_a_fresh_folder_with_the_prebuilt_kernels_compiles_nothing(archive, tmp_path, monkeypatch):
    path, digest = archive
    installed = _install(path, tmp_path / "fresh", monkeypatch, digest)
    assert installed["installed"] > 0 and installed["key"] == kernel_cache.source_key()
    stats, _ = run(ORIGIN, tmp_path / "fresh")
    assert stats["compiled"] == 0 and stats["loaded"] > 0, stats
    assert stats["origin"] == {"cpu": "prebuilt"}  # info --kernels says where it came from
    again = _install(path, tmp_path / "fresh", monkeypatch, digest)
    assert again["installed"] == 0 and again["kept"] == installed["installed"]  # nothing replaced


def _rewritten(path: Path, out: Path, edit) -> Path:
    """A copy of the archive with ``edit(name, bytes) -> bytes`` applied to each member."""
    with tarfile.open(path) as source, tarfile.open(out, "w:gz") as target:
        for member in source.getmembers():
            data = edit(member.name, source.extractfile(member).read())
            member.size = len(data)
            target.addfile(member, io.BytesIO(data))
    return out


def _manifest_edit(change):
    def edit(name: str, data: bytes) -> bytes:
        if name != "manifest.json":
            return data
        manifest = json.loads(data)
        change(manifest)
        return json.dumps(manifest).encode()
    return edit


def test_an_archive_that_does_not_match_is_refused(archive, tmp_path, monkeypatch):
    path, digest = archive
    with pytest.raises(ValueError, match="expected 0+: refusing it"):
        _install(path, tmp_path / "a", monkeypatch, "0" * 64)
    flipped = _rewritten(path, tmp_path / "flipped.tar.gz", lambda name, data: (
        data if name.endswith(".nbi") or name == "manifest.json" else data[:-1] + bytes([data[-1] ^ 1])))
    with pytest.raises(ValueError, match=r"\.nbc does not match its manifest's SHA-256"):
        _install(flipped, tmp_path / "b", monkeypatch)
    foreign = _rewritten(path, tmp_path / "foreign.tar.gz", _manifest_edit(
        lambda m: m.update(key="0" * 16, versions=m["versions"] | {"numba": "0.0.1"})))
    with pytest.raises(ValueError, match="key 0{16}.*numba 0.0.1 there"):
        _install(foreign, tmp_path / "c", monkeypatch)
    unsafe = _rewritten(path, tmp_path / "unsafe.tar.gz", _manifest_edit(
        lambda m: m["files"].update({"../escape.nbc": "0" * 64})))
    with pytest.raises(ValueError, match="unsafe path"):
        _install(unsafe, tmp_path / "d", monkeypatch)
    (tmp_path / "junk.tar.gz").write_bytes(b"not an archive")
    with pytest.raises(ValueError, match="not a kernels archive"):
        _install(tmp_path / "junk.tar.gz", tmp_path / "e", monkeypatch)
    assert not any((tmp_path / name).exists() and any((tmp_path / name).rglob("*.nbc")) for name in "bcd")


def test_sources_edited_during_a_build_are_a_user_error(tmp_path, monkeypatch):
    """An edit of the package while `compile --archive` runs changes the key its processes
    save under: the build refuses to pack, as a user error (exit 2, one line naming both
    keys), not as a bug in numba-cuzk."""
    from typer.testing import CliRunner

    from numba_cuzk.cli import app
    from numba_cuzk.commands import compile as tasks

    key = ["0123456789abcdef"]
    monkeypatch.setattr(kernel_cache, "source_key", lambda: key[0])
    monkeypatch.setattr(tasks, "run_tasks", lambda *args, **kwargs: key.__setitem__(0, "fedcba9876543210"))
    done = CliRunner().invoke(app, ["compile", "--targets", "cpu", "--archive", str(tmp_path / "k.tar.gz")])
    assert done.exit_code == 2, done.output
    assert "sources changed during the build (kernel cache key 0123456789abcdef -> fedcba9876543210)" in done.output
    assert "bug" not in done.output and not (tmp_path / "k.tar.gz").exists()


def test_fetch_takes_a_path_or_a_file_url(archive, tmp_path):
    path, digest = archive
    assert prebuilt.sha256_file(prebuilt.fetch(path.as_uri(), tmp_path / "a.tar.gz")) == digest
    assert prebuilt.sha256_file(prebuilt.fetch(str(path), tmp_path / "b.tar.gz")) == digest
    with pytest.raises(ValueError, match="no such archive"):
        prebuilt.fetch(str(tmp_path / "missing.tar.gz"), tmp_path / "c.tar.gz")


def test_launch_arguments_are_typed_as_numba_cuda_types_them():
    import numpy as np
    from numba.cuda.typing.typeof import Purpose, typeof

    host = np.zeros((3, 4), np.uint32)
    for value in (host, np.asfortranarray(host), host[:, ::2], 7, 1 << 63, True, 0.5, np.uint32(3), (1, host)):
        assert typeof(ahead.example(ahead.describe(value)), Purpose.argument) == typeof(value, Purpose.argument)
    with pytest.raises(TypeError, match="commands/ahead.describe"):
        ahead.describe(object())
    assert ahead.parse_target("sm_120") == (12, 0)
    with pytest.raises(ValueError, match="expected sm_MN"):
        ahead.parse_target("gfx90a")


CUDA_ENTRY = """
import json
from numba_cuzk import kernel_cache
from numba_cuzk.commands import ahead, kernel_report
from numba_cuzk.field import kernels
u32 = ["device", "<u4", 2, "C"]
ahead.compile_ahead(frozenset({"to_montgomery_fr"}), {"to_montgomery_fr": [[["int", 0], u32, u32, u32, u32]]},
                    ("sm_80", "sm_120"))
row = next(r for r in kernel_report.kernel_rows() if r.name == "to_montgomery_fr")
print(json.dumps({"targets": row.targets, "registers": row.registers}))
"""


def test_cuda_entries_are_made_without_a_gpu_and_installed_elsewhere(tmp_path, monkeypatch):
    """Two targets' entries from one compile, each with its cubin, no device asked; packed
    and installed into another folder, keyed as those GPUs look them up."""
    from numba_cuzk.commands import kernel_report

    env = dict(os.environ, CUDA_VISIBLE_DEVICES="")
    done = subprocess.run([sys.executable, "-c", CUDA_ENTRY], cwd=ROOT, capture_output=True, text=True, timeout=600,
                          env={k: v for k, v in env.items() if k != "NUMBA_ENABLE_CUDASIM"}
                          | {"NUMBA_CUZK_CACHE_DIR": str(tmp_path / "built"), "PYTHONPATH": str(ROOT)})
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert result["targets"] == {"sm_80": "compiled here", "sm_120": "compiled here"}
    assert all(counts and all(0 < n <= 255 for n in counts) for counts in result["registers"].values()), result
    built = tmp_path / "built" / kernel_cache.source_key()
    digest = prebuilt.pack(built, tmp_path / "gpu.tar.gz", ["sm_80", "sm_120"])
    assert _install(tmp_path / "gpu.tar.gz", tmp_path / "fresh", monkeypatch, digest)["installed"] == 2
    folder = tmp_path / "fresh" / kernel_cache.source_key()
    (index,) = folder.rglob("*.to_montgomery_fr-*.nbi")
    keys = kernel_report._read_index(index)
    assert sorted(key[1][1] for key in keys) == [(8, 0), (12, 0)]  # (runtime version, compute capability)
    recorded = json.loads((folder / kernel_report.PREBUILT_MANIFEST).read_text())["files"]
    assert sorted(recorded) == sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*.nbc"))
    assert (folder / ".compiled-sm_80").exists() and (folder / ".compiled-sm_120").exists()


PROVE = """
import json, sys
from numba_cuzk import kernel_cache
from numba_cuzk.groth16.files import prove_files
d = sys.argv[1]
prove_files(d + "/key.zkey", d + "/witness.wtns", d + "/proof.json", d + "/public.json", gpu=True)
print(json.dumps(kernel_cache.compile_stats()))
"""


@pytest.mark.gpu
@pytest.mark.slow
@pytest.mark.skipif(SIMULATOR, reason="the simulator compiles no machine code: nothing to cache")
def test_the_gpu_s_prebuilt_kernels_leave_a_first_prove_nothing_to_compile(tmp_path, monkeypatch):
    """Built with no GPU visible (CUDA_VISIBLE_DEVICES=""), for this GPU's target and the
    CPU (or $NUMBA_CUZK_TEST_ARCHIVE, built so already); installed in a fresh folder; a
    2^14 prove of a zkey on the GPU compiles nothing."""
    from numba_cuzk.commands.compile import device_target

    out = Path(os.environ.get("NUMBA_CUZK_TEST_ARCHIVE") or tmp_path / "kernels.tar.gz")
    if not out.is_file():
        build = (f"from pathlib import Path; from numba_cuzk.commands import prebuilt; "
                 f"print(prebuilt.build(['cpu', {device_target()!r}], Path({str(out)!r})))")
        env = {k: v for k, v in os.environ.items() if k != "NUMBA_ENABLE_CUDASIM"} | {"CUDA_VISIBLE_DEVICES": ""}
        done = subprocess.run([sys.executable, "-c", build], cwd=ROOT, env=env, capture_output=True, text=True,
                              timeout=1800)
        assert done.returncode == 0, done.stderr
    _install(out, tmp_path / "fresh", monkeypatch, prebuilt.sha256_file(out))
    key, _ = prebuilt._key_and_witness(tmp_path)
    stats, _ = run(PROVE.replace("sys.argv[1]", repr(str(tmp_path))), tmp_path / "fresh")
    assert stats["compiled"] == 0 and stats["loaded"] > 0, stats
