"""Groth16 over BLS12-381: R1CS, circuits, setup, prove, verify, snarkjs file formats."""
