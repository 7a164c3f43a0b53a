"""Fq's Montgomery product in x86-64 assembly with two carry chains (mulx, adcx, adox).

Why: wide.py's product is LLVM's code for i128 arithmetic, one carry chain (add, adc, adc
per partial product) and p's words reloaded as immediates: ~500 instructions, 29.5 ns a
chained product on the dev box's EPYC (~120 cycles). ADX's adcx and adox add with the
carry flag and the overflow flag alone, so a row of partial products adds its low halves
on one chain and its high halves on the other, and mulx takes p's words from memory:
~300 instructions, 22.6 ns. The CPU MSM's bucket sums are ~75% Fq products.

ADX is not in x86-64-v3 (the portable level the CPU kernels compile for: kernel_cache
cpu_isa), so this code is never inlined into a cached kernel: curve/target.field_call binds
Fq's product symbol to a cfunc built on it only where ``available()`` (the host has ADX
and BMI2, and $NUMBA_CUZK_ADX is not 0), and to wide.py's elsewhere. LLVM assembles
inline assembly whatever the target's features, so both cfuncs compile on any x86-64.

Algorithm: CIOS (Koc, Acar, Kaliski 1996) without the final carry word, which p allows
(its top word < 2^63 - 1: every intermediate t < 2p fits n words plus the row's carry
word A); per row i: t += a * b_i (A: the row's top word), then m = t_0 n0 mod 2^64 and
t = (t + m p) / 2^64. The logical words t_0 .. t_(n-1), A rotate through eight registers
instead of moving: after a row, t_1 .. A are the new t_0 .. t_(n-1), and the old t_0
(now zero) holds the next row's A. One conditional subtraction of p at the end.
"""

from __future__ import annotations

import os
import platform
from functools import lru_cache

from llvmlite import ir
from numba_cuzk import _compat  # noqa: F401,I001  (numba patched before its first use)
from numba import types
from numba.core.extending import intrinsic

from numba_cuzk.field.params import FieldParams
from numba_cuzk.field.wide import word_constants

ENV = "NUMBA_CUZK_ADX"  # "0": wide.py's product even where the host has ADX
X86_64 = platform.machine() in ("x86_64", "AMD64")  # where the assembly assembles
_I64 = ir.IntType(64)
# t_0 .. t_(n-1), A, then H (a product's high word); rax and rdx are mulx's; the operands
# (out, a, b, constants) get four of the registers left
_WORDS = ("%r8", "%r9", "%r10", "%r11", "%r12", "%r13", "%r14", "%r15")
_CLOBBERS = ("rax", "rdx", *(r[1:] for r in _WORDS), "memory", "dirflag", "fpsr", "flags")


def available() -> bool:
    """Whether this process binds Fq's product to the ADX code: an x86-64 host with ADX
    and BMI2 (llvmlite's view of the host CPU), unless $NUMBA_CUZK_ADX is 0."""
    if os.environ.get(ENV, "1") == "0":
        return False
    return _host_has_adx()


@lru_cache(maxsize=None)
def _host_has_adx() -> bool:
    from llvmlite import binding

    if not X86_64:
        return False
    features = binding.get_host_cpu_features()
    return bool(features.get("adx")) and bool(features.get("bmi2"))


