"""Proving through the daemon (`numba-cuzk serve`) from Python: one proof, one submitted and
awaited, one job of three partitions, then the daemon's status. So that it runs as it is,
this script makes a small key and starts a daemon of its own in this process (CPU backend,
a socket in a temporary folder); against a running daemon, `prove_through` is all a client
needs."""

import json
import tempfile
from pathlib import Path

from numba_cuzk.serve.client import ProverClient


def prove_through(address: str, zkey: Path, witnesses: list[Path], out: Path) -> None:
    """The client's side: proofs of ``witnesses`` (.wtns files of ``zkey``'s circuit) from
    the daemon at ``address``, written into ``out`` as snarkjs's proof.json and public.json."""
    with ProverClient(address, timeout_s=120) as client:
        reply = client.prove(witnesses[0].read_bytes(), zkey=zkey)  # a refusal raises ServeError
        (out / "proof.json").write_text(reply.proof_json)
        (out / "public.json").write_text(reply.public_json)

        job = client.submit(witnesses[1].read_bytes(), key_id=reply.key_id, priority="high")
        again = client.await_proof(job, timeout_s=60)  # or client.cancel(job) while it is queued

        parts = client.prove([w.read_bytes() for w in witnesses], key_id=reply.key_id)  # P partitions
        for i, part in enumerate(parts.partitions):
            (out / f"partition-{i:03d}.proof.json").write_text(part.proof_json)
            (out / f"partition-{i:03d}.public.json").write_text(part.public_json)

        tiers = {k["key_id"][:12]: k["tier"] for k in client.status()["keys"]}
        print(f"keys {tiers}; {job}: {again.prove_ms:.0f} ms proving; {len(parts.partitions)} partitions in one job")


def key_and_witnesses(folder: Path, log_constraints: int, count: int) -> tuple[Path, list[Path]]:
    """A MiMC key (insecure setup: an example's) and ``count`` witnesses of its circuit."""
    from numba_cuzk.circuits import build
    from numba_cuzk.groth16.formats import write_wtns, write_zkey
    from numba_cuzk.groth16.setup import setup

    r1cs, _ = build("mimc", log_constraints, seed=0)
    write_zkey(folder / "circuit.zkey", setup(r1cs))
    witnesses = []
    for seed in range(count):
        witnesses.append(folder / f"w{seed}.wtns")
        write_wtns(witnesses[-1], build("mimc", log_constraints, seed=seed)[1])
    return folder / "circuit.zkey", witnesses


def verified(zkey: Path, proof: Path, public: Path) -> bool:
    from numba_cuzk.groth16 import pairing
    from numba_cuzk.groth16.formats import read_zkey
    from numba_cuzk.groth16.formats.jsonfiles import read_proof_json, read_public_json

    vk = read_zkey(zkey, trusted=True).verifying_key
    return pairing.verify(vk, read_public_json(public), read_proof_json(proof))


def main(log_constraints: int = 6) -> None:
    from numba_cuzk.serve.server import ServeConfig, start

    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        zkey, witnesses = key_and_witnesses(folder, log_constraints, 3)
        address = f"unix:{folder / 'serve.sock'}"
        server, daemon = start(ServeConfig(listen=address, cpu=True, timeline=str(folder / "timeline.jsonl")))
        try:
            prove_through(address, zkey, witnesses, folder)
        finally:
            daemon.close()
            server.stop(1).wait()
        assert verified(zkey, folder / "proof.json", folder / "public.json")
        assert verified(zkey, folder / "partition-002.proof.json", folder / "partition-002.public.json")
        assert json.loads((folder / "public.json").read_text()) != json.loads(
            (folder / "partition-002.public.json").read_text())  # another instance, another proof


if __name__ == "__main__":
    main()
