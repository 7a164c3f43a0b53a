"""Groth16 over BLS12-381: R1CS, constraint systems, setup, prove, verify, snarkjs file formats."""
