"""msm_g1 / msm_g2 on both backends against the naive reference (reference.py) and
py-arkworks-bls12381, on random inputs and every edge case: zero scalars, scalars >= r,
Montgomery scalars, the identity among bases, repeated bases, all-equal scalars (one giant
bucket), mostly-0/1 scalars (the fast path), a single point, n not a power of two, n = 0,
fewer scalars than bases, window/chunk/segment/scatter/registers overrides, and a preallocated ``out``.

``backend``: "cpu" (numpy arrays: the CPU backend) and "gpu" (device arrays, marked gpu:
the simulator in CI with tens of points, the H200 with -m gpu up to 2^16 + 3).
"""

import random

import numpy as np
import pytest
from numba import cuda

from numba_cuzk.curve import layout
from numba_cuzk.curve.params import G1, G2
from numba_cuzk.msm import host_bases, msm, msm_g1, msm_g2, reference as ref, result_shape, to_point, upload_bases
from numba_cuzk.msm.plan import make_plan
from tests.conftest import SIMULATOR
from tests.msm import inputs

BACKENDS = ["cpu", pytest.param("gpu", marks=pytest.mark.gpu)]
CURVES = [G1, G2]
N = 12  # points per case in CI: enough for repeated digits, small for the simulator
ARK_LOG = 12


@pytest.fixture(params=BACKENDS, scope="module")
def backend(request):
    return request.param


@pytest.fixture(params=CURVES, ids=lambda c: c.name, scope="module")
def curve(request):
    return request.param


@pytest.fixture(scope="module")
def points(curve):
    pts = inputs.multiples(curve, N, random.Random(11))
    pts[3] = None  # the identity among the bases
    pts[5] = pts[4]  # a repeated base
    return pts


def bases_for(backend, pts, curve):
    arr = layout.points_to_limbs(pts, curve)
    return upload_bases(arr, curve) if backend == "gpu" else host_bases(arr, curve)


def run(backend, bases, values, **options):
    """MSM of int scalars (already in the form ``options`` says) -> reference point."""
    limbs = inputs.scalar_limbs(values)
    scalars = cuda.to_device(limbs) if backend == "gpu" else limbs
    return to_point(msm(bases, scalars, **options))


def expect(curve, pts, values):
    return ref.msm(inputs.reference_curve(curve), pts, values)


def test_random_with_edge_scalars(backend, curve, points):
    rng = random.Random(1)
    values = [rng.randrange(inputs.R) for _ in range(N)]
    values[0], values[1], values[2] = 0, 1, inputs.R - 1
    values[6] = inputs.R + 5  # >= r: reduced mod r
    values[7] = 2**256 - 1
    values[4] = values[5]  # repeated base with an equal scalar: a doubling in a bucket
    bases = bases_for(backend, points, curve)
    assert run(backend, bases, values) == expect(curve, points, values)


def test_montgomery_form(backend, curve, points):
    rng = random.Random(2)
    values = [rng.randrange(inputs.R) for _ in range(N)]
    values[0], values[1] = 0, 1
    bases = bases_for(backend, points, curve)
    got = run(backend, bases, inputs.to_montgomery(values), montgomery=True)
    assert got == expect(curve, points, values)


def test_all_equal_scalars(backend, curve, points):
    k = random.Random(3).randrange(inputs.R)
    values = [k] * N
    bases = bases_for(backend, points, curve)
    assert run(backend, bases, values, chunk=2) == expect(curve, points, values)


def test_mostly_zero_and_one(backend, curve, points):
    rng = random.Random(4)
    values = [rng.choice([0, 1, 1, 0, 1]) for _ in range(N)]
    values[9] = rng.randrange(inputs.R)
    bases = bases_for(backend, points, curve)
    assert run(backend, bases, values) == expect(curve, points, values)


def test_single_point_and_prefix(backend, curve, points):
    """n = 1, and fewer scalars than bases (the first n bases are used)."""
    bases = bases_for(backend, points, curve)
    k = random.Random(5).randrange(inputs.R)
    assert run(backend, bases, [k]) == expect(curve, points[:1], [k])
    values = [7, 0, 2**200 + 3, 1, 5]
    assert run(backend, bases, values) == expect(curve, points[:5], values)


def test_empty_is_identity(backend, curve, points):
    bases = bases_for(backend, points, curve)
    assert run(backend, bases, []) is None


