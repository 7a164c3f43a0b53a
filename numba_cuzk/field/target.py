"""Primitives whose lowering differs between the CPU and CUDA targets.

The field arithmetic is written once, as ``@njit`` functions that Numba compiles for the
CPU and, when a kernel calls them, for CUDA. The only things that cannot be written the
same way for both are collected here:

- ``local_u32(n)``: a scratch array of n uint32 limbs that lives in registers. On CUDA it
  is ``cuda.local.array``; on the CPU a stack ``alloca`` (``np.empty`` would be a heap
  allocation per field operation, ~10x the cost of a product). Called from plain Python
  (simulator kernels) it returns a numpy array.
- ``is_device_array(x)``: whether host wrappers should launch a kernel or a CPU loop;
  ``fill_zero``: zeroing an array where it lives (a device memset on the GPU);
  ``sync_event``: an event for ordering streams (the simulator's takes no options).

``n`` must be a compile-time constant (a literal or a module/closure constant).
"""

from __future__ import annotations

import numpy as np
from llvmlite import ir
from numba import config, cuda, types
from numba.core import cgutils
from numba.core import extending as cpu_extending
from numba.cuda import extending as cuda_extending


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


@cuda_extending.overload(local_u32, inline="always")
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
