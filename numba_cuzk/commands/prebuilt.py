"""Prebuilt kernels: a kernel cache folder built once (``build``: for the CPU and for
GPUs of several kinds, on a machine that needs no GPU), packed as one archive, and
installed on another machine (``install``) after checking it by hash.

The archive (.tar.gz) holds ``manifest.json`` and ``kernels/<path>``, the files of one
version's folder (kernel_cache.cache_dir()). The manifest names the folder's key, the
versions it hashes (kernel_cache.versions()), the targets, the CPU's ISA level and each
file's SHA-256. ``install`` refuses an archive whose key is not this installation's (other
sources or versions: its entries would never be found) and any file whose hash differs,
and merges each index with the one already there, so that kernels compiled here stay.
It records what it installed (kernel_report.PREBUILT_MANIFEST) for ``info --kernels``
and marks each GPU target complete, so that the first run does not compile them again.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import os
import pickle
import shutil
import subprocess
import sys
import tarfile
import tempfile
import urllib.parse
import urllib.request
from collections.abc import Callable
from pathlib import Path

from numba_cuzk import kernel_cache
from numba_cuzk.commands import ahead
from numba_cuzk.commands import compile as tasks
from numba_cuzk.commands.kernel_report import PREBUILT_MANIFEST

FORMAT = 1
_KEY_LOG = 14  # the zkey whose `numba-cuzk prove` the GPU signatures are recorded along


def sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _cache_files(folder: Path) -> list[Path]:
    """The entries and indexes of a version's folder, without locks, temporaries or markers."""
    return sorted(p for p in folder.rglob("*") if p.is_file() and p.suffix in (".nbi", ".nbc"))


def pack(folder: Path, out: Path, targets: list[str]) -> str:
    """Write ``folder`` (a version's cache folder) as the archive ``out``; its SHA-256."""
    files = {p.relative_to(folder).as_posix(): sha256_file(p) for p in _cache_files(folder)}
    isa = kernel_cache.cpu_isa()
    manifest = {"format": FORMAT, "key": folder.name, "versions": kernel_cache.versions(), "targets": targets,
                "cpu_isa": isa[0] if isa else "host", "files": files}
    out.parent.mkdir(parents=True, exist_ok=True)
    partial = out.with_name(out.name + ".partial")
    with tarfile.open(partial, "w:gz") as tar:
        data = json.dumps(manifest, indent=1).encode()
        info = tarfile.TarInfo("manifest.json")
        info.size = len(data)
        tar.addfile(info, io.BytesIO(data))
        for relative in files:
            tar.add(folder / relative, arcname=f"kernels/{relative}", recursive=False)
    os.replace(partial, out)
    return sha256_file(out)


def _key_and_witness(folder: Path) -> tuple[str, str]:
    """A 2^_KEY_LOG MiMC zkey and witness in ``folder``, made on the CPU backend in a child
    process (its CPU kernels land in the cache being built)."""
    script = ("import sys; from numba_cuzk.circuits import build; from numba_cuzk.groth16.files import setup_files; "
              "from numba_cuzk.groth16.formats.wtns import write_wtns; "
              f"r1cs, witness = build('mimc', {_KEY_LOG}); d = sys.argv[1]; "
              "setup_files(r1cs, d + '/key.zkey', d + '/vk.json', gpu=False, replace=True); "
              "write_wtns(d + '/witness.wtns', witness)")
    subprocess.run([sys.executable, "-c", script, str(folder)], check=True, capture_output=True, text=True)
    return str(folder / "key.zkey"), str(folder / "witness.wtns")


def _gpu_tasks(signatures: dict, targets: tuple[str, ...]) -> list[tasks.Task]:
    """A task per heavy kernel and per group of light ones (as ``numba-cuzk compile``
    splits them), each compiling its kernels' recorded signatures for ``targets``."""
    heavy = [f"{kind}_{curve}" for curve in ("g2", "g1") for kind in tasks._HEAVY_GPU]
    groups = {name: frozenset({name}) for name in heavy} | tasks._light_groups()
    return [tasks.Task(f"{name}@ahead", ahead.compile_ahead, (names, signatures, targets))
            for name, names in groups.items() if any(n in signatures for n in names)]


