"""Sparse A·w and B·w over Fr: one CSR row per thread (GPU) or per loop step (all CPU cores).

    csr_matvec(out, indptr, indices, values, witness, coefficients_montgomery)

indptr (rows + 1,) int64, indices (nnz,) uint32 wire ids, values (8, nnz) uint32,
witness (8, n_wires) uint32, out (8, rows) uint32 Montgomery form. Each term is one
Montgomery product (x y / R). ``coefficients_montgomery``: the key's coef * R^2 (zkey
form) times a canonical witness, coef * w * R, Montgomery already; False: an R1CS's
canonical coef times a Montgomery witness, coef * w, and the row sum is converted once.
Rows of circuits are short (1-30 terms), so a thread per row keeps the loads of one row
together; the wire gathers are the cost (~4 KB read per row at 32 terms), and A·w + B·w
are ~5% of a proof's device time.
"""

from __future__ import annotations

from numba_cuzk import _compat  # noqa: F401,I001  (numba patched before its first use)
import numba
import numpy as np
from numba import cuda, prange

from numba_cuzk.field.mont import device, fr_ops
from numba_cuzk.field.target import is_device_array, local_u32
from numba_cuzk.kernel_cache import cpu_kernel, gpu_kernel

THREADS_PER_BLOCK = 128
_N = fr_ops.limbs
_load, _store, _add, _mul, _set_zero, _to_mont = (
    fr_ops.load, fr_ops.store, fr_ops.add, fr_ops.mul, fr_ops.set_zero, fr_ops.to_mont)


@device
def _row(row, out, indptr, indices, values, witness, coefficients_montgomery):
    acc = local_u32(_N)
    term = local_u32(_N)
    wire = local_u32(_N)
    _set_zero(acc)
    for k in range(indptr[row], indptr[row + 1]):
        _load(term, values, k)
        _load(wire, witness, indices[k])
        _mul(term, term, wire)
        _add(acc, acc, term)
    if not coefficients_montgomery:
        _to_mont(acc, acc)
    _store(out, row, acc)


@gpu_kernel
def csr_matvec_rows(out, indptr, indices, values, witness, coefficients_montgomery):
    row = cuda.grid(1)
    if row < out.shape[1]:
        _row(row, out, indptr, indices, values, witness, coefficients_montgomery)


@cpu_kernel(symbols=False, parallel=True)
def csr_matvec_rows_cpu(out, indptr, indices, values, witness, coefficients_montgomery):
    for row in prange(out.shape[1]):
        _row(row, out, indptr, indices, values, witness, coefficients_montgomery)


def csr_matvec(out, indptr, indices, values, witness, coefficients_montgomery: bool, stream=None):
    """out[:, i] = sum_k values[:, k] * witness[:, indices[k]] over row i's terms (see the
    module docstring for forms). All arrays on the GPU or all on the host; wire ids must be
    < n_wires (checked where the matrix is built: the loop does no bounds checks)."""
    rows = out.shape[1]
    if tuple(indptr.shape) != (rows + 1,):
        raise ValueError(f"indptr has {indptr.shape[0]} entries for {rows} rows")
    if is_device_array(out):
        if rows:
            csr_matvec_rows[(rows + THREADS_PER_BLOCK - 1) // THREADS_PER_BLOCK, THREADS_PER_BLOCK, stream or 0](
                out, indptr, indices, values, witness, coefficients_montgomery)
    else:
        csr_matvec_rows_cpu(out, indptr, indices, values, witness, coefficients_montgomery)
    return out


def to_csr(rows: int, row_of: np.ndarray, col: np.ndarray, values: np.ndarray):
    """Entries (row_of[k], col[k], values[:, k]) -> (indptr, indices, values) sorted by row
    (stable: a row keeps its entries' order); row_of (nnz,) int64 < rows, col (nnz,)
    integers, values (8, nnz) uint32.

    Entries already in row order, as a zkey's and setup's matrices are (each written row
    by row), are the CSR as they stand: numpy counts the rows and nothing moves (the
    returned values may then be ``values`` itself). So a prove never starts numba's CPU
    target for its matrices: on the GPU path that start was 0.63 s of a 2^14 process
    (the first cached CPU kernel's load). Entries out of order (setup's transposes) go
    through a counting sort on all cores (_place_by_row): a stable argsort and two
    gathers were one core's work, ~1 s per 10^7 random entries."""
    indptr = np.zeros(rows + 1, dtype=np.int64)
    np.cumsum(np.bincount(row_of, minlength=rows)[:rows], out=indptr[1:])
    if bool(np.all(row_of[1:] >= row_of[:-1])):
        return indptr, col.astype(np.uint32, copy=False), np.ascontiguousarray(values, dtype=np.uint32)
    return indptr, *_counting_sort(indptr, row_of, col, values)


def _counting_sort(indptr: np.ndarray, row_of: np.ndarray, col: np.ndarray, values: np.ndarray):
    """(indices, values) of to_csr for entries in any order, given their indptr: jobs of
    about equal entries, each owning a run of rows (_place_by_row)."""
    rows, nnz = indptr.shape[0] - 1, int(row_of.shape[0])
    jobs = max(1, min(numba.get_num_threads(), rows))
    bounds = np.searchsorted(indptr, np.linspace(0, nnz, jobs + 1)).astype(np.int64)
    bounds[0], bounds[-1] = 0, rows
    indices = np.empty(nnz, dtype=np.uint32)
    out = np.empty((values.shape[0], nnz), dtype=np.uint32)
    _place_by_row(indices, out, indptr[:-1].copy(), bounds, row_of, col, values)
    return indices, out


@cpu_kernel(symbols=False, parallel=True)
def _place_by_row(indices, out, next_slot, bounds, row_of, col, values):
    """Job j owns rows [bounds[j], bounds[j + 1]) and scans every entry in order, writing
    its own rows' entries to their next slots: stable, and no two jobs write one slot.
    Each job reads all of row_of (8 B per entry); the writes are the sort's only random
    accesses."""
    for job in prange(bounds.shape[0] - 1):
        low, high = bounds[job], bounds[job + 1]
        for k in range(row_of.shape[0]):
            row = row_of[k]
            if low <= row < high:
                slot = next_slot[row]
                next_slot[row] = slot + 1
                indices[slot] = col[k]
                for limb in range(values.shape[0]):
                    out[limb, slot] = values[limb, k]
