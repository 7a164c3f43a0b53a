"""Files written whole or not at all, and paths checked before any work.

Every file numba-cuzk writes (proofs, public inputs, keys, verification keys, timelines,
reports, charts) goes through ``atomic_write``: a temporary file in the target's folder
(so the rename never crosses filesystems), flushed and fsynced, renamed over the target,
then the folder fsynced so the rename itself survives a power cut. A process killed at
any point, or a disk that fills up, leaves the previous file intact or the new one
complete, never a partial one (at worst a hidden ``.NAME.*.tmp`` file beside it).

    with atomic_write("proof.json", "w") as f:
        json.dump(proof, f)

The checks (``check_readable``, ``check_writable``, ``check_folder``) raise
``InputError`` naming the path, so a command can refuse bad arguments before it reads a
key or compiles a kernel. Pure Python: below every package.
"""

from __future__ import annotations

import contextlib
import errno
import os
import shutil
import tempfile
from pathlib import Path
from typing import IO, Iterator, Sequence

PathLike = str | os.PathLike
_UMASK = os.umask(0o022)
os.umask(_UMASK)  # read once, at import: umask can only be read by setting it


class InputError(ValueError):
    """A user's file or argument is wrong; the message names it (path, and offset,
    section or index where there is one) and says what is wrong, in one line."""


class AtomicFile:
    """A temporary file beside ``path``: write to ``file``, then ``commit`` (fsync, rename
    over ``path``, fsync the folder) or ``abort`` (remove it). ``replace=False``: commit
    raises FileExistsError if ``path`` exists by then (a hard link, which never
    overwrites, instead of a rename)."""

    def __init__(self, path: PathLike, mode: str = "wb", *, replace: bool = True) -> None:
        if mode not in ("wb", "w"):
            raise ValueError(f"mode {mode!r}: atomic files are written, 'wb' or 'w'")
        self.path, self.replace = Path(path), replace
        fd, temporary = tempfile.mkstemp(dir=self.path.parent, prefix=f".{self.path.name}.", suffix=".tmp")
        self.temporary = Path(temporary)
        os.fchmod(fd, 0o666 & ~_UMASK)  # mkstemp's 0600 would make every written file private
        self.file: IO = os.fdopen(fd, mode, **({"encoding": "utf-8"} if mode == "w" else {}))

    def commit(self) -> None:
        try:
            self.file.flush()
            os.fsync(self.file.fileno())
            self.file.close()
            if self.replace:
                os.replace(self.temporary, self.path)
            else:
                os.link(self.temporary, self.path)
                self.temporary.unlink()
        except BaseException:
            self.abort()
            raise
        _fsync_folder(self.path.parent)

    def abort(self) -> None:
        try:
            self.file.close()
        except OSError:  # flushing what is buffered fails again on a full disk: the file goes anyway
            pass
        self.temporary.unlink(missing_ok=True)


@contextlib.contextmanager
def atomic_write(path: PathLike, mode: str = "wb", *, replace: bool = True) -> Iterator[IO]:
    """A file object whose contents replace ``path`` when the ``with`` body ends without an
    exception (AtomicFile); if it raises, ``path`` is untouched."""
    target = AtomicFile(path, mode, replace=replace)
    try:
        yield target.file
    except OSError as exc:  # a full disk, say: name the file the user asked for
        target.abort()
        if exc.filename is None:
            raise OSError(exc.errno, exc.strerror or str(exc), os.fspath(path)) from exc
        raise
    except BaseException:
        target.abort()
        raise
    try:
        target.commit()
    except OSError as exc:
        if exc.filename is None:
            raise OSError(exc.errno, exc.strerror or str(exc), os.fspath(path)) from exc
        raise


@contextlib.contextmanager
def atomic_files(paths: Sequence[PathLike], mode: str = "wb") -> Iterator[list[IO]]:
    """File objects whose contents replace ``paths`` together, or none of them: each is
    written to a temporary beside its target; when the ``with`` body ends without an
    exception all are fsynced, and only then renamed, in the order given (the last path
    is renamed last). If the body, an fsync or a rename fails, every target that was
    already replaced gets its previous file back (kept as a hard link until all are
    renamed), so a refused or failed write changes none. A process killed between two
    renames cannot be undone: the caller makes the pair checkable (proof.json carries
    public.json's digest: jsonfiles.write_proof_pair)."""
    targets: list[AtomicFile] = []
    try:
        for path in paths:
            targets.append(AtomicFile(path, mode))
        yield [t.file for t in targets]
        for t in targets:
            t.file.flush()
            os.fsync(t.file.fileno())
            t.file.close()
        _rename_all(targets)
    except OSError as exc:
        for t in targets:
            t.abort()
        if exc.filename is None and targets:
            raise OSError(exc.errno, exc.strerror or str(exc), os.fspath(targets[-1].path)) from exc
        raise
    except BaseException:
        for t in targets:
            t.abort()
        raise
    for folder in {t.path.parent for t in targets}:
        _fsync_folder(folder)


