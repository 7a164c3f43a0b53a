"""Montgomery arithmetic as PTX carry chains (CUDA target only): mul, sqr, add, sub, neg,
and the lazy add, sub and mul with their reduce.

Why: Numba has no add-with-carry, so the portable code in mont.py spends ~3 instructions
per 32x32-bit partial product (wide multiply, then a 64-bit add for the carry). PTX's
``mad.lo.cc`` / ``madc.hi.cc`` fold the carry into the multiply-add, one instruction per
half product, which is what hand-written CUDA libraries do. This module generates those
chains from the modulus, so the whole multiplication is one ``asm`` block that ptxas
schedules and register-allocates.

The generator produces a list of ``Op``; ``render`` turns it into PTX text. The same list
can be executed on Python integers (tests/field/test_carry.py) to check the algorithm
without a GPU. None of this runs in the simulator or on the CPU: mont.py registers these
intrinsics for the CUDA target only and uses its portable loops elsewhere.

Algorithms (N limbs of 32 bits, w = 2^32, R = w^N, both moduli have a spare top bit so
2p < R; inputs and outputs canonical, in [0, p)):

- Every chain adds whole products: lo and hi of one 32x32 product sit next to each other
  (``mad.lo.cc`` then ``madc.hi.cc`` into adjacent words), so ptxas emits one
  ``IMAD.WIDE.U32.X`` per product on sm_90, and a product x*b lands as two chains: x's
  even limbs, then its odd limbs. Those two chains pair words (0,1), (2,3), ... and
  (1,2), (3,4), ...; kept in one accumulator, a word would be the high half of one
  register pair and the low half of the next, and ptxas re-pairs them with a MOV per
  product. So sums live in two accumulators, one per pairing (with the lo and hi chains
  apart, each half product took an IMAD and an IADD3.X).
- mul, CIOS with two accumulators t = P + Q: per limb b_i of b, P and Q take a*b_i's
  even and odd limbs; m = (P_0 + Q_0) * n0 mod w; they take m*p's; the shift by one
  word swaps them (see _mul_ops). t < 2p between steps, so word N only lives inside a
  step and no chain carries past it. Cost: 2N^2 wide multiply-adds + ~4N adds.
- sqr, product then reduce: off-diagonal products a_j*a_k (j < k) once, doubled by
  shift chains, plus the diagonal; then mul's reduction steps on the low half, and the
  high half added at the end ((lo + M*p)/R + hi < 2p). Cost: ~1.5N^2 wide
  multiply-adds + ~10N adds.
- both end with one conditional subtraction of p (sub chain, borrow, select).
- add, sub, neg: one chain each, then a selection or a masked p (~3N instructions
  against ~7N for mont.py's uint64 loops, whose carries ptxas rebuilds with shifts).
- Fr's p = 1 + (w - 1) w + ...: its two lowest limbs enter each reduction step as added
  words, not products (_reduction_terms).
- lazy (add_lazy, sub_lazy, mul_lazy): values in [0, 2p) instead of [0, p), for chains
  of operations that reduce once at the end (the NTT): mul_lazy drops the final
  subtraction, add and sub work modulo 2p, reduce brings a value to [0, p).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache, partial

from numba_cuzk.field.params import FieldParams

ZERO = "0"  # immediate zero operand


@dataclass(frozen=True)
class Op:
    """One PTX instruction: ``opcode dst, srcs...``; sources are register names or
    immediates (decimal strings)."""

    opcode: str
    dst: str
    srcs: tuple

    def ptx(self) -> str:
        return f"{self.opcode} {', '.join((self.dst, *self.srcs))};"


MASK = 0xFFFFFFFF


class _Chain:
    """Emits one carry chain: the first op sets CF, the rest consume and set it."""

    def __init__(self, program: "_Program") -> None:
        self.program = program
        self.started = False

    def op(self, base: str, dst: str, *srcs: str) -> None:
        """``base`` is mad.lo, mad.hi or add; the chain picks the carry-in/out form."""
        kind, _, half = base.partition(".")
        opcode = f"{kind}c" if self.started else kind
        self.program.emit(f"{opcode}{'.' + half if half else ''}.cc.u32", dst, *srcs)
        self.started = True

    def close(self) -> None:
        """Drop the carry-out of the last op (the caller proved it is zero)."""
        last = self.program.ops[-1]
        self.program.ops[-1] = Op(last.opcode.replace(".cc", ""), last.dst, last.srcs)


class _Program:
    """Op list and temporaries of one asm block."""

    def __init__(self) -> None:
        self.ops: list[Op] = []
        self.temps = 0

    def temp(self) -> str:
        self.temps += 1
        return f"%t{self.temps - 1}"

    def emit(self, opcode: str, dst: str, *srcs: str) -> None:
        self.ops.append(Op(opcode, dst, tuple(srcs)))


@dataclass(frozen=True)
class _Words:
    """Two words (registers or immediates) to add at adjacent positions of a chain, where
    the other entries are products (lo, hi)."""

    lo: str
    hi: str


class _Accumulator:
    """A multiword sum built by carry chains: words[k] is a register or None (zero),
    bounds[k] an upper bound on its value, used to stop carry propagation early."""

    def __init__(self, program: _Program, size: int) -> None:
        self.program = program
        self.words: list = [None] * size
        self.bounds = [0] * size

    def add_products(self, pos: int, pairs: list, fits: bool = False, carry_if: str | None = None) -> None:
        """Add x*y * w^(pos + 2k) for the k-th (x, y) pair, in one chain (a ``_Words``
        pair instead adds its two words there).

        lo and hi of each product are adjacent in the chain, which lets ptxas fuse them
        into one wide multiply-add with carry (IMAD.WIDE.U32.X on sm_90) instead of a
        multiply plus a carry add per half. The chain's carry then enters the next word;
        ``fits`` says the caller proved it stops there (the whole sum fits the words).
        ``carry_if``: a register whose being nonzero is a carry into word ``pos``.
        """
        chain = _Chain(self.program)
        if carry_if is not None:  # CF = (carry_if != 0): carry_if + (w - 1) overflows iff so
            chain.op("add", self.program.temp(), carry_if, str(MASK))
        for pair in pairs:
            for half in ("lo", "hi"):
                acc = self.words[pos] if self.words[pos] is not None else ZERO
                if self.words[pos] is None:
                    self.words[pos] = self.program.temp()
                if isinstance(pair, _Words):
                    chain.op("add", self.words[pos], acc, pair.lo if half == "lo" else pair.hi)
                else:
                    chain.op(f"mad.{half}", self.words[pos], *pair, acc)
                self.bounds[pos] = MASK
                pos += 1
        self._carry(chain, pos, fits)

    def add_words(self, pos: int, sources: list, fits: bool = False, carry_if: str | None = None) -> None:
        """Add the registers ``sources`` at consecutive words from ``pos``, in one chain
        (``carry_if`` as in add_products)."""
        chain = _Chain(self.program)
        if carry_if is not None:
            chain.op("add", self.program.temp(), carry_if, str(MASK))
        for src in sources:
            acc = self.words[pos] if self.words[pos] is not None else ZERO
            if self.words[pos] is None:
                self.words[pos] = self.program.temp()
            chain.op("add", self.words[pos], acc, src)
            self.bounds[pos] = MASK
            pos += 1
        self._carry(chain, pos, fits)

    def _carry(self, chain: _Chain, pos: int, fits: bool) -> None:
        while pos < len(self.words):
            if self.words[pos] is None:
                self.words[pos] = self.program.temp()
                chain.op("add", self.words[pos], ZERO, ZERO)
                self.bounds[pos] = 1
                break
            chain.op("add", self.words[pos], self.words[pos], ZERO)
            if fits or self.bounds[pos] < MASK:
                self.bounds[pos] = min(MASK, self.bounds[pos] + 1)
                break
            pos += 1
        chain.close()


def _even_odd_products(x_limbs: list, y: str) -> tuple[list, list]:
    """x*y as two chains of (x_j, y) pairs: even j (lands at words 0, 1, 2, ...) and odd j
    (lands at words 1, 2, 3, ...)."""
    pairs = [(x, y) for x in x_limbs]
    return pairs[0::2], pairs[1::2]


def _reduction_terms(prog: _Program, low: str, params: FieldParams) -> tuple[list, list]:
    """m = -low / p mod w and the terms of m*p for P (even limbs of p, from word 0) and Q
    (odd limbs, from word 1), as add_products takes them.

    Fr's p = 1 + (w - 1) w + ...: m*1 is (m, 0), and m (w - 1) = (w - m) + (m - 1) w is
    (low, m - [low != 0]) as m = -low: words to add, not products, so a reduction step
    takes 14 wide multiply-adds, not 16 (the multiply pipe is what Fr's product waits
    on). Q's terms may read low, which may be P's word 0: callers add
    them before P's."""
    m = _reduction_factor(prog, low, params)
    pairs = [(m, str(x)) for x in params.modulus_limbs]
    if params.n0 == MASK and tuple(params.modulus_limbs[:2]) == (1, MASK):
        high = prog.temp()  # m minus the borrow of m = 0 - low: m - 1 unless low = 0
        prog.emit("subc.u32", high, m, ZERO)
        pairs[0], pairs[1] = _Words(m, ZERO), _Words(low, high)
    return pairs[0::2], pairs[1::2]


