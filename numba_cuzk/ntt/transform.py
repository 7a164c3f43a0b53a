"""Host wrappers: validate, plan, fetch cached tables, launch the passes.

Arrays are Montgomery-form Fr in the field layout: (8, n) uint32 for one vector, or
(batch, 8, n) for several (all transformed by the same launches). numpy arrays run on the
CPU backend (parallel Numba), device arrays on the GPU (numba_cuzk.field.target
.is_device_array); ``out`` and ``workspace`` must live on the same side.

In place by default: ``ntt(a)`` overwrites a. With ``out`` (same shape, distinct from a)
the input is kept. GPU launches go on ``stream`` (default: the default stream) and
nothing synchronizes; the result is ready when the stream reaches it.

Passes are out of place except the last (which reads and writes the same elements per
block), so a transform needs one scratch vector the size of the data when it has >= 2
passes in place (2^9 and up: see domain.plan) or >= 3 passes with ``out`` (2^17 and up).
Pass ``workspace`` to supply it; otherwise one per shape is cached on the device and
shared by every call of that shape: transforms of one shape running concurrently on
different streams must each pass their own workspace.

Device memory held by the caches (clear_cache() drops them all):
- twiddles per size 2^k: one table per pass after the first, (8, Ns*R) each: the last is
  n entries, so ~32 n bytes (512 MiB at 2^24, 8 GiB at 2^28); built on first use, shared
  by the forward and inverse transforms (the inverse reverses the input order).
- coset tables: g^i (coset_ntt), g^-i / n (coset_intt) or g^i / n (shift_to_coset),
  32 n bytes per (size, base, scaled), at most COSET_CACHE_SIZE kept.
- workspaces: 32 n bytes per vector per cached shape.
Tables are built on first use with synchronous copies and the legacy default stream,
so later work on any stream sees them; call ``prepare`` to build them ahead of timing.
"""

from __future__ import annotations

import numpy as np
from numba_cuzk import _compat  # noqa: F401,I001  (numba patched before its first use)
from numba import cuda

from numba_cuzk.field.params import FR
from numba_cuzk.field.target import is_device_array
from numba_cuzk.ntt import domain
from numba_cuzk.ntt.device import FINAL, POST, PRE, REVERSE, TWIDDLE
from numba_cuzk.ntt.kernels import BUILD_THREADS, PASS_KERNELS, cpu_powers, gpu_powers

COSET_CACHE_SIZE = 4
# The pass kernel (kernels.PASS_KERNELS) of every transform not told otherwise, the prover's
# included: "radix2" (one shared-memory trip per stage) or "radix4" (two stages per trip,
# in registers). bench/ntt.py times both.
VARIANT = "radix4"

# Keys start with _side(): None for the CPU, the GPU's id for device arrays (one set of
# tables per GPU when several are used).
_tables: dict = {}  # (side, log_n, plan) -> per-pass twiddle tables
_cosets: dict = {}  # (side, log_n, base, scaled) -> (8, n) table, insertion-ordered
_workspaces: dict = {}  # (side, shape) -> device array
_constants: dict = {}  # (side, name) -> small tables


def ntt(values, out=None, *, stream=None, workspace=None):
    """Evaluations at w^k (w = FR.root_of_unity(log2 n)), natural order in and out:
    out[k] = sum_i values[i] w^(ik). Matches reference.ntt."""
    return transform(values, out, inverse=False, stream=stream, workspace=workspace)


def intt(values, out=None, *, stream=None, workspace=None):
    """Interpolation: out[i] = n^-1 sum_k values[k] w^(-ik); intt(ntt(a)) = a."""
    return transform(values, out, inverse=True, stream=stream, workspace=workspace)


def coset_ntt(values, g: int, out=None, *, stream=None, workspace=None):
    """Evaluations on the coset g<w>: ntt of values[i] g^i (g a canonical int, not 0)."""
    return transform(values, out, inverse=False, g=g, stream=stream, workspace=workspace)


def coset_intt(values, g: int, out=None, *, stream=None, workspace=None):
    """Inverse of coset_ntt: intt, then out[i] *= g^-i."""
    return transform(values, out, inverse=True, g=g, stream=stream, workspace=workspace)


def shift_to_coset(values, g: int, out=None, *, stream=None, workspace=None, variant: str | None = None):
    """Evaluations on g<w> of the polynomial whose evaluations on <w> are ``values``:
    coset_ntt(intt(values), g), with the n^-1 and g^i factors in one table applied by the
    inverse's last pass (one product per element fewer than the two calls)."""
    intt_out = transform(values, out, inverse=True, shift=g, stream=stream, workspace=workspace, variant=variant)
    return transform(intt_out, inverse=False, stream=stream, workspace=workspace, variant=variant)


