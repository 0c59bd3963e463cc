"""The ONNX model as the graph edits read and write it: ONNX's field numbers (onnx/onnx.proto), a
node, a tensor, and the graph put back together around what an edit dropped, replaced or added.

Read and written through protobuf's wire format (:mod:`indexer.backends.onnx.protobuf`, which says
why not the ``onnx`` package): everything an edit does not touch is copied byte for byte.
"""

from __future__ import annotations

import dataclasses
import math
import struct
from dataclasses import dataclass

import numpy as np

from indexer.backends.onnx.protobuf import (
    LENGTH_DELIMITED,
    Field,
    encode_field,
    encode_int,
    first,
    parse,
    read_varint,
    text,
)

MODEL_OPSET_IMPORT = 8
MODEL_GRAPH = 7
OPSET_DOMAIN = 1
OPSET_VERSION = 2
GRAPH_NODE = 1
GRAPH_INITIALIZER = 5
GRAPH_INPUT = 11
GRAPH_OUTPUT = 12
GRAPH_VALUE_INFO = 13
NODE_INPUT = 1
NODE_OUTPUT = 2
NODE_NAME = 3
NODE_OP_TYPE = 4
NODE_ATTRIBUTE = 5
NODE_DOMAIN = 7
ATTRIBUTE_NAME = 1
ATTRIBUTE_F = 2
ATTRIBUTE_I = 3
ATTRIBUTE_T = 5
ATTRIBUTE_INTS = 8
ATTRIBUTE_TYPE = 20
ATTRIBUTE_INT, ATTRIBUTE_INT_LIST = 2, 7  # AttributeProto.AttributeType
VALUE_INFO_NAME = 1
TENSOR_DIMS = 1
TENSOR_DATA_TYPE = 2
TENSOR_FLOAT_DATA = 4
TENSOR_INT32_DATA = 5
TENSOR_NAME = 8
TENSOR_RAW_DATA = 9
TENSOR_DATA_LOCATION = 14
FLOAT, UINT8, INT8, INT32, INT64 = 1, 2, 3, 6, 7  # TensorProto.DataType

#: The tensor types the edits read and write, as numpy stores them (ONNX's raw data is little-endian).
NUMPY_TYPES: dict[int, np.dtype] = {
    FLOAT: np.dtype("<f4"),
    UINT8: np.dtype("u1"),
    INT8: np.dtype("i1"),
    INT64: np.dtype("<i8"),
}
EXTERNAL = 1  # TensorProto.DataLocation

#: What makes ``u`` in a GELU's ``u = MatMul(x, W) + b``: a float or an int8 matrix product.
MATRIX_PRODUCTS = ("MatMul", "MatMulIntegerToFloat")


@dataclass(frozen=True)
class Constants:
    """The graph's initializers: all their names, the values of the float scalars among them and
    among the ``Constant`` nodes' outputs, and the ``Constant`` nodes' integer vectors (shapes)."""

    names: set[str]
    scalars: dict[str, float]
    integers: dict[str, tuple[int, ...]] = dataclasses.field(default_factory=dict)


def scalar_constants(graph: list[Field]) -> Constants:
    """The initializers, and the float scalars among them and among the outputs of ``Constant`` nodes
    (which older exporters write instead of initializers)."""
    names, scalars, integers = set(), {}, {}
    for field in graph:
        if field.number == GRAPH_INITIALIZER:
            tensor = Tensor.parse(field.payload)
            names.add(tensor.name)
            scalar = float_scalar(tensor)
            if scalar is not None:
                scalars[tensor.name] = scalar
        elif field.number == GRAPH_NODE:
            scalars.update(constant_node_scalar(field.payload))
            integers.update(constant_node_integers(field.payload))
    return Constants(names, scalars, integers)


