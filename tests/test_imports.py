"""A process imports what its path needs: the header readers, the timeline's schema, the
file helpers and the daemon's client load no numba; the CLI's CPU prove path loads none
of the GPU-only modules; every module that imports numba applies numba_cuzk._compat
first (numpy 2.5 lacks the row_stack numba-cuda calls: no kernel compiles unpatched)."""

from __future__ import annotations

import ast
import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
PACKAGE = REPO / "numba_cuzk"

# module -> names it must give without loading numba
LIGHT_IMPORTS = {
    "numba_cuzk": [],
    "numba_cuzk.events": ["TimelineWriter"],
    "numba_cuzk.fileio": ["atomic_files", "check_readable"],
    "numba_cuzk.groth16.formats": ["read_shape", "read_wtns_size"],
    "numba_cuzk.groth16.formats.headers": ["read_shape", "read_wtns_size"],
    "numba_cuzk.groth16.shape": ["KeyShape"],
    "numba_cuzk.engine": [],
    "numba_cuzk.engine.config": ["EngineConfig"],
    "numba_cuzk.cli": ["app"],
    "numba_cuzk.serve.client": ["ProverClient"],  # the daemon's client
    "numba_cuzk.serve.client_cli": ["main", "wants_client"],
    "numba_cuzk.serve.protocol": ["parse_address"],
    "numba_cuzk.launch": ["main"],  # the entry point, before it hands a command to the CLI
}
# modules only the GPU backend, setup or the engine use: the CPU prove path loads none
NOT_ON_THE_CPU_PROVE_PATH = ("numba_cuzk.groth16.setup", "numba_cuzk.curve.fixed_base", "numba_cuzk.engine.engine",
                             "numba_cuzk.engine.gpu", "numba_cuzk.cluster", "numba_cuzk.circuits.builtin",
                             "numba_cuzk.timeline.analysis", "numba_cuzk.engine.precompile")


def _subprocess(code: str) -> dict:
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, cwd=REPO)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.splitlines()[-1])


