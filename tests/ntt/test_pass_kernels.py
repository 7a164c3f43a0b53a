"""Every pass kernel (kernels.PASS_KERNELS) against the reference, at the sizes where the
radix-4 schedule (kernels.radix4_pass_block) changes shape, and shift_to_coset.

Cases name (log_n, max_radix_log) and what they reach in the radix-4 passes:
an even radix from global memory, an odd radix (block_load + one radix-2 stage first),
radix-4 groups through shared memory, the last group storing straight to global
(Ns >= J, log_r >= 3) or through block_store (first passes, log_r = 2, Ns < J), several
blocks per vector (2^11: 2 blocks in both passes), and in-place last passes.
2^10 and 2^11 also run the radix-4 passes specialized to one radix (kernels.radix4_pass_fixed:
2^4, 2^6); test_fixed_radices runs all three at full size on the GPU. On the GPU path outputs
go into poisoned arrays; in the simulator at 2^1-2^11.
"""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from numba import cuda

from numba_cuzk.field.params import FR
from numba_cuzk.ntt import domain, reference as ref, shift_to_coset, transform
from numba_cuzk.ntt.device import direct_store, slot, twiddle_exponent, twiddle_index
from numba_cuzk.ntt.kernels import PASS_KERNELS
from tests.conftest import SIMULATOR
from tests.ntt.vectors import COSET_G, P, from_mont, poisoned, random_ints, random_limbs, to_mont

VARIANTS = sorted(PASS_KERNELS)
BACKENDS = ["cpu", pytest.param("gpu", marks=pytest.mark.gpu)]
# (log_n, max_radix_log): single passes 2^1-2^8; 2^9 [5, 4] and 2^10 [6, 4] (the pass
# boundary: second pass direct), 2^11 [7, 4] (2 blocks per pass); 2^6 / 3 [3, 3] (odd,
# direct), 2^8 / 3 [3, 3, 2] (log_r = 3 with Ns < J: through block_store), 2^6 / 2
# [2, 2, 2] (radix-4 groups that are both first and last), 2^5 / 1 (radix-2 only).
SCHEDULE_CASES = [(k, 8) for k in range(1, 9)] + [(9, 8), (10, 8), (11, 8), (6, 3), (8, 3), (6, 2), (5, 1)]
EXAMPLES = 4 if SIMULATOR else 25


@pytest.fixture(params=BACKENDS, scope="module")
def backend(request):
    return request.param


def put(backend, host: np.ndarray):
    return cuda.to_device(host) if backend == "gpu" else host.copy()


def get(backend, arr) -> np.ndarray:
    return arr.copy_to_host() if backend == "gpu" else arr


def reference(kind: str, host: np.ndarray, g: int | None) -> np.ndarray:
    x = from_mont(host)
    if kind == "shift":
        return to_mont(ref.coset_ntt(ref.intt(x), g))
    f = {"ntt": ref.ntt, "intt": ref.intt, "coset_ntt": ref.coset_ntt, "coset_intt": ref.coset_intt}[kind]
    return to_mont(f(x, g) if kind.startswith("coset") else f(x))


def run(backend, kind: str, host: np.ndarray, variant: str, max_radix_log: int = domain.MAX_RADIX_LOG,
        g: int = COSET_G) -> np.ndarray:
    """Out of place into a poisoned array (input checked unchanged)."""
    src, out = put(backend, host), put(backend, poisoned(host.shape))
    if kind == "shift":
        shift_to_coset(src, g, out, variant=variant)
    else:
        coset = g if kind.startswith("coset") else None
        transform.transform(src, out, inverse=kind.endswith("intt"), g=coset, variant=variant,
                            max_radix_log=max_radix_log)
    assert np.array_equal(get(backend, src), host), "input modified"
    return get(backend, out)


def test_layout_is_a_permutation():
    for log_j in range(0, 9):
        slots = {slot(r, jl, log_j) for r in range(1 << (10 - log_j)) for jl in range(1 << log_j)}
        assert slots == set(range(1 << 10))


@given(st.integers(1, 8), st.integers(0, 8), st.integers(1, 16))
@settings(max_examples=40, deadline=None)
def test_twiddle_table_order(log_r, log_j, log_ns):
    """Each pass's pre-twiddle w^(r m) has one slot of its table (a bijection onto [0, Ns R)),
    the table's builder reads r m back from it, and a block's R x A twiddles (A = min(J,
    Ns) consecutive m) are one run."""
    log_a = min(log_j, log_ns)
    size = 1 << (log_r + log_ns)
    m_values = range(1 << log_ns) if log_ns <= 8 else [0, 1, 5, (1 << log_ns) - 1]
    seen = set()
    for m in m_values:
        for r in range(1 << log_r):
            i = twiddle_index(r, m, log_r, log_j, log_ns)
            assert 0 <= i < size and twiddle_exponent(i, log_r, log_a) == r * m
            seen.add(i)
    if log_ns <= 8:
        assert len(seen) == size
    m0 = (3 << log_a) & ((1 << log_ns) - 1)  # a block's first column
    block = sorted(twiddle_index(r, m0 + ml, log_r, log_j, log_ns) for r in range(1 << log_r) for ml in range(1 << log_a))
    assert block == list(range(block[0], block[0] + (1 << (log_r + log_a))))


