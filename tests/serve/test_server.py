"""The daemon in this process, over gRPC on a temporary socket: proofs that verify, keys
shared by content hash, every malformed request refused with a status naming the problem
while the daemon goes on serving, a failing job failing alone, 32 clients at once."""

from __future__ import annotations

import json
import shutil
import stat
import threading

import grpc
import pytest

from numba_cuzk.field.params import FR
from numba_cuzk.groth16 import pairing
from numba_cuzk.groth16.formats import read_zkey
from numba_cuzk.groth16.formats.jsonfiles import read_proof_json, read_public_json
from numba_cuzk.serve import wire
from numba_cuzk.serve.client import ServeError
from tests.serve.conftest import witness_array, wtns_bytes

TIMEOUT_S = 120
PROOFS = 120  # of the memory test: ~70-150 ms each on 2 cores; RSS grew 2.2 MiB over 200 in the dev run


def verified(reply, zkey, tmp_path) -> bool:
    (tmp_path / "p.json").write_text(reply.proof_json)
    (tmp_path / "q.json").write_text(reply.public_json)
    vk = read_zkey(zkey, trusted=True).verifying_key
    return pairing.verify(vk, read_public_json(tmp_path / "q.json"), read_proof_json(tmp_path / "p.json"))


def test_socket_is_private(daemon):
    assert stat.S_IMODE(daemon.socket.stat().st_mode) == 0o600


def test_prove_verifies(daemon, zkey, good, tmp_path):
    with daemon.client(timeout_s=TIMEOUT_S) as client:
        reply = client.prove(good, zkey=zkey)
    assert verified(reply, zkey, tmp_path)
    assert json.loads(reply.proof_json)["protocol"] == "groth16" and reply.proof_json.startswith('{\n "pi_a"')


def test_same_bytes_share_one_key(daemon, zkey, good, tmp_path):
    other = tmp_path / "same.zkey"
    shutil.copy(zkey, other)
    with daemon.client(timeout_s=TIMEOUT_S) as client:
        first = client.prove(good, zkey=zkey)
        second = client.prove(good, zkey=other)
        by_id = client.prove(good, key_id=first.key_id)
        keys = client.status()["keys"]
    assert first.key_id == second.key_id == by_id.key_id
    assert [k["key_id"] for k in keys].count(first.key_id) == 1
    assert next(k for k in keys if k["key_id"] == first.key_id)["tier"] == "hot"


def _noncanonical(tmp_path) -> bytes:
    data = bytearray(wtns_bytes(witness_array(1), tmp_path))
    data[-32:] = FR.modulus.to_bytes(32, "little")  # the last wire's value = r
    return bytes(data)


def _foreign(tmp_path) -> bytes:
    witness = witness_array(1)
    witness[:, -1] = witness_array(2)[:, -1] ^ 1  # the same size, values of no instance of the circuit
    witness[1:, -1] = 0
    return wtns_bytes(witness, tmp_path)


@pytest.mark.parametrize(("case", "code", "named"), [
    ("garbage", grpc.StatusCode.INVALID_ARGUMENT, "witness"),
    ("empty", grpc.StatusCode.INVALID_ARGUMENT, "witness: empty"),
    ("wrong size", grpc.StatusCode.INVALID_ARGUMENT, "wires, the key expects"),
    ("non-canonical", grpc.StatusCode.INVALID_ARGUMENT, "not reduced"),
    ("foreign circuit", grpc.StatusCode.INVALID_ARGUMENT, "does not prove with this key"),
    ("unknown key", grpc.StatusCode.NOT_FOUND, "unknown key"),
    ("not a zkey", grpc.StatusCode.INVALID_ARGUMENT, "zkey"),
    ("missing zkey", grpc.StatusCode.INVALID_ARGUMENT, "No such file"),
])
def test_malformed_request_is_refused_and_the_daemon_serves_on(daemon, zkey, good, tmp_path, case, code, named):
    witness, key = {
        "garbage": (b"\x00garbage" * 9, {"zkey": zkey}),
        "empty": (b"", {"zkey": zkey}),
        "wrong size": (wtns_bytes(witness_array(1)[:, :-3], tmp_path), {"zkey": zkey}),
        "non-canonical": (_noncanonical(tmp_path), {"zkey": zkey}),
        "foreign circuit": (_foreign(tmp_path), {"zkey": zkey}),
        "unknown key": (good, {"key_id": "ab" * 32}),
        "not a zkey": (good, {"zkey": tmp_path / "w.wtns"}),
        "missing zkey": (good, {"zkey": tmp_path / "absent.zkey"}),
    }[case]
    if case == "not a zkey":
        wtns_bytes(witness_array(1), tmp_path)
    with daemon.client(timeout_s=TIMEOUT_S) as client:
        with pytest.raises(ServeError) as refused:
            client.prove(witness, **key)
        assert refused.value.code == code and named in refused.value.details, refused.value.details
        assert verified(client.prove(good, zkey=zkey), zkey, tmp_path)  # and it serves on


