"""Each worker's monotonic clock against the client's, measured by round trips.

Engines time everything on their host's ``time.monotonic_ns()``, whose zero is the
host's boot: clocks of two hosts are unrelated, and even one host's workers are only
assumed to agree. So the offset is measured, NTP-style: the client reads its clock (t0),
asks the worker for its clock (w), reads its clock again (t1); if the request and the
reply took equally long, the worker read w at (t0 + t1) / 2, so offset = w - (t0 + t1) / 2,
within +- (t1 - t0) / 2 whatever the asymmetry. Of several rounds the one with the
shortest round trip is kept: its bound is the tightest. A request goes through the
scheduler (client.run), ~1-5 ms on loopback.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from distributed import Client

ROUNDS = 8


@dataclass(frozen=True)
class Offset:
    """worker clock - client clock (ns), and the round trip it was measured in (ns):
    the offset is exact to within rtt_ns / 2."""

    offset_ns: int
    rtt_ns: int


def measure(client: Client, workers: list[str], rounds: int = ROUNDS) -> dict[str, Offset]:
    """The offset of each of ``workers`` (addresses), from the shortest of ``rounds`` round trips."""
    best: dict[str, Offset] = {}
    for address in workers:
        for _ in range(rounds):
            t0 = time.monotonic_ns()
            worker_ns = client.run(_now_ns, workers=[address])[address]
            t1 = time.monotonic_ns()
            sample = Offset(worker_ns - (t0 + t1) // 2, t1 - t0)
            if address not in best or sample.rtt_ns < best[address].rtt_ns:
                best[address] = sample
    return best


def _now_ns() -> int:
    return time.monotonic_ns()
