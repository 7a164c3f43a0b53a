"""Fixed-base scalar multiplication in bulk: out_i = k_i * P for one point P and n
scalars (the Groth16 setup's ~n multiples of a generator).

    table = fixed_base_table(G1.generator, G1)            # host, once per base point
    fixed_base_mul(out, scalars, table, G1)               # GPU or all CPU cores

With window c (default 8) a scalar k < r < 2^255 is sum_w d_w 2^(cw), w < W = ceil(255/c),
each unsigned digit d_w in [0, 2^c). The table holds every d * 2^(cw) * P, so

    k * P = sum_w table[w, d_w]

costs W mixed additions per point (32 at c = 8, against ~255 doublings and ~128 additions
by double-and-add) and no doubling; a zero digit is skipped. The table is (2L, W * 2^c)
affine points, column w * 2^c + d, identity (0, 0) at d = 0: 8192 columns, 0.8 MB (G1) /
1.5 MB (G2) at c = 8, read straight from global memory (on the GPU it sits in L2).

Many points share a wider window: ``best_window`` weighs W(c) additions per point against
building the table, whose entries ``widen`` makes as products by the c = 8 table (32
additions each, on the device): at 2^27 points c = 16, 16 additions a point, a table of
2^20 entries (96 MB G1 / 192 MB G2; a window's row, 12.6 MB of G2, stays in L2 while the
threads are on it) made in ~35 M additions. The host builds only the c = 8 table.

Each point accumulates in XYZZ (madd-2008-s, which handles the identity, P + P and
P + (-P)), goes to a (4L, n) XYZZ scratch array, and kernels.to_affine converts the batch
with one inversion per AFFINE_CHUNK points. As in kernels.py, one per-element ``@device``
body runs as a CUDA kernel on device arrays or as a parallel CPU loop on numpy arrays.
The body has ONE call site of the mixed addition: each site inlines the whole formula
(~20 s of GPU compile per G2 site).
"""

from __future__ import annotations

import numpy as np
from numba_cuzk import _compat  # noqa: F401,I001  (numba patched before its first use)
from numba import config, cuda, int64, prange
from numba.core import extending as cpu_extending

from numba_cuzk.curve import layout
from numba_cuzk.curve.kernels import _launch, to_affine
from numba_cuzk.curve.params import G1, G2, CurveParams
from numba_cuzk.curve.points import point_ops
from numba_cuzk.curve.reference import Curve
from numba_cuzk.field.mont import device, fr_ops
from numba_cuzk.field.params import FR
from numba_cuzk.field.scalars import bits, load_scalar
from numba_cuzk.field.target import cuda_overload, is_device_array, local_u32, pair_function
from numba_cuzk.kernel_cache import cpu_kernel, gpu_kernel, specialize

WINDOW = 8  # bits per digit: 32 additions per point, an 8192-entry table
MAX_WINDOW = 16  # 2^20 table entries: 100 MB (G1) / 200 MB (G2), minutes of host build
SCALAR_BITS = FR.modulus.bit_length()  # 255: canonical scalars are < r < 2^255
S = fr_ops.limbs  # 8 uint32 limbs per scalar


