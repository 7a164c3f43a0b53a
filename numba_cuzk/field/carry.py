"""Montgomery multiplication and squaring as PTX carry chains (CUDA target only).

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

- mul, CIOS with four chains per limb b_i of b: t += lo(a*b_i); t += hi(a*b_i) << 32;
  m = t_0 * n0; t += lo(m*p); t = (t + hi(m*p) << 32) >> 32 with the shift done by
  register renaming. t < 2p between iterations, so the extra word t_N is always zero
  there and only lives inside an iteration. Cost: 4N^2 multiply-adds + 2N + N adds.
- sqr, product then reduce: off-diagonal products a_j*a_k (j < k) once, doubled by a
  shift chain, plus the diagonal; then N reduction steps on the low half, and the high
  half added at the end ((lo + M*p)/R + hi). Cost: ~3N^2 + 6N multiply-adds and adds.
- both end with one conditional subtraction of p (sub chain, borrow, select).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

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


class _Chain:
    """Emits one carry chain: the first op sets CF, the rest consume and set it."""

    def __init__(self, program: "_Program") -> None:
        self.program = program
        self.started = False

    def mad(self, half: str, dst: str, x: str, y: str, acc: str) -> None:
        opcode = f"madc.{half}.cc.u32" if self.started else f"mad.{half}.cc.u32"
        self.program.emit(opcode, dst, x, y, acc)
        self.started = True

    def add(self, dst: str, x: str, y: str, last: bool = False) -> None:
        if self.started:
            opcode = "addc.u32" if last else "addc.cc.u32"
        else:
            opcode = "add.u32" if last else "add.cc.u32"
        self.program.emit(opcode, dst, x, y)
        self.started = True


class _Program:
    """Register allocation and op list for one asm block."""

    def __init__(self, n: int) -> None:
        self.n = n
        self.ops: list[Op] = []
        self.temps = 0

    def temp(self) -> str:
        self.temps += 1
        return f"%t{self.temps - 1}"

    def emit(self, opcode: str, dst: str, *srcs: str) -> None:
        self.ops.append(Op(opcode, dst, tuple(srcs)))

    def chain(self) -> _Chain:
        return _Chain(self)

    def reduce_step(self, t: list, m_src: str, params: FieldParams) -> list:
        """t (N+1 words, t[N] may be None = 0) += m*p, then shift right one word.

        Returns the new t (N words; the word above is zero, see module docstring).
        """
        n, p = self.n, params.modulus_limbs
        m = self.temp()
        if params.n0 == 0xFFFFFFFF:  # Fr: -t0 * p^-1 = -t0 (p = 1 mod 2^32)
            self.emit("neg.s32", m, m_src)
        else:
            self.emit("mul.lo.u32", m, m_src, str(params.n0))
        lo = self.chain()
        for j in range(n):
            lo.mad("lo", t[j], m, str(p[j]), t[j])
        if t[n] is None:
            t[n] = self.temp()
            lo.add(t[n], ZERO, ZERO, last=True)
        else:
            lo.add(t[n], t[n], ZERO, last=True)
        hi = self.chain()
        shifted = [self.temp() for _ in range(n)]
        for j in range(n):
            hi.mad("hi", shifted[j], m, str(p[j]), t[j + 1])
        self.ops[-1] = Op("madc.hi.u32", shifted[n - 1], self.ops[-1].srcs)
        return shifted

    def final_subtract(self, t: list, out: list, params: FieldParams) -> None:
        """out = t - p if t >= p else t (t < 2p)."""
        diff = [self.temp() for _ in range(self.n)]
        for j in range(self.n):
            self.emit("subc.cc.u32" if j else "sub.cc.u32", diff[j], t[j], str(params.modulus_limbs[j]))
        borrow = self.temp()
        self.emit("subc.u32", borrow, ZERO, ZERO)
        self.emit("setp.ne.u32", "%keep", borrow, ZERO)
        for j in range(self.n):
            self.emit("selp.b32", out[j], t[j], diff[j], "%keep")


def _mul_ops(params: FieldParams, out: list, a: list, b: list) -> _Program:
    n = params.limbs
    prog = _Program(n)
    t = [prog.temp() for _ in range(n)] + [None]
    for i in range(n):
        lo = prog.chain()
        if i == 0:
            for j in range(n):
                prog.emit("mul.lo.u32", t[j], a[j], b[0])
        else:
            for j in range(n):
                lo.mad("lo", t[j], a[j], b[i], t[j])
            t[n] = prog.temp()
            lo.add(t[n], ZERO, ZERO, last=True)
        hi = prog.chain()
        if i == 0:
            t[n] = prog.temp()
        for j in range(n):
            acc = ZERO if (i == 0 and j == n - 1) else t[j + 1]
            hi.mad("hi", t[j + 1], a[j], b[i], acc)
        prog.ops[-1] = Op("madc.hi.u32", t[n], prog.ops[-1].srcs)
        t = prog.reduce_step(t, t[0], params) + [None]
    prog.final_subtract(t, out, params)
    return prog


def _sqr_ops(params: FieldParams, out: list, a: list) -> _Program:
    n = params.limbs
    prog = _Program(n)
    w: list = [None] * (2 * n)  # the 2N-word square; None = not yet written (zero)
    small: set = set()  # positions holding a lone carry bit, which absorb one more carry

    def accumulate(terms: list) -> None:
        """Add (position, half, x, y) terms at consecutive positions, carry onward."""
        chain = prog.chain()
        for pos, half, x, y in terms:
            acc = w[pos] if w[pos] is not None else ZERO
            if w[pos] is None:
                w[pos] = prog.temp()
            chain.mad(half, w[pos], x, y, acc)
            small.discard(pos)
        pos = terms[-1][0] + 1
        if pos == 2 * n:
            return
        if w[pos] is None:
            w[pos] = prog.temp()
            chain.add(w[pos], ZERO, ZERO, last=True)
            small.add(pos)
        elif pos in small:  # 1 + 1 fits: the carry stops here
            chain.add(w[pos], w[pos], ZERO, last=True)
            small.discard(pos)
        else:
            raise AssertionError("row layout must end on a fresh or carry-bit word")

    for j in range(n - 1):  # off-diagonal rows: a_j * a_k, k > j
        accumulate([(j + k, "lo", a[j], a[k]) for k in range(j + 1, n)])
        accumulate([(j + k + 1, "hi", a[j], a[k]) for k in range(j + 1, n)])
    double = prog.chain()  # w = 2w; w[0] is zero, the top word cannot overflow
    w[0] = prog.temp()
    for pos in range(1, 2 * n):
        double.add(w[pos], w[pos], w[pos], last=pos == 2 * n - 1)
    diagonal = prog.chain()
    for j in range(n):
        acc0 = ZERO if j == 0 else w[2 * j]
        diagonal.mad("lo", w[2 * j], a[j], a[j], acc0)
        diagonal.mad("hi", w[2 * j + 1], a[j], a[j], w[2 * j + 1])
    prog.ops[-1] = Op("madc.hi.u32", w[2 * n - 1], prog.ops[-1].srcs)
    t = w[:n] + [None]
    for _ in range(n):
        t = prog.reduce_step(t, t[0], params) + [None]
    high = prog.chain()
    for j in range(n):
        high.add(t[j], t[j], w[n + j], last=j == n - 1)
    prog.final_subtract(t, out, params)
    return prog


def _operands(n: int, inputs: int) -> tuple[list, list]:
    """Inline-asm operand names: outputs $0..$N-1, then each input's N limbs."""
    out = [f"${j}" for j in range(n)]
    ins = [[f"${n * (k + 1) + j}" for j in range(n)] for k in range(inputs)]
    return out, ins


