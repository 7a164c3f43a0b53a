"""A Prover's device memory, planned before anything is allocated.

    shape = KeyShape.of(pk)                        # or zkey.read_shape(path), circuits.key_shape(...)
    plan = plan_memory(shape, free_bytes(), slots=2)   # KeyTooLarge if it cannot fit
    print(plan.describe())                         # what the Prover will allocate, item by item

The plan is the Prover's single source of truth: it allocates exactly the plan's items,
all in its constructor (the NTT's tables on its warm-up), and nothing per proof. Items
(bytes, n = domain size, m = wires, L = 12 Fq limbs for G1, 24 for G2):

- key: the queries A, B1 (G1, m points), B2 (G2, m), C (G1, m - n_public - 1), H (G1, n),
  affine in the curve layout, 8L bytes a point (96 G1, 192 G2); the A and B matrices as CSR
  (36 bytes a coefficient, 8 (n + 1) per matrix for the row pointers).
- msm workspaces: one per curve, shared by every MSM of that curve and reused by every
  proof (pippenger.workspace_bytes of the plan for the largest MSM: max(m, n) scalars in
  G1; m in G2, or one chunk when B2 streams). Device scalars only: no scalar buffer.
- proof vectors: a, b, c ((3, 8, n) Fr) and one (8, n) NTT scratch vector: the three
  transforms run one vector at a time, so the scratch is n, not 3n, elements; d = ab - c
  is written over a.
- ntt tables: the twiddles of every pass but the first, plus the coset table g^i of the
  2n-point domain's odd points (ntt/transform.py's caches; 32 bytes an entry).
- slots: a device witness (32 m) per proof slot (and its pinned host twin, host memory).
- msm results: each MSM's window sums (4L x windows x 4 bytes; per chunk when streamed).
- streaming: a query left in pinned host memory (streamed, msm/stream.py) costs two device
  buffers of ``chunk`` points instead of the whole query (and, when every query of its
  curve streams, that curve's workspace serves one chunk).
- bit/tail split (``tail``, msm/bits.py): the witness MSMs A, B1, B2, C of resident
  queries sum the bases of their 1s and run Pippenger over at most ``tail`` other
  scalars only: the split's buffers (kinds, the 1s' and the tail's indices, the gathered
  tail scalars, sum_selected's partial sums per curve: bits.bit_bytes) and one tail
  workspace per curve (its plan for ``tail`` scalars). The curves' full workspaces then
  serve only the MSMs left to them (H; a streamed query's chunks): with B2 on the split,
  the G2 workspace for m scalars (21.6 GB at 2^27) is not needed at all.
- margin: MARGIN_BYTES for what the plan does not itemise (kernel modules, Numba's small
  constant tables, allocations whose frees Numba has deferred).

Host memory: ``pinned_key`` is where a key's queries are copied into pinned host memory (a
daemon's warm keys, numba_cuzk.serve), point-major, so that making the key resident again
is one asynchronous copy a query, and a streamed query streams from that copy in place.

A key made by ``setup(..., resident=True)`` holds some queries on the device already
(``placed``): they are items of the plan like the others, but their bytes are in use, not
free, so the plan fits ``free`` plus them, and they are never streamed.

``plan_memory`` keeps every query resident if that fits in ``free``; otherwise it streams
queries in STREAM_ORDER (B2 first: the largest, and with it the G2 workspace shrinks to
one chunk's), one more at a time, each in the largest chunk of STREAM_CHUNKS that fits,
until the plan fits, and raises KeyTooLarge naming the bytes needed (all resident, and
all streamed) and the bytes free when even that does not fit.
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass

import numpy as np
from numba_cuzk import _compat  # noqa: F401,I001  (numba patched before its first use)
from numba import config, cuda

from numba_cuzk.curve.params import G1, G2, CurveParams
from numba_cuzk.curve.point_major import point_major
from numba_cuzk.field.target import is_device_array
from numba_cuzk.groth16.keys import ProvingKey
from numba_cuzk.groth16.shape import QUERIES, KeyShape  # noqa: F401  (memory.KeyShape, memory.QUERIES: the plan's API)
from numba_cuzk.msm.bits import bit_bytes
from numba_cuzk.msm.pippenger import workspace_bytes
from numba_cuzk.msm.plan import Plan, make_plan
from numba_cuzk.ntt import domain

WITNESS_QUERIES = ("a", "b1", "b2", "c")  # the MSMs of the witness's scalars: the bit/tail split serves them
STREAM_ORDER = ("b2", "h", "c", "b1", "a")
# Points per chunk of a streamed query, the largest of these that fits: every chunk pays
# its workspace's whole bucket reduction (~2 x windows x 2^(c-1) additions: G2 at 2^24,
# c = 20, 26 M; at 2^22, c = 18, 7.9 M per chunk, 4x as many chunks), so fewer, larger
# chunks cost less; a G2 chunk of 2^24 is 3.2 GB, ~61 ms of copy at 52.8 GB/s.
STREAM_CHUNKS = tuple(1 << k for k in range(24, 17, -1))
MARGIN_BYTES = 1 << 30
FR_BYTES = 32
CSR_BYTES_PER_COEFFICIENT = 36  # 32 B value + 4 B column index
NTT_CONSTANT_BYTES = FR_BYTES * ((1 << (domain.ROOT_TABLE_LOG - 1)) + 2)  # inner roots, 1, n^-1
GB = 1e9


class KeyTooLarge(ValueError):
    """A proving key whose plan does not fit the device memory free (the message gives both)."""


@dataclass(frozen=True)
class Item:
    """One allocation: ``group`` (key, stream, workspace, proof, ntt, slots, results,
    margin), its name, its device bytes; ``pinned_bytes``: pinned host memory it holds."""

    group: str
    name: str
    nbytes: int
    pinned_bytes: int = 0


@dataclass(frozen=True)
class MemoryPlan:
    """The Prover's allocations for ``shape`` with ``slots`` proof slots: queries
    ``resident`` on the device and ``streamed`` from pinned host memory in chunks of
    ``chunk`` points, the window plans of the two MSM workspaces (``msm_plans``, by curve
    name), and every ``item``. ``free_bytes``: the device memory it was made for (None:
    unknown, nothing refused)."""

    shape: KeyShape
    slots: int
    chunk: int
    resident: tuple[str, ...]
    streamed: tuple[str, ...]
    msm_plans: dict
    items: tuple[Item, ...]
    free_bytes: int | None
    placed: tuple[str, ...] = ()  # resident queries allocated before the plan (setup's)
    tail: int | None = None  # the bit/tail split's tail capacity (None: no split)
    tail_plans: dict | None = None  # the tail workspaces' plans, by curve name

    @property
    def bits(self) -> tuple[str, ...]:
        """The witness queries on the bit/tail split: the resident ones, when ``tail``."""
        return tuple(q for q in WITNESS_QUERIES if q in self.resident) if self.tail else ()

    @property
    def device_bytes(self) -> int:
        return sum(i.nbytes for i in self.items)

    @property
    def pinned_bytes(self) -> int:
        return sum(i.pinned_bytes for i in self.items)

    @property
    def placed_bytes(self) -> int:
        """Device bytes of the ``placed`` queries: in the plan, already allocated."""
        return sum(query_bytes(self.shape, q) for q in self.placed)

    def fits(self, free: int | None) -> bool:
        """Whether what is still to be allocated fits ``free`` device bytes (None: unknown)."""
        return free is None or self.device_bytes - self.placed_bytes <= free

    def bytes_of(self, group: str) -> int:
        return sum(i.nbytes for i in self.items if i.group == group)

    def parts(self, query: str) -> int:
        """Chunks of ``query``'s MSM (1 when resident)."""
        return parts(self.shape, query, self.streamed, self.chunk)

    def describe(self) -> str:
        """The plan as a table: one line per item, then the totals against ``free_bytes``."""
        s = self.shape
        lines = [f"memory plan: domain 2^{s.log_n}, {s.n_vars} wires ({s.n_public} public), "
                 f"{s.coefficients} coefficients, {self.slots} proof slot(s)",
                 f"  {'group':<10} {'item':<44} {'device GB':>10} {'pinned GB':>10}"]
        for i in self.items:
            pinned = f"{i.pinned_bytes / GB:10.3f}" if i.pinned_bytes else ""
            lines.append(f"  {i.group:<10} {i.name:<44} {i.nbytes / GB:10.3f} {pinned:>10}")
        lines.append(f"  {'total':<10} {'':<44} {self.device_bytes / GB:10.3f} {self.pinned_bytes / GB:10.3f}")
        where = "every query resident" if not self.streamed else (
            f"streamed from pinned host memory: {', '.join(self.streamed)} (chunks of {self.chunk} points)")
        lines.append(f"  {where}")
        if self.free_bytes is None:
            lines.append("  device memory free: unknown (no GPU): nothing streamed, nothing refused")
        else:
            placed = f" ({', '.join(self.placed)} already on the device)" if self.placed else ""
            lines.append(f"  device memory free: {self.free_bytes / GB:.3f} GB{placed}, left after the plan: "
                         f"{(self.free_bytes - self.device_bytes + self.placed_bytes) / GB:.3f} GB")
        return "\n".join(lines)

    def as_dict(self) -> dict:
        return {"shape": vars(self.shape), "slots": self.slots, "chunk": self.chunk, "resident": list(self.resident),
                "streamed": list(self.streamed), "placed": list(self.placed), "device_bytes": self.device_bytes,
                "pinned_bytes": self.pinned_bytes, "free_bytes": self.free_bytes,
                "msm_plans": {k: {"n": p.n, "c": p.c, "chunk": p.chunk} for k, p in self.msm_plans.items()
                              if p is not None},
                "tail": self.tail, "bits": list(self.bits),
                "items": [vars(i) for i in self.items]}


