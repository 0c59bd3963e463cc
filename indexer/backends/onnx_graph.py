"""Two edits to a saved ONNX graph of a PyTorch-exported BERT-style model, so it runs faster.

1. Drop the NaN guard after each softmax. PyTorch's exporter writes attention as
   ``Where(IsNaN(p), 0, p)`` with ``p = Softmax(scores)``, to zero the rows of a query that may
   attend to nothing. Every text we embed has [CLS] and [SEP] unmasked, so no row is all masked and
   ``p`` holds no NaN: the guard returns ``p`` unchanged. onnxruntime runs it anyway, over
   batch x heads x width x width values per layer, single-threaded: 12% of a run at 8 x 256 tokens.
   Dropping it made all-MiniLM-L6-v2 1.12-1.2x faster with bit-identical outputs.
2. Fuse each GELU with the bias add before it into onnxruntime's ``BiasGelu`` (exact erf GELU): six
   element-wise passes over the 1536-wide activations become one; kernel time at 8 x 256 tokens
   fell by ~10% of the run, outputs within 4e-6.

The edits are made on the graph file of the optimised-model cache (weights live in a side file, so
the graph is ~50 KB), by reading protobuf's wire format directly: the ``onnx`` package is not a
dependency, and only a few fields matter. Everything else is copied byte for byte. A graph that does
not have exactly the expected shape is left as it is. The field numbers are ONNX's (onnx/onnx.proto):
ModelProto.graph = 7; GraphProto.node = 1, initializer = 5, output = 12, value_info = 13;
NodeProto.input = 1, output = 2, name = 3, op_type = 4, domain = 7; ValueInfoProto.name = 1;
TensorProto.dims = 1, data_type = 2, float_data = 4, name = 8, raw_data = 9.
"""

from __future__ import annotations

import math
import struct
from dataclasses import dataclass

MODEL_GRAPH = 7
GRAPH_NODE = 1
GRAPH_INITIALIZER = 5
GRAPH_OUTPUT = 12
GRAPH_VALUE_INFO = 13
NODE_INPUT = 1
NODE_OUTPUT = 2
NODE_NAME = 3
NODE_OP_TYPE = 4
NODE_DOMAIN = 7
VALUE_INFO_NAME = 1
TENSOR_DIMS = 1
TENSOR_DATA_TYPE = 2
TENSOR_FLOAT_DATA = 4
TENSOR_NAME = 8
TENSOR_RAW_DATA = 9
FLOAT = 1  # TensorProto.DataType.FLOAT

VARINT, FIXED64, LENGTH_DELIMITED, FIXED32 = 0, 1, 2, 5


@dataclass(frozen=True)
class Field:
    """One protobuf field as it lies in the message: its number, wire type, payload and raw bytes."""

    number: int
    wire_type: int
    payload: bytes  # the bytes of a length-delimited or fixed-width field; empty for a varint
    raw: bytes  # the whole field, key included, to copy unchanged
    value: int = 0  # the number of a varint field


def streamline(model: bytes) -> tuple[bytes, dict[str, int]]:
    """Both edits; returns the serialised ModelProto and how many of each were made.

    Raises:
        ValueError: the bytes are not a protobuf message.
    """
    model, guards = without_nan_guards(model)
    model, gelus = with_fused_gelu(model)
    return model, {"nan_guards_dropped": guards, "gelus_fused": gelus}


def without_nan_guards(model: bytes) -> tuple[bytes, int]:
    """The serialised ModelProto with every ``Where(IsNaN(Softmax(x)), c, Softmax(x))`` replaced by
    ``Softmax(x)``, and how many guards were dropped (0: the bytes come back unchanged)."""
    model_fields = parse(model)
    graph_fields = [field for field in model_fields if field.number == MODEL_GRAPH]
    if len(graph_fields) != 1:
        return model, 0
    graph = parse(graph_fields[0].payload)
    nodes = [(field, Node.parse(field.payload)) for field in graph if field.number == GRAPH_NODE]
    produced_by = {output: node for _, node in nodes for output in node.outputs}
    replaced: dict[str, str] = {}  # a guard's output -> the softmax output it returns
    dropped: set[str] = set()  # outputs of the nodes taken out
    for _, node in nodes:
        if node.op_type != "Where" or len(node.inputs) != 3 or len(node.outputs) != 1:
            continue
        condition, guarded = produced_by.get(node.inputs[0]), produced_by.get(node.inputs[2])
        if (
            condition is not None
            and condition.op_type == "IsNaN"
            and condition.inputs == [node.inputs[2]]
            and guarded is not None
            and guarded.op_type == "Softmax"
        ):
            replaced[node.outputs[0]] = node.inputs[2]
            dropped.update(node.outputs)
            dropped.update(condition.outputs)
    if not replaced:
        return model, 0
    kept_inputs = {name for _, node in nodes if not set(node.outputs) & dropped for name in node.inputs}
    if kept_inputs & (dropped - set(replaced)):
        return model, 0  # an IsNaN result is also used elsewhere: leave the graph alone
    if any(field.number == GRAPH_OUTPUT and value_info_name(field.payload) in replaced for field in graph):
        return model, 0  # a guard's output is an output of the model
    return rebuild(model_fields, graph, dropped, replaced, {}), len(replaced)


