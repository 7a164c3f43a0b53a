"""The Groth16 prover, snarkjs's construction, on the GPU or on all CPU cores.

    prover = Prover(pk)                 # memory planned, bases resident (or streamed), buffers allocated
    proof = prover.prove(witness)       # (8, n_vars) uint32 canonical Fr, wire 0 = 1

For a domain of n = pk.domain_size points (omega = FR.root_of_unity(log n), from 5):
1. a = A w, b = B w (csr_matvec: the key's coef R^2 times canonical w, in Montgomery
   form), c = a o b: the values on the domain (zkeys store no C: a satisfying witness
   has C w = a o b).
2. a, b, c -> coefficients (3 inverse NTTs), then values at the odd points of the
   2n-point domain, omega_2n^(2j+1) (3 coset NTTs with g = omega_2n; both in one
   ntt.shift_to_coset, which folds n^-1 and the coset's g^i into one table); there Z = x^n - 1 is
   -2, and d_j = a_j b_j - c_j.
3. MSMs: A = sum w_i A_i, B1 = sum w_i B1_i (G1), B2 = sum w_i B2_i (G2), C = sum over the
   private wires of w_i C_i, H = sum d_j H_j, with H_j = L_(2j+1)(tau) / delta for the
   2n-point domain's Lagrange basis L: sum_j d_j L_(2j+1)(tau) = (ab - c)(tau), as ab - c
   vanishes on the n-point domain (snarkjs's key; no division by Z anywhere).
4. Host epilogue with secret r, s: pi_A = alpha + A + r delta, pi_B = beta + B2 + s delta,
   pi_C = C + H + s pi_A + r (beta + B1 + s delta) - r s delta.
5. The proof is checked with one product of three pairings (the key's e(alpha, beta)
   computed once: pairing.PreparedVerifyingKey) before it is returned: a
   witness that breaks a constraint gives ValueError, never a proof that fails later.

The GPU path allocates what its memory plan (memory.py) lists, when it is made (the NTT
tables on the first proof), and nothing per proof: one MSM workspace per curve serves all
that curve's MSMs, one scratch vector the three NTTs, run one vector at a time. It runs on
one stream, plus a copy stream for the queries the plan streams from pinned host memory
(their first chunks are queued before the matvec, so the copies overlap it and the NTTs).
On a stream of its own, with nothing streamed, each slot's device work is captured once
as a CUDA graph (cuda_graph.py) and replayed: one launch per proof instead of ~90.
The host waits once, for the five MSMs' window sums, and combines each by Horner's rule
(msm.to_point).
With ``tail`` (the bit/tail split, msm/bits.py) the witness is split once per proof,
after the NTTs (phase "split"), into its 1s and its other non-zero scalars: each of A,
B1, B2 and C (resident) is then the sum of its bases at the 1s plus a Pippenger MSM over
at most ``tail`` scalars; a witness with more non-bit scalars is refused (TailOverflow,
at ``collect``), never proved wrong. Each query's sum adds only the 1s on its dense
bases (non-identity: its density map, made once per key in the constructor).
A proof goes through the device in a ``ProofSlot`` (pinned witness and window-sum buffers,
its device copy, events): ``enqueue`` launches its device work and returns, ``collect``
waits for it. With several slots a pipeline (numba_cuzk.engine) uploads the next witness
on a copy stream, and queues the next proof's work, while this one computes.
"""

from __future__ import annotations

import secrets
import warnings
from dataclasses import dataclass

import numpy as np
from numba_cuzk import _compat  # noqa: F401,I001  (numba patched before its first use)
from numba import config, cuda

from numba_cuzk import backend, cuda_graph
from numba_cuzk.curve import ark
from numba_cuzk.curve.params import G1, G2
from numba_cuzk.field import kernels as fk
from numba_cuzk.field.codec import from_limbs
from numba_cuzk.field.params import FR
from numba_cuzk.field.target import fill_zero, is_device_array, sync_event
from numba_cuzk.groth16 import memory, pairing
from numba_cuzk.groth16.formats.points import check as check_points
from numba_cuzk.groth16.kernels import csr_matvec, to_csr
from numba_cuzk.groth16.keys import Proof, ProvingKey, VerifyingKey
from numba_cuzk.groth16.timing import PhaseTimer
from numba_cuzk.groth16.witness import validate_witness
from numba_cuzk.msm import StreamedBases, WindowSums, Workspace, host_bases, msm, to_point, upload_bases
from numba_cuzk.msm.bits import BitSplit, check_totals
from numba_cuzk.msm.plan import make_plan
from numba_cuzk.ntt import cached_arrays, shift_to_coset

