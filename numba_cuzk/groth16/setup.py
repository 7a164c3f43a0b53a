"""A local Groth16 setup for tests, benchmarks and demos. INSECURE: one party draws the
toxic waste (alpha, beta, gamma, delta, tau) from a CSPRNG and could forge proofs if it
kept them. Real deployments use a ceremony (snarkjs powersoftau + zkey contribute).

    pk = setup(r1cs)                        # ProvingKey, on the GPU when there is one
    pk = setup(r1cs, resident=True)         # its queries left on the GPU for a Prover there

Over the domain of n = 2^k >= constraints + n_public + 1 points (omega from 5, as snarkjs),
with the Lagrange basis L_j(tau) = (tau^n - 1) / n * omega^j / (tau - omega^j):
    u_i, v_i, w_i = sum_j A/B/C[j, i] L_j(tau)  (A gets rows constraints + k, k <= n_public,
                    holding wire k with coefficient 1, as snarkjs adds)
    A_i = u_i G1, B1_i = v_i G1, B2_i = v_i G2,
    IC_i = (beta u_i + alpha v_i + w_i) / gamma G1 (i <= n_public), C_i = ... / delta G1,
    H_j = L'_(2j+1)(tau) / delta G1 for the 2n-point domain's basis L' (see prove.py).
Scalars are computed in bulk with the field kernels (on the device on the GPU path; the
column sums' transposes on the host), points with curve/fixed_base.py (GPU: ~n_vars (3 G1
+ 1 G2) + n G1 fixed-base products in well under a second at 2^20; each curve's table as
wide as its number of products pays for: fixed_base.best_window).

``resident=True`` (GPU) leaves each query on the device where it was made, as a device
array in the ProvingKey, for a Prover on this device, which adopts it: nothing is copied
back and uploaded again, so a 2^27 key's ~76 GB of queries never pass through the host.
The queries that a Prover's memory plan for this device would stream (groth16/memory.py:
B2 first) go to pinned host memory instead, and are made first, while the device is
still empty (fixed_base_mul's scratch is twice its output: 51 GB for B2 at 2^27). Such a
key serves one GPU; a zkey is written from it as from any other.
"""

from __future__ import annotations

import functools
import secrets
from concurrent.futures import ThreadPoolExecutor

import numpy as np
from numba_cuzk import _compat  # noqa: F401,I001  (numba patched before its first use)
from numba import cuda

from numba_cuzk import backend
from numba_cuzk.curve.fixed_base import WINDOW, best_window, fixed_base_mul, fixed_base_table, widen
from numba_cuzk.curve.layout import limbs_to_points
from numba_cuzk.curve.params import G1, G2, CurveParams
from numba_cuzk.curve.point_major import point_major
from numba_cuzk.curve.reference import g1, g2
from numba_cuzk.field import kernels as fk
from numba_cuzk.field.codec import from_limbs, to_limbs, to_montgomery
from numba_cuzk.field.params import FR
from numba_cuzk.field.target import is_device_array
from numba_cuzk.groth16 import memory
from numba_cuzk.groth16.kernels import csr_matvec, to_csr
from numba_cuzk.groth16.keys import Coefficients, ProvingKey
from numba_cuzk.groth16.r1cs import R1CS, SparseMatrix
from numba_cuzk.groth16.timing import wall_ms
from numba_cuzk.ntt import powers

_N = FR.limbs
_R = FR.modulus


def domain_log(r1cs: R1CS) -> int:
    """log2 of the smallest power of two >= constraints + n_public + 1."""
    return max(1, (r1cs.n_constraints + r1cs.n_public).bit_length())


