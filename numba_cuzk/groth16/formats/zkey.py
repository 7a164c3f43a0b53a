"""snarkjs .zkey files, Groth16 over BLS12-381 (snarkjs src/zkey_utils.js, zkey_new.js).

    1  header          u32 protocol: 1 = Groth16
    2  groth16 header  u32 n8q = 48 | q | u32 n8r = 32 | r | u32 nVars | u32 nPublic |
                       u32 domainSize | alpha1 | beta1 | beta2 | gamma2 | delta1 | delta2
    3  IC              nPublic + 1 G1 points
    4  coefficients    u32 k, then k x (u32 matrix (0 = A, 1 = B) | u32 constraint |
                       u32 signal | 32-byte value = coef * R^2 mod r, R = 2^256)
    5  A points        nVars G1          6  B1 points   nVars G1
    7  B2 points       nVars G2          8  C points    nVars - nPublic - 1 G1 (private wires)
    9  H points        domainSize G1
    10 contributions   64-byte circuit hash | u32 n | n MPC contributions

Points are stored as points.py says. Why R^2: snarkjs's prover multiplies each stored
value by the witness (canonical bytes) with a Montgomery product, coef R^2 * w / R =
coef w R, which is the Montgomery form of coef * w. Our Coefficients hold the same
values and our prover does the same, so the values are read and written as they stand:
a reader that converted them started numba's CPU target in a GPU process (50-150 ms).
Section 10 matters to MPC ceremonies only: the reader skips it.
"""

from __future__ import annotations

import numpy as np

from numba_cuzk.curve import layout
from numba_cuzk.curve.params import G1, G2, CurveParams
from numba_cuzk.field import codec
from numba_cuzk.field.params import FQ, FR
from numba_cuzk.groth16.formats import points
from numba_cuzk.groth16.formats.binfile import BinFile, Cursor, PathLike, prime_header, u32, write_binfile
from numba_cuzk.groth16.formats.headers import (GROTH16, HEADER_POINTS, PROTOCOLS, ZKEY, open_groth16,  # noqa: F401
                                                read_counts, read_shape)
from numba_cuzk.groth16.keys import Coefficients, ProvingKey

CS_HASH_BYTES = 64  # blake2b-512 of the circuit's points, written by snarkjs's zkey new
COEFFICIENT = np.dtype([("matrix", "<u4"), ("constraint", "<u4"), ("signal", "<u4"), ("value", "<u4", (FR.limbs,))])
QUERY_SECTIONS = {"a_g1": 5, "b_g1": 6, "b_g2": 7, "c_g1": 8, "h_g1": 9}


def read_zkey(path: PathLike, trusted: bool = False) -> ProvingKey:
    """Read a Groth16 BLS12-381 zkey. Every point's coordinates must be reduced mod q;
    unless ``trusted``, every point is also checked on its curve and in the prime-order
    subgroup: the header's and IC's here, the five queries' by the Prover, on the copy it
    keeps (``ProvingKey.unchecked``: no host conversion, no second upload). Raises
    ValueError naming the section (and point or entry) at fault."""
    f = open_groth16(path)
    n_vars, n_public, domain_size, header = _read_groth16_header(f.cursor(2), trusted)

    def query(sid: int, curve: CurveParams, count: int) -> np.ndarray:
        return points.from_stored(f.section(sid, count * points.point_bytes(curve)), curve, ZKEY.where(sid))

    ic = query(3, G1, n_public + 1)
    if not trusted:
        points.check(ic, G1, ZKEY.where(3))
    return ProvingKey(
        n_vars=n_vars, n_public=n_public, domain_size=domain_size, **header,
        ic=layout.limbs_to_points(ic, G1),
        coefficients=_read_coefficients(f, n_vars, domain_size),
        a_g1=query(5, G1, n_vars), b_g1=query(6, G1, n_vars), b_g2=query(7, G2, n_vars),
        c_g1=query(8, G1, n_vars - n_public - 1), h_g1=query(9, G1, domain_size),
        unchecked={} if trusted else {field: f"{path}: {ZKEY.where(sid)}" for field, sid in QUERY_SECTIONS.items()})