_N = FR.limbs
STREAM_PHASES = frozenset(f"stream_{name}" for name in memory.QUERIES)  # copies on the copy stream, not kernels

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
        self.totals = None  # the bit/tail split's (1s, others), pinned (2,) int32, when the prover splits
        if gpu:
            self.host = cuda.pinned_array(shape, dtype=np.uint32)
            self.device = cuda.device_array(shape, dtype=np.uint32)
            self.ready, self.done = sync_event(), sync_event()
            self.sums = {name: cuda.pinned_array(s, dtype=np.uint32) for name, s in sums_shapes.items()}
            self.totals = cuda.pinned_array((2,), dtype=np.int32)
        else:
            self.host = self.device = np.empty(shape, dtype=np.uint32)
            self.ready = self.done = None
            self.sums = {name: np.empty(s, dtype=np.uint32) for name, s in sums_shapes.items()}
        self.windows: dict[str, tuple] = {}  # query -> (curve, c) of the enqueued MSMs
        self.graph = None  # its device work as a CUDA graph (Prover.enqueue), and the graph's timer marks
        self.graph_marks: list = []

    def load(self, witness: np.ndarray, stream, timer: PhaseTimer) -> None:
        """Copy ``witness`` into ``host`` (returns when that is done: the caller may drop
        ``witness``) and ``upload`` it."""
        self.host[:] = witness
        self.upload(stream, timer)

    def upload(self, stream, timer: PhaseTimer) -> None:
        """``host`` to the device on ``stream`` (asynchronous, timed as "upload")."""
        if self.ready is None:
            with timer.phase("upload"):  # the CPU's device array is host
                pass
            return
        with timer.phase("upload"):  # pinned memory: a DMA the host does not wait for
            self.device.copy_to_device(self.host, stream=stream)
        self.ready.record(stream)


def placed_queries(pk: ProvingKey) -> tuple[str, ...]:
    """The queries of ``pk`` already on the device (setup(..., resident=True)), which the
    Prover adopts; ValueError for one on another GPU than the current one."""
    placed = tuple(q for q, (field, _) in memory.QUERIES.items() if is_device_array(getattr(pk, field)))
    here = _device_id(None)
    for q in placed:
        there = _device_id(getattr(pk, memory.QUERIES[q][0]))
        if there != here:
            raise ValueError(f"the key's query {q} lives on GPU {there}, this Prover on GPU {here}: a key made "
                             "with setup(..., resident=True) serves the GPU it was made on")
    return placed


def _device_id(array) -> int | None:
    """The GPU that holds ``array`` (None: the current one); None in the simulator."""
    if config.ENABLE_CUDASIM:
        return None
    context = cuda.current_context() if array is None else array.gpu_data.context
    return context.device.id


