"""circom/snarkjs .wtns witness files (snarkjs src/wtns_utils.js):

    1  header   u32 n8 = 32 | prime r | u32 nWitness
    2  witness  nWitness x 32-byte canonical little-endian Fr values

32 little-endian bytes are our 8 canonical limbs, so section 2 is the (n, 8) transpose
of the (8, n) witness layout (r1cs.py).
"""

from __future__ import annotations

import numpy as np

from numba_cuzk.field import codec
from numba_cuzk.field.params import FR
from numba_cuzk.groth16.formats.binfile import BinFile, PathLike, prime_header, u32, write_binfile
from numba_cuzk.groth16.formats.headers import WTNS, read_wtns_size, wtns_header  # noqa: F401  (wtns.read_wtns_size)
VERSION = 2  # what snarkjs (wtns calculate) and circom's witness generators write
# values transposed per block of this many: 256 KiB of the file, which stays in cache while
# its columns are written (2^20 wires: 12 ms of CPU, against 19 for one strided copy)
BLOCK_VALUES = 1 << 13


def read_wtns(source: PathLike | bytes) -> np.ndarray:
    """A witness file (its path, or its bytes) -> (8, n) uint32 canonical Fr. Raises
    ValueError naming the section, or the first value that is not reduced mod r."""
    f = BinFile(WTNS, source)
    n = wtns_header(f)
    values = f.section(2, n * FR.nbytes).view("<u4").reshape(n, FR.limbs)
    witness = np.empty((FR.limbs, n), dtype=np.uint32)
    for start in range(0, n, BLOCK_VALUES):
        witness[:, start:start + BLOCK_VALUES] = values[start:start + BLOCK_VALUES].T
    _check(witness, WTNS.where(2))
    return witness


def write_wtns(path: PathLike, witness: np.ndarray) -> None:
    """(8, n) uint32 canonical Fr -> a witness file."""
    if witness.dtype != np.uint32 or witness.ndim != 2 or witness.shape[0] != FR.limbs:
        raise ValueError(f"witness: expected uint32 ({FR.limbs}, n), got {witness.dtype} {witness.shape}")
    _check(witness, "witness")
    write_binfile(path, WTNS, VERSION, [(1, [prime_header(FR) + u32(witness.shape[1])]), (2, [witness.T])])


def _check(witness: np.ndarray, where: str) -> None:
    first = codec.first_noncanonical(witness, FR)
    if first >= 0:
        raise ValueError(f"{where}: value {first} is not reduced (>= r)")
