"""Progress over a known number of steps: a rich bar on a terminal, plain lines when the
output is piped (a log, CI), so that a long compile never looks like a hang."""

from __future__ import annotations

import contextlib
import sys
import time
from collections.abc import Iterator
from typing import Callable, TextIO


_WIDTH = 20  # characters of a text bar


class Steps:
    """``advance(line)`` once per finished step, out of ``total``. On a terminal a rich bar
    (the lines above it), or with ``live=False`` (under another live display, such as the
    CLI's spinner) a text bar on each line; otherwise each line printed as
    "[i/total] line (elapsed s)". With ``stream=None`` each line goes to the sys.stderr of
    the moment it is printed (an in-process CLI run swaps it, then closes its own)."""

    def __init__(self, description: str, total: int, stream: TextIO | None, live: bool = True):
        self.description, self.total, self._stream, self.done = description, total, stream, 0
        self.start = time.perf_counter()
        self.terminal = bool(getattr(self.stream, "isatty", lambda: False)())
        self.live = live and self.terminal
        self._progress = self._bar = None

    @property
    def stream(self) -> TextIO:
        return self._stream or sys.stderr

    def __enter__(self) -> Steps:
        if self.live:
            from rich.console import Console
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

            self._progress = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                                      TimeElapsedColumn(), console=Console(file=self.stream))
            self._progress.__enter__()
            self._bar = self._progress.add_task(self.description, total=self.total)
        else:
            print(f"{self.description}: {self.total} steps", file=self.stream, flush=True)
        return self

    def advance(self, line: str = "") -> None:
        self.done += 1
        if self._progress is not None:
            if line:
                self._progress.console.print(f"  {line}")
            self._progress.advance(self._bar)
        else:
            elapsed = time.perf_counter() - self.start
            filled = _WIDTH * min(self.done, self.total) // max(self.total, 1)
            bar = f"{'#' * filled}{'.' * (_WIDTH - filled)} " if self.terminal else ""
            print(f"  {bar}[{self.done}/{self.total}] {line} ({elapsed:.0f} s)", file=self.stream, flush=True)

    def __exit__(self, *exc) -> None:
        if self._progress is not None:
            self._progress.__exit__(*exc)


@contextlib.contextmanager
def steps(description: str, total: int, stream: TextIO | None = None) -> Iterator[Callable[[str], None]]:
    """Within: a function to call with a line as each of ``total`` steps ends."""
    with Steps(description, total, stream) as bar:
        yield bar.advance
