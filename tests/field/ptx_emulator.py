"""Executes carry.py's op lists on Python integers, with PTX's carry-flag semantics."""

from __future__ import annotations

MASK = 0xFFFFFFFF


def run(ops, inputs: dict) -> dict:
    """Run ops with registers preset from ``inputs`` ({'$3': value, ...}); return all regs."""
    regs = dict(inputs)
    cf = None  # None = no carry flag defined yet

    def val(src):
        return int(src) if src[0].isdigit() else regs[src]

    for op in ops:
        parts = op.opcode.split(".")
        base, srcs = parts[0], [val(s) for s in op.srcs]
        uses_cf = base in ("madc", "addc", "subc")
        sets_cf = "cc" in parts
        if uses_cf:
            assert cf is not None, f"{op.ptx()} reads an undefined carry"
        carry_in = cf if uses_cf else 0
        if base in ("mad", "madc"):
            prod = srcs[0] * srcs[1]
            half = prod & MASK if parts[1] == "lo" else prod >> 32
            full = half + srcs[2] + carry_in
            result, carry = full & MASK, full >> 32
        elif base in ("add", "addc"):
            full = srcs[0] + srcs[1] + carry_in
            result, carry = full & MASK, full >> 32
        elif base in ("sub", "subc"):
            full = srcs[0] - srcs[1] - carry_in
            result, carry = full & MASK, int(full < 0)
        elif base == "mul":
            result, carry = (srcs[0] * srcs[1]) & MASK, None
        elif base == "mov":
            result, carry = srcs[0], None
        elif base in ("and", "or"):
            result, carry = (srcs[0] & srcs[1]) if base == "and" else (srcs[0] | srcs[1]), None
        elif base == "neg":
            result, carry = (-srcs[0]) & MASK, None
        elif base == "setp":
            compare = {"eq": srcs[0] == srcs[1], "ne": srcs[0] != srcs[1]}[parts[1]]
            result, carry = int(compare), None
        elif base == "selp":
            result, carry = (srcs[0] if srcs[2] else srcs[1]), None
        else:
            raise AssertionError(f"unknown opcode {op.opcode}")
        if not sets_cf and base in ("madc", "addc"):  # a chain's closing op: claimed to carry nothing out
            assert carry == 0, f"{op.ptx()} drops a carry"
        if sets_cf:
            cf = carry
        regs[op.dst] = result
    return regs
