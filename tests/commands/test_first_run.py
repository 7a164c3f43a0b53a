"""The first run says that it compiles (commands/first_run.py), in plain lines when piped;
the compile command's option rules; info --kernels from the CLI."""

from __future__ import annotations

import contextlib
import io
import json
import sys

from numba import njit
from typer.testing import CliRunner

from numba_cuzk import kernel_cache
from numba_cuzk.cli import app
from numba_cuzk.commands import compile as tasks
from numba_cuzk.commands import first_run, progress
from numba_cuzk.commands.compile import TaskResult

runner = CliRunner()


def test_a_registry_kernel_s_compile_is_announced_and_counted():
    @njit
    def registry_kernel(x):
        return x + 1

    @njit
    def other_function(x):
        return x * 2

    kernel_cache._KERNELS.append(registry_kernel)
    out = io.StringIO()
    try:
        with first_run.announce_compiles(out):
            other_function(2)
            assert out.getvalue() == ""  # not ours: nothing said
            registry_kernel(1)
            registry_kernel(2)  # compiled already: no second step
    finally:
        kernel_cache._KERNELS.remove(registry_kernel)
    lines = out.getvalue().splitlines()
    assert lines[0].startswith("compiling kernels (the first run of this version here: up to ") and "--fetch" in lines[0]
    steps = [line for line in lines if "registry_kernel" in line]
    assert len(steps) == 1 and steps[0].lstrip().startswith("[1/") and "#" not in steps[0]  # piped: no bar
    assert lines[-1].startswith("compiled 1 kernels into ")


def test_the_notice_follows_stderr_and_a_closed_one_never_fails_a_compile(monkeypatch):
    """A CLI command run in-process (CliRunner) leaves its listener for the rest of the
    process, and the stderr it printed to is closed after it: later compiles still
    succeed, and their lines go to the stderr of the moment."""
    @njit
    def first_kernel(x):
        return x + 1

    @njit
    def second_kernel(x):
        return x + 2

    @njit
    def third_kernel(x):
        return x + 3

    kernel_cache._KERNELS.extend([first_kernel, second_kernel, third_kernel])
    runner_err, later_err = io.StringIO(), io.StringIO()
    try:
        with first_run.announce_compiles():
            monkeypatch.setattr(sys, "stderr", runner_err)
            assert first_kernel(1) == 2
            runner_err.close()
            assert second_kernel(1) == 3  # the notice cannot print: the compile goes on
            monkeypatch.setattr(sys, "stderr", later_err)
            assert third_kernel(1) == 4
    finally:
        for kernel in (first_kernel, second_kernel, third_kernel):
            kernel_cache._KERNELS.remove(kernel)
    later = later_err.getvalue()
    assert "third_kernel" in later and "[3/" in later and later.splitlines()[-1].startswith("compiled 3 kernels")


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_steps_draw_a_text_bar_on_a_terminal_under_another_live_display():
    out = _Terminal()
    with progress.steps("compiling", 4, out) as advance:
        pass  # the rich bar: nothing asserted of its drawing
    bar = progress.Steps("compiling", 4, out, live=False).__enter__()
    bar.advance("a")
    bar.advance("b")
    assert "##########.......... [2/4] b" in out.getvalue()


def test_steps_without_a_stream_follow_stderr_and_its_terminal(monkeypatch):
    """stream=None: each line goes to the sys.stderr of the moment, with a text bar where
    that is a terminal."""
    terminal = _Terminal()
    monkeypatch.setattr(sys, "stderr", terminal)
    bar = progress.Steps("compiling", 2, None, live=False).__enter__()
    bar.advance("a")
    later = _Terminal()
    monkeypatch.setattr(sys, "stderr", later)
    bar.advance("b")
    assert "[1/2] a" in terminal.getvalue() and "####################" in later.getvalue() and "[2/2] b" in later.getvalue()


def test_the_gpu_s_first_run_says_so_with_an_estimate_and_a_step_per_task(monkeypatch):
    monkeypatch.setattr(tasks, "first_run_on_gpu", lambda: contextlib.nullcontext(True))
    monkeypatch.setattr(tasks, "task_names", lambda cpu_backend=True: ["check_g2", "gpu_prove"])
    monkeypatch.setattr(tasks, "compile_all", lambda cpu_backend, on_done: [
        on_done(TaskResult(name, 1.0, 1, 0)) for name in ("check_g2", "gpu_prove")])
    out = io.StringIO()
    assert first_run.compile_gpu_first(out)
    text = out.getvalue()
    assert text.startswith("first run of this version here: compiling the GPU kernels once") and " s); " in text
    assert "[1/2] check_g2 1.0 s" in text and "[2/2] gpu_prove" in text
    assert first_run.gpu_estimate_s(16) == 59.2 and first_run.gpu_estimate_s(1000) == first_run.GPU_LONGEST_TASK_S
    monkeypatch.setattr(tasks, "first_run_on_gpu", lambda: contextlib.nullcontext(False))
    assert not first_run.compile_gpu_first(io.StringIO())


def test_compile_s_options_go_together():
    for args in (["compile", "--targets", "cpu"], ["compile", "--archive", "k.tar.gz"],
                 ["compile", "--fetch", "k.tar.gz", "--targets", "cpu"]):
        result = runner.invoke(app, args)
        assert result.exit_code == 2, (args, result.output)
    result = runner.invoke(app, ["compile", "--targets", "cpu,gfx90a", "--archive", "k.tar.gz"])
    assert result.exit_code == 2 and "expected sm_MN" in result.output


def test_info_kernels_lists_every_kernel_with_its_source():
    result = runner.invoke(app, ["info", "--kernels", "--json"])
    assert result.exit_code == 0, result.output
    rows = {row["name"]: row for row in json.loads(result.output)}
    assert rows["accumulate_g2"]["source"].startswith("numba_cuzk/msm/kernels.py:")
    assert {"origin", "targets", "registers", "bindings"} <= set(rows["check_g1"])
