"""proving.proto's messages on the wire, without protobuf: the client's and the daemon's.

A client process imports grpc and this module only. protobuf and the generated module
cost 59 M of a client process's 464 M instructions (13%, callgrind: the descriptor pool
built at import), and a witness sent in a protobuf message is copied into the message and
again into its serialization: 29 + 62 ms of CPU for a 2^20-wire witness (32 MB) on the
2-core box, against one join here. The daemon reads a request's bytes fields as views of
the request (``decode(copy=False)``): a 2^20-wire witness is not copied before its parse,
where protobuf copied it into the message and again on each read of the field.
proving.proto stays the contract: tests/serve/test_wire.py checks MESSAGES against the
generated module's descriptors, and random messages both ways.

Proto3's wire format: each field is a varint key (number << 3 | wire type), then its value:
a varint (wire type 0: enums, int64), 8 bytes (1: double) or a varint length and that
many bytes (2: string, bytes, a message). Fields holding their default (0, "", empty) are
left out, as protobuf leaves them out; unknown fields are skipped (a newer daemon's).
"""

from __future__ import annotations

import struct
from types import SimpleNamespace

SERVICE = "numba_cuzk.serve.v1.Prover"  # proving.proto's package and service
VARINT, FIXED64, LENGTH, FIXED32 = 0, 1, 2, 5
STRING, BYTES, DOUBLE, INT = "string", "bytes", "double", "int"  # INT: int64 and enums

# message -> {field number: (name, type, repeated)}; a type that is not a scalar names a message
MESSAGES: dict[str, dict[int, tuple[str, str, bool]]] = {
    "KeyRef": {1: ("key_id", STRING, False), 2: ("zkey_path", STRING, False)},
    "ProveRequest": {1: ("key", "KeyRef", False), 2: ("witness", BYTES, False), 3: ("priority", INT, False),
                     4: ("partitions", BYTES, True)},
    "PartitionProof": {1: ("proof_json", STRING, False), 2: ("public_json", STRING, False)},
    "ProveReply": {1: ("job_id", STRING, False), 2: ("key_id", STRING, False), 3: ("proof_json", STRING, False),
                   4: ("public_json", STRING, False), 5: ("queued_ms", DOUBLE, False),
                   6: ("prove_ms", DOUBLE, False), 7: ("partitions", "PartitionProof", True)},
    "SubmitReply": {1: ("job_id", STRING, False), 2: ("key_id", STRING, False)},
    "JobRef": {1: ("job_id", STRING, False), 2: ("timeout_s", DOUBLE, False)},
    "CancelReply": {1: ("job_id", STRING, False), 2: ("state", STRING, False)},
    "StatusRequest": {},
    "StatusReply": {1: ("json", STRING, False)},
    "KeyReply": {1: ("key_id", STRING, False), 2: ("tier", STRING, False), 3: ("host_bytes", INT, False),
                 4: ("device_bytes", INT, False)},
    "MetricsReply": {1: ("text", STRING, False)},
}
# the service's calls: method -> (request message, reply message)
METHODS = {"Prove": ("ProveRequest", "ProveReply"), "SubmitProof": ("ProveRequest", "SubmitReply"),
           "AwaitProof": ("JobRef", "ProveReply"), "Cancel": ("JobRef", "CancelReply"),
           "GetStatus": ("StatusRequest", "StatusReply"), "PreloadKey": ("KeyRef", "KeyReply"),
           "EvictKey": ("KeyRef", "KeyReply"), "GetMetrics": ("StatusRequest", "MetricsReply")}
_DEFAULTS = {STRING: "", BYTES: b"", DOUBLE: 0.0, INT: 0}
_WIRE = {STRING: LENGTH, BYTES: LENGTH, DOUBLE: FIXED64, INT: VARINT}
_DOUBLE = struct.Struct("<d")


