"""snarkjs/circom file formats for Groth16 over BLS12-381, so keys, circuits, witnesses
and proofs interoperate with snarkjs and circom.

    zkey       read_zkey / write_zkey: ProvingKey <-> .zkey (memory-mapped, points checked);
               read_shape: its sizes from the headers (memory plans)
    r1cs       read_r1cs / write_r1cs: R1CS <-> circom .r1cs
    wtns       read_wtns / write_wtns: (8, n) canonical Fr <-> .wtns; read_wtns_size: its header
    jsonfiles  proof.json, public.json, verification_key.json
    binfile    the iden3 binary container the three binary formats share
    points     affine points as snarkjs stores them <-> the curve layout, point checks
"""

from numba_cuzk.groth16.formats.jsonfiles import (read_proof_json, read_public_json, read_vk_json, write_proof_json,
                                                  write_public_json, write_vk_json)
from numba_cuzk.groth16.formats.r1cs import read_r1cs, write_r1cs
from numba_cuzk.groth16.formats.wtns import read_wtns, read_wtns_size, write_wtns
from numba_cuzk.groth16.formats.zkey import read_shape, read_zkey, write_zkey

__all__ = ["read_proof_json", "read_public_json", "read_r1cs", "read_shape", "read_vk_json", "read_wtns",
           "read_wtns_size", "read_zkey", "write_proof_json", "write_public_json", "write_r1cs", "write_vk_json",
           "write_wtns", "write_zkey"]