@pytest.mark.parametrize(("data", "named"), [
    (b"\x0a\x05ab", "runs past the end"),  # a KeyRef of 5 bytes, 2 there
    (b"\x0a\x04\x0a\x02\xff\xfe", "utf-8"),  # a key id that is not UTF-8
    (b"\x17", "wire type 7"),
], ids=["truncated", "not-utf8", "wire-type"])
def test_a_malformed_message_is_refused_and_the_daemon_serves_on(daemon, zkey, good, tmp_path, data, named):
    with daemon.client(timeout_s=TIMEOUT_S) as client:
        with pytest.raises(grpc.RpcError) as refused:
            client.channel.unary_unary(f"/{wire.SERVICE}/Prove")(data, timeout=TIMEOUT_S)
        details = refused.value.details()
        assert refused.value.code() == grpc.StatusCode.INVALID_ARGUMENT, details
        assert "a malformed ProveRequest message" in details and named in details, details
        assert verified(client.prove(good, zkey=zkey), zkey, tmp_path)


def test_a_failing_job_fails_alone(daemon, zkey, good, tmp_path):
    bad = _foreign(tmp_path)
    with daemon.client(timeout_s=TIMEOUT_S) as client:
        ids = [client.submit(w, zkey=zkey) for w in (good, bad, good, bad, good)]
        outcomes = []
        for job_id in ids:
            try:
                outcomes.append(verified(client.await_proof(job_id), zkey, tmp_path))
            except ServeError as exc:
                outcomes.append(exc.code)
    assert outcomes == [True, grpc.StatusCode.INVALID_ARGUMENT, True, grpc.StatusCode.INVALID_ARGUMENT, True]


def test_await_unknown_job_and_metrics(daemon):
    with daemon.client(timeout_s=TIMEOUT_S) as client:
        with pytest.raises(ServeError) as refused:
            client.await_proof("job-nope")
        text = client.metrics()
    assert refused.value.code == grpc.StatusCode.NOT_FOUND and "unknown job" in refused.value.details
    for name in ("numba_cuzk_proofs_total", "numba_cuzk_failures_total", "numba_cuzk_queue_depth",
                 "numba_cuzk_proof_latency_seconds_bucket", "numba_cuzk_device_busy_ratio"):
        assert name in text


def test_evict_and_preload(daemon, zkey, good, tmp_path):
    with daemon.client(timeout_s=TIMEOUT_S) as client:
        assert client.evict(zkey=zkey).tier == "cold"
        assert client.preload(zkey=zkey).tier == "hot"
        assert verified(client.prove(good, zkey=zkey), zkey, tmp_path)
    lines = [json.loads(line) for line in open(daemon.daemon.engine.recorder.live_path)][1:]
    moves = [(e["tier"], e.get("host_memory")) for e in lines if e["event"] == "key_tier"]
    assert moves[-3:] == [("cold", None), ("warm", "pageable"), ("hot", "pageable")]  # the CPU backend's


