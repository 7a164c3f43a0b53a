"""What the daemon and its clients agree on, without the engine: addresses, the token's
metadata key, priorities, and proving.proto with its generated modules.

Addresses: ``unix:PATH`` (the default: ``default_socket()``) or ``HOST:PORT``. A TCP
address that is not loopback requires a token (``--token-file``), carried by every call
as the ``TOKEN_METADATA`` metadata entry.

Neither side imports protobuf: both speak proving.proto's messages through serve/wire.py.
The generated modules (proving_pb2.py, proving_pb2_grpc.py) are the contract that
tests/serve/test_wire.py holds wire.py to, and a ready stub for other Python clients; they
are committed; after an edit of proving.proto, regenerate them with (grpcio-tools, the
``dev`` extra), then update wire.MESSAGES to match::

    python -m numba_cuzk.serve.protocol --generate

Pure stdlib at import: the client imports this, and must start in a few hundred ms.
"""

from __future__ import annotations

import os
import sys
from typing import NamedTuple
from pathlib import Path

HERE = Path(__file__).resolve().parent
PROTO = HERE / "proving.proto"
TOKEN_METADATA = "x-numba-cuzk-token"
PRIORITIES = ("critical", "high", "normal", "low")  # order of service, highest first
PRIORITY_VALUES = {"normal": 0, "critical": 1, "high": 2, "low": 3}  # proving.proto's enum Priority
ENV_ADDRESS = "NUMBA_CUZK_SERVER"  # the client's default address, when set
MAX_MESSAGE_BYTES = 1 << 30  # a 2^24-constraint witness is ~540 MB; gRPC's default is 4 MB


def default_socket() -> Path:
    """The daemon's default Unix socket: $XDG_RUNTIME_DIR/numba-cuzk/serve.sock (a
    per-user directory the system keeps private), else /tmp/numba-cuzk-UID/serve.sock."""
    runtime = os.environ.get("XDG_RUNTIME_DIR")
    folder = Path(runtime) / "numba-cuzk" if runtime else Path("/tmp") / f"numba-cuzk-{os.getuid()}"
    return folder / "serve.sock"


class Address(NamedTuple):
    """A parsed address: ``unix`` with ``path``, or TCP ``host`` and ``port``. (A NamedTuple:
    dataclasses, like ipaddress below, would be a client process's import, which grpc's
    imports do not already pay for.)"""

    unix: bool
    path: str = ""
    host: str = ""
    port: int = 0

    @property
    def target(self) -> str:
        """gRPC's form of the address."""
        if self.unix:
            return f"unix:{self.path}"
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"{host}:{self.port}"

    @property
    def loopback(self) -> bool:
        """Reachable from this machine only: a Unix socket, localhost or a loopback IP."""
        if self.unix or self.host == "localhost":
            return True
        import ipaddress

        try:
            return ipaddress.ip_address(self.host).is_loopback
        except ValueError:  # a host name: it may resolve anywhere
            return False

    def __str__(self) -> str:
        return self.target


def parse_address(text: str | None) -> Address:
    """``unix:PATH`` or ``HOST:PORT`` ([V6]:PORT) -> Address; None or "" -> $NUMBA_CUZK_SERVER
    or the default socket. ValueError naming what is wrong."""
    text = text or os.environ.get(ENV_ADDRESS) or f"unix:{default_socket()}"
    if text.startswith("unix:"):
        path = text[len("unix:"):]
        if path.startswith("//"):  # gRPC's unix:///abs/path
            path = path[2:]
        if not path:
            raise ValueError(f"address {text!r}: unix: needs a socket path")
        return Address(True, path=os.path.abspath(path))
    host, sep, port = text.rpartition(":")
    host = host[1:-1] if host.startswith("[") and host.endswith("]") else host
    if not sep or not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise ValueError(f"address {text!r}: expected unix:PATH or HOST:PORT (a port in 1..65535)")
    return Address(False, host=host, port=int(port))


def read_token(path: str | os.PathLike) -> str:
    """The token in ``path`` (whitespace stripped); ValueError if it is empty or short."""
    token = Path(path).read_text().strip()
    if len(token) < 16:
        raise ValueError(f"{path}: a token needs at least 16 characters, found {len(token)}")
    return token


def generate() -> None:
    """Regenerate proving_pb2.py and proving_pb2_grpc.py from proving.proto (grpcio-tools),
    with the import of proving_pb2 made package-relative."""
    from grpc_tools import protoc

    code = protoc.main(["grpc_tools.protoc", f"-I{HERE}", f"--python_out={HERE}", f"--grpc_python_out={HERE}",
                        str(PROTO)])
    if code:
        raise SystemExit(f"protoc failed with exit code {code}")
    stub = HERE / "proving_pb2_grpc.py"
    stub.write_text(stub.read_text().replace("import proving_pb2 as", "from numba_cuzk.serve import proving_pb2 as"))


if __name__ == "__main__":
    if sys.argv[1:] != ["--generate"]:
        raise SystemExit("usage: python -m numba_cuzk.serve.protocol --generate")
    generate()
