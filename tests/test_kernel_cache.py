"""The kernel cache (numba_cuzk/kernel_cache.py): a second process compiles nothing, an
edit of the sources starts a new folder, an unwritable folder still computes, with one
warning. Each case runs fresh Python processes on the CPU backend (the simulator has no
machine code to cache); ``-m gpu`` repeats the first on the GPU."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from numba_cuzk import kernel_cache
from tests.conftest import SIMULATOR
from tests.engine.keys import prove_stored

ROOT = Path(__file__).resolve().parents[1]

PROOF = """
import json
from numba_cuzk import _compat, kernel_cache
from tests.engine.keys import prove_stored
prove_stored(gpu={gpu})
print(json.dumps(kernel_cache.compile_stats() | {{"folder": str(kernel_cache.cache_dir()),
                                                  "cuda_loaded": _compat.cuda_loaded()}}))
"""

CONVERSION = """
import json
import numpy as np
from numba_cuzk import kernel_cache
from numba_cuzk.field import codec
from numba_cuzk.field.params import FR
codec.to_montgomery(codec.to_limbs(range(codec.KERNEL_MIN), FR), FR)  # large enough for the kernel
print(json.dumps(kernel_cache.compile_stats() | {"folder": str(kernel_cache.cache_dir())}))
"""

CONVERSIONS = """
import json
from numba_cuzk import kernel_cache
from numba_cuzk.field import codec
from numba_cuzk.field.params import FQ, FR
for field in (FR, FQ):  # four kernels: into and out of Montgomery form, in each field
    limbs = codec.to_limbs(range(codec.KERNEL_MIN), field)
    codec.from_montgomery(codec.to_montgomery(limbs, field), field)
print(json.dumps(kernel_cache.compile_stats() | {"folder": str(kernel_cache.cache_dir())}))
"""


def run(script: str, cache: Path, root: Path = ROOT, simulator: bool = False) -> tuple[dict, str]:
    """Run ``script`` in a fresh interpreter importing numba_cuzk from ``root``; its last
    stdout line (JSON) and its stderr."""
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_ENABLE_CUDASIM"}
    path = os.pathsep.join([str(root), os.environ.get("PYTHONPATH", "")])  # the rest: wheels beside (the H200's)
    env.update(NUMBA_CUZK_CACHE_DIR=str(cache), PYTHONPATH=path, PYTHONWARNINGS="default")
    if simulator:
        env["NUMBA_ENABLE_CUDASIM"] = "1"
    done = subprocess.run([sys.executable, "-c", script], env=env, cwd=root, capture_output=True, text=True,
                          timeout=900)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1]), done.stderr


def test_second_process_compiles_nothing():
    """A proof's CPU kernels, once compiled into the folder (here by this test process,
    which checks and proves the stored key's circuit as PROOF does, or had them already),
    are all a fresh process needs: it loads them and compiles none, and it never loads
    numba.cuda (_compat item 7). (Compiling them into an empty folder in a first fresh
    process cost CI ~130 s; the compile into an empty folder is the next two cases'.)"""
    prove_stored(gpu=False)
    second, _ = run(PROOF.format(gpu=False), kernel_cache.cache_root())
    assert second["folder"] == str(kernel_cache.cache_dir())  # the folder this process compiled into
    assert second["compiled"] == 0 and second["loaded"] > 0, second
    assert second["cuda_loaded"] is False, "a proof on the CPU loaded numba.cuda"


@pytest.mark.gpu
@pytest.mark.slow  # the first process compiles a proof's kernels into an empty folder: 95-190 s on the H200
@pytest.mark.skipif(SIMULATOR, reason="the simulator compiles no machine code: nothing to cache")
def test_second_process_compiles_nothing_on_the_gpu(tmp_path):
    first, _ = run(PROOF.format(gpu=True), tmp_path)
    assert first["compiled"] > 0
    second, _ = run(PROOF.format(gpu=True), tmp_path)
    assert second["compiled"] == 0, second


def test_an_edit_of_a_device_function_starts_a_new_folder(tmp_path):
    shutil.copytree(ROOT / "numba_cuzk", tmp_path / "src" / "numba_cuzk",
                    ignore=shutil.ignore_patterns("__pycache__"))
    cache = tmp_path / "cache"
    before, _ = run(CONVERSION, cache, tmp_path / "src")
    assert before["compiled"] > 0
    again, _ = run(CONVERSION, cache, tmp_path / "src")
    assert again["compiled"] == 0
    mont = tmp_path / "src" / "numba_cuzk" / "field" / "mont.py"  # not the kernel's own file
    mont.write_text(mont.read_text() + "\n# an edit\n")
    after, _ = run(CONVERSION, cache, tmp_path / "src")
    assert after["folder"] != before["folder"]
    assert after["compiled"] > 0


def test_an_unwritable_cache_folder_still_computes_with_one_warning(tmp_path):
    """Four kernels compiled, none kept, one warning (a whole proof's ~30 cost CI ~90 s)."""
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    stats, stderr = run(CONVERSIONS, blocker / "cache")
    assert stats["compiled"] == 4 and stats["loaded"] == 0, stats
    assert stderr.count("cannot be written") == 1, stderr


def test_source_key_covers_every_source_file(tmp_path):
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "a.py").write_text("x = 1\n")
    key = kernel_cache.source_key(tmp_path / "pkg")
    assert kernel_cache.source_key(tmp_path / "pkg") == key
    (tmp_path / "pkg" / "b.py").write_text("")
    assert kernel_cache.source_key(tmp_path / "pkg") != key