def test_32_clients_against_a_2_job_queue(daemon, zkey, tmp_path):
    assert daemon.daemon.max_running == 2
    witnesses = [wtns_bytes(witness_array(seed), tmp_path, f"w{seed}.wtns") for seed in range(32)]
    replies: dict[int, object] = {}

    def one(seed: int) -> None:
        with daemon.client(timeout_s=TIMEOUT_S) as client:
            replies[seed] = client.prove(witnesses[seed], zkey=zkey, priority=("high", "normal", "low")[seed % 3])

    threads = [threading.Thread(target=one, args=(seed,)) for seed in range(32)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(TIMEOUT_S)
    assert sorted(replies) == list(range(32))
    assert len({r.job_id for r in replies.values()}) == 32
    assert all(verified(r, zkey, tmp_path) for r in replies.values())
    publics = {r.public_json for r in replies.values()}
    assert len(publics) == 32  # each its own instance: no answer crossed to another client


def _settled(client, timeout_s: float = 30.0) -> dict:
    """The status once no job is queued or running (the daemon answers as it goes)."""
    import time

    deadline = time.monotonic() + timeout_s
    while True:
        status = client.status()
        if not status["jobs"] or time.monotonic() > deadline:
            return status
        time.sleep(0.05)


def test_a_client_that_disconnects_leaves_nothing_behind(daemon, zkey, good):
    with daemon.client() as client:
        for _ in range(6):
            with pytest.raises(ServeError) as gone:
                client._call("Prove", client._request(good, zkey, None, "low"), timeout_s=0.005)
            assert gone.value.code == grpc.StatusCode.DEADLINE_EXCEEDED
        status = _settled(client)
    assert status["jobs"] == [] and all(k["jobs"] == 0 for k in status["keys"])


def test_memory_stays_flat_over_hundreds_of_proofs(daemon, zkey, tmp_path):
    witnesses = [wtns_bytes(witness_array(seed), tmp_path, f"m{seed}.wtns") for seed in range(4)]

    def prove(count: int) -> None:
        def worker(k: int) -> None:
            with daemon.client(timeout_s=TIMEOUT_S) as client:
                for i in range(k, count, 4):
                    client.prove(witnesses[i % 4], zkey=zkey)
        threads = [threading.Thread(target=worker, args=(k,)) for k in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(TIMEOUT_S)

    with daemon.client(timeout_s=TIMEOUT_S) as client:
        prove(20)  # warm: every buffer and gRPC's thread pool made
        before = _settled(client)
        prove(PROOFS)
        after = _settled(client)
    grown = after["host_memory"]["rss_bytes"] - before["host_memory"]["rss_bytes"]
    print(f"RSS {before['host_memory']['rss_bytes'] / 2**20:.1f} -> {after['host_memory']['rss_bytes'] / 2**20:.1f} MiB")
    assert after["proofs"] - before["proofs"] == PROOFS
    assert grown < 16 << 20, f"RSS grew {grown / 2**20:.1f} MiB over {PROOFS} proofs"
    assert after["jobs"] == []


def test_a_partitioned_job(daemon, zkey, tmp_path):
    parts = [wtns_bytes(witness_array(seed), tmp_path, f"p{seed}.wtns") for seed in (3, 4, 5)]
    with daemon.client(timeout_s=TIMEOUT_S) as client:
        reply = client.prove(parts, zkey=zkey)
        with pytest.raises(ServeError) as refused:
            client.prove([parts[0], b"garbage!" * 8], zkey=zkey)
        with pytest.raises(ServeError) as failed:
            client.prove([parts[0], _foreign(tmp_path), parts[2]], zkey=zkey)
    assert len(reply.partitions) == 3 and reply.partitions[0].proof_json == reply.proof_json
    for k, part in enumerate(reply.partitions):
        assert verified(part, zkey, tmp_path), k
    assert len({p.public_json for p in reply.partitions}) == 3
    assert refused.value.code == grpc.StatusCode.INVALID_ARGUMENT and "partition 1: witness" in refused.value.details
    assert failed.value.code == grpc.StatusCode.INVALID_ARGUMENT and "partition 1: the witness does not prove" in \
        failed.value.details
