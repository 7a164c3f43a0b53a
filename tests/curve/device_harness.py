"""Runs any point function of points.py in a CUDA kernel (the simulator in CI) on
reference points, and returns reference points.

All point functions of a curve go through ONE device function that switches on an op
code: in the simulator every device function a kernel calls is compiled for the CPU as
its own module with all its callees (a G2 formula took ~10 s), so one dispatcher per curve
is compiled once and shared by every test.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np
from numba import config, cuda, uint32

from numba_cuzk.curve import layout
from numba_cuzk.curve.params import CurveParams
from numba_cuzk.curve.points import point_ops
from numba_cuzk.field.mont import device

BLOCK = 8  # simulator threads are Python threads: small blocks compile and run faster
POISON = np.uint32(0xA5A5A5A5)

# name -> (op code, input formats, output format); "flag" outputs a bool
OPS = {
    "xyzz_add": (0, ("xyzz", "xyzz"), "xyzz"),
    "xyzz_add_mixed": (1, ("xyzz", "affine"), "xyzz"),
    "xyzz_dbl": (2, ("xyzz",), "xyzz"),
    "jac_add": (3, ("jacobian", "jacobian"), "jacobian"),
    "jac_add_mixed": (4, ("jacobian", "affine"), "jacobian"),
    "jac_dbl": (5, ("jacobian",), "jacobian"),
    "xyzz_to_affine": (6, ("xyzz",), "affine"),
    "jac_to_affine": (7, ("jacobian",), "affine"),
    "xyzz_to_jacobian": (8, ("xyzz",), "jacobian"),
    "jac_to_xyzz": (9, ("jacobian",), "xyzz"),
    "jac_from_affine": (10, ("affine",), "jacobian"),
    "xyzz_from_affine": (11, ("affine",), "xyzz"),
    "aff_neg": (12, ("affine",), "affine"),
    "jac_neg": (13, ("jacobian",), "jacobian"),
    "xyzz_neg": (14, ("xyzz",), "xyzz"),
    "jac_eq": (15, ("jacobian", "jacobian"), "flag"),
    "xyzz_eq": (16, ("xyzz", "xyzz"), "flag"),
    "aff_on_curve": (17, ("affine",), "flag"),
    "jac_is_identity": (18, ("jacobian",), "flag"),
    "xyzz_is_identity": (19, ("xyzz",), "flag"),
    "aff_is_identity": (20, ("affine",), "flag"),
}
ALIAS_NONE, ALIAS_FIRST, ALIAS_SECOND = 0, 1, 2


@lru_cache(maxsize=None)
def _kernel(curve: CurveParams):
    P = point_ops(curve)
    L = P.limbs
    L4 = 4 * L
    load, store = P.load, P.store
    xyzz_add, xyzz_add_mixed, xyzz_dbl = P.xyzz_add, P.xyzz_add_mixed, P.xyzz_dbl
    jac_add, jac_add_mixed, jac_dbl = P.jac_add, P.jac_add_mixed, P.jac_dbl
    xyzz_to_affine, jac_to_affine, xyzz_to_jacobian, jac_to_xyzz = (
        P.xyzz_to_affine, P.jac_to_affine, P.xyzz_to_jacobian, P.jac_to_xyzz)
    jac_from_affine, xyzz_from_affine = P.jac_from_affine, P.xyzz_from_affine
    aff_neg, jac_neg, xyzz_neg, jac_eq, xyzz_eq = P.aff_neg, P.jac_neg, P.xyzz_neg, P.jac_eq, P.xyzz_eq
    aff_on_curve, jac_is_identity, xyzz_is_identity, aff_is_identity = (
        P.aff_on_curve, P.jac_is_identity, P.xyzz_is_identity, P.aff_is_identity)

    @device
    def apply(op, alias, o, x, y):
        """o = f(x, y) (or f(x)); with alias 1 / 2 the output is written over x / y."""
        if alias == 1:
            o = x
        elif alias == 2:
            o = y
        flag = False
        if op == 0:
            xyzz_add(o, x, y)
        elif op == 1:
            xyzz_add_mixed(o, x, y)
        elif op == 2:
            xyzz_dbl(o, x)
        elif op == 3:
            jac_add(o, x, y)
        elif op == 4:
            jac_add_mixed(o, x, y)
        elif op == 5:
            jac_dbl(o, x)
        elif op == 6:
            xyzz_to_affine(o, x)
        elif op == 7:
            jac_to_affine(o, x)
        elif op == 8:
            xyzz_to_jacobian(o, x)
        elif op == 9:
            jac_to_xyzz(o, x)
        elif op == 10:
            jac_from_affine(o, x)
        elif op == 11:
            xyzz_from_affine(o, x)
        elif op == 12:
            aff_neg(o, x)
        elif op == 13:
            jac_neg(o, x)
        elif op == 14:
            xyzz_neg(o, x)
        elif op == 15:
            flag = jac_eq(x, y)
        elif op == 16:
            flag = xyzz_eq(x, y)
        elif op == 17:
            flag = aff_on_curve(x)
        elif op == 18:
            flag = jac_is_identity(x)
        elif op == 19:
            flag = xyzz_is_identity(x)
        elif op == 20:
            flag = aff_is_identity(x)
        return flag

    @cuda.jit
    def kernel(n, op, alias, out, flags, a, b):
        i = cuda.grid(1)
        if i < n:
            x = cuda.local.array(L4, uint32)
            y = cuda.local.array(L4, uint32)
            o = cuda.local.array(L4, uint32)
            load(x, a, i, 4)
            load(y, b, i, 4)
            load(o, out, i, 4)
            flags[i] = uint32(apply(op, alias, o, x, y))
            res = x if alias == 1 else (y if alias == 2 else o)
            store(out, i, res, 4)

    if config.ENABLE_CUDASIM:
        # Compile the dispatcher here, on one thread: compiling it from inside a
        # simulated launch (one Python thread per CUDA thread) took ~3x as long.
        dummy = np.zeros(L4, dtype=np.uint32)
        apply(-1, 0, dummy, dummy.copy(), dummy.copy())
    return kernel


def run(curve: CurveParams, name: str, *inputs: list, alias: int = ALIAS_NONE):
    """Reference points in the formats of OPS[name] -> the op's result (reference point
    tuple per input, or bool for "flag" ops)."""
    op, formats, result = OPS[name]
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
    flags = cuda.to_device(np.zeros(n, dtype=np.uint32))
    d_a, d_b = cuda.to_device(arrays[0]), cuda.to_device(arrays[1])
    _kernel(curve)[(n + BLOCK - 1) // BLOCK, BLOCK](n, op, alias, out, flags, d_a, d_b)
    if result == "flag":
        return [bool(f) for f in flags.copy_to_host()]
    rows = layout.COORDS[result] * L
    return layout.limbs_to_points(np.ascontiguousarray(out.copy_to_host()[:rows]), curve, result)
