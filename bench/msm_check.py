"""Independent checks of bench.msm's results, and sppark's MSM on the same inputs.

Closed form. bench.msm's bases are P_i = T1[i mod 2^12] + T2[i >> 12] with T1[j] = (j+1) Q1,
T2[j] = (j+1) Q2 and Q1 = k1 G, Q2 = k2 G (tests/msm/inputs.ark_multiples: k = seed * phi
mod r, seeds 101 and 202). So sum_i s_i P_i = ((k1 S1 + k2 S2) mod r) G with
S1 = sum_i s_i (1 + (i mod 2^12)), S2 = sum_i s_i (1 + (i >> 12)): two weighted scalar
sums (numpy, exact: 16-bit halves of the limbs times weights below 2^16, summed in uint64,
below 2^59 at 2^27; ~1 s at 2^24 on one core) and one scalar multiplication in arkworks; no MSM code is shared with
what it checks, and it costs seconds at 2^27, where arkworks' own MSM would take minutes.

sppark. ``sppark_msm`` runs bench/peer/sppark_msm.cu (built by bench/peer/sppark.sh) on the
same bases and scalars, written to files in its memory layout (bench.msm's (2L, n)
Montgomery limbs transposed: sppark's affine X then Y, 32-bit limbs little-endian; scalars
canonical), and returns its figures (host scalars in and device scalars resident, each
timed whole per call: invoke syncs and sums the windows on the host) with its result, which
must equal ours.
"""

from __future__ import annotations

import json
import subprocess
import tempfile
from pathlib import Path

import numpy as np

from tests.msm import inputs

TABLE_LOG = 12
SEEDS = (101, 202)  # BaseSet's tables: ark_multiples(curve, ., seed)
PHI = 0x9E3779B97F4A7C15  # ark_multiples' multiplier


def weighted_sums(scalars: np.ndarray, weights: list[np.ndarray]) -> list[int]:
    """[sum_i s_i w_i for each w in ``weights``] exactly, for (8, n) uint32 scalar limbs and
    weights w_i < 2^16: each limb's 16-bit halves (rows of the limbs, no transpose) as
    uint64 once, their products with a weight summed in uint64 (below 2^59 at 2^27)."""
    sums = [0] * len(weights)
    w64 = [w.astype(np.uint64) for w in weights]
    for j in range(scalars.shape[0]):
        for shift in (0, 16):
            half = ((scalars[j] >> np.uint32(shift)) & np.uint32(0xFFFF)).astype(np.uint64)
            for k, w in enumerate(w64):
                sums[k] += int(np.dot(half, w)) << (32 * j + shift)
    return sums


def closed_form(curve, scalars: np.ndarray):
    """sum_i s_i P_i for bench.msm's bases (module docstring), as a reference affine tuple."""
    n = scalars.shape[1]
    index = np.arange(n, dtype=np.uint32)
    s1, s2 = weighted_sums(scalars, [1 + (index & np.uint32((1 << TABLE_LOG) - 1)),
                                     1 + (index >> np.uint32(TABLE_LOG))])
    k1, k2 = (seed * PHI % inputs.R for seed in SEEDS)
    ark = inputs.ark_module()
    point = inputs.ark_point_class(curve)() * ark.Scalar((k1 * s1 + k2 * s2) % inputs.R)
    return inputs.ark_to_reference(point, curve)


def check(curve, log_n: int, scalars: np.ndarray, got) -> str:
    """Raise AssertionError unless ``got`` is the closed form; the params' "checked" label."""
    if got != closed_form(curve, scalars):
        raise AssertionError(f"{curve.name} 2^{log_n}: the GPU result differs from the closed form sum s_i k_i G")
    return "closed form (sum s_i k_i G)"


def sppark_msm(binary: str, curve, bases_host: np.ndarray, scalars: np.ndarray, runs: int) -> dict:
    """sppark's figures on these inputs: {"upload_ms", "device_ms", "result", "spread_pct",
    "sppark_commit", ...} from bench/peer/sppark_msm.cu; ``bases_host``: (2L, n) limbs."""
    n = scalars.shape[1]
    with tempfile.TemporaryDirectory() as scratch:
        bases_file, scalars_file = Path(scratch) / "bases.bin", Path(scratch) / "scalars.bin"
        np.ascontiguousarray(bases_host.T).astype("<u4").tofile(bases_file)
        np.ascontiguousarray(scalars.T).astype("<u4").tofile(scalars_file)
        done = subprocess.run([binary, curve.name.lower(), str(bases_file), str(scalars_file), str(n), str(runs)],
                              capture_output=True, text=True, timeout=600)
    if done.returncode:
        raise RuntimeError(f"{binary} failed (rc {done.returncode}): {done.stderr.strip()[-500:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def sppark_point(result: dict, curve):
    """sppark_msm's printed result (canonical hex coordinates) as a reference affine tuple."""
    if result.get("infinity"):
        return None
    coords = [int(c, 16) for c in result["coords"]]
    if curve.degree == 1:
        return coords[0], coords[1]
    return (coords[0], coords[1]), (coords[2], coords[3])


def peer(figures: dict, key: str) -> dict:
    """A record's peer from sppark_msm's figures: ``key`` "upload_ms" or "device_ms"."""
    return {"name": f"sppark {figures['sppark_commit'][:7]} msm_t::invoke (same call)",
            "value": round(figures[key], 4), "unit": "ms", "spread_pct": figures[f"{key[:-3]}_spread_pct"],
            "timing": "call-latency", "scalars": "host" if key == "upload_ms" else "device"}
