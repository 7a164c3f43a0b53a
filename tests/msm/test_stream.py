"""The streamed MSM (msm/stream.py) against the resident one and the reference, and an MSM
on a shared workspace of more scalars than it is given (the prover's one workspace per
curve). Simulator in CI (tens of points, chunks of 5: three parts, the last one short);
on the H200 with -m gpu at 2^20 G2 points and chunks of 2^18 (the "small forced budget"
of a prover that streams B2).
"""

import random

import numpy as np
import pytest
from numba import cuda

from numba_cuzk.curve import layout
from numba_cuzk.curve.params import G1, G2
from numba_cuzk.curve.point_major import is_point_major
from numba_cuzk.msm import Workspace, msm, reference as ref, to_point, upload_bases
from numba_cuzk.msm.plan import make_plan
from numba_cuzk.msm.stream import StreamedBases
from tests.conftest import SIMULATOR
from tests.msm import inputs

pytestmark = pytest.mark.gpu
N, CHUNK = 12, 5


def _values(n: int, seed: int) -> list[int]:
    rng = random.Random(seed)
    values = [rng.choice([0, 1, rng.randrange(inputs.R)]) for _ in range(n)]
    values[0], values[n - 1] = inputs.R - 1, 1
    return values


def _streamed(pts, curve, values, chunk, passes: int = 2):
    """to_point of the streamed MSM, run ``passes`` times on the same buffers (the second
    pass reuses the events and buffers, as a prover's next proof does)."""
    streamed = StreamedBases(layout.points_to_limbs(pts, curve), curve, chunk)
    workspace = Workspace(curve, make_plan(chunk), host_scalars=False)
    scalars = cuda.to_device(inputs.scalar_limbs(values))
    out = cuda.device_array(streamed.result_shape(workspace.plan.windows), dtype=np.uint32)
    stream, copy = cuda.stream(), cuda.stream()
    results = []
    for k in range(passes):
        if k:
            streamed.prefetch(copy)
        results.append(to_point(streamed.msm(scalars, workspace, out, stream, copy)))
    return results


@pytest.mark.parametrize("curve", [G1, G2], ids=lambda c: c.name)
def test_streamed_equals_resident(curve):
    pts = inputs.multiples(curve, N, random.Random(31))
    pts[6] = None  # the identity in the second chunk
    values = _values(N, 32)
    want = ref.msm(inputs.reference_curve(curve), pts, values)
    resident = to_point(msm(upload_bases(layout.points_to_limbs(pts, curve), curve), cuda.to_device(
        inputs.scalar_limbs(values))))
    assert resident == want
    assert _streamed(pts, curve, values, CHUNK) == [want, want]


def test_one_chunk_and_chunk_larger_than_bases():
    pts = inputs.multiples(G1, 4, random.Random(33))
    values = [3, 0, 1, inputs.R - 2]
    want = ref.msm(inputs.reference_curve(G1), pts, values)
    assert _streamed(pts, G1, values, 4, passes=1) == [want]
    assert _streamed(pts, G1, values, 8, passes=1) == [want]


def test_shared_workspace_serves_fewer_scalars():
    """One workspace (plan for N scalars) for MSMs of N, then 3, then N - 1 scalars: the
    shorter ones must not see the previous call's kinds (0/1 bytes) past their end."""
    pts = inputs.multiples(G1, N, random.Random(34))
    bases = upload_bases(layout.points_to_limbs(pts, G1), G1)
    workspace = Workspace(G1, make_plan(N), host_scalars=False)
    for n in (N, 3, N - 1):
        values = [1] * n  # all on the 0/1 path: stale kinds would add bases n..N-1
        got = to_point(msm(bases, cuda.to_device(inputs.scalar_limbs(values)), workspace=workspace))
        assert got == ref.msm(inputs.reference_curve(G1), pts[:n], values)


def test_refusals():
    pts = inputs.multiples(G1, 4, random.Random(35))
    limbs = layout.points_to_limbs(pts, G1)
    small = Workspace(G1, make_plan(2), host_scalars=False)
    with pytest.raises(ValueError, match="cannot serve 4 G1 scalars"):
        msm(upload_bases(limbs, G1), cuda.to_device(inputs.scalar_limbs([1, 2, 3, 4])), workspace=small)
    for override in ({"window": 3}, {"registers": 128}, {"affine": 10}):
        with pytest.raises(ValueError, match="window, chunk, segment, scatter, registers and affine"):
            msm(upload_bases(limbs, G1), cuda.to_device(inputs.scalar_limbs([1])), workspace=small, **override)
    with pytest.raises(ValueError, match="host scalars need a workspace"):
        msm(upload_bases(limbs, G1), inputs.scalar_limbs([1]), workspace=small)
    with pytest.raises(ValueError, match="must be a host array"):
        StreamedBases(cuda.to_device(limbs), G1, 2)
    streamed = StreamedBases(limbs, G1, 2)
    with pytest.raises(ValueError, match="3 scalars for 4 streamed bases"):
        streamed.msm(cuda.to_device(inputs.scalar_limbs([1, 2, 3])), small, None, 0, 0)


@pytest.mark.skipif(SIMULATOR, reason="2^20 G2 points: the H200 only")
def test_streamed_g2_log20_on_device():
    """2^20 G2 bases in 4 chunks of 2^18 through a 2^18 workspace, against the resident
    MSM of the same bases (whose correctness test_msm checks against arkworks), twice.
    The bases repeat with period 1025, which divides no chunk boundary: a chunk computed
    on another chunk's bases changes the sum."""
    n, chunk = 1 << 20, 1 << 18
    rng = np.random.default_rng(36)
    period = inputs.ark_points_to_limbs(inputs.ark_multiples(G2, 1025, 37), G2)
    points = np.ascontiguousarray(np.take(period, np.arange(n) % 1025, axis=1))
    scalars = cuda.to_device(inputs.bits_scalar_limbs(n, rng))
    resident = to_point(msm(upload_bases(points, G2), scalars))
    streamed = StreamedBases(points, G2, chunk)
    workspace = Workspace(G2, make_plan(chunk), host_scalars=False)
    out = cuda.device_array(streamed.result_shape(workspace.plan.windows), dtype=np.uint32)
    stream, copy = cuda.stream(), cuda.stream()
    for _ in range(2):
        streamed.prefetch(copy)
        assert to_point(streamed.msm(scalars, workspace, out, stream, copy)) == resident


def test_streamed_bases_are_point_major():
    """A point-major host array streams as is (pinned in place); a C-ordered one through a
    point-major copy; each chunk is then one contiguous copy."""
    limbs = layout.points_to_limbs(inputs.multiples(G1, 6, random.Random(36)), G1)
    major = np.asfortranarray(limbs)
    assert StreamedBases(major, G1, 4).points is major
    copied = StreamedBases(limbs, G1, 4).points
    assert copied.flags.f_contiguous and np.array_equal(copied, limbs)
    assert is_point_major(upload_bases(limbs, G1).points)
