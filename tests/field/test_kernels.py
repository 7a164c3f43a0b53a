"""The element-wise kernels of field/kernels.py on both backends: device arrays run the
CUDA kernels (the simulator in CI), numpy arrays the parallel CPU loops."""

import random

import numpy as np
import pytest
from numba import cuda

from numba_cuzk.field import codec, kernels
from numba_cuzk.field.params import FQ, FR
from tests.conftest import SIMULATOR
from tests.field.values import edge_values

SIZES = [1, 37] if SIMULATOR else [1, 37, 1 << 16]


def _montgomery(values, params):
    return codec.to_montgomery(codec.to_limbs(values, params), params)


def _ints(limbs, params):
    return codec.from_limbs(codec.from_montgomery(limbs, params), params)


class Host:
    name = "cpu"

    @staticmethod
    def put(x):
        return x.copy()

    @staticmethod
    def get(x):
        return x

    @staticmethod
    def poisoned(shape):
        return np.full(shape, 0xA5A5A5A5, dtype=np.uint32)


class Device:
    name = "gpu"

    @staticmethod
    def put(x):
        return cuda.to_device(x)

    @staticmethod
    def get(x):
        return x.copy_to_host()

    @staticmethod
    def poisoned(shape):
        return cuda.to_device(np.full(shape, 0xA5A5A5A5, dtype=np.uint32))


SIDES = [pytest.param(Host, id="cpu"), pytest.param(Device, id="gpu", marks=pytest.mark.gpu)]


def _inputs(params, n, count):
    edges = edge_values(params)
    return [[edges[i] if i < len(edges) and k == 0 else random.randrange(params.modulus) for i in range(n)]
            for k in range(count)]


@pytest.mark.parametrize("side", SIDES)
@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("params", [FR, FQ], ids=["Fr", "Fq"])
def test_mul_sub_add_and_scale(side, n, params):
    a, b, c = _inputs(params, n, 3)
    p = params.modulus
    out = side.poisoned((params.limbs, n))
    args = [side.put(_montgomery(v, params)) for v in (a, b, c)]
    kernels.mul_sub(out, *args, params=params)
    assert _ints(side.get(out), params) == [(x * y - z) % p for x, y, z in zip(a, b, c)]
    kernels.scale(out, args[0], p - 3, params=params)
    assert _ints(side.get(out), params) == [x * (p - 3) % p for x in a]
    kernels.add(out, args[0], args[1], params=params)
    assert _ints(side.get(out), params) == [(x + y) % p for x, y in zip(a, b)]


@pytest.mark.parametrize("side", SIDES)
@pytest.mark.parametrize("n", SIZES)
def test_mul_powers(side, n):
    (a,) = _inputs(FR, n, 1)
    g, offset, p = 7, 1000, FR.modulus
    out = side.poisoned((8, n))
    kernels.mul_powers(out, side.put(_montgomery(a, FR)), g, offset=offset)
    assert _ints(side.get(out), FR) == [x * pow(g, offset + i, p) % p for i, x in enumerate(a)]


@pytest.mark.parametrize("side", SIDES)
@pytest.mark.parametrize("n", SIZES + [65, 130])
@pytest.mark.parametrize("params", [FR, FQ], ids=["Fr", "Fq"])
def test_batch_inverse_including_zeros(side, n, params):
    (a,) = _inputs(params, n, 1)
    a[n // 2] = 0  # zeros map to zero and must not poison their chunk
    out = side.poisoned((params.limbs, n))
    kernels.batch_inverse(out, side.put(_montgomery(a, params)), params=params)
    assert _ints(side.get(out), params) == [pow(x, -1, params.modulus) if x else 0 for x in a]


@pytest.mark.parametrize("n", [1023, 1024, 2100])
def test_batch_inverse_in_cpu_chunks(n):
    """The CPU's chunks of 1024 (one inversion each): a ragged last chunk, a zero in each."""
    (a,) = _inputs(FR, n, 1)
    a[5] = a[n - 1] = a[min(1500, n - 2)] = 0
    out = Host.poisoned((8, n))
    kernels.batch_inverse(out, _montgomery(a, FR))
    assert _ints(out, FR) == [pow(x, -1, FR.modulus) if x else 0 for x in a]


@pytest.mark.parametrize("side", SIDES)
def test_montgomery_conversion_kernels(side):
    values = edge_values(FQ)
    out = side.poisoned((12, len(values)))
    kernels.to_montgomery(out, side.put(codec.to_limbs(values, FQ)), params=FQ)
    mont = side.get(out)
    assert codec.from_limbs(mont, FQ) == [v * FQ.r % FQ.modulus for v in values]
    kernels.from_montgomery(out, side.put(mont), params=FQ)
    assert codec.from_limbs(side.get(out), FQ) == values


def test_bad_arguments_are_clear_errors():
    a = np.zeros((8, 4), dtype=np.uint32)
    with pytest.raises(ValueError, match="argument 1: expected uint32 array of shape \\(8, 4\\)"):
        kernels.mul_sub(a, np.zeros((8, 5), dtype=np.uint32), a, a)
    with pytest.raises(ValueError, match="argument 2: expected uint32"):
        kernels.mul_sub(a, a, np.zeros((8, 4), dtype=np.int64), a)
    with pytest.raises(ValueError, match="mix of device and host"):
        kernels.mul_sub(a, cuda.to_device(a), a, a)
    with pytest.raises(ValueError, match="different array"):
        kernels.batch_inverse(a, a)


def test_empty_arrays_are_fine():
    empty = np.zeros((8, 0), dtype=np.uint32)
    kernels.mul_sub(empty, empty, empty, empty)
    kernels.batch_inverse(np.zeros((8, 0), dtype=np.uint32), empty)