def encode(message: str, values: dict) -> bytes:
    """``values`` ({field name: value}; a message field is a dict, a repeated one a list)
    as message ``message``'s bytes; missing fields hold their defaults."""
    parts: list[bytes] = []
    for number, (name, kind, repeated) in MESSAGES[message].items():
        value = values.get(name)
        for item in (value or ()) if repeated else (value,):
            if item is None or (not repeated and _is_default(kind, item)):
                continue
            if kind in MESSAGES:
                item = encode(kind, item)
            wire = _WIRE.get(kind, LENGTH)
            parts.append(_varint(number << 3 | wire))
            if wire == VARINT:
                parts.append(_varint(item & (1 << 64) - 1))
            elif wire == FIXED64:
                parts.append(_DOUBLE.pack(item))
            else:
                data = item.encode() if kind == STRING else memoryview(item).cast("B")  # length in bytes
                parts += [_varint(len(data)), data]
    return b"".join(parts)


def decode(message: str, data: bytes, copy: bool = True) -> SimpleNamespace:
    """Message ``message`` from its bytes: a namespace of its fields by name (defaults for
    those absent; repeated ones as lists, messages as namespaces). ``copy=False``: bytes
    fields are memoryviews of ``data``. ValueError on bytes that are not such a message
    (UnicodeDecodeError, a ValueError, for a string that is not UTF-8)."""
    schema = MESSAGES[message]
    fields = {name: [] if repeated else (decode(kind, b"") if kind in MESSAGES else _DEFAULTS[kind])
              for name, kind, repeated in schema.values()}
    view, pos = memoryview(data), 0
    while pos < len(view):
        key, pos = _read_varint(view, pos)
        number, wire = key >> 3, key & 7
        pos, raw = _read_value(view, pos, wire, message)
        if number not in schema:
            continue
        name, kind, repeated = schema[number]
        if wire != _WIRE.get(kind, LENGTH):
            raise ValueError(f"{message}.{name}: wire type {wire}, expected {_WIRE.get(kind, LENGTH)}")
        value = (decode(kind, raw, copy) if kind in MESSAGES else str(raw, "utf-8") if kind == STRING else
                 (bytes(raw) if copy else raw) if kind == BYTES else _DOUBLE.unpack(raw)[0] if kind == DOUBLE
                 else raw - (raw >> 63 << 64))
        if repeated:
            fields[name].append(value)
        else:
            fields[name] = value
    return SimpleNamespace(**fields)


def _is_default(kind: str, value) -> bool:
    """Left out of the message: a scalar's default (not -0.0, which protobuf writes)."""
    if kind == DOUBLE:
        return _DOUBLE.pack(value) == bytes(8)
    return kind in _DEFAULTS and value == _DEFAULTS[kind]


def _varint(value: int) -> bytes:
    out = bytearray()
    while value > 0x7F:
        out.append(value & 0x7F | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def _read_varint(view: memoryview, pos: int) -> tuple[int, int]:
    value = shift = 0
    while pos < len(view) and shift < 70:
        byte = view[pos]
        value |= (byte & 0x7F) << shift
        pos += 1
        if not byte & 0x80:
            return value, pos
        shift += 7
    raise ValueError(f"a varint runs past the end of the message, at byte {pos}")


def _read_value(view: memoryview, pos: int, wire: int, message: str):
    """(position after the value, the value: an int for a varint, a view of the bytes otherwise)."""
    if wire == VARINT:
        return _read_varint(view, pos)[::-1]
    size = {FIXED64: 8, FIXED32: 4}.get(wire)
    if size is None and wire == LENGTH:
        size, pos = _read_varint(view, pos)
    if size is None:
        raise ValueError(f"{message}: wire type {wire} at byte {pos} is not one of proto3's")
    if pos + size > len(view):
        raise ValueError(f"{message}: a field of {size} bytes runs past the end, at byte {pos}")
    return pos + size, view[pos:pos + size]