def transform(values, out=None, *, inverse: bool, g: int | None = None, stream=None, workspace=None,
              max_radix_log: int = domain.MAX_RADIX_LOG, variant: str | None = None, shift: int | None = None):
    """The four public transforms; ``max_radix_log`` (stages per pass) and ``variant`` (a
    key of kernels.PASS_KERNELS, default VARIANT) are for tuning. ``shift`` (inverse only,
    no g): also multiply output i by shift^i (shift_to_coset's first half)."""
    on_device = is_device_array(values)
    batch, log_n = _check(values, out, workspace, on_device)
    for name, base in (("coset generator", g), ("coset shift", shift)):
        if base is not None and base % FR.modulus == 0:
            raise ValueError(f"{name} must be nonzero mod r")
    if shift is not None and (g is not None or not inverse):
        raise ValueError("shift applies to a plain inverse transform only")
    kernel = _pass_kernel(variant)
    passes = domain.plan(log_n, max_radix_log, even=kernel.even_radices)
    src = _batched(values, batch, log_n)
    dst = src if out is None else _batched(out, batch, log_n)
    scratch = None
    if len(passes) >= (2 if out is None else 3):
        scratch = _batched(workspace, batch, log_n) if workspace is not None else _workspace(src, on_device)
    twiddles = _twiddles(on_device, log_n, passes)
    roots = _constant(on_device, "roots")
    one = _constant(on_device, "one")
    pre = _coset(on_device, log_n, g, False) if g is not None and not inverse else one
    if inverse and g is not None:
        post = _coset(on_device, log_n, pow(g, -1, FR.modulus), True)
    elif inverse and shift is not None:
        post = _coset(on_device, log_n, shift, True)
    elif inverse:
        post = _constant(on_device, f"n_inv{log_n}")
    else:
        post = one
    for k, (p, target) in enumerate(zip(passes, _targets(len(passes), dst, scratch, in_place=out is None))):
        mode = 0 if p.first else TWIDDLE
        if p.first:
            mode |= REVERSE if inverse else (PRE if g is not None else 0)
        if p.last:
            mode |= FINAL | (POST if inverse else 0)
        tables = (src, target, twiddles[k], pre, post, roots)
        if on_device:
            kernel.launch(p, (p.blocks, batch), stream or 0, tables, mode)
        else:
            kernel.cpu(*tables, log_n, p.log_r, p.log_j, p.log_ns, mode)
        src = target
    return values if out is None else out


def _pass_kernel(variant: str | None):
    name = VARIANT if variant is None else variant
    if name not in PASS_KERNELS:
        raise ValueError(f"unknown NTT pass kernel {name!r}; expected one of {sorted(PASS_KERNELS)}")
    return PASS_KERNELS[name]


def prepare(log_n: int, *, on_device: bool = True, g: int | None = None,
            max_radix_log: int = domain.MAX_RADIX_LOG, variant: str | None = None) -> None:
    """Build (and cache) the tables a size-2^log_n transform (and its coset and
    shift_to_coset, for g) needs."""
    domain.check_size(1 << log_n)
    _twiddles(on_device, log_n, domain.plan(log_n, max_radix_log, even=_pass_kernel(variant).even_radices))
    _constant(on_device, f"n_inv{log_n}")
    if g is not None:
        _coset(on_device, log_n, g, False)
        _coset(on_device, log_n, pow(g, -1, FR.modulus), True)
        _coset(on_device, log_n, g, True)


def clear_cache() -> None:
    """Drop every cached table and workspace (device memory is freed by Numba later)."""
    for cache in (_tables, _cosets, _workspaces, _constants):
        cache.clear()


def cached_bytes() -> int:
    """Bytes held by the device caches (tables and workspaces)."""
    return sum(int(a.size) * 4 for a in _device_arrays(constants=False))


def cached_arrays() -> list:
    """Every device array the caches hold now. A CUDA graph that reads them must keep them:
    the caches may drop theirs (the coset tables' eviction, clear_cache) and the graph
    holds bare pointers."""
    return _device_arrays(constants=True)


def _device_arrays(constants: bool) -> list:
    arrays = [t for (side, *_), ts in _tables.items() if side is not None for t in ts]
    arrays += [t for (side, *_), t in _cosets.items() if side is not None]
    arrays += [t for (side, _), t in _constants.items() if side is not None] if constants else []
    return arrays + list(_workspaces.values())


def _side(on_device: bool):
    return getattr(cuda.get_current_device(), "id", 0) if on_device else None


def _check(values, out, workspace, on_device: bool) -> tuple[int, int]:
    shape = tuple(values.shape)
    if values.dtype != np.uint32 or len(shape) not in (2, 3) or shape[-2] != FR.limbs:
        raise ValueError(f"expected uint32 Fr limbs of shape (8, n) or (batch, 8, n), got {values.dtype} {shape}")
    log_n = domain.check_size(shape[-1])
    for name, arr in (("values", values), ("out", out), ("workspace", workspace)):
        if arr is None:
            continue
        if is_device_array(arr) != on_device:
            raise ValueError(f"{name}: mix of device and host arrays")
        if arr.dtype != np.uint32 or tuple(arr.shape) != shape:
            raise ValueError(f"{name}: expected uint32 {shape}, got {arr.dtype} {tuple(arr.shape)}")
        contiguous = arr.is_c_contiguous() if on_device else arr.flags.c_contiguous
        if not contiguous:
            raise ValueError(f"{name} must be C-contiguous")
    if workspace is not None and (workspace is values or workspace is out):
        raise ValueError("workspace must be a separate array")
    return (shape[0] if len(shape) == 3 else 1), log_n