def _rename_all(targets: list[AtomicFile]) -> None:
    """Rename each temporary over its target, in order; on a failure, put back the targets
    already replaced (from a link to, or a copy of, each previous file) and raise."""
    backups: list[Path | None] = []
    renamed = 0
    try:
        for t in targets:
            backups.append(_keep_previous(t.path))
            os.replace(t.temporary, t.path)
            renamed += 1
    except BaseException:
        for t, backup in zip(targets[:renamed], backups):
            if backup is None:
                t.path.unlink(missing_ok=True)  # there was no file: there is none again
            else:
                os.replace(backup, t.path)
        for backup in backups[renamed:]:
            if backup is not None:
                backup.unlink(missing_ok=True)
        raise
    for backup in backups:
        if backup is not None:
            backup.unlink(missing_ok=True)


def _keep_previous(path: Path) -> Path | None:
    """``path``'s current file under a hidden name beside it (a hard link; a copy where the
    filesystem has none), or None if there is no file."""
    if not path.exists():
        return None
    backup = path.with_name(f".{path.name}.{os.urandom(6).hex()}.old")  # not secrets: its import (hmac, OpenSSL) is a daemon client's
    try:
        os.link(path, backup)
    except FileExistsError:
        raise
    except OSError:
        shutil.copy2(path, backup)
    return backup


def _fsync_folder(folder: Path) -> None:
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:  # a folder that cannot be opened (some platforms): the rename stands
        return
    try:
        os.fsync(fd)
    except OSError as exc:  # some filesystems refuse fsync on a folder
        if exc.errno not in (errno.EINVAL, errno.EBADF, errno.ENOTSUP):
            raise
    finally:
        os.close(fd)


# --- checks before work ----------------------------------------------------------------

def check_readable(path: PathLike, what: str = "file") -> Path:
    """``path`` exists, is a regular file and can be read; else InputError."""
    path = Path(path)
    if not path.exists():
        raise InputError(f"{path}: no such {what}")
    if not path.is_file():
        raise InputError(f"{path}: not a file")
    if not os.access(path, os.R_OK):
        raise InputError(f"{path}: not readable (permission denied)")
    return path


def check_folder(path: PathLike, what: str = "folder") -> Path:
    """``path`` is an existing, readable folder; else InputError."""
    path = Path(path)
    if not path.exists():
        raise InputError(f"{path}: no such {what}")
    if not path.is_dir():
        raise InputError(f"{path}: not a folder")
    if not os.access(path, os.R_OK | os.X_OK):
        raise InputError(f"{path}: {what} not readable (permission denied)")
    return path


def check_writable(path: PathLike, *, folder: bool = False, replace: bool = True) -> Path:
    """``path`` can be written atomically: its folder exists and takes new files (a
    temporary file is created and removed, which also catches a read-only filesystem).
    ``folder``: ``path`` is a folder to write into, created if missing (its nearest
    existing ancestor must be writable). ``replace=False``: ``path`` must not exist yet."""
    path = Path(path)
    if not replace and path.exists():
        raise InputError(f"{path}: already exists (give --force to replace it)")
    if folder:
        if path.exists() and not path.is_dir():
            raise InputError(f"{path}: exists and is not a folder")
        probe = next(p for p in (path, *path.parents) if p.exists())
    else:
        if path.is_dir():
            raise InputError(f"{path}: is a folder, not a file")
        probe = path.parent
    if not probe.is_dir():
        why = "is not a folder" if probe.exists() else "does not exist"
        raise InputError(f"{path}: cannot write: {probe} {why}")
    try:
        with tempfile.TemporaryFile(dir=probe):
            pass
    except OSError as exc:
        raise InputError(f"{path}: cannot write in {probe}: {exc.strerror or exc}") from exc
    return path


@contextlib.contextmanager
def naming(path: PathLike) -> Iterator[None]:
    """Inside: a ValueError or OSError about the file at ``path`` becomes an InputError
    whose message starts with the path ("zkey section 7 ..." -> "key.zkey: zkey section 7 ...")."""
    try:
        yield
    except InputError:
        raise
    except OSError as exc:
        message = describe_os_error(exc)
        raise InputError(message if exc.filename is not None else f"{path}: {message}") from exc
    except ValueError as exc:
        message = str(exc)
        raise InputError(message if message.startswith(f"{path}:") else f"{path}: {message}") from exc


def describe_os_error(exc: OSError) -> str:
    """One line for an OSError, naming its file: "PATH: No such file or directory"."""
    names = [n for n in (exc.filename, exc.filename2) if n is not None]
    reason = exc.strerror or str(exc) or type(exc).__name__
    return f"{' -> '.join(map(str, names))}: {reason}" if names else reason
