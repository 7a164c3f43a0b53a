"""Large example circuits built directly as arrays: 2^20 constraints in seconds.

Each builder returns ``(R1CS, witness)``, the witness (8, n_wires) uint32 canonical Fr.
No Python object per constraint: constraints come in blocks of rows that share a shape
(the same number of terms in each of A, B, C), built with numpy over the whole block;
witness values that form a chain (hash rounds) are computed by a Numba loop in
Montgomery form. Constraints are numbered block by block, not in the order a hand
written circuit would list them; an R1CS does not care.

- ``mimc_chain(rounds)``: x_{i+1} = (x_i + c_i)^5, MiMC's round (3 constraints per round).
- ``merkle_path(depth, width)``: per level, a boolean direction bit selects (left, right)
  from the current node and a sibling, then a Poseidon-like hash with a state of
  ``width`` elements (HASH_ROUNDS rounds of x^5 on every element, then mixing).
- ``bit_heavy(words, rounds)``: SHA-256-like word operations on bits: boolean
  decompositions, AND, XOR, 32-bit additions; the witness is almost all 0s and 1s, as in
  Filecoin's PoRep partitions.
- ``build(name, log_constraints)``: one of these, sized for a 2^k proving domain.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

from numba_cuzk.field.codec import from_montgomery, to_limbs, to_montgomery
from numba_cuzk.field.mont import fr_ops
from numba_cuzk.field.params import FR
from numba_cuzk.field.target import local_u32
from numba_cuzk.groth16.r1cs import R1CS, SparseMatrix
from numba_cuzk.groth16.shape import KeyShape
from numba_cuzk import _compat  # noqa: F401,I001  (numba patched before its first use)
from numba import prange
from numba_cuzk.kernel_cache import cpu_kernel

ONE_WIRE = 0
HASH_ROUNDS = 4  # full rounds of merkle_path's hash
MERKLE_WIDTH = 3  # build()'s hash state width: Poseidon's t = 3 for a 2-to-1 hash
WORD_BITS = 32
BIT_HEAVY_WORDS = 16  # build()'s state: SHA-256's message schedule holds 16 words
# The bit/tail split's tail for bit_heavy (msm/bits.py): all its wires but 2 x 16 words
# hold 0 or 1, so any tail >= 32 serves; 2^16 is the one measured on the H200 (a tail's
# Pippenger is planned for its capacity: c = 13, ~1 ms per MSM).
BIT_HEAVY_TAIL = 1 << 16
ROTATIONS = (7, 18)  # bit_heavy's word rotations (two of SHA-256's sigma0 amounts)
SBOX_CONSTRAINTS = 3  # x^5 as x2 = x*x, x4 = x2*x2, x5 = x4*x
# Round constants are part of a circuit, not of its inputs: drawn from this fixed seed,
# so every ``seed`` gives an instance of the same R1CS (one proving key for all partitions).
CONSTANTS_SEED = 0x6D696D63

_N = FR.limbs
_load, _store, _copy, _add, _sub, _mul, _sqr, _set_zero, _set_one = (
    fr_ops.load, fr_ops.store, fr_ops.copy, fr_ops.add, fr_ops.sub, fr_ops.mul, fr_ops.sqr,
    fr_ops.set_zero, fr_ops.set_one)


# ---------------------------------------------------------------------------------------
# Blocks of rows


@dataclass(frozen=True)
class _Rows:
    """The rows of one matrix in one block, each the same ``terms``: (wire, coefficient)
    pairs, a wire an id or (rows,) int64 ids, a coefficient an int or (8, rows) (or (8, 1):
    one for every row) uint32 canonical limbs. Kept as given until ``_matrix`` writes them into the matrix's CSR
    arrays in place (an R1CS of 2^27 constraints holds ~20 GB of terms: materialized per
    block, then concatenated, they were written twice)."""

    rows: int
    terms: tuple[tuple[int | np.ndarray, int | np.ndarray], ...]

    def write(self, wires: np.ndarray, coefficients: np.ndarray) -> None:
        """Into ``wires`` (rows, terms) and ``coefficients`` (8, rows, terms) (views of the
        matrix's arrays), a term at a time on all cores (_write_term)."""
        for t, (wire, coefficient) in enumerate(self.terms):
            ids = np.broadcast_to(np.asarray(wire, dtype=np.int64), (self.rows,))
            if not isinstance(coefficient, np.ndarray):
                coefficient = to_limbs([coefficient], FR, reduce=True)
            _write_term(wires, coefficients, t, ids, np.broadcast_to(coefficient, (_N, self.rows)))


@cpu_kernel(symbols=False, parallel=True)
def _write_term(wires, coefficients, t, ids, coefficient):
    """Term ``t`` of every row: wires[i, t] = ids[i], coefficients[:, i, t] = coefficient[:, i]
    (any strides: a constant's are 0). numpy's strided assignments ran on one core at
    ~1 GB/s; an R1CS of 2^27 constraints writes ~20 GB of terms."""
    for i in prange(wires.shape[0]):
        wires[i, t] = ids[i]
    for k in range(coefficients.shape[0]):  # a limb at a time: one stream of writes, not 8
        for i in prange(wires.shape[0]):
            coefficients[k, i, t] = coefficient[k, i]


_Block = tuple[_Rows, _Rows, _Rows]  # A, B, C of the same rows
_Coefficient = int | np.ndarray  # one int for every row, or (8, rows) canonical limbs


def _lc(rows: int, *terms: tuple[int | np.ndarray, _Coefficient]) -> _Rows:
    """Rows of sum(coefficient * wire): each term is (wire id or (rows,) ids, coefficient)."""
    return _Rows(rows, terms)


def _packed(bits: np.ndarray) -> list[tuple[np.ndarray, int]]:
    """Terms of sum_k 2^k bit_k for bit wires (rows, n_bits)."""
    return [(bits[:, k], 1 << k) for k in range(bits.shape[1])]


def _sbox(x: _Rows, x2: np.ndarray, x4: np.ndarray, x5: np.ndarray) -> list[_Block]:
    """x5 = x^5 for the linear combinations ``x``, through wires x2 = x*x and x4 = x2*x2."""
    rows = len(x2)
    return [(x, x, _lc(rows, (x2, 1))),
            (_lc(rows, (x2, 1)), _lc(rows, (x2, 1)), _lc(rows, (x4, 1))),
            (_lc(rows, (x4, 1)), x, _lc(rows, (x5, 1)))]


def _boolean(bits: np.ndarray) -> _Block:
    """b * (b - 1) = 0 for each wire of ``bits`` (n,)."""
    rows = len(bits)
    return (_lc(rows, (bits, 1)), _lc(rows, (bits, 1), (ONE_WIRE, -1)), _lc(rows))


def _matrix(parts: list[_Rows]) -> SparseMatrix:
    """CSR of the parts' rows, part after part, each written in place."""
    indptr = np.zeros(sum(p.rows for p in parts) + 1, dtype=np.int64)
    row = 0
    for p in parts:  # each part's rows hold len(p.terms) terms
        indptr[row + 1:row + p.rows + 1] = indptr[row] + len(p.terms) * np.arange(1, p.rows + 1, dtype=np.int64)
        row += p.rows
    nnz = int(indptr[-1])
    indices, values = np.empty(nnz, dtype=np.uint32), np.empty((_N, nnz), dtype=np.uint32)
    start = 0
    for p in parts:
        end = start + p.rows * len(p.terms)
        p.write(indices[start:end].reshape(p.rows, len(p.terms)),
                values[:, start:end].reshape(_N, p.rows, len(p.terms)))
        start = end
    return SparseMatrix(indptr=indptr, indices=indices, values=values)


def _r1cs(n_wires: int, n_public: int, blocks: list[_Block]) -> R1CS:
    a, b, c = (_matrix([block[m] for block in blocks]) for m in range(3))
    return R1CS(n_wires=n_wires, n_public=n_public, a=a, b=b, c=c)


class _Wires:
    """Hands out private wire ids in order, after ONE and ``n_public`` public wires."""

    def __init__(self, n_public: int) -> None:
        self.count = 1 + n_public

    def take(self, *shape: int) -> np.ndarray:
        size = int(np.prod(shape))
        ids = np.arange(self.count, self.count + size, dtype=np.int64).reshape(shape)
        self.count += size
        return ids


def _random_fr(rng: np.random.Generator, n: int) -> np.ndarray:
    """(8, n) uint32 uniform below 2^254 < r: canonical Fr, and a valid Montgomery form."""
    limbs = rng.integers(0, 1 << 32, size=(_N, n), dtype=np.uint32)
    limbs[-1] >>= 2
    return limbs


def _witness_mont(n_wires: int) -> np.ndarray:
    """(8, n_wires) zeros with wire 0 = 1 in Montgomery form (R mod r)."""
    w = np.zeros((_N, n_wires), dtype=np.uint32)
    w[:, ONE_WIRE] = to_limbs([FR.r], FR)[:, 0]
    return w


# ---------------------------------------------------------------------------------------
# mimc_chain


def mimc_constraints(rounds: int) -> int:
    """Constraints of mimc_chain(rounds)."""
    return SBOX_CONSTRAINTS * rounds


@cpu_kernel(symbols=False)
def _mimc_trace(witness, x_wires, x2_wires, x4_wires, constants):
    """x_{i+1} = (x_i + c_i)^5 in Montgomery form, reading x_0 from and writing every
    wire into ``witness`` (8, n_wires); constants (8, rounds) Montgomery."""
    x = local_u32(_N)
    c = local_u32(_N)
    x2 = local_u32(_N)
    x4 = local_u32(_N)
    _load(x, witness, x_wires[0])
    for i in range(constants.shape[1]):
        _load(c, constants, i)
        _add(x, x, c)
        _sqr(x2, x)
        _sqr(x4, x2)
        _mul(x, x4, x)
        _store(witness, x2_wires[i], x2)
        _store(witness, x4_wires[i], x4)
        _store(witness, x_wires[i + 1], x)


def mimc_chain(rounds: int, seed: int = 0) -> tuple[R1CS, np.ndarray]:
    """x_{i+1} = (x_i + c_i)^5 for i < rounds: random x_0 from ``seed``, c_i from
    CONSTANTS_SEED (so the R1CS depends on ``rounds`` only).

    Public wires: 1 = x_0, 2 = x_rounds. 3 * rounds constraints, 3 * rounds + 2 wires.
    """
    count, x, x2, x4, constants = _mimc_wires(rounds)
    blocks = _sbox(_lc(rounds, (x[:-1], 1), (ONE_WIRE, constants)), x2, x4, x[1:])
    return _r1cs(count, 2, blocks), mimc_witness(rounds, seed)


def mimc_witness(rounds: int, seed: int = 0) -> np.ndarray:
    """mimc_chain(rounds, seed)'s witness alone."""
    count, x, x2, x4, constants = _mimc_wires(rounds)
    witness = _witness_mont(count)
    witness[:, 1] = _random_fr(np.random.default_rng(seed), 1)[:, 0]
    _mimc_trace(witness, x, x2, x4, to_montgomery(constants, FR))
    return from_montgomery(witness, FR)


def _mimc_wires(rounds: int) -> tuple[int, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(wire count, the x, x2, x4 wire ids, the round constants (8, rounds) canonical)."""
    if rounds < 1:
        raise ValueError(f"mimc_chain needs at least 1 round, got {rounds}")
    wires = _Wires(n_public=2)
    x = np.concatenate([[1], wires.take(rounds - 1), [2]])  # the chain starts and ends public
    x2, x4 = wires.take(rounds), wires.take(rounds)
    return wires.count, x, x2, x4, _random_fr(np.random.default_rng(CONSTANTS_SEED), rounds)


# ---------------------------------------------------------------------------------------
# merkle_path


def merkle_constraints(depth: int, width: int) -> int:
    """Constraints of merkle_path(depth, width): per level a boolean bit, the selection,
    HASH_ROUNDS * width S-boxes; plus root = the last output."""
    return depth * (2 + SBOX_CONSTRAINTS * HASH_ROUNDS * width) + 1


@cpu_kernel(symbols=False)
def _merkle_trace(witness, leaf_wire, sib_wires, bits, bit_wires, left_wires, x2_wires, x4_wires, x5_wires,
                  constants):
    """The path's values in Montgomery form, into ``witness`` (8, n_wires), which holds the
    leaf and siblings already. bits (depth,) 0/1; *_wires (rounds, width, depth) ids of
    S-box wires; constants (8, rounds * width) Montgomery, index round * width + k."""
    rounds, width, depth = x5_wires.shape
    state = np.empty((_N, width), dtype=np.uint32)  # the S-box outputs of the last round
    cur = local_u32(_N)
    sib = local_u32(_N)
    left = local_u32(_N)
    right = local_u32(_N)
    total = local_u32(_N)
    x = local_u32(_N)
    c = local_u32(_N)
    x2 = local_u32(_N)
    x4 = local_u32(_N)
    _load(cur, witness, leaf_wire)
    for level in range(depth):
        _load(sib, witness, sib_wires[level])
        if bits[level]:
            _copy(left, sib)
            _set_one(x)
        else:
            _copy(left, cur)
            _set_zero(x)
        _store(witness, bit_wires[level], x)
        _store(witness, left_wires[level], left)
        _add(right, cur, sib)
        _sub(right, right, left)
        for j in range(rounds):
            if j > 0:
                _set_zero(total)
                for k in range(width):
                    _load(x, state, k)
                    _add(total, total, x)
            for k in range(width):
                # S-box input: (left, right, 0, ...) in round 0, then (I + J) times the
                # last outputs; state[:, k] is read before it is overwritten.
                if j == 0:
                    if k == 0:
                        _copy(x, left)
                    elif k == 1:
                        _copy(x, right)
                    else:
                        _set_zero(x)
                else:
                    _load(x, state, k)
                    _add(x, x, total)
                _load(c, constants, j * width + k)
                _add(x, x, c)
                _sqr(x2, x)
                _sqr(x4, x2)
                _mul(x, x4, x)
                _store(witness, x2_wires[j, k, level], x2)
                _store(witness, x4_wires[j, k, level], x4)
                _store(witness, x5_wires[j, k, level], x)
                _store(state, k, x)
        _load(cur, state, 0)


def _hash_input(j: int, k: int, width: int, cur: np.ndarray, sib: np.ndarray, left: np.ndarray, x5: np.ndarray,
                constant: np.ndarray) -> _Rows:
    """The linear combination entering S-box (round j, element k) at every level: wire ids
    cur, sib, left (depth,), x5 (rounds, width, depth); constant (8, 1) canonical."""
    depth = len(cur)
    if j == 0:
        first = {0: [(left, 1)], 1: [(cur, 1), (sib, 1), (left, -1)]}  # right = cur + sib - left
        return _lc(depth, *first.get(k, []), (ONE_WIRE, constant))
    mixed = [(x5[j - 1, m], 2 if m == k else 1) for m in range(width)]  # (I + J) u
    return _lc(depth, *mixed, (ONE_WIRE, constant))


def merkle_path(depth: int, width: int, seed: int = 0) -> tuple[R1CS, np.ndarray]:
    """A Merkle path of ``depth`` levels with a width-``width`` x^5 hash.

    Per level: bit * (bit - 1) = 0; bit * (sib - cur) = left - cur (so left = sib if bit
    else cur, right = cur + sib - left); then HASH_ROUNDS rounds over a state of
    ``width`` elements starting (left, right, 0, ...): add round constants, x^5 on each
    element, mix by I + J; the next node is element 0 of the last round. Public wire 1 =
    the root; the leaf, siblings and bits (random from ``seed``) are private. Round
    constants come from CONSTANTS_SEED (so the R1CS depends on depth and width only).
    """
    w = _merkle_wires(depth, width)
    blocks = [_boolean(w.bit),
              (_lc(depth, (w.bit, 1)), _lc(depth, (w.sib, 1), (w.cur, -1)), _lc(depth, (w.left, 1), (w.cur, -1)))]
    for j in range(HASH_ROUNDS):
        for k in range(width):
            x = _hash_input(j, k, width, w.cur, w.sib, w.left, w.x5, w.constants[:, [j * width + k]])
            blocks += _sbox(x, w.x2[j, k], w.x4[j, k], w.x5[j, k])
    blocks.append((_lc(1, (w.x5[-1, 0, -1], 1)), _lc(1, (ONE_WIRE, 1)), _lc(1, (w.root, 1))))
    return _r1cs(w.count, 1, blocks), merkle_witness(depth, width, seed)


def merkle_witness(depth: int, width: int, seed: int = 0) -> np.ndarray:
    """merkle_path(depth, width, seed)'s witness alone."""
    rng = np.random.default_rng(seed)
    w = _merkle_wires(depth, width)
    witness = _witness_mont(w.count)
    witness[:, np.concatenate([[w.leaf], w.sib])] = _random_fr(rng, depth + 1)
    bits = rng.integers(0, 2, size=depth, dtype=np.uint8)
    _merkle_trace(witness, w.leaf, w.sib, bits, w.bit, w.left, w.x2, w.x4, w.x5, to_montgomery(w.constants, FR))
    witness[:, w.root] = witness[:, w.x5[-1, 0, -1]]
    return from_montgomery(witness, FR)


@dataclass(frozen=True)
class _MerkleWires:
    """merkle_path's wire ids: root, leaf (ints); sib, bit, left, cur (the node entering each
    level) (depth,); x2, x4, x5 (HASH_ROUNDS, width, depth); count; the round constants
    (8, HASH_ROUNDS * width) canonical."""

    count: int
    root: int
    leaf: int
    sib: np.ndarray
    bit: np.ndarray
    left: np.ndarray
    x2: np.ndarray
    x4: np.ndarray
    x5: np.ndarray
    cur: np.ndarray
    constants: np.ndarray


def _merkle_wires(depth: int, width: int) -> _MerkleWires:
    if depth < 1 or width < 2:
        raise ValueError(f"merkle_path needs depth >= 1 and width >= 2, got depth {depth}, width {width}")
    wires = _Wires(n_public=1)
    leaf = int(wires.take(1)[0])
    sib, bit, left = wires.take(depth), wires.take(depth), wires.take(depth)
    x2, x4, x5 = (wires.take(HASH_ROUNDS, width, depth) for _ in range(3))
    cur = np.concatenate([[leaf], x5[-1, 0, :-1]])
    constants = _random_fr(np.random.default_rng(CONSTANTS_SEED), HASH_ROUNDS * width)
    return _MerkleWires(wires.count, 1, leaf, sib, bit, left, x2, x4, x5, cur, constants)


# ---------------------------------------------------------------------------------------
# bit_heavy


def bit_heavy_constraints(words: int, rounds: int) -> int:
    """Constraints of bit_heavy(words, rounds): per word, 32 booleans and the packing of
    the input, the packing of the output; per word and round, 32 AND, 32 XOR, 33 booleans
    and the packing of a 32-bit sum."""
    return words * (WORD_BITS + 2 + rounds * (3 * WORD_BITS + 2))


def _word_operands(state: np.ndarray) -> tuple[np.ndarray, ...]:
    """x, y, z, v for each word i of state (..., words, 32 bits), as SHA-256 mixes words:
    x = w_i, y = rotr(w_{i+1}, 7), z = w_{i+2}, v = rotr(w_{i+3}, 18). Works on wire ids
    and bit values alike (bit k of rotr(w, s) is bit k + s of w)."""
    def word(shift: int, rotation: int = 0) -> np.ndarray:
        return np.roll(np.roll(state, -shift, axis=-2), -rotation, axis=-1)

    return word(0), word(1, ROTATIONS[0]), word(2), word(3, ROTATIONS[1])


def _bit_heavy_values(words_in: np.ndarray, rounds: int) -> tuple[np.ndarray, ...]:
    """Bit values of every round: g = y AND z, h = x XOR g, s = bits of h + v (33 bits).

    words_in (words,) uint64 < 2^32. Returns input bits (words, 32), g and h
    (rounds, words, 32), s (rounds, words, 33), all uint8.
    """
    shifts = np.arange(WORD_BITS + 1, dtype=np.uint64)
    bits_in = ((words_in[:, None] >> shifts[:WORD_BITS]) & 1).astype(np.uint8)
    g = np.empty((rounds, len(words_in), WORD_BITS), dtype=np.uint8)
    h = np.empty_like(g)
    s = np.empty((rounds, len(words_in), WORD_BITS + 1), dtype=np.uint8)
    _bit_heavy_rounds(words_in.astype(np.uint64), ROTATIONS[0], ROTATIONS[1], g, h, s)
    return bits_in, g, h, s


@cpu_kernel(symbols=False)
def _bit_heavy_rounds(words_in, rot_y, rot_v, g, h, s):
    """The rounds of _bit_heavy_values on whole words (a round of numpy calls on 16 x 32
    bit arrays cost ~0.1 ms in Python: 8.6 s for the 85,600 rounds of a 2^27 witness):
    word i becomes (x XOR (y AND z)) + v with x = w_i, y = rotr(w_(i+1), rot_y),
    z = w_(i+2), v = rotr(w_(i+3), rot_v) (_word_operands), its bits written into g, h
    (rounds, words, 32) and s (rounds, words, 33) uint8."""
    words = words_in.shape[0]
    mask = np.uint64(0xFFFFFFFF)
    one = np.uint64(1)
    state = words_in.copy()
    nxt = np.empty_like(state)
    for r in range(g.shape[0]):
        for i in range(words):
            x = state[i]
            y1 = state[(i + 1) % words]
            y = ((y1 >> np.uint64(rot_y)) | (y1 << np.uint64(32 - rot_y))) & mask
            z = state[(i + 2) % words]
            v3 = state[(i + 3) % words]
            v = ((v3 >> np.uint64(rot_v)) | (v3 << np.uint64(32 - rot_v))) & mask
            gw = y & z
            hw = x ^ gw
            total = hw + v
            for k in range(32):
                g[r, i, k] = np.uint8((gw >> np.uint64(k)) & one)
                h[r, i, k] = np.uint8((hw >> np.uint64(k)) & one)
            for k in range(33):
                s[r, i, k] = np.uint8((total >> np.uint64(k)) & one)
            nxt[i] = total & mask
        state[:] = nxt


def _pack(bits: np.ndarray) -> np.ndarray:
    """(..., n_bits) 0/1 -> (...) uint64 sum_k 2^k bit_k."""
    return (bits.astype(np.uint64) << np.arange(bits.shape[-1], dtype=np.uint64)).sum(axis=-1)


def _bit_heavy_blocks(words_in: np.ndarray, words_out: np.ndarray, bits_in: np.ndarray, g: np.ndarray,
                      h: np.ndarray, s: np.ndarray) -> list[_Block]:
    """bit_heavy's constraints over wire ids: words_in, words_out (words,); bits_in
    (words, 32); g, h (rounds, words, 32); s (rounds, words, 33)."""
    rounds, words = s.shape[:2]
    entering = np.concatenate([bits_in[None], s[:-1, :, :WORD_BITS]])  # (rounds, words, 32)
    x, y, z, v = (a.reshape(-1) for a in _word_operands(entering))
    g, h = g.reshape(-1), h.reshape(-1)
    n_bits, n_sums = len(g), rounds * words
    return [
        _boolean(np.concatenate([bits_in.reshape(-1), s.reshape(-1)])),
        (_lc(words, *_packed(bits_in)), _lc(words, (ONE_WIRE, 1)), _lc(words, (words_in, 1))),
        (_lc(n_bits, (y, 1)), _lc(n_bits, (z, 1)), _lc(n_bits, (g, 1))),
        # XOR: h = x + g - 2xg, i.e. (2x) * g = x + g - h
        (_lc(n_bits, (x, 2)), _lc(n_bits, (g, 1)), _lc(n_bits, (x, 1), (g, 1), (h, -1))),
        # the sum: sum 2^k s_k = sum 2^k h_k + sum 2^k v_k
        (_lc(n_sums, *_packed(s.reshape(n_sums, -1))), _lc(n_sums, (ONE_WIRE, 1)),
         _lc(n_sums, *_packed(h.reshape(n_sums, -1)), *_packed(v.reshape(n_sums, -1)))),
        (_lc(words, *_packed(s[-1, :, :WORD_BITS])), _lc(words, (ONE_WIRE, 1)), _lc(words, (words_out, 1))),
    ]


def bit_heavy(words: int, rounds: int, seed: int = 0) -> tuple[R1CS, np.ndarray]:
    """SHA-256-like: ``words`` random 32-bit input words (private, from ``seed``), each
    decomposed into booleans; each round replaces every word w_i by
    (x XOR (y AND z)) + v mod 2^32 (operands as in _word_operands) through 33 boolean sum
    bits; the final words are packed into public wires 1..words.

    Constraints: bit_heavy_constraints(words, rounds). Every wire but ONE and the 2 *
    words word wires holds a 0 or a 1.
    """
    count, wires = _bit_heavy_wires(words, rounds)
    return _r1cs(count, words, _bit_heavy_blocks(*wires)), bit_heavy_witness(words, rounds, seed)


def bit_heavy_witness(words: int, rounds: int, seed: int = 0) -> np.ndarray:
    """bit_heavy(words, rounds, seed)'s witness alone: 32 B per wire and the rounds' bit
    values (a few bytes per wire), none of the R1CS's ~190 B per wire."""
    count, (words_in, words_out, bits_in, g, h, s) = _bit_heavy_wires(words, rounds)
    values_in = np.random.default_rng(seed).integers(0, 1 << WORD_BITS, size=words, dtype=np.uint64)
    bit_values = _bit_heavy_values(values_in, rounds)
    witness = np.zeros((_N, count), dtype=np.uint32)
    witness[0, ONE_WIRE] = 1
    for ids, values in zip((bits_in, g, h, s), bit_values):
        witness[0, ids.reshape(-1)] = values.reshape(-1)
    witness[0, words_in] = values_in
    witness[0, words_out] = _pack(bit_values[-1][-1, :, :WORD_BITS])
    return witness


def _bit_heavy_wires(words: int, rounds: int) -> tuple[int, tuple[np.ndarray, ...]]:
    """(wire count, (words_in, words_out, bits_in, g, h, s) wire ids as _bit_heavy_blocks
    takes them)."""
    if words < 1 or rounds < 1:
        raise ValueError(f"bit_heavy needs words >= 1 and rounds >= 1, got words {words}, rounds {rounds}")
    wires = _Wires(n_public=words)
    words_out = np.arange(1, words + 1, dtype=np.int64)
    words_in, bits_in = wires.take(words), wires.take(words, WORD_BITS)
    g, h = wires.take(rounds, words, WORD_BITS), wires.take(rounds, words, WORD_BITS)
    s = wires.take(rounds, words, WORD_BITS + 1)
    return wires.count, (words_in, words_out, bits_in, g, h, s)


# ---------------------------------------------------------------------------------------
# build


@dataclass(frozen=True)
class _Family:
    """How a circuit grows: constraints(steps) = fixed + steps * per_step."""

    n_public: int
    constraints: Callable[[int], int]
    make: Callable[[int, int], tuple[R1CS, np.ndarray]]  # (steps, seed)
    witness: Callable[[int, int], np.ndarray]  # (steps, seed): make's witness alone
    tail: int | None = None  # the bit/tail split's tail for its witnesses (None: dense, no split)

    def steps_within(self, budget: int) -> int:
        fixed = self.constraints(0)
        return (budget - fixed) // (self.constraints(1) - fixed)


_FAMILIES = {
    "mimc": _Family(2, mimc_constraints, mimc_chain, mimc_witness),
    "merkle": _Family(1, lambda depth: merkle_constraints(depth, MERKLE_WIDTH),
                      lambda depth, seed: merkle_path(depth, MERKLE_WIDTH, seed),
                      lambda depth, seed: merkle_witness(depth, MERKLE_WIDTH, seed)),
    "bit_heavy": _Family(BIT_HEAVY_WORDS, lambda rounds: bit_heavy_constraints(BIT_HEAVY_WORDS, rounds),
                         lambda rounds, seed: bit_heavy(BIT_HEAVY_WORDS, rounds, seed),
                         lambda rounds, seed: bit_heavy_witness(BIT_HEAVY_WORDS, rounds, seed), BIT_HEAVY_TAIL),
}
CIRCUITS = tuple(_FAMILIES)


def build(name: str, log_constraints: int, seed: int = 0) -> tuple[R1CS, np.ndarray]:
    """Circuit ``name`` (one of CIRCUITS) with as many constraints as fit a proving domain
    of 2^log_constraints: at most 2^k - n_public - 1 (the prover adds n_public + 1 rows).
    mimc grows by rounds (3 constraints), merkle by levels of width MERKLE_WIDTH (38),
    bit_heavy by rounds over BIT_HEAVY_WORDS words (1568)."""
    family, steps = _family_steps(name, log_constraints)
    return family.make(steps, seed)


def witness(name: str, log_constraints: int, seed: int = 0) -> np.ndarray:
    """``build(name, log_constraints, seed)``'s witness, without building the R1CS (what a
    partition's synthesis needs: at 2^27 bit_heavy's R1CS is ~25 GB and its build peaks
    near twice that; the witness is 4.3 GB)."""
    family, steps = _family_steps(name, log_constraints)
    return family.witness(steps, seed)


def split_tail(name: str) -> int | None:
    """The bit/tail split's tail (groth16.prove.Prover's ``tail``) that every witness of
    circuit ``name`` fits: its scalars other than 0 and 1 are at most this many; None for
    circuits whose witnesses are dense (mimc, merkle), which the plain MSMs serve."""
    if name not in _FAMILIES:
        raise ValueError(f"unknown circuit {name!r}; one of {', '.join(CIRCUITS)}")
    return _FAMILIES[name].tail


def key_shape(name: str, log_constraints: int) -> KeyShape:
    """The proving key's shape (memory.KeyShape) of ``build(name, log_constraints)``
    without building it: wires and coefficients grow linearly in a family's steps, so
    builds of 1 and 2 steps give them (tests check it against real builds)."""
    family, steps = _family_steps(name, log_constraints)
    one, two = (family.make(k, 0)[0] for k in (1, 2))
    grow = lambda f: f(one) + (steps - 1) * (f(two) - f(one))  # noqa: E731
    return KeyShape(n_vars=grow(lambda r: r.n_wires), n_public=one.n_public, domain_size=1 << log_constraints,
                    coefficients=grow(lambda r: r.a.nnz + r.b.nnz) + one.n_public + 1)  # + A's public rows


def _family_steps(name: str, log_constraints: int) -> tuple[_Family, int]:
    if name not in _FAMILIES:
        raise ValueError(f"unknown circuit {name!r}; one of {', '.join(CIRCUITS)}")
    family = _FAMILIES[name]
    steps = family.steps_within((1 << log_constraints) - family.n_public - 1)
    if steps < 1:
        raise ValueError(f"2^{log_constraints} is too small for circuit {name!r}: it needs "
                         f"{family.constraints(1) + family.n_public + 1} constraints and public rows")
    return family, steps
