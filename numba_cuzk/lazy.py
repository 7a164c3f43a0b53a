"""Package attributes imported from their modules on first use, so that importing one
light module of a package (a header reader, a client's config) does not import the rest
of it and its kernels."""

from __future__ import annotations

import importlib
from typing import Callable


def lazy_attributes(package: str, homes: dict[str, str]) -> Callable[[str], object]:
    """A module ``__getattr__`` for ``package``: name -> its value from ``package.homes[name]``,
    imported once and kept in the package's namespace."""
    def __getattr__(name: str):
        home = homes.get(name)
        if home is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(f"{package}.{home}"), name)
        setattr(importlib.import_module(package), name, value)
        return value
    return __getattr__