def _final_subtract(prog: _Program, t: list, out: list, modulus: list, carry: str = ZERO) -> None:
    """out = t - q if t >= q else t, for t < 2q (q: ``modulus``'s limbs, p or 2p), where
    t = carry R + (t's limbs) with ``carry`` a register holding 0 or 1 (t - q then
    borrows iff carry is 1: keep t only where the borrow exceeds the carry)."""
    n = len(modulus)
    diff = [prog.temp() for _ in range(n)]
    for j in range(n):
        prog.emit("subc.cc.u32" if j else "sub.cc.u32", diff[j], t[j], str(modulus[j]))
    borrow = prog.temp()
    prog.emit("subc.u32", borrow, carry, ZERO)
    prog.emit("setp.ne.u32", "%keep", borrow, ZERO)
    for j in range(n):
        prog.emit("selp.b32", out[j], t[j], diff[j], "%keep")


def _twice(params: FieldParams) -> list:
    """The limbs of 2p, the lazy operations' modulus (2p < R: both moduli have a spare bit)."""
    return [(2 * params.modulus >> (32 * j)) & MASK for j in range(params.limbs)]


def _add_ops(params: FieldParams, out: list, a: list, b: list, lazy: bool = False) -> _Program:
    """out = a + b mod p: one add chain (a + b < 2p < R: no carry out), then the final
    subtraction. lazy: a, b, out in [0, 2p), 2p subtracted; a + b < 4p may reach R (Fr:
    4p ~ 1.8 R), so the chain's carry out takes part in the comparison."""
    n = params.limbs
    prog = _Program()
    t = [prog.temp() for _ in range(n)]
    chain = _Chain(prog)
    for j in range(n):
        chain.op("add", t[j], a[j], b[j])
    if not lazy:
        chain.close()
        _final_subtract(prog, t, out, params.modulus_limbs)
        return prog
    carry = prog.temp()
    chain.op("add", carry, ZERO, ZERO)
    chain.close()
    _final_subtract(prog, t, out, _twice(params), carry)
    return prog


