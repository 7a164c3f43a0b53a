"""Montgomery arithmetic on 64-bit limbs with 128-bit products (CPU target only).

Why: the portable loops of mont.py hold 32-bit limbs in 64-bit words, so a 381-bit
product is 2 * 12^2 = 288 32x32-bit multiplies, each followed by a mask, a shift and a
64-bit add for its carry (87 ns per Fq product here: bench.field --cpu's
fq_mul_cpu_cios). x86-64 multiplies 64x64 -> 128 bits in one instruction and chains
carries with ``adc``. Numba has neither, so these are llvmlite intrinsics that emit LLVM IR on ``i128`` (a zero-extended ``mul nuw`` of two
i64 is one ``mul``/``mulx``; i128 adds become ``add``/``adc``) and, for additions,
subtractions and comparisons, on one integer of the whole element's width (i256/i384:
LLVM legalises them into ``sub``/``sbb`` chains). mont.py selects these for the CPU
target; CUDA keeps carry.py's PTX, the simulator the portable loops.

Layout: the project's uint32 limb arrays, unchanged. 64-bit limb k is 32-bit limbs
(2k, 2k+1), little-endian; the intrinsics load and store those pairs (one 64-bit access
where the array is contiguous, else two 32-bit ones: any stride) and load every input
before storing, so ``out`` may alias an input. R = 2^(64 * N/2) is the
same R as the 32-bit code's (2^256 for Fr, 2^384 for Fq).

Algorithms (n 64-bit limbs, w = 2^64, 2p < R):

- mul and sqr: Montgomery by product scanning (FIPS, Koc et al. 1996): column k of
  T + M p (T the product, M = sum m_k w^k) is summed in one i192 accumulator (add, adc,
  adc per product: LLVM keeps it in three registers), m_k = (column k mod w) * n0 is
  chosen for k < n, and each column's low word is shifted out (k < n: zero; k >= n:
  result word k - n). (T + M p) / R < 2p. mul: 2n^2 products; sqr: the cross products
  a_i a_j (i < j) once, doubled by a shift, plus the diagonal: n(n+1)/2 + n^2.
  Measured on this machine's EPYC (chained products, one core, under other load): Fq
  29.0 ns for mul as CIOS ("no-carry", gnark-crypto's) vs 28.7 as FIPS, sqr 28.5 (SOS) vs
  27.1; 64-bit stores took Fq mul from 32.9 to 29.0 ns and Fr from 17.5 to 13.7.
- both end with one conditional subtraction of p; add, sub and neg are whole-width adds
  and compares with a select (2p < R: no carry leaves the top word).
"""

from __future__ import annotations

from functools import lru_cache

from llvmlite import ir
from numba_cuzk import _compat  # noqa: F401,I001  (numba patched before its first use)
from numba import types
from numba.core import cgutils
from numba.core.extending import intrinsic

from numba_cuzk.field.params import FieldParams

WORD_BITS = 64
_I32 = ir.IntType(32)
_I64 = ir.IntType(64)
_I128 = ir.IntType(128)
_I192 = ir.IntType(192)


@lru_cache(maxsize=None)
def word_constants(params: FieldParams) -> tuple[tuple[int, ...], int]:
    """(p as little-endian 64-bit words, n0 = -p^-1 mod 2^64)."""
    n = params.limbs // 2
    words = tuple((params.modulus >> (WORD_BITS * k)) & ((1 << WORD_BITS) - 1) for k in range(n))
    n0 = (-pow(params.modulus, -1, 1 << WORD_BITS)) % (1 << WORD_BITS)
    assert 2 * params.modulus < 1 << (WORD_BITS * n), "results below 2p need a spare top bit"
    assert params.limbs % 2 == 0
    return words, n0