def test_all_zero_and_cancelling(backend, curve, points):
    """Zero scalars give the identity; k P + (r - k) P cancels (P + (-P) in a bucket)."""
    bases = bases_for(backend, points, curve)
    assert run(backend, bases, [0] * N) is None
    k = random.Random(6).randrange(inputs.R)
    pair = [points[0], points[0]]
    assert run(backend, bases_for(backend, pair, curve), [k, inputs.R - k]) is None


def test_corrupt_window_sum_is_named(curve, points):
    """A window sum with ZZ != 0 and ZZZ = 0 (no XYZZ point: ZZ^3 = ZZZ^2) is refused with
    the window's index (ValueError), as a proof's epilogue refuses other bad sums; the sums
    untouched are still a point."""
    result = msm(bases_for("cpu", points, curve), inputs.scalar_limbs([3, 5, 7]))
    assert to_point(result) == expect(curve, points[:3], [3, 5, 7])
    limbs = curve.limbs
    result.sums[3 * limbs:, 2] = 0  # window 2's ZZZ
    result.sums[2 * limbs, 2] |= 1  # its ZZ nonzero whatever it was
    with pytest.raises(ValueError, match=f"{curve.name} MSM: window sum 2 is not a point"):
        to_point(result)


@pytest.mark.parametrize("window", [2, 5])
def test_window_overrides(backend, window):
    """Other window sizes (many windows, several chunks per bucket) on G1."""
    pts = inputs.multiples(G1, N, random.Random(12))
    rng = random.Random(7)
    values = [rng.randrange(inputs.R) for _ in range(N)]
    values[3] = values[8]
    bases = bases_for(backend, pts, G1)
    assert run(backend, bases, values, window=window, chunk=1) == expect(G1, pts, values)