def constant_node_integers(node: bytes) -> dict[str, tuple[int, ...]]:
    """``{output: values}`` for a ``Constant`` node holding a vector (or scalar) of int64, else nothing."""
    fields = parse(node)
    if text(fields, NODE_OP_TYPE) != "Constant" or text(fields, NODE_DOMAIN):
        return {}
    outputs = [field.payload.decode() for field in fields if field.number == NODE_OUTPUT]
    for attribute in (parse(field.payload) for field in fields if field.number == NODE_ATTRIBUTE):
        value = first(attribute, ATTRIBUTE_T)
        if text(attribute, ATTRIBUTE_NAME) != "value" or value is None or len(outputs) != 1:
            continue
        tensor = Tensor.parse(value.payload)
        values = tensor.array() if tensor.data_type == INT64 and len(tensor.dims) <= 1 else None
        return {outputs[0]: tuple(int(each) for each in values.reshape(-1))} if values is not None else {}
    return {}


def float_scalar(tensor: Tensor) -> float | None:
    """The value of a float tensor of shape (), else None."""
    if not tensor.dims and tensor.data_type == FLOAT and tensor.data is not None and len(tensor.data) == 4:
        return struct.unpack("<f", tensor.data)[0]
    return None


def constant_node_scalar(node: bytes) -> dict[str, float]:
    """``{output: value}`` for a ``Constant`` node holding one float (shape () or (1,)), else nothing."""
    fields = parse(node)
    if text(fields, NODE_OP_TYPE) != "Constant" or text(fields, NODE_DOMAIN):
        return {}
    outputs = [field.payload.decode() for field in fields if field.number == NODE_OUTPUT]
    for attribute in (parse(field.payload) for field in fields if field.number == NODE_ATTRIBUTE):
        name = text(attribute, ATTRIBUTE_NAME)
        tensor_field, float_field = first(attribute, ATTRIBUTE_T), first(attribute, ATTRIBUTE_F)
        if name == "value" and tensor_field is not None:
            tensor = Tensor.parse(tensor_field.payload)
            value = float_scalar(dataclasses.replace(tensor, dims=()) if tensor.dims == (1,) else tensor)
        elif name == "value_float" and float_field is not None:
            value = struct.unpack("<f", float_field.payload)[0]
        else:
            continue
        return {outputs[0]: value} if value is not None and len(outputs) == 1 else {}
    return {}


def dead_outputs(nodes: list[Node], added: dict[str, list[bytes]], graph: list[Field]) -> set[str]:
    """The outputs of the nodes no graph output depends on any more once ``added`` replace the nodes
    making their keys (the fused blocks' insides, and the mask they computed)."""
    inputs_of = {output: node.inputs for node in nodes for output in node.outputs}
    for made in added.values():
        for node in map(Node.parse, made):
            for output in node.outputs:
                inputs_of[output] = node.inputs
    needed = [value_info_name(field.payload) for field in graph if field.number == GRAPH_OUTPUT]
    live: set[str] = set()
    while needed:
        name = needed.pop()
        if name in live or name not in inputs_of:
            continue
        live.add(name)
        needed.extend(inputs_of[name])
    return {output for node in nodes for output in node.outputs if output not in live}


def rebuild(
    model_fields: list[Field],
    graph: list[Field],
    dropped: set[str],
    replaced: dict[str, str],
    added: dict[str, list[bytes]],
) -> bytes:
    """The ModelProto again, without the nodes making ``dropped`` outputs, with inputs renamed per
    ``replaced``, and with the nodes ``added[name]`` in place of the node that made ``name``."""
    new_graph = rebuilt_graph(graph, dropped, replaced, added)
    new_model = bytearray()
    for field in model_fields:
        new_model += encode_field(MODEL_GRAPH, new_graph) if field.number == MODEL_GRAPH else field.raw
    return bytes(new_model)


