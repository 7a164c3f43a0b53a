"""Every MSM plan the 2^24-2^27 proofs use, on the device, against a closed form.

Bases B_i = (i + 1) G (fixed_base_mul: no MSM code involved) make sum s_i B_i equal to
(sum s_i (i + 1) mod r) G, which numpy computes exactly in a few seconds at 2^27 (the
products split in 14-bit halves of i + 1, summed in uint64 over blocks that cannot
overflow). Checked: the plain MSM at 2^24-2^27 (H's plans, c = 20-22, random scalars),
G2 at 2^24 (the streamed B2 chunks' plan), and the bit/tail split at 2^27 (bit_heavy's
share of 1s, a tail of 2^16: the tail plan c = 13), and bench.msm's plan variants at
2^20 (window, scatter, register cap). On a GPU only (-m gpu): one H200
holds 2^27 G1 bases (12.9 GB) and fixed_base_mul's scratch (25.8 GB).
"""

import numpy as np
import pytest
from numba import cuda

from numba_cuzk.curve.fixed_base import fixed_base_mul, fixed_base_table
from numba_cuzk.curve.params import G1, G2
from numba_cuzk.curve.reference import Curve
from numba_cuzk.field.params import FR
from numba_cuzk.msm import Workspace, msm, to_point, upload_bases
from numba_cuzk.msm.bits import BitSplit
from numba_cuzk.msm.plan import make_plan
from tests.conftest import SIMULATOR
from tests.msm import inputs

# one worker holds the 2^27 bases (12.9 GB, 38.7 GB while fixed_base_mul builds them) and
# the MSM workspaces of 2^24-2^27 (38 GB, cached per plan): under pytest-xdist, once per worker
# would not fit the device, so the module is one group (--dist loadgroup, bench/gpu_check.sh)
pytestmark = [pytest.mark.gpu, pytest.mark.skipif(SIMULATOR, reason="2^24-2^27 points: on a GPU only (-m gpu)"),
              pytest.mark.xdist_group("closed_form")]
R = FR.modulus
BLOCK = 16  # a product is < 2^32 x 2^27 = 2^59: sums of 16 fit uint64


def weighted_sum(scalars: np.ndarray) -> int:
    """sum_i s_i (i + 1) mod r, exactly, for (8, n) uint32 limbs, n <= 2^27 a multiple of
    BLOCK: per limb, products summed in blocks of 16, whose 32-bit halves then sum
    without overflow (2^32 x 2^23 blocks)."""
    n = scalars.shape[1]
    k = np.arange(1, n + 1, dtype=np.uint64)
    total = 0
    for j in range(FR.limbs):
        blocks = (scalars[j].astype(np.uint64) * k).reshape(-1, BLOCK).sum(axis=1)
        low = int((blocks & np.uint64(0xFFFFFFFF)).sum())
        high = int((blocks >> np.uint64(32)).sum())
        total += (low + (high << 32)) << (32 * j)
    return total % R


def multiples_of_g(curve, n: int):
    """Bases (i + 1) G for i < n, on the device (point-major)."""
    k = np.zeros((FR.limbs, n), dtype=np.uint32)
    k[0] = np.arange(1, n + 1, dtype=np.uint32)
    points = cuda.device_array((2 * curve.limbs, n), dtype=np.uint32)
    fixed_base_mul(points, cuda.to_device(k), fixed_base_table(curve.generator, curve, to_device=True), curve)
    cuda.synchronize()
    return upload_bases(points, curve)


@pytest.fixture(scope="module")
def g1_bases():
    return multiples_of_g(G1, 1 << 27)


@pytest.mark.parametrize("log_n", [24, 25, 26, 27])
def test_plain_msm_plans_against_closed_form(g1_bases, log_n):
    n = 1 << log_n
    scalars = inputs.random_scalar_limbs(n, np.random.default_rng(log_n))
    bases = type(g1_bases)(G1, g1_bases.points[:, :n])
    got = to_point(msm(bases, cuda.to_device(scalars)))
    assert got == Curve(G1).mul(G1.generator, weighted_sum(scalars)), f"plan {make_plan(n)}"


def test_g2_chunk_plan_against_closed_form():
    n = 1 << 24
    scalars = inputs.random_scalar_limbs(n, np.random.default_rng(2))
    got = to_point(msm(multiples_of_g(G2, n), cuda.to_device(scalars)))
    assert got == Curve(G2).mul(G2.generator, weighted_sum(scalars)), f"plan {make_plan(n)}"


def test_bit_tail_split_at_2_27_against_closed_form(g1_bases):
    n = 1 << 27
    rng = np.random.default_rng(27)
    scalars = np.zeros((FR.limbs, n), dtype=np.uint32)
    scalars[0] = rng.random(n) < 0.44
    others = rng.choice(n, 1 << 15, replace=False)
    scalars[:, others] = inputs.random_scalar_limbs(len(others), rng)
    tail = 1 << 16
    split = BitSplit(n, tail)
    split.split(cuda.to_device(scalars), 0)
    plan = make_plan(tail)
    out = cuda.device_array((2, 4 * G1.limbs, plan.windows), dtype=np.uint32)
    got = to_point(split.msm(g1_bases, out, Workspace(G1, plan, host_scalars=False), 0))
    assert got == Curve(G1).mul(G1.generator, weighted_sum(scalars))


@pytest.fixture(scope="module")
def g1_bases_2_20():
    return multiples_of_g(G1, 1 << 20)


@pytest.mark.parametrize("overrides", [{"registers": 128}, {"registers": 96}, {"window": 18, "scatter": 1},
                                       {"window": 14, "scatter": 2, "registers": 128}], ids=str)
def test_plan_variants_at_2_20_against_closed_form(g1_bases_2_20, overrides):
    """bench.msm --plans-only's variants (plan.registers' capped accumulation among them:
    its spills run only on the device) at 2^20."""
    n = 1 << 20
    scalars = inputs.random_scalar_limbs(n, np.random.default_rng(20))
    got = to_point(msm(g1_bases_2_20, cuda.to_device(scalars), **overrides))
    assert got == Curve(G1).mul(G1.generator, weighted_sum(scalars)), f"plan {make_plan(n, **overrides)}"
