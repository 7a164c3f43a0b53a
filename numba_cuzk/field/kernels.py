"""Element-wise field kernels the prover needs, on device arrays (GPU) or numpy (CPU).

All arrays use codec.py's layout, (limbs, n) uint32, Montgomery form. Each operation is
one per-element body (an ``@njit`` function of the index) run by a CUDA kernel (one
thread per element) when the arrays are device arrays, or by a parallel CPU loop when
they are numpy arrays: one source, both backends (``index_kernels``, which curve/ uses
too). The kernels are named by operation and field: ``mul_sub_fr``, ``mul_sub_fr_cpu``.

- ``mul_sub(out, a, b, c)``: out = a*b - c (the prover's A*B - C on the coset)
- ``add(out, a, b)``: out = a + b (setup's combination of the column sums)
- ``scale(out, a, k)``: out = a * k for one constant k (limbs,)
- ``mul_powers(out, a, g, offset=0)``: out[i] = a[i] * g^(offset+i) (coset shifts)
- ``batch_inverse(out, a)``: out = 1/a with Montgomery's trick (1/0 = 0)
- ``to_montgomery(out, a)``, ``from_montgomery(out, a)``

Device-side wrappers launch on ``stream`` (default: the default stream) and return
``out`` without synchronizing.
"""

from __future__ import annotations

import numpy as np
from numba_cuzk import _compat  # noqa: F401,I001  (numba patched before its first use)
from numba import cuda, prange

from numba_cuzk.field.codec import from_limbs, to_limbs
from numba_cuzk.field.mont import device, montgomery
from numba_cuzk.field.params import FQ, FR, FieldParams
from numba_cuzk.field.target import is_device_array, local_u32
from numba_cuzk.kernel_cache import cpu_kernel, gpu_kernel, specialize

THREADS_PER_BLOCK = 256
INVERSE_CHUNK = 64  # elements per thread in batch_inverse: one Fermat inversion per 64
# per CPU task: an inversion is ~380 products, 6 per element at 64, 0.4 at 1024; a CPU has
# few threads, so the chunk need not be small (2^23 Fr elements on 2 cores: ~86-113 ns
# per element at 64)
CPU_INVERSE_CHUNK = 1024


def _launch(kernel, n: int, stream, *args) -> None:
    if n:
        blocks = (n + THREADS_PER_BLOCK - 1) // THREADS_PER_BLOCK
        kernel[blocks, THREADS_PER_BLOCK, stream or 0](*args)


# The templates below (the kernels of index_kernels) read ``body``, which
# kernel_cache.specialize binds per instance to its per-element function; each names its
# instances (a CPU template's are the same names with _cpu). This placeholder is never compiled.
body = None  # body(i, *arrays): item i of the kernel's arrays


def _gpu_each2(n, a, b):
    """Template of check_g1 (and of check_g2 in the simulator): body(i, a, b), a thread per i < n."""
    i = cuda.grid(1)
    if i < n:
        body(i, a, b)


def _gpu_each3(n, a, b, c):
    """Template of decode_g1, decode_g2, jacobian_to_affine_g1, jacobian_to_affine_g2,
    xyzz_to_affine_g1 and xyzz_to_affine_g2 (curve/kernels.py): body(i, a, b, c), a thread per i < n."""
    i = cuda.grid(1)
    if i < n:
        body(i, a, b, c)


def _gpu_each4(n, a, b, c, d):
    """Template of mul_sub_fr, add_fr, scale_fr, mul_powers_fr, to_montgomery_fr,
    from_montgomery_fr, batch_inverse_fr and of mul_sub_fq, add_fq, scale_fq, mul_powers_fq,
    to_montgomery_fq, from_montgomery_fq, batch_inverse_fq: body(i, a, b, c, d), a thread per i < n."""
    i = cuda.grid(1)
    if i < n:
        body(i, a, b, c, d)


def _cpu_each2(n, a, b):
    """Template of the _cpu twins of check_g1 and check_g2: body(i, a, b) for i < n, in parallel."""
    for i in prange(n):
        body(i, a, b)


def _cpu_each3(n, a, b, c):
    """Template of the _cpu twins of decode_g1, decode_g2, jacobian_to_affine_g1,
    jacobian_to_affine_g2, xyzz_to_affine_g1 and xyzz_to_affine_g2: body(i, a, b, c) for
    i < n, in parallel."""
    for i in prange(n):
        body(i, a, b, c)


def _cpu_each4(n, a, b, c, d):
    """Template of the _cpu twins of mul_sub_fr, add_fr, scale_fr, mul_powers_fr,
    to_montgomery_fr, from_montgomery_fr, batch_inverse_fr and of mul_sub_fq, add_fq,
    scale_fq, mul_powers_fq, to_montgomery_fq, from_montgomery_fq, batch_inverse_fq:
    body(i, a, b, c, d) for i < n, in parallel."""
    for i in prange(n):
        body(i, a, b, c, d)


