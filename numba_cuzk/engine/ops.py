"""Field products per kernel phase of one proof (the timeline's ``fr_muls``/``fq_muls``),
the numerator of kernel efficiency. Nominal counts from the algorithms, not profiles:

- matvec: n_vars (the witness to Montgomery form) + nnz(A) + nnz(B) (one product per
  coefficient) + n (c = a o b) Fr products.
- ntt: 6 transforms of n points (3 inverse, 3 coset) at (n/2) log2 n butterfly products
  each, + n per transform for the 1/n or g^i scaling, + n for d = ab - c.
- msm_*: Pippenger as msm/plan.py plans it: every scalar other than 0 and 1 adds one base
  per window (``windows`` mixed additions), a 1 adds its base once (the 0/1 fast path),
  a 0 nothing; each window's running sums cost 2 full additions per bucket. An XYZZ mixed
  addition is 8M + 2S = 10 Fq products, a full one 12M + 2S = 14 (EFD); over G2 each
  Fq2 product counts as 3 Fq products. Doublings are left out (the segments' offset
  multiples; the windows' weights 2^(c w), ~256 doublings, are on the host: msm.to_point).

Bit-heavy witnesses are mostly 0s and 1s: counting scalars by class keeps their MSMs
from being credited with work the fast path never does. The classes are counted where
the witness is made (engine/synthesis.py: in the synthesis worker), once per partition.

Witness MSMs on the bit/tail split (msm/bits.py) get no count: their work is the 1s on
dense bases (the key's density maps, on the device) plus a tail, and a count from the
witness alone would credit the 1s on identity bases too. Their phases then have no
efficiency figure.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from numba_cuzk.curve.params import G1, G2, CurveParams
from numba_cuzk.groth16.keys import ProvingKey
from numba_cuzk.msm.plan import make_plan

MIXED_ADD_FQ = 10  # XYZZ mixed addition, 8M + 2S
FULL_ADD_FQ = 14  # XYZZ addition, 12M + 2S
FQ2_AS_FQ = 3  # Karatsuba: an Fq2 product is 3 Fq products
NTT_TRANSFORMS = 6


def matvec_fr_muls(nnz: int, n: int) -> int:
    return nnz + n  # a term per coefficient, c = a o b (the witness is not converted)


def ntt_fr_muls(n: int) -> int:
    log_n = n.bit_length() - 1
    return NTT_TRANSFORMS * ((n // 2) * log_n + n) + n


def msm_fq_muls(curve: CurveParams, n: int, ones: int, zeros: int, gpu: bool = True) -> int:
    """An MSM of ``n`` scalars of which ``ones`` are 1 and ``zeros`` are 0 (on the GPU, or
    the CPU backend's plan)."""
    if n == 0:
        return 0
    plan = make_plan(n, degree=curve.degree, gpu=gpu)
    mixed = plan.windows * (n - ones - zeros) + ones
    fq = MIXED_ADD_FQ * mixed + FULL_ADD_FQ * 2 * plan.windows * plan.buckets
    return fq * (FQ2_AS_FQ if curve.degree == 2 else 1)


def scalar_classes(witness: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Boolean masks (n_vars,) of the wires equal to 1 and to 0 ((8, n_vars) canonical)."""
    high_zero = ~witness[1:].any(axis=0)
    return high_zero & (witness[0] == 1), high_zero & (witness[0] == 0)


@dataclass(frozen=True)
class ScalarCounts:
    """A witness's 1s and 0s over all its wires, and over its private wires (from wire
    n_public + 1 on: C's scalars)."""

    ones: int
    zeros: int
    private_ones: int
    private_zeros: int


def scalar_counts(witness: np.ndarray, private_from: int) -> ScalarCounts:
    """The ScalarCounts of ``witness`` ((8, n_vars) canonical), private wires from ``private_from``."""
    ones, zeros = scalar_classes(witness)
    return ScalarCounts(int(ones.sum()), int(zeros.sum()), int(ones[private_from:].sum()),
                        int(zeros[private_from:].sum()))


def proof_ops(pk: ProvingKey, counts: ScalarCounts | None, bits: tuple[str, ...] = (),
              gpu: bool = True) -> dict[str, dict[str, int]]:
    """{phase: {"fr_muls": k} or {"fq_muls": k}} for the prover's kernel phases (on the GPU,
    or ``gpu`` False the CPU backend). The witness MSMs (msm_a, msm_b1, msm_b2, msm_c) are
    counted from ``counts``, except the queries in ``bits`` (on the bit/tail split: the
    module docstring) and all of them without counts."""
    n, m, private = pk.domain_size, pk.n_vars, pk.n_public + 1
    ops = {"matvec": {"fr_muls": matvec_fr_muls(int(pk.coefficients.matrix.size), n)},
           "ntt": {"fr_muls": ntt_fr_muls(n)},
           "msm_h": {"fq_muls": msm_fq_muls(G1, n, 0, 0)}}  # d = ab - c: dense, random-looking
    if counts is None:
        return ops
    g1 = msm_fq_muls(G1, m, counts.ones, counts.zeros)
    witness_msms = {"a": g1, "b1": g1, "b2": msm_fq_muls(G2, m, counts.ones, counts.zeros, gpu),
                    "c": msm_fq_muls(G1, m - private, counts.private_ones, counts.private_zeros)}
    ops.update((f"msm_{q}", {"fq_muls": k}) for q, k in witness_msms.items() if q not in bits)
    return ops
