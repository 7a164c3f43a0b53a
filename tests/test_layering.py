"""Imports go one way: field <- curve <- msm, field <- ntt, all <- groth16 <- circuits <- engine
<- commands <- cluster <- serve.

``timeline`` only reads the engine's events: it imports neither numba.cuda nor any compute
package, so timelines can be drawn on a machine without CUDA. ``events`` (the timeline's
schema and writer, shared by engine and timeline) imports no numba at all. Only cli.py
imports everything (and launch.py, the entry point, imports cli and serve's client). Only
cli and launch import serve; serve's client side (``SERVE_CLIENT``) imports no engine, no
numba and no compute package, so a client process starts light. Read with ``ast`` (nothing is imported). Every package and module named
in the rules must exist, and every package must be named in them, so that a renamed
package fails here instead of escaping the check.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE_ROOT = Path(__file__).resolve().parents[1] / "numba_cuzk"

# package -> the packages it may import (besides itself)
ALLOWED = {
    "field": set(),
    "curve": {"field"},
    "ntt": {"field"},
    "msm": {"field", "curve"},
    "groth16": {"field", "curve", "ntt", "msm"},
    "circuits": {"field", "curve", "ntt", "msm", "groth16"},
    "engine": {"field", "curve", "ntt", "msm", "groth16", "circuits"},
    "commands": {"field", "curve", "ntt", "msm", "groth16", "circuits", "engine"},  # the CLI's drivers
    "timeline": set(),
    "serve": {"field", "curve", "ntt", "msm", "groth16", "circuits", "engine", "commands", "timeline"},  # and cluster
}
# serve's modules that a client imports: only each other and fileio, nothing of numba or numpy
SERVE_CLIENT = {f"numba_cuzk.serve.{m}" for m in ("__init__", "protocol", "client", "client_cli", "wire",
                                                  "proving_pb2", "proving_pb2_grpc")}
CLIENT_MAY_IMPORT = {"numba_cuzk", "numba_cuzk.fileio", "numba_cuzk.serve"}
LAYERS = set(ALLOWED)
BASE = {"__init__", "_compat", "backend", "cuda_graph", "events", "fileio", "kernel_cache", "lazy"}  # top-level modules below every layer
NEEDS_CUDA = (LAYERS - {"timeline"}) | {"backend", "cuda_graph"}  # what timeline must not import
RULED_ELSEWHERE = {"cluster"}  # tests/cluster/test_layering.py
CUDA_MODULE = "numba.cuda"


def imported_modules(source: str, module: str) -> set[str]:
    """Absolute names imported by ``source``, the text of dotted module ``module``.

    ``from a import b`` yields both ``a`` and ``a.b`` (b may be a submodule); relative
    imports are resolved against ``module``'s package.
    """
    package = module.split(".")[:-1]
    names = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[: len(package) - (node.level - 1)]
                prefix = ".".join(base + ([node.module] if node.module else []))
            else:
                prefix = node.module
            names.add(prefix)
            names.update(f"{prefix}.{alias.name}" for alias in node.names)
    return names


def violations(module: str, imports: set[str]) -> list[str]:
    """Why ``module`` (e.g. "numba_cuzk.curve.jacobian") breaks the layering, if it does."""
    own = module.split(".")[1]
    if own in ("cli", "launch"):
        return []
    problems = []
    if module in SERVE_CLIENT:
        problems += [f"{module} imports {name}: serve's client side must stay light" for name in sorted(imports)
                     if name.split(".")[0] in ("numba", "numpy", "llvmlite") or (
                         name.startswith("numba_cuzk") and name not in CLIENT_MAY_IMPORT
                         and not name.startswith(("numba_cuzk.serve.", "numba_cuzk.fileio.")))
                     or name in {f"numba_cuzk.serve.{m}" for m in ("server", "keys", "jobs", "metrics")}]
    for name in sorted(imports):
        target = name.split(".")
        if own == "timeline" and (name == CUDA_MODULE or name.startswith(CUDA_MODULE + ".")):
            problems.append(f"{module} imports {name}: timeline must run without CUDA")
        if own == "events" and target[0] == "numba":
            problems.append(f"{module} imports {name}: events is pure Python")
        if target[0] != "numba_cuzk" or len(target) == 1 or target[1] == own:
            continue  # third party, the package root (it runs _compat only), or its own package
        other = target[1]
        if other in ("cli", "launch"):
            problems.append(f"{module} imports {name}: only the CLI imports the CLI")
        elif other == "serve" and own != "serve":
            problems.append(f"{module} imports {name}: only the CLI imports serve")
        elif own in BASE and other in LAYERS:
            problems.append(f"{module} imports {name}: {own} sits below every package")
        elif own == "timeline" and other in NEEDS_CUDA:
            problems.append(f"{module} imports {name}: timeline reads events, imports no compute code")
        elif own in LAYERS and other in LAYERS and other not in ALLOWED[own]:
            problems.append(f"{module} imports {name}: {own} may import only {sorted(ALLOWED[own]) or 'itself'}")
    return problems


def package_modules() -> list[tuple[str, Path]]:
    modules = []
    for path in sorted(PACKAGE_ROOT.rglob("*.py")):
        # "numba_cuzk.field.__init__" keeps relative imports resolving inside the package
        modules.append((".".join(path.relative_to(PACKAGE_ROOT.parent).with_suffix("").parts), path))
    return modules


def test_every_package_is_ruled():
    """A package the rules do not name would import anything unchecked."""
    packages = {p.parent.name for p in PACKAGE_ROOT.glob("*/__init__.py")}
    assert packages - LAYERS - RULED_ELSEWHERE == set(), "add these packages to ALLOWED"


def test_package_is_scanned():
    names = {module for module, _ in package_modules()}
    assert "numba_cuzk.cli" in names and any(m.startswith("numba_cuzk.field.") for m in names)


@pytest.mark.parametrize("package", sorted(LAYERS | BASE))
def test_imports_follow_layers(package):
    modules = [(m, p) for m, p in package_modules() if m.split(".")[1] == package]
    assert modules, f"numba_cuzk.{package} is in the layering rules but does not exist (renamed? update ALLOWED)"
    problems = [v for m, p in modules for v in violations(m, imported_modules(p.read_text(), m))]
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize(
    ("module", "source", "bad"),
    [
        ("numba_cuzk.field.mont", "from numba_cuzk.curve import g1", True),
        ("numba_cuzk.field.mont", "from ..curve import g1", True),
        ("numba_cuzk.field.mont", "from .params import FR\nimport numba_cuzk", False),
        ("numba_cuzk.msm.pippenger", "from numba_cuzk.curve.g1 import add\nfrom ..field import mont", False),
        ("numba_cuzk.msm.pippenger", "from numba_cuzk import ntt", True),
        ("numba_cuzk.engine.worker", "from numba_cuzk.groth16 import prover", False),
        ("numba_cuzk.engine.worker", "import numba_cuzk.timeline.events", True),
        ("numba_cuzk.engine.workload", "from numba_cuzk.circuits import build", False),
        ("numba_cuzk.groth16.prove", "from numba_cuzk.circuits import build", True),
        ("numba_cuzk.circuits.demo", "from numba_cuzk.engine import Engine", True),
        ("numba_cuzk.fileio", "from numba_cuzk.groth16 import formats", True),
        ("numba_cuzk.timeline.render", "from numba import cuda", True),
        ("numba_cuzk.timeline.render", "import numba.cuda.cudadrv", True),
        ("numba_cuzk.timeline.render", "from numba_cuzk import backend", True),
        ("numba_cuzk.timeline.render", "import json\nfrom .events import Event", False),
        ("numba_cuzk.timeline.reader", "from numba_cuzk.events import EVENTS", False),
        ("numba_cuzk.engine.worker", "from numba_cuzk.events import TimelineWriter", False),
        ("numba_cuzk.events", "import json\nimport numba", True),
        ("numba_cuzk.events", "from numba_cuzk import ntt", True),
        ("numba_cuzk.backend", "from numba_cuzk.field import kernels", True),
        ("numba_cuzk.__init__", "from numba_cuzk import _compat", False),
        ("numba_cuzk.__init__", "from . import engine", True),
        ("numba_cuzk.groth16.prover", "from numba_cuzk.cli import app", True),
        ("numba_cuzk.cli", "from numba_cuzk.engine import run\nfrom numba import cuda", False),
        ("numba_cuzk.serve.server", "from numba_cuzk.engine import Engine", False),
        ("numba_cuzk.serve.client", "from numba_cuzk.engine import Engine", True),
        ("numba_cuzk.serve.client", "import numpy as np", True),
        ("numba_cuzk.serve.client_cli", "from numba_cuzk.serve.server import serve", True),
        ("numba_cuzk.serve.client_cli", "from numba_cuzk.serve import protocol\nfrom numba_cuzk.fileio import x", False),
        ("numba_cuzk.engine.engine", "from numba_cuzk.serve import client", True),
        ("numba_cuzk.launch", "from numba_cuzk.serve.client_cli import main\nfrom numba_cuzk.cli import app", False),
        ("numba_cuzk.commands.compile", "from numba_cuzk.engine import Engine\nfrom numba_cuzk.msm import msm", False),
        ("numba_cuzk.commands.compile", "from numba_cuzk.cli import app", True),
        ("numba_cuzk.engine.engine", "from numba_cuzk.commands import compile", True),
        ("numba_cuzk.kernel_cache", "from numba_cuzk.commands.compile import compile_all", True),
    ],
)
def test_checker_catches_violations(module, source, bad):
    assert bool(violations(module, imported_modules(source, module))) == bad
