"""A stand-in for bench/peer/sppark_msm.cu (no GPU here): ``python -m tests.fake_sppark_msm
g1|g2 BASES SCALARS N RUNS`` reads the files as sppark's types lay them out (affine_t: X then
Y, each Fq coordinate 12 32-bit little-endian limbs in Montgomery form, an Fq2 one c0 then
c1; fr_t scalars canonical, 8 limbs, mont = false), sums s_i P_i with the pure-Python
reference curve, and prints the harness's JSON line (canonical hex coordinates, x then y,
c0 then c1). Errors as the harness's: a message on stderr, exit status 1 or 2.
"""

from __future__ import annotations

import json
import sys

import numpy as np

from numba_cuzk.curve.params import G1, G2
from numba_cuzk.field import codec
from numba_cuzk.field.params import FQ
from tests.msm import inputs


def _field(limbs: np.ndarray, degree: int):
    """(n, 12 * degree) Montgomery limbs -> canonical ints (degree 1) or (c0, c1) pairs."""
    parts = [codec.from_limbs(codec.from_montgomery(np.ascontiguousarray(limbs[:, 12 * k:12 * (k + 1)].T), FQ), FQ)
             for k in range(degree)]
    return parts[0] if degree == 1 else list(zip(*parts))


def main(argv: list[str]) -> int:
    if len(argv) != 5 or argv[0] not in ("g1", "g2"):
        print("usage: sppark_msm g1|g2 BASES SCALARS N RUNS", file=sys.stderr)
        return 2
    curve = G1 if argv[0] == "g1" else G2
    n, width = int(argv[3]), 12 * curve.degree
    bases = np.fromfile(argv[1], dtype="<u4")
    scalars = np.fromfile(argv[2], dtype="<u4")
    if bases.size != n * 2 * width or scalars.size != n * 8:
        print(f"sppark_msm: {argv[1]}: {bases.size * 4} bytes, {argv[2]}: {scalars.size * 4}", file=sys.stderr)
        return 1
    bases = bases.reshape(n, 2 * width)
    points = list(zip(_field(bases[:, :width], curve.degree), _field(bases[:, width:], curve.degree)))
    ref = inputs.reference_curve(curve)
    total = None
    for point, s in zip(points, inputs.limbs_to_ints(np.ascontiguousarray(scalars.reshape(n, 8).T))):
        total = ref.add(total, ref.mul(point, s))
    coords = [] if total is None else [c for xy in total for c in ((xy,) if curve.degree == 1 else xy)]
    print(json.dumps({"curve": argv[0], "n": n, "upload_ms": 1.5, "upload_spread_pct": 0.2, "device_ms": 1.25,
                      "device_spread_pct": 0.1, "runs": int(argv[4]), "warmup": 2, "repeats": 3,
                      "infinity": total is None, "coords": [f"0x{c:096x}" for c in coords],
                      "sppark_commit": "17278d7"}))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
