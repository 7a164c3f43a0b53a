"""The batch-affine accumulation (msm/affine.py) against its references and the plain MSM.

Each kernel against its Python reference on hypothesis draws: two windows of buckets cut
into runs of 2-8 entries, bases from a pool with the identity, P and -P, repeats and random
signs (so pairs that double, cancel or meet the identity), the scratch rows of later rounds
from tests/curve/values' table (the identity, small multiples, random points and their
negatives): affine_denominators (each pair's prefix, position and link, each run's product,
round 1's copies of unpaired points), invert_groups, affine_sums (each pair's sum by the
reference group law), affine_partials (each piece's sum at the partial sum's column the
plain accumulation uses). Then whole MSMs through plan.affine against the naive reference
and the plain plan on the edge cases: the identity among the bases, repeated bases with
equal scalars (doublings), cancelling pairs, all-equal scalars (a bucket over many runs),
mostly 0/1 scalars, one point, none, runs of 1 and 2 entries, several waves. In the
simulator with tens of points (CI), and with -m gpu on a device at 2^20 against a closed
form (bases (i + 1) G, and all bases G: every pair of round 1 a doubling or a cancellation).
"""

import random

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings, strategies as st
from numba import cuda

from numba_cuzk.curve import layout
from numba_cuzk.curve.params import G1, G2
from numba_cuzk.curve.reference import g1
from numba_cuzk.msm import affine, msm, reference as ref, to_point, upload_bases
from numba_cuzk.msm import kernels as K
from numba_cuzk.msm.plan import make_plan
from tests.conftest import SIMULATOR
from tests.curve import values
from tests.msm import inputs

pytestmark = pytest.mark.gpu
F, L = g1.F, G1.limbs
KERNELS = affine.KERNELS
POISON = 0xA5A5A5A5
_P = g1.random_point(random.Random(31))
_Q = g1.random_point(random.Random(32))
POOL = [None, _P, g1.neg(_P), _P, _Q, g1.double(_P)]  # the bases' points: identity, P and -P, a repeat


@st.composite
def buckets(draw):
    """Two windows of 1-5 buckets, each a list of (base index, negative digit) entries."""
    count = draw(st.integers(1, 5))
    entry = st.tuples(st.integers(0, len(POOL) - 1), st.booleans())
    return [[draw(st.lists(entry, max_size=7)) for _ in range(count)] for _ in range(2)]


def _sorted_entries(windows):
    """(entries (2, n) uint32 in bucket order with LAST_BIT, offsets (2, B + 1) int32, n)."""
    n = max(1, max(sum(map(len, w)) for w in windows))
    entries = np.zeros((2, n), dtype=np.uint32)
    offsets = np.zeros((2, len(windows[0]) + 1), dtype=np.int32)
    for w, window in enumerate(windows):
        pos = 0
        for b, bucket in enumerate(window):
            for j, (index, negative) in enumerate(bucket):
                last = j == len(bucket) - 1
                entries[w, pos] = index | (int(negative) << 31) | (int(last) << 30)
                pos += 1
            offsets[w, b + 1] = pos
    return entries, offsets, n


def _signed_base(e: int):
    point = POOL[e & int(K.INDEX_MASK)]
    return g1.neg(point) if e & int(K.SIGN_BIT) else point


def _rows(points: list) -> np.ndarray:
    """Reference points -> scratch rows (len, 2L) uint32."""
    return np.ascontiguousarray(layout.points_to_limbs(points, G1).T)


def _row_points(rows: np.ndarray) -> list:
    return layout.limbs_to_points(np.ascontiguousarray(rows.T), G1)


def _canonical(words: np.ndarray) -> int:
    return layout.limbs_to_field(np.ascontiguousarray(words[:L].reshape(L, 1)), G1)[0]


