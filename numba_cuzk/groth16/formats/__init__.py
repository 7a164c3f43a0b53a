"""snarkjs/circom file formats for Groth16 over BLS12-381, so keys, circuits, witnesses
and proofs interoperate with snarkjs and circom.

    zkey       read_zkey / write_zkey: ProvingKey <-> .zkey (memory-mapped, points checked);
               read_shape: its sizes from the headers (memory plans)
    r1cs       read_r1cs / write_r1cs: R1CS <-> circom .r1cs
    wtns       read_wtns / write_wtns: (8, n) canonical Fr <-> .wtns (read from a path or bytes);
               read_wtns_size: its header
    jsonfiles  proof.json, public.json, verification_key.json; write_proof_pair: both or neither
               (proof_pair_texts: the pair's texts, for a daemon's reply)
    binfile    the iden3 binary container the three binary formats share
    points     affine points as snarkjs stores them <-> the curve layout, point checks
    headers    read_shape, read_wtns_size alone: no numba, no kernel

Each name below is imported from its module on first use (``__getattr__``), so reading a
header does not import the point checks' kernels.
"""

from __future__ import annotations

from numba_cuzk.lazy import lazy_attributes

_HOME = {"read_proof_json": "jsonfiles", "read_public_json": "jsonfiles", "read_vk_json": "jsonfiles",
         "write_proof_json": "jsonfiles", "write_proof_pair": "jsonfiles", "proof_pair_texts": "jsonfiles",
         "pair_matches": "jsonfiles", "write_public_json": "jsonfiles", "write_vk_json": "jsonfiles",
         "read_r1cs": "r1cs", "write_r1cs": "r1cs", "read_wtns": "wtns", "write_wtns": "wtns",
         "read_wtns_size": "headers", "read_shape": "headers", "read_zkey": "zkey", "write_zkey": "zkey"}
__all__ = sorted(_HOME)

__getattr__ = lazy_attributes(__name__, _HOME)