def setup(r1cs: R1CS, *, gpu: bool | None = None, toxic: dict | None = None,
          resident: bool = False, memory_budget: int | None = None, chunk: int | None = None,
          streamed: tuple[str, ...] | None = None, slots: int = 1,
          steps_ms: dict[str, float] | None = None, tail: int | None = None) -> ProvingKey:
    """An insecure ProvingKey for ``r1cs`` (see the module docstring). ``toxic`` fixes
    alpha, beta, gamma, delta, tau (tests); otherwise they come from ``secrets``.
    ``resident`` (GPU only): the queries stay on this device, those that the memory plan
    for the device memory free (at most ``memory_budget`` bytes; ``chunk``, ``streamed``,
    ``slots`` and ``tail`` as the Prover's: the engine's has gpu_workers + 1) streams in pinned
    host memory; memory.KeyTooLarge, before any work, if no plan fits. ``steps_ms`` gets
    the wall ms of each step: scalars (the query scalars: field work, column sums), each
    query by name (a, b1, b2, c, h), ic and coefficients (the zkey's section 4; on the
    GPU they are made on the host beside the queries, and the step is the wait for them)."""
    r1cs.check()
    gpu = backend.cuda_available() if gpu is None else gpu
    if resident and not gpu:
        raise ValueError("setup: resident=True keeps the key on a GPU; there is none here (gpu=False)")
    t = toxic or {name: 1 + secrets.randbelow(_R - 1) for name in ("alpha", "beta", "gamma", "delta", "tau")}
    log_n = domain_log(r1cs)
    n, m, ell = 1 << log_n, r1cs.n_wires, r1cs.n_public
    if pow(t["tau"], n, _R) == 1:
        raise ValueError("tau lies in the domain: draw again")
    step = functools.partial(wall_ms, {} if steps_ms is None else steps_ms)
    a = _with_public_rows(r1cs.a, ell)
    places = _places(memory.KeyShape(m, ell, n, a.nnz + r1cs.b.nnz), resident, budget=memory_budget, chunk=chunk,
                     streamed=streamed, slots=slots, tail=tail)
    with step("scalars"):
        scalars, ic_scalars = _query_scalars(a, r1cs, t, log_n, on_device=gpu)
    mul = _FixedBase(gpu, {"G1": 3 * m + n, "G2": m})
    with ThreadPoolExecutor(1, thread_name_prefix="setup-coefficients") as host:
        # the host's cores are idle while the GPU makes the queries (at 2^27 the
        # coefficients were 11 s of the host's after them); on the CPU backend the queries
        # take every core
        pending = host.submit(_coefficients, a, r1cs.b) if gpu else None
        # the host- and pinned-memory queries first, while the device holds no query yet;
        # each query's scalars dropped once it is made (at 2^27 each is 4.3 GB)
        queries = {}
        for q in sorted(memory.QUERIES, key=lambda q: places[q] == "device"):
            field, curve = memory.QUERIES[q]
            with step(q):
                queries[field] = mul(scalars.pop(q), curve, places[q])
        with step("ic"):
            ic = limbs_to_points(mul(ic_scalars, G1, "host"), G1)
        with step("coefficients"):
            coefficients = pending.result() if pending else _coefficients(a, r1cs.b)
    small = lambda ref, k: ref.mul(ref.generator, k)  # noqa: E731
    return ProvingKey(
        n_vars=m, n_public=ell, domain_size=n,
        alpha_g1=small(g1, t["alpha"]), beta_g1=small(g1, t["beta"]), beta_g2=small(g2, t["beta"]),
        gamma_g2=small(g2, t["gamma"]), delta_g1=small(g1, t["delta"]), delta_g2=small(g2, t["delta"]),
        ic=ic, coefficients=coefficients, **queries,
    )


