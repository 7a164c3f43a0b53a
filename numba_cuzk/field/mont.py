"""Montgomery arithmetic on 32-bit limb arrays, one source for the CPU and CUDA targets.

``montgomery(params)`` builds a ``PrimeFieldOps``: ``@njit`` functions that CPU code calls
directly and CUDA kernels call as device functions (Numba recompiles them for the GPU,
``forceinline`` so that limb arrays stay in registers). Every function takes uint32
arrays of ``limbs`` entries (any stride), writes its result into ``out`` (which may alias
an input) and expects and returns canonical Montgomery residues in [0, p).

Style, from ../shared/guide/numba-cuda.md: uint32 limbs held in uint64 accumulators, so a
32x32-bit product plus two 32-bit words never overflows; loops with constant trip counts
(NVVM unrolls them: no local memory); unsigned constants only (a bare int literal would
promote uint64 arithmetic to float64).

``mul``, ``sqr``, ``add``, ``sub`` and ``neg`` use the PTX carry chains of carry.py on CUDA;
on the CPU target they are wide.py's 64-bit-limb intrinsics (128-bit products). The
simulator runs the portable loops below; ``mul_cios``/``sqr_cios`` name the portable
products for benchmarks.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache, partial
from typing import Callable

import numpy as np
from numba_cuzk import _compat  # noqa: F401,I001  (numba patched before its first use)
from numba import int64, njit, uint32, uint64
from numba.core import extending as cpu_extending

from numba_cuzk.field import carry
from numba_cuzk.field.carry import opaque
from numba_cuzk.field.params import FQ, FR, FieldParams
from numba_cuzk.field.target import cuda_overload, local_u32
from numba_cuzk.field.wide import wide_ops

_MASK = np.uint64(0xFFFFFFFF)
_SHIFT = np.uint64(32)
_SIGN = np.uint64(63)
_ZERO = np.uint64(0)
_ONE = np.uint64(1)

device = njit(forceinline=True)  # CPU function, inlined where a CUDA kernel calls it


@dataclass(frozen=True)
class FieldOps:
    """The functions every field offers (Fr, Fq here, Fq2 in fq2.py), so code over a field
    (curve formulas for G1 over Fq and G2 over Fq2) is written once over an ``ops``.

    Signatures (a, b, out: uint32 arrays of ``limbs``; arr: uint32 array (limbs, n)):
      load(out, arr, i), store(arr, i, a), copy(out, a), set_zero(out), set_one(out),
      is_zero(a) -> bool, eq(a, b) -> bool, select(out, cond, a, b) (cond ? a : b),
      add/sub/mul(out, a, b), neg/dbl/sqr(out, a), inv(out, a) (inv(0) = 0).
    """

    limbs: int
    load: Callable
    store: Callable
    copy: Callable
    set_zero: Callable
    set_one: Callable
    is_zero: Callable
    eq: Callable
    select: Callable
    add: Callable
    sub: Callable
    neg: Callable
    dbl: Callable
    mul: Callable
    sqr: Callable
    inv: Callable


@dataclass(frozen=True)
class PrimeFieldOps(FieldOps):
    """FieldOps of a prime field, plus: to_mont(out, a), from_mont(out, a), pow(out, a, e)
    with e canonical uint32 limbs (Fermat: inv = pow(a, p - 2)), reduce_once(out, t)
    (t - p if t >= p, for any t < 2p, e.g. a 256-bit scalar into Fr), and the portable
    mul_cios/sqr_cios that mul/sqr replace on CUDA and the CPU (kept for benchmarks).

    Lazy arithmetic, for chains of operations that reduce once at the end (the NTT):
    add_lazy/sub_lazy(out, a, b) and mul_lazy(out, a, b) take and return values in
    [0, 2p) (mul_lazy's a canonical), congruent to the canonical result; reduce_once
    brings them to [0, p). mul_lazy skips the product's final subtraction (~18 of ~205
    instructions for Fr on CUDA). On the CPU target they are add/sub/mul (canonical
    values are lazy ones too)."""

    params: FieldParams
    reduce_once: Callable
    add_lazy: Callable
    sub_lazy: Callable
    mul_lazy: Callable
    mul_cios: Callable
    sqr_cios: Callable
    to_mont: Callable
    from_mont: Callable
    pow: Callable


def _limb_tuple(value: int, n: int) -> tuple:
    return tuple(np.uint32((value >> (32 * j)) & 0xFFFFFFFF) for j in range(n))


def _by_target(name: str, portable: Callable, cuda_impl: Callable[[], Callable], cpu_impl: Callable | None,
               arity: int) -> Callable:
    """A function ``name`` that is ``cuda_impl()`` inside CUDA kernels (made where a kernel
    first calls it: an intrinsic needs numba.cuda), ``cpu_impl`` in CPU code (``portable``
    where None), and ``portable`` when called from Python (the simulator); named beside
    ``portable`` (curve/target.py names CPU symbols after it)."""
    cpu_impl = cpu_impl or portable
    if arity == 3:

        def stub(out, a, b):
            portable(out, a, b)

        def cpu_typer(out, a, b):
            return lambda out, a, b: cpu_impl(out, a, b)

        def cuda_typer(out, a, b):
            impl = cuda_impl()
            return lambda out, a, b: impl(out, a, b)

    else:

        def stub(out, a):
            portable(out, a)

        def cpu_typer(out, a):
            return lambda out, a: cpu_impl(out, a)

        def cuda_typer(out, a):
            impl = cuda_impl()
            return lambda out, a: impl(out, a)

    cpu_extending.overload(stub, jit_options={"forceinline": True})(cpu_typer)
    cuda_overload(stub)(cuda_typer)
    stub.__name__ = name
    stub.__qualname__ = f"{portable.__qualname__.rpartition('.')[0]}.{name}"
    return stub


def _limb_ops(N: int, one_mont: tuple) -> dict:
    """Moves, constants and comparisons of N-limb values (no arithmetic mod p)."""
    ONE_MONT = one_mont

    @device
    def load(out, arr, i):
        for j in range(N):
            out[j] = arr[j, i]

    @device
    def store(arr, i, a):
        for j in range(N):
            arr[j, i] = a[j]

    @device
    def copy(out, a):
        for j in range(N):
            out[j] = a[j]

    @device
    def set_zero(out):
        for j in range(N):
            out[j] = uint32(0)

    @device
    def set_one(out):
        for j in range(N):
            out[j] = ONE_MONT[j]

    @device
    def is_zero(a):
        acc = uint32(0)
        for j in range(N):
            acc |= a[j]
        return acc == uint32(0)

    @device
    def eq(a, b):
        acc = uint32(0)
        for j in range(N):
            acc |= a[j] ^ b[j]
        return acc == uint32(0)

    @device
    def select(out, cond, a, b):
        mask = uint32(0) - uint32(cond)  # all ones when cond
        for j in range(N):
            out[j] = (a[j] & mask) | (b[j] & ~mask)

    return dict(load=load, store=store, copy=copy, set_zero=set_zero, set_one=set_one, is_zero=is_zero, eq=eq,
                select=select)


def _modular_ops(N: int, P: tuple, P2: tuple, is_zero: Callable) -> dict:
    """The portable sums and differences mod p (P: the modulus' uint64 limbs) and mod 2p
    (P2, the lazy ones), and the one conditional subtraction they share."""

    @device
    def _subtract_once(out, t, carry, q):
        """out = t + carry 2^(32N) - q if that is >= 0, else t: q is P (canonical values) or
        P2 (lazy ones), carry 0 or 1 (a lazy sum of Fr's may pass 2^(32N): 4p > R)."""
        d = local_u32(N)
        borrow = _ZERO
        for j in range(N):
            v = uint64(t[j]) - q[j] - borrow
            d[j] = uint32(v & _MASK)
            borrow = v >> _SIGN
        keep = uint32(0) - uint32(borrow & (carry ^ _ONE))  # all ones when t + carry R < q
        for j in range(N):
            out[j] = (t[j] & keep) | (d[j] & ~keep)

    @device
    def _reduce_once(out, t):
        """out = t - p if t >= p else t, for t < 2p held in N limbs."""
        _subtract_once(out, t, _ZERO, P)

    @device
    def _add_mod(out, a, b, q):
        """a + b mod q for a, b < q (q = P or P2): one subtraction, the sum's carry counted."""
        t = local_u32(N)
        c = _ZERO
        for j in range(N):
            v = uint64(a[j]) + uint64(b[j]) + c
            t[j] = uint32(v & _MASK)
            c = v >> _SHIFT
        _subtract_once(out, t, c, q)

    @device
    def _sub_mod(out, a, b, q):
        """a - b mod q for a, b < q: q added back where a < b."""
        t = local_u32(N)
        borrow = _ZERO
        for j in range(N):
            v = uint64(a[j]) - uint64(b[j]) - borrow
            t[j] = uint32(v & _MASK)
            borrow = v >> _SIGN
        mask = _ZERO - borrow
        c = _ZERO
        for j in range(N):
            v = uint64(t[j]) + (q[j] & mask) + c
            out[j] = uint32(v & _MASK)
            c = v >> _SHIFT

    @device
    def add_portable(out, a, b):
        _add_mod(out, a, b, P)

    @device
    def sub_portable(out, a, b):
        _sub_mod(out, a, b, P)

    @device
    def neg_portable(out, a):
        nonzero = uint64(0) if is_zero(a) else _MASK  # -0 = 0, not p
        borrow = _ZERO
        for j in range(N):
            v = (P[j] & nonzero) - uint64(a[j]) - borrow
            out[j] = uint32(v & _MASK)
            borrow = v >> _SIGN

    @device
    def add_lazy_portable(out, a, b):
        _add_mod(out, a, b, P2)

    @device
    def sub_lazy_portable(out, a, b):
        _sub_mod(out, a, b, P2)

    return dict(reduce_once=_reduce_once, add=add_portable, sub=sub_portable, neg=neg_portable,
                add_lazy=add_lazy_portable, sub_lazy=sub_lazy_portable)


def _cios_ops(N: int, P: tuple, N0: np.uint64, reduce_once: Callable) -> dict:
    """The portable Montgomery products (CIOS): mul_cios, sqr_cios and mul_lazy;
    ``reduce_once``: _modular_ops' portable one."""
    N1 = N + 1
    _reduce_once = reduce_once

    @device
    def mul_lazy_portable(out, a, b):
        t = local_u32(N1)
        _cios(t, a, b)
        for j in range(N):
            out[j] = t[j]

    @device
    def _cios(t, a, b):
        """t[:N] = a b / R mod p in [0, a + p) (N + 1 words of scratch): coarsely integrated
        operand scanning; for a < p, t stays below a + p < 2p < 2^(32N) between rows
        whatever b's limbs, so N + 1 words hold every intermediate sum."""
        for j in range(N1):
            t[j] = uint32(0)
        for i in range(N):
            bi = uint64(b[i])
            c = _ZERO
            for j in range(N):
                v = uint64(t[j]) + uint64(a[j]) * bi + c
                t[j] = uint32(v & _MASK)
                c = v >> _SHIFT
            t[N] = uint32(c)
            m = (uint64(t[0]) * N0) & _MASK
            c = (uint64(t[0]) + m * P[0]) >> _SHIFT
            for j in range(1, N):
                v = uint64(t[j]) + m * P[j] + c
                t[j - 1] = uint32(v & _MASK)
                c = v >> _SHIFT
            t[N - 1] = uint32((uint64(t[N]) + c) & _MASK)

    @device
    def mul_cios(out, a, b):
        t = local_u32(N1)
        _cios(t, a, b)
        _reduce_once(out, t)

    @device
    def sqr_cios(out, a):
        mul_cios(out, a, a)

    return dict(mul_cios=mul_cios, sqr_cios=sqr_cios, mul_lazy=mul_lazy_portable)


def _derived_ops(N: int, r2: tuple, p_minus_2: np.ndarray, copy: Callable, set_one: Callable, add: Callable,
                 mul: Callable, sqr: Callable) -> dict:
    """What the target's add, mul and sqr build: doubling, the Montgomery conversions, powers
    and Fermat's inverse."""
    R2, P_MINUS_2 = r2, p_minus_2

    @device
    def dbl(out, a):
        add(out, a, a)

    @device
    def to_mont(out, a):
        r2 = local_u32(N)
        for j in range(N):
            r2[j] = R2[j]
        mul(out, a, r2)

    @device
    def from_mont(out, a):
        one = local_u32(N)
        for j in range(N):
            one[j] = uint32(0)
        one[0] = uint32(1)
        mul(out, a, one)

    @device
    def pow_(out, a, e):
        """Left-to-right square and multiply over all 32*len(e) exponent bits (e uint32
        limbs in global or constant memory: the loop indexes it at run time)."""
        acc = local_u32(N)
        base = local_u32(N)
        copy(base, a)
        set_one(acc)
        n_bits = int64(opaque(uint32(32 * e.shape[0])))
        for k in range(n_bits - 1, -1, -1):
            bit = uint32(k)
            sqr(acc, acc)
            if (e[bit >> uint32(5)] >> (bit & uint32(31))) & uint32(1):
                mul(acc, acc, base)
        copy(out, acc)

    @device
    def inv(out, a):
        pow_(out, a, P_MINUS_2)

    return dict(dbl=dbl, to_mont=to_mont, from_mont=from_mont, pow=pow_, inv=inv)


@lru_cache(maxsize=None)
def montgomery(params: FieldParams) -> PrimeFieldOps:
    """Build the PrimeFieldOps of ``params`` (cached: one set of functions per field): the
    portable functions of _limb_ops, _modular_ops and _cios_ops, each arithmetic one
    replaced inside CUDA kernels by carry.py's PTX carry chains and in CPU code by
    wide.py's intrinsics (_by_target), then _derived_ops over those."""
    N = params.limbs
    P = tuple(np.uint64(x) for x in params.modulus_limbs)
    P2 = tuple(np.uint64(x) for x in _limb_tuple(2 * params.modulus, N))
    P_MINUS_2 = np.array(_limb_tuple(params.modulus - 2, N), dtype=np.uint32)  # constant memory on CUDA
    P_MINUS_2.flags.writeable = False
    limbs = _limb_ops(N, _limb_tuple(params.r, N))
    portable = _modular_ops(N, P, P2, limbs["is_zero"])
    portable.update(_cios_ops(N, P, np.uint64(params.n0), portable["reduce_once"]))
    cpu = wide_ops(params)
    add = _by_target("add", portable["add"], partial(carry.intrinsic, params, "add"), cpu["add"], 3)
    sub = _by_target("sub", portable["sub"], partial(carry.intrinsic, params, "sub"), cpu["sub"], 3)
    neg = _by_target("neg", portable["neg"], partial(carry.intrinsic, params, "neg"), cpu["neg"], 2)
    mul = _by_target("mul", portable["mul_cios"], partial(carry.intrinsic, params, "mul"), cpu["mul"], 3)
    sqr = _by_target("sqr", portable["sqr_cios"], partial(carry.intrinsic, params, "sqr"), cpu["sqr"], 2)
    add_lazy = _by_target("add_lazy", portable["add_lazy"], partial(carry.intrinsic, params, "add_lazy"), cpu["add"], 3)
    sub_lazy = _by_target("sub_lazy", portable["sub_lazy"], partial(carry.intrinsic, params, "sub_lazy"), cpu["sub"], 3)
    mul_lazy = _by_target("mul_lazy", portable["mul_lazy"], partial(carry.intrinsic, params, "mul_lazy"), cpu["mul"], 3)
    reduce_once = _by_target("reduce_once", portable["reduce_once"], partial(carry.intrinsic, params, "reduce"), None, 2)
    derived = _derived_ops(N, _limb_tuple(params.r2, N), P_MINUS_2, limbs["copy"], limbs["set_one"], add, mul, sqr)
    return PrimeFieldOps(
        params=params, limbs=N, **limbs, add=add, sub=sub, neg=neg, mul=mul, sqr=sqr, reduce_once=reduce_once,
        add_lazy=add_lazy, sub_lazy=sub_lazy, mul_lazy=mul_lazy, mul_cios=portable["mul_cios"],
        sqr_cios=portable["sqr_cios"], **derived,
    )


fr_ops = montgomery(FR)
fq_ops = montgomery(FQ)
