"""Inlined on CUDA, called out of line on the CPU: keeps CPU (and simulator) compiles small.

The field functions are ``njit(forceinline=True)``, which CUDA needs (limb arrays stay in
registers only when everything is inlined). On the CPU the same inlining made compiles
explode: Numba links every callee's code into each compiled function and re-optimizes it,
and LLVM inlines single-use callees back, so one G1 point formula took 10 s, a test
dispatcher over all formulas 110 s (G2: 280 s) and the G1 decode kernel 165 s.

- ``field_call(fn, arity, limbs)``: a field operation (out, a[, b]) that CUDA inlines and
  the CPU calls as an external symbol bound to a ``cfunc``: each operation is compiled
  once (per machine: the cfunc is in the kernel cache), stays out of its callers'
  modules and cannot be inlined back. A call costs a few ns next to a ~100 ns product.
  Arrays must be C-contiguous (local arrays and their slices are); others fall back to
  an ordinary out-of-line call.
- ``split(fn)``: a point formula, inlined on CUDA and an ordinary out-of-line ``njit``
  function on the CPU.
"""

from __future__ import annotations

import inspect
import re
import threading
from functools import lru_cache
from typing import Callable

from llvmlite import binding as llvm
from numba_cuzk import _compat  # noqa: F401,I001  (numba patched before its first use)
from numba import carray, cfunc, njit, types
from numba.core import extending as cpu_extending

from numba_cuzk.field import adx
from numba_cuzk.field.fq2 import FQ2_LIMBS, fq2_ops
from numba_cuzk.field.mont import device, fq_ops
from numba_cuzk.field.params import FQ
from numba_cuzk.field.target import cuda_overload, forwarder
from numba_cuzk.kernel_cache import add_cpu_preload, specialize

_U32_PTR = types.CPointer(types.uint32)
# CUDA overload implementations are separate functions that NVVM may leave as calls (the
# G2 decode kernel kept three, with 1.9 KB of stack, and faulted on the H200): force them
# inline like the field functions they wrap.
_INLINE = {"forceinline": True}


@cpu_extending.intrinsic
def _data_pointer(typingctx, arr):
    """The data pointer of a numpy/local array (CPU only)."""
    if not isinstance(arr, types.Array):
        return None

    def codegen(context, builder, signature, args):
        return context.make_array(signature.args[0])(context, builder, args[0]).data

    return types.CPointer(arr.dtype)(arr), codegen


def _contiguous_u32(*args) -> bool:
    return all(isinstance(a, types.Array) and a.dtype == types.uint32 and a.layout == "C" and a.ndim == 1
               for a in args)


def split(fn: Callable) -> Callable:
    """Decorator: a Python function -> inlined in CUDA kernels, out of line on the CPU."""
    arity = len(inspect.signature(fn).parameters)
    inlined, outlined = device(fn), njit(fn)
    stub = forwarder(outlined, arity)  # what plain Python (simulator kernels) calls
    forward_cpu, forward_cuda = forwarder(outlined, arity), forwarder(inlined, arity)
    cpu_extending.overload(stub)(forwarder(lambda *args: forward_cpu, arity))
    cuda_overload(stub, jit_options=_INLINE)(forwarder(lambda *args: forward_cuda, arity))
    return stub


def _symbol(fn: Callable, limbs: int) -> str:
    py_func = getattr(fn, "py_func", fn)  # a dispatcher, or a stub with overloads
    return re.sub(r"\W", "_", f"{py_func.__module__}.{py_func.__qualname__}.{limbs}")


# The cfunc templates _body2 and _body3 read ``op`` and ``shape``, bound per instance by
# kernel_cache.specialize (field_call): one instance per field operation and limb count,
# named by _symbol (module, qualname and limb count, e.g. ..._locals__mul_12). These
# placeholders are never compiled.
op = None  # the field operation op(out, a[, b])
shape = (0,)  # (limbs,): the arrays' extent


def _body2(o, a):
    op(carray(o, shape), carray(a, shape))


def _body3(o, a, b):
    op(carray(o, shape), carray(a, shape), carray(b, shape))


product = None  # field/adx.py's product(out, a, b), bound by _adx_twins


def _adx_square(out, a):
    product(out, a, a)


