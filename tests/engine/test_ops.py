"""Operation counts per kernel phase (ops.py) follow their documented formulas."""

import numpy as np

from numba_cuzk.curve.params import G1, G2
from numba_cuzk.engine import ops
from numba_cuzk.field.codec import to_limbs
from numba_cuzk.field.params import FR
from numba_cuzk.msm.plan import make_plan


def test_msm_counts():
    n = 1000
    plan = make_plan(n)
    reduction = ops.FULL_ADD_FQ * 2 * plan.windows * plan.buckets
    assert ops.msm_fq_muls(G1, n, 0, 0) == ops.MIXED_ADD_FQ * plan.windows * n + reduction
    assert ops.msm_fq_muls(G1, n, 0, n) == reduction  # zeros cost nothing
    assert ops.msm_fq_muls(G1, n, n, 0) == ops.MIXED_ADD_FQ * n + reduction  # a 1 is one addition
    assert ops.msm_fq_muls(G2, n, 10, 20) == 3 * ops.msm_fq_muls(G1, n, 10, 20)
    assert ops.msm_fq_muls(G1, 0, 0, 0) == 0


def test_transform_and_matvec_counts():
    assert ops.ntt_fr_muls(8) == 6 * (4 * 3 + 8) + 8
    assert ops.matvec_fr_muls(nnz=7, n=8) == 15


def test_scalar_classes():
    w = to_limbs([1, 0, 1, 2, FR.modulus - 1, 1 << 32, 0], FR)
    ones, zeros = ops.scalar_classes(w)
    assert ones.tolist() == [True, False, True, False, False, False, False]
    assert zeros.tolist() == [False, True, False, False, False, False, True]


def test_scalar_counts_split_public_and_private():
    w = to_limbs([1, 1, 0, 1, 2, 0, 0], FR)
    assert ops.scalar_counts(w, private_from=2) == ops.ScalarCounts(ones=3, zeros=3, private_ones=1,
                                                                    private_zeros=3)


def test_proof_ops_cover_the_kernel_phases(key):
    w = to_limbs([1] + [0] * (key.n_vars - 1), FR)
    counts = ops.proof_ops(key, ops.scalar_counts(np.ascontiguousarray(w), key.n_public + 1))
    assert set(counts) == {"matvec", "ntt", "msm_a", "msm_b1", "msm_b2", "msm_c", "msm_h"}
    # only wire 0 (public) is nonzero: the private MSM has just its reduction to do
    assert counts["msm_c"]["fq_muls"] == ops.msm_fq_muls(G1, key.n_vars - key.n_public - 1, 0,
                                                         key.n_vars - key.n_public - 1)
    assert counts["msm_a"]["fq_muls"] == ops.msm_fq_muls(G1, key.n_vars, 1, key.n_vars - 1)


def test_split_and_uncounted_witness_msms_get_no_counts(key):
    counts = ops.scalar_counts(np.ascontiguousarray(to_limbs([1] * key.n_vars, FR)), key.n_public + 1)
    split = ops.proof_ops(key, counts, bits=("a", "b1", "c"))
    assert set(split) == {"matvec", "ntt", "msm_b2", "msm_h"}  # B2 streamed: the plain MSM, counted
    assert split["msm_b2"] == ops.proof_ops(key, counts)["msm_b2"]
    assert set(ops.proof_ops(key, None)) == {"matvec", "ntt", "msm_h"}
