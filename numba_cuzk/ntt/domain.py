"""NTT domains over Fr: size checks, the pass plan, and the host-side root tables.

Roots follow snarkjs: the primitive 2^k-th root of unity is ``FR.root_of_unity(k)`` =
5^((r-1)/2^k) (numba_cuzk.field.params), so our evaluation domains are snarkjs's.

A size-2^k transform runs as a few *passes* (radix-2^s Stockham steps, s <= MAX_RADIX_LOG;
see kernels.py). ``plan`` splits k into passes as evenly as it can: fewer passes mean fewer
memory round trips and fewer pre-twiddle products (one per element per pass after the
first), larger radices mean fewer columns per block (worse coalescing once a block holds
fewer than 8 columns).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from numba_cuzk.field import codec
from numba_cuzk.field.params import FR

MAX_LOG_N = 28  # 2^28 elements = 8 GiB per vector: what an H200 holds with its tables
BLOCK_LOG = 10  # elements per block (GPU) or per job (CPU): 2^10 x 32 B = 32 KiB of shared memory
MAX_RADIX_LOG = 8  # stages fused per pass; a block then holds >= 2^(10-8) = 4 columns
ROOT_TABLE_LOG = MAX_RADIX_LOG  # inner roots: powers of a primitive 2^8-th root


@dataclass(frozen=True)
class Pass:
    """One radix-2^log_r Stockham pass over a size-2^log_n vector.

    log_ns: stages done by earlier passes (Ns = 2^log_ns, the span already transformed).
    log_j: columns per block (the block holds 2^(log_j + log_r) <= 2^BLOCK_LOG elements).
    """

    log_n: int
    log_r: int
    log_ns: int
    log_j: int

    @property
    def first(self) -> bool:
        return self.log_ns == 0

    @property
    def last(self) -> bool:
        return self.log_ns + self.log_r == self.log_n

    @property
    def blocks(self) -> int:
        """Blocks (GPU) or jobs (CPU) per vector."""
        return 1 << (self.log_n - self.log_r - self.log_j)


def check_size(n: int) -> int:
    """log2(n) for n = 2^k with 1 <= k <= MAX_LOG_N, else ValueError naming n."""
    if not isinstance(n, (int, np.integer)) or n < 2 or n & (n - 1):
        raise ValueError(f"NTT size must be a power of two 2^k with 1 <= k <= {MAX_LOG_N}, got {n}")
    log_n = int(n).bit_length() - 1
    if log_n > FR.two_adicity:
        raise ValueError(f"NTT size 2^{log_n} exceeds Fr's 2-adicity {FR.two_adicity}: no such root of unity")
    if log_n > MAX_LOG_N:
        raise ValueError(f"NTT size 2^{log_n} is above the supported maximum 2^{MAX_LOG_N}")
    return log_n


def plan(log_n: int, max_radix_log: int = MAX_RADIX_LOG, *, even: bool = False) -> tuple[Pass, ...]:
    """Passes for a size-2^log_n transform: ceil(log_n / max_radix_log) radices, as even
    as possible, larger ones first. 2^24 -> 8, 8, 8; 2^22 -> 8, 7, 7; 2^20 -> 7, 7, 6.
    With ``even`` (the radix-4 passes, which take stages two at a time), the same number
    of passes with even radices and at most one odd one where log_n is odd: 2^22 -> 8, 8, 6;
    2^20 -> 8, 6, 6; 2^26 -> 8, 6, 6, 6; 2^25 -> 7, 6, 6, 6 (the plain plan where no such
    split fits under max_radix_log)."""
    if not 1 <= max_radix_log <= MAX_RADIX_LOG:
        raise ValueError(f"max_radix_log must be in [1, {MAX_RADIX_LOG}], got {max_radix_log}")
    count = -(-log_n // max_radix_log)
    radices = _even_radices(log_n, count, max_radix_log) if even else None
    if radices is None:
        base, extra = divmod(log_n, count)
        radices = [base + (k < extra) for k in range(count)]
    passes, log_ns = [], 0
    for log_r in radices:
        log_j = min(BLOCK_LOG - log_r, log_n - log_r)
        passes.append(Pass(log_n, log_r, log_ns, log_j))
        log_ns += log_r
    return tuple(passes)


def _even_radices(log_n: int, count: int, max_radix_log: int) -> list[int] | None:
    pairs, extra = divmod(log_n // 2, count)
    radices = [2 * (pairs + (k < extra)) for k in range(count)]
    if log_n % 2:
        room = [k for k, r in enumerate(radices) if r < max_radix_log]
        if not room:
            return None
        radices[room[0]] += 1
    return radices if max(radices) <= max_radix_log and min(radices) >= 1 else None


def montgomery_limbs(values: list[int]) -> np.ndarray:
    """Canonical ints -> (8, len) uint32 Montgomery limbs."""
    return codec.to_limbs([v * FR.r % FR.modulus for v in values], FR)


def powers(base: int, count: int) -> list[int]:
    """[base^0, ..., base^(count-1)] mod r."""
    out, x = [], 1
    for _ in range(count):
        out.append(x)
        x = x * base % FR.modulus
    return out


def split_powers(base: int, log_n: int, scale: int = 1) -> tuple[np.ndarray, np.ndarray, int]:
    """Montgomery tables (low, high, log_low) with scale * base^e = low[e mod L] * high[e >> log_low]
    for e < 2^log_n, L = 2^log_low = 2^ceil(log_n / 2): two sqrt(n) tables (2 x 512 KiB at
    2^28) from which the device builds full tables with one product per entry."""
    log_low = (log_n + 1) // 2
    low = [scale * x % FR.modulus for x in powers(base, 1 << log_low)]
    high = powers(pow(base, 1 << log_low, FR.modulus), 1 << (log_n - log_low))
    return montgomery_limbs(low), montgomery_limbs(high), log_low


def inner_roots() -> np.ndarray:
    """(2^(ROOT_TABLE_LOG-1), 8) Montgomery powers of the primitive 2^ROOT_TABLE_LOG-th root,
    element-major (as the passes' shared buffers: device.py); w_R^i = table[i << (ROOT_TABLE_LOG
    - log_r)] for any radix R = 2^log_r <= 2^ROOT_TABLE_LOG."""
    roots = powers(FR.root_of_unity(ROOT_TABLE_LOG), 1 << (ROOT_TABLE_LOG - 1))
    return np.ascontiguousarray(montgomery_limbs(roots).T)