class Prover:
    """``pk`` made ready on one backend: the GPU (default when there is one) or the CPU.

    On the GPU, ``memory`` (groth16/memory.py) is planned first, for the device memory
    free (cudaMemGetInfo), at most ``memory_budget`` bytes: a key that cannot fit raises
    memory.KeyTooLarge, naming the bytes needed and free, before anything is allocated.
    The Prover then allocates exactly the plan's items, here (the NTT tables on the first
    proof): queries resident or streamed from pinned host memory (on ``copy_stream``, its
    own by default; ``streamed`` forces which, ``chunk`` their chunk in points), one
    MSM workspace per curve shared by all its MSMs, the work vectors, ``slots`` proof slots.
    ``tail`` (GPU): the bit/tail split for witnesses of at most ``tail`` scalars other
    than 0 and 1 (module docstring; None: the plain MSMs); ``window``: the window bits of
    the G1 workspace's plan (H's MSM; None: plan.py's choice); ``affine``: its batch-affine
    accumulation (plan.affine, log2 of a wave's scratch rows; None: XYZZ). Proofs enqueued on its
    stream run one after the other (its
    buffers are reused). With ``graphs`` (default) and a ``stream`` of its own, each slot's
    work is a CUDA graph, captured by ``warm_up`` or by the slot's first proof after the
    Prover's first (direct) one. On the CPU the
    same buffers are numpy arrays (no plan).
    """

    def __init__(self, pk: ProvingKey, *, gpu: bool | None = None, stream=None, slots: int = 1,
                 memory_budget: int | None = None, copy_stream=None, chunk: int | None = None,
                 streamed: tuple[str, ...] | None = None, graphs: bool = True, tail: int | None = None,
                 window: int | None = None, affine: int | None = None) -> None:
        self.pk = pk
        self.gpu = backend.cuda_available() if gpu is None else gpu
        self.stream = (stream or cuda.default_stream()) if self.gpu else None
        n = pk.domain_size
        shape = memory.KeyShape.of(pk)
        placed = placed_queries(pk) if self.gpu else ()
        self.memory = memory.plan_memory(shape, memory.free_bytes(memory_budget) if self.gpu else None, slots=slots,
                                         chunk=chunk, streamed=streamed, placed=placed,
                                         tail=tail if self.gpu else None, window=window, affine=affine)
        self.copy_stream = (copy_stream or cuda.stream()) if self.memory.streamed and self.gpu else None
        place = (lambda a: cuda.to_device(np.ascontiguousarray(a), stream=self.stream)) if self.gpu else np.asarray
        alloc = (lambda shape: cuda.device_array(shape, dtype=np.uint32, stream=self.stream)) if self.gpu else (
            lambda shape: np.empty(shape, dtype=np.uint32))
        self.bases = {name: self._bases(getattr(pk, field), curve, name in self.memory.streamed)
                      for name, (field, curve) in memory.QUERIES.items()}
        for name, (field, curve) in memory.QUERIES.items():  # an untrusted key's points: on the GPU's copy,
            if field in pk.unchecked:  # a streamed query's in the key's host memory, on all CPU cores
                # a C copy of a point-major host query (memory.pinned_key's), for the check only, once
                points = np.ascontiguousarray(getattr(pk, field)) if name in self.memory.streamed else (
                    self.bases[name].points)
                check_points(points, curve, pk.unchecked[field], stream=self.stream)
        if pk.unchecked and pk.after_checks is not None:
            pk.after_checks()
        self.csr = [tuple(place(x) for x in _matrix_csr(pk, m)) for m in (0, 1)]
        self.workspaces = {c.name: Workspace(c, self.memory.msm_plans[c.name], host_scalars=False)
                           for c in (G1, G2) if self.memory.msm_plans[c.name] is not None} if self.gpu else {}
        self.tail_workspaces = {name: Workspace(c, self.memory.tail_plans[name], host_scalars=False)
                                for c in (G1, G2) if (name := c.name) in (self.memory.tail_plans or {})}
        self.split = BitSplit(pk.n_vars, self.memory.tail, stream=self.stream) if self.memory.bits else None
        for row, name in enumerate(self.memory.bits):  # the queries' density maps, once per key
            self.split.density(self.bases[name], self._first(name), self.split.dense[row], self.stream)
        self.abc = alloc((3, _N, n))
        self.scratch = alloc((_N, n))  # the NTT's; d = ab - c is written over a
        # the window count of each MSM's result, and so its shape, comes from its plan
        shapes = {name: self._result_shape(name, curve) for name, (_, curve) in memory.QUERIES.items()}
        self.points = {name: alloc(shape) for name, shape in shapes.items()}
        self.slots = [ProofSlot(pk.n_vars, shapes, self.gpu) for _ in range(slots)]
        self.omega_2n = FR.root_of_unity(pk.log_n + 1)
        self.epilogue_key = EpilogueKey.of(pk)
        # a slot's device work as one CUDA graph, captured on its first enqueue: a stream of
        # the Prover's own (the default one cannot be captured), nothing streamed (copies
        # on a second stream would need joins inside the graph)
        self.graphs = graphs and self.gpu and not self.memory.streamed and cuda_graph.capturable(self.stream)
        self.graph_tables: list = []
        # captured only once a direct run has compiled the kernels and built the NTT tables
        # (both synchronize, which a capture forbids)
        self._launched = False

    def _bases(self, points, curve, streamed: bool):
        if not self.gpu:
            return host_bases(points.copy_to_host() if is_device_array(points) else points, curve)
        if streamed:
            return StreamedBases(points, curve, self.memory.chunk)
        return upload_bases(points, curve, stream=self.stream)

    def _result_shape(self, name: str, curve) -> tuple[int, ...]:
        if self.gpu:
            return memory.result_shape(self.memory, name)
        size = {"c": self.pk.n_vars - self.pk.n_public - 1, "h": self.pk.domain_size}.get(name, self.pk.n_vars)
        return 4 * curve.limbs, make_plan(size, degree=curve.degree, gpu=False).windows

    def prove(self, witness: np.ndarray, *, timer: PhaseTimer | None = None, check: bool = True) -> Proof:
        """A proof for ``witness`` ((8, n_vars) uint32 canonical Fr, host). ``timer``
        (made on this prover's stream, or with stream None on the CPU) gets the phases
        stage (host: the witness checked and copied into the slot, one pass), upload (witness
        to the device), matvec, ntt, split (with ``tail``), msm_a, msm_b1, msm_b2, msm_c, msm_h, download (device),
        blinding (host: the proof's r and s drawn while the device works, EpilogueKey.blinding),
        sync (host: waiting for the device; ~0 on the CPU) and epilogue (host)."""
        timer = timer or PhaseTimer(self.stream)
        slot = self.slots[0]
        with timer.host_phase("stage"):
            validate_witness(witness, self.pk.n_vars, into=slot.host)
        slot.upload(self.stream, timer)
        self.enqueue(slot, timer)
        with timer.host_phase("blinding"):
            blinding = self.epilogue_key.blinding()
        points = self.collect(slot, timer)
        with timer.host_phase("epilogue"):
            return self.assemble(points, self.public_inputs(witness), check=check, blinding=blinding)

    def warm_up(self) -> None:
        """The device work once, on the witness (1, 0, ..., 0): compiles every kernel and
        fills the NTT and MSM caches, so that the proofs after it time their work only
        (a first proof's phases would otherwise hold seconds of compilation); then each
        slot's graph is captured (graphs)."""
        witness = np.zeros((_N, self.pk.n_vars), dtype=np.uint32)
        witness[0, 0] = 1
        slot = self.slots[0]
        slot.load(witness, self.stream, PhaseTimer(self.stream))
        self.device_work(slot, PhaseTimer(self.stream))
        for slot in self.slots if self.graphs else ():
            self._capture(slot)

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
        for name in self.memory.streamed if self.gpu else ():  # the first chunks' copies overlap the matvec and NTTs
            self.bases[name].prefetch(self.copy_stream, self._transfer(name, timer))
        if slot.ready is not None:
            slot.ready.wait(self.stream)
        if self.graphs and slot.graph is None and self._launched:
            self._capture(slot)
        if slot.graph is not None:
            slot.graph.launch(self.stream)
            timer.adopt(slot.graph_marks)
        else:
            self._steps(slot, timer)
            self._launched = True
        if slot.done is not None:
            slot.done.record(self.stream)

    def _capture(self, slot: ProofSlot) -> None:
        """``slot``'s steps as a CUDA graph, with the timer marks its replays record.
        If the capture fails, this Prover launches directly from then on (one warning)."""
        timer = PhaseTimer(self.stream, graph=True)
        try:
            with cuda_graph.capture(self.stream) as captured:
                self._steps(slot, timer)
        except Exception as error:  # noqa: BLE001 (the direct launches still work)
            self.graphs = False
            warnings.warn(f"numba-cuzk: CUDA graph capture failed ({error}); launching kernels directly",
                          RuntimeWarning, stacklevel=3)
            return
        slot.graph, slot.graph_marks = captured.graph, timer.marks
        self.graph_tables = cached_arrays()  # the NTT tables the graphs read, kept while they live

    def _steps(self, slot: ProofSlot, timer: PhaseTimer) -> None:
        """Steps 1-3's launches for ``slot``, its downloads included, on this prover's stream."""
        s, w, abc = self.stream, slot.device, self.abc
        d = abc[0]  # ab - c, written over a
        with timer.phase("matvec"):
            for row, csr in enumerate(self.csr):  # w stays canonical, as the MSMs read it
                csr_matvec(abc[row], *csr, w, True, stream=s)
            fill_zero(abc[2], s)
            fk.mul_sub(abc[2], abc[0], abc[1], abc[2], stream=s)
        with timer.phase("ntt"):
            for row in range(3):  # one vector at a time: the scratch is n elements, not 3n
                shift_to_coset(abc[row], self.omega_2n, stream=s, workspace=self.scratch)
            fk.mul_sub(d, abc[0], abc[1], abc[2], stream=s)
            fk.from_montgomery(d, d, stream=s)
        private = w[:, self.pk.n_public + 1:]
        if self.split is not None:
            with timer.phase("split"):  # once for the four witness MSMs
                self.split.split(w, s)
        results = {}
        for name, scalars in (("a", w), ("b1", w), ("b2", w), ("c", private), ("h", d)):
            with timer.phase(f"msm_{name}"):
                results[name] = self._msm(name, scalars, timer)
        slot.windows = {name: (r.curve, r.c) for name, r in results.items()}
        with timer.phase("download"):
            if self.split is not None:
                self.split.totals.copy_to_host(slot.totals, stream=s)
            for name, r in results.items():
                if self.gpu:
                    r.sums.copy_to_host(slot.sums[name], stream=s)
                else:
                    slot.sums[name][:] = r.sums

    def _msm(self, name: str, scalars, timer: PhaseTimer):
        bases, out, s = self.bases[name], self.points[name], self.stream
        if not self.gpu:
            return msm(bases, scalars, out=out)
        if name in self.memory.bits:
            dense = self.split.dense[self.memory.bits.index(name)]
            return self.split.msm(bases, out, self.tail_workspaces[bases.curve.name], s, first=self._first(name),
                                  dense=dense)
        workspace = self.workspaces[bases.curve.name]
        if name in self.memory.streamed:
            return bases.msm(scalars, workspace, out, s, self.copy_stream, transfer=self._transfer(name, timer))
        return msm(bases, scalars, out=out, stream=s, workspace=workspace)

    def _first(self, name: str) -> int:
        """The wire of ``name``'s base 0: C's base j is wire j + n_public + 1."""
        return self.pk.n_public + 1 if name == "c" else 0

    def _transfer(self, name: str, timer: PhaseTimer):
        """Brackets for a streamed query's chunk copies: the timer's phase stream_<name>
        on the copy stream (an interval of its own, overlapping the kernels)."""
        return lambda: timer.phase(f"stream_{name}", stream=self.copy_stream)

    def collect(self, slot: ProofSlot, timer: PhaseTimer) -> dict:
        """The five MSM results of ``slot``'s enqueued proof, {"a", "b1", "b2", "c", "h"}:
        host WindowSums of their own (``assemble`` combines them, outside a pipeline's
        device lock). Waits for the device (timed as the host phase "sync"); the slot is
        free to reuse when this returns."""
        with timer.host_phase("sync"):
            if slot.done is not None:
                slot.done.synchronize()
        if self.split is not None:
            check_totals(slot.totals, self.memory.tail)
        return {name: WindowSums(curve, c, slot.sums[name].copy()) for name, (curve, c) in slot.windows.items()}

    def assemble(self, points: dict, public_inputs: list[int], *, check: bool = True,
                 blinding: Blinding | None = None) -> Proof:
        """Steps 4-5 on ``collect``'s window sums (``assemble``)."""
        return assemble(self.epilogue_key, points, public_inputs, check=check, blinding=blinding)


