"""Montgomery arithmetic on 64-bit limbs with 128-bit products (CPU target only).

Why: the portable loops of mont.py hold 32-bit limbs in 64-bit words, so a 381-bit
product is 2 * 12^2 = 288 32x32-bit multiplies, each followed by a mask, a shift and a
64-bit add for its carry (~110 ns on this machine's cores). x86-64 multiplies 64x64 ->
128 bits in one instruction and chains carries with ``adc``. Numba has neither, so these
are llvmlite intrinsics that emit LLVM IR on ``i128`` (a zero-extended ``mul nuw`` of two
i64 is one ``mul``/``mulx``; i128 adds become ``add``/``adc``) and, for additions,
subtractions and comparisons, on one integer of the whole element's width (i256/i384:
LLVM legalises them into ``sub``/``sbb`` chains). mont.py selects these for the CPU
target; CUDA keeps carry.py's PTX, the simulator the portable loops.

Layout: the project's uint32 limb arrays, unchanged. 64-bit limb k is 32-bit limbs
(2k, 2k+1), little-endian; the intrinsics load and store those pairs, any stride, and
load every input before storing, so ``out`` may alias an input. R = 2^(64 * N/2) is the
same R as the 32-bit code's (2^256 for Fr, 2^384 for Fq).

Algorithms (n 64-bit limbs, w = 2^64; both moduli's top word is < (w-1)/2 - 1):

- mul: CIOS without the extra top words (the "no-carry" variant of gnark-crypto's
  Montgomery multiplication, valid for such a top word): per limb b_i, one chain adds
  a*b_i and another m*p with m = t_0 * n0 mod w, shifting by one word as it goes; t < 2p
  after each row. 2n^2 products.
- sqr: the product first (cross products a_j a_k, j < k, once, doubled by a shift, plus
  the diagonal: n(n+1)/2 products), then n reduction rows of m*p (n^2 products);
  (a^2 + M p) / R < 2p.
- both end with one conditional subtraction of p; add, sub and neg are whole-width adds
  and compares with a select (2p < R: no carry leaves the top word).
"""

from __future__ import annotations

from functools import lru_cache

from llvmlite import ir
from numba import types
from numba.core import cgutils
from numba.core.extending import intrinsic

from numba_cuzk.field.params import FieldParams

WORD_BITS = 64
_I32 = ir.IntType(32)
_I64 = ir.IntType(64)
_I128 = ir.IntType(128)


@lru_cache(maxsize=None)
def word_constants(params: FieldParams) -> tuple[tuple[int, ...], int]:
    """(p as little-endian 64-bit words, n0 = -p^-1 mod 2^64)."""
    n = params.limbs // 2
    words = tuple((params.modulus >> (WORD_BITS * k)) & ((1 << WORD_BITS) - 1) for k in range(n))
    n0 = (-pow(params.modulus, -1, 1 << WORD_BITS)) % (1 << WORD_BITS)
    assert words[-1] < ((1 << WORD_BITS) - 1) // 2 - 1, "the no-carry CIOS needs a spare top bit and more"
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

    def mac(self, x, y, *terms):
        """(hi, lo) words of x*y + sum(terms) (x None: no product; None terms = 0).
        Callers keep it below 2^128: (w-1)^2 + 2(w-1) = w^2 - 1."""
        b = self.b
        acc = None
        if x is not None:
            acc = b.mul(b.zext(x, _I128), b.zext(y, _I128), flags=["nuw"])
        for term in terms:
            if term is not None:
                wide = b.zext(term, _I128)
                acc = wide if acc is None else b.add(acc, wide, flags=["nuw"])
        return b.trunc(b.lshr(acc, ir.Constant(_I128, WORD_BITS)), _I64), b.trunc(acc, _I64)

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

    def mul(self, a: list, b_: list):
        """a*b/R mod p as a wide value in [0, p); no-carry CIOS."""
        n = self.n
        t = [None] * n
        for i in range(n):
            carry_a, t[0] = self.mac(a[0], b_[i], t[0])
            m = self.factor(t[0])
            carry_m, _ = self.mac(m, self.prime(0), t[0])
            for j in range(1, n):
                carry_a, t[j] = self.mac(a[j], b_[i], t[j], carry_a)
                carry_m, t[j - 1] = self.mac(m, self.prime(j), t[j], carry_m)
            t[n - 1] = self.b.add(carry_a, carry_m)
        return self.reduce_once(self.join(t))

    def sqr(self, a: list):
        """a^2/R mod p as a wide value in [0, p): product, then n reduction rows."""
        n, b = self.n, self.b
        cross = [None] * (2 * n)
        for j in range(n - 1):  # row j: cross[j+k] += a_j a_k for k > j, carry into cross[j+n]
            carry = None
            for k in range(j + 1, n):
                carry, cross[j + k] = self.mac(a[j], a[k], cross[j + k], carry)
            cross[j + n] = carry
        zero = ir.Constant(_I64, 0)
        cross = [zero if w is None else w for w in cross]
        one, top = ir.Constant(_I64, 1), ir.Constant(_I64, WORD_BITS - 1)
        doubled = [b.shl(cross[0], one)]
        doubled += [b.or_(b.shl(cross[k], one), b.lshr(cross[k - 1], top)) for k in range(1, 2 * n)]
        t, carry = [], None
        for j in range(n):  # t = doubled + sum a_j^2 w^(2j); a^2 < w^(2n): the last carry is 0
            hi, lo = self.mac(a[j], a[j], doubled[2 * j], carry)
            carry, hi = self.mac(None, None, doubled[2 * j + 1], hi)
            t += [lo, hi]
        pending = None  # carry into t[i + n] left by the previous row
        for i in range(n):
            m = self.factor(t[i])
            carry, _ = self.mac(m, self.prime(0), t[i])
            for j in range(1, n):
                carry, t[i + j] = self.mac(m, self.prime(j), t[i + j], carry)
            pending, t[i + n] = self.mac(None, None, t[i + n], carry, pending)  # hi <= 2
        return self.reduce_once(self.join(t[n:]))

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
    """n i64 words from 2n uint32 limbs (little-endian pairs)."""
    ptrs = _limb_pointers(context, builder, array_type, value, 2 * n)
    shift = ir.Constant(_I64, 32)
    return [builder.or_(builder.zext(builder.load(ptrs[2 * k]), _I64),
                        builder.shl(builder.zext(builder.load(ptrs[2 * k + 1]), _I64), shift)) for k in range(n)]


def _store_words(context, builder, array_type, value, words: list) -> None:
    ptrs = _limb_pointers(context, builder, array_type, value, 2 * len(words))
    shift = ir.Constant(_I64, 32)
    for k, word in enumerate(words):
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
