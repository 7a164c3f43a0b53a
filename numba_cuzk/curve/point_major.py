"""Point arrays in point-major order: how the MSM's gathers want their bases.

The curve layout (layout.py) is a (rows, n) array, limb j of point i at [j, i]. In C order
point i's rows lie n words apart, so a kernel that reads points at random indices (the
MSM's bucket accumulation, one base per bucket entry) touches one 32-byte sector per
limb for 4 useful bytes: 24 sectors per G1 base, 48 per G2 base. The same shape in
Fortran order (strides (4, 4 rows)) keeps point i's words together: 96 bytes, 3 sectors
(G1); 192 bytes, 6 sectors (G2). Kernels index both orders alike (``arr[j, i]``), so this
is a property of the array, not of the code that reads it.

Device bases are point-major (msm.upload_bases, setup's resident and streamed queries);
host arrays stay in C order, as the zkey reader, the CPU kernels and the field codecs
make and stream them.

    major = point_major(points)      # a Fortran-ordered copy (same side), or points itself
"""

from __future__ import annotations

import numpy as np
from numba_cuzk import _compat  # noqa: F401,I001  (numba patched before its first use)
from numba import config, cuda, prange

from numba_cuzk.field.target import is_device_array
from numba_cuzk.kernel_cache import cpu_kernel, gpu_kernel

THREADS = 4 if config.ENABLE_CUDASIM else 256  # per block
_SIM_BLOCKS = 2
_RUN = 1 << 12  # points per parallel run of the CPU copy
# Below this many points numpy's copy (~0.4 GB/s: 2^16 G1 points in ~16 ms), so that a small
# key's start-up loads no parallel kernel.
PARALLEL_MIN = 1 << 16


def is_point_major(points) -> bool:
    """Whether ``points`` (rows, n), device or host, is stored point by point (Fortran order)."""
    if is_device_array(points):
        return bool(points.is_f_contiguous())
    return bool(points.flags.f_contiguous)


def point_major(points, *, out=None, stream=None):
    """(rows, n) uint32 points -> the same values in a Fortran-ordered (rows, n) array on
    the same side (device: a kernel on ``stream``, not synchronized; host: all cores).
    ``out``: the destination (Fortran-ordered, same shape and side; e.g. pinned memory);
    without it a point-major ``points`` is returned as is, otherwise a new array."""
    if out is None:
        if is_point_major(points):
            return points
        out = (cuda.device_array(points.shape, dtype=points.dtype, order="F", stream=stream or 0)
               if is_device_array(points) else np.empty(points.shape, dtype=points.dtype, order="F"))
    if tuple(out.shape) != tuple(points.shape) or out.dtype != points.dtype or not is_point_major(out):
        raise ValueError(f"point_major: out must be a Fortran-ordered {points.dtype} {tuple(points.shape)} array, "
                         f"got {out.dtype} {tuple(out.shape)}")
    if is_device_array(out) != is_device_array(points):
        raise ValueError("point_major: points and out must be on the same side")
    n = int(points.shape[1])
    if n == 0:
        return out
    if is_device_array(points):
        blocks = _SIM_BLOCKS if config.ENABLE_CUDASIM else (n + THREADS - 1) // THREADS
        copy_points_gpu[blocks, THREADS, stream or 0](out, points)
    elif n < PARALLEL_MIN:
        out[...] = points
    else:
        copy_points_cpu(out.T, np.ascontiguousarray(points))
    return out


@gpu_kernel
def copy_points_gpu(out, points):
    """out[:, i] = points[:, i] for every column i, one thread per point: reads coalesce
    across a warp when ``points`` is C-ordered, each thread writes its point's run."""
    for i in range(cuda.grid(1), points.shape[1], cuda.gridsize(1)):
        for j in range(points.shape[0]):
            out[j, i] = points[j, i]


@cpu_kernel(symbols=False, parallel=True)
def copy_points_cpu(out_t, points):
    """out_t[i, j] = points[j, i] (out_t: the (n, rows) C view of a point-major array),
    in runs of _RUN points, point by point: the writes are in order, the reads ``rows``
    streams in order (on 2 cores at 2^22 G1 points: 0.06 s, against 0.14 s row by row
    and 1.0 s for numpy's asfortranarray)."""
    rows, n = points.shape
    for run in prange((n + _RUN - 1) // _RUN):
        lo, hi = run * _RUN, min(n, (run + 1) * _RUN)
        for i in range(lo, hi):
            for j in range(rows):
                out_t[i, j] = points[j, i]
