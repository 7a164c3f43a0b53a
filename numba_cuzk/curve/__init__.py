"""BLS12-381 G1 and G2: parameters, the Python-int reference, device point arithmetic
(affine, Jacobian, XYZZ), bulk kernels and the standard encodings.

    params      G1, G2 (CurveParams), z, r, cofactors, endomorphism constants
    reference   Curve, g1, g2: the group law on Python ints (the tests' ground truth)
    points      point_ops(curve): device/CPU formulas; layout (coords * L, n) uint32,
                gathered from one builder per coordinate system:
      affine, jacobian, xyzz   affine_ops, jacobian_ops, xyzz_ops over a FieldBackend
      point_field              FieldBackend: one thread per point, or a lane pair (G2)
    checks      sqrt, endomorphism subgroup checks, stored-point checks (device/CPU)
    decode      point_decoder(curve): decompression and checks of canonical points
    kernels     to_affine (batched inversion), decode
    fixed_base  fixed_base_table, fixed_base_mul: k_i * P for one P (the Groth16 setup)
    encoding    encode / decode / decode_unchecked (48/96 and 96/192-byte formats)
    layout      reference points <-> limb arrays (tests, small conversions)
"""

from numba_cuzk.curve.params import CURVES, G1, G2, CurveParams

__all__ = ["CURVES", "G1", "G2", "CurveParams"]
