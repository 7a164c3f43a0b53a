"""commands/plain_options.py: str and bool options reach a command without pydantic;
every other option keeps typer's coercion and its messages."""

from __future__ import annotations

import json
import subprocess
import sys

from typer.testing import CliRunner

from numba_cuzk.cli import app

PROCESS = """
import json, sys
from typer.testing import CliRunner
from numba_cuzk.cli import app
done = CliRunner().invoke(app, sys.argv[1:])
print(json.dumps([done.exit_code, done.output, "pydantic" in sys.modules]))
"""


def _in_a_process(*args: str) -> tuple[int, str, bool]:
    done = subprocess.run([sys.executable, "-c", PROCESS, *args], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return tuple(json.loads(done.stdout.strip().splitlines()[-1]))


def test_a_prove_s_options_are_parsed_without_pydantic(tmp_path):
    """Every str and bool option of `prove` given (a missing zkey stops it after parsing)."""
    code, output, pydantic = _in_a_process(
        "prove", "--zkey", str(tmp_path / "missing.zkey"), "--witness", str(tmp_path / "w.wtns"),
        "--proof", str(tmp_path / "p.json"), "--public", str(tmp_path / "q.json"), "--r1cs", str(tmp_path / "c.r1cs"),
        "--cpu", "--trusted", "--json", "--priority", "high")
    assert code == 2 and "missing.zkey" in output
    assert not pydantic


def test_options_of_other_types_keep_typer_s_checks():
    """An int option with bounds is still checked by typer: out of range, not a number."""
    for value, message in (("99", "less than or equal to 24"), ("ten", "valid integer")):
        done = CliRunner().invoke(app, ["demo", "--log-constraints", value])
        output = " ".join(done.output.replace("│", " ").split())
        assert done.exit_code == 2 and message in output and "--log-constraints" in output, done.output


def test_a_plain_option_of_the_wrong_type_is_refused():
    """The pass-through takes only what click gives a plain option (str, bool, None)."""
    from typer import core

    from numba_cuzk.commands.plain_options import pass_plain_options

    pass_plain_options()  # idempotent: installed once by the CLI's import
    build = core.build_runtime_param
    assert build.passes_plain_options
    descriptor = type("Descriptor", (), {"annotation": str, "file_annotation": None,
                                         "parameter_info": type("Info", (), {"parser": None, "click_type": None})()})()
    param = build(descriptor)
    assert param._coerce_value("x", param=None, ctx=None) == "x"
    try:
        param._coerce_value(3, param=None, ctx=None)
    except Exception as exc:
        assert "not a valid str" in str(exc)
    else:
        raise AssertionError("an int passed as a str option")