@dataclass(frozen=True, eq=False)
class EpilogueKey:
    """What steps 4-5 use of a proving key: a few points, picklable, so that a proof can be
    assembled in another process (numba_cuzk.engine.assembly). ``fixed()`` holds them as
    arkworks objects, converted once per process (a pickled key converts them again)."""

    verifying_key: VerifyingKey
    alpha_g1: tuple
    beta_g1: tuple
    beta_g2: tuple
    delta_g1: tuple
    delta_g2: tuple

    @classmethod
    def of(cls, pk: ProvingKey) -> EpilogueKey:
        return cls(pk.verifying_key, pk.alpha_g1, pk.beta_g1, pk.beta_g2, pk.delta_g1, pk.delta_g2)

    def blinding(self) -> Blinding:
        """Fresh r and s (``secrets``) with their terms: one G2 and three G1 scalar
        products, ~1 ms on the 2-core CPU (the Prover's "blinding" phase)."""
        f = self.fixed()
        r, s = secrets.randbelow(FR.modulus), secrets.randbelow(FR.modulus)
        a = f.alpha_g1 + f.delta_g1 * ark.scalar(r)
        b = f.beta_g2 + f.delta_g2 * ark.scalar(s)
        c = a * ark.scalar(s) + f.beta_g1 * ark.scalar(r)
        return Blinding(r, s, ark.from_ark(a, 1), ark.from_ark(b, 2), ark.from_ark(c, 1))

    def fixed(self) -> _FixedPoints:
        points = self.__dict__.get("_fixed")
        if points is None:
            points = _FixedPoints(self)
            object.__setattr__(self, "_fixed", points)  # a cache: the key's fields never change
        return points

    def __getstate__(self) -> dict:
        return {k: v for k, v in self.__dict__.items() if k != "_fixed"}  # arkworks objects do not pickle