def _batched(arr, batch: int, log_n: int):
    return arr if len(arr.shape) == 3 else arr.reshape(batch, FR.limbs, 1 << log_n)


def _targets(count: int, dst, scratch, in_place: bool) -> list:
    """Output buffer of each pass. Every pass but the last must write a buffer other than
    its input; the last may write in place. In place: scratch, dst, scratch, ..., dst.
    Out of place (input kept): ..., scratch, dst, dst."""
    if in_place:
        return [scratch if k % 2 == 0 else dst for k in range(count - 1)] + [dst]
    return [dst if (count - 2 - k) % 2 == 0 else scratch for k in range(count - 1)] + [dst]


def _workspace(src, on_device: bool):
    shape = tuple(src.shape)
    if not on_device:
        return np.empty(shape, dtype=np.uint32)
    key = (_side(True), shape)
    if key not in _workspaces:
        _workspaces[key] = cuda.device_array(shape, dtype=np.uint32)
    return _workspaces[key]


def _place(table: np.ndarray, on_device: bool):
    return cuda.to_device(np.ascontiguousarray(table)) if on_device else table


def _constant(on_device: bool, name: str):
    key = (_side(on_device), name)
    if key not in _constants:
        if name == "roots":
            table = domain.inner_roots()
        elif name == "one":
            table = domain.montgomery_limbs([1])
        else:  # n_inv<log_n>
            table = domain.montgomery_limbs([pow(1 << int(name[5:]), -1, FR.modulus)])
        _constants[key] = _place(table, on_device)
    return _constants[key]


def powers(count: int, base: int, scale: int = 1, *, on_device: bool):
    """(8, count) Montgomery Fr: scale * base^i for i < count (canonical ints base and
    scale, reduced mod r), made by the table kernel on the GPU (a device array, on the
    default stream) or on all CPU cores, from two ~sqrt(count) host tables: no host array
    of ``count`` elements is made or copied."""
    log_e = max(0, (count - 1).bit_length())
    return _build_powers(on_device, count, base % FR.modulus, log_e, scale % FR.modulus)


def _build_powers(on_device: bool, count: int, base: int, log_e: int, scale: int = 1,
                  log_r: int = 0, log_a: int = 0, shift: int = 0):
    """(8, count) table of scale * base^e(i) (see device.power_entry), built by a kernel."""
    low, high, log_low = domain.split_powers(base, log_e, scale)
    if not on_device:
        out = np.empty((FR.limbs, count), dtype=np.uint32)
        cpu_powers(out, low, high, log_low, log_r, log_a, shift)
        return out
    out = cuda.device_array((FR.limbs, count), dtype=np.uint32)
    d_low, d_high = cuda.to_device(low), cuda.to_device(high)
    blocks = (count + BUILD_THREADS - 1) // BUILD_THREADS
    gpu_powers[blocks, BUILD_THREADS](out, d_low, d_high, log_low, log_r, log_a, shift)
    return out


def _twiddles(on_device: bool, log_n: int, passes: tuple) -> list:
    """Per pass: the (8, Ns R) pre-twiddles w_(Ns R)^(r m) at device.twiddle_index(r, m), as
    powers of w_n (exponent r m << (log_n - log_ns - log_r)); the first pass has none (a
    1-entry stub)."""
    key = (_side(on_device), log_n, passes)
    if key not in _tables:
        w = FR.root_of_unity(log_n)
        tables = []
        for p in passes:
            if p.first:
                tables.append(_constant(on_device, "one"))
            else:
                tables.append(_build_powers(on_device, 1 << (p.log_ns + p.log_r), w, log_n, log_r=p.log_r,
                                            log_a=min(p.log_j, p.log_ns), shift=log_n - p.log_ns - p.log_r))
        _tables[key] = tables
    return _tables[key]


def _coset(on_device: bool, log_n: int, base: int, scaled: bool):
    """base^i (times n^-1 if scaled), i < n: g^i (coset_ntt's PRE), g^-i n^-1 (coset_intt's
    POST), g^i n^-1 (shift_to_coset's POST)."""
    base %= FR.modulus
    key = (_side(on_device), log_n, base, scaled)
    if key not in _cosets:
        while len(_cosets) >= COSET_CACHE_SIZE:
            _cosets.pop(next(iter(_cosets)))
        n = 1 << log_n
        _cosets[key] = _build_powers(on_device, n, base, log_n, scale=pow(n, -1, FR.modulus) if scaled else 1)
    return _cosets[key]
