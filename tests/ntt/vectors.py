"""Inputs and conversions shared by the NTT tests (fixed seeds throughout)."""

from __future__ import annotations

import random

import numpy as np

from numba_cuzk.field import codec
from numba_cuzk.field.params import FR

P = FR.modulus
POISON = np.uint32(0xA5A5A5A5)  # top limb above p's: a poisoned element is never canonical
COSET_G = 7  # a generator of Fr^* (arkworks's), so g<w> is disjoint from <w>


def random_ints(n: int, seed: int) -> list[int]:
    rng = random.Random(seed)
    return [rng.randrange(P) for _ in range(n)]


def to_mont(values: list[int]) -> np.ndarray:
    """Canonical ints -> (8, n) Montgomery limbs."""
    return codec.to_montgomery(codec.to_limbs(values, FR), FR)


def from_mont(limbs: np.ndarray) -> list[int]:
    """(8, n) Montgomery limbs -> canonical ints."""
    return codec.from_limbs(codec.from_montgomery(np.ascontiguousarray(limbs), FR), FR)


def random_limbs(shape: tuple, seed: int) -> np.ndarray:
    """Random canonical residues as uint32 limbs (read as Montgomery form), any shape (..., 8, n)."""
    rng = np.random.default_rng(seed)
    a = rng.integers(0, 1 << 32, size=shape, dtype=np.uint32)
    a[..., FR.limbs - 1, :] %= np.uint32(FR.modulus_limbs[-1])
    return a


def poisoned(shape: tuple) -> np.ndarray:
    return np.full(shape, POISON, dtype=np.uint32)
