"""numba_cuzk.cluster sits above the engine: it imports the engine, commands (the run
command's plans), groth16, timeline, fileio, events and backend, and only cli.py (and serve,
above it) imports it (the checker of tests/test_layering.py, extended to the package)."""

from __future__ import annotations

from tests.test_layering import imported_modules, package_modules

MAY_IMPORT = {"cluster", "commands", "engine", "groth16", "timeline", "events", "backend", "fileio"}


def _packages(module: str, path) -> set[str]:
    """The numba_cuzk packages and modules ``module`` imports."""
    names = imported_modules(path.read_text(), module)
    return {name.split(".")[1] for name in names if name.startswith("numba_cuzk.")}


def test_cluster_imports_only_lower_layers():
    modules = [(m, p) for m, p in package_modules() if m.split(".")[1] == "cluster"]
    assert modules
    problems = [f"{m} imports numba_cuzk.{other}" for m, p in modules for other in _packages(m, p) - MAY_IMPORT]
    assert not problems, "\n".join(problems)


def test_only_the_cli_imports_cluster():
    problems = [m for m, p in package_modules()
                if m.split(".")[1] not in ("cluster", "cli", "serve") and "cluster" in _packages(m, p)]
    assert not problems, problems


def test_only_the_cli_and_its_entry_point_import_serve():
    problems = [m for m, p in package_modules()
                if m.split(".")[1] not in ("serve", "cli", "launch") and "serve" in _packages(m, p)]
    assert not problems, problems
