"""Point arithmetic for G1 and G2, one source for the CPU and CUDA targets.

``point_ops(curve)`` gathers a ``PointOps`` of ``@njit(forceinline=True)`` functions from
one builder per coordinate system, each written once over a point_field.FieldBackend (the
field of mont.py for G1: Fq, L = 12 limbs, or fq2.py for G2: Fq2, L = 24 limbs), as
sppark's ``xyzz_t<field_t>``:

    affine.py    affine_ops      identity, negation, the curve equation
    jacobian.py  jacobian_ops    the jac_* functions
    xyzz.py      xyzz_ops        the xyzz_* functions (the MSM's)

A point is one flat uint32 array, coordinates one after another, each L limbs in
Montgomery form:

    affine    (x, y)            2L limbs   the identity is (0, 0): on neither curve (b != 0)
    Jacobian  (X, Y, Z)         3L limbs   x = X/Z^2, y = Y/Z^3; identity iff Z = 0
    XYZZ      (X, Y, ZZ, ZZZ)   4L limbs   x = X/ZZ, y = Y/ZZZ, ZZ^3 = ZZZ^2; identity iff ZZ = 0

Bulk arrays are (coords * L, n) uint32, point i in column i: rows k*L..(k+1)*L-1 hold
coordinate k (for G2: c0's 12 limbs, then c1's), the field's structure-of-arrays layout
(a warp's loads of one limb row are coalesced). ``load``/``store`` move one point.

Formulas (EFD, https://hyperelliptic.org/EFD/g1p/auto-shortw-*.html, a = 0), cost in
field multiplications M and squarings S (for G2 one Fq2 M = 3 Fq M, one S = 2 Fq M):

    xyzz_add         add-2008-s      12M + 2S
    xyzz_add_mixed   madd-2008-s      8M + 2S   (XYZZ + affine: the MSM bucket step)
    xyzz_dbl         dbl-2008-s-1     6M + 3S
    jac_add          add-2007-bl     11M + 5S
    jac_add_mixed    madd-2007-bl     7M + 4S
    jac_dbl          dbl-2009-l       2M + 5S

Every addition handles the identity on either side, P + P (it doubles) and P + (-P) (it
returns the identity). Doublings need no branch: Y = 0 (2-torsion, absent from both
groups) or the identity give Z3 = 0 / ZZ3 = 0. ``out`` may alias any input.

Formulas are ``target.split`` functions (inlined in CUDA kernels, out of line on the CPU)
and their field arithmetic ``target.field_call``s: see target.py for why (CPU compile
time). ``point_ops(G2, pair=True)`` builds the same formulas over point_field.lane_pair
(field/fq2_pair.py) for CUDA kernels that hold each point on a lane pair (L = 12 limbs
per thread: a lane's half of every coordinate; ``load``/``store`` move that half of the
bulk layout), which keeps a G2 formula within a thread's registers. ptxas (sm_90) on
bench/curve.py's chained kernels: G1 mixed add 255 registers and 100 bytes of spills,
G1 double 189 and none; G2 mixed add 255 / 1 KB spills, G2 double 255 / 208 B; no local
arrays left in memory (no __local_depot).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Callable

from numba_cuzk.curve.affine import affine_ops
from numba_cuzk.curve.jacobian import jacobian_ops
from numba_cuzk.curve.params import CurveParams
from numba_cuzk.curve.point_field import field_ops, lane_pair, montgomery_limbs, single_lane
from numba_cuzk.curve.xyzz import xyzz_ops

__all__ = ["PointOps", "field_ops", "montgomery_limbs", "point_ops"]


@dataclass(frozen=True)
class PointOps:
    """Device/CPU point functions of one curve; see the module docstring for formats.

    p, q, out: flat uint32 point arrays; arr: a bulk (coords * L, n) array.
    """

    curve: CurveParams
    limbs: int  # L: limbs per coordinate (per thread: a lane pair's half for pair ops)
    lanes: int  # threads per point: 1, or 2 (point_ops(G2, pair=True))
    load: Callable  # load(out, arr, i, coords)
    copy_point: Callable  # copy_point(out, p, coords)
    store: Callable  # store(arr, i, p, coords)
    aff_set_identity: Callable
    aff_is_identity: Callable
    aff_neg: Callable
    aff_on_curve: Callable
    jac_set_identity: Callable
    jac_is_identity: Callable
    jac_from_affine: Callable
    jac_to_affine: Callable  # one inversion
    jac_to_xyzz: Callable
    jac_neg: Callable
    jac_eq: Callable
    jac_dbl: Callable
    jac_add: Callable
    jac_add_mixed: Callable
    jac_add_mixed_unless_equal: Callable  # -> False, out untouched, where p == q: the caller doubles
    xyzz_set_identity: Callable
    xyzz_is_identity: Callable
    xyzz_from_affine: Callable
    xyzz_to_affine: Callable  # one inversion
    xyzz_to_jacobian: Callable
    xyzz_neg: Callable
    xyzz_eq: Callable
    xyzz_dbl: Callable
    xyzz_add: Callable
    xyzz_add_unless_equal: Callable  # -> False, out untouched, where p == q: the caller doubles
    xyzz_add_mixed: Callable


@lru_cache(maxsize=None)
def point_ops(curve: CurveParams, pair: bool = False) -> PointOps:
    """Build the PointOps of ``curve`` (cached: one set of functions per curve). ``pair``
    (G2, CUDA kernels only): the same formulas over fq2_pair.py, each point held by a
    lane pair, a lane's half of every coordinate in 12 limbs (see that module)."""
    F = lane_pair(curve) if pair else single_lane(curve)
    affine = affine_ops(F)
    return PointOps(curve=curve, limbs=F.limbs, lanes=F.lanes, load=F.load, copy_point=F.copy_point, store=F.store,
                    **affine, **jacobian_ops(F, affine), **xyzz_ops(F, affine))
