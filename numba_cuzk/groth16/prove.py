"""The Groth16 prover, snarkjs's construction, on the GPU or on all CPU cores.

    prover = Prover(pk)                 # bases resident, A and B as CSR, buffers allocated
    proof = prover.prove(witness)       # (8, n_vars) uint32 canonical Fr, wire 0 = 1

For a domain of n = pk.domain_size points (omega = FR.root_of_unity(log n), from 5):
1. w -> Montgomery form; a = A w, b = B w (csr_matvec), c = a o b: the values on the
   domain (zkeys store no C: a satisfying witness has C w = a o b).
2. a, b, c -> coefficients (3 inverse NTTs), then values at the odd points of the
   2n-point domain, omega_2n^(2j+1) (3 coset NTTs with g = omega_2n); there Z = x^n - 1 is
   -2, and d_j = a_j b_j - c_j.
3. MSMs: A = sum w_i A_i, B1 = sum w_i B1_i (G1), B2 = sum w_i B2_i (G2), C = sum over the
   private wires of w_i C_i, H = sum d_j H_j, with H_j = L_(2j+1)(tau) / delta for the
   2n-point domain's Lagrange basis L: sum_j d_j L_(2j+1)(tau) = (ab - c)(tau), as ab - c
   vanishes on the n-point domain (snarkjs's key; no division by Z anywhere).
4. Host epilogue with secret r, s: pi_A = alpha + A + r delta, pi_B = beta + B2 + s delta,
   pi_C = C + H + s pi_A + r (beta + B1 + s delta) - r s delta.
5. The proof is checked with one pairing product (~2 ms) before it is returned: a
   witness that breaks a constraint gives ValueError, never a proof that fails later.

The GPU path runs on one stream and allocates nothing per proof after the first (NTT and
MSM workspaces are cached by shape); the host waits once, for the five MSMs' window sums,
and combines each by Horner's rule (msm.to_point).
A proof goes through the device in a ``ProofSlot`` (pinned witness and window-sum buffers,
its device copy, events): ``enqueue`` launches its device work and returns, ``collect``
waits for it. With several slots a pipeline (numba_cuzk.engine) uploads the next witness
on a copy stream, and queues the next proof's work, while this one computes.
"""

from __future__ import annotations

import secrets

import numpy as np
from numba import cuda

from numba_cuzk import backend
from numba_cuzk.curve import ark
from numba_cuzk.curve.params import G1, G2
from numba_cuzk.field import kernels as fk
from numba_cuzk.field.codec import from_limbs
from numba_cuzk.field.params import FR
from numba_cuzk.groth16 import pairing
from numba_cuzk.groth16.kernels import csr_matvec, to_csr
from numba_cuzk.groth16.keys import Proof, ProvingKey
from numba_cuzk.groth16.timing import PhaseTimer
from numba_cuzk.groth16.witness import validate_witness
from numba_cuzk.msm import WindowSums, host_bases, msm, result_shape, to_point, upload_bases
from numba_cuzk.ntt import coset_ntt, intt

_N = FR.limbs
QUERIES = {"a": ("a_g1", G1), "b1": ("b_g1", G1), "b2": ("b_g2", G2), "c": ("c_g1", G1), "h": ("h_g1", G1)}

UNVERIFIED = ("the proof does not verify: the witness does not satisfy the circuit, or the key is corrupt "
              "or not the circuit's (check the witness with --r1cs CIRCUIT.r1cs: if it passes, the key is at fault)")


class ProofSlot:
    """One proof's way through the device: its witness in, its window sums out.

    ``host`` (pinned on the GPU) and ``device`` (its copy; the same array on the CPU), both
    (8, n_vars) uint32; ``ready``, an event recorded after the upload on the stream that
    made it; ``sums``, the five MSM results' host buffers ({query: (4L, windows) uint32},
    pinned: the download is asynchronous) and ``done``, recorded after the download. A slot
    is reused only once its proof's results are collected (the caller's bookkeeping)."""

    def __init__(self, n_vars: int, sums_shapes: dict[str, tuple[int, int]], gpu: bool) -> None:
        shape = (_N, n_vars)
        if gpu:
            self.host = cuda.pinned_array(shape, dtype=np.uint32)
            self.device = cuda.device_array(shape, dtype=np.uint32)
            self.ready, self.done = cuda.event(timing=False), cuda.event(timing=False)
            self.sums = {name: cuda.pinned_array(s, dtype=np.uint32) for name, s in sums_shapes.items()}
        else:
            self.host = self.device = np.empty(shape, dtype=np.uint32)
            self.ready = self.done = None
            self.sums = {name: np.empty(s, dtype=np.uint32) for name, s in sums_shapes.items()}
        self.windows: dict[str, tuple] = {}  # query -> (curve, c) of the enqueued MSMs

    def load(self, witness: np.ndarray, stream, timer: PhaseTimer) -> None:
        """Copy ``witness`` into ``host`` (returns when that is done: the caller may drop
        ``witness``) and upload it on ``stream`` (asynchronous, timed as "upload")."""
        if self.ready is None:
            with timer.phase("upload"):
                self.host[:] = witness
            return
        self.host[:] = witness
        with timer.phase("upload"):  # pinned memory: a DMA the host does not wait for
            self.device.copy_to_device(self.host, stream=stream)
        self.ready.record(stream)