def _query_scalars(a: SparseMatrix, r1cs: R1CS, t: dict, log_n: int,
                   on_device: bool) -> tuple[dict[str, object], np.ndarray]:
    """((8, k) Montgomery scalars of each query by name, on the device with ``on_device``,
    those of IC, on the host): u_i for A, v_i for B1 and B2, (beta u_i + alpha v_i + w_i) /
    delta for C (i > n_public), H's Lagrange values / delta; IC's (i <= n_public) over
    gamma. Nothing else is kept. On the GPU the field work is the device's (at 2^27 it
    was ~40 s of the host's 50 s step on 16 cores) and the queries' products read the
    scalars where they are; the column sums' transposes stay on the host."""
    m, ell = r1cs.n_wires, r1cs.n_public
    lagrange = _lagrange_at(t["tau"], log_n, 1, 0, on_device)
    u, v, w = (_column_sums(mat, lagrange, m) for mat in (a, r1cs.b, r1cs.c))
    del lagrange
    combo = _add(_scaled(u, t["beta"]), _add(_scaled(v, t["alpha"]), w))
    del w
    inv_gamma, inv_delta = pow(t["gamma"], -1, _R), pow(t["delta"], -1, _R)
    # Montgomery x R times k is (x k) R: IC's few scalars scaled with Python ints
    ic = to_limbs([x * inv_gamma % _R for x in from_limbs(_columns(combo, 0, ell + 1, on_device=False), FR)], FR)
    c = _columns(combo, ell + 1, m, on_device)
    del combo
    fk.scale(c, c, inv_delta)
    h = _scaled(_lagrange_at(t["tau"], log_n + 1, 2, 1, on_device), inv_delta)
    return {"a": u, "b1": v, "b2": v, "c": c, "h": h}, ic


def _places(shape: memory.KeyShape, resident: bool, *, budget: int | None, chunk: int | None,
            streamed: tuple[str, ...] | None, slots: int, tail: int | None = None) -> dict[str, str]:
    """Where each query goes: "host" (numpy), or with ``resident`` "device", "pinned" for
    those the Prover's plan (budget, chunk, streamed, slots as the Prover's) streams."""
    if not resident:
        return dict.fromkeys(memory.QUERIES, "host")
    plan = memory.plan_memory(shape, memory.free_bytes(budget), chunk=chunk, streamed=streamed, slots=slots, tail=tail)
    return {q: "pinned" if q in plan.streamed else "device" for q in memory.QUERIES}


def _with_public_rows(a: SparseMatrix, n_public: int) -> SparseMatrix:
    """A plus rows constraints + k (k = 0..n_public) with the single term 1 * wire k."""
    extra = n_public + 1
    indptr = np.concatenate([a.indptr, a.indptr[-1] + np.arange(1, extra + 1, dtype=np.int64)])
    indices = np.concatenate([a.indices, np.arange(extra, dtype=np.uint32)])
    values = np.concatenate([a.values, to_limbs([1] * extra, FR)], axis=1)
    return SparseMatrix(indptr, indices, values)


def _lagrange_at(tau: int, log_size: int, stride: int, offset: int, on_device: bool):
    """(8, n) Montgomery, a device array with ``on_device``: L_(stride j + offset)(tau) of
    the 2^log_size-point domain, for j < n = 2^log_size / stride. L_k(tau) = (tau^N - 1) / N
    * x_k / (tau - x_k) = c / (tau x_k^-1 - 1) with x_k^-1 = root^-k: the powers and the
    constant come from the table kernel (ntt.powers), no n-element host array."""
    size = 1 << log_size
    count = size // stride
    root_inv = pow(FR.root_of_unity(log_size), -1, _R)
    ratio = powers(count, pow(root_inv, stride, _R), tau * pow(root_inv, offset, _R), on_device=on_device)
    fk.add(ratio, ratio, powers(count, 1, _R - 1, on_device=on_device))  # tau / x_k - 1
    out = _empty_like(ratio)
    fk.batch_inverse(out, ratio)
    return fk.scale(out, out, (pow(tau, size, _R) - 1) * pow(size, -1, _R))


def _column_sums(matrix: SparseMatrix, lagrange, wires: int):
    """(8, wires) Montgomery, on lagrange's side: sum over rows j of matrix[j, i] *
    lagrange[j]. The transpose is made on the host (to_csr, all cores) and the products
    where ``lagrange`` is."""
    rows = np.repeat(np.arange(matrix.rows, dtype=np.int64), np.diff(matrix.indptr))
    if matrix.rows > lagrange.shape[1]:
        raise ValueError(f"{matrix.rows} rows exceed the domain of {lagrange.shape[1]}")
    transposed = to_csr(wires, matrix.indices.astype(np.int64), rows, matrix.values)
    del rows
    if is_device_array(lagrange):
        transposed = [cuda.to_device(x) for x in transposed]
    return csr_matvec(_empty_like(lagrange, (_N, wires)), *transposed, lagrange, False)