@dataclass(frozen=True)
class Blinding:
    """One proof's random r and s, with the parts of its A, B and C that depend on neither
    the witness nor the MSMs (reference affine points, so it pickles):

        A = a + A',  B = b + B',  C = c + C' + H' + s A' + r B1'

    (primes: the MSMs' points; a = alpha + r delta, b = beta + s delta in G2,
    c = s a + r beta in G1). Drawn while the device works (Prover.prove, the engine's GPU
    workers), it leaves the epilogue two G1 scalar products of its four, and not the G2
    one (~0.5 ms of ~3.9 on the 2-core CPU). Never use one twice: two proofs with the same
    r and s differ by their witnesses' unblinded MSMs."""

    r: int
    s: int
    a: tuple
    b: tuple
    c: tuple


def assemble(key: EpilogueKey, points: dict, public_inputs: list[int], *, check: bool = True,
             blinding: Blinding | None = None) -> Proof:
    """Step 4 (host): the proof from the five MSMs' window sums ({"a", "b1", "b2", "c", "h"}:
    host WindowSums, each combined by Horner's rule, msm.to_point: < 1 ms each), blinded by
    ``blinding`` (None: one drawn here); with ``check``, step 5 against ``public_inputs``
    (ValueError if it fails)."""
    proof = _combine({name: to_point(sums) for name, sums in points.items()}, blinding or key.blinding())
    if check and not key.fixed().verifying_key.verify(public_inputs, proof):
        raise ValueError(UNVERIFIED)
    return proof


