"""Bulk conversions between Python ints, bytes and the device limb layout.

Device layout (structure of arrays): n elements of a field with L limbs are a C-contiguous
``uint32`` array of shape ``(L, n)``; ``arr[j, i]`` is limb j (little-endian, 32 bits) of
element i. Thread i of a kernel reads ``arr[:, i]``, so a warp's loads of one limb are 32
consecutive words: coalesced. Whether the values are canonical or Montgomery is the
caller's to say; functions here name it.

Everything is vectorized with numpy (a loop over limbs, never over elements), except the
Montgomery conversion, which runs mont.py's functions on all CPU cores.
"""

from __future__ import annotations

from typing import Iterable

import numpy as np
from numba_cuzk import _compat  # noqa: F401,I001  (numba patched before its first use)
from numba import prange

from numba_cuzk.field.mont import montgomery
from numba_cuzk.field.params import FQ, FR, FieldParams
from numba_cuzk.field.target import local_u32
from numba_cuzk.kernel_cache import cpu_kernel, specialize

_BYTEORDERS = ("little", "big")


def to_limbs(values: Iterable[int] | np.ndarray, params: FieldParams, reduce: bool = False) -> np.ndarray:
    """Python ints -> (limbs, n) uint32, canonical.

    Raises ValueError naming the first index whose value is negative or >= p, unless
    ``reduce`` (then values are taken mod p).
    """
    objs = np.asarray(list(values) if not isinstance(values, np.ndarray) else values, dtype=object).ravel()
    p = params.modulus
    if reduce:
        objs = objs % p
    else:
        bad = np.flatnonzero((objs < 0) | (objs >= p)) if objs.size else []
        if len(bad):
            raise ValueError(f"{params.name} value at index {bad[0]} is not in [0, p): {objs[bad[0]]}")
    out = np.empty((params.limbs, objs.size), dtype=np.uint32)
    for j in range(params.limbs):
        out[j] = ((objs >> (32 * j)) & 0xFFFFFFFF).astype(np.uint64)
    return out


def from_limbs(limbs: np.ndarray, params: FieldParams) -> list[int]:
    """(limbs, n) uint32 -> list of n Python ints (no reduction, no Montgomery conversion).
    Each element's limbs as little-endian bytes, one int.from_bytes each: 7 us for 16 Fq
    elements, against 106 us shifting object arrays limb by limb (a proof's epilogue
    converts ~24 such columns)."""
    _check_layout(limbs, params)
    width = 4 * params.limbs
    data = np.ascontiguousarray(limbs.T, dtype="<u4").tobytes()
    return [int.from_bytes(data[i:i + width], "little") for i in range(0, len(data), width)]


def first_noncanonical(limbs: np.ndarray, params: FieldParams, out: np.ndarray | None = None) -> int:
    """Index of the first element >= p in a (limbs, n) uint32 array, or -1 if all are
    canonical. With ``out`` (the same shape, C-contiguous: e.g. a pinned upload buffer),
    ``limbs`` is also copied into it in the same pass. From CHECK_KERNEL_MIN elements on,
    one pass on all CPU cores (a 2^26-wire witness: two numpy passes, its check and its
    copy into the pinned slot, were ~0.9 s of a 2^26 proof that no phase named)."""
    _check_layout(limbs, params)
    if out is not None and (out.shape != limbs.shape or out.dtype != np.uint32 or not out.flags.c_contiguous):
        raise ValueError(f"out must be C-contiguous uint32 of shape {limbs.shape}, got {out.dtype} {out.shape}")
    if limbs.shape[1] >= CHECK_KERNEL_MIN:
        target = out if out is not None else np.empty((params.limbs, 0), np.uint32)
        return int(_FIRST_NONCANONICAL[params.name](target, np.ascontiguousarray(limbs), out is not None))
    if out is not None:
        out[:] = limbs
    less = np.zeros(limbs.shape[1], dtype=bool)
    equal = np.ones(limbs.shape[1], dtype=bool)
    for j in range(params.limbs - 1, -1, -1):  # lexicographic compare from the top limb
        pj = np.uint32(params.modulus_limbs[j])
        less |= equal & (limbs[j] < pj)
        equal &= limbs[j] == pj
    bad = np.flatnonzero(~less)
    return int(bad[0]) if bad.size else -1


def from_bytes(
    data: bytes | np.ndarray, params: FieldParams, byteorder: str = "little", check: bool = True
) -> np.ndarray:
    """Packed elements of ``params.nbytes`` bytes each -> (limbs, n) uint32.

    ``byteorder`` is the order within one element. With ``check`` (the default), an
    element >= p raises ValueError naming its index and byte offset.
    """
    raw = _as_bytes(data)
    width = params.nbytes
    if byteorder not in _BYTEORDERS:
        raise ValueError(f"byteorder must be 'little' or 'big', not {byteorder!r}")
    if raw.size % width:
        raise ValueError(f"{raw.size} bytes is not a whole number of {width}-byte {params.name} elements")
    rows = raw.reshape(-1, width)
    if byteorder == "big":
        rows = rows[:, ::-1]
    limbs = np.ascontiguousarray(rows).view("<u4").T.astype(np.uint32, order="C")
    if check:
        bad = first_noncanonical(limbs, params)
        if bad >= 0:
            raise ValueError(
                f"{params.name} element {bad} (byte offset {bad * width}) is not canonical: it is >= p"
            )
    return limbs