@pytest.mark.gpu
@pytest.mark.parametrize("chunk", [3, 4, 8])
def test_runs_across_buckets(chunk):
    """The accumulation's runs of ``chunk`` consecutive entries cut across buckets: several
    small buckets in one run, empty buckets between them, a bucket ending on a run's
    boundary, a large one (repeated scalars) over several runs."""
    pts = inputs.multiples(G1, N, random.Random(13))
    rng = random.Random(chunk)
    values = [rng.randrange(inputs.R) for _ in range(N)]
    values[2:2 + N // 2] = [values[2]] * (N // 2)
    bases = bases_for("gpu", pts, G1)
    assert run("gpu", bases, values, window=5, chunk=chunk) == expect(G1, pts, values)


@pytest.mark.gpu
def test_segment_override():
    """Two reduce threads per window (segment = 16 of window 6's 32 buckets): the GPU's
    default path, which the simulator's one segment per window skips; plus validation."""
    pts = inputs.multiples(G1, N, random.Random(14))
    rng = random.Random(8)
    values = [rng.randrange(inputs.R) for _ in range(N)]
    bases = bases_for("gpu", pts, G1)
    assert run("gpu", bases, values, window=6, segment=16) == expect(G1, pts, values)
    with pytest.raises(ValueError):
        make_plan(16, segment=3)


def test_small_msms_get_short_segments(monkeypatch):
    """A plan without a segment of its own: 4 buckets per reduce thread up to SMALL_MSM
    scalars, SEGMENT_BUCKETS above (the GPU's values, set here: the simulator runs one
    segment per window); a plan's own segment wins."""
    from numba_cuzk.msm import kernels
    from numba_cuzk.msm.pippenger import PointSlots
    from numba_cuzk.msm.plan import SMALL_MSM

    monkeypatch.setattr(kernels, "SMALL_SEGMENT_BUCKETS", 4)
    monkeypatch.setattr(kernels, "SEGMENT_BUCKETS", 32)
    small, large = make_plan(SMALL_MSM), make_plan(SMALL_MSM + 1)
    assert PointSlots.of(small).segments == small.buckets // 4
    assert PointSlots.of(large).segments == large.buckets // 32
    assert PointSlots.of(make_plan(SMALL_MSM, segment=16)).segments == small.buckets // 16


def test_small_g2_plans_take_narrower_windows_on_the_gpu():
    """Up to SMALL_MSM scalars a GPU G2 plan's window is capped (plan.py, Small G2); the CPU
    backend's, G1's and larger G2 ones keep the cost model's; a proof's G2 MSM gets the same
    plan from the memory plan as from result_shape."""
    from numba_cuzk.groth16.memory import plan_memory
    from numba_cuzk.groth16.shape import KeyShape
    from numba_cuzk.msm.plan import SMALL_G2_BITS, SMALL_MSM, best_window

    for n in (1 << 14, 1 << 15, SMALL_MSM):
        assert make_plan(n, degree=2).c == SMALL_G2_BITS < make_plan(n).c == best_window(n)
        assert make_plan(n, degree=2, gpu=False).c == best_window(n)
    assert make_plan(SMALL_MSM + 1, degree=2).c == make_plan(SMALL_MSM + 1).c > SMALL_G2_BITS
    assert make_plan(1 << 10, degree=2).c == make_plan(1 << 10).c < SMALL_G2_BITS
    n = 1 << 15
    assert result_shape(n, G2) == (4 * G2.limbs, make_plan(n, degree=2).windows)
    memory = plan_memory(KeyShape(n_vars=n, n_public=1, domain_size=n, coefficients=2 * n), None)
    assert memory.msm_plans["G2"] == make_plan(n, degree=2) and memory.msm_plans["G1"] == make_plan(n)


@pytest.mark.parametrize("gpu", [pytest.param(False, id="cpu"), pytest.param(True, id="gpu", marks=[
    pytest.mark.gpu, pytest.mark.skipif(SIMULATOR, reason="2^14 G2 scalars: on a GPU only (-m gpu)")])])
def test_small_g2_plan_on_repeated_points(gpu):
    """A small G2 MSM end to end, its plan each backend's (2^14 scalars: c = 10 on the GPU,
    the model's 11 on the CPU): every base the generator, so the MSM is (sum s_i) G."""
    from numba_cuzk.curve.reference import Curve
    from numba_cuzk.field.codec import from_limbs
    from numba_cuzk.field.params import FR

    n = 1 << 14
    scalars = inputs.random_scalar_limbs(n, np.random.default_rng(14))
    bases = np.repeat(layout.points_to_limbs([G2.generator], G2), n, axis=1)
    result = msm(upload_bases(bases, G2), cuda.to_device(scalars)) if gpu else msm(host_bases(bases, G2), scalars)
    assert result.c == make_plan(n, degree=2, gpu=gpu).c == (10 if gpu else 11)
    assert to_point(result) == Curve(G2).mul(G2.generator, sum(from_limbs(scalars, FR)) % FR.modulus)


def test_registers_override():
    """A register cap on the accumulation (its own kernel instance; the simulator compiles
    it without the cap) gives the plain result; caps outside [64, 255] are refused."""
    pts = inputs.multiples(G1, N, random.Random(16))
    rng = random.Random(12)
    values = [rng.randrange(inputs.R) for _ in range(N)]
    bases = bases_for("gpu", pts, G1)
    assert run("gpu", bases, values, window=5, registers=128) == expect(G1, pts, values)
    assert make_plan(16, registers=128).registers == 128 and make_plan(16).registers is None
    for bad in (32, 256):
        with pytest.raises(ValueError, match="registers"):
            make_plan(16, registers=bad)


def test_scatter_override():
    """Scatter launched per window and per 3 windows (with a last, shorter group) gives the
    one-launch result; 0 windows per launch is refused."""
    pts = inputs.multiples(G1, N, random.Random(15))
    rng = random.Random(10)
    values = [rng.randrange(inputs.R) for _ in range(N)]
    bases = bases_for("gpu", pts, G1)
    for scatter in (1, 3):
        assert run("gpu", bases, values, window=5, scatter=scatter) == expect(G1, pts, values)
    assert make_plan(16, window=5, scatter=3).scatter_windows == 3 and make_plan(16, window=5).scatter_windows == 52
    with pytest.raises(ValueError):
        make_plan(16, scatter=0)


def test_preallocated_out(backend, curve, points):
    """``out`` of ``result_shape`` is the result's sums (reused across calls); a wrong shape
    or side is refused."""
    rng = random.Random(9)
    values = [rng.randrange(inputs.R) for _ in range(N)]
    bases = bases_for(backend, points, curve)
    limbs = inputs.scalar_limbs(values)
    scalars = cuda.to_device(limbs) if backend == "gpu" else limbs
    shape = result_shape(N, curve, window=5)
    out = cuda.device_array(shape, dtype=np.uint32) if backend == "gpu" else np.empty(shape, dtype=np.uint32)
    for _ in range(2):
        result = msm(bases, scalars, window=5, out=out)
        assert result.sums is out and result.c == 5 and result.curve is curve
        assert to_point(result.copy_to_host()) == expect(curve, points, values)
    with pytest.raises(ValueError):
        msm(bases, scalars, out=out)  # the default plan has other windows than c = 5
    with pytest.raises(ValueError):
        msm(bases, scalars, window=5, out=np.empty(shape, dtype=np.uint32) if backend == "gpu" else
            cuda.to_device(np.empty(shape, dtype=np.uint32)))


def test_bare_arrays_and_validation():
    pts = inputs.multiples(G1, 4, random.Random(13))
    arr = layout.points_to_limbs(pts, G1)
    values = [3, 1, 4, 1]
    assert to_point(msm_g1(arr, inputs.scalar_limbs(values))) == expect(G1, pts, values)
    with pytest.raises(ValueError):
        msm_g2(arr, inputs.scalar_limbs(values))  # G1 limbs read as G2 bases
    with pytest.raises(ValueError):
        msm_g1(arr, inputs.scalar_limbs(values + [1]))  # more scalars than bases
    with pytest.raises(ValueError):
        msm_g1(arr, inputs.scalar_limbs(values).astype(np.uint64))
    with pytest.raises(ValueError):
        make_plan(16, window=30)


def ark_case(curve, log_n: int, seed: int):
    n = (1 << log_n) + 3  # not a power of two
    pts = inputs.ark_multiples(curve, n, seed)
    scalars = inputs.random_scalar_limbs(n, np.random.default_rng(seed))
    scalars[:, :3] = 0
    scalars[0, 1] = 1
    return pts, inputs.ark_points_to_limbs(pts, curve), scalars


def test_cpu_against_arkworks():
    """The CPU backend at 2^12 + 3 against py-arkworks-bls12381 (G1)."""
    pts, arr, scalars = ark_case(G1, ARK_LOG, 21)
    got = to_point(msm_g1(host_bases(arr, G1), scalars))
    assert got == inputs.ark_to_reference(inputs.ark_msm(pts, scalars, G1), G1)


@pytest.mark.gpu
@pytest.mark.skipif(SIMULATOR, reason="2^12 points is too many for the simulator")
@pytest.mark.parametrize("log_n", [12, 16])
def test_gpu_against_arkworks(curve, log_n):
    pts, arr, scalars = ark_case(curve, log_n, 22 + log_n)
    bases = upload_bases(arr, curve)
    want = inputs.ark_to_reference(inputs.ark_msm(pts, scalars, curve), curve)
    assert to_point(msm(bases, scalars)) == want  # scalars uploaded from the host
    assert to_point(msm(bases, cuda.to_device(scalars))) == want
    mont = inputs.scalar_limbs(inputs.to_montgomery(inputs.limbs_to_ints(scalars)))
    assert to_point(msm(bases, cuda.to_device(mont), montgomery=True)) == want
    bits = inputs.bits_scalar_limbs(scalars.shape[1], np.random.default_rng(log_n))
    want_bits = inputs.ark_to_reference(inputs.ark_msm(pts, bits, curve), curve)
    assert to_point(msm(bases, cuda.to_device(bits))) == want_bits


@pytest.mark.gpu
def test_reduce_segments(monkeypatch):
    """Several bucket segments per window (the GPU runs B / 4 or B / 32; the simulator 1 by
    default): each segment adds lo * (its bucket sum); and with sums of 2 points per level,
    several levels of per-window sums (window 0: the 0/1 sum and 4 segments; the others 4)."""
    from numba_cuzk.msm import clear_cache, kernels

    monkeypatch.setattr(kernels, "SMALL_SEGMENT_BUCKETS", 4)  # window 5: 16 buckets, 4 segments
    monkeypatch.setattr(kernels, "SUM_PER", 2)  # levels (5, 4) -> (3, 2) -> (2, 1) points
    clear_cache()  # workspaces are sized by the segments and SUM_PER
    try:
        pts = inputs.multiples(G1, N, random.Random(14))
        rng = random.Random(8)
        values = [rng.randrange(inputs.R) for _ in range(N)]
        values[2] = 1  # a 0/1 sum in window 0's first level
        bases = bases_for("gpu", pts, G1)
        assert run("gpu", bases, values, window=5) == expect(G1, pts, values)
    finally:
        clear_cache()