def build(targets: list[str], out: Path, *, processes: int | None = None,
          on_stage: Callable[[str, int], None] | None = None,
          on_done: Callable[[tasks.TaskResult], None] | None = None) -> str:
    """Build the kernels for ``targets`` ("cpu", "sm_80", ...) in a fresh folder, no GPU
    needed, and pack them as the archive ``out``; its SHA-256. ``on_stage(name, tasks)``
    hears of each stage before it runs, ``on_done`` of each task as it ends."""
    gpus = tuple(t for t in targets if t != "cpu")
    for target in gpus:
        ahead.parse_target(target)
    key = kernel_cache.source_key()  # each child process keys its own saves: the sources must not change
    with tempfile.TemporaryDirectory(prefix="numba-cuzk-build-") as tmp:
        work = Path(tmp)
        with tasks.environment({"NUMBA_CUZK_CACHE_DIR": str(work / "cache")}):  # the children's folder
            if "cpu" in targets:
                cpu = tasks._tasks(gpu=False)
                if on_stage:
                    on_stage("CPU kernels", len(cpu))
                tasks.run_tasks(cpu, processes, on_done)
            if gpus:
                if on_stage:
                    on_stage("recording the GPU kernels' launches (simulator)", 0)
                zkey, witness = _key_and_witness(work)
                signatures = ahead.signatures_in_simulator(zkey, witness, scratch_cache=str(work / "scratch"))
                gpu = _gpu_tasks(signatures, gpus)
                if on_stage:
                    on_stage(f"GPU kernels for {', '.join(gpus)}", len(gpu))
                tasks.run_tasks(gpu, processes, on_done)
            if kernel_cache.source_key() != key:
                raise ValueError("the package's sources changed during the build (kernel cache key "
                                 f"{key} -> {kernel_cache.source_key()}): its processes saved their kernels under "
                                 "different keys; build again, with the sources left as they are until it ends")
            return pack(work / "cache" / key, out, list(targets))


def fetch(source: str, destination: Path) -> Path:
    """Copy ``source`` (a path, or a file:, http: or https: URL) to ``destination``."""
    scheme = urllib.parse.urlparse(source).scheme
    if scheme in ("", "file") or len(scheme) == 1:  # a path (a Windows drive letter is a "scheme")
        path = Path(urllib.parse.unquote(urllib.parse.urlparse(source).path) if scheme == "file" else source)
        if not path.is_file():
            raise ValueError(f"{source}: no such archive")
        shutil.copyfile(path, destination)
    elif scheme in ("http", "https"):
        with urllib.request.urlopen(source, timeout=60) as response, open(destination, "wb") as f:
            shutil.copyfileobj(response, f)
    else:
        raise ValueError(f"{source}: expected a path or a file:, http: or https: URL")
    return destination


def _index_file(path: Path, cuda: bool):
    """numba's (or numba-cuda's) IndexDataCacheFile for the index at ``path``."""
    if cuda:
        from numba.cuda.core.caching import IndexDataCacheFile
    else:
        from numba.core.caching import IndexDataCacheFile
    return IndexDataCacheFile(str(path.parent), path.name.removesuffix(".nbi"), kernel_cache.source_key())


def _overloads(data: bytes) -> dict:
    """The {key: data file} of an index file's bytes (numba's format: version, then (stamp, overloads))."""
    stream = io.BytesIO(data)
    pickle.load(stream)
    return pickle.loads(stream.read())[1]