def _combine(points: dict, blinding: Blinding) -> Proof:
    """The formulas of Blinding's docstring. C's r B1 is r (beta + B1') + r s delta, whose
    r s delta is cancelled by C's - r s delta: B1 itself is never formed."""
    a_msm = ark.to_ark(points["a"], 1)
    a = ark.to_ark(blinding.a, 1) + a_msm
    b2 = ark.to_ark(blinding.b, 2) + ark.to_ark(points["b2"], 2)
    c = (ark.to_ark(blinding.c, 1) + ark.to_ark(points["c"], 1) + ark.to_ark(points["h"], 1)
         + a_msm * ark.scalar(blinding.s) + ark.to_ark(points["b1"], 1) * ark.scalar(blinding.r))
    return Proof(ark.from_ark(a, 1), ark.from_ark(b2, 2), ark.from_ark(c, 1))


class _FixedPoints:
    """The key's points of the epilogue as arkworks objects, and its prepared verifying key."""

    def __init__(self, pk: ProvingKey | EpilogueKey) -> None:
        self.alpha_g1, self.beta_g1, self.delta_g1 = (ark.to_ark(p, 1) for p in (pk.alpha_g1, pk.beta_g1, pk.delta_g1))
        self.beta_g2, self.delta_g2 = (ark.to_ark(p, 2) for p in (pk.beta_g2, pk.delta_g2))
        self.verifying_key = pairing.PreparedVerifyingKey(pk.verifying_key)


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