def _runs(entries, offsets, chunk):
    """Per run of both windows (wave order): (window, start, stop, ends by position)."""
    runs = -(-entries.shape[1] // chunk)
    out = []
    for q in range(2 * runs):
        w, r = divmod(q, runs)
        start, stop = r * chunk, min(r * chunk + chunk, int(offsets[w, -1]))
        ends = [bool(entries[w, p] & K.LAST_BIT) for p in range(start, stop)]
        out.append((w, start, stop, ends))
    return runs, out


def _round_inputs(windows, chunk, h, data):
    """Device inputs of one round: bases, entries, offsets, scratch (poison in round 1,
    drawn points after), and the scratch rows' reference points."""
    entries, offsets, n = _sorted_entries(windows)
    runs = -(-n // chunk)
    rows = 2 * runs * chunk
    bases = upload_bases(layout.points_to_limbs(POOL, G1), G1).points
    if h == 1:
        scratch = np.full((rows, 2 * L), POISON, dtype=np.uint32)
        points = None
    else:
        points = data.draw(st.lists(values.points(g1), min_size=rows, max_size=rows))
        scratch = _rows(points)
    return bases, entries, offsets, runs, scratch, points


def _run_points(entries, w, start, stop, row0, h, row_points):
    """The points a round reads, by position in the run."""
    if h == 1:
        return [_signed_base(int(entries[w, p])) for p in range(start, stop)]
    return [row_points[row0 + p - start] for p in range(start, stop)]


def _denominators(bases, entries, offsets, runs, chunk, h, scratch):
    """affine_denominators over one wave of every run: (scratch, totals, links) on the device."""
    count = 2 * runs
    d_scratch = cuda.to_device(scratch)
    totals = cuda.to_device(np.full((L, count), POISON, dtype=np.uint32))
    links = cuda.to_device(np.full(count, -7, dtype=np.int32))
    KERNELS["affine_denominators"][2, K.THREADS](bases, cuda.to_device(entries), cuda.to_device(offsets), runs,
                                                 chunk, 0, h, d_scratch, totals, links)
    return d_scratch, totals, links


ROUND = [buckets(), st.sampled_from([2, 3, 4, 8]), st.integers(0, 2), st.data()]
SLOW = [HealthCheck.too_slow, HealthCheck.data_too_large]


@settings(max_examples=12, deadline=None, suppress_health_check=SLOW)
@given(*ROUND)
def test_denominators_match_reference(windows, chunk, log_h, data):
    h = 1 << log_h
    assume(h < chunk)
    bases, entries, offsets, runs, scratch, points = _round_inputs(windows, chunk, h, data)
    d_scratch, totals, links = _denominators(bases, entries, offsets, runs, chunk, h, scratch)
    got, got_totals, got_links = d_scratch.copy_to_host(), totals.copy_to_host(), links.copy_to_host()
    written = set()
    for i, (w, start, stop, ends) in enumerate(_runs(entries, offsets, chunk)[1]):
        row0 = i * chunk
        pairs = affine.round_pairs_reference(ends, h)
        prefixes, product = affine.denominators_reference(F, _run_points(entries, w, start, stop, row0, h, points),
                                                          pairs)
        assert _canonical(got_totals[:, i]) == product
        link = 0
        for (left, _), prefix in zip(pairs, prefixes):
            row = row0 + left + h // 2
            assert _canonical(got[row]) == prefix
            assert (got[row, L], got[row, L + 1]) == (left, link)
            link = row + 1
            written.add(row)
        assert got_links[i] == link
        if h == 1:  # round 1 copies each odd piece's unpaired last point (3 or more entries)
            piece = 0
            for p, end in enumerate(ends):
                if end or p == len(ends) - 1:
                    if p > piece and (p - piece) % 2 == 0:
                        assert _row_points(got[row0 + p:row0 + p + 1]) == [_signed_base(int(entries[w, start + p]))]
                        written.add(row0 + p)
                    piece = p + 1
    untouched = [r for r in range(scratch.shape[0]) if r not in written]
    assert np.array_equal(got[untouched], scratch[untouched])


@settings(max_examples=6, deadline=None)
@given(st.lists(st.one_of(st.sampled_from([1, 2, F.p - 1]), st.integers(1, F.p - 1)), min_size=1, max_size=9),
       st.integers(1, 4))
def test_invert_groups_matches_reference(field_values, group):
    count = len(field_values)
    d_values = cuda.to_device(layout.field_to_limbs(field_values, G1))
    out = cuda.to_device(np.full((L, count + 1), POISON, dtype=np.uint32))  # one column past count: untouched
    KERNELS["invert_groups"][2, K.THREADS](d_values, count, group, out)
    got = out.copy_to_host()
    assert layout.limbs_to_field(np.ascontiguousarray(got[:, :count]), G1) == affine.invert_groups_reference(
        F, field_values)
    assert (got[:, count] == POISON).all()


@settings(max_examples=10, deadline=None, suppress_health_check=SLOW)
@given(*ROUND)
def test_sums_match_reference(windows, chunk, log_h, data):
    """affine_sums after affine_denominators (tested above), with the reference's inverses
    of the runs' products: each pair's sum in its left's row, every other row as it was."""
    h = 1 << log_h
    assume(h < chunk)
    bases, entries, offsets, runs, scratch, points = _round_inputs(windows, chunk, h, data)
    d_scratch, totals, links = _denominators(bases, entries, offsets, runs, chunk, h, scratch)
    products = layout.limbs_to_field(totals.copy_to_host(), G1)
    inverses = cuda.to_device(layout.field_to_limbs(affine.invert_groups_reference(F, products), G1))
    before = d_scratch.copy_to_host()
    KERNELS["affine_sums"][2, K.THREADS](bases, cuda.to_device(entries), cuda.to_device(offsets), runs, chunk, 0, h,
                                         d_scratch, inverses, links)
    got = d_scratch.copy_to_host()
    summed = set()
    for i, (w, start, stop, ends) in enumerate(_runs(entries, offsets, chunk)[1]):
        row0 = i * chunk
        run_points = _run_points(entries, w, start, stop, row0, h, points)
        for left, want in affine.sums_reference(g1, run_points, affine.round_pairs_reference(ends, h)).items():
            assert _row_points(got[row0 + left:row0 + left + 1]) == [want]
            summed.add(row0 + left)
    rest = [r for r in range(got.shape[0]) if r not in summed]
    assert np.array_equal(got[rest], before[rest])


@settings(max_examples=8, deadline=None, suppress_health_check=SLOW)
@given(buckets(), st.sampled_from([1, 2, 3, 4]), st.data())
def test_partials_match_reference(windows, chunk, data):
    """affine_partials: each piece's sum (its first row, or its base for one entry) at the
    column of the partial sums' numbering: a window's pieces in entry order, from w *
    max_chunks on (scan's chunk_offsets)."""
    entries, offsets, n = _sorted_entries(windows)
    runs = -(-n // chunk)
    rows = 2 * runs * chunk
    row_points = data.draw(st.lists(values.points(g1), min_size=rows, max_size=rows))
    bases = upload_bases(layout.points_to_limbs(POOL, G1), G1).points
    counts = np.diff(offsets, axis=1)
    first, last = offsets[:, :-1] // chunk, (offsets[:, 1:] - 1) // chunk
    chunk_offsets = np.zeros_like(offsets)
    chunk_offsets[:, 1:] = np.cumsum(np.where(counts > 0, last - first + 1, 0), axis=1)
    max_chunks = runs + counts.shape[1]  # plan.max_chunks: the runs, plus a piece for each bucket's start
    points = cuda.to_device(np.full((4 * L, 2 * max_chunks), POISON, dtype=np.uint32))
    KERNELS["affine_partials"][2, K.THREADS](bases, cuda.to_device(entries), cuda.to_device(offsets),
                                             cuda.to_device(chunk_offsets), runs, chunk, 0, max_chunks,
                                             cuda.to_device(_rows(row_points)), points)
    got = layout.limbs_to_points(points.copy_to_host(), G1, "xyzz")
    want = {w: [] for w in range(2)}
    for i, (w, start, stop, ends) in enumerate(_runs(entries, offsets, chunk)[1]):
        run_points = [row_points[i * chunk + p - start] for p in range(start, stop)]
        piece = 0
        for p, end in enumerate(ends):  # a piece of one entry: its base
            if end or p == len(ends) - 1:
                if p == piece:
                    run_points[p] = _signed_base(int(entries[w, start + p]))
                piece = p + 1
        want[w] += affine.partials_reference(run_points, ends)
    for w in range(2):
        columns = got[w * max_chunks:(w + 1) * max_chunks]
        assert [g1.from_xyzz(p) for p in columns[:len(want[w])]] == want[w]
        assert all(p == (POISON_X, POISON_X, POISON_X, POISON_X) for p in columns[len(want[w]):])


POISON_X = layout.limbs_to_field(np.full((L, 1), POISON, dtype=np.uint32), G1)[0]


# --- whole MSMs through plan.affine ------------------------------------------------------

N = 12


@pytest.fixture(scope="module")
def points():
    pts = inputs.multiples(G1, N, random.Random(11))
    pts[3] = None  # the identity among the bases
    pts[5] = pts[4]  # a repeated base
    return pts


def _msm(pts, values, **options):
    bases = upload_bases(layout.points_to_limbs(pts, G1), G1)
    return to_point(msm(bases, cuda.to_device(inputs.scalar_limbs(values)), **options))


def _check(pts, values, **options):
    """The affine plan's result is the naive reference's and the plain plan's."""
    want = ref.msm(g1, pts, values)
    plain = {k: v for k, v in options.items() if k != "affine"}
    assert _msm(pts, values, **options) == want
    assert _msm(pts, values, **plain) == want


@pytest.mark.parametrize("affine_log", [3, 8])  # 8 rows a wave (2 runs: many waves), or all runs in one
def test_random_with_edge_scalars(points, affine_log):
    rng = random.Random(1)
    values = [rng.randrange(inputs.R) for _ in range(N)]
    values[0], values[1], values[2] = 0, 1, inputs.R - 1
    values[6], values[7] = inputs.R + 5, 2**256 - 1
    values[4] = values[5]  # a repeated base with an equal scalar: doublings in its buckets
    _check(points, values, window=12, chunk=4, affine=affine_log)


@pytest.mark.parametrize("chunk", [1, 2, 8])  # runs of 1 (no rounds), 2 (one round), 8 (a bucket in one run)
def test_all_equal_scalars(points, chunk):
    """One bucket per window over every run: its pieces' sums are combined as partial sums."""
    k = random.Random(3).randrange(inputs.R)
    _check(points, [k] * N, window=13, chunk=chunk, affine=6)


def test_cancelling_and_zero_one():
    """k P + (r - k) P (P + (-P) in every bucket), and mostly 0/1 scalars (the plain
    kernel's 0/1 sums beside the affine runs)."""
    pts = inputs.multiples(G1, N, random.Random(12))
    k = random.Random(6).randrange(inputs.R)
    assert _msm([pts[0], pts[0]], [k, inputs.R - k], window=12, affine=10) is None
    rng = random.Random(4)
    values = [rng.choice([0, 1, 1, 0, 1]) for _ in range(N)]
    values[9], values[10] = rng.randrange(inputs.R), rng.randrange(inputs.R)
    _check(pts, values, window=12, chunk=2, affine=10)


def test_single_point_none_and_validation(points):
    k = random.Random(5).randrange(inputs.R)
    assert _msm(points[:1], [k], window=12, affine=10) == ref.msm(g1, points[:1], [k])
    assert _msm(points, [], affine=10) is None
    g2_points = layout.points_to_limbs(inputs.multiples(G2, 2, random.Random(3)), G2)
    with pytest.raises(ValueError, match="G1 only"):
        msm(upload_bases(g2_points, G2), cuda.to_device(inputs.scalar_limbs([1, 2])), affine=10)
    for bad in (0, 31):
        with pytest.raises(ValueError, match="affine"):
            make_plan(16, affine=bad)


def test_workspace_buffers():
    """plan.affine adds a wave's scratch rows (2^affine, or all runs' entries if fewer), the
    runs' products, inverses and links, and the empty window's offsets; nothing without it."""
    from numba_cuzk.msm.pippenger import workspace_buffers

    plan = make_plan(1 << 16, window=13, chunk=64, affine=14)
    buffers = workspace_buffers(G1, plan)
    assert buffers["scratch"] == ((1 << 14, 2 * L), np.uint32)
    assert buffers["totals"] == buffers["inverses"] == ((L, (1 << 14) // 64), np.uint32)
    assert buffers["links"] == (((1 << 14) // 64,), np.int32) and buffers["no_entries"] == ((1, 1), np.int32)
    small = make_plan(100, window=13, chunk=8, affine=30)  # 20 windows x 13 runs of 8
    assert workspace_buffers(G1, small)["scratch"][0] == (20 * 13 * 8, 2 * L)
    assert "scratch" not in workspace_buffers(G1, make_plan(1 << 16))


# --- on a device: 2^20 against a closed form ---------------------------------------------

@pytest.mark.skipif(SIMULATOR, reason="2^20 points: on a GPU only (-m gpu)")
@pytest.mark.parametrize("options", [dict(affine=26), dict(affine=20), dict(affine=26, chunk=2),
                                     dict(affine=26, chunk=256, window=18)])
def test_gpu_against_closed_form(options):
    from tests.msm.test_closed_form import multiples_of_g, weighted_sum
    from numba_cuzk.curve.reference import Curve

    n = 1 << 20
    bases = multiples_of_g(G1, n)
    scalars = inputs.random_scalar_limbs(n, np.random.default_rng(20))
    scalars[:, :1000] = scalars[:, :1]  # a thousand equal scalars: buckets over several runs
    got = to_point(msm(bases, cuda.to_device(scalars), **options))
    assert got == Curve(G1).mul(G1.generator, weighted_sum(scalars)), f"plan {make_plan(n, **options)}"


@pytest.mark.skipif(SIMULATOR, reason="2^20 points: on a GPU only (-m gpu)")
def test_gpu_equal_bases_double_and_cancel():
    """All bases G: in round 1 every pair doubles (digits of one sign) or cancels (opposite
    signs), and later rounds meet equal sums again."""
    n = 1 << 20
    bases = upload_bases(np.repeat(layout.points_to_limbs([G1.generator], G1), n, axis=1), G1)
    scalars = inputs.random_scalar_limbs(n, np.random.default_rng(21))
    total = sum(inputs.limbs_to_ints(scalars)) % inputs.R
    got = to_point(msm(bases, cuda.to_device(scalars), affine=26))
    assert got == g1.mul(G1.generator, total)


@pytest.mark.skipif(SIMULATOR, reason="a whole GPU proof is minutes in the simulator")
def test_gpu_prover_with_affine_h():
    """Prover(affine=): H's MSM (and the other G1 MSMs, one workspace) through batch-affine
    accumulation, directly and replayed in a CUDA graph: its MSMs equal the plain Prover's,
    and the proof verifies."""
    from numba_cuzk.circuits import build
    from numba_cuzk.groth16 import pairing
    from numba_cuzk.groth16.prove import Prover
    from numba_cuzk.groth16.setup import setup
    from numba_cuzk.groth16.timing import PhaseTimer

    r1cs, witness = build("mimc", 12, seed=3)
    pk = setup(r1cs, gpu=True)
    plain, fast = Prover(pk, gpu=True), Prover(pk, gpu=True, affine=20, stream=cuda.stream())
    assert fast.memory.msm_plans["G1"].affine == 20 and fast.workspaces["G1"].plan.affine == 20
    assert pairing.verify(pk.verifying_key, fast.public_inputs(witness), fast.prove(witness))
    fast.warm_up()  # the slot's work captured as a graph
    for prover in (plain, fast):
        prover.slots[0].load(witness, prover.stream, PhaseTimer(prover.stream))
    want = {k: to_point(v) for k, v in plain.device_work(plain.slots[0], PhaseTimer(plain.stream)).items()}
    assert {k: to_point(v) for k, v in fast.device_work(fast.slots[0], PhaseTimer(fast.stream)).items()} == want
