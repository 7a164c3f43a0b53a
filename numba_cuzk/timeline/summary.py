"""A run's timeline in brief, for ``numba-cuzk run``: the figures over its steady state,
or over the whole run when it is too short to have one (fewer than 3 partitions per
device)."""

from __future__ import annotations

import os
import warnings

from numba_cuzk.timeline import analysis, reader, report


def utilization(path: str | os.PathLike) -> tuple[dict | None, str]:
    """(report.to_dict of the analysis, report.short's text); (None, why) without one."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", reader.TimelineWarning)
        try:
            parsed = reader.read(path)
        except OSError as exc:
            return None, f"no utilization figures: {exc}"
    try:
        result = analysis.analyze(parsed, "steady")
    except ValueError:  # no steady state
        try:
            result = analysis.analyze(parsed, "whole")
        except ValueError as exc:
            return None, f"no utilization figures: {exc}"
    return report.to_dict(result), report.short(result)