def rebuilt_graph(
    graph: list[Field], dropped: set[str], replaced: dict[str, str], added: dict[str, list[bytes]]
) -> bytes:
    """The GraphProto's bytes for :func:`rebuild`."""
    new_graph = bytearray()
    for field in graph:
        if field.number == GRAPH_NODE:
            node = Node.parse(field.payload)
            made = [added[name] for name in node.outputs if name in added]
            if made:
                new_graph += b"".join(encode_field(GRAPH_NODE, each) for each in made[0])
                continue
            if set(node.outputs) & dropped:
                continue
            if any(name in replaced for name in node.inputs):
                new_graph += encode_field(GRAPH_NODE, rename_inputs(field.payload, replaced))
                continue
        elif field.number == GRAPH_VALUE_INFO and value_info_name(field.payload) in dropped:
            continue
        new_graph += field.raw
    return bytes(new_graph)


@dataclass(frozen=True)
class Node:
    """The parts of a NodeProto the edit reads."""

    op_type: str
    inputs: list[str]
    outputs: list[str]
    attributes: dict[str, int]  # the integer ones (Cast's ``to``); the edits need no others

    @classmethod
    def parse(cls, payload: bytes) -> Node:
        op_type, inputs, outputs, attributes = "", [], [], {}
        for field in parse(payload):
            if field.number == NODE_OP_TYPE:
                op_type = field.payload.decode()
            elif field.number == NODE_INPUT:
                inputs.append(field.payload.decode())
            elif field.number == NODE_OUTPUT:
                outputs.append(field.payload.decode())
            elif field.number == NODE_ATTRIBUTE:
                attribute = parse(field.payload)
                value = first(attribute, ATTRIBUTE_I)
                if value is not None:
                    attributes[text(attribute, ATTRIBUTE_NAME)] = value.value
        return cls(op_type, inputs, outputs, attributes)


def rename_inputs(node: bytes, replaced: dict[str, str]) -> bytes:
    """A NodeProto with its inputs renamed, every other field as it was."""
    renamed = bytearray()
    for field in parse(node):
        if field.number == NODE_INPUT:
            name = field.payload.decode()
            renamed += encode_field(NODE_INPUT, replaced.get(name, name).encode())
        else:
            renamed += field.raw
    return bytes(renamed)


def value_info_name(payload: bytes) -> str:
    names = [field.payload.decode() for field in parse(payload) if field.number == VALUE_INFO_NAME]
    return names[0] if names else ""


@dataclass(frozen=True)
class Tensor:
    """The parts of an initializer (TensorProto) the edits read."""

    name: str
    dims: tuple[int, ...]
    data_type: int
    data: bytes | None  # the values, little-endian; None when they lie in another file

    @classmethod
    def parse(cls, payload: bytes) -> Tensor:
        fields = parse(payload)
        raw = first(fields, TENSOR_RAW_DATA)
        floats = b"".join(field.payload for field in fields if field.number == TENSOR_FLOAT_DATA)
        location = first(fields, TENSOR_DATA_LOCATION)
        external = location is not None and location.value == EXTERNAL
        data_type = next((field.value for field in fields if field.number == TENSOR_DATA_TYPE), 0)
        if raw is None and data_type in (UINT8, INT8) and first(fields, TENSOR_INT32_DATA) is not None:
            floats = small_integers(fields, NUMPY_TYPES[data_type])  # a quantizer's zero points
        return cls(
            name=text(fields, TENSOR_NAME),
            dims=tuple(field.value for field in fields if field.number == TENSOR_DIMS),
            data_type=data_type,
            data=None if external else raw.payload if raw is not None else floats,
        )

    def array(self) -> np.ndarray | None:
        """The values as a numpy array of this shape, when they are here, complete, and of one of the
        types in :data:`NUMPY_TYPES`."""
        dtype = NUMPY_TYPES.get(self.data_type)
        if dtype is None or self.data is None or len(self.data) != math.prod(self.dims) * dtype.itemsize:
            return None
        return np.frombuffer(self.data, dtype=dtype).reshape(self.dims)