def _sub_ops(params: FieldParams, out: list, a: list, b: list, lazy: bool = False) -> _Program:
    """out = a - b mod p: a subtract chain, its borrow bit times p's limbs added back by a
    mad.lo chain (its carry out, set exactly when it wrapped, unused). lazy: a, b, out in
    [0, 2p), 2p added back."""
    n = params.limbs
    prog = _Program()
    t = [prog.temp() for _ in range(n)]
    for j in range(n):
        prog.emit("subc.cc.u32" if j else "sub.cc.u32", t[j], a[j], b[j])
    borrow = prog.temp()
    prog.emit("subc.u32", borrow, ZERO, ZERO)
    bit = prog.temp()
    prog.emit("and.b32", bit, borrow, "1")
    modulus = _twice(params) if lazy else params.modulus_limbs
    chain = _Chain(prog)
    for j in range(n):
        chain.op("mad.lo", out[j], bit, str(modulus[j]), t[j])
    return prog


def _neg_ops(params: FieldParams, out: list, a: list) -> _Program:
    """out = p - a, or 0 for a = 0 (not p): a subtract chain from p's limbs, selected by
    whether any limb of a is nonzero."""
    n = params.limbs
    prog = _Program()
    any_limb = a[0]
    for j in range(1, n):
        merged = prog.temp()
        prog.emit("or.b32", merged, any_limb, a[j])
        any_limb = merged
    prog.emit("setp.ne.u32", "%keep", any_limb, ZERO)
    t = []
    for j in range(n):
        limb, diff = prog.temp(), prog.temp()
        prog.emit("mov.u32", limb, str(params.modulus_limbs[j]))
        prog.emit("subc.cc.u32" if j else "sub.cc.u32", diff, limb, a[j])
        t.append(diff)
    for j in range(n):
        prog.emit("selp.b32", out[j], t[j], ZERO, "%keep")
    return prog