def _exists(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except ModuleNotFoundError:  # its package is missing too
        return False


@pytest.mark.parametrize("module", [m for m in LIGHT_IMPORTS if _exists(m)])
def test_light_modules_import_no_numba(module):
    names = ", ".join(LIGHT_IMPORTS[module])
    line = f"from {module} import {names}" if names else f"import {module}"
    loaded = _subprocess(f"import json, sys\n{line}\nprint(json.dumps(sorted(sys.modules)))")
    assert not [m for m in loaded if m == "numba" or m.startswith("numba.")], f"{module} loads numba"


def test_the_cpu_prove_path_imports_no_gpu_only_module(tmp_path):
    """The modules `prove --cpu` loads, up to the proof (the CLI's imports and prove_files'
    own), read without running a proof."""
    loaded = _subprocess("import json, sys\nimport numba_cuzk.cli\n"
                         "from numba_cuzk.groth16.formats import read_wtns, read_zkey, write_proof_pair\n"
                         "from numba_cuzk.groth16.key_checks import load_checked_key\n"
                         "from numba_cuzk.groth16.prove import Prover\n"
                         "print(json.dumps(sorted(sys.modules)))")
    assert "numba_cuzk.groth16.prove" in loaded  # the check reads what it should
    for module in NOT_ON_THE_CPU_PROVE_PATH:
        assert module not in loaded, f"the CPU prove path loads {module}"


def _top_level_numba_imports(tree: ast.Module) -> list[int]:
    """Line numbers of the module-level statements importing numba (or the kernel decorators)."""
    lines = []
    for node in tree.body:
        if isinstance(node, ast.Import) and any(a.name.split(".")[0] == "numba" for a in node.names):
            lines.append(node.lineno)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module and (
                node.module.split(".")[0] == "numba" or node.module == "numba_cuzk.kernel_cache"):
            lines.append(node.lineno)
    return lines


def _compat_line(tree: ast.Module) -> int | None:
    for node in tree.body:
        if isinstance(node, ast.ImportFrom) and node.module == "numba_cuzk" and any(
                a.name == "_compat" for a in node.names):
            return node.lineno
    return None


def unpatched_numba_imports(source: str) -> list[int]:
    """Top-level numba imports of ``source`` not preceded by ``from numba_cuzk import _compat``."""
    tree = ast.parse(source)
    first = _compat_line(tree)
    return [line for line in _top_level_numba_imports(tree) if first is None or line < first]


def test_every_numba_import_is_patched_first():
    exempt = {"_compat.py", "kernel_cache.py"}  # the patches themselves; numba imported inside functions
    bad = {str(path.relative_to(REPO)): lines for path in sorted(PACKAGE.rglob("*.py")) if path.name not in exempt
           and (lines := unpatched_numba_imports(path.read_text()))}
    assert not bad, f"numba imported before numba_cuzk._compat: {bad}"


@pytest.mark.parametrize(("source", "bad"), [
    ("from numba import cuda\n", True),
    ("import numba\nfrom numba_cuzk import _compat\n", True),
    ("from numba_cuzk.kernel_cache import cpu_kernel\n", True),
    ("from numba_cuzk import _compat\nfrom numba import cuda\n", False),
    ("import numpy\n", False),
    ("def f():\n    from numba import cuda\n", False),  # at call time: some module patched numba by then
])
def test_the_patch_check_catches_an_unpatched_import(source, bad):
    assert bool(unpatched_numba_imports(source)) == bad


def test_a_machine_without_a_gpu_driver_never_loads_numba_cuda():
    """backend.cuda_available() is False where libcuda does not load, and numba.cuda (~0.4 s
    to import) stays unloaded: the CPU backend's processes on a machine without a GPU."""
    import ctypes

    try:
        ctypes.CDLL("libcuda.so.1")
        pytest.skip("this machine has a CUDA driver")
    except OSError:
        pass
    code = ("import json, os\nos.environ.pop('NUMBA_ENABLE_CUDASIM', None)\n"
            "from numba_cuzk import _compat, backend\n"
            "print(json.dumps([backend.cuda_available(), backend.backend_name(), _compat.cuda_loaded()]))")
    assert _subprocess(code) == [False, "cpu", False]


def test_a_gpu_proves_reads_start_no_cpu_kernel(tmp_path):
    """A GPU prove reads its key (2^15 coefficients) and witness (2^15 wires) without numba's
    CPU target: its start (runtime, first cached kernel) was 50-150 ms of a GPU one-shot."""
    from dataclasses import replace

    import numpy as np

    from numba_cuzk.field.params import FR
    from numba_cuzk.groth16.formats import write_wtns, write_zkey
    from numba_cuzk.groth16.keys import Coefficients
    from tests.groth16.test_formats import random_key

    k, rng = 1 << 15, np.random.default_rng(5)
    key = random_key()
    value = rng.integers(0, 1 << 32, (FR.limbs, k), dtype=np.uint32)
    value[-1] &= 0x0FFFFFFF  # < r: its top limb is 0x73eda753
    write_zkey(tmp_path / "k.zkey", replace(key, coefficients=Coefficients(
        np.zeros(k, np.uint8), np.zeros(k, np.uint32), np.zeros(k, np.uint32), value)))
    witness = rng.integers(0, 1 << 32, (FR.limbs, k), dtype=np.uint32)
    witness[-1] &= 0x0FFFFFFF
    write_wtns(tmp_path / "w.wtns", witness)
    started = _subprocess(
        "import json\nfrom numba.core.runtime import nrt\nfrom numba_cuzk import kernel_cache\n"
        "from numba_cuzk.groth16.formats import read_wtns, read_zkey\n"
        f"pk, w = read_zkey({str(tmp_path / 'k.zkey')!r}), read_wtns({str(tmp_path / 'w.wtns')!r})\n"
        "assert pk.coefficients.value.shape[1] == w.shape[1] == 1 << 15\n"
        "print(json.dumps({'runtime': nrt.rtsys._init,\n"
        "                  'kernels': [k.py_func.__name__ for k in kernel_cache._KERNELS if k.overloads]}))")
    assert started == {"runtime": False, "kernels": []}
