"""Primitives whose lowering differs between the CPU and CUDA targets.

The field arithmetic is written once, as ``@njit`` functions that Numba compiles for the
CPU and, when a kernel calls them, for CUDA. The only things that cannot be written the
same way for both are collected here:

- ``local_u32(n)``: a scratch array of n uint32 limbs that lives in registers. On CUDA it
  is ``cuda.local.array``; on the CPU a stack ``alloca`` (``np.empty`` would be a heap
  allocation per field operation, ~10x the cost of a product). Called from plain Python
  (simulator kernels) it returns a numpy array.
- ``cuda_overload(fn)``: an overload for the CUDA target, registered when numba.cuda
  loads (_compat item 7), so that a process on the CPU never loads it;
- ``is_device_array(x)``: whether host wrappers should launch a kernel or a CPU loop;
  ``fill_zero``: zeroing an array where it lives (a device memset on the GPU);
  ``sync_event``: an event for ordering streams (the simulator's takes no options).

``n`` must be a compile-time constant (a literal or a module/closure constant).
"""

from __future__ import annotations

import inspect
import threading
from typing import Callable

import numpy as np
from llvmlite import ir
from numba_cuzk import _compat  # noqa: I001  (numba patched before its first use)
from numba import config, cuda, int32, njit, types, uint32
from numba.core import cgutils
from numba.core import extending as cpu_extending


def cuda_overload(fn: Callable, **options) -> Callable:
    """Decorator: ``numba.cuda.extending.overload(fn, **options)`` of the typer, registered
    once numba.cuda loads (_compat.after_cuda_loads), so that defining it loads nothing;
    the typer is returned as it is."""
    def decorate(typer: Callable) -> Callable:
        def register() -> None:
            from numba.cuda import extending

            extending.overload(fn, **options)(typer)

        _compat.after_cuda_loads(register)
        return typer

    return decorate


def local_u32(n: int) -> np.ndarray:
    """Scratch array of n uint32 (zero-filled only on the Python path)."""
    return np.zeros(n, dtype=np.uint32)


def _literal_size(n) -> int | None:
    """The array length if n is typed as an integer literal; None lets Numba retry."""
    return n.literal_value if isinstance(n, types.IntegerLiteral) else None


@cpu_extending.intrinsic
def _stack_u32(typingctx, n):
    size = _literal_size(n)
    if size is None:
        return None
    array_type = types.Array(types.uint32, 1, "C")

    def codegen(context, builder, signature, args):
        i32 = ir.IntType(32)
        slot = cgutils.alloca_once(builder, ir.ArrayType(i32, size))  # entry block
        array = context.make_array(array_type)(context, builder)
        intp = context.get_value_type(types.intp)
        context.populate_array(
            array,
            data=builder.bitcast(slot, i32.as_pointer()),
            shape=[ir.Constant(intp, size)],
            strides=[ir.Constant(intp, 4)],
            itemsize=ir.Constant(intp, 4),
            meminfo=None,
        )
        return array._getvalue()

    return array_type(n), codegen


@cpu_extending.overload(local_u32, inline="always")
def _local_u32_cpu(n):
    if _literal_size(n) is not None:
        return lambda n: _stack_u32(n)


@cuda_overload(local_u32, inline="always")
def _local_u32_cuda(n):
    size = _literal_size(n)
    if size is not None:
        return lambda n: cuda.local.array(size, types.uint32)


def is_device_array(x) -> bool:
    """True for GPU arrays: Numba device arrays, the simulator's stand-ins, and any
    object exposing ``__cuda_array_interface__`` (CuPy, PyTorch)."""
    return not isinstance(x, np.ndarray) and (
        hasattr(x, "__cuda_array_interface__") or hasattr(x, "copy_to_host")
    )


