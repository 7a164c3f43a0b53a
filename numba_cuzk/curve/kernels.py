"""Bulk point kernels on device arrays (GPU) or numpy arrays (all CPU cores).

Layouts are points.py's: (coords * L, n) uint32, Montgomery. As in field/kernels.py, each
operation is one per-element ``@device`` body run by a CUDA kernel (one thread per item)
or by a parallel CPU loop, chosen by where the arrays live; wrappers launch on ``stream``
and return without synchronizing.

- ``to_affine(out, points, curve, form)``: Jacobian or XYZZ -> affine with Montgomery's
  trick: one field inversion per chunk of AFFINE_CHUNK points, 3 products per point for
  the trick plus the 3-4 of the conversion (identity -> (0, 0)).
- ``decode(status, points, flags, curve)``: decompress/convert/check in place (checks.py);
  encoding.py wraps it with the byte parsing.
- ``check(status, points, curve)``: a key's points (Montgomery, as stored) checked.
"""

from __future__ import annotations

import numpy as np
from numba_cuzk import _compat  # noqa: F401,I001  (numba patched before its first use)
from numba import config

from numba_cuzk.curve.checks import curve_checks, pair_check_stored
from numba_cuzk.curve.decode import point_decoder
from numba_cuzk.curve.params import G1, G2, CurveParams
from numba_cuzk.curve.points import field_ops, point_ops
from numba_cuzk.curve.target import field_call
from numba_cuzk.field.kernels import index_kernels
from numba_cuzk.field.mont import device
from numba_cuzk.field.target import is_device_array, local_u32, pair_function, pair_lane

THREADS_PER_BLOCK = 128
AFFINE_CHUNK = 32  # points per thread in to_affine: one inversion (~570 products) per 32


def _launch(kernel, n: int, stream, *args, lanes: int = 1) -> None:
    """``kernel(n, *args)`` on n * lanes threads (lanes: threads per item)."""
    if n:
        blocks = (n * lanes + THREADS_PER_BLOCK - 1) // THREADS_PER_BLOCK
        kernel[blocks, THREADS_PER_BLOCK, stream or 0](n, *args)


def _to_affine_pair(curve: CurveParams, form: str) -> tuple:
    P = point_ops(curve)
    F = field_ops(curve)
    L = P.limbs
    L2 = 2 * L
    D0 = (2 if form == "jacobian" else 3) * L  # the denominator: Z (Jacobian) or ZZZ (XYZZ)
    mul, sqr = field_call(F.mul, 3, L), field_call(F.sqr, 2, L)
    inv, is_zero, set_one, set_zero = field_call(F.inv, 2, L), F.is_zero, F.set_one, F.set_zero
    load_f, store_f = F.load, F.store
    is_jacobian = form == "jacobian"

    @device
    def body(t, out, points, unused):
        """Chunk t: prefix products of the denominators (kept in out's y rows), one
        inversion, then back to front: 1/d_i = prefix_i * (1/(d_0..d_i))."""
        n = points.shape[1]
        start = t * AFFINE_CHUNK
        stop = min(start + AFFINE_CHUNK, n)
        acc = local_u32(L)
        d = local_u32(L)
        di = local_u32(L)
        u = local_u32(L)
        ys = out[L:L2]
        set_one(acc)
        for i in range(start, stop):
            for j in range(L):
                d[j] = points[D0 + j, i]
            store_f(ys, i, acc)
            if not is_zero(d):
                mul(acc, acc, d)
        inv(acc, acc)
        for i in range(stop - 1, start - 1, -1):
            for j in range(L):
                d[j] = points[D0 + j, i]
            if is_zero(d):
                set_zero(u)
                store_f(out, i, u)
                store_f(ys, i, u)
                continue
            load_f(di, ys, i)
            mul(di, di, acc)  # 1/d_i
            mul(acc, acc, d)
            for j in range(L):
                u[j] = points[j, i]
            if is_jacobian:  # x = X/Z^2, y = Y/Z^3
                sqr(d, di)
                mul(u, u, d)
                store_f(out, i, u)
                mul(d, d, di)
            else:  # y = Y/ZZZ, x = X/ZZ with 1/ZZ = (ZZ/ZZZ)^2
                for j in range(L):
                    d[j] = points[L2 + j, i]
                mul(d, d, di)
                sqr(d, d)
                mul(u, u, d)
                store_f(out, i, u)
                for j in range(L):
                    d[j] = di[j]
            for j in range(L):
                u[j] = points[L + j, i]
            mul(u, u, d)
            store_f(ys, i, u)

    return index_kernels(f"{form}_to_affine_{curve.name.lower()}", body, 3, symbols=True)