def to_bytes(limbs: np.ndarray, params: FieldParams, byteorder: str = "little") -> bytes:
    """(limbs, n) uint32 -> n packed elements of ``params.nbytes`` bytes."""
    _check_layout(limbs, params)
    if byteorder not in _BYTEORDERS:
        raise ValueError(f"byteorder must be 'little' or 'big', not {byteorder!r}")
    rows = np.ascontiguousarray(limbs.T).astype("<u4").view(np.uint8).reshape(-1, params.nbytes)
    if byteorder == "big":
        rows = rows[:, ::-1]
    return np.ascontiguousarray(rows).tobytes()


# Below this many elements a conversion runs on Python ints (~1.6 us each). From it on, the
# kernel: for 32765 elements its first call in a process whose CPU target has not started
# took 50-52 ms, loads and runtime included, as the ints did (50-55 ms); where the target
# has started it is ~1 ms plus a ~8 ms load. (A GPU prove converts nothing on the host:
# zkey coefficients stay as stored, keys.Coefficients.)
KERNEL_MIN = 1 << 14
# The check's numpy passes (a compare per limb) take 0.05 ms for 2^14 elements and 3.7 ms
# for 2^20 on the 2-core CPU, less than the CPU target's start where nothing else starts
# it (a GPU prove's witness and key: 50-150 ms); from 2^20 on, the one fused pass.
CHECK_KERNEL_MIN = 1 << 20


def to_montgomery(limbs: np.ndarray, params: FieldParams) -> np.ndarray:
    """Canonical (limbs, n) -> Montgomery form (x * R mod p), on all CPU cores."""
    return _convert(limbs, params, 0, params.r)


def from_montgomery(limbs: np.ndarray, params: FieldParams) -> np.ndarray:
    """Montgomery (limbs, n) -> canonical form (x / R mod p), on all CPU cores."""
    return _convert(limbs, params, 1, pow(params.r, -1, params.modulus))


def _convert(limbs: np.ndarray, params: FieldParams, kernel: int, factor: int) -> np.ndarray:
    _check_layout(limbs, params)
    if limbs.shape[1] < KERNEL_MIN:
        return to_limbs([x * factor % params.modulus for x in from_limbs(limbs, params)], params)
    out = np.empty_like(limbs)
    _CONVERTERS[params.name][kernel](out, np.ascontiguousarray(limbs))
    return out


def _as_bytes(data: bytes | np.ndarray) -> np.ndarray:
    if isinstance(data, np.ndarray):
        return data.reshape(-1).view(np.uint8)
    return np.frombuffer(data, dtype=np.uint8)


def _check_layout(limbs: np.ndarray, params: FieldParams) -> None:
    if limbs.dtype != np.uint32 or limbs.ndim != 2 or limbs.shape[0] != params.limbs:
        raise ValueError(
            f"{params.name} limbs must be uint32 of shape ({params.limbs}, n), got {limbs.dtype} {limbs.shape}"
        )


# Names the CPU templates below read, bound per instance by kernel_cache.specialize;
# these placeholders are never compiled.
n_limbs = 0  # limbs of one field element: 8 (Fr) or 12 (Fq)
modulus = None  # (n_limbs,) uint32: the field's modulus, low limb first
load = store = None  # the field's PrimeFieldOps.load(out, arr, i) / .store(arr, i, a)
convert = None  # PrimeFieldOps.to_mont or .from_mont: convert(out, a)


def _convert_each(out, x):
    """CPU template: out[:, i] = convert(x[:, i]) on all cores (n_limbs, load, convert and
    store are bound by kernel_cache.specialize). Instances: to_mont_fr_cpu,
    from_mont_fr_cpu, to_mont_fq_cpu, from_mont_fq_cpu (_converters)."""
    for i in prange(x.shape[1]):
        a = local_u32(n_limbs)
        load(a, x, i)
        convert(a, a)
        store(out, i, a)


def _converters(params: FieldParams) -> tuple:
    """(to Montgomery, from Montgomery) CPU kernels of ``params``: to_mont_fr_cpu, ..."""
    ops = montgomery(params)
    suffix = params.name.lower()
    return tuple(
        cpu_kernel(specialize(_convert_each, f"{direction}_mont_{suffix}_cpu", n_limbs=ops.limbs, load=ops.load,
                              convert=convert, store=ops.store), symbols=False, parallel=True)
        for direction, convert in (("to", ops.to_mont), ("from", ops.from_mont)))


_CONVERTERS = {params.name: _converters(params) for params in (FR, FQ)}

_RUN = 1 << 13  # columns per parallel run: 8 rows of 32 KiB, in cache between its copy and its check


def _first_noncanonical_each(out, x, copy):
    """CPU template: the first column of x >= modulus (top limb first), or -1; with
    ``copy``, out <- x in the same pass (n_limbs and modulus are bound by specialize).
    Instances: first_noncanonical_fr_cpu, first_noncanonical_fq_cpu."""
    n = x.shape[1]
    runs = (n + _RUN - 1) // _RUN
    first = np.full(runs, -1, np.int64)
    for run in prange(runs):
        lo, hi = run * _RUN, min(n, (run + 1) * _RUN)
        if copy:
            for j in range(n_limbs):
                out[j, lo:hi] = x[j, lo:hi]
        for i in range(lo, hi):
            bad = True  # equal to the modulus so far
            for j in range(n_limbs - 1, -1, -1):
                if x[j, i] != modulus[j]:
                    bad = x[j, i] > modulus[j]
                    break
            if bad:
                first[run] = i
                break
    for run in range(runs):
        if first[run] >= 0:
            return first[run]
    return -1


_FIRST_NONCANONICAL = {
    params.name: cpu_kernel(specialize(_first_noncanonical_each, f"first_noncanonical_{params.name.lower()}_cpu",
                                       n_limbs=params.limbs, modulus=np.array(params.modulus_limbs, np.uint32)),
                            symbols=False, parallel=True)
    for params in (FR, FQ)}