def _merge_index(target: Path, archived: dict, read: Callable[[str], bytes]) -> dict[str, str]:
    """Add the archive's entries ``archived`` ({key: data name}) to the index at ``target``
    under its lock, keeping the entries already there; each data file takes a number the
    index does not use. Returns {data file written (relative to the folder): its hash}."""
    cuda = any(len(key[1]) == 2 and isinstance(key[1][1], tuple) for key in archived)
    cache_file = _index_file(target, cuda)
    written = {}
    target.parent.mkdir(parents=True, exist_ok=True)
    with kernel_cache._index_lock(str(target)):
        overloads = cache_file._load_index()
        used = set(overloads.values())
        for key, name in archived.items():
            if key in overloads:
                continue  # compiled here already
            data = read(name)
            if name in used:
                name = next(n for n in map(cache_file._data_name, range(1, 1 << 20)) if n not in used)
            with cache_file._open_for_write(str(target.parent / name)) as f:
                f.write(data)
            used.add(name)
            overloads[key] = name
            written[name] = hashlib.sha256(data).hexdigest()
        cache_file._save_index(overloads)
    return written


def install(archive: Path, expected_sha256: str | None = None) -> dict:
    """Install the archive's kernels into this version's cache folder, after checking the
    archive's hash (when given), its key and each file's hash; returns its manifest with
    "installed" (entries added) and "kept" (entries that were there already)."""
    digest = sha256_file(archive)
    if expected_sha256 is not None and digest != expected_sha256.lower():
        raise ValueError(f"{archive}: SHA-256 {digest}, expected {expected_sha256}: refusing it")
    try:
        tar = tarfile.open(archive, "r:gz")
    except (tarfile.TarError, OSError) as exc:
        raise ValueError(f"{archive}: not a kernels archive ({exc})") from exc
    with tar:
        manifest = _read_manifest(tar, archive)
        files = manifest["files"]

        def read(relative: str) -> bytes:
            member = tar.getmember(f"kernels/{relative}")
            data = tar.extractfile(member).read()
            if hashlib.sha256(data).hexdigest() != files.get(relative):
                raise ValueError(f"{archive}: {relative} does not match its manifest's SHA-256: refusing it")
            return data

        folder = kernel_cache.cache_dir()
        installed: dict[str, str] = {}
        kept = 0
        for relative in sorted(r for r in files if r.endswith(".nbi")):
            archived = _overloads(read(relative))
            base = Path(relative).parent
            written = _merge_index(folder / relative, archived, lambda name: read((base / name).as_posix()))
            kept += len(archived) - len(written)
            installed.update({(base / name).as_posix(): h for name, h in written.items()})
    _record(folder, manifest, digest, installed)
    return manifest | {"sha256": digest, "installed": len(installed), "kept": kept}


def _read_manifest(tar: tarfile.TarFile, archive: Path) -> dict:
    try:
        manifest = json.load(tar.extractfile("manifest.json"))
    except (KeyError, ValueError) as exc:
        raise ValueError(f"{archive}: no readable manifest.json ({exc})") from exc
    if manifest.get("format") != FORMAT:
        raise ValueError(f"{archive}: archive format {manifest.get('format')}, this numba-cuzk reads {FORMAT}")
    here = kernel_cache.source_key()
    if manifest.get("key") != here:
        ours = kernel_cache.versions()
        differ = [f"{name} {manifest.get('versions', {}).get(name)} there, {v} here" for name, v in ours.items()
                  if manifest.get("versions", {}).get(name) != v]
        why = "; ".join(differ) or "the package's sources differ"
        raise ValueError(f"{archive}: built for kernel cache key {manifest.get('key')}, this installation's is "
                         f"{here} ({why}): its kernels would never be found")
    for relative in manifest["files"]:
        if relative.startswith("/") or ".." in Path(relative).parts:
            raise ValueError(f"{archive}: unsafe path {relative!r} in its manifest: refusing it")
    return manifest


def _record(folder: Path, manifest: dict, digest: str, installed: dict[str, str]) -> None:
    """Note the installed entries for info --kernels and mark each GPU target complete."""
    record_path = folder / PREBUILT_MANIFEST
    with contextlib.suppress(OSError, ValueError):
        previous = json.loads(record_path.read_text())
        installed = previous.get("files", {}) | installed
    record = {"archive_sha256": digest, "targets": manifest["targets"], "cpu_isa": manifest.get("cpu_isa"),
              "files": installed}
    record_path.write_text(json.dumps(record, indent=1))
    for target in manifest["targets"]:
        if target != "cpu":
            (folder / tasks.compiled_marker(target)).touch()
