"""circom .r1cs files (iden3/r1csfile src/r1csfile.js and doc/r1cs_bin_format.md).

    1  header       u32 n8 = 32 | prime r | u32 nWires | u32 nPubOut | u32 nPubIn |
                    u32 nPrvIn | u64 nLabels | u32 mConstraints
    2  constraints  per constraint its A, B and C linear combinations, each u32 nTerms,
                    then nTerms x (u32 wire | 32-byte canonical little-endian coefficient)
    3  wire2label   nWires x u64 label id
    4, 5           custom gates (PLONK only): refused

Every field of section 2 is a whole number of 32-bit words and a term is 9 of them (the
wire, then our 8 canonical Fr limbs), so the section is read as a uint32 array. Only
where each linear combination starts is sequential (it depends on the counts before it):
one compiled pass over the counts finds it, and numpy gathers the terms.
"""

from __future__ import annotations

import numpy as np

from numba_cuzk.field import codec
from numba_cuzk.field.params import FR
from numba_cuzk.groth16.formats.binfile import BinFile, FileKind, PathLike, prime_header, u32, u64, write_binfile
from numba_cuzk.groth16.r1cs import R1CS, SparseMatrix
from numba_cuzk import _compat  # noqa: F401,I001  (numba patched before its first use)
from numba_cuzk.kernel_cache import cpu_kernel

R1CS_FILE = FileKind("r1cs", 1, {1: "header", 2: "constraints", 3: "wire2label", 4: "custom gates list",
                                 5: "custom gates uses"})
TERM_WORDS = 1 + FR.limbs  # wire id, then the coefficient's limbs
MATRICES = "ABC"


def read_r1cs(path: PathLike) -> R1CS:
    """Read a circom R1CS over BLS12-381's Fr; public wires are the outputs, then the
    public inputs (n_public = nPubOut + nPubIn). Raises ValueError naming the section."""
    f = BinFile(R1CS_FILE, path)
    if f.has(4) or f.has(5):
        raise ValueError(f"{R1CS_FILE.where(4)}: custom gates are PLONK-only; Groth16 cannot prove this circuit")
    cur = f.cursor(1)
    cur.prime(FR, "prime")
    n_wires, n_outputs, n_public_inputs, _, _, n_constraints = (cur.u32(), cur.u32(), cur.u32(), cur.u32(),
                                                                cur.u64(), cur.u32())
    cur.end()
    n_public = n_outputs + n_public_inputs
    if n_public >= n_wires:
        raise ValueError(f"{cur.where}: {n_public} public wires, but only {n_wires} wires (wire 0 is the constant 1)")
    if f.has(3):
        f.section(3, 8 * n_wires)
    a, b, c = _read_constraints(f, n_constraints)
    r1cs = R1CS(n_wires=n_wires, n_public=n_public, a=a, b=b, c=c)
    try:
        r1cs.check()
    except ValueError as e:
        raise ValueError(f"{R1CS_FILE.where(2)}: {e}") from None
    return r1cs


def write_r1cs(path: PathLike, r1cs: R1CS) -> None:
    """Write ``r1cs`` as circom does; its public wires are written as public inputs (no
    outputs, no private inputs: snarkjs only uses their sum) and labels are wire ids."""
    r1cs.check()
    n, m = r1cs.n_wires, r1cs.n_constraints
    header = prime_header(FR) + u32(n) + u32(0) + u32(r1cs.n_public) + u32(0) + u64(n) + u32(m)
    write_binfile(path, R1CS_FILE, 1, [(1, [header]), (2, [_constraint_words(r1cs)]),
                                       (3, [np.arange(n, dtype="<u8")])])


@cpu_kernel(symbols=False)
def _scan(words: np.ndarray, n_combinations: int, term_words: int):
    """Word index of each linear combination's count, then the index of the first one
    that runs past the end (-1 if none) and the word where the last one ended."""
    starts = np.zeros(n_combinations, dtype=np.int64)
    pos = 0
    for i in range(n_combinations):
        if pos >= len(words):
            return starts, i, pos
        starts[i] = pos
        pos += 1 + np.int64(words[pos]) * term_words
        if pos > len(words):
            return starts, i, pos
    return starts, -1, pos


def _read_constraints(f: BinFile, n_constraints: int) -> list[SparseMatrix]:
    where = R1CS_FILE.where(2)
    raw = f.section(2)
    # each constraint takes at least its three counts: bound it before allocating
    if len(raw) % 4 or 12 * n_constraints > len(raw):
        raise ValueError(f"{where}: {len(raw)} bytes cannot hold {n_constraints} constraints")
    words = np.require(raw.view("<u4"), requirements="A")  # the compiled pass wants aligned words
    n_combinations = 3 * n_constraints
    starts, bad, end = _scan(words, n_combinations, TERM_WORDS)
    if bad >= 0:
        raise ValueError(f"{where}: constraint {bad // 3} ({MATRICES[bad % 3]}) runs past the end of the section")
    if end != len(words):
        raise ValueError(f"{where}: {4 * (len(words) - end)} bytes after the last constraint")
    counts = words[starts].astype(np.int64)
    is_term = np.ones(len(words), dtype=bool)
    is_term[starts] = False
    terms = words[is_term].reshape(-1, TERM_WORDS)  # every term, in file order
    matrix_of_term = np.repeat(np.tile(np.arange(3, dtype=np.uint8), n_constraints), counts)
    matrices = []
    for k, name in enumerate(MATRICES):
        own = terms[matrix_of_term == k]
        indptr = np.zeros(n_constraints + 1, dtype=np.int64)
        np.cumsum(counts[k::3], out=indptr[1:])
        values = own[:, 1:].T.astype(np.uint32, order="C")
        first = codec.first_noncanonical(values, FR)
        if first >= 0:
            row = int(np.searchsorted(indptr, first, side="right") - 1)
            raise ValueError(f"{where}: constraint {row} ({name}): coefficient of wire {int(own[first, 0])} "
                             f"is not reduced (>= r)")
        matrices.append(SparseMatrix(indptr=indptr, indices=own[:, 0].astype(np.uint32), values=values))
    return matrices


def _constraint_words(r1cs: R1CS) -> np.ndarray:
    """Section 2 as uint32 words: the inverse of _read_constraints's gather."""
    mats = (r1cs.a, r1cs.b, r1cs.c)
    m = r1cs.n_constraints
    counts = np.stack([np.diff(mat.indptr) for mat in mats], axis=1).ravel()  # combination 3i + k
    before = np.zeros(3 * m, dtype=np.int64)  # terms before each combination
    np.cumsum(counts[:-1], out=before[1:])
    starts = np.arange(3 * m, dtype=np.int64) + TERM_WORDS * before
    terms = np.empty((int(counts.sum()), TERM_WORDS), dtype=np.uint32)
    for k, mat in enumerate(mats):
        rows = np.repeat(np.arange(m), np.diff(mat.indptr))
        slot = before[3 * rows + k] + np.arange(mat.nnz) - mat.indptr[rows]
        terms[slot, 0] = mat.indices
        terms[slot, 1:] = mat.values.T
    words = np.empty(3 * m + terms.size, dtype=np.uint32)
    words[starts] = counts
    is_term = np.ones(len(words), dtype=bool)
    is_term[starts] = False
    words[is_term] = terms.ravel()
    return words
