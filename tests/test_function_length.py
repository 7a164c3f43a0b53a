"""No function in numba_cuzk/ is longer than MAX_LINES (house rules: functions under ~120
lines), counted with ``ast`` from its ``def`` (decorators excluded) to its last line,
docstring and nested functions included: a builder of closures counts whole, so a builder
that grows past the limit is split by what it builds (see curve/points.py). A function
that must stay longer is listed in EXCEPTIONS with why."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE_ROOT = Path(__file__).resolve().parents[1] / "numba_cuzk"
MAX_LINES = 120
EXCEPTIONS: dict[str, str] = {}  # "path/to/module.py:function" -> why it stays longer


def long_functions(root: Path = PACKAGE_ROOT, limit: int = MAX_LINES) -> dict[str, int]:
    """{"module.py:qualified.name": lines} of every function over ``limit`` lines."""
    found = {}
    for path in sorted(root.rglob("*.py")):
        tree = ast.parse(path.read_text(), str(path))

        def visit(node, prefix=""):
            for child in ast.iter_child_nodes(node):
                name = prefix
                if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                    name = f"{prefix}{child.name}"
                    lines = child.end_lineno - child.lineno + 1
                    if not isinstance(child, ast.ClassDef) and lines > limit:
                        found[f"{path.relative_to(root).as_posix()}:{name}"] = lines
                    name += "."
                visit(child, name)

        visit(tree)
    return found


def test_no_function_is_over_the_limit():
    over = {name: lines for name, lines in long_functions().items() if name not in EXCEPTIONS}
    assert not over, f"functions over {MAX_LINES} lines (split them, or list them in EXCEPTIONS with why): {over}"


def test_the_exceptions_are_still_long():
    """An exception whose function was shortened (or removed) goes from the list."""
    assert set(EXCEPTIONS) <= set(long_functions())


def test_the_count_sees_a_long_builder(tmp_path):
    body = "\n".join(f"        x{i} = {i}" for i in range(MAX_LINES))
    (tmp_path / "m.py").write_text(f"def builder():\n    def inner():\n{body}\n    return inner\n\n\ndef short():\n"
                                   "    return 1\n")
    assert long_functions(tmp_path) == {"m.py:builder": MAX_LINES + 3, "m.py:builder.inner": MAX_LINES + 1}
