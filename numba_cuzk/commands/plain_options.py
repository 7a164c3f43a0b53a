"""Options typed ``str`` or ``bool`` reach a command as click parsed them, without pydantic.

typer (0.29) coerces each option through a pydantic TypeAdapter that it builds at the
option's first use. For a CLI process that was pydantic's import plus the adapters: ~90 ms
of a one-shot `prove` on the 2-core box (14 options), ~7% of it. An option typed plain
``str`` (``str | None`` included) or ``bool``, with no parser, click type or file type,
gets from click a str, a bool or None already, so it is passed through as typer itself
passes the types pydantic cannot describe (its PassThroughRuntimeParam, which refuses a
value of another type). Every other option (numbers with bounds, choices, paths, lists)
keeps typer's coercion. A typer without this layout is left as it is.
"""

from __future__ import annotations

from typing import Any

PLAIN = (str, bool)


def pass_plain_options() -> None:
    """Install the pass-through for plain str and bool options (once; idempotent)."""
    try:
        from typer import _coercion, core
    except ImportError:
        return
    build = getattr(_coercion, "build_runtime_param", None)
    passthrough = getattr(_coercion, "PassThroughRuntimeParam", None)
    if build is None or passthrough is None or getattr(build, "passes_plain_options", False):
        return
    if getattr(core, "build_runtime_param", None) is not build:
        return

    def build_runtime_param(descriptor: Any) -> Any:
        info = descriptor.parameter_info
        if (descriptor.annotation in PLAIN and descriptor.file_annotation is None
                and getattr(info, "parser", None) is None and getattr(info, "click_type", None) is None):
            return passthrough(annotation=descriptor.annotation, parameter_info=info)
        return build(descriptor)

    build_runtime_param.passes_plain_options = True
    _coercion.build_runtime_param = core.build_runtime_param = build_runtime_param