def wavefronts(slots: list[int]) -> int:
    """Shared-memory wavefronts of one warp's 16-byte access (an element's first half) to 32
    elements of 32 B at ``slots``: per quarter-warp, the most distinct 16-byte chunks in
    one bank group (chunk mod 8). 4 quarters x 2: two-way, the fewest at 32 B per element."""
    return sum(max(sum(1 for p in set(slots[q:q + 8]) if p % 4 == g) for g in range(4)) for q in range(0, 32, 8))


def access_patterns(log_r: int, log_j: int):
    """Per warp, the slots of every buffer access of a pass (device.py's index arithmetic):
    block_load and block_stage (odd radix), radix4_group's rows, block_store's
    bit-reversed reads for every run length."""
    j_mask = (1 << log_j) - 1
    for w in range(0, 1 << (log_r + log_j), 32):
        yield [slot(q >> log_j, q & j_mask, log_j) for q in range(w, w + 32)]  # block_load
        for log_a in range(0, log_j + 1):  # block_store
            rows = [(q & ((1 << (log_a + log_r)) - 1)) >> log_a for q in range(w, w + 32)]
            cols = [((q >> (log_a + log_r)) << log_a) + (q & ((1 << log_a) - 1)) for q in range(w, w + 32)]
            yield [slot(int(f"{k:0{log_r}b}"[::-1], 2), jl, log_j) for k, jl in zip(rows, cols)]
    for w in range(0, 1 << (log_r + log_j - 1), 32):
        for log_h in range(log_r):  # block_stage's pairs (r0, r0 + h)
            for side in (0, 1):
                u = [q >> log_j for q in range(w, w + 32)]
                yield [slot(((x >> log_h) << (log_h + 1)) + (x & ((1 << log_h) - 1)) + (side << log_h), q & j_mask, log_j)
                       for x, q in zip(u, range(w, w + 32))]
    for s in range(log_r & 1, log_r - 1, 2):  # radix4_group's rows r0 + k h2
        log_h2 = log_r - s - 2
        for w in range(0, 1 << (log_r + log_j - 2), 32):
            for k in range(4):
                u = [q >> log_j for q in range(w, w + 32)]
                yield [slot(((x >> log_h2) << (log_h2 + 2)) + (x & ((1 << log_h2) - 1)) + (k << log_h2), q & j_mask, log_j)
                       for x, q in zip(u, range(w, w + 32))]


@pytest.mark.parametrize("log_r", range(1, domain.MAX_RADIX_LOG + 1))
def test_layout_two_way_conflicts_at_most(log_r):
    """Every warp access of a full block (J R = 2^10) costs the two-way minimum."""
    log_j = domain.BLOCK_LOG - log_r
    worst = max(wavefronts(slots) for slots in access_patterns(log_r, log_j))
    assert worst == 8, (log_r, worst)


def test_direct_store():
    assert not direct_store(8, 2, 0)  # first pass of 2^24: through block_store
    assert direct_store(8, 2, 8) and direct_store(7, 3, 8)
    assert not direct_store(2, 0, 8)  # the only group reads src
    assert not direct_store(3, 5, 3)  # Ns < J: runs shorter than block_store's


def test_even_plans():
    assert [p.log_r for p in domain.plan(24, even=True)] == [8, 8, 8]
    assert [p.log_r for p in domain.plan(22, even=True)] == [8, 8, 6]
    assert [p.log_r for p in domain.plan(20, even=True)] == [8, 6, 6]
    assert [p.log_r for p in domain.plan(26, even=True)] == [8, 6, 6, 6]
    assert [p.log_r for p in domain.plan(25, even=True)] == [7, 6, 6, 6]
    for log_n in range(1, domain.MAX_LOG_N + 1):
        for max_radix_log in range(1, domain.MAX_RADIX_LOG + 1):
            radices = [p.log_r for p in domain.plan(log_n, max_radix_log, even=True)]
            assert sum(radices) == log_n and max(radices) <= max_radix_log
            assert len(radices) == len(domain.plan(log_n, max_radix_log))
            if max_radix_log % 2 == 0:
                assert sum(r % 2 for r in radices) == log_n % 2, (log_n, max_radix_log, radices)


@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize("case", SCHEDULE_CASES, ids=lambda c: f"log{c[0]}max{c[1]}")
def test_every_direction(backend, variant, case):
    log_n, max_radix_log = case
    host = random_limbs((8, 1 << log_n), seed=31 * log_n + max_radix_log)
    kinds = ("ntt", "intt", "coset_ntt", "coset_intt") if log_n <= 8 or not SIMULATOR else ("ntt", "coset_intt")
    for kind in kinds:
        got = run(backend, kind, host, variant, max_radix_log)
        assert np.array_equal(got, reference(kind, host, COSET_G)), (kind, log_n, max_radix_log)