def query_bytes(shape: KeyShape, query: str) -> int:
    """Device bytes of one query: 8L bytes per affine point."""
    return shape.points(query) * 2 * QUERIES[query][1].limbs * 4


def parts(shape: KeyShape, query: str, streamed: tuple[str, ...], chunk: int) -> int:
    """Chunks of ``query``'s MSM: ceil(points / chunk) when streamed, else 1."""
    return max(1, -(-shape.points(query) // chunk)) if query in streamed else 1


def ntt_table_bytes(log_n: int) -> int:
    """Bytes of the NTT tables a proof needs at 2^log_n (transform.py's caches): every pass
    but the first has a twiddle table of Ns R entries; the coset table has n."""
    twiddles = sum(1 << (p.log_ns + p.log_r) for p in domain.plan(log_n) if not p.first)
    return FR_BYTES * (twiddles + (1 << log_n)) + NTT_CONSTANT_BYTES


def msm_plan(shape: KeyShape, curve: CurveParams, streamed: tuple[str, ...], chunk: int,
             bits: tuple[str, ...] = (), window: int | None = None, affine: int | None = None) -> Plan | None:
    """The window plan of ``curve``'s workspace: for its largest MSM, or for one chunk
    when every query of the curve streams (a streamed query's chunks use the workspace of
    its curve; window sums stay additive as long as one c serves every chunk); the
    queries on the bit/tail split (``bits``) use the tail workspace instead. None when
    no MSM is left to it. ``window``: G1's window bits instead of plan.py's choice (a
    sweep of H's MSM at 2^27 measures wider windows); ``affine``: G1's batch-affine
    accumulation (plan.affine: its scratch, 2^affine rows of 96 bytes, is in the workspace)."""
    queries = [q for q, (_, c) in QUERIES.items() if c is curve and q not in bits]
    if not queries:
        return None
    n = max(shape.points(q) for q in queries)
    if all(q in streamed for q in queries):
        n = min(n, chunk)
    return make_plan(max(n, 1), window if curve is G1 else None, affine=affine if curve is G1 else None,
                     degree=curve.degree)


def windows_of(plan: MemoryPlan, query: str) -> int:
    """Windows of ``query``'s MSM result: its tail plan's on the split, else its curve's."""
    curve = QUERIES[query][1].name
    return (plan.tail_plans[curve] if query in plan.bits else plan.msm_plans[curve]).windows


def result_shape(plan: MemoryPlan, query: str) -> tuple[int, ...]:
    """Shape of ``query``'s MSM result: (parts, 4L, windows) streamed, (2, 4L, windows)
    on the split (the tail's window sums, the 1s' sum), (4L, windows) otherwise."""
    curve = QUERIES[query][1]
    shape = (4 * curve.limbs, windows_of(plan, query))
    if query in plan.streamed:
        return (plan.parts(query), *shape)
    return (2, *shape) if query in plan.bits else shape


def _items(shape: KeyShape, slots: int, streamed: tuple[str, ...], chunk: int, plans: dict,
           tail: int | None, tail_plans: dict, bits: tuple[str, ...]) -> list[Item]:
    n, m = shape.domain_size, shape.n_vars
    items = []
    for q in QUERIES:
        curve = QUERIES[q][1]
        if q in streamed:
            buffers = min(2, parts(shape, q, streamed, chunk))
            points = max(1, min(chunk, shape.points(q)))
            items.append(Item("stream", f"{q} ({curve.name}): {buffers} buffers of {points} points",
                              buffers * points * 8 * curve.limbs, query_bytes(shape, q)))
        else:
            items.append(Item("key", f"query {q} ({curve.name}, {shape.points(q)} points)", query_bytes(shape, q)))
    items.append(Item("key", f"A and B as CSR ({shape.coefficients} coefficients)",
                      CSR_BYTES_PER_COEFFICIENT * shape.coefficients + 2 * 8 * (n + 1)))
    for curve in (G1, G2):
        p = plans[curve.name]
        if p is not None:
            items.append(Item("workspace", f"msm {curve.name} (n {p.n}, c {p.c}, chunk {p.chunk})",
                              workspace_bytes(curve, p, host_scalars=False)))
        t = tail_plans.get(curve.name)
        if t is not None:
            items.append(Item("workspace", f"tail msm {curve.name} (n {t.n}, c {t.c}, chunk {t.chunk})",
                              workspace_bytes(curve, t, host_scalars=False)))
    if bits:
        items.append(Item("bits", f"bit/tail split of {m} scalars, tail {tail} ({', '.join(bits)})",
                          bit_bytes(m, tail)))
    items.append(Item("proof", "a, b, c and the NTT scratch vector (4 x 32 n)", 4 * FR_BYTES * n))
    items.append(Item("ntt", f"twiddle and coset tables (2^{shape.log_n})", ntt_table_bytes(shape.log_n)))
    items.append(Item("slots", f"{slots} witness slot(s) (32 x {m})", slots * FR_BYTES * m, slots * FR_BYTES * m))
    results = 0
    for q, (_, curve) in QUERIES.items():
        windows = (tail_plans if q in bits else plans)[curve.name].windows
        results += (2 if q in bits else parts(shape, q, streamed, chunk)) * 4 * curve.limbs * 4 * windows
    items.append(Item("results", "MSM window sums", results))
    items.append(Item("margin", "kernel modules, small tables, deferred frees", MARGIN_BYTES))
    return items


def plan_with(shape: KeyShape, streamed: tuple[str, ...], *, slots: int = 1, chunk: int = STREAM_CHUNKS[0],
              free: int | None = None, placed: tuple[str, ...] = (), tail: int | None = None,
              window: int | None = None, affine: int | None = None) -> MemoryPlan:
    """The plan that streams exactly ``streamed``, with ``placed`` already on the device,
    and the bit/tail split for up to ``tail`` non-bit scalars (None: no split) for the
    resident witness queries, and ``window`` and ``affine`` for the G1 workspace (msm_plan;
    no fitting, no refusal)."""
    if slots < 1 or chunk < 1:
        raise ValueError(f"slots and chunk must be >= 1, got {slots} and {chunk}")
    if tail is not None and tail < 1:
        raise ValueError(f"the bit/tail split's tail must be >= 1 scalars, got {tail}")
    unknown = (set(streamed) | set(placed)) - set(QUERIES)
    if unknown:
        raise ValueError(f"unknown queries {sorted(unknown)}; the queries are {', '.join(QUERIES)}")
    if set(streamed) & set(placed):
        raise ValueError(f"queries {sorted(set(streamed) & set(placed))} are on the device already: "
                         "they cannot stream from host memory")
    resident = tuple(q for q in QUERIES if q not in streamed)
    tail = None if tail is None else min(tail, shape.n_vars)
    bits = tuple(q for q in WITNESS_QUERIES if q in resident) if tail else ()
    plans = {c.name: msm_plan(shape, c, streamed, chunk, bits, window, affine) for c in (G1, G2)}
    tail_plans = {c.name: make_plan(tail, degree=c.degree) for c in (G1, G2) if any(QUERIES[q][1] is c for q in bits)}
    return MemoryPlan(shape, slots, chunk, resident, tuple(streamed), plans,
                      tuple(_items(shape, slots, tuple(streamed), chunk, plans, tail, tail_plans, bits)), free,
                      tuple(placed), tail, tail_plans)


def plan_memory(shape: KeyShape, free: int | None, *, slots: int = 1, chunk: int | None = None,
                streamed: tuple[str, ...] | None = None, placed: tuple[str, ...] = (),
                tail: int | None = None, window: int | None = None, affine: int | None = None) -> MemoryPlan:
    """The plan with the fewest queries streamed (in STREAM_ORDER, skipping the ``placed``
    ones, already on the device), then the largest chunk (``chunk``, or the first of
    STREAM_CHUNKS), whose allocations still to make fit ``free`` device bytes (every query
    resident when ``free`` is None), or the one that streams exactly ``streamed``.
    KeyTooLarge, naming the bytes needed and free, when streaming every query (or
    ``streamed``) in the smallest chunks does not fit either. ``tail``, ``window``, ``affine``:
    plan_with's."""
    order = tuple(q for q in STREAM_ORDER if q not in placed)
    choices = [order[:k] for k in range(len(order) + 1)] if streamed is None else [tuple(streamed)]
    chunks = STREAM_CHUNKS if chunk is None else (chunk,)
    for choice in choices:
        for size in chunks if choice else chunks[:1]:
            plan = plan_with(shape, choice, slots=slots, chunk=size, free=free, placed=placed, tail=tail,
                             window=window, affine=affine)
            if plan.fits(free):
                return plan
    resident = plan_with(shape, (), slots=slots, tail=tail, window=window, affine=affine)
    big = sorted(plan.items, key=lambda i: -i.nbytes)[:3]
    raise KeyTooLarge(
        f"the proving key (domain 2^{shape.log_n}, {shape.n_vars} wires) needs {resident.device_bytes / GB:.2f} GB "
        f"of device memory with every query resident and {plan.device_bytes / GB:.2f} GB with "
        f"{'every query' if len(plan.streamed) == len(QUERIES) else ', '.join(plan.streamed) or 'nothing'} streamed "
        f"from pinned host memory, but {free / GB:.2f} GB is free{_beside(plan)} (largest items: "
        + ", ".join(f"{i.name} {i.nbytes / GB:.2f} GB" for i in big) + ")")


def _beside(plan: MemoryPlan) -> str:
    return f" beside the {plan.placed_bytes / GB:.2f} GB of {', '.join(plan.placed)} already there" if plan.placed else ""


def fit_report(shape: KeyShape, free: int | None, slots: int, as_json: bool = False) -> str:
    """``plan_memory``'s plan as text (``describe``) or JSON; KeyTooLarge if it cannot fit."""
    plan = plan_memory(shape, free, slots=slots)
    return json.dumps(plan.as_dict(), indent=2) if as_json else plan.describe()


def pinned_key(pk: ProvingKey) -> ProvingKey:
    """``pk`` with its five queries ((2L, count) uint32 host arrays) copied into pinned
    (page-locked) host memory, point-major (Fortran order, as the MSM reads its bases:
    curve/point_major.py). A Prover made from it uploads each resident query with one
    asynchronous copy from there (upload_bases: no reordering, no staging through pageable
    memory; ~52.8 GB/s on the H200) and streams a streamed query from there in place
    (msm/stream.py pins nothing more). Costs the queries' bytes in pinned host memory (the
    pageable arrays go with the caller's old key); queries already on a device, and empty
    ones, are kept as they are. In the simulator pinned arrays are plain numpy arrays."""
    pinned = {}
    for field, _ in QUERIES.values():
        points = getattr(pk, field)
        if not is_device_array(points) and points.size:
            pinned[field] = point_major(points, out=cuda.pinned_array(points.shape, dtype=np.uint32, order="F"))
    return dataclasses.replace(pk, **pinned)


def free_bytes(budget: int | None = None) -> int | None:
    """Device bytes free now (cudaMemGetInfo, after flushing the frees Numba deferred), at
    most ``budget``; None on the CPU backend and in the simulator (unless a budget is given)."""
    info = _memory_info()
    if info is None:
        return budget
    return info[0] if budget is None else min(info[0], budget)


def used_bytes() -> int | None:
    """Device bytes in use now (total - free; every process's, as cudaMemGetInfo sees it),
    after flushing Numba's deferred frees; None without a GPU."""
    info = _memory_info()
    return None if info is None else info[1] - info[0]


def flush_deferred_frees() -> None:
    """Free now what Numba deferred (it frees in batches: past 10 pending or 20% of the
    device); nothing without a GPU."""
    if not config.ENABLE_CUDASIM and cuda.is_available():
        cuda.current_context().memory_manager.deallocations.clear()


def _memory_info() -> tuple[int, int] | None:
    """(free, total) device bytes after flush_deferred_frees; None without a GPU."""
    if config.ENABLE_CUDASIM or not cuda.is_available():
        return None
    flush_deferred_frees()
    free, total = cuda.current_context().get_memory_info()
    return int(free), int(total)