def schedule(n: int) -> list[str]:
    """The product's instructions (AT&T syntax, LLVM's operand syntax: $0 out, $1 a, $2 b,
    $3 the constants p_0 .. p_(n-1), n0) for n 64-bit words; out may alias a or b (the
    inputs are all read before out is written)."""
    if n + 2 > len(_WORDS):
        raise ValueError(f"{n} words: the schedule holds at most {len(_WORDS) - 2}")
    code: list[str] = []
    t, top, high = list(_WORDS[:n]), _WORDS[n], _WORDS[n + 1]
    for i in range(n):
        code.append(f"movq {8 * i}($2), %rdx")
        if i == 0:  # t = a * b_0: one chain (t is empty)
            code.append(f"mulxq 0($1), {t[0]}, {t[1] if n > 1 else top}")
            for j in range(1, n):
                code += [f"mulxq {8 * j}($1), %rax, {t[j + 1] if j < n - 1 else top}",
                         f"{'addq' if j == 1 else 'adcq'} %rax, {t[j]}"]
            code.append(f"adcq $$0, {top}")
        else:  # t += a * b_i: low halves on adox's chain, high halves on adcx's
            code.append("xorq %rax, %rax")
            for j in range(n - 1):
                code += [f"mulxq {8 * j}($1), %rax, {high}", f"adoxq %rax, {t[j]}", f"adcxq {high}, {t[j + 1]}"]
            code += [f"mulxq {8 * (n - 1)}($1), %rax, {top}", f"adoxq %rax, {t[n - 1]}",
                     "movq $$0, %rax", f"adcxq %rax, {top}", f"adoxq %rax, {top}"]
        # m = t_0 n0; t = (t + m p) / 2^64, t_0 + (m p)_0 = 0 mod 2^64 giving its carry only
        code += [f"movq {t[0]}, %rdx", f"imulq {8 * n}($3), %rdx", "xorq %rax, %rax",
                 f"mulxq 0($3), %rax, {high}", f"adcxq %rax, {t[0]}", f"adcxq {high}, {t[1] if n > 1 else top}"]
        for j in range(1, n):
            code += [f"mulxq {8 * j}($3), %rax, {high}", f"adoxq %rax, {t[j]}",
                     f"adcxq {high}, {t[j + 1] if j < n - 1 else top}"]
        code += ["movq $$0, %rax", f"adoxq %rax, {top}"]
        t, top = t[1:] + [top], t[0]
    # t < 2p: out = t - p unless that borrows
    code += [f"movq {t[j]}, {8 * j}($0)" for j in range(n)]
    code += [f"{'subq' if j == 0 else 'sbbq'} {8 * j}($3), {t[j]}" for j in range(n)]
    code += [f"cmovcq {8 * j}($0), {t[j]}" for j in range(n)]
    code += [f"movq {t[j]}, {8 * j}($0)" for j in range(n)]
    return code


def _constants(builder: ir.IRBuilder, params: FieldParams):
    """A pointer to the module's constant (p_0 .. p_(n-1), n0) words."""
    words, n0 = word_constants(params)
    array = ir.ArrayType(_I64, len(words) + 1)
    name = f"adx_{params.name.lower()}_constants"
    module = builder.module
    value = module.globals.get(name)
    if value is None:
        value = ir.GlobalVariable(module, array, name)
        value.linkage, value.global_constant = "internal", True
        value.initializer = ir.Constant(array, [ir.Constant(_I64, w) for w in (*words, n0)])
    return builder.bitcast(value, _I64.as_pointer())


@lru_cache(maxsize=None)
def product(params: FieldParams):
    """An intrinsic mul(out, a, b) on C-contiguous uint32 arrays of 2n limbs (the words'
    little-endian halves, as every limb array here): out = a b / 2^(64 n) mod p, canonical
    residues in and out; out may alias a or b."""
    from llvmlite import binding

    binding.initialize_native_asmparser()  # LLVM parses inline assembly with the target's parser
    n = params.limbs // 2
    word_constants(params)  # asserts 2p < 2^(64 n)
    if params.modulus >> (64 * (n - 1)) >= (1 << 63) - 1:
        raise ValueError(f"{params.name}: CIOS without the carry word needs p's top word < 2^63 - 1")
    text = "\n".join(schedule(n))
    pointer = _I64.as_pointer()
    asm_type = ir.FunctionType(ir.VoidType(), [pointer] * 4)
    constraints = "r,r,r,r," + ",".join(f"~{{{c}}}" for c in _CLOBBERS)

    def codegen(context, builder, signature, args):
        data = [context.make_array(t)(context, builder, v).data for t, v in zip(signature.args, args)]
        operands = [builder.bitcast(d, pointer) for d in data] + [_constants(builder, params)]
        builder.call(ir.InlineAsm(asm_type, text, constraints, side_effect=True), operands)
        return context.get_dummy_value()

    def typer(typingctx, out, a, b):
        limbs = (out, a, b)
        if not all(isinstance(t, types.Array) and t.dtype == types.uint32 and t.ndim == 1 and t.layout == "C"
                   for t in limbs):
            return None
        return types.void(out, a, b), codegen

    return intrinsic(typer)
