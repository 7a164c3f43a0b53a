"""`numba-cuzk info --kernels`: every kernel of the registry found from its name, the
registers read from a cubin without a GPU."""

from __future__ import annotations

import inspect
import re
import sys
from pathlib import Path

from numba_cuzk import kernel_cache
from numba_cuzk.commands import kernel_report
from numba_cuzk.commands.compile import define_every_kernel

DATA = Path(__file__).parent / "data"
PACKAGE_PARENT = kernel_cache.PACKAGE_DIR.parent


def _resolves(location: str) -> tuple[Path, int]:
    """("numba_cuzk/x.py", line) of a "path:line", checked: a file of the package with a
    ``def`` at that line (below its decorators)."""
    path, line = location.rsplit(":", 1)
    file = PACKAGE_PARENT / path
    assert file.is_file() and file.resolve().is_relative_to(kernel_cache.PACKAGE_DIR), location
    lines = file.read_text().splitlines()
    assert 1 <= int(line) <= len(lines), location
    head = lines[int(line) - 1:int(line) + 8]
    assert any(text.lstrip().startswith("def ") for text in head), f"{location}: no def at {head[:2]}"
    return file, int(line)


def test_every_kernel_in_the_registry_resolves_to_its_source_line():
    define_every_kernel()
    rows = kernel_report.kernel_rows(registers=False)
    assert len(rows) == len(kernel_cache._KERNELS) > 50
    names = [row.name for row in rows]
    assert len(set(names)) == len(names), "two kernels share a name: the name no longer finds one"
    for row, kernel in zip(rows, kernel_cache._KERNELS):
        file, line = _resolves(row.source)
        assert inspect.getsourcelines(kernel.py_func)[1] == line, row
        for where in row.bindings.values():
            _resolves(where)
    by_name = {row.name: row for row in rows}
    accumulate = by_name["accumulate_g2"]  # a specialize() instance: its template and its formulas
    assert accumulate.source.startswith("numba_cuzk/msm/kernels.py:")
    assert accumulate.bindings["add_mixed"].startswith("numba_cuzk/curve/xyzz.py:")  # the formula itself
    assert by_name["add_fr"].bindings["body"].startswith("numba_cuzk/field/kernels.py:")


def test_every_template_names_its_instances_and_declares_what_specialize_binds():
    """From a template to its kernels too: the docstring of the function a kernel_cache.specialize
    instance is made from names the instance (a ``_cpu`` twin by its name or its GPU kernel's), and each
    bound name the template reads is declared in its module (a documented placeholder), so
    that a reader and a linter see where it comes from."""
    define_every_kernel()
    unnamed, undeclared = set(), set()
    for kernel in kernel_cache._KERNELS:
        fn = kernel.py_func
        bound = getattr(fn, "__bindings__", ())
        if not bound:
            continue
        template = f"{kernel_report.source_line(fn)} {fn.__code__.co_name}"
        names = {fn.__qualname__, fn.__qualname__.removesuffix("_cpu")}
        if not any(re.search(rf"\b{re.escape(name)}\b", fn.__doc__ or "") for name in names):
            unnamed.add(f"{template}: {fn.__qualname__}")
        module = vars(sys.modules[fn.__module__])
        undeclared |= {f"{template}: {name}" for name in set(bound) & set(fn.__code__.co_names) if name not in module}
    assert not unnamed, f"templates whose docstring does not name these instances: {sorted(unnamed)}"
    assert not undeclared, f"names bound by specialize with no module-level placeholder: {sorted(undeclared)}"


def test_info_kernels_piped_keeps_a_kernel_on_one_line():
    """Piped (no terminal: 80 columns), `numba-cuzk info --kernels | grep accumulate_g2`
    still gives the kernel, its template's file:line and the formula bound into it."""
    from typer.testing import CliRunner

    from numba_cuzk.cli import app

    done = CliRunner().invoke(app, ["info", "--kernels"])
    assert done.exit_code == 0, done.output
    (line,) = [text for text in done.output.splitlines() if " accumulate_g2 " in text]
    assert re.search(r"numba_cuzk/msm/kernels\.py:\d+ .*add_mixed curve/xyzz\.py:\d+", line), line


def test_registers_are_read_from_a_cubin():
    cubin = (DATA / "add_fr_sm90a.cubin").read_bytes()  # add_fr for sm_90a: `ptxas -v` says 32 registers
    counts = kernel_report.cubin_registers(cubin)
    assert list(counts.values()) == [32] and "add_fr" in next(iter(counts))


def test_a_row_without_entries_says_not_compiled():
    row = kernel_report.KernelRow("k", "gpu", "numba_cuzk/x.py:1")
    assert row.origin == "not compiled" and kernel_report.registers_text(row, "sm_90") == "-"
    row.targets, row.registers = {"sm_90": "prebuilt", "sm_80": "compiled here"}, {"sm_90": [96, 90, 96]}
    assert row.origin == "compiled here + prebuilt" and kernel_report.registers_text(row, "sm_90") == "90/96"
