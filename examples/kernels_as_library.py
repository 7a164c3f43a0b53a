"""The field, NTT and MSM as a library on numpy arrays (CPU backend) or device arrays (GPU).

Every function takes the same (limbs, n) uint32 layout on either side and runs where the
arrays live: numpy arrays on all CPU cores, numba.cuda device arrays on the GPU.
"""

import numpy as np

from numba_cuzk.curve.layout import points_to_limbs
from numba_cuzk.curve.params import G1
from numba_cuzk.curve.reference import g1
from numba_cuzk.field import codec, kernels
from numba_cuzk.field.params import FR
from numba_cuzk.msm import host_bases, msm, to_point
from numba_cuzk.ntt import intt, ntt


def main(n: int = 16) -> None:
    values = list(range(1, n + 1))
    x = codec.to_montgomery(codec.to_limbs(values, FR), FR)  # (8, n) Montgomery Fr

    squares = kernels.mul_sub(np.empty_like(x), x, x, np.zeros_like(x))  # x*x - 0
    assert codec.from_limbs(codec.from_montgomery(squares, FR), FR) == [v * v for v in values]

    y = x.copy()
    ntt(y)  # evaluations on the 2^k-th roots of unity, in place
    intt(y)
    assert np.array_equal(x, y)

    points = [g1.mul(g1.generator, 7 * i + 1) for i in range(n)]
    bases = host_bases(points_to_limbs(points, G1), G1)  # upload_bases(...) on a GPU
    scalars = codec.to_limbs(values, FR)  # canonical scalars
    total = to_point(msm(bases, scalars))
    assert total == g1.mul(g1.generator, sum(v * (7 * i + 1) for i, v in enumerate(values)))
    print(f"field, NTT and MSM on {n} elements: results match the Python-int reference")


if __name__ == "__main__":
    main()
