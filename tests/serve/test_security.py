"""Who may call: a TCP daemon with a token refuses a wrong or missing one; a non-loopback
address without a token does not start; the Unix socket's folder must be private."""

from __future__ import annotations

import socket

import grpc
import pytest

from numba_cuzk.serve import protocol
from numba_cuzk.serve.client import ProverClient, ServeError
from numba_cuzk.serve.server import ServeConfig, check_listen, start

TOKEN = "s3cret-token-of-the-daemon-0123456789"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def tcp_daemon(tmp_path_factory):
    folder = tmp_path_factory.mktemp("tcp")
    (folder / "token").write_text(TOKEN + "\n")
    address = f"127.0.0.1:{_free_port()}"
    server, daemon = start(ServeConfig(listen=address, token_file=str(folder / "token"), cpu=True,
                                       timeline=str(folder / "timeline.jsonl")))
    yield address
    daemon.close()
    server.stop(1).wait()


@pytest.mark.parametrize("token", [None, "wrong-token-wrong-token", TOKEN[:-1]])
def test_a_wrong_or_missing_token_is_refused(tcp_daemon, token):
    with ProverClient(tcp_daemon, token=token, timeout_s=30) as client:
        with pytest.raises(ServeError) as refused:
            client.status()
        with pytest.raises(ServeError):
            client.prove(b"x", key_id="ab" * 32)
    assert refused.value.code == grpc.StatusCode.UNAUTHENTICATED and "token" in refused.value.details


def test_the_right_token_is_served(tcp_daemon):
    with ProverClient(tcp_daemon, token=TOKEN, timeout_s=30) as client:
        assert client.status()["queue"]["max_running"] == 3  # the CPU backend's one device: 2 workers + 1 slot


@pytest.mark.parametrize("address", ["0.0.0.0:9555", "10.1.2.3:9555", "example.org:9555", "[::]:9555"])
def test_non_loopback_tcp_needs_a_token(address):
    with pytest.raises(ValueError, match="--token-file"):
        check_listen(protocol.parse_address(address), None)


@pytest.mark.parametrize("address", ["127.0.0.1:9555", "localhost:9555", "[::1]:9555", "unix:/tmp/x.sock"])
def test_loopback_needs_none(address):
    assert check_listen(protocol.parse_address(address), None) is None


def test_a_short_token_is_refused(tmp_path):
    (tmp_path / "token").write_text("short\n")
    with pytest.raises(ValueError, match="at least 16"):
        check_listen(protocol.parse_address("0.0.0.0:9555"), str(tmp_path / "token"))


@pytest.mark.parametrize("text", ["unix:", "nohost", "host:0", "host:70000", ":80"])
def test_bad_addresses_are_named(text):
    with pytest.raises(ValueError, match="address"):
        protocol.parse_address(text)


def test_default_socket_is_in_the_runtime_dir(monkeypatch, tmp_path):
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(tmp_path))
    monkeypatch.delenv(protocol.ENV_ADDRESS, raising=False)
    assert protocol.parse_address(None).path == str(tmp_path / "numba-cuzk" / "serve.sock")
    monkeypatch.delenv("XDG_RUNTIME_DIR")
    assert protocol.default_socket().parent.name.startswith("numba-cuzk-")