def _gpu_pairs2(n, a, b):
    """Template of check_g2 on the GPU: body(i, a, b) on the lane pair 2i, 2i + 1 (2n threads)."""
    i = cuda.grid(1) // 2
    if i < n:
        body(i, a, b)


_TEMPLATES = {2: (_gpu_each2, _cpu_each2), 3: (_gpu_each3, _cpu_each3), 4: (_gpu_each4, _cpu_each4)}


def index_kernels(name: str, body, arrays: int, symbols: bool, pair_body=None, cpu_body=None) -> tuple:
    """(CUDA kernel ``name``, parallel CPU kernel ``name_cpu``), each ``(n, *arrays)``
    running ``body(i, *arrays)`` for i < n (one thread each on the GPU). The templates'
    free name ``body`` is bound by kernel_cache.specialize; ``symbols``: see
    kernel_cache.cpu_kernel (True above field/). ``pair_body`` (two arrays): the CUDA
    kernel runs it instead, item i on the lane pair 2i, 2i + 1 (launch 2n threads).
    ``cpu_body``: the CPU kernel runs it instead (a CPU item may be larger)."""
    gpu, cpu = _TEMPLATES[arrays]
    if pair_body is not None:
        gpu, body_gpu = _gpu_pairs2, pair_body
    else:
        body_gpu = body
    return (gpu_kernel(specialize(gpu, name, body=body_gpu)),
            cpu_kernel(specialize(cpu, f"{name}_cpu", body=cpu_body or body), symbols=symbols, parallel=True))


