"""Textbook NTTs on canonical Python ints: the ground truth for the fast transforms.

Same names as the public API (numba_cuzk.ntt): ``ntt``, ``intt``, ``coset_ntt``,
``coset_intt``, on lists of canonical ints (not Montgomery), natural order in and out.
``ntt`` is the iterative radix-2 Cooley-Tukey of CLRS ch. 30 (bit-reversal copy, then
log2(n) butterfly stages); ``dft`` is the O(n^2) definition for tiny sizes. Written for
clarity, not speed: 2^12 takes about a second.

Definitions (w = FR.root_of_unity(log2 n), snarkjs's roots):
  ntt(a)[k] = sum_i a[i] w^(ik)                       evaluations of a on <w>
  intt(A)[i] = n^-1 sum_k A[k] w^(-ik)                 interpolation, intt(ntt(a)) = a
  coset_ntt(a, g)[k] = sum_i a[i] g^i w^(ik)           evaluations on g<w>
  coset_intt(A, g)[i] = intt(A)[i] g^(-i)              coset_intt(coset_ntt(a, g), g) = a
"""

from __future__ import annotations

from numba_cuzk.field.params import FR

P = FR.modulus


def _log2(n: int) -> int:
    if n < 1 or n & (n - 1):
        raise ValueError(f"NTT size must be a power of two, got {n}")
    return n.bit_length() - 1


def _bit_reverse(i: int, bits: int) -> int:
    return int(format(i, f"0{bits}b")[::-1], 2) if bits else 0


def dft(values: list[int], root: int | None = None) -> list[int]:
    """O(n^2) evaluation at root^k, k < n (root defaults to the primitive n-th root)."""
    n = len(values)
    w = FR.root_of_unity(_log2(n)) if root is None else root
    return [sum(a * pow(w, i * k, P) for i, a in enumerate(values)) % P for k in range(n)]


def evaluate(values: list[int], x: int) -> int:
    """The polynomial with coefficients ``values`` (lowest first) at x, by Horner."""
    acc = 0
    for a in reversed(values):
        acc = (acc * x + a) % P
    return acc


def _cooley_tukey(values: list[int], w: int) -> list[int]:
    n = len(values)
    bits = _log2(n)
    a = [values[_bit_reverse(i, bits)] % P for i in range(n)]
    half = 1
    while half < n:
        step = pow(w, n // (2 * half), P)  # primitive (2*half)-th root
        for start in range(0, n, 2 * half):
            twiddle = 1
            for j in range(start, start + half):
                u, v = a[j], a[j + half] * twiddle % P
                a[j], a[j + half] = (u + v) % P, (u - v) % P
                twiddle = twiddle * step % P
        half *= 2
    return a


def ntt(values: list[int]) -> list[int]:
    """Evaluations at w^k, k < n, natural order."""
    return _cooley_tukey(values, FR.root_of_unity(_log2(len(values))))


def intt(values: list[int]) -> list[int]:
    """Coefficients from evaluations at w^k: ntt with w^-1, then divide by n."""
    n = len(values)
    w_inv = pow(FR.root_of_unity(_log2(n)), -1, P)
    n_inv = pow(n, -1, P)
    return [x * n_inv % P for x in _cooley_tukey(values, w_inv)]


def coset_ntt(values: list[int], g: int) -> list[int]:
    """Evaluations at g w^k: ntt of a[i] g^i."""
    return ntt([a * pow(g, i, P) % P for i, a in enumerate(values)])


def coset_intt(values: list[int], g: int) -> list[int]:
    """Coefficients from evaluations at g w^k: intt, then multiply by g^-i."""
    g_inv = pow(g, -1, P)
    return [a * pow(g_inv, i, P) % P for i, a in enumerate(intt(values))]
