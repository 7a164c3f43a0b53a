"""The README and the documentation site say what the code does: the README's example runs,
its headline table and bench/results/INDEX.md are what bench/table.py prints, the memory
plan's output in docs/memory.md is the command's, every Python block of the site is run
somewhere, and the API reference covers every public module. (The strict site build is
.ci/run's.)"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from bench import common, table

REPO = Path(__file__).resolve().parents[1]
README = (REPO / "README.md").read_text()
DOCS = REPO / "docs"
PYTHON_BLOCK = re.compile(r"(?:<!-- (?P<note>[^>]*) -->\n)?```python\n(?P<code>.*?)```", re.S)


def readme_example() -> str:
    found = re.search(r"## Proving from Python\n\n```python\n(.*?)```", README, re.S)
    assert found, "README.md: no python block under 'Proving from Python'"
    return found.group(1)


def test_readme_is_short():
    assert len(README.splitlines()) <= 200


def test_readme_example_runs_and_prints(capsys):
    code = readme_example()
    assert len(code.strip().splitlines()) <= 10
    exec(compile(code, "README.md", "exec"), {"__name__": "readme_example"})
    assert capsys.readouterr().out.strip() == "True"


def test_readme_headline_table_is_generated():
    found = re.search(r"<!-- bench.table --headline -->\n(.*?)\n<!-- /bench.table -->", README, re.S)
    assert found, "README.md: no headline table between its bench.table markers"
    assert found.group(1) == table.headline_table(), "regenerate it: python3 -m bench.table --headline"


def test_results_index_is_current():
    index = (common.RESULTS / "INDEX.md").read_text()
    assert index == table.index() + "\n", "python3 -m bench.table --index > bench/results/INDEX.md"


def test_every_docs_python_block_is_run_somewhere():
    """A block is the README's example (run above), an examples/ script (tests/test_examples.py
    runs each) or says why it is not run."""
    unexplained = []
    for page in sorted(DOCS.rglob("*.md")):
        for block in PYTHON_BLOCK.finditer(page.read_text()):
            code, note = block["code"], block["note"] or ""
            included = re.fullmatch(r'--8<-- "(examples/[a-z_]+\.py)"\n', code)
            if included:
                assert (REPO / included.group(1)).exists(), f"{page}: {included.group(1)} missing"
            elif code != readme_example() and not note.startswith("not run: "):
                unexplained.append(f"{page.relative_to(REPO)}: {code.splitlines()[0]}")
    assert unexplained == []


def test_memory_page_shows_the_plan_command_prints():
    page = (DOCS / "memory.md").read_text()
    found = re.search(r"<!-- output of: numba-cuzk (.*?) -->\n```text\n(.*?)```", page, re.S)
    assert found, "docs/memory.md: no output block"
    run = subprocess.run([sys.executable, "-m", "numba_cuzk.cli", *found.group(1).split()], capture_output=True,
                         text=True, timeout=120, env={**os.environ, "COLUMNS": "80"}, cwd=REPO)
    assert run.returncode == 0, run.stderr
    assert run.stdout == found.group(2)
    total_gb = float(re.search(r"^  total +([0-9.]+)", run.stdout, re.M).group(1))
    assert f"plan is {total_gb:.1f} GB" in README  # the README's figure is this plan's


def public_modules() -> set[str]:
    names = set()
    for path in (REPO / "numba_cuzk").rglob("*.py"):
        parts = path.relative_to(REPO).with_suffix("").parts
        parts = parts[:-1] if parts[-1] == "__init__" else parts
        if not any(p.startswith("_") for p in parts):
            names.add(".".join(parts))
    return names


def test_api_reference_covers_every_public_module():
    """A package's page shows its submodules (mkdocs.yml: show_submodules), so a module is
    covered when it, or a package above it, has a `::: name` directive."""
    documented = set()
    for page in (DOCS / "reference").glob("*.md"):
        documented |= set(re.findall(r"^::: ([\w.]+)$", page.read_text(), re.M))
    missing = sorted(m for m in public_modules() - {"numba_cuzk"}
                     if not any(m == d or m.startswith(d + ".") for d in documented))
    assert missing == [], "add them to a page of docs/reference/"


def test_every_page_is_in_the_nav():
    nav = set(re.findall(r":\s*([\w/.-]+\.md)\s*$", (REPO / "mkdocs.yml").read_text(), re.M))
    pages = {str(p.relative_to(DOCS)) for p in DOCS.rglob("*.md")}
    assert pages == nav


@pytest.mark.parametrize(("devices", "host"), [
    (["NVIDIA H200"], "h200"), (["cpu:AMD EPYC x2"], "cpu2"),
    (["cpu:Intel(R) Xeon(R) Processor x16", "NVIDIA H200"], "h200"), (["NVIDIA GeForce RTX 4090"], "rtx4090"),
])
def test_host_slug(devices, host):
    assert common.host_slug(devices) == host


def test_write_lands_in_the_benchmarks_folder(monkeypatch, tmp_path):
    monkeypatch.setattr(common, "RESULTS", tmp_path)
    monkeypatch.setattr(table, "RESULTS", tmp_path)
    monkeypatch.setenv("NUMBA_CUZK_COMMIT", "89604c3")  # a commit of the repository: common.commit checks
    first = common.record("fr_mul", 1.0, "G/s", "NVIDIA H200", timing=common.DEVICE_THROUGHPUT)
    path = common.write([first], "field")
    again = common.write([common.record("fr_mul", 2.0, "G/s", "NVIDIA H200", timing=common.DEVICE_THROUGHPUT)],
                         "field")
    assert path == again == tmp_path / "field" / f"field-h200-89604c3-{first['date']}.json"
    assert table.parse_name(path)["commit"] == "89604c3"
    assert [r["value"] for r in table.records_in_order()] == [1.0, 2.0]
    assert table.latest_records()[0]["value"] == 2.0


def test_a_file_outside_the_naming_scheme_is_named(tmp_path):
    (tmp_path / "msm").mkdir()
    with pytest.raises(ValueError, match="msm-2026-12-01.json: not <bench>/"):
        table.parse_name(tmp_path / "msm" / "msm-2026-12-01.json")


def help_lines(*args: str) -> list[str]:
    from typer.testing import CliRunner

    from numba_cuzk.cli import app

    result = CliRunner().invoke(app, [*args, "--help"], env={"COLUMNS": "80"})
    assert result.exit_code == 0, result.output
    return result.output.splitlines()


@pytest.mark.parametrize("args", [(), ("setup",), ("run",)])
def test_help_breaks_lines_only_where_the_width_ends(args):
    """A line of a command's description (above its options, or in the commands' panel) that
    another line continues reaches near the terminal's edge: a docstring's own line breaks
    (a sentence cut at column 40) are re-flowed. The options' narrow column is rich's."""
    text = help_lines(*args)
    options = next(i for i, line in enumerate(text) if line.startswith("╭─ Options"))
    commands = [i for i, line in enumerate(text) if line.startswith("╭─ Commands")]
    shown = text[:options] + (text[commands[0]:] if commands else [])
    lines = [line.strip(" │").rstrip() for line in shown]
    cut = [a for a, b in zip(lines, lines[1:])
           if a and b and b[0].islower() and not a.endswith((".", ":", ";")) and len(a) < 55]
    assert cut == []


def test_run_title_names_the_backend_once(capsys, monkeypatch):
    from numba_cuzk import cli

    monkeypatch.setattr(cli, "console", cli.Console(width=100))
    cli._print_run({"backend": "cpu", "devices": [{"name": "cpu x2 (CPU backend)"}], "jobs": [], "failures": [],
                    "s_per_proof": None, "resumed": 0, "proofs": 0, "partitions": 0, "wall_s": 0.0,
                    "proofs_per_hour": 0.0}, "")
    title = capsys.readouterr().out.splitlines()[0]
    assert title.strip() == "numba-cuzk run on cpu x2 (CPU backend)"


def test_adopt_files_a_runs_outputs(monkeypatch, tmp_path):
    from bench import adopt

    results = tmp_path / "results"
    monkeypatch.setattr(common, "RESULTS", results)
    monkeypatch.setattr(table, "RESULTS", results)
    day = "2026-12-03"
    records = [{"name": "fr_mul", "value": 1.0, "unit": "G/s", "device": "NVIDIA H200", "commit": "abc1234", "date": day},
               {"name": "fr_mul_cpu", "value": 0.1, "unit": "G/s", "device": "cpu:Xeon x16", "commit": "abc1234",
                "date": day},
               {"name": "fr_mul", "value": 2.0, "unit": "G/s", "device": "cpu:EPYC x2", "commit": "def5678", "date": day}]
    (tmp_path / "field.json").write_text(json.dumps(records))
    (tmp_path / "timeline.jsonl").write_text('{"event": "x"}\n' * 20_000)
    adopt.main([str(tmp_path / "field.json"), "--topic", "field"])
    adopt.main([str(tmp_path / "timeline.jsonl"), "--topic", "engine", "--commit", "abc1234", "--host", "h200",
                "--date", day, "--label", "timeline"])
    files = sorted(p.relative_to(results).as_posix() for p in results.rglob("*") if p.is_file())
    assert files == ["INDEX.md", "engine/engine-h200-abc1234-2026-12-03-timeline.jsonl.gz",
                     f"field/field-cpu2-def5678-{day}.json", f"field/field-h200-abc1234-{day}.json"]
    assert [r["name"] for r in json.loads((results / f"field/field-h200-abc1234-{day}.json").read_text())] == [
        "fr_mul", "fr_mul_cpu"]
    assert (results / "INDEX.md").read_text() == table.index() + "\n"
    (tmp_path / "logs.tgz").write_bytes(b"x" * (adopt.LARGE_BYTES + 1))  # neither gzipped nor re-encoded here
    with pytest.raises(SystemExit, match="logs.tgz: 100001 bytes, over 100000"):
        adopt.main([str(tmp_path / "logs.tgz"), "--topic", "engine", "--commit", "abc1234", "--host", "h200",
                    "--date", day, "--label", "logs"])
    assert not (results / "engine" / f"engine-h200-abc1234-{day}-logs.tgz").exists()


def test_getting_started_gives_the_readmes_set_up_commands():
    from tests.test_ci import quick_start_test_command

    page = (DOCS / "getting-started.md").read_text()
    demo = re.search(r"Run the main job\..*?```sh\n(.*?)\n```", README, re.S).group(1)
    assert f"```sh\n{demo}\n```" in page and f"```sh\n{quick_start_test_command()}\n```" in page


def test_a_result_left_outside_the_folders_is_named(monkeypatch, tmp_path):
    monkeypatch.setattr(table, "RESULTS", tmp_path)
    (tmp_path / "msm-2026-12-03.json").write_text("[]")
    with pytest.raises(ValueError, match="bench/results/msm-2026-12-03.json .*bench.adopt"):
        table.index()