def test_cache_root_follows_the_environment(monkeypatch, tmp_path):
    monkeypatch.setenv("NUMBA_CUZK_CACHE_DIR", str(tmp_path / "c"))
    assert kernel_cache.cache_root() == tmp_path / "c"
    monkeypatch.delenv("NUMBA_CUZK_CACHE_DIR")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert kernel_cache.cache_root() == tmp_path / "xdg" / "numba-cuzk"


def template(x):
    return offset + x  # noqa: F821 (bound by specialize)


def test_specialize_binds_free_names_per_instance():
    plus_one = kernel_cache.specialize(template, "plus_one", offset=1)
    plus_two = kernel_cache.specialize(template, "plus_two", offset=2)
    assert (plus_one(1), plus_two(1)) == (2, 3)
    assert plus_one.__qualname__ == "plus_one" and plus_one.__code__ is template.__code__
    assert plus_one.__closure__ is None  # nothing for numba's key to pickle


def _save_signatures(cache_file, first: int, count: int, start) -> None:
    """One compile process: ``count`` signatures of one function saved, each twice."""
    start.wait()
    for i in range(first, first + count):
        for _ in range(2):
            cache_file.save(("signature", i), i)


@pytest.mark.parametrize("caching_module", ["numba.core.caching", "numba.cuda.core.caching"])
def test_processes_saving_one_function_side_by_side_keep_each_signature_its_own_code(
        caching_module, monkeypatch, tmp_path):
    # numba's unlocked save lets two processes both write ".1.nbc" and the index name the
    # other signature's code
    import importlib
    import multiprocessing

    caching = importlib.import_module(caching_module)
    monkeypatch.setenv("NUMBA_CUZK_CACHE_DIR", str(tmp_path))
    folder = tmp_path / "key" / "msm"
    folder.mkdir(parents=True)
    cache_file = caching.IndexDataCacheFile(str(folder), "kernels.accumulate-1.py311", "stamp")
    context = multiprocessing.get_context("fork")
    processes, per_process = 6, 5
    start = context.Barrier(processes)
    workers = [context.Process(target=_save_signatures, args=(cache_file, p * per_process, per_process, start))
               for p in range(processes)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(60)
        assert worker.exitcode == 0
    for i in range(processes * per_process):
        assert cache_file.load(("signature", i)) == i, f"signature {i}"



MANGLED_NAME = """
import numba_cuzk._compat  # what every module of the package that imports numba runs first
from numba import njit
@njit
def double(x):
    return 2 * x
double(1)
print(next(iter(double.overloads.values())).fndesc.mangled_name)
"""


def test_two_processes_give_one_function_different_mangled_names():
    # a callee linked into a cached entry keeps its mangled name, which numba numbers per
    # process: two processes' different functions could share one, and the linker kept
    # one of them (G2 MSMs on the CPU that returned the identity after a parallel compile)
    names = {subprocess.run([sys.executable, "-c", MANGLED_NAME], capture_output=True, text=True, cwd=ROOT,
                            check=True).stdout.strip().splitlines()[-1] for _ in range(2)}
    assert len(names) == 2, names


def test_cpu_kernels_target_a_portable_isa_unless_told(monkeypatch):
    import platform

    from llvmlite import binding

    monkeypatch.delenv("NUMBA_CPU_NAME", raising=False)
    monkeypatch.delenv(kernel_cache.CPU_ISA_ENV, raising=False)
    monkeypatch.setattr(platform, "machine", lambda: "x86_64")
    features = {name: True for name in kernel_cache._PORTABLE_FEATURES} | {"avx512f": True}
    monkeypatch.setattr(binding, "get_host_cpu_features", lambda: features)
    assert kernel_cache.cpu_isa() == (kernel_cache.PORTABLE_CPU, "")
    monkeypatch.setattr(binding, "get_host_cpu_features", lambda: features | {"avx2": False})
    assert kernel_cache.cpu_isa() is None  # no AVX2: x86-64-v3 code would not run here
    monkeypatch.setattr(binding, "get_host_cpu_features", lambda: features)
    monkeypatch.setenv(kernel_cache.CPU_ISA_ENV, "host")
    assert kernel_cache.cpu_isa() is None
    monkeypatch.setenv(kernel_cache.CPU_ISA_ENV, "portable")
    monkeypatch.setenv("NUMBA_CPU_NAME", "skylake")  # numba's own setting wins
    assert kernel_cache.cpu_isa() is None
    monkeypatch.delenv("NUMBA_CPU_NAME")
    monkeypatch.setattr(platform, "machine", lambda: "aarch64")
    assert kernel_cache.cpu_isa() is None


def test_the_key_names_python_s_minor_version_not_its_build():
    assert kernel_cache.versions()["python"] == f"cpython-{sys.version_info[0]}.{sys.version_info[1]}"
    assert sys.version not in str(kernel_cache.versions())


LIBRARY_IR = """
@g = global i64 7
declare i64 @h(i64)
define i64 @f(i64 %x) {
  %y = call i64 @h(i64 %x)
  %z = load i64, i64* @g
  %r = add i64 %y, %z
  ret i64 %r
}
define i64 @twice(i64 %x) {
  %r = add i64 %x, %x
  ret i64 %r
}
"""


def test_elf_defined_symbols_reads_an_objects_definitions():
    """What an object defines (a function, a global), not what it only calls; None for
    bytes that are no ELF64 little-endian object."""
    from llvmlite import binding
    from numba.core.registry import cpu_target

    machine = cpu_target.target_context.codegen()._tm  # numba's, its targets initialized
    names = kernel_cache.elf_defined_symbols(machine.emit_object(binding.parse_assembly(LIBRARY_IR)))
    assert {"f", "g", "twice"} <= names and "h" not in names
    assert kernel_cache.elf_defined_symbols(b"\xcf\xfa\xed\xfe" + bytes(60)) is None  # Mach-O


def test_a_cached_library_is_loaded_without_its_bitcode_until_it_is_linked():
    """numba's object cache entry, loaded as the kernel cache loads it (install()): the
    engine finds its functions and runs them, and its bitcode is parsed only when another
    library would link it in."""
    import ctypes

    from numba.core.compiler_lock import global_compiler_lock
    from numba.core.registry import cpu_target

    from numba_cuzk import _compat  # noqa: F401  (install() applied)

    codegen = cpu_target.target_context.codegen()
    with global_compiler_lock:
        library = codegen.create_library("cached_twice")
        library.add_ir_module(_doubling_module("twice_cached"))
        library.enable_object_caching()
        library.finalize()
        state = library.serialize_using_object_code()
        loaded = codegen.unserialize_library(state)
    assert loaded.__dict__.get("_unparsed_bitcode") is not None
    address = loaded.get_pointer_to_function("twice_cached")
    assert address and ctypes.CFUNCTYPE(ctypes.c_int64, ctypes.c_int64)(address)(21) == 42
    linked = loaded._get_module_for_linking()
    assert "_unparsed_bitcode" not in loaded.__dict__
    assert [fn.name for fn in linked.functions if not fn.is_declaration] == ["twice_cached"]


def _doubling_module(name: str):
    from llvmlite import ir

    module = ir.Module(name=name)
    i64 = ir.IntType(64)
    fn = ir.Function(module, ir.FunctionType(i64, [i64]), name=name)
    builder = ir.IRBuilder(fn.append_basic_block())
    builder.ret(builder.add(fn.args[0], fn.args[0]))
    return module
