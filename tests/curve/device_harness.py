"""Runs one point function of points.py in a CUDA kernel (the simulator in CI) on
reference points, and returns reference points.

One small kernel per (curve, function), built and compiled the first time a test runs it.
Every point formula is inlined whole at each call site, so a single dispatcher over all
functions was one huge kernel: NVVM + ptxas took minutes for G2 on the device. A kernel
of one function costs roughly that function's own compile time, and only functions that
the selected tests use are compiled.

Aliasing (out written over an input) is chosen at run time by pointer selection, so one
compiled copy of the formula serves all three cases: the compiler cannot assume the
arrays are distinct, so the formula's own read/write order is what the test checks.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np
from numba import config, cuda, uint32

from numba_cuzk.curve import layout
from numba_cuzk.curve.params import CurveParams
from numba_cuzk.curve.points import point_ops
from numba_cuzk.field.mont import device
from tests.field.device_harness import fast_handoffs

BLOCK = 8  # simulator threads are Python threads: small blocks run faster there
POISON = np.uint32(0xA5A5A5A5)

# name -> (input formats, output format); "flag" outputs a bool
OPS = {
    "xyzz_add": (("xyzz", "xyzz"), "xyzz"),
    "xyzz_add_mixed": (("xyzz", "affine"), "xyzz"),
    "xyzz_dbl": (("xyzz",), "xyzz"),
    "jac_add": (("jacobian", "jacobian"), "jacobian"),
    "jac_add_mixed": (("jacobian", "affine"), "jacobian"),
    "jac_dbl": (("jacobian",), "jacobian"),
    "xyzz_to_affine": (("xyzz",), "affine"),
    "jac_to_affine": (("jacobian",), "affine"),
    "xyzz_to_jacobian": (("xyzz",), "jacobian"),
    "jac_to_xyzz": (("jacobian",), "xyzz"),
    "jac_from_affine": (("affine",), "jacobian"),
    "xyzz_from_affine": (("affine",), "xyzz"),
    "aff_neg": (("affine",), "affine"),
    "jac_neg": (("jacobian",), "jacobian"),
    "xyzz_neg": (("xyzz",), "xyzz"),
    "jac_eq": (("jacobian", "jacobian"), "flag"),
    "xyzz_eq": (("xyzz", "xyzz"), "flag"),
    "aff_on_curve": (("affine",), "flag"),
    "jac_is_identity": (("jacobian",), "flag"),
    "xyzz_is_identity": (("xyzz",), "flag"),
    "aff_is_identity": (("affine",), "flag"),
}
ALIAS_NONE, ALIAS_FIRST, ALIAS_SECOND = 0, 1, 2


def _apply(fn, arity: int, flag: bool):
    """apply(o, x, y) -> bool: fn on its arity's arguments; point functions write o."""
    if flag:
        return (lambda o, x, y: fn(x)) if arity == 1 else (lambda o, x, y: fn(x, y))

    if arity == 1:
        def apply(o, x, y):
            fn(o, x)
            return False
    else:
        def apply(o, x, y):
            fn(o, x, y)
            return False
    return apply


@lru_cache(maxsize=None)
def _kernel(curve: CurveParams, name: str, pair: bool):
    P = point_ops(curve, pair=pair)
    L4, lanes = 4 * P.limbs, P.lanes
    load, store = P.load, P.store
    formats, result = OPS[name]
    apply = _apply(getattr(P, name), len(formats), result == "flag")
    if not config.ENABLE_CUDASIM:
        apply = device(apply)
    elif not pair:  # (a pair's functions need its simulated threads)
        # The simulated kernel is Python, so apply stays Python (a CPU-compiled wrapper per
        # function cost ~0.3 s each). Call it once here, on one thread, to compile what it
        # calls: compiling from inside a launch (one Python thread per CUDA thread) took
        # ~3x as long. Zeros are the identity (Z = 0) or (0, 0), which every function takes.
        zeros = np.zeros(L4, dtype=np.uint32)
        apply(zeros, zeros.copy(), zeros.copy())

    @cuda.jit
    def kernel(n, alias, out, flags, a, b):
        i = cuda.grid(1) // lanes
        if i < n:
            x = cuda.local.array(L4, uint32)
            y = cuda.local.array(L4, uint32)
            o = cuda.local.array(L4, uint32)
            load(x, a, i, 4)
            load(y, b, i, 4)
            load(o, out, i, 4)  # poison: rows the function must write
            res = x if alias == ALIAS_FIRST else (y if alias == ALIAS_SECOND else o)
            flags[cuda.grid(1) % lanes, i] = uint32(apply(res, x, y))  # a row per lane
            store(out, i, res, 4)

    return kernel


def run(curve: CurveParams, name: str, *inputs: list, alias: int = ALIAS_NONE, pair: bool = False):
    """Reference points in the formats of OPS[name] -> the function's result (a reference
    point per input, or a bool for "flag" functions). ``pair``: G2's lane-pair functions
    (point_ops(G2, pair=True)), each point on two threads; both lanes' flags must agree."""
    formats, result = OPS[name]
    n = len(inputs[0])
    L = curve.limbs
    arrays = []
    for fmt, pts in zip(formats, inputs):
        arr = np.full((4 * L, n), POISON, dtype=np.uint32)
        packed = layout.points_to_limbs(pts, curve, fmt)
        arr[:packed.shape[0]] = packed
        arrays.append(arr)
    while len(arrays) < 2:
        arrays.append(np.full((4 * L, n), POISON, dtype=np.uint32))
    out = cuda.to_device(np.full((4 * L, n), POISON, dtype=np.uint32))
    flags = cuda.to_device(np.full((2, n), POISON, dtype=np.uint32))
    d_a, d_b = cuda.to_device(arrays[0]), cuda.to_device(arrays[1])
    lanes = 2 if pair else 1
    with fast_handoffs():
        _kernel(curve, name, pair)[(lanes * n + BLOCK - 1) // BLOCK, BLOCK](n, alias, out, flags, d_a, d_b)
    if result == "flag":
        rows = flags.copy_to_host()[:lanes]
        assert (rows == rows[0]).all() and ((rows == 0) | (rows == 1)).all(), f"{name}: lanes disagree: {rows}"
        return [bool(f) for f in rows[0]]
    rows = layout.COORDS[result] * L
    return layout.limbs_to_points(np.ascontiguousarray(out.copy_to_host()[:rows]), curve, result)