def _mul_ops(params: FieldParams, out: list, a: list, b: list, lazy: bool = False) -> _Program:
    """CIOS with two accumulators, t = P + Q (+ a pending carry into word 0).

    P's products pair words (0,1), (2,3), ...; Q's pair (1,2), (3,4), ... and Q_0 stands
    alone. So every (lo, hi) pair stays one aligned register pair for ptxas (one
    accumulator made it re-pair words with MOVs). Per limb b_i: P += even limbs of a*b_i,
    Q += odd ones; m = (P_0 + Q_0) * n0; P, Q += even, odd limbs of m*p. Then
    P_0 + Q_0 is 0 or w: a carry of (Q_0 != 0) into word 1, taken in by the next chain.
    The shift by one word swaps the roles: P' = Q / w, Q' = P / w (pairs stay aligned).
    t < 2p < w^N between steps (so P, Q < w^N), and each chain's carry stops at word N.

    lazy: a canonical, b in [0, 2p), out in [0, 2p) without the final subtraction. Each
    step keeps t < a + p < 2p (a's bound: b enters one limb at a time), and the result
    a b / R + p < 2p^2 / R + p < 2p as 2p < R. (Both in [0, 2p) would not do for Fr:
    4p ~ 1.8 R.)
    """
    n = params.limbs
    prog = _Program()
    p_acc, q_acc = _Accumulator(prog, n + 1), _Accumulator(prog, n + 1)
    pending = None  # register whose nonzero-ness is a carry into word 0
    for i in range(n):
        even, odd = _even_odd_products(a, b[i])
        p_acc.add_products(0, even, fits=True, carry_if=pending)
        q_acc.add_products(1, odd, fits=True)
        low = p_acc.words[0]
        if q_acc.words[0] is not None:
            low = prog.temp()
            prog.emit("add.u32", low, p_acc.words[0], q_acc.words[0])
        even, odd = _reduction_terms(prog, low, params)
        q_acc.add_products(1, odd, fits=True)  # Q first: it may read low, P's word 0
        p_acc.add_products(0, even, fits=True)
        pending = q_acc.words[0]
        p_acc, q_acc = _shifted(q_acc), _shifted(p_acc)
    total = _Accumulator(prog, n)
    total.words = list(p_acc.words[:n])
    total.add_words(0, [w if w is not None else ZERO for w in q_acc.words[:n]], fits=True, carry_if=pending)
    if lazy:
        for j in range(n):
            prog.emit("mov.b32", out[j], total.words[j])
    else:
        _final_subtract(prog, total.words, out, params.modulus_limbs)
    return prog


def _reduce_ops(params: FieldParams, out: list, a: list) -> _Program:
    """out = a mod p for a in [0, 2p) (a lazy operation's result): one final subtraction."""
    prog = _Program()
    _final_subtract(prog, a, out, params.modulus_limbs)
    return prog


def _reduction_factor(prog: _Program, low: str, params: FieldParams) -> str:
    """m = -low / p mod w, so that low + m*p = 0 mod w."""
    m = prog.temp()
    if params.n0 == MASK:  # Fr: p = 1 mod 2^32, so m = -low
        # as 0 - low with a carry-out (nothing reads it: every chain after this starts its
        # own): ptxas 13.0 rewrites a plain neg's products m * p_k into IMAD.X + IMAD.HI.X
        # pairs, two instructions per product instead of one IMAD.WIDE.X
        prog.emit("sub.cc.u32", m, ZERO, low)
    else:
        prog.emit("mul.lo.u32", m, low, str(params.n0))
    return m


def _shifted(acc: _Accumulator) -> _Accumulator:
    """acc / w: word k+1 becomes word k (word 0 must be consumed by the caller)."""
    acc.words = acc.words[1:] + [None]
    acc.bounds = acc.bounds[1:] + [0]
    return acc


