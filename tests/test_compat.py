"""The third-party patches of numba_cuzk/_compat.py."""

from __future__ import annotations

from numba_cuzk._compat import unload_once


class Handle:
    """Like a cuda.bindings handle: an object whose int() is the driver's value."""

    def __init__(self, value: int) -> None:
        self.value = value

    def __int__(self) -> int:
        return self.value


def test_each_library_handle_is_unloaded_once():
    unloaded = []
    unload = unload_once(lambda handle: unloaded.append(int(handle)))
    for value in (7, 7, 9, 7, 9, 11):  # two contexts letting go of the same libraries
        unload(Handle(value))
    assert unloaded == [7, 9, 11]