class Prover:
    """``pk`` made ready on one backend: the GPU (default when there is one) or the CPU.

    Device memory: the five queries (~(3 n_vars + n) 96 B + n_vars 192 B), the A/B CSR
    (36 B per coefficient), buffers 5 x 32 n bytes, ``slots`` proof slots of 32 n_vars
    bytes (and as much pinned host memory, plus the pinned window sums), and the NTT/MSM
    caches. Proofs enqueued on its stream run one after the other (its buffers are reused).
    """

    def __init__(self, pk: ProvingKey, *, gpu: bool | None = None, stream=None, slots: int = 1) -> None:
        self.pk = pk
        self.gpu = backend.cuda_available() if gpu is None else gpu
        self.stream = (stream or cuda.default_stream()) if self.gpu else None
        n = pk.domain_size
        place = (lambda a: cuda.to_device(np.ascontiguousarray(a), stream=self.stream)) if self.gpu else np.asarray
        self.bases = {name: (upload_bases if self.gpu else host_bases)(getattr(pk, field), curve)
                      for name, (field, curve) in QUERIES.items()}
        self.csr = [tuple(place(x) for x in _matrix_csr(pk, m)) for m in (0, 1)]
        alloc = (lambda shape: cuda.device_array(shape, dtype=np.uint32, stream=self.stream)) if self.gpu else (
            lambda shape: np.empty(shape, dtype=np.uint32))
        self.abc = alloc((3, _N, n))
        self.zero = place(np.zeros((_N, n), dtype=np.uint32))
        self.d = alloc((_N, n))
        # scalars per query in enqueue (the witness, its private part, d): the window
        # count of each MSM's result, and so its shape, depends on it
        sizes = {"a": pk.n_vars, "b1": pk.n_vars, "b2": pk.n_vars, "c": pk.n_vars - pk.n_public - 1, "h": n}
        shapes = {name: result_shape(sizes[name], curve) for name, (_, curve) in QUERIES.items()}
        self.points = {name: alloc(shape) for name, shape in shapes.items()}
        self.slots = [ProofSlot(pk.n_vars, shapes, self.gpu) for _ in range(slots)]
        self.omega_2n = FR.root_of_unity(pk.log_n + 1)

    def prove(self, witness: np.ndarray, *, timer: PhaseTimer | None = None, check: bool = True) -> Proof:
        """A proof for ``witness`` ((8, n_vars) uint32 canonical Fr, host). ``timer``
        (made on this prover's stream, or with stream None on the CPU) gets the phases
        upload (witness to the device), matvec, ntt, msm_a, msm_b1, msm_b2, msm_c, msm_h,
        download (device), sync (host: waiting for the device; ~0 on the CPU) and epilogue
        (host)."""
        validate_witness(witness, self.pk.n_vars)
        timer = timer or PhaseTimer(self.stream)
        slot = self.slots[0]
        slot.load(witness, self.stream, timer)
        points = self.device_work(slot, timer)
        with timer.host_phase("epilogue"):
            return self.assemble(points, self.public_inputs(witness), check=check)

    def warm_up(self) -> None:
        """The device work once, on the witness (1, 0, ..., 0): compiles every kernel and
        fills the NTT and MSM caches, so that the proofs after it time their work only
        (a first proof's phases would otherwise hold seconds of compilation)."""
        witness = np.zeros((_N, self.pk.n_vars), dtype=np.uint32)
        witness[0, 0] = 1
        slot = self.slots[0]
        slot.load(witness, self.stream, PhaseTimer(self.stream))
        self.device_work(slot, PhaseTimer(self.stream))

    def public_inputs(self, witness: np.ndarray) -> list[int]:
        return from_limbs(np.ascontiguousarray(witness[:, 1:self.pk.n_public + 1]), FR)

    def device_work(self, slot: ProofSlot, timer: PhaseTimer) -> dict:
        """``enqueue`` then ``collect``: steps 1-3 for ``slot``, waited for."""
        self.enqueue(slot, timer)
        return self.collect(slot, timer)

    def enqueue(self, slot: ProofSlot, timer: PhaseTimer) -> None:
        """Steps 1-3 for the witness loaded into ``slot`` (one that passed
        ``validate_witness``; it is overwritten), queued on this prover's stream behind the
        slot's upload and any earlier proof's work, the five MSM results downloaded into
        ``slot.sums``; returns once launched (on the CPU: once done). Proofs queued one
        behind the other share this prover's buffers safely: the stream runs them in order,
        and each downloads into its own slot."""
        s, w, abc, d = self.stream, slot.device, self.abc, self.d
        if slot.ready is not None:
            slot.ready.wait(s)
        with timer.phase("matvec"):
            fk.to_montgomery(w, w, stream=s)
            for row, csr in enumerate(self.csr):
                csr_matvec(abc[row], *csr, w, True, stream=s)
            fk.mul_sub(abc[2], abc[0], abc[1], self.zero, stream=s)
        with timer.phase("ntt"):
            intt(abc, stream=s)
            coset_ntt(abc, self.omega_2n, stream=s)
            fk.mul_sub(d, abc[0], abc[1], abc[2], stream=s)
        private = w[:, self.pk.n_public + 1:]
        results = {}
        for name, scalars in (("a", w), ("b1", w), ("b2", w), ("c", private), ("h", d)):
            with timer.phase(f"msm_{name}"):
                results[name] = msm(self.bases[name], scalars, montgomery=True, out=self.points[name], stream=s)
        slot.windows = {name: (r.curve, r.c) for name, r in results.items()}
        with timer.phase("download"):
            for name, r in results.items():
                if self.gpu:
                    r.sums.copy_to_host(slot.sums[name], stream=s)
                else:
                    slot.sums[name][:] = r.sums
        if slot.done is not None:
            slot.done.record(s)

    def collect(self, slot: ProofSlot, timer: PhaseTimer) -> dict:
        """The five MSM results of ``slot``'s enqueued proof, {"a", "b1", "b2", "c", "h"}:
        host WindowSums of their own (``assemble`` combines them, outside a pipeline's
        device lock). Waits for the device (timed as the host phase "sync"); the slot is
        free to reuse when this returns."""
        with timer.host_phase("sync"):
            if slot.done is not None:
                slot.done.synchronize()
        return {name: WindowSums(curve, c, slot.sums[name].copy()) for name, (curve, c) in slot.windows.items()}

    def assemble(self, points: dict, public_inputs: list[int], *, check: bool = True) -> Proof:
        """Step 4 (host): the proof from ``collect``'s window sums (each MSM by Horner's
        rule, msm.to_point: < 1 ms each), with fresh r and s; with ``check``, step 5
        against ``public_inputs`` (ValueError if it fails)."""
        proof = self._combine({name: to_point(sums) for name, sums in points.items()})
        if check and not pairing.verify(self.pk.verifying_key, public_inputs, proof):
            raise ValueError(UNVERIFIED)
        return proof

    def _combine(self, points: dict) -> Proof:
        pk = self.pk
        r, s = secrets.randbelow(FR.modulus), secrets.randbelow(FR.modulus)
        g1 = lambda p: ark.to_ark(p, 1)  # noqa: E731
        g2 = lambda p: ark.to_ark(p, 2)  # noqa: E731
        delta1 = g1(pk.delta_g1)
        a = g1(pk.alpha_g1) + g1(points["a"]) + delta1 * ark.scalar(r)
        b2 = g2(pk.beta_g2) + g2(points["b2"]) + g2(pk.delta_g2) * ark.scalar(s)
        b1 = g1(pk.beta_g1) + g1(points["b1"]) + delta1 * ark.scalar(s)
        c = g1(points["c"]) + g1(points["h"]) + a * ark.scalar(s) + b1 * ark.scalar(r) - delta1 * ark.scalar(r * s)
        return Proof(ark.from_ark(a, 1), ark.from_ark(b2, 2), ark.from_ark(c, 1))


def prove(pk: ProvingKey, witness: np.ndarray, *, gpu: bool | None = None) -> Proof:
    """One proof (a Prover made for it: use Prover for many proofs with one key)."""
    return Prover(pk, gpu=gpu).prove(witness)


def _matrix_csr(pk: ProvingKey, matrix: int):
    """(indptr, indices, values) of matrix 0 (A) or 1 (B) over the domain's n rows."""
    co = pk.coefficients
    pick = co.matrix == matrix
    rows = co.constraint[pick].astype(np.int64)
    if rows.size and rows.max() >= pk.domain_size:
        raise ValueError(f"coefficient for constraint {int(rows.max())} outside the domain of {pk.domain_size}")
    cols = co.signal[pick]
    if cols.size and cols.max() >= pk.n_vars:
        raise ValueError(f"coefficient for signal {int(cols.max())}, the key has {pk.n_vars}")
    return to_csr(pk.domain_size, rows, cols, co.value[:, pick])
