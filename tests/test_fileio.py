"""fileio: atomic writes (whole or not at all) and the checks that run before any work."""

from __future__ import annotations

import os
import stat

import pytest

from numba_cuzk.fileio import InputError, atomic_write, check_folder, check_readable, check_writable, naming


def _temporaries(folder) -> list[str]:
    return [p.name for p in folder.iterdir() if p.name.endswith(".tmp")]


def test_atomic_write_replaces_whole(tmp_path):
    path = tmp_path / "proof.json"
    path.write_text("old")
    with atomic_write(path, "w") as f:
        f.write("new")
        assert path.read_text() == "old"  # nothing reaches the target before the rename
    assert path.read_text() == "new" and not _temporaries(tmp_path)
    assert stat.S_IMODE(path.stat().st_mode) == 0o666 & ~_umask()  # not mkstemp's private 0600


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def test_a_failed_write_leaves_the_old_file(tmp_path):
    path = tmp_path / "key.zkey"
    path.write_bytes(b"old")
    with pytest.raises(RuntimeError, match="broke"):
        with atomic_write(path) as f:
            f.write(b"half of a new ")
            raise RuntimeError("broke")
    assert path.read_bytes() == b"old" and not _temporaries(tmp_path)


def test_an_os_error_in_the_write_names_the_file(tmp_path):
    path = tmp_path / "key.zkey"
    with pytest.raises(OSError) as caught:
        with atomic_write(path):
            raise OSError(27, "File too large")
    assert caught.value.filename == str(path) and not path.exists()


def test_no_replace_refuses_an_existing_file(tmp_path):
    path = tmp_path / "key.zkey"
    with atomic_write(path, replace=False) as f:
        f.write(b"first")
    with pytest.raises(FileExistsError):
        with atomic_write(path, replace=False) as f:
            f.write(b"second")
    assert path.read_bytes() == b"first" and not _temporaries(tmp_path)


def test_checks_name_the_path(tmp_path):
    file = tmp_path / "file"
    file.write_text("")
    with pytest.raises(InputError, match="missing: no such witness"):
        check_readable(tmp_path / "missing", "witness")
    with pytest.raises(InputError, match="not a file"):
        check_readable(tmp_path)
    with pytest.raises(InputError, match="not a folder"):
        check_folder(file)
    with pytest.raises(InputError, match="is a folder, not a file"):
        check_writable(tmp_path)
    with pytest.raises(InputError, match="already exists"):
        check_writable(file, replace=False)
    with pytest.raises(InputError, match="exists and is not a folder"):
        check_writable(file, folder=True)
    with pytest.raises(InputError, match="is not a folder"):
        check_writable(file / "out", folder=True)
    assert check_writable(tmp_path / "new" / "deeper", folder=True) == tmp_path / "new" / "deeper"
    readonly = tmp_path / "ro"
    readonly.mkdir()
    readonly.chmod(0o500)
    if os.access(readonly, os.W_OK):
        pytest.skip("running as a user who may write anywhere")
    with pytest.raises(InputError, match="cannot write in"):
        check_writable(readonly / "proof.json")


def test_naming_prefixes_errors_with_the_path(tmp_path):
    with pytest.raises(InputError, match=r"^w.wtns: wtns section 2: bad$"):
        with naming("w.wtns"):
            raise ValueError("wtns section 2: bad")
    with pytest.raises(InputError, match=r"^w.wtns: already named$"):
        with naming("w.wtns"):
            raise ValueError("w.wtns: already named")
    with pytest.raises(InputError, match="missing: No such file"):
        with naming("x"):
            open(tmp_path / "missing")