def small_integers(fields: list[Field], dtype: np.dtype) -> bytes:
    """A TensorProto's ``int32_data`` (where ONNX keeps 8-bit values that are not raw) as the bytes of
    ``dtype``: packed or one field per value, negative values as 64-bit two's complement."""
    values = []
    for field in fields:
        if field.number != TENSOR_INT32_DATA:
            continue
        if field.wire_type != LENGTH_DELIMITED:
            values.append(field.value)
            continue
        position = 0
        while position < len(field.payload):
            value, position = read_varint(field.payload, position)
            values.append(value)
    signed = [value - (1 << 64) if value >= 1 << 63 else value for value in values]
    return np.array(signed, dtype=np.int64).astype(dtype).tobytes()


def tensor_proto(name: str, values: np.ndarray) -> bytes:
    """A TensorProto holding ``values`` (of a type in :data:`NUMPY_TYPES`) as raw data."""
    data_type = next(number for number, dtype in NUMPY_TYPES.items() if dtype == values.dtype)
    return (
        b"".join(encode_int(TENSOR_DIMS, size) for size in values.shape)
        + encode_int(TENSOR_DATA_TYPE, data_type)
        + encode_field(TENSOR_NAME, name.encode())
        + encode_field(TENSOR_RAW_DATA, values.astype(values.dtype.newbyteorder("<")).tobytes())
    )


def node_proto(
    op_type: str, inputs: list[str], outputs: list[str], name: str, domain: str = "", attributes: bytes = b""
) -> bytes:
    """A NodeProto; ``attributes`` are encoded AttributeProto fields (see :func:`int_attribute`)."""
    return (
        b"".join(encode_field(NODE_INPUT, each.encode()) for each in inputs)
        + b"".join(encode_field(NODE_OUTPUT, each.encode()) for each in outputs)
        + encode_field(NODE_NAME, name.encode())
        + encode_field(NODE_OP_TYPE, op_type.encode())
        + attributes
        + (encode_field(NODE_DOMAIN, domain.encode()) if domain else b"")
    )


def int_attribute(name: str, value: int | list[int]) -> bytes:
    """A node's attribute field: one integer, or a list of them."""
    if isinstance(value, int):
        body = encode_int(ATTRIBUTE_I, value) + encode_int(ATTRIBUTE_TYPE, ATTRIBUTE_INT)
    else:
        body = b"".join(encode_int(ATTRIBUTE_INTS, each) for each in value)
        body += encode_int(ATTRIBUTE_TYPE, ATTRIBUTE_INT_LIST)
    return encode_field(NODE_ATTRIBUTE, encode_field(ATTRIBUTE_NAME, name.encode()) + body)


MICROSOFT = "com.microsoft"


def only_graph(model_fields: list[Field]) -> list[Field] | None:
    """The fields of the model's graph, parsed; None unless it has exactly one (an edit then leaves
    the model as it is)."""
    graphs = [field for field in model_fields if field.number == MODEL_GRAPH]
    return parse(graphs[0].payload) if len(graphs) == 1 else None


def initializers(graph: list[Field]) -> list[Tensor]:
    return [Tensor.parse(field.payload) for field in graph if field.number == GRAPH_INITIALIZER]


def default_opset(model_fields: list[Field]) -> int:
    """The version of the default (ai.onnx) operator set the model imports."""
    for field in model_fields:
        if field.number == MODEL_OPSET_IMPORT:
            opset = parse(field.payload)
            if text(opset, OPSET_DOMAIN) in ("", "ai.onnx"):
                version = first(opset, OPSET_VERSION)
                return version.value if version is not None else 0
    return 0


def with_graph(model_fields: list[Field], graph: bytes, domain: str) -> bytes:
    """The ModelProto with this graph, importing operator set ``domain`` (version 1) if it did not."""
    imported = {
        text(parse(field.payload), OPSET_DOMAIN)
        for field in model_fields
        if field.number == MODEL_OPSET_IMPORT
    }
    new_model = bytearray()
    for field in model_fields:
        new_model += encode_field(MODEL_GRAPH, graph) if field.number == MODEL_GRAPH else field.raw
    if domain not in imported:
        new_model += encode_field(
            MODEL_OPSET_IMPORT, encode_field(OPSET_DOMAIN, domain.encode()) + encode_int(OPSET_VERSION, 1)
        )
    return bytes(new_model)