@pytest.mark.parametrize("variant", ["radix2", "radix4"])
def test_in_place_multi_pass(backend, variant):
    """The last pass reads and writes the same elements (radix-4: in its direct group)."""
    for log_n, max_radix_log in ((6, 3), (9, 8)) if SIMULATOR else ((6, 3), (9, 8), (11, 8), (13, 8)):
        host = random_limbs((2, 8, 1 << log_n), seed=log_n)
        arr = put(backend, host)
        transform.transform(arr, inverse=False, g=COSET_G, variant=variant, max_radix_log=max_radix_log)
        transform.transform(arr, inverse=True, g=COSET_G, variant=variant, max_radix_log=max_radix_log)
        assert np.array_equal(get(backend, arr), host), log_n
        shift_to_coset(arr, COSET_G, variant=variant)
        assert np.array_equal(get(backend, arr)[1], reference("shift", host[1], COSET_G)), log_n


@pytest.mark.gpu
@pytest.mark.skipif(SIMULATOR, reason="2^14-2^20: the GPU only (2^10 runs in test_every_direction)")
def test_fixed_radices():
    """The passes specialized to one radix (radix4's ``fixed`` kernels) at sizes where each
    runs with and without its direct store: 2^16 [8, 8], 2^18 [6, 6, 6], 2^14 [8, 6],
    2^20 [8, 6, 6] (and 2^10's [6, 4]), against the CPU backend (radix4_pass_block)."""
    fixed = dict(PASS_KERNELS["radix4"].fixed)
    for log_n in (10, 14, 16, 18, 20):
        passes = domain.plan(log_n, even=True)
        assert all(p.log_r in fixed and p.log_j == domain.BLOCK_LOG - p.log_r for p in passes), log_n
        host = random_limbs((8, 1 << log_n), seed=log_n)
        for kind in ("ntt", "coset_intt"):
            assert np.array_equal(run("gpu", kind, host, "radix4"), run("cpu", kind, host, "radix4")), (kind, log_n)


@pytest.mark.parametrize("variant", VARIANTS)
def test_shift_to_coset(backend, variant):
    for log_n in (1, 4, 6, 9):
        host = random_limbs((8, 1 << log_n), seed=700 + log_n)
        g = FR.root_of_unity(log_n + 1)  # the prover's: the odd points of the 2n-point domain
        assert np.array_equal(run(backend, "shift", host, variant, g=g), reference("shift", host, g)), log_n


def edge_limbs(log_n: int, pattern: int) -> np.ndarray:
    """0, 1, p - 1 and mixtures: all zero, all one, all p - 1, alternating 1 / p - 1, a
    single p - 1 at the last index (its images reach every output)."""
    n = 1 << log_n
    values = [[0] * n, [1] * n, [P - 1] * n, [1 if i % 2 else P - 1 for i in range(n)],
              [0] * (n - 1) + [P - 1]][pattern]
    return to_mont(values)


@pytest.mark.parametrize("variant", ["radix2", "radix4"])
@pytest.mark.parametrize("pattern", range(5))
def test_edge_values(backend, variant, pattern):
    for log_n in (3, 6):
        host = edge_limbs(log_n, pattern)
        for kind in ("ntt", "coset_intt", "shift"):
            assert np.array_equal(run(backend, kind, host, variant), reference(kind, host, COSET_G)), (kind, log_n)


@settings(max_examples=EXAMPLES, deadline=None)
@given(log_n=st.integers(1, 7 if SIMULATOR else 12), max_radix_log=st.integers(1, 8),
       variant=st.sampled_from(VARIANTS), kind=st.sampled_from(["ntt", "intt", "coset_ntt", "coset_intt", "shift"]),
       g=st.integers(1, P - 1), seed=st.integers(0, 2**32))
def test_matches_reference(backend, log_n, max_radix_log, variant, kind, g, seed):
    host = to_mont(random_ints(1 << log_n, seed))
    radix = domain.MAX_RADIX_LOG if kind == "shift" else max_radix_log
    assert np.array_equal(run(backend, kind, host, variant, radix, g), reference(kind, host, g))


def test_bad_variant_and_shift():
    arr = np.zeros((8, 16), dtype=np.uint32)
    with pytest.raises(ValueError, match="unknown NTT pass kernel 'radix3'"):
        transform.transform(arr, inverse=False, variant="radix3")
    with pytest.raises(ValueError, match="nonzero"):
        shift_to_coset(arr, P)
    with pytest.raises(ValueError, match="plain inverse"):
        transform.transform(arr, inverse=False, shift=5)
    with pytest.raises(ValueError, match="plain inverse"):
        transform.transform(arr, inverse=True, g=7, shift=5)
