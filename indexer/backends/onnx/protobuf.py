"""Just enough of protobuf's wire format to read and rewrite an ONNX model, field by field.

Why not the ``onnx`` package: it is not a dependency, and measured here it would not pay its way.
Its official optimizer keeps the exporter's NaN guards that :mod:`indexer.backends.onnx.fusions`
removes, its result ran ~21% slower, and it would add ``onnx`` and ``sympy`` (~110 MB) to every
install. The graph edits need only a few fields, so the rest of a message is copied byte for byte
(:attr:`Field.raw`), and no schema is needed.

The field numbers used are ONNX's (onnx/onnx.proto); they are named where they are used.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

VARINT, FIXED64, LENGTH_DELIMITED, FIXED32 = 0, 1, 2, 5


@dataclass(frozen=True)
class Field:
    """One protobuf field as it lies in the message: its number, wire type, payload and raw bytes."""

    number: int
    wire_type: int
    payload: bytes  # the bytes of a length-delimited or fixed-width field; empty for a varint
    raw: bytes  # the whole field, key included, to copy unchanged
    value: int = 0  # the number of a varint field


def parse(message: bytes) -> list[Field]:
    """The top-level fields of a serialised protobuf message, in order.

    Raises:
        ValueError: the bytes are not a well-formed message.
    """
    fields = []
    position = 0
    while position < len(message):
        start = position
        key, position = read_varint(message, position)
        number, wire_type = key >> 3, key & 7
        payload, value = b"", 0
        if wire_type == VARINT:
            value, position = read_varint(message, position)
        elif wire_type in (FIXED64, FIXED32):
            width = 8 if wire_type == FIXED64 else 4
            payload = message[position : position + width]
            position += width
        elif wire_type == LENGTH_DELIMITED:
            length, position = read_varint(message, position)
            payload = message[position : position + length]
            position += length
        else:
            raise ValueError(f"unsupported protobuf wire type {wire_type} at byte {start}")
        if position > len(message):
            raise ValueError(f"protobuf field at byte {start} runs past the end")
        fields.append(Field(number, wire_type, payload, message[start:position], value))
    return fields


def read_varint(data: bytes, position: int) -> tuple[int, int]:
    """The varint at ``position`` and the position after it."""
    value = shift = 0
    while True:
        if position >= len(data):
            raise ValueError("protobuf varint runs past the end")
        byte = data[position]
        position += 1
        value |= (byte & 0x7F) << shift
        if byte < 0x80:
            return value, position
        shift += 7


def encode_varint(value: int) -> bytes:
    """A varint; negative numbers as protobuf writes int64, in ten bytes (two's complement)."""
    if value < 0:
        value += 1 << 64
    encoded = bytearray()
    while value >= 0x80:
        encoded.append(value & 0x7F | 0x80)
        value >>= 7
    encoded.append(value)
    return bytes(encoded)


def encode_field(number: int, payload: bytes) -> bytes:
    """A length-delimited field: key, length, payload."""
    return encode_varint(number << 3 | LENGTH_DELIMITED) + encode_varint(len(payload)) + payload


def encode_int(number: int, value: int) -> bytes:
    """A varint field: key, value."""
    return encode_varint(number << 3 | VARINT) + encode_varint(value)


def encode_float(number: int, value: float) -> bytes:
    """A 32-bit float field: key, four little-endian bytes."""
    return encode_varint(number << 3 | FIXED32) + struct.pack("<f", value)


def first(fields: list[Field], number: int) -> Field | None:
    """The first field with this number, or None."""
    return next((field for field in fields if field.number == number), None)


def text(fields: list[Field], number: int) -> str:
    """The first string field with this number, decoded ('' when absent)."""
    field = first(fields, number)
    return field.payload.decode() if field is not None else ""