@lru_cache(maxsize=None)
def _adx_twins() -> dict:
    """{operation: its twin}: Fq's and Fq2's product and square made of field/adx.py's Fq
    product (Fq2's formulas as fq2.py writes them, their Fq products the assembly's)."""
    mul = adx.product(FQ)
    return {fq_ops.mul: mul, fq_ops.sqr: device(specialize(_adx_square, "fq_sqr_adx", product=mul)),
            fq2_ops.mul: device(specialize(fq2_ops.mul.py_func, "fq2_mul_adx", _mul=mul)),
            fq2_ops.sqr: device(specialize(fq2_ops.sqr.py_func, "fq2_sqr_adx", _mul=mul))}


_BOUND: dict[str, object] = {}  # symbol -> its cfunc, once bound in this process
_DEFINED: dict[str, Callable] = {}  # symbol -> how to build its cfunc
_BIND_LOCK = threading.Lock()


def _bind(symbol: str) -> None:
    """Compile (or load from the kernel cache) the symbol's cfunc and make the name
    resolve to it in the process's JIT."""
    with _BIND_LOCK:
        if symbol not in _BOUND:
            compiled = _DEFINED[symbol]()
            llvm.add_symbol(symbol, compiled.address)
            _BOUND[symbol] = compiled


def _bind_all() -> None:
    for symbol in list(_DEFINED):
        _bind(symbol)


add_cpu_preload(_bind_all)


def _build(symbol: str, fn: Callable, arity: int, limbs: int, use_adx: bool | None = None):
    """The symbol's cfunc: Fq's and Fq2's product and square on field/adx.py's assembly
    where this host runs it (``use_adx`` None: adx.available()), every other operation (and
    those elsewhere) as itself."""
    if use_adx is None:
        use_adx = adx.available()
    twin = _adx_twins().get(fn) if use_adx else None
    name, op = (symbol, fn) if twin is None else (f"{symbol}_adx", twin)
    body = specialize(_body2 if arity == 2 else _body3, name, op=op, shape=(limbs,))
    return cfunc(types.void(*([_U32_PTR] * arity)), cache=True)(body)


def compile_products() -> None:
    """Both cfuncs of Fq's and Fq2's product and square, the ADX assembly's (on x86-64)
    and LLVM's, into the kernel cache, none bound: an archive built here then serves hosts
    with ADX and without (`numba-cuzk compile`'s cpu_codec task)."""
    for fn, arity, limbs in ((fq_ops.mul, 3, FQ.limbs), (fq_ops.sqr, 2, FQ.limbs), (fq2_ops.mul, 3, FQ2_LIMBS),
                             (fq2_ops.sqr, 2, FQ2_LIMBS)):
        for use_adx in (True, False) if adx.X86_64 else (False,):
            _build(_symbol(fn, limbs), fn, arity, limbs, use_adx)


@lru_cache(maxsize=None)
def field_call(fn: Callable, arity: int, limbs: int) -> Callable:
    """A ``device`` field function fn(out, a[, b]) on ``limbs``-limb arrays -> inlined on
    CUDA; on the CPU a call of the external symbol _symbol(fn, limbs), a cfunc compiled
    once per machine. A symbol, not the cfunc's address, is what CPU code embeds, so the
    callers can be cached too (an address changes every process); the symbol is bound
    when a caller is typed and, for cached callers, before a CpuKernel runs."""
    if arity not in (2, 3):
        raise ValueError(f"field_call: arity {arity} not supported")
    symbol = _symbol(fn, limbs)
    _DEFINED[symbol] = lambda: _build(symbol, fn, arity, limbs)
    external = types.ExternalFunction(symbol, types.void(*([_U32_PTR] * arity)))
    fallback = njit(forwarder(fn, arity))

    if arity == 2:
        def stub(out, a):
            fallback(out, a)

        def cpu_impl(out, a):
            if _contiguous_u32(out, a):
                _bind(symbol)
                return lambda out, a: external(_data_pointer(out), _data_pointer(a))
            return lambda out, a: fallback(out, a)

        cuda_overload(stub, jit_options=_INLINE)(lambda out, a: lambda out, a: fn(out, a))
    else:
        def stub(out, a, b):
            fallback(out, a, b)

        def cpu_impl(out, a, b):
            if _contiguous_u32(out, a, b):
                _bind(symbol)
                return lambda out, a, b: external(_data_pointer(out), _data_pointer(a), _data_pointer(b))
            return lambda out, a, b: fallback(out, a, b)

        cuda_overload(stub, jit_options=_INLINE)(lambda out, a, b: lambda out, a, b: fn(out, a, b))
    cpu_extending.overload(stub)(cpu_impl)
    return stub
