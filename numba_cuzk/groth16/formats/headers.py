"""The zkey's and the witness's headers alone: sizes, read without numba or a kernel.

    read_shape(zkey)      -> KeyShape (nVars, nPublic, domainSize, coefficient count)
    read_wtns_size(wtns)  -> the witness's number of wires

A CLI checks its inputs with these in milliseconds (files.check_prove_inputs), and a
client process sizes a job with them, before any compute module is imported: this module
imports the container (binfile.py), the fields' and curves' parameters and the key's
shape (groth16/shape.py), all plain Python and numpy. zkey.py and wtns.py read the rest.
"""

from __future__ import annotations

from numba_cuzk.curve.params import G1, G2
from numba_cuzk.field.params import FR, FQ
from numba_cuzk.groth16.formats.binfile import BinFile, Cursor, FileKind, PathLike
from numba_cuzk.groth16.shape import KeyShape

ZKEY = FileKind("zkey", 1, {1: "header", 2: "groth16 header", 3: "IC", 4: "coefficients", 5: "A points",
                            6: "B1 points", 7: "B2 points", 8: "C points", 9: "H points", 10: "contributions"})
WTNS = FileKind("wtns", 2, {1: "header", 2: "witness"})
GROTH16 = 1
PROTOCOLS = {1: "groth16", 2: "plonk", 10: "fflonk"}  # snarkjs src/zkey_constants.js
# the groth16 header's points, in file order
HEADER_POINTS = (("alpha_g1", G1), ("beta_g1", G1), ("beta_g2", G2), ("gamma_g2", G2), ("delta_g1", G1),
                 ("delta_g2", G2))


def read_shape(path: PathLike) -> KeyShape:
    """A zkey's shape (nVars, nPublic, domainSize, coefficient count; shape.KeyShape)
    from its headers alone: the file is memory-mapped, its points are not read (their
    checks are read_zkey's)."""
    f = open_groth16(path)
    cur = f.cursor(2)
    n_vars, n_public, domain_size = read_counts(cur)
    cur.take(sum(2 * curve.coordinate_bytes for _, curve in HEADER_POINTS))
    cur.end()
    return KeyShape(n_vars, n_public, domain_size, f.cursor(4).u32())


def open_groth16(path: PathLike) -> BinFile:
    """The zkey container, its protocol section checked to be Groth16."""
    f = BinFile(ZKEY, path)
    protocol = f.cursor(1)
    kind = protocol.u32()
    protocol.end()
    if kind != GROTH16:
        raise ValueError(f"{ZKEY.where(1)}: protocol {kind} ({PROTOCOLS.get(kind, 'unknown')}) is not groth16")
    return f


def read_counts(cur: Cursor) -> tuple[int, int, int]:
    """(nVars, nPublic, domainSize) from the groth16 header's cursor, its primes checked;
    the cursor is left at the header's points."""
    cur.prime(FQ, "q")
    cur.prime(FR, "r")
    n_vars, n_public, domain_size = cur.u32(), cur.u32(), cur.u32()
    if n_public >= n_vars:
        raise ValueError(f"{cur.where}: nPublic {n_public} must be < nVars {n_vars} (wire 0 is the constant 1)")
    if domain_size & (domain_size - 1) or domain_size <= n_public:
        raise ValueError(f"{cur.where}: domainSize {domain_size} must be a power of two > nPublic {n_public}")
    return n_vars, n_public, domain_size


def read_wtns_size(path: PathLike) -> int:
    """A witness file's number of wires, from its header alone."""
    return wtns_header(BinFile(WTNS, path))


def wtns_header(f: BinFile) -> int:
    """The witness's number of wires; its prime checked to be Fr's."""
    cur = f.cursor(1)
    cur.prime(FR, "prime")
    n = cur.u32()
    cur.end()
    return n
