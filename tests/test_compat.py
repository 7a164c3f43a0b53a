"""The third-party patches of numba_cuzk/_compat.py."""

from __future__ import annotations

from numba_cuzk._compat import install_unload_once, unload_once


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


class LazyDriver:
    """numba-cuda's Driver in small: a function is bound on first use and stored as an
    attribute, which replaces whatever the attribute held."""

    def __init__(self) -> None:
        self.unloaded: list[int] = []

    def _cuda_python_wrap_fn(self, name: str):
        def call(handle):
            self.unloaded.append(int(handle))

        setattr(self, name, call)
        return call


def test_the_guard_stays_on_the_driver_after_unloads():
    driver = LazyDriver()
    install_unload_once(driver)
    for value in (3, 3, 4, 3):
        driver.cuLibraryUnload(Handle(value))
    assert driver.unloaded == [3, 4]