def _bodies(params: FieldParams) -> dict:
    ops = montgomery(params)
    N, load, store = ops.limbs, ops.load, ops.store
    mul, add, sub, to_mont, from_mont = ops.mul, ops.add, ops.sub, ops.to_mont, ops.from_mont

    @device
    def mul_sub(i, out, a, b, c):
        x = local_u32(N)
        y = local_u32(N)
        load(x, a, i)
        load(y, b, i)
        mul(x, x, y)
        load(y, c, i)
        sub(x, x, y)
        store(out, i, x)

    @device
    def add_each(i, out, a, b, unused):
        x = local_u32(N)
        y = local_u32(N)
        load(x, a, i)
        load(y, b, i)
        add(x, x, y)
        store(out, i, x)

    @device
    def scale(i, out, a, k, unused):
        x = local_u32(N)
        y = local_u32(N)
        load(x, a, i)
        load(y, k, 0)
        mul(x, x, y)
        store(out, i, x)

    @device
    def mul_powers(i, out, a, low, high):
        # g^i = low[i mod L] * high[i div L]: two products per element, tables of sqrt(n).
        x = local_u32(N)
        y = local_u32(N)
        load(x, a, i)
        load(y, low, i & (low.shape[1] - 1))
        mul(x, x, y)
        load(y, high, i // low.shape[1])
        mul(x, x, y)
        store(out, i, x)

    @device
    def convert_to(i, out, a, unused0, unused1):
        x = local_u32(N)
        load(x, a, i)
        to_mont(x, x)
        store(out, i, x)

    @device
    def convert_from(i, out, a, unused0, unused1):
        x = local_u32(N)
        load(x, a, i)
        from_mont(x, x)
        store(out, i, x)

    suffix = params.name.lower()
    kernels = {name: index_kernels(f"{name}_{suffix}", body, 4, symbols=False) for name, body in (
        ("mul_sub", mul_sub), ("add", add_each), ("scale", scale), ("mul_powers", mul_powers),
        ("to_montgomery", convert_to), ("from_montgomery", convert_from),
    )}
    kernels["batch_inverse"] = index_kernels(f"batch_inverse_{suffix}", _inverse_body(params, INVERSE_CHUNK), 4,
                                             symbols=False, cpu_body=_inverse_body(params, CPU_INVERSE_CHUNK))
    return kernels


def _inverse_body(params: FieldParams, chunk: int):
    ops = montgomery(params)
    N, load, store, mul, inv, set_one, is_zero = (
        ops.limbs, ops.load, ops.store, ops.mul, ops.inv, ops.set_one, ops.is_zero)

    @device
    def batch_inverse(t, out, a, unused0, unused1):
        """Chunk t: out[i] = prefix product before i, one inversion, then walk back."""
        n = a.shape[1]
        start = t * chunk
        stop = min(start + chunk, n)
        acc = local_u32(N)
        x = local_u32(N)
        y = local_u32(N)
        set_one(acc)
        for i in range(start, stop):
            load(x, a, i)
            store(out, i, acc)
            if not is_zero(x):
                mul(acc, acc, x)
        inv(acc, acc)
        for i in range(stop - 1, start - 1, -1):
            load(x, a, i)
            if is_zero(x):
                store(out, i, x)
            else:
                load(y, out, i)
                mul(y, y, acc)
                store(out, i, y)
                mul(acc, acc, x)

    return batch_inverse


# The kernels, by field name and operation: mul_sub_fr, mul_sub_fr_cpu, ..., batch_inverse_fq.
KERNELS = {params.name: _bodies(params) for params in (FR, FQ)}


def _check(params: FieldParams, *arrays) -> int:
    shape = tuple(arrays[0].shape)
    n = shape[1] if len(shape) == 2 else -1
    on_device = is_device_array(arrays[0])
    for k, arr in enumerate(arrays):
        if arr.dtype != np.uint32 or tuple(arr.shape) != (params.limbs, n):
            raise ValueError(
                f"argument {k}: expected uint32 array of shape ({params.limbs}, {n}), got {arr.dtype} {arr.shape}"
            )
        if is_device_array(arr) != on_device:
            raise ValueError(f"argument {k}: mix of device and host arrays")
        if not on_device and not arr.flags.c_contiguous:
            raise ValueError(f"argument {k}: host arrays must be C-contiguous")
    return n


def _run(name: str, params: FieldParams, n_threads: int, stream, out, a, b=None, c=None):
    gpu, cpu = KERNELS[params.name][name]
    b = a if b is None else b
    c = a if c is None else c
    if is_device_array(out):
        _launch(gpu, n_threads, stream, n_threads, out, a, b, c)
    elif n_threads:
        cpu(n_threads, out, a, b, c)
    return out


def _like(reference, array: np.ndarray, stream):
    """``array`` on the same side (host or device) as ``reference``."""
    return cuda.to_device(array, stream=stream or 0) if is_device_array(reference) else array


def mul_sub(out, a, b, c, params: FieldParams = FR, stream=None):
    """out = a*b - c element-wise; (limbs, n) Montgomery arrays, all host or all device."""
    n = _check(params, out, a, b, c)
    return _run("mul_sub", params, n, stream, out, a, b, c)


def add(out, a, b, params: FieldParams = FR, stream=None):
    """out = a + b element-wise; (limbs, n) arrays (Montgomery or not: the sum is the same), all
    host or all device."""
    n = _check(params, out, a, b)
    return _run("add", params, n, stream, out, a, b)


def scale(out, a, k: int, params: FieldParams = FR, stream=None):
    """out = a * k element-wise, k a canonical int (converted to Montgomery here)."""
    n = _check(params, out, a)
    k_mont = to_limbs([k * params.r % params.modulus], params)
    return _run("scale", params, n, stream, out, a, _like(a, k_mont, stream))


def powers_tables(g: int, n: int, params: FieldParams = FR) -> tuple[np.ndarray, np.ndarray]:
    """Montgomery tables (low, high) with g^i = low[i mod L] * high[i div L], L = 2^ceil(log2(n)/2)."""
    log_low = max(0, (max(n, 1) - 1).bit_length() + 1) // 2
    size_low = 1 << log_low
    size_high = max(1, -(-n // size_low))
    p, r = params.modulus, params.r
    step = pow(g, size_low, p)
    low = [pow(g, i, p) * r % p for i in range(size_low)]
    high = [pow(step, i, p) * r % p for i in range(size_high)]
    return to_limbs(low, params), to_limbs(high, params)


def mul_powers(out, a, g: int, offset: int = 0, params: FieldParams = FR, stream=None):
    """out[i] = a[i] * g^(offset + i) element-wise; g a canonical int."""
    n = _check(params, out, a)
    low, high = powers_tables(g, n, params)
    if offset:
        shift = pow(g, offset, params.modulus)
        high = to_limbs([x * shift % params.modulus for x in from_limbs(high, params)], params)
    return _run("mul_powers", params, n, stream, out, a, _like(a, low, stream), _like(a, high, stream))


def batch_inverse(out, a, params: FieldParams = FR, stream=None):
    """out = 1/a element-wise (0 maps to 0), Montgomery's trick over chunks of 64 (GPU:
    one per thread) or 1024 (CPU).

    ``out`` must not be ``a``: the backward pass re-reads a.
    """
    n = _check(params, out, a)
    if out is a:
        raise ValueError("batch_inverse: out must be a different array from a")
    chunk = INVERSE_CHUNK if is_device_array(out) else CPU_INVERSE_CHUNK
    return _run("batch_inverse", params, (n + chunk - 1) // chunk, stream, out, a, a, a)


def to_montgomery(out, a, params: FieldParams = FR, stream=None):
    """out = a * R mod p element-wise (canonical -> Montgomery)."""
    n = _check(params, out, a)
    return _run("to_montgomery", params, n, stream, out, a)


def from_montgomery(out, a, params: FieldParams = FR, stream=None):
    """out = a / R mod p element-wise (Montgomery -> canonical)."""
    n = _check(params, out, a)
    return _run("from_montgomery", params, n, stream, out, a)
