"""The Python client of the proving daemon (``numba-cuzk serve``).

    with ProverClient("unix:/run/user/1000/numba-cuzk/serve.sock") as client:
        reply = client.prove(zkey="circuit.zkey", witness=Path("witness.wtns").read_bytes())
        Path("proof.json").write_text(reply.proof_json)

Imports grpc and the wire format (serve/wire.py: no protobuf, no engine, no numba), so
that a client process starts in a few hundred ms. Replies are namespaces with
proving.proto's field names (``reply.proof_json``, ``reply.partitions[i].public_json``).
A refused call raises ``ServeError`` with gRPC's status code and the daemon's one-line
reason.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from types import SimpleNamespace
from typing import Sequence

import grpc

from numba_cuzk.serve import protocol, wire



class ServeError(Exception):
    """A call the daemon refused or could not answer: ``code`` (grpc.StatusCode) and
    ``details`` (the daemon's reason, one line)."""

    def __init__(self, code: grpc.StatusCode, details: str) -> None:
        super().__init__(f"{code.name.lower()}: {details}")
        self.code, self.details = code, details


def key_ref(zkey: str | os.PathLike | None = None, key_id: str | None = None) -> dict:
    """A KeyRef's fields by path (made absolute: the daemon reads it) and/or content hash."""
    if zkey is None and not key_id:
        raise ValueError("a key needs a zkey path or a key id")
    return {"key_id": key_id or "", "zkey_path": "" if zkey is None else os.path.abspath(zkey)}


class ProverClient:
    """One channel to the daemon at ``address`` (protocol.parse_address: None is the
    default socket). ``token``: sent with every call (TCP daemons with --token-file).
    ``timeout_s``: the deadline of each call, None for none."""

    def __init__(self, address: str | None = None, token: str | None = None, timeout_s: float | None = None) -> None:
        self.address = protocol.parse_address(address)
        options = [("grpc.max_send_message_length", protocol.MAX_MESSAGE_BYTES),
                   ("grpc.max_receive_message_length", protocol.MAX_MESSAGE_BYTES)]
        self.channel = grpc.insecure_channel(self.address.target, options=options)
        self.metadata = ((protocol.TOKEN_METADATA, token),) if token else ()
        self.timeout_s = timeout_s

    def _call(self, method: str, values: dict, timeout_s: float | None = None) -> SimpleNamespace:
        request, reply = wire.METHODS[method]
        call = self.channel.unary_unary(f"/{wire.SERVICE}/{method}")  # bytes in, bytes out
        try:
            data = call(wire.encode(request, values), metadata=self.metadata,
                        timeout=timeout_s if timeout_s is not None else self.timeout_s)
        except grpc.RpcError as exc:
            code = exc.code() if hasattr(exc, "code") else grpc.StatusCode.UNKNOWN
            details = (exc.details() if hasattr(exc, "details") else None) or str(exc)
            if code == grpc.StatusCode.UNAVAILABLE and "connect" in details.lower():
                details = f"no daemon answers at {self.address}: {details}"
            raise ServeError(code, " ".join(details.split())) from None
        return wire.decode(reply, data)

    def prove(self, witness: bytes | Sequence[bytes], zkey: str | os.PathLike | None = None,
              key_id: str | None = None, priority: str = "normal") -> SimpleNamespace:
        """Prove ``witness`` (a .wtns file's bytes) with the key; waits for the proof.
        The reply's proof_json and public_json are snarkjs's files, as text; also job_id,
        key_id, queued_ms, prove_ms. A list of witnesses is a partitioned job:
        ``reply.partitions`` holds each one's files."""
        return self._call("Prove", self._request(witness, zkey, key_id, priority))

    def submit(self, witness: bytes | Sequence[bytes], zkey: str | os.PathLike | None = None, key_id: str | None = None,
               priority: str = "normal") -> str:
        """Queue a proof; its job id, for ``await_proof`` and ``cancel``."""
        return self._call("SubmitProof", self._request(witness, zkey, key_id, priority)).job_id

    def await_proof(self, job_id: str, timeout_s: float = 0.0) -> SimpleNamespace:
        """The proof of a submitted job (as ``prove``'s reply), waiting up to ``timeout_s``
        (0: as long as it takes; DEADLINE_EXCEEDED past it, the job still queued or running)."""
        return self._call("AwaitProof", {"job_id": job_id, "timeout_s": timeout_s}, timeout_s=None)

    def cancel(self, job_id: str) -> str:
        """Cancel a queued job; the job's state after the call ("cancelled", or where it
        already was: running jobs finish)."""
        return self._call("Cancel", {"job_id": job_id}).state

    def status(self) -> dict:
        """The daemon's status (docs/daemon.md): queues, jobs, keys, memory, device busy."""
        return json.loads(self._call("GetStatus", {}).json)

    def preload(self, zkey: str | os.PathLike | None = None, key_id: str | None = None) -> SimpleNamespace:
        """Load (and check) a key and make it hot on the devices; its key_id and tier (and
        host_bytes, device_bytes)."""
        return self._call("PreloadKey", key_ref(zkey, key_id), timeout_s=None)

    def evict(self, zkey: str | os.PathLike | None = None, key_id: str | None = None) -> SimpleNamespace:
        """Drop a key to cold (off the devices, out of host memory)."""
        return self._call("EvictKey", key_ref(zkey, key_id))

    def metrics(self) -> str:
        """Prometheus text."""
        return self._call("GetMetrics", {}).text

    def _request(self, witness: bytes | Sequence[bytes], zkey, key_id, priority: str) -> dict:
        if priority not in protocol.PRIORITY_VALUES:
            raise ValueError(f"priority {priority!r} is not one of {', '.join(protocol.PRIORITIES)}")
        request = {"key": key_ref(zkey, key_id), "priority": protocol.PRIORITY_VALUES[priority]}
        if isinstance(witness, (bytes, bytearray, memoryview)):
            return {**request, "witness": witness}
        return {**request, "partitions": list(witness)}

    def close(self) -> None:
        self.channel.close()

    def __enter__(self) -> ProverClient:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def read_witness_bytes(path: str | os.PathLike) -> bytes:
    """A witness file's bytes (OSError names the file)."""
    return Path(path).read_bytes()