def with_fused_gelu(model: bytes) -> tuple[bytes, int]:
    """The serialised ModelProto with each exported GELU and the bias add before it replaced by one
    ``BiasGelu`` (onnxruntime's com.microsoft operator, exact erf GELU), and how many were fused.

    The exporter writes ``u = MatMul(x, W) + b; u * (0.5 * (1 + erf(u / sqrt(2))))`` in six
    element-wise nodes, each a pass over the 1536-wide activations; onnxruntime's own GELU fusion
    does not recognise this order of operands.
    """
    model_fields = parse(model)
    graph_fields = [field for field in model_fields if field.number == MODEL_GRAPH]
    if len(graph_fields) != 1:
        return model, 0
    graph = parse(graph_fields[0].payload)
    nodes = [Node.parse(field.payload) for field in graph if field.number == GRAPH_NODE]
    constants = scalar_constants(graph)
    produced_by = {output: node for node in nodes for output in node.outputs}
    users: dict[str, list[Node]] = {}
    for node in nodes:
        for name in node.inputs:
            users.setdefault(name, []).append(node)
    dropped: set[str] = set()
    added: dict[str, bytes] = {}  # the final Mul's output -> the BiasGelu node that now makes it
    for erf in (node for node in nodes if node.op_type == "Erf"):
        chain = gelu_chain(erf, produced_by, users, constants)
        if chain is None:
            continue
        bias_add, others, final = chain
        matmul_output, bias = (
            bias_add.inputs if bias_add.inputs[1] in constants.names else bias_add.inputs[::-1]
        )
        dropped.update(output for node in (bias_add, *others) for output in node.outputs)
        added[final.outputs[0]] = gelu_node(matmul_output, bias, final.outputs[0], len(added))
    if not added:
        return model, 0
    return rebuild(model_fields, graph, dropped, {}, added), len(added)


@dataclass(frozen=True)
class Constants:
    """The graph's initializers: all their names, and the values of the float scalars among them."""

    names: set[str]
    scalars: dict[str, float]


def scalar_constants(graph: list[Field]) -> Constants:
    names, scalars = set(), {}
    for field in graph:
        if field.number != GRAPH_INITIALIZER:
            continue
        tensor = parse(field.payload)
        name = next((f.payload.decode() for f in tensor if f.number == TENSOR_NAME), "")
        names.add(name)
        dims = [f for f in tensor if f.number == TENSOR_DIMS]
        data_type = next((f.value for f in tensor if f.number == TENSOR_DATA_TYPE), 0)
        raw = next((f.payload for f in tensor if f.number == TENSOR_RAW_DATA), b"")
        packed = next((f.payload for f in tensor if f.number == TENSOR_FLOAT_DATA), b"")
        if not dims and data_type == FLOAT and len(raw or packed) == 4:
            scalars[name] = struct.unpack("<f", raw or packed)[0]
    return Constants(names, scalars)


