"""The fast transforms on both backends against the reference and algebraic identities.

``backend`` runs each test on the CPU backend (numpy arrays) and on the GPU path (device
arrays; marked gpu: the simulator in CI at 2^1-2^6, the H200 with -m gpu at 2^1-2^24).
Sizes up to 2^12 are checked against reference.py; larger GPU sizes against the CPU
backend on the same limbs. Outputs are written into poisoned arrays, so an element a
kernel forgot to store fails the comparison.
"""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from numba import cuda

from numba_cuzk.ntt import coset_intt, coset_ntt, intt, ntt, reference as ref, transform
from tests.conftest import SIMULATOR
from tests.ntt.vectors import COSET_G, P, from_mont, poisoned, random_ints, random_limbs, to_mont

REFERENCE_MAX_LOG = 12
SIZES = {"cpu": range(1, 13), "gpu": range(1, 7) if SIMULATOR else range(1, 25)}
BACKENDS = ["cpu", pytest.param("gpu", marks=pytest.mark.gpu)]
EXAMPLES = 5 if SIMULATOR else 25


@pytest.fixture(params=BACKENDS, scope="module")
def backend(request):
    return request.param


def sizes(backend):
    return list(SIZES[backend])


def put(backend, host: np.ndarray):
    return cuda.to_device(host) if backend == "gpu" else host.copy()


def get(backend, arr) -> np.ndarray:
    return arr.copy_to_host() if backend == "gpu" else arr


def expected(kind: str, host: np.ndarray, g: int | None = None) -> np.ndarray:
    """Reference result as limbs: Python ints for small sizes, the CPU backend above."""
    if host.shape[-1] <= 1 << REFERENCE_MAX_LOG and host.ndim == 2:
        x = from_mont(host)
        f = {"ntt": ref.ntt, "intt": ref.intt, "coset_ntt": ref.coset_ntt, "coset_intt": ref.coset_intt}[kind]
        return to_mont(f(x, g) if g is not None else f(x))
    out = host.copy()
    {"ntt": ntt, "intt": intt}[kind](out) if g is None else {"coset_ntt": coset_ntt, "coset_intt": coset_intt}[kind](out, g)
    return out


def run(backend, kind: str, host: np.ndarray, g: int | None = None, **options) -> np.ndarray:
    """Out of place into a poisoned array; checks the input was kept."""
    src, out = put(backend, host), put(backend, poisoned(host.shape))
    args = (src, g) if g is not None else (src,)
    result = transform.transform(*args[:1], out, inverse=kind.endswith("intt"), g=g, **options)
    assert result is out
    assert np.array_equal(get(backend, src), host), "input modified"
    return get(backend, out)


def test_ntt_and_intt(backend):
    for log_n in sizes(backend):
        host = random_limbs((8, 1 << log_n), seed=log_n)
        forward = run(backend, "ntt", host)
        assert np.array_equal(forward, expected("ntt", host)), log_n
        assert np.array_equal(run(backend, "intt", forward), host), log_n
        assert np.array_equal(run(backend, "intt", host), expected("intt", host)), log_n


def test_coset_ntt_and_intt(backend):
    for log_n in sizes(backend):
        host = random_limbs((8, 1 << log_n), seed=50 + log_n)
        g = COSET_G if log_n % 2 else 5
        forward = run(backend, "coset_ntt", host, g)
        assert np.array_equal(forward, expected("coset_ntt", host, g)), log_n
        assert np.array_equal(run(backend, "coset_intt", forward, g), host), log_n
        assert np.array_equal(run(backend, "coset_intt", host, g), expected("coset_intt", host, g)), log_n


def test_in_place(backend):
    for log_n in sizes(backend)[:: 3 if backend == "gpu" else 1]:
        host = random_limbs((8, 1 << log_n), seed=90 + log_n)
        arr = put(backend, host)
        assert ntt(arr) is arr
        assert np.array_equal(get(backend, arr), expected("ntt", host)), log_n
        intt(arr)
        coset_ntt(arr, COSET_G)
        coset_intt(arr, COSET_G)
        assert np.array_equal(get(backend, arr), host), log_n


@pytest.mark.parametrize("max_radix_log", [1, 2, 3])
def test_many_passes(backend, max_radix_log):
    """Small radices force 2-12 passes: pre-twiddles, Ns > 1 stores; at 2^12 (not in the
    simulator) also several blocks per vector in every pass."""
    for log_n in (2, 5, 6) if backend == "gpu" and SIMULATOR else (2, 5, 6, 12):
        host = random_limbs((8, 1 << log_n), seed=7 * log_n + max_radix_log)
        out = run(backend, "ntt", host, max_radix_log=max_radix_log)
        assert np.array_equal(out, expected("ntt", host)), log_n
        back = run(backend, "coset_intt", host, COSET_G, max_radix_log=max_radix_log)
        assert np.array_equal(back, expected("coset_intt", host, COSET_G)), log_n
        arr = put(backend, host)
        transform.transform(arr, inverse=True, max_radix_log=max_radix_log)  # in place
        assert np.array_equal(get(backend, arr), expected("intt", host)), log_n


