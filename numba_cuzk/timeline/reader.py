"""Read a timeline written by ``numba_cuzk.events.TimelineWriter``.

A file whose first line is not a timeline header is rejected (ValueError). Past the
header, nothing is fatal: a truncated last line (a live timeline's line being written, or
a writer killed mid-line: the writer ends every line with a newline), a line
that is not JSON, an event this version does not know, or one missing its fields is
skipped with a ``TimelineWarning`` naming the lines.
"""

from __future__ import annotations

import json
import math
import os
import warnings
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

from numba_cuzk.events import EVENTS, FORMAT, INSTANT, VERSION

_SHOWN_LINES = 5  # line numbers quoted per warning


class TimelineWarning(UserWarning):
    """A part of a timeline file was skipped."""


@dataclass
class Timeline:
    """A timeline's header and its well-formed, known events in file order."""

    header: dict
    events: list[dict]

    def of(self, *names: str) -> list[dict]:
        """The events named ``names``, in file order."""
        return [event for event in self.events if event["event"] in names]


def read(path: str | os.PathLike) -> Timeline:
    """Parse the timeline at ``path``; ValueError if it is not one, OSError if unreadable."""
    with Path(path).open(encoding="utf-8", errors="replace") as file:
        text = file.read()
    lines = text.splitlines()
    header = _header(path, lines[0] if lines else "")
    problems: dict[str, list[int]] = defaultdict(list)
    events = []
    for number, line in enumerate(lines[1:], start=2):
        truncated = number == len(lines) and not text.endswith("\n")
        event, problem = _parse(line, truncated)
        if problem:
            problems[problem].append(number)
        elif event is not None:
            events.append(event)
    for problem, numbers in problems.items():
        shown = ", ".join(map(str, numbers[:_SHOWN_LINES])) + (", ..." if len(numbers) > _SHOWN_LINES else "")
        warnings.warn(f"{path}: {problem}, skipped (line {shown})", TimelineWarning, stacklevel=2)
    return Timeline(header, events)


def _header(path: str | os.PathLike, line: str) -> dict:
    try:
        header = json.loads(line)
    except ValueError:
        header = None
    if not isinstance(header, dict) or header.get("format") != FORMAT:
        raise ValueError(f"{path} is not a numba-cuzk timeline: its first line is not a {FORMAT!r} header")
    if not isinstance(header.get("version"), int) or header["version"] > VERSION:
        warnings.warn(f"{path}: timeline format version {header.get('version')!r}, newer than {VERSION}; "
                      f"reading it as version {VERSION}", TimelineWarning, stacklevel=3)
    return header


def _parse(line: str, truncated: bool) -> tuple[dict | None, str]:
    """(event, "") for a good line, (None, "") for a blank one, (None, why) otherwise."""
    if not line.strip():
        return None, ""
    try:
        event = json.loads(line)
    except ValueError:
        return None, ("truncated last line (still being written, or its writer stopped mid-line)" if truncated
                      else "line is not JSON")
    if not isinstance(event, dict) or "event" not in event or not _is_time(event.get("t_ms")):
        return None, "line is not an event (no event name and t_ms)"
    spec = EVENTS.get(event.get("event"))
    if spec is None:
        return None, f"unknown event {event.get('event')!r}"
    missing = [name for name in spec.required if name not in event]
    if missing:
        return None, f"{event['event']!r} event without {', '.join(missing)}"
    if spec.kind != INSTANT and not (_is_time(event.get("end_ms")) and event["end_ms"] >= event["t_ms"]):
        return None, f"{event['event']!r} interval without a valid end_ms"
    return event, ""


def _is_time(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
