"""The outside judge's tools from npm: circom2 (circom compiled to WebAssembly),
circomlib and snarkjs, pinned in .ci/node/package.json and installed by .ci/run with
``npm ci --prefix .ci/node``. Used by tests/interop and bench/snarkjs.py.

    tools = NodeTools.find()             # NodeTools, or a str saying why not
    NodeTools.find(("snarkjs",))         # snarkjs alone (a host given the circuits' files, the H200)
    tools.circom2(circuit, out_dir)      # out_dir/<name>.r1cs, out_dir/<name>_js/<name>.wasm
    tools.snarkjs("groth16", "verify", vk, public, proof, check=False).returncode
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
NODE_MODULES_ENV = "NUMBA_CUZK_NODE_MODULES"  # .ci/run exports it
DEFAULT_NODE_MODULES = REPO / ".ci" / "node" / "node_modules"
PACKAGES = ("circom2", "circomlib", "snarkjs")
INSTALL_HINT = f"run `npm ci --prefix .ci/node` (as .ci/run does) or set ${NODE_MODULES_ENV}"
TIMEOUT_S = 600


@dataclass(frozen=True)
class NodeTools:
    node_modules: Path

    @classmethod
    def find(cls, packages: tuple[str, ...] = PACKAGES) -> NodeTools | str:
        """The tools under $NUMBA_CUZK_NODE_MODULES or .ci/node/node_modules with ``packages``
        installed, or why not."""
        node_modules = Path(os.environ.get(NODE_MODULES_ENV) or DEFAULT_NODE_MODULES).resolve()
        if not shutil.which("node"):
            return "no `node` on PATH"
        tools = cls(node_modules)
        missing = [p for p in packages if not tools.has(p)]
        if missing:
            return f"{', '.join(missing)} not installed under {node_modules}: {INSTALL_HINT}"
        return tools

    def has(self, package: str) -> bool:
        return (self.node_modules / package / "package.json").is_file()

    def version(self, package: str) -> str:
        return json.loads((self.node_modules / package / "package.json").read_text())["version"]

    def snarkjs(self, *args, cwd: Path | None = None, check: bool = True) -> subprocess.CompletedProcess:
        return _run([str(self.node_modules / ".bin" / "snarkjs"), *map(str, args)], cwd, check)

    def circom2(self, circuit: Path, out_dir: Path) -> subprocess.CompletedProcess:
        """Compile for BLS12-381 to an R1CS and a WebAssembly witness generator. circom2
        runs under WASI and cannot follow an include path with `..`, so it runs from the
        folder that holds node_modules with `-l node_modules` (its cli.js makes the other
        paths relative to that folder, which it can follow)."""
        out_dir.mkdir(parents=True, exist_ok=True)
        return _run([str(self.node_modules / ".bin" / "circom2"), str(circuit), "--r1cs", "--wasm", "--prime",
                     "bls12381", "-l", "node_modules", "-o", str(out_dir)], self.node_modules.parent, True)


def _run(cmd: list[str], cwd: Path | None, check: bool) -> subprocess.CompletedProcess:
    """Run ``cmd``; with ``check``, a failure raises RuntimeError quoting its output."""
    proc = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=TIMEOUT_S)
    if check and proc.returncode:
        raise RuntimeError(f"{' '.join(cmd)} exited {proc.returncode}:\n{proc.stdout[-2000:]}\n{proc.stderr[-2000:]}")
    return proc