def fill_zero(array, stream=0) -> None:
    """Set a C-contiguous array (device or host) to 0 bytes: a device memset queued on
    ``stream`` on the GPU (no kernel, no host copy); a copy in the simulator."""
    if not is_device_array(array):
        array[...] = 0
    elif config.ENABLE_CUDASIM:
        array.copy_to_device(np.zeros(array.shape, dtype=array.dtype))
    else:
        from numba.cuda.cudadrv.driver import device_memset

        if not array.is_c_contiguous():
            raise ValueError("fill_zero: the device array must be C-contiguous")
        if array.size:
            device_memset(array, 0, array.size * array.dtype.itemsize, stream=stream)


def sync_event():
    """A CUDA event for ordering streams only (no timing: cheaper to record and wait on);
    the simulator's events take no options."""
    return cuda.event() if config.ENABLE_CUDASIM else cuda.event(timing=False)


_FORWARDERS = {
    0: lambda t: lambda: t(),
    1: lambda t: lambda a: t(a),
    2: lambda t: lambda a, b: t(a, b),
    3: lambda t: lambda a, b, c: t(a, b, c),
    4: lambda t: lambda a, b, c, d: t(a, b, c, d),
    5: lambda t: lambda a, b, c, d, e: t(a, b, c, d, e),
    6: lambda t: lambda a, b, c, d, e, f: t(a, b, c, d, e, f),
}


def forwarder(target: Callable, arity: int) -> Callable:
    """A function of ``arity`` parameters a, b, c, ... that returns target(...): the fixed
    parameter names Numba's overloads need to match."""
    if arity not in _FORWARDERS:
        raise ValueError(f"arity {arity} not supported")
    return _FORWARDERS[arity](target)


def pair_function(fn: Callable) -> Callable:
    """Decorator: ``fn`` inlined where a CUDA kernel calls it, run as plain Python where
    Python calls it (a simulated kernel's thread): code that calls pair_exchange."""
    arity = len(inspect.signature(fn).parameters)
    stub, forward = forwarder(fn, arity), forwarder(njit(forceinline=True)(fn), arity)
    cuda_overload(stub, jit_options={"forceinline": True})(forwarder(lambda *args: forward, arity))
    return stub


def pair_lane() -> int:
    """0 or 1: this thread's half of its lane pair (lanes 2k and 2k + 1)."""
    return threading.current_thread().thread_id & 1


@cuda_overload(pair_lane, inline="always")
def _pair_lane_cuda():
    return lambda: cuda.laneid & 1


class _PairSlots:
    """The simulator's exchange of one lane pair: a value per lane and a barrier."""

    def __init__(self) -> None:
        self.values = [None, None]
        self.barrier = threading.Barrier(2, timeout=120)  # a partner that never comes: an error, not a hang


_PAIRS: dict = {}
_PAIRS_LOCK = threading.Lock()


def pair_exchange(x):
    """The partner lane's ``x`` (uint32); both lanes of a pair must call it together."""
    return _exchange(x)


def pair_swap(out, a) -> None:
    """out <- the partner lane's uint32 array ``a`` (out may be a)."""
    out[:] = _exchange(a.copy())


def _exchange(x):
    thread = threading.current_thread()
    key = (tuple(thread.blockIdx), thread.thread_id >> 1)
    with _PAIRS_LOCK:
        slots = _PAIRS.setdefault(key, _PairSlots())
    lane = thread.thread_id & 1
    slots.values[lane] = x
    slots.barrier.wait()
    other = slots.values[1 - lane]
    slots.barrier.wait()  # the partner has read this lane's value before either writes again
    return other


@cuda_overload(pair_exchange, inline="always")
def _pair_exchange_cuda(x):
    def exchange(x):
        mask = uint32(3) << uint32(cuda.laneid & 30)  # the pair only: other pairs of the warp may diverge
        return uint32(cuda.shfl_xor_sync(mask, int32(x), 1))
    return exchange


@cuda_overload(pair_swap, inline="always")
def _pair_swap_cuda(out, a):
    def swap(out, a):
        mask = uint32(3) << uint32(cuda.laneid & 30)
        for j in range(len(a)):
            out[j] = uint32(cuda.shfl_xor_sync(mask, int32(a[j]), 1))
    return swap
