"""The client's wire format (serve/wire.py) against proving.proto's generated module: the
same messages, fields and calls, and the same bytes both ways on random messages."""

from __future__ import annotations

import pytest
from google.protobuf import descriptor
from hypothesis import given, settings
from hypothesis import strategies as st

from numba_cuzk.serve import proving_pb2, wire
from numba_cuzk.serve.protocol import PRIORITY_VALUES

SCALARS = {descriptor.FieldDescriptor.TYPE_STRING: wire.STRING, descriptor.FieldDescriptor.TYPE_BYTES: wire.BYTES,
           descriptor.FieldDescriptor.TYPE_DOUBLE: wire.DOUBLE, descriptor.FieldDescriptor.TYPE_INT64: wire.INT,
           descriptor.FieldDescriptor.TYPE_ENUM: wire.INT}


def _schema(message: descriptor.Descriptor) -> dict:
    return {f.number: (f.name, f.message_type.name if f.message_type else SCALARS[f.type],
                       f.is_repeated) for f in message.fields}


def test_the_messages_and_calls_are_the_protos():
    file = proving_pb2.DESCRIPTOR
    assert {name: _schema(m) for name, m in file.message_types_by_name.items()} == wire.MESSAGES
    service = file.services_by_name["Prover"]
    assert service.full_name == wire.SERVICE
    assert {m.name: (m.input_type.name, m.output_type.name) for m in service.methods} == wire.METHODS
    assert {v.name.lower(): v.number for v in file.enum_types_by_name["Priority"].values} == PRIORITY_VALUES


def _values(message: str, depth: int = 0):
    """A strategy of random field values for ``message`` (some fields left out)."""
    scalars = {wire.STRING: st.text(max_size=20), wire.BYTES: st.binary(max_size=40),
               wire.DOUBLE: st.floats(allow_nan=False), wire.INT: st.integers(0, 3)}
    fields = {}
    for name, kind, repeated in wire.MESSAGES[message].values():
        one = _values(kind, depth + 1) if kind in wire.MESSAGES else scalars[kind]
        fields[name] = st.lists(one, max_size=3) if repeated else one
    return st.fixed_dictionaries({}, optional=fields)


def _proto(message: str, values: dict):
    cls = getattr(proving_pb2, message)
    return cls(**{name: ([_proto(wire.MESSAGES[message][n][1], v) for v in value]
                         if isinstance(value, list) and value and isinstance(value[0], dict) else
                         _proto(wire.MESSAGES[message][n][1], value) if isinstance(value, dict) else value)
                  for n, (name, _, _) in wire.MESSAGES[message].items() if (value := values.get(name)) is not None})


def _plain(value):
    """A decoded namespace as nested dicts and lists."""
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return {k: _plain(v) for k, v in vars(value).items()} if hasattr(value, "__dict__") else value


def _complete(message: str, values: dict) -> dict:
    """``values`` as ``decode`` gives them back: every field, defaults where absent."""
    out = {}
    for name, kind, repeated in wire.MESSAGES[message].values():
        value = values.get(name)
        if kind in wire.MESSAGES:
            out[name] = [_complete(kind, v) for v in value or []] if repeated else _complete(kind, value or {})
        else:
            out[name] = list(value or []) if repeated else wire.decode(message, b"").__dict__[name] if value is None \
                else value
    return out


@pytest.mark.parametrize("message", sorted(wire.MESSAGES))
@settings(max_examples=40, deadline=None)
@given(data=st.data())
def test_random_messages_are_the_same_bytes_both_ways(message, data):
    values = data.draw(_values(message))
    expected = _proto(message, values).SerializeToString()
    assert wire.encode(message, values) == expected
    assert _plain(wire.decode(message, expected)) == _complete(message, values)


def test_unknown_fields_are_skipped_and_broken_bytes_refused():
    reply = proving_pb2.ProveReply(job_id="job-7", prove_ms=1.5).SerializeToString()
    newer = b"\x48\x2a" + b"\x52\x03abc" + reply + b"\x5d\x00\x00\x80\x3f"  # fields 9 (varint), 10 (bytes), 11 (fixed32)
    decoded = wire.decode("ProveReply", newer)
    assert decoded.job_id == "job-7" and decoded.prove_ms == 1.5 and decoded.partitions == []
    with pytest.raises(ValueError, match="runs past the end"):
        wire.decode("ProveReply", reply[:-3])
    with pytest.raises(ValueError, match="wire type"):
        wire.decode("ProveReply", b"\x0b")  # field 1 as a group: not proto3
    with pytest.raises(ValueError, match="ProveReply.job_id: wire type 0"):
        wire.decode("ProveReply", b"\x08\x01")


def test_a_negative_int64_decodes_as_protobuf_writes_it():
    data = proving_pb2.KeyReply(host_bytes=-5, device_bytes=1 << 40).SerializeToString()
    decoded = wire.decode("KeyReply", data)
    assert (decoded.host_bytes, decoded.device_bytes) == (-5, 1 << 40)
    assert wire.encode("KeyReply", {"host_bytes": -5, "device_bytes": 1 << 40}) == data