class _Emitter:
    """IR helpers over one builder: words are i64 values, wide values i(64n)."""

    def __init__(self, builder: ir.IRBuilder, params: FieldParams) -> None:
        self.b = builder
        self.p_words, self.n0 = word_constants(params)
        self.n = len(self.p_words)
        self.wide = ir.IntType(WORD_BITS * self.n)
        self.p_wide = ir.Constant(self.wide, params.modulus)

    def join(self, words: list):
        """One i(64n) value of n words."""
        b = self.b
        value = b.zext(words[0], self.wide)
        for k in range(1, self.n):
            value = b.or_(value, b.shl(b.zext(words[k], self.wide), ir.Constant(self.wide, WORD_BITS * k)))
        return value

    def split(self, value) -> list:
        b = self.b
        return [b.trunc(b.lshr(value, ir.Constant(self.wide, WORD_BITS * k)), _I64) for k in range(self.n)]

    def reduce_once(self, value):
        """value - p if value >= p else value, for value < 2p."""
        b = self.b
        return b.select(b.icmp_unsigned(">=", value, self.p_wide), b.sub(value, self.p_wide), value)

    def factor(self, low):
        """m = low * n0 mod w, so that low + m*p = 0 mod w."""
        return self.b.mul(low, ir.Constant(_I64, self.n0))

    def prime(self, j):
        return ir.Constant(_I64, self.p_words[j])

    def _column_sum(self, acc, products):
        """acc (i192) + the sum of x*y over (x, y) in products."""
        b = self.b
        for x, y in products:
            product = b.mul(b.zext(x, _I128), b.zext(y, _I128), flags=["nuw"])
            acc = b.add(acc, b.zext(product, _I192))
        return acc

    def _reduce_columns(self, column):
        """Product scanning (FIPS) Montgomery: column(k) -> the i192 sum of the product's
        terms of weight w^k (k < 2n - 1); returns (T + M p) / R as a wide value, T the
        product, M = sum m_k w^k chosen column by column."""
        n, b = self.n, self.b
        m = []
        t = []
        acc = ir.Constant(_I192, 0)
        shift = ir.Constant(_I192, WORD_BITS)
        for k in range(2 * n - 1):
            acc = b.add(acc, column(k))
            lo = max(0, k - n + 1)
            acc = self._column_sum(acc, [(m[i], self.prime(k - i)) for i in range(lo, min(k, n))])
            if k < n:
                m.append(self.factor(b.trunc(acc, _I64)))
                acc = self._column_sum(acc, [(m[k], self.prime(0))])
            else:
                t.append(b.trunc(acc, _I64))
            acc = b.lshr(acc, shift)
        t.append(b.trunc(acc, _I64))
        return self.join(t)

    def mul(self, a: list, b_: list):
        """a*b/R mod p, product scanning: one i192 accumulator (add, adc, adc per product)."""
        n = self.n
        zero = ir.Constant(_I192, 0)

        def column(k):
            return self._column_sum(zero, [(a[i], b_[k - i]) for i in range(max(0, k - n + 1), min(k, n - 1) + 1)])

        return self.reduce_once(self._reduce_columns(column))

    def sqr(self, a: list):
        """a^2/R mod p, product scanning: cross products once, doubled by a shift."""
        n, b = self.n, self.b
        zero = ir.Constant(_I192, 0)

        def column(k):
            lo, hi = max(0, k - n + 1), min(k, n - 1)
            cross = self._column_sum(zero, [(a[i], a[k - i]) for i in range(lo, hi + 1) if i < k - i])
            cross = b.shl(cross, ir.Constant(_I192, 1))
            return self._column_sum(cross, [(a[k // 2], a[k // 2])] if k % 2 == 0 else [])

        return self.reduce_once(self._reduce_columns(column))

    def add(self, x, y):
        return self.reduce_once(self.b.add(x, y))

    def sub(self, x, y):
        b = self.b
        borrow = b.icmp_unsigned("<", x, y)
        return b.add(b.sub(x, y), b.select(borrow, self.p_wide, ir.Constant(self.wide, 0)))

    def neg(self, x):
        b = self.b
        is_zero = b.icmp_unsigned("==", x, ir.Constant(self.wide, 0))
        return b.select(is_zero, x, b.sub(self.p_wide, x))


def _limb_pointers(context, builder, array_type, value, count: int) -> list:
    array = context.make_array(array_type)(context, builder, value)
    return [cgutils.get_item_pointer(context, builder, array_type, array, [context.get_constant(types.intp, j)])
            for j in range(count)]


def _load_words(context, builder, array_type, value, n: int) -> list:
    """n i64 words from 2n uint32 limbs (little-endian pairs); one 64-bit load each where
    the array is contiguous."""
    ptrs = _limb_pointers(context, builder, array_type, value, 2 * n)
    if array_type.layout == "C":
        return [builder.load(builder.bitcast(ptrs[2 * k], _I64.as_pointer()), align=4) for k in range(n)]
    shift = ir.Constant(_I64, 32)
    return [builder.or_(builder.zext(builder.load(ptrs[2 * k]), _I64),
                        builder.shl(builder.zext(builder.load(ptrs[2 * k + 1]), _I64), shift)) for k in range(n)]


def _store_words(context, builder, array_type, value, words: list) -> None:
    """The words into 2n uint32 limbs; one 64-bit store each where the array is contiguous
    (two 32-bit stores read back by one 64-bit load would stall store forwarding)."""
    ptrs = _limb_pointers(context, builder, array_type, value, 2 * len(words))
    shift = ir.Constant(_I64, 32)
    for k, word in enumerate(words):
        if array_type.layout == "C":
            builder.store(word, builder.bitcast(ptrs[2 * k], _I64.as_pointer()), align=4)
        else:
            builder.store(builder.trunc(word, _I32), ptrs[2 * k])
            builder.store(builder.trunc(builder.lshr(word, shift), _I32), ptrs[2 * k + 1])


def _is_limb_array(t) -> bool:
    return isinstance(t, types.Array) and t.dtype == types.uint32 and t.ndim == 1


def _wide_intrinsic(params: FieldParams, operation: str, inputs: int, as_words: bool):
    """A CPU intrinsic ``f(out, *inputs)`` on uint32 limb arrays: loads every input (as
    words, or as one wide value), runs ``_Emitter.<operation>``, stores the wide result."""

    def codegen(context, builder, signature, values):
        emit = _Emitter(builder, params)
        args = []
        for array_type, value in zip(signature.args[1:], values[1:]):
            words = _load_words(context, builder, array_type, value, emit.n)
            args.append(words if as_words else emit.join(words))
        result = getattr(emit, operation)(*args)
        _store_words(context, builder, signature.args[0], values[0], emit.split(result))
        return context.get_dummy_value()

    def typer(out, *args):
        if len(args) != inputs or not all(_is_limb_array(t) for t in (out, *args)):
            return None
        return types.void(out, *args), codegen

    if inputs == 2:
        return intrinsic(lambda typingctx, out, a, b: typer(out, a, b))
    return intrinsic(lambda typingctx, out, a: typer(out, a))


@lru_cache(maxsize=None)
def wide_ops(params: FieldParams) -> dict:
    """CPU intrinsics of ``params``, each on uint32 limb arrays, canonical Montgomery
    residues in and out: mul(out, a, b), sqr(out, a), add(out, a, b), sub(out, a, b),
    neg(out, a)."""
    return {
        "mul": _wide_intrinsic(params, "mul", 2, as_words=True),
        "sqr": _wide_intrinsic(params, "sqr", 1, as_words=True),
        "add": _wide_intrinsic(params, "add", 2, as_words=False),
        "sub": _wide_intrinsic(params, "sub", 2, as_words=False),
        "neg": _wide_intrinsic(params, "neg", 1, as_words=False),
    }