def _decode_pair(curve: CurveParams) -> tuple:
    P = point_ops(curve)
    L2 = 2 * P.limbs
    decode_point = point_decoder(curve)
    load, store = P.load, P.store

    @device
    def body(i, status, points, flags):
        p = local_u32(L2)
        load(p, points, i, 2)
        status[i] = decode_point(p, flags[i])
        store(points, i, p, 2)

    return index_kernels(f"decode_{curve.name.lower()}", body, 3, symbols=True)


def _check_pair(curve: CurveParams) -> tuple:
    """(check_gN, check_gN_cpu, GPU threads per point): G2's GPU kernel holds each point
    on a lane pair (checks.pair_check_stored); the simulator, which has no warp shuffles (see
    msm/kernels.py), runs the one-thread check instead."""
    P = point_ops(curve)
    L2 = 2 * P.limbs
    check_point = curve_checks(curve).check_stored
    load = P.load

    @device
    def body(i, status, points):
        p = local_u32(L2)
        load(p, points, i, 2)
        status[i] = check_point(p)

    if curve.degree == 1 or config.ENABLE_CUDASIM:
        return (*index_kernels(f"check_{curve.name.lower()}", body, 2, symbols=True), 1)
    pair = point_ops(curve, pair=True)
    check_on_pair, load_half, half = pair_check_stored(), pair.load, 2 * pair.limbs

    @pair_function
    def pair_body(i, status, points):
        p = local_u32(half)
        load_half(p, points, i, 2)
        result = check_on_pair(p)
        if pair_lane() == 0:
            status[i] = result

    return (*index_kernels(f"check_{curve.name.lower()}", body, 2, symbols=True, pair_body=pair_body), 2)


# The kernels: jacobian_to_affine_g1, xyzz_to_affine_g2, decode_g1, check_g2, ... and their _cpu twins.
TO_AFFINE = {(curve.name, form): _to_affine_pair(curve, form) for curve in (G1, G2) for form in ("jacobian", "xyzz")}
DECODE = {curve.name: _decode_pair(curve) for curve in (G1, G2)}
CHECK = {curve.name: _check_pair(curve) for curve in (G1, G2)}


def _check_points(arr, curve: CurveParams, coords: int, name: str) -> int:
    rows = coords * curve.limbs
    shape = tuple(arr.shape)
    if arr.dtype != np.uint32 or len(shape) != 2 or shape[0] != rows:
        raise ValueError(f"{name}: expected uint32 {curve.name} array of shape ({rows}, n), got {arr.dtype} {shape}")
    if not is_device_array(arr) and not arr.flags.c_contiguous:
        raise ValueError(f"{name}: host arrays must be C-contiguous")
    return shape[1]


def to_affine(out, points, curve: CurveParams, form: str = "xyzz", stream=None):
    """out (2L, n) = affine of ``points`` ((3L, n) Jacobian or (4L, n) XYZZ), batched
    inversion (Montgomery's trick over AFFINE_CHUNK points per thread). Identity -> (0, 0)."""
    if form not in ("jacobian", "xyzz"):
        raise ValueError(f"form must be 'jacobian' or 'xyzz', not {form!r}")
    n = _check_points(points, curve, 3 if form == "jacobian" else 4, "points")
    if _check_points(out, curve, 2, "out") != n:
        raise ValueError(f"out has {out.shape[1]} points, points has {n}")
    if is_device_array(out) != is_device_array(points):
        raise ValueError("to_affine: mix of device and host arrays")
    gpu, cpu = TO_AFFINE[curve.name, form]
    chunks = (n + AFFINE_CHUNK - 1) // AFFINE_CHUNK
    if is_device_array(out):
        _launch(gpu, chunks, stream, out, points, points)
    elif chunks:
        cpu(chunks, out, points, points)
    return out


def check(status, points, curve: CurveParams, stream=None):
    """status[i] (n,) <- checks.OK / NOT_ON_CURVE / NOT_IN_SUBGROUP for the (2L, n) points
    of a key as stored (Montgomery affine, (0, 0) the identity), which stay unchanged."""
    n = _check_points(points, curve, 2, "points")
    gpu, cpu, lanes = CHECK[curve.name]
    if is_device_array(points):
        _launch(gpu, n, stream, status, points, lanes=lanes)
    elif n:
        cpu(n, status, points)
    return status


def decode(status, points, flags, curve: CurveParams, stream=None):
    """In place: (2L, n) canonical coordinates -> Montgomery affine points, decompressing
    and checking per ``flags`` (checks.py: INFINITY, SIGN, COMPRESSED, CHECK); status[i]
    gets checks.OK / NOT_ON_CURVE / NOT_IN_SUBGROUP."""
    n = _check_points(points, curve, 2, "points")
    gpu, cpu = DECODE[curve.name]
    if is_device_array(points):
        _launch(gpu, n, stream, status, points, flags)
    elif n:
        cpu(n, status, points, flags)
    return status