def _sqr_ops(params: FieldParams, out: list, a: list) -> _Program:
    """a^2 = 2 * sum_{j<k} a_j a_k w^(j+k) + sum_j a_j^2 w^(2j), then Montgomery
    reduction of the low half, plus the high half: (lo + M*p)/R + hi < 2p.

    As in mul, products whose lo half lands on an even word go to accumulator E, the
    others to O, so register pairs stay aligned; the reduction continues mul's P/Q
    scheme from E's and O's low halves.
    """
    n = params.limbs
    prog = _Program()
    even_acc, odd_acc = _Accumulator(prog, 2 * n), _Accumulator(prog, 2 * n)
    for j in range(n - 1):
        for first in (j + 1, j + 2):  # a_j * a_k for k of one parity: adjacent (lo, hi)
            ks = list(range(first, n, 2))
            if ks:
                target = even_acc if (j + first) % 2 == 0 else odd_acc
                target.add_products(j + first, [(a[j], a[k]) for k in ks])
    for acc in (even_acc, odd_acc):  # double the cross products
        acc.words = [w if w is not None else ZERO for w in acc.words]
        chain = _Chain(prog)
        for pos in range(2 * n):
            if acc.words[pos] != ZERO:
                chain.op("add", acc.words[pos], acc.words[pos], acc.words[pos])
            elif chain.started:
                acc.words[pos] = prog.temp()
                chain.op("add", acc.words[pos], ZERO, ZERO)
        chain.close()
        acc.words = [None if w == ZERO else w for w in acc.words]
        acc.bounds = [MASK] * (2 * n)
    even_acc.add_products(0, [(a[j], a[j]) for j in range(n)], fits=True)
    p_acc, q_acc = _Accumulator(prog, n + 1), _Accumulator(prog, n + 1)
    p_acc.words, q_acc.words = even_acc.words[:n] + [None], odd_acc.words[:n] + [None]
    pending = None
    for _ in range(n):
        low = prog.temp()  # word 0 of P + Q + carry, which m must cancel
        if pending is not None:
            prog.emit("add.cc.u32", prog.temp(), pending, str(MASK))
            prog.emit("addc.cc.u32", low, p_acc.words[0], q_acc.words[0] or ZERO)  # CF unread
        else:
            prog.emit("add.u32", low, p_acc.words[0], q_acc.words[0] or ZERO)
        even, odd = _reduction_terms(prog, low, params)
        q_acc.add_products(1, odd, fits=True)  # Q first, as in mul
        p_acc.add_products(0, even, fits=True, carry_if=pending)
        pending = q_acc.words[0]
        p_acc, q_acc = _shifted(q_acc), _shifted(p_acc)
    total = _Accumulator(prog, n)
    total.words = [w if w is not None else ZERO for w in even_acc.words[n:]]
    total.words = [None if w == ZERO else w for w in total.words]
    for half in (odd_acc.words[n:], p_acc.words[:n], q_acc.words[:n]):
        total.add_words(0, [w if w is not None else ZERO for w in half], fits=True, carry_if=pending)
        pending = None
    _final_subtract(prog, total.words, out, params.modulus_limbs)
    return prog


def _operands(n: int, inputs: int) -> tuple[list, list]:
    """Inline-asm operand names: outputs $0..$N-1, then each input's N limbs."""
    out = [f"${j}" for j in range(n)]
    ins = [[f"${n * (k + 1) + j}" for j in range(n)] for k in range(inputs)]
    return out, ins


# name -> (op builder, inputs): out = a + b, a - b, -a, a*b/R, a^2/R (mod p); the lazy add,
# sub and mul (inputs and out in [0, 2p)), and reduce ([0, 2p) -> [0, p))
_OPERATIONS = {"add": (_add_ops, 2), "sub": (_sub_ops, 2), "neg": (_neg_ops, 1), "mul": (_mul_ops, 2),
               "sqr": (_sqr_ops, 1), "add_lazy": (partial(_add_ops, lazy=True), 2),
               "sub_lazy": (partial(_sub_ops, lazy=True), 2), "mul_lazy": (partial(_mul_ops, lazy=True), 2),
               "reduce": (_reduce_ops, 1)}