def write_zkey(path: PathLike, pk: ProvingKey, cs_hash: bytes = bytes(CS_HASH_BYTES), *, replace: bool = True) -> None:
    """Write ``pk`` as a zkey (atomically; ``replace=False``: FileExistsError if ``path``
    exists). Section 10 is a fresh setup's (``cs_hash`` and no contributions), as snarkjs's
    zkey new writes it; snarkjs's hash covers powers of tau that only the setup knows, so
    the setup passes it or it stays zero."""
    _check_key(pk)
    if len(cs_hash) != CS_HASH_BYTES:
        raise ValueError(f"cs_hash must be {CS_HASH_BYTES} bytes, got {len(cs_hash)}")
    header = b"".join([prime_header(FQ), prime_header(FR), u32(pk.n_vars), u32(pk.n_public), u32(pk.domain_size)]
                      + [_stored_bytes([getattr(pk, name)], curve) for name, curve in HEADER_POINTS])
    coefficients = np.empty(len(pk.coefficients.matrix), dtype=COEFFICIENT)
    for name in ("matrix", "constraint", "signal"):
        coefficients[name] = getattr(pk.coefficients, name)
    coefficients["value"] = pk.coefficients.value.T
    write_binfile(path, ZKEY, 1, [
        (1, [u32(GROTH16)]),
        (2, [header]),
        (3, [_stored_bytes(pk.ic, G1)]),
        (4, [u32(len(coefficients)), coefficients]),
        (5, [points.to_stored(pk.a_g1)]),
        (6, [points.to_stored(pk.b_g1)]),
        (7, [points.to_stored(pk.b_g2)]),
        (8, [points.to_stored(pk.c_g1)]),
        (9, [points.to_stored(pk.h_g1)]),
        (10, [bytes(cs_hash), u32(0)]),
    ], replace=replace)


def _read_groth16_header(cur: Cursor, trusted: bool) -> tuple[int, int, int, dict]:
    """(nVars, nPublic, domainSize, {ProvingKey field: reference point})."""
    n_vars, n_public, domain_size = read_counts(cur)
    header = {}
    for name, curve in HEADER_POINTS:
        where = f"{cur.where}: {name}"
        point = layout.limbs_to_points(points.from_stored(cur.take(points.point_bytes(curve)), curve, where), curve)[0]
        reason = None if trusted else points.problem(point, curve)
        if reason:
            raise ValueError(f"{where}: {reason}")
        header[name] = point
    cur.end()
    return n_vars, n_public, domain_size, header


def _read_coefficients(f: BinFile, n_vars: int, domain_size: int) -> Coefficients:
    where = ZKEY.where(4)
    count = f.cursor(4).u32()
    entries = f.section(4, 4 + count * COEFFICIENT.itemsize)[4:].view(COEFFICIENT)
    for bad, what in ((entries["matrix"] > 1, "matrix is not 0 (A) or 1 (B)"),
                      (entries["constraint"] >= domain_size, f"constraint is >= domainSize {domain_size}"),
                      (entries["signal"] >= n_vars, f"signal is >= nVars {n_vars}")):
        first = np.flatnonzero(bad)
        if first.size:
            raise ValueError(f"{where}: coefficient {int(first[0])}: {what}")
    value = entries["value"].T.astype(np.uint32, order="C")
    first = codec.first_noncanonical(value, FR)
    if first >= 0:
        raise ValueError(f"{where}: coefficient {first}: value is not reduced (>= r)")
    return Coefficients(matrix=entries["matrix"].astype(np.uint8), constraint=entries["constraint"].astype(np.uint32),
                        signal=entries["signal"].astype(np.uint32), value=value)


def _stored_bytes(refs: list, curve: CurveParams) -> bytes:
    """Reference affine points -> their stored bytes."""
    return points.to_stored(layout.points_to_limbs(refs, curve)).astype("<u4").tobytes()


def _check_key(pk: ProvingKey) -> None:
    """Shapes must match the counts, as the reader will demand."""
    n, private = pk.n_vars, pk.n_vars - pk.n_public - 1
    if private < 0 or pk.domain_size <= pk.n_public or pk.domain_size & (pk.domain_size - 1):
        raise ValueError(f"bad counts: nVars {n}, nPublic {pk.n_public}, domainSize {pk.domain_size}")
    if len(pk.ic) != pk.n_public + 1:
        raise ValueError(f"ic: {len(pk.ic)} points, expected nPublic + 1 = {pk.n_public + 1}")
    for name, curve, count in (("a_g1", G1, n), ("b_g1", G1, n), ("b_g2", G2, n), ("c_g1", G1, private),
                               ("h_g1", G1, pk.domain_size)):
        arr = getattr(pk, name)
        if arr.dtype != np.uint32 or arr.shape != (2 * curve.limbs, count):
            raise ValueError(f"{name}: expected uint32 {(2 * curve.limbs, count)}, got {arr.dtype} {arr.shape}")
    c = pk.coefficients
    k = len(c.matrix)
    if any(len(a) != k for a in (c.constraint, c.signal)) or c.value.shape != (FR.limbs, k):
        raise ValueError(f"coefficients: {k} matrix entries but constraint {c.constraint.shape}, "
                         f"signal {c.signal.shape}, value {c.value.shape}")