@lru_cache(maxsize=None)
def mul_program(params: FieldParams) -> list[Op]:
    """Ops of out = a*b/R mod p; operands $0.. out, then a, then b (N limbs each)."""
    out, (a, b) = _operands(params.limbs, 2)
    return _mul_ops(params, out, a, b).ops


@lru_cache(maxsize=None)
def sqr_program(params: FieldParams) -> list[Op]:
    """Ops of out = a^2/R mod p; operands $0.. out, then a (N limbs each)."""
    out, (a,) = _operands(params.limbs, 1)
    return _sqr_ops(params, out, a).ops


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
def mul_intrinsic(params: FieldParams):
    """CUDA intrinsic mul(out, a, b): out = a*b/R mod p on uint32 limb arrays."""
    return _asm_intrinsic(params, mul_program(params), 2)


@lru_cache(maxsize=None)
def sqr_intrinsic(params: FieldParams):
    """CUDA intrinsic sqr(out, a): out = a^2/R mod p on uint32 limb arrays."""
    return _asm_intrinsic(params, sqr_program(params), 1)


def opaque(x):
    """x, hidden from the optimizer on CUDA (identity elsewhere).

    NVVM prices an asm block as one instruction, so it fully unrolls loops around
    mul/sqr: an inversion's 381 squarings became ~300k instructions and minutes of
    compile time. A loop bound passed through ``opaque`` stays a loop.
    """
    return x


def _register_opaque() -> None:
    from llvmlite import ir
    from numba import types
    from numba.core import extending as cpu_extending
    from numba.cuda import extending as cuda_extending

    @cuda_extending.intrinsic
    def _opaque_u32(typingctx, x):
        if x != types.uint32:
            return None

        def codegen(context, builder, signature, args):
            i32 = ir.IntType(32)
            asm = ir.InlineAsm(ir.FunctionType(i32, [i32]), "mov.u32 $0, $1;", "=r,r", side_effect=True)
            return builder.call(asm, args)

        return types.uint32(x), codegen

    cpu_extending.overload(opaque)(lambda x: lambda x: x)
    cuda_extending.overload(opaque)(lambda x: lambda x: _opaque_u32(x))


_register_opaque()