@lru_cache(maxsize=None)
def program(params: FieldParams, operation: str) -> list[Op]:
    """Ops of ``operation`` (a key of _OPERATIONS); operands $0.. out, then each input's N
    limbs (a, then b)."""
    build, inputs = _OPERATIONS[operation]
    out, ins = _operands(params.limbs, inputs)
    return build(params, out, *ins).ops


def render(ops: list[Op]) -> str:
    """PTX text of one asm block, its temporaries declared in a local scope."""
    temps = {r for op in ops for r in (op.dst, *op.srcs) if r.startswith("%t")}
    count = 1 + max(int(r[2:]) for r in temps)
    lines = ["{", f".reg .u32 %t<{count}>;", ".reg .pred %keep;"]
    lines += [op.ptx() for op in ops]
    lines.append("}")
    return "\n\t".join(lines)


def _asm_intrinsic(params: FieldParams, ops: list[Op], inputs: int):
    """A CUDA intrinsic ``f(out, *inputs)`` over uint32 limb arrays running one asm block."""
    from llvmlite import ir
    from numba import types
    from numba.core import cgutils
    from numba.cuda.extending import intrinsic

    n = params.limbs
    i32 = ir.IntType(32)
    asm_type = ir.FunctionType(ir.LiteralStructType([i32] * n), [i32] * (n * inputs))
    constraints = ",".join(["=r"] * n + ["r"] * (n * inputs))
    asm = ir.InlineAsm(asm_type, render(ops), constraints, side_effect=False)

    def limb_pointers(context, builder, array_type, value):
        array = context.make_array(array_type)(context, builder, value)
        return [
            cgutils.get_item_pointer(context, builder, array_type, array, [context.get_constant(types.intp, j)])
            for j in range(n)
        ]

    def typer(typingctx, out, *args):
        if len(args) != inputs or not all(isinstance(t, types.Array) and t.dtype == types.uint32 for t in (out, *args)):
            return None
        return types.void(out, *args), codegen

    def codegen(context, builder, signature, values):
        sources = []
        for array_type, value in zip(signature.args[1:], values[1:]):
            sources += [builder.load(ptr) for ptr in limb_pointers(context, builder, array_type, value)]
        result = builder.call(asm, sources)
        for j, ptr in enumerate(limb_pointers(context, builder, signature.args[0], values[0])):
            builder.store(builder.extract_value(result, j), ptr)
        return context.get_dummy_value()

    if inputs == 2:
        return intrinsic(lambda typingctx, out, a, b: typer(typingctx, out, a, b))
    return intrinsic(lambda typingctx, out, a: typer(typingctx, out, a))


@lru_cache(maxsize=None)
def intrinsic(params: FieldParams, operation: str):
    """CUDA intrinsic ``operation``(out, a[, b]) running ``program``'s asm block on uint32
    limb arrays."""
    return _asm_intrinsic(params, program(params, operation), _OPERATIONS[operation][1])


def opaque(x):
    """x, hidden from the optimizer on CUDA (identity elsewhere).

    NVVM prices an asm block as one instruction, so it fully unrolls loops around
    mul/sqr: an inversion's 381 squarings became ~300k instructions and minutes of
    compile time. A loop bound passed through ``opaque`` stays a loop.
    """
    return x


def _register_opaque() -> None:
    from numba_cuzk.field.target import cuda_overload  # noqa: I001  (numba patched there first)
    from numba.core import extending

    extending.overload(opaque)(lambda x: lambda x: x)
    cuda_overload(opaque)(_opaque_cuda)


def _opaque_cuda(x):
    """``opaque``'s CUDA typer: a move of x through an asm block."""
    move = _opaque_u32()
    return lambda x: move(x)


@lru_cache(maxsize=None)
def _opaque_u32():
    """The CUDA intrinsic uint32 -> uint32 that ``opaque`` lowers to, made when a kernel
    first types ``opaque`` (an intrinsic needs numba.cuda)."""
    from llvmlite import ir
    from numba import types
    from numba.cuda.extending import intrinsic

    @intrinsic
    def opaque_u32(typingctx, x):
        if x != types.uint32:
            return None

        def codegen(context, builder, signature, args):
            i32 = ir.IntType(32)
            asm = ir.InlineAsm(ir.FunctionType(i32, [i32]), "mov.u32 $0, $1;", "=r,r", side_effect=True)
            return builder.call(asm, args)

        return types.uint32(x), codegen

    return opaque_u32


_register_opaque()
