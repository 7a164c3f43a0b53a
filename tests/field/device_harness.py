"""Runs one field function per element in a CUDA kernel (the simulator in CI) and
returns Python ints, so tests can compare any device function with the reference."""

from __future__ import annotations

import contextlib
import sys
from functools import lru_cache

import numpy as np
from numba import config, cuda, uint32

from numba_cuzk.field import codec
from numba_cuzk.field.fq2 import FQ2_LIMBS, fq2_ops
from numba_cuzk.field.fq2_pair import fq2_pair_ops, fq2p_mul2
from numba_cuzk.field.target import pair_lane
from numba_cuzk.field.mont import montgomery
from numba_cuzk.field.params import FQ, FieldParams

POISON = np.uint32(0xA5A5A5A5)
BLOCK = 64


def _launch(kernel, n, *args):
    kernel[(n + BLOCK - 1) // BLOCK, BLOCK](n, *args)


@lru_cache(maxsize=None)
def _binary_kernel(params: FieldParams, name: str):
    ops = montgomery(params)
    N, load, store, f = ops.limbs, ops.load, ops.store, getattr(ops, name)

    @cuda.jit
    def kernel(n, out, out_aliased, a, b):
        i = cuda.grid(1)
        if i < n:
            x = cuda.local.array(N, uint32)
            y = cuda.local.array(N, uint32)
            z = cuda.local.array(N, uint32)
            load(x, a, i)
            load(y, b, i)
            f(z, x, y)
            store(out, i, z)
            f(x, x, y)  # out aliasing the first input
            store(out_aliased, i, x)

    return kernel


@lru_cache(maxsize=None)
def _unary_kernel(params: FieldParams, name: str):
    ops = montgomery(params)
    N, load, store, f = ops.limbs, ops.load, ops.store, getattr(ops, name)

    @cuda.jit
    def kernel(n, out, out_aliased, a):
        i = cuda.grid(1)
        if i < n:
            x = cuda.local.array(N, uint32)
            z = cuda.local.array(N, uint32)
            load(x, a, i)
            f(z, x)
            store(out, i, z)
            f(x, x)
            store(out_aliased, i, x)

    return kernel


@lru_cache(maxsize=None)
def _pow_kernel(params: FieldParams):
    ops = montgomery(params)
    N, load, store, pow_ = ops.limbs, ops.load, ops.store, ops.pow

    @cuda.jit
    def kernel(n, out, a, e):
        i = cuda.grid(1)
        if i < n:
            x = cuda.local.array(N, uint32)
            load(x, a, i)
            pow_(x, x, e)
            store(out, i, x)

    return kernel


@lru_cache(maxsize=None)
def _predicate_kernel(params: FieldParams):
    ops = montgomery(params)
    N, load, eq, is_zero = ops.limbs, ops.load, ops.eq, ops.is_zero

    @cuda.jit
    def kernel(n, flags, a, b):
        i = cuda.grid(1)
        if i < n:
            x = cuda.local.array(N, uint32)
            y = cuda.local.array(N, uint32)
            load(x, a, i)
            load(y, b, i)
            flags[0, i] = uint32(eq(x, y))
            flags[1, i] = uint32(is_zero(x))

    return kernel


def _poisoned(shape) -> object:
    return cuda.to_device(np.full(shape, POISON, dtype=np.uint32))


def _upload(values: list[int], params: FieldParams, montgomery_form: bool):
    limbs = codec.to_limbs(values, params)
    return cuda.to_device(codec.to_montgomery(limbs, params) if montgomery_form else limbs)


def _download(array, params: FieldParams, montgomery_form: bool) -> list[int]:
    limbs = array.copy_to_host()
    return codec.from_limbs(codec.from_montgomery(limbs, params) if montgomery_form else limbs, params)


def apply(params: FieldParams, name: str, a: list[int], b: list[int] | None = None,
          montgomery_in: bool = True, montgomery_out: bool = True) -> tuple[list[int], list[int]]:
    """Results of ``name`` on canonical inputs: (out separate, out aliasing a)."""
    n = len(a)
    out, aliased = _poisoned((params.limbs, n)), _poisoned((params.limbs, n))
    args = [_upload(a, params, montgomery_in)]
    if b is not None:
        args.append(_upload(b, params, montgomery_in))
        _launch(_binary_kernel(params, name), n, out, aliased, *args)
    else:
        _launch(_unary_kernel(params, name), n, out, aliased, *args)
    return _download(out, params, montgomery_out), _download(aliased, params, montgomery_out)


def _raw_limbs(values: list[int], params: FieldParams) -> np.ndarray:
    """Any ints below 2^(32N) as (limbs, n) uint32, unchecked (the lazy operations' [0, 2p))."""
    return np.array([[(v >> (32 * j)) & 0xFFFFFFFF for v in values] for j in range(params.limbs)], dtype=np.uint32)


def apply_raw(params: FieldParams, name: str, a: list[int], b: list[int] | None = None) -> tuple[list[int], list[int]]:
    """apply() on the limbs of a and b as they are (no range check, no Montgomery
    conversion either way): for the lazy operations, whose values lie in [0, 2p)."""
    n = len(a)
    out, aliased = _poisoned((params.limbs, n)), _poisoned((params.limbs, n))
    args = [cuda.to_device(_raw_limbs(x, params)) for x in (a, b) if x is not None]
    _launch(_binary_kernel(params, name) if b is not None else _unary_kernel(params, name), n, out, aliased, *args)
    return codec.from_limbs(out.copy_to_host(), params), codec.from_limbs(aliased.copy_to_host(), params)


def power(params: FieldParams, a: list[int], e: int) -> list[int]:
    n = len(a)
    out = _poisoned((params.limbs, n))
    words = max(1, (e.bit_length() + 31) // 32)
    exponent = np.array([(e >> (32 * j)) & 0xFFFFFFFF for j in range(words)], dtype=np.uint32)
    _launch(_pow_kernel(params), n, out, _upload(a, params, True), cuda.to_device(exponent))
    return _download(out, params, True)


def predicates(params: FieldParams, a: list[int], b: list[int]) -> tuple[list[bool], list[bool]]:
    """(a == b, a == 0) per element."""
    n = len(a)
    flags = _poisoned((2, n))
    _launch(_predicate_kernel(params), n, flags, _upload(a, params, True), _upload(b, params, True))
    host = flags.copy_to_host()
    return [bool(x) for x in host[0]], [bool(x) for x in host[1]]


FQ2_BINARY = ("mul", "add", "sub")


@lru_cache(maxsize=None)
def _fq2_kernel(name: str):
    f = getattr(fq2_ops, name)
    binary = name in FQ2_BINARY

    @cuda.jit
    def kernel(n, out, a, b):
        i = cuda.grid(1)
        if i < n:
            x = cuda.local.array(FQ2_LIMBS, uint32)
            y = cuda.local.array(FQ2_LIMBS, uint32)
            for j in range(FQ2_LIMBS):
                x[j] = a[j, i]
                y[j] = b[j, i]
            if binary:
                f(x, x, y)
            else:
                f(x, x)
            for j in range(FQ2_LIMBS):
                out[j, i] = x[j]

    return kernel


def _fq2_upload(pairs: list[tuple]):
    limbs = codec.to_montgomery(codec.to_limbs([c for pair in pairs for c in pair], FQ), FQ)
    # (12, 2n) with element k's c0, c1 at columns 2k, 2k+1 -> (24, n): c0 limbs, then c1
    return cuda.to_device(np.ascontiguousarray(np.concatenate([limbs[:, 0::2], limbs[:, 1::2]])))


def _fq2_download(array) -> list[tuple]:
    host = array.copy_to_host()
    c0 = codec.from_limbs(codec.from_montgomery(np.ascontiguousarray(host[:12]), FQ), FQ)
    c1 = codec.from_limbs(codec.from_montgomery(np.ascontiguousarray(host[12:]), FQ), FQ)
    return list(zip(c0, c1))


def fq2_apply(name: str, a: list[tuple], b: list[tuple]) -> list[tuple]:
    """Fq2 function ``name`` on pairs (c0, c1) of canonical ints, out aliasing a."""
    n = len(a)
    out = _poisoned((FQ2_LIMBS, n))
    _launch(_fq2_kernel(name), n, out, _fq2_upload(a), _fq2_upload(b))
    return _fq2_download(out)


@contextlib.contextmanager
def fast_handoffs():
    """The simulator's lane pairs hand values over through barriers: each hand-off waits
    for the GIL, up to Python's 5 ms switch interval (~150 s for a 12-point G2 MSM, 7 s
    at 0.1 ms)."""
    previous = sys.getswitchinterval()
    if config.ENABLE_CUDASIM:
        sys.setswitchinterval(1e-4)
    try:
        yield
    finally:
        sys.setswitchinterval(previous)


P = fq2_pair_ops.limbs
FQ2_PAIR_UNARY = ("sqr", "inv", "neg", "dbl", "copy")


@lru_cache(maxsize=None)
def _fq2_pair_kernel(name: str):
    """fq2_pair.py's ``name`` on lane pairs: element i on threads 2i, 2i + 1. "mul2":
    mul2(x, x, y, y, y, y) (outputs aliasing inputs of both products), out = x + y =
    a b + b^2."""
    f = fq2p_mul2 if name == "mul2" else getattr(fq2_pair_ops, name)
    unary = name in FQ2_PAIR_UNARY
    load, store, add = fq2_pair_ops.load, fq2_pair_ops.store, fq2_pair_ops.add

    @cuda.jit
    def kernel(n, out, a, b):
        i = cuda.grid(1) // 2
        if i < n:
            x = cuda.local.array(P, uint32)
            y = cuda.local.array(P, uint32)
            load(x, a, i)
            load(y, b, i)
            if name == "mul2":
                f(x, x, y, y, y, y)
                add(x, x, y)
            elif unary:
                f(x, x)
            else:
                f(x, x, y)
            store(out, i, x)

    return kernel


@lru_cache(maxsize=None)
def _fq2_pair_flags_kernel():
    load, store, eq, is_zero = fq2_pair_ops.load, fq2_pair_ops.store, fq2_pair_ops.eq, fq2_pair_ops.is_zero
    set_one, select = fq2_pair_ops.set_one, fq2_pair_ops.select

    @cuda.jit
    def kernel(n, flags, out, a, b):
        i = cuda.grid(1) // 2
        if i < n:
            x = cuda.local.array(P, uint32)
            y = cuda.local.array(P, uint32)
            load(x, a, i)
            load(y, b, i)
            lane = pair_lane()
            flags[lane, i] = uint32(eq(x, y))  # each lane's answer: the pair must agree
            flags[2 + lane, i] = uint32(is_zero(x))
            set_one(y)
            select(x, is_zero(x), y, x)  # 0 -> 1
            store(out, i, x)
            if is_zero(x):
                flags[4 + lane, i] = uint32(1)  # never: a branch both lanes take or neither

    return kernel


def _launch_pairs(kernel, n, *args):
    """Two threads per element."""
    threads = min(BLOCK, 2 * n)
    kernel[(2 * n + threads - 1) // threads, threads](n, *args)


def fq2_pair_apply(name: str, a: list[tuple], b: list[tuple]) -> list[tuple]:
    """fq2_pair's ``name`` on canonical pairs (c0, c1), out aliasing a."""
    n = len(a)
    out = _poisoned((FQ2_LIMBS, n))
    with fast_handoffs():
        _launch_pairs(_fq2_pair_kernel(name), n, out, _fq2_upload(a), _fq2_upload(b))
    return _fq2_download(out)


def fq2_pair_flags(a: list[tuple], b: list[tuple]) -> tuple[np.ndarray, list[tuple]]:
    """Per element, each lane's (a == b, a == 0) as rows 0-1 and 2-3 of a (6, n) array
    (rows 4-5 stay 0 unless a branch on is_zero split the pair), and a with 0 -> 1."""
    n = len(a)
    flags = cuda.to_device(np.zeros((6, n), dtype=np.uint32))
    out = _poisoned((FQ2_LIMBS, n))
    with fast_handoffs():
        _launch_pairs(_fq2_pair_flags_kernel(), n, flags, out, _fq2_upload(a), _fq2_upload(b))
    return flags.copy_to_host(), _fq2_download(out)