def _columns(x, start: int, stop: int, on_device: bool):
    """Columns [start, stop) of (8, k) ``x`` as a C-contiguous (8, stop - start) array, on
    the device with ``on_device`` (a device x's rows copied on the device; a host x's on the host)."""
    if not is_device_array(x):
        return np.ascontiguousarray(x[:, start:stop])
    if not on_device:
        return np.stack([x[j, start:stop].copy_to_host() for j in range(_N)])
    out = cuda.device_array((_N, stop - start), dtype=np.uint32)
    for j in range(_N):
        out[j].copy_to_device(x[j, start:stop])
    return out


def _empty_like(x, shape: tuple[int, ...] | None = None):
    """An uninitialized uint32 array on x's side, of x's shape or ``shape``."""
    shape = tuple(x.shape) if shape is None else shape
    return cuda.device_array(shape, dtype=np.uint32) if is_device_array(x) else np.empty(shape, dtype=np.uint32)


def _coefficients(a: SparseMatrix, b: SparseMatrix) -> Coefficients:
    """zkey section 4 from A (with its public rows) and B: values times R^2 (keys.Coefficients)."""
    parts = []
    for matrix, m in ((0, a), (1, b)):
        rows = np.repeat(np.arange(m.rows, dtype=np.uint32), np.diff(m.indptr))
        parts.append((np.full(m.nnz, matrix, np.uint8), rows, m.indices.astype(np.uint32),
                      to_montgomery(to_montgomery(m.values, FR), FR)))
    return Coefficients(*(np.concatenate(cols, axis=-1) for cols in zip(*parts)))


class _FixedBase:
    """Montgomery scalars (host, or device on the GPU) -> affine multiples of a curve's
    generator, (2L, k) uint32 where asked: "host" (numpy), "pinned" (pinned numpy) or
    "device" (a device array, GPU only); pinned and device ones point-major, as the MSM
    reads them (curve/point_major.py). ``points``: how many products each curve will do
    (by name; default none), which sets its table's window (fixed_base.best_window)."""

    def __init__(self, gpu: bool, points: dict[str, int] | None = None) -> None:
        self.gpu, self.points = gpu, points or {}
        self.tables: dict = {}

    def table(self, curve: CurveParams):
        """The curve's table, made on first use: the host's WINDOW table, widened."""
        if curve.name not in self.tables:
            table = fixed_base_table(curve.generator, curve, to_device=self.gpu)
            window = best_window(self.points.get(curve.name, 0))
            self.tables[curve.name] = table if window == WINDOW else widen(table, curve, window)
        return self.tables[curve.name]

    def __call__(self, scalars: np.ndarray, curve: CurveParams, place: str = "host"):
        table = self.table(curve)
        shape = (2 * curve.limbs, scalars.shape[1])
        if not self.gpu:
            return fixed_base_mul(np.empty(shape, np.uint32), np.ascontiguousarray(scalars), table, curve,
                                  montgomery=True)
        out = cuda.device_array(shape, dtype=np.uint32)
        if not is_device_array(scalars):
            scalars = cuda.to_device(np.ascontiguousarray(scalars))
        fixed_base_mul(out, scalars, table, curve, montgomery=True)
        if place != "host":  # the MSM's order (curve/point_major.py)
            memory.flush_deferred_frees()  # fixed_base_mul's scratch (2x out) first: the copy peaks at 2x out
            out = point_major(out)
        if place != "device":
            host = cuda.pinned_array(shape, dtype=np.uint32, order="F") if place == "pinned" else np.empty(
                shape, np.uint32)
            out.copy_to_host(host)
            out = host
        memory.flush_deferred_frees()  # the scalars', the scratch, a device copy left: before the next query
        return out


def _scaled(x, k: int):
    return fk.scale(_empty_like(x), x, k % _R)


def _add(x, y):
    return fk.add(_empty_like(x), x, y)