def windows_of(window: int) -> int:
    """W = ceil(255 / window): digits per scalar, rows of the table."""
    return -(-SCALAR_BITS // window)


def table_window(columns: int) -> int:
    """The window c of a table with ``columns`` = W(c) * 2^c columns (W(c) 2^c grows with c,
    so c is unique); ValueError if no c <= MAX_WINDOW fits."""
    for window in range(1, MAX_WINDOW + 1):
        if windows_of(window) << window == columns:
            return window
    raise ValueError(f"{columns} columns is no fixed-base table size (W(c) * 2^c, c <= {MAX_WINDOW})")


# --- the table (host, Python ints) ------------------------------------------------------
def _jacobian_multiples(ref: Curve, point, window: int) -> list[tuple]:
    """[d * 2^(cw) * point for w < W, d < 2^c] as Jacobian triples, row-major: each row
    is 2^c - 1 additions of its base, and the sum after the row is the next row's base."""
    base = ref.to_jacobian(point)
    entries = []
    for _ in range(windows_of(window)):
        acc = ref.to_jacobian(None)
        for _ in range(1 << window):
            entries.append(acc)
            acc = ref.jacobian_add(acc, base)
        base = acc  # 2^c * base
    return entries


def _batch_affine(ref: Curve, points: list[tuple]) -> list:
    """Jacobian triples -> affine tuples (None for Z = 0) with one field inversion
    (Montgomery's trick): inversions cost ~40 products each in Python."""
    F = ref.F
    prefixes = []
    acc = ref.one
    for _, _, z in points:
        prefixes.append(acc)
        if z != ref.zero:
            acc = F.mul(acc, z)
    acc = F.inverse(acc)  # 1 / (product of the nonzero Z)
    out = [None] * len(points)
    for i in range(len(points) - 1, -1, -1):
        x, y, z = points[i]
        if z == ref.zero:
            continue
        zi = F.mul(prefixes[i], acc)
        acc = F.mul(acc, z)
        zi2 = F.square(zi)
        out[i] = (F.mul(x, zi2), F.mul(y, F.mul(zi2, zi)))
    return out


def fixed_base_table(point, curve: CurveParams, window: int = WINDOW, *, to_device: bool = False, stream=None):
    """(2L, W * 2^c) uint32 affine Montgomery points, column w * 2^c + d holding
    d * 2^(cw) * ``point`` (identity (0, 0) at d = 0); W = windows_of(c).

    ``point``: the reference's affine tuple (None for the identity), in the order-r
    subgroup (fixed_base_mul reduces scalars mod r). Built on the host with Python ints
    (Jacobian additions, one batched inversion); ``to_device=True`` returns a device array
    (copied on ``stream``). Host time at c = 8 on a 2-core VM: ~0.3 s (G1), ~0.9 s (G2).
    """
    if not 1 <= window <= MAX_WINDOW:
        raise ValueError(f"window must be in [1, {MAX_WINDOW}], not {window}")
    ref = Curve(curve)
    if not ref.is_on_curve(point):
        raise ValueError(f"{point} is not on {curve.name}")
    table = layout.points_to_limbs(_batch_affine(ref, _jacobian_multiples(ref, point, window)), curve)
    return cuda.to_device(table, stream=stream or 0) if to_device else table


def best_window(points: int) -> int:
    """The window in [WINDOW, MAX_WINDOW] with the fewest mixed additions for ``points``
    products by one table: W(c) per point, and W(WINDOW) for each of the W(c) 2^c
    entries that ``widen`` makes (the WINDOW table's own build on the host is common)."""
    build = windows_of(WINDOW)
    return min(range(WINDOW, MAX_WINDOW + 1), key=lambda c: windows_of(c) * (points + (build << c) * (c > WINDOW)))


def table_scalars(window: int) -> np.ndarray:
    """(8, W * 2^c) uint32 canonical: column w 2^c + d holds d 2^(c w), the scalar of that
    table entry. The top row's digits above what a scalar < r can hold (d >= 2^(255 - c (W
    - 1))) are never read: they hold 0 (the identity), as do the d = 0 columns."""
    windows, size = windows_of(window), 1 << window
    out = np.zeros((S, windows * size), dtype=np.uint32)
    digits = np.arange(size, dtype=np.uint64)
    for w in range(windows):
        shift = window * w
        used = digits if w < windows - 1 else np.where(digits < (1 << (SCALAR_BITS - shift)), digits, 0)
        limb, value = shift >> 5, used << np.uint64(shift & 31)  # < 2^(16 + 31): two limbs
        columns = slice(w * size, (w + 1) * size)
        out[limb, columns] = (value & np.uint64(0xFFFFFFFF)).astype(np.uint32)
        if limb + 1 < S:
            out[limb + 1, columns] = (value >> np.uint64(32)).astype(np.uint32)
    return out


def widen(table, curve: CurveParams, window: int, *, stream=None):
    """The ``window``-bit table of ``table``'s point (fixed_base_table's layout), its
    entries made by fixed_base_mul with ``table`` (a device table: on the GPU, on
    ``stream``; a host one: on all CPU cores), the same side as ``table``."""
    scalars = table_scalars(window)
    shape = (2 * curve.limbs, scalars.shape[1])
    if is_device_array(table):
        out = cuda.device_array(shape, dtype=np.uint32, stream=stream or 0)
        return fixed_base_mul(out, cuda.to_device(scalars, stream=stream or 0), table, curve, stream=stream)
    return fixed_base_mul(np.empty(shape, dtype=np.uint32), scalars, table, curve)


# --- the multiplication ---------------------------------------------------------------
@device
def _copy_column(buf, table, col):
    for j in range(buf.shape[0]):
        buf[j] = table[j, col]
    return buf


def _table_entry(buf, table, col):
    """Column ``col`` of the (2L, m) table as an affine point argument: a view of global
    memory on CUDA (no 2L registers for a copy), a copy into ``buf`` (2L,) on the CPU
    (contiguous, so the formula's field calls take target.field_call's cfunc path: the
    strided view ran at the same speed but compiled ~8 s longer for G2)."""
    return _copy_column(buf, table, col)


cpu_extending.overload(_table_entry)(lambda buf, table, col: lambda buf, table, col: _copy_column(buf, table, col))
cuda_overload(_table_entry, inline="always")(lambda buf, table, col: lambda buf, table, col: table[:, col])


# The three templates below read ``body`` (_body's per-point function), which
# kernel_cache.specialize binds per instance (_mul_pair); each names its instances. This
# placeholder is never compiled.
body = None  # body(i, xyzz, scalars, table, montgomery, window)


def _multiply_each_gpu(n, xyzz, scalars, table, montgomery, window):
    """Template of fixed_base_mul_g1 (and of fixed_base_mul_g2 in the simulator): point i < n
    on thread i."""
    i = cuda.grid(1)
    if i < n:
        body(i, xyzz, scalars, table, montgomery, window)


def _multiply_pairs_gpu(n, xyzz, scalars, table, montgomery, window):
    """Template of fixed_base_mul_g2 on the GPU: point i < n on the lane pair 2i, 2i + 1."""
    i = cuda.grid(1) // 2
    if i < n:
        body(i, xyzz, scalars, table, montgomery, window)


def _multiply_each_cpu(n, xyzz, scalars, table, montgomery, window):
    """Template of the _cpu twins of fixed_base_mul_g1 and fixed_base_mul_g2: the points
    i < n in parallel."""
    for i in prange(n):
        body(i, xyzz, scalars, table, montgomery, window)


def _body(P, formula):
    """The per-point body over point_ops' P: xyzz[:, i] <- scalars[:, i] * P by the table's
    windows. One thread per point reads each table entry through _table_entry; a lane
    pair loads its halves of it."""
    A, X = 2 * P.limbs, 4 * P.limbs
    set_identity, add_mixed, load, store = P.xyzz_set_identity, P.xyzz_add_mixed, P.load, P.store
    entry_in_memory = P.lanes == 1

    @formula
    def body(i, xyzz, scalars, table, montgomery, window):
        k = local_u32(S)
        acc = local_u32(X)
        entry = local_u32(A)  # one thread's CUDA kernel reads the table in place, NVVM drops it
        load_scalar(k, scalars, i, montgomery)
        set_identity(acc)
        size = int64(1) << window
        for w in range(table.shape[1] >> window):
            d = int64(bits(k, w * window, window))
            if d != 0:
                if entry_in_memory:
                    add_mixed(acc, acc, _table_entry(entry, table, w * size + d))
                else:
                    load(entry, table, w * size + d, 2)
                    add_mixed(acc, acc, entry)
        store(xyzz, i, acc, 4)

    return body


def _mul_pair(curve: CurveParams) -> tuple:
    """(CUDA kernel fixed_base_mul_gN, parallel CPU kernel fixed_base_mul_gN_cpu, GPU
    threads per point), each ``(n, xyzz, scalars, table, montgomery, window)``: xyzz[:, i]
    (4L, n) <- scalars[:, i] * P in XYZZ, for i < n. The templates' ``body`` is bound by
    kernel_cache.specialize. G2's GPU kernel holds each point on a lane pair (points.py);
    the simulator, which has no warp shuffles (see msm/kernels.py), runs the one-thread body."""
    body = _body(point_ops(curve), device)
    name = f"fixed_base_mul_{curve.name.lower()}"
    cpu = cpu_kernel(specialize(_multiply_each_cpu, f"{name}_cpu", body=body), parallel=True)
    if curve.degree == 1 or config.ENABLE_CUDASIM:
        return gpu_kernel(specialize(_multiply_each_gpu, name, body=body)), cpu, 1
    pair_body = _body(point_ops(curve, pair=True), pair_function)
    return gpu_kernel(specialize(_multiply_pairs_gpu, name, body=pair_body)), cpu, 2


MULTIPLY = {curve.name: _mul_pair(curve) for curve in (G1, G2)}


def _check(out, scalars, table, curve: CurveParams) -> tuple[int, int]:
    """(n, window) of valid arguments; ValueError otherwise."""
    L2 = 2 * curve.limbs
    for name, arr, rows in (("out", out, L2), ("scalars", scalars, S), ("table", table, L2)):
        if arr.dtype != np.uint32 or len(arr.shape) != 2 or arr.shape[0] != rows:
            got = f"{arr.dtype} {tuple(arr.shape)}"
            raise ValueError(f"{name}: expected uint32 ({rows}, n) for {curve.name}, got {got}")
        if not is_device_array(arr) and not arr.flags.c_contiguous:
            raise ValueError(f"{name}: host arrays must be C-contiguous")
    if out.shape[1] != scalars.shape[1]:
        raise ValueError(f"out has {out.shape[1]} points, scalars {scalars.shape[1]}")
    if len({is_device_array(a) for a in (out, scalars, table)}) != 1:
        raise ValueError("fixed_base_mul: mix of device and host arrays")
    return int(scalars.shape[1]), table_window(int(table.shape[1]))


def fixed_base_mul(out, scalars, table, curve: CurveParams, *, montgomery: bool = False, stream=None):
    """out (2L, n) uint32 <- scalars[:, i] * P, affine Montgomery points (identity (0, 0)).

    scalars: (8, n) uint32 Fr elements, canonical (default; values >= r are reduced mod r)
    or Montgomery form (``montgomery=True``: multiplied by R^-1 first). table: P's
    fixed_base_table (its window is read from its width). Device arrays run on the GPU
    (launched on ``stream``, not synchronized), numpy arrays on all CPU cores; all three
    must live on the same side. Cost per point: W mixed additions (8M + 2S each; W = 32 at
    c = 8) less the zero digits, then to_affine's ~7 products and 1/32 inversion. Memory:
    a (4L, n) uint32 XYZZ scratch array, twice ``out`` (G2 at n = 2^22: 1.6 GB).
    """
    n, window = _check(out, scalars, table, curve)
    gpu, cpu, lanes = MULTIPLY[curve.name]
    shape = (4 * curve.limbs, n)
    if is_device_array(out):
        xyzz = cuda.device_array(shape, dtype=np.uint32, stream=stream or 0)
        _launch(gpu, n, stream, xyzz, scalars, table, bool(montgomery), window, lanes=lanes)
    else:
        xyzz = np.empty(shape, dtype=np.uint32)
        if n:
            cpu(n, xyzz, scalars, table, bool(montgomery), window)
    return to_affine(out, xyzz, curve, "xyzz", stream=stream)