def gelu_chain(
    erf: Node, produced_by: dict[str, Node], users: dict[str, list[Node]], constants: Constants
) -> tuple[Node, list[Node], Node] | None:
    """From an Erf, the nodes of ``u * (0.5 * (1 + erf(u / sqrt(2))))`` with ``u = Add(MatMul, bias)``:
    (the bias Add, the nodes in between, the final Mul), or None when the graph differs in any way."""

    def only_user(node: Node, op_type: str) -> Node | None:
        following = users.get(node.outputs[0], [])
        return following[0] if len(following) == 1 and following[0].op_type == op_type else None

    def other_input(node: Node, name: str) -> str:
        return node.inputs[1] if node.inputs[0] == name else node.inputs[0]

    divide = produced_by.get(erf.inputs[0])
    if divide is None or divide.op_type != "Div" or not close(constants, divide.inputs[1], math.sqrt(2)):
        return None
    bias_add = produced_by.get(divide.inputs[0])
    if bias_add is None or bias_add.op_type != "Add" or len(bias_add.inputs) != 2:
        return None
    matmul = [produced_by.get(name) for name in bias_add.inputs if name not in constants.names]
    if len(matmul) != 1 or matmul[0] is None or matmul[0].op_type != "MatMul":
        return None
    if sum(name in constants.names for name in bias_add.inputs) != 1:
        return None
    plus_one = only_user(erf, "Add")
    if plus_one is None or not close(constants, other_input(plus_one, erf.outputs[0]), 1.0):
        return None
    half = only_user(plus_one, "Mul")
    if half is None or not close(constants, other_input(half, plus_one.outputs[0]), 0.5):
        return None
    final = only_user(half, "Mul")
    u = bias_add.outputs[0]
    if final is None or other_input(final, half.outputs[0]) != u:
        return None
    if {id(node) for node in users.get(u, [])} != {id(divide), id(final)}:
        return None  # u feeds something else too: it must stay
    return bias_add, [divide, erf, plus_one, half, final], final


def close(constants: Constants, name: str, value: float) -> bool:
    return name in constants.scalars and abs(constants.scalars[name] - value) <= 1e-6 * abs(value)


def gelu_node(matmul_output: str, bias: str, output: str, number: int) -> bytes:
    """A NodeProto: ``output = BiasGelu(matmul_output, bias)`` in the com.microsoft domain."""
    return (
        encode_field(NODE_INPUT, matmul_output.encode())
        + encode_field(NODE_INPUT, bias.encode())
        + encode_field(NODE_OUTPUT, output.encode())
        + encode_field(NODE_NAME, f"indexer_bias_gelu_{number}".encode())
        + encode_field(NODE_OP_TYPE, b"BiasGelu")
        + encode_field(NODE_DOMAIN, b"com.microsoft")
    )


def rebuild(
    model_fields: list[Field],
    graph: list[Field],
    dropped: set[str],
    replaced: dict[str, str],
    added: dict[str, bytes],
) -> bytes:
    """The ModelProto again, without the nodes making ``dropped`` outputs, with inputs renamed per
    ``replaced``, and with ``added[name]`` in place of the node that made ``name``."""
    new_graph = bytearray()
    for field in graph:
        if field.number == GRAPH_NODE:
            node = Node.parse(field.payload)
            made = [added[name] for name in node.outputs if name in added]
            if made:
                new_graph += encode_field(GRAPH_NODE, made[0])
                continue
            if set(node.outputs) & dropped:
                continue
            if any(name in replaced for name in node.inputs):
                new_graph += encode_field(GRAPH_NODE, rename_inputs(field.payload, replaced))
                continue
        elif field.number == GRAPH_VALUE_INFO and value_info_name(field.payload) in dropped:
            continue
        new_graph += field.raw
    new_model = bytearray()
    for field in model_fields:
        new_model += encode_field(MODEL_GRAPH, bytes(new_graph)) if field.number == MODEL_GRAPH else field.raw
    return bytes(new_model)


@dataclass(frozen=True)
class Node:
    """The parts of a NodeProto the edit reads."""

    op_type: str
    inputs: list[str]
    outputs: list[str]

    @classmethod
    def parse(cls, payload: bytes) -> Node:
        op_type, inputs, outputs = "", [], []
        for field in parse(payload):
            if field.number == NODE_OP_TYPE:
                op_type = field.payload.decode()
            elif field.number == NODE_INPUT:
                inputs.append(field.payload.decode())
            elif field.number == NODE_OUTPUT:
                outputs.append(field.payload.decode())
        return cls(op_type, inputs, outputs)


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
    encoded = bytearray()
    while value >= 0x80:
        encoded.append(value & 0x7F | 0x80)
        value >>= 7
    encoded.append(value)
    return bytes(encoded)


def encode_field(number: int, payload: bytes) -> bytes:
    """A length-delimited field: key, length, payload."""
    return encode_varint(number << 3 | LENGTH_DELIMITED) + encode_varint(len(payload)) + payload