def test_batched_equals_one_by_one(backend):
    for log_n in sorted({1, 4, sizes(backend)[-1]}):
        host = random_limbs((3, 8, 1 << log_n), seed=300 + log_n)
        for kind, g in (("ntt", None), ("coset_intt", COSET_G)):
            batched = run(backend, kind, host, g)
            for b in range(3):
                single = run(backend, kind, np.ascontiguousarray(host[b]), g)
                assert np.array_equal(batched[b], single), (log_n, kind, b)


def test_workspace_argument(backend):
    log_n = sizes(backend)[-1]
    host = random_limbs((2, 8, 1 << log_n), seed=400)
    arr, work = put(backend, host), put(backend, poisoned(host.shape))
    ntt(arr, workspace=work)
    intt(arr, workspace=work)
    assert np.array_equal(get(backend, arr), host)


@settings(max_examples=EXAMPLES, deadline=None)
@given(st.integers(1, 6), st.randoms(use_true_random=False))
def test_convolution_theorem(backend, log_n, rnd):
    n = 1 << log_n
    a, b = [rnd.randrange(P) for _ in range(n)], [rnd.randrange(P) for _ in range(n)]
    both = put(backend, np.stack([to_mont(a), to_mont(b)]))
    ntt(both)
    fa, fb = get(backend, both)
    product = put(backend, to_mont([x * y % P for x, y in zip(from_mont(fa), from_mont(fb))]))
    intt(product)
    cyclic = [sum(a[i] * b[(k - i) % n] for i in range(n)) % P for k in range(n)]
    assert from_mont(get(backend, product)) == cyclic


@settings(max_examples=EXAMPLES, deadline=None)
@given(st.integers(1, 6), st.integers(1, P - 1), st.integers(0, 2**32))
def test_coset_evaluates_on_the_shifted_domain(backend, log_n, g, seed):
    from numba_cuzk.field.params import FR

    a = random_ints(1 << log_n, seed)
    arr = put(backend, to_mont(a))
    coset_ntt(arr, g)
    w = FR.root_of_unity(log_n)
    assert from_mont(get(backend, arr)) == [ref.evaluate(a, g * pow(w, k, P) % P) for k in range(1 << log_n)]


@pytest.mark.gpu
def test_stream_argument():
    host = random_limbs((2, 8, 64), seed=500)
    stream = cuda.stream()
    arr = cuda.to_device(host, stream=stream)
    coset_ntt(arr, COSET_G, stream=stream)
    coset_intt(arr, COSET_G, stream=stream)
    assert np.array_equal(arr.copy_to_host(stream=stream), host)
    stream.synchronize()


@pytest.mark.parametrize("n", [3, 6, 24, 1000])
def test_sizes_that_are_not_powers_of_two(backend, n):
    arr = put(backend, np.zeros((8, n), dtype=np.uint32))
    with pytest.raises(ValueError, match=f"got {n}"):
        ntt(arr)


def test_sizes_out_of_range():
    with pytest.raises(ValueError, match="got 1"):
        ntt(np.zeros((8, 1), dtype=np.uint32))
    huge = np.broadcast_to(np.uint32(0), (8, 1 << 29))  # no memory behind it
    with pytest.raises(ValueError, match="2\\^29"):
        ntt(huge)


def test_bad_arguments(backend):
    arr = put(backend, np.zeros((8, 16), dtype=np.uint32))
    with pytest.raises(ValueError, match="shape"):
        ntt(put(backend, np.zeros((12, 16), dtype=np.uint32)))
    with pytest.raises(ValueError, match="uint32"):
        ntt(put(backend, np.zeros((8, 16), dtype=np.uint64)))
    with pytest.raises(ValueError, match="out"):
        ntt(arr, put(backend, np.zeros((8, 32), dtype=np.uint32)))
    with pytest.raises(ValueError, match="workspace"):
        ntt(arr, workspace=arr)
    with pytest.raises(ValueError, match="nonzero"):
        coset_ntt(arr, P)
    if backend == "gpu":
        with pytest.raises(ValueError, match="mix"):
            ntt(arr, np.zeros((8, 16), dtype=np.uint32))
    else:
        with pytest.raises(ValueError, match="contiguous"):
            ntt(np.zeros((16, 8), dtype=np.uint32).T)
