"""Int8 matrix products: each product by a constant weight made an int8 one, each token's inputs
quantized by a scale of their own so a text's vector never depends on its batch (see
:func:`with_int8_matmuls`). Made on the model as shipped, before onnxruntime optimises it.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np

from indexer.backends.onnx.cpu import INT8_SCHEME, INT8_SCHEMES
from indexer.backends.onnx.model import (
    FLOAT,
    GRAPH_INITIALIZER,
    GRAPH_NODE,
    GRAPH_VALUE_INFO,
    MICROSOFT,
    Node,
    Tensor,
    default_opset,
    initializers,
    int_attribute,
    node_proto,
    only_graph,
    tensor_proto,
    value_info_name,
    with_graph,
)
from indexer.backends.onnx.protobuf import (
    Field,
    encode_field,
    parse,
)

#: Activations are quantized to uint8 around this fixed zero point: symmetric, as onnxruntime's int8
#: matrix product takes one zero point for the whole input, while each row has its own scale.
ZERO_POINT = 128

#: The int8 edit's constants, and the names they go by in the graph.
INT8_CONSTANTS: dict[str, np.ndarray] = {
    "indexer_int8_inverse_127": np.array(1 / 127, dtype=np.float32),
    "indexer_int8_smallest_scale": np.array(1e-30, dtype=np.float32),
    "indexer_int8_one": np.array(1.0, dtype=np.float32),
    "indexer_int8_zero_point": np.array(ZERO_POINT, dtype=np.uint8),
}

#: How the weights of the int8 products are stored, by the kernel the CPU runs them with exactly.
#: "int8": signed values and no zero point, multiplied by uint8 activations (u8s8) with 32-bit sums
#: on x86 VNNI and Arm's dot product. "uint8": the same values plus ZERO_POINT, with that zero point
#: (u8u8): x86 CPUs without VNNI multiply u8 by s8 with ``vpmaddubsw``, which adds pairs of products
#: into 16 bits with saturation (255 x 127 x 2 > 32767), so large activations times large weights
#: clip; their u8u8 kernel widens both sides to 16 bits first and sums in 32 bits, exactly. Both
#: layouts give the same integer sums, hence the same vectors: the layout follows the CPU, the
#: arithmetic does not.
WEIGHT_LAYOUTS = ("int8", "uint8")

#: The nodes between a value projection's MatMul and the attention product reading it: its bias add,
#: the split into heads, and the heads' transpose.
VALUE_PATH = ("Add", "Reshape", "Transpose")

#: ReduceMax's axes, as an input from operator set 18 on (an attribute before).
LAST_AXIS: tuple[str, np.ndarray] = ("indexer_int8_last_axis", np.array([-1], dtype=np.int64))


@dataclass(frozen=True)
class Int8Weight:
    """A MatMul's constant weight as int8 values [K, N] and one float scale per output column, with
    what the graph held it as (to remove once nothing else reads it)."""

    values: np.ndarray
    scales: np.ndarray
    nodes: list[Node]  # Cast and Mul that widened stored int8 values to float, else none
    tensors: list[str]


def with_int8_matmuls(model: bytes, scheme: str = INT8_SCHEME, weights: str = "int8") -> tuple[bytes, int]:
    """The serialised ModelProto with each ``MatMul(x, W)`` by a constant weight made an int8 product
    (the value projections excepted), and how many were changed (0: the bytes come back unchanged).
    ``scheme`` is one of :data:`INT8_SCHEMES`.

    ``x`` is quantized one row (one token) at a time: ``s = max|x_row| / 127`` and
    ``q = round(x_row / s) + 128`` as uint8, so a row's result depends on that row alone, never on
    the other texts of a batch or on padding (a scale over the whole tensor, as onnxruntime's
    ``DynamicQuantizeMatMul`` takes, would make a text's vector depend on its batch-mates). Then
    ``MatMulIntegerToFloat(q, W8, s, w)`` (com.microsoft) multiplies uint8 by int8 with 32-bit
    sums, on VNNI or Arm dot-product instructions, and scales the sums back to float, by ``w`` per
    column and ``s`` per row. Each ``x`` is quantized once for all the products that read it (the
    query, key and value projections share theirs).

    ``W8`` and ``w`` are the model's own int8 values and per-column scales where it stores them as
    ``Mul(Cast(int8), scale)`` (the packaged model), so its weights stay bit for bit; a float weight
    is quantized per column here (``w = max|W_column| / 127``). ``weights`` is their layout, one of
    :data:`WEIGHT_LAYOUTS`: ``"uint8"`` stores ``W8 + 128`` with that zero point, for the CPUs whose
    u8s8 kernel saturates; the sums, and so the vectors, are the same. Products of two activations
    (attention scores) stay float32: they have no constant side to quantize ahead of time.

    The value projections (:func:`attention_values`) stay float32 too. Their rounding is what moves
    a vector most: a query or key error is damped by the softmax, a value error is carried straight
    into every token that attends to it. On 300 SciFact abstracts, keeping one class of products in
    float32 at a time, the values took the mean cosine to the float32 vectors from 0.9982 to 0.9995
    (70% of the loss; no other class passed 0.9986), for 1/12 of the multiply-adds and ~5% of the
    speed; SciFact train nDCG@10 went from 0.6585 to 0.6604 in vector mode (float32: 0.6612). A model
    that keeps tensors in side files is left as it is: its edited bytes, loaded from memory, could
    not find them.
    """
    model_fields = parse(model)
    graph = only_graph(model_fields)
    if graph is None:
        return model, 0
    tensors = {tensor.name: tensor for tensor in initializers(graph)}
    if any(tensor.data is None for tensor in tensors.values()):
        return model, 0
    if weights not in WEIGHT_LAYOUTS:
        raise ValueError(f"weights must be one of {WEIGHT_LAYOUTS}, got {weights!r}")
    if scheme not in INT8_SCHEMES:
        raise ValueError(f"scheme must be one of {tuple(INT8_SCHEMES)}, got {scheme!r}")
    plan = plan_int8_products(graph, tensors, default_opset(model_fields), unsigned=weights == "uint8")
    if not plan.replaced:
        return model, 0
    return with_graph(model_fields, rewritten_graph(graph, plan), MICROSOFT), plan.changed


@dataclass
class Int8Plan:
    """What :func:`with_int8_matmuls` changes in a graph: nodes replaced (by position), tensors added
    and dropped, value infos of dropped outputs, and how many products became int8."""

    replaced: dict[int, list[bytes]] = dataclasses.field(default_factory=dict)
    new_tensors: list[bytes] = dataclasses.field(default_factory=list)
    dropped_tensors: set[str] = dataclasses.field(default_factory=set)
    dropped_outputs: set[str] = dataclasses.field(default_factory=set)
    changed: int = 0


def plan_int8_products(
    graph: list[Field],
    tensors: dict[str, Tensor],
    opset: int,
    unsigned: bool = False,
) -> Int8Plan:
    """Find each ``MatMul`` by a constant weight and plan its int8 replacement (see
    :func:`with_int8_matmuls`); each activation is quantized once for all the products reading it.
    ``unsigned``: the weights in the "uint8" layout (shifted by ZERO_POINT, which is their zero point)."""
    nodes = [
        (position, Node.parse(each.payload))
        for position, each in enumerate(graph)
        if each.number == GRAPH_NODE
    ]
    produced_by = {output: (position, node) for position, node in nodes for output in node.outputs}
    readers: dict[str, int] = {}
    for _, node in nodes:
        for name in node.inputs:
            readers[name] = readers.get(name, 0) + 1
    values = attention_values([node for _, node in nodes], produced_by, tensors)
    plan = Int8Plan()
    quantized: dict[str, tuple[str, str]] = {}  # activation -> its uint8 rows and their scales
    for position, node in nodes:
        if node.op_type != "MatMul" or len(node.inputs) != 2 or len(node.outputs) != 1:
            continue
        if node.outputs[0] in values:
            continue
        weight = int8_weight(node.inputs[1], produced_by, tensors, readers)
        if weight is None:
            continue
        activation = node.inputs[0]
        chain: list[bytes] = []
        if activation not in quantized:
            chain, quantized[activation] = quantize_rows(activation, len(quantized), opset)
        rows, row_scales = quantized[activation]
        name = f"indexer_int8_w{plan.changed}"
        plan.changed += 1
        stored = (weight.values.astype(np.int16) + ZERO_POINT).astype(np.uint8) if unsigned else weight.values
        plan.new_tensors += [
            tensor_proto(f"{name}_values", stored),
            tensor_proto(f"{name}_scales", weight.scales),
        ]
        zero_points = ["indexer_int8_zero_point"] * (2 if unsigned else 1)
        product = node_proto(
            "MatMulIntegerToFloat",
            [rows, f"{name}_values", row_scales, f"{name}_scales", *zero_points],
            node.outputs,
            f"{name}_matmul",
            MICROSOFT,
        )
        plan.replaced[position] = [*chain, product]
        for widening in weight.nodes:
            plan.replaced[produced_by[widening.outputs[0]][0]] = []
            plan.dropped_outputs.update(widening.outputs)
        plan.dropped_tensors.update(name for name in weight.tensors if readers.get(name) == 1)
    if plan.replaced:
        constants = [*INT8_CONSTANTS.items(), *([LAST_AXIS] if opset >= 18 else [])]
        plan.new_tensors += [tensor_proto(name, values) for name, values in constants]
    return plan


def attention_values(
    nodes: list[Node], produced_by: dict[str, tuple[int, Node]], tensors: dict[str, Tensor]
) -> set[str]:
    """The outputs of the MatMuls that make attention's values: for each ``MatMul(p, v)`` with ``p`` a
    Softmax (or the exporter's NaN guard around one), the product ``v`` comes from through its bias
    Add, the Reshape into heads and the Transpose."""
    found = set()
    for node in nodes:
        if node.op_type == "MultiHeadAttention" and len(node.inputs) >= 3:  # fused: the value comes third
            name = node.inputs[2]
        elif node.op_type == "MatMul" and len(node.inputs) == 2 and from_softmax(node.inputs[0], produced_by):
            name = node.inputs[1]
        else:
            continue
        producer = produced_by.get(name, (0, None))[1]
        while producer is not None and producer.op_type in VALUE_PATH:
            if producer.op_type == "Add":  # the bias is a constant, the product the other input
                name = next((each for each in producer.inputs if each not in tensors), "")
            else:  # Reshape and Transpose: the data comes first, then the shape or nothing
                name = producer.inputs[0]
            producer = produced_by.get(name, (0, None))[1]
        if producer is not None and producer.op_type == "MatMul":
            found.add(name)
    return found


def from_softmax(name: str, produced_by: dict[str, tuple[int, Node]]) -> bool:
    """Whether ``name`` is a Softmax output, or ``Where(IsNaN(p), 0, p)`` of one (the exporter's guard)."""
    producer = produced_by.get(name, (0, None))[1]
    if producer is not None and producer.op_type == "Where":
        guarded = [produced_by.get(each, (0, None))[1] for each in producer.inputs]
        return any(each is not None and each.op_type == "Softmax" for each in guarded)
    return producer is not None and producer.op_type == "Softmax"


def rewritten_graph(graph: list[Field], plan: Int8Plan) -> bytes:
    """The GraphProto's bytes with the plan's nodes, tensors and value infos in place of the old."""
    new_graph = bytearray()
    for position, each in enumerate(graph):
        if position in plan.replaced:
            new_graph += b"".join(encode_field(GRAPH_NODE, node) for node in plan.replaced[position])
        elif each.number == GRAPH_INITIALIZER and Tensor.parse(each.payload).name in plan.dropped_tensors:
            continue
        elif each.number == GRAPH_VALUE_INFO and value_info_name(each.payload) in plan.dropped_outputs:
            continue
        else:
            new_graph += each.raw
    new_graph += b"".join(encode_field(GRAPH_INITIALIZER, each) for each in plan.new_tensors)
    return bytes(new_graph)


def int8_weight(
    name: str,
    produced_by: dict[str, tuple[int, Node]],
    tensors: dict[str, Tensor],
    readers: dict[str, int],
) -> Int8Weight | None:
    """A MatMul's weight as int8 and per-column scales, when it is a constant 2-D matrix: a float
    initializer, or ``Mul(Cast(int8 initializer), scales)`` with scales per column or one for all."""
    if name in tensors:
        values = tensors[name].array()
        if values is None or values.dtype != np.float32 or values.ndim != 2:
            return None
        scales = np.abs(values).max(axis=0) / 127
        scales[scales == 0] = 1  # a column of zeros: any scale gives zeros
        int8_values = np.clip(np.rint(values / scales), -127, 127).astype(np.int8)
        return Int8Weight(int8_values, scales.astype(np.float32), [], [name])
    multiply = produced_by.get(name, (0, None))[1]
    if multiply is None or multiply.op_type != "Mul" or readers.get(name) != 1:
        return None
    for cast_output, scale_name in (multiply.inputs, multiply.inputs[::-1]):
        cast = produced_by.get(cast_output, (0, None))[1]
        if cast is None or cast.op_type != "Cast" or cast.attributes.get("to") != FLOAT:
            continue
        if readers.get(cast_output) != 1 or cast.inputs[0] not in tensors or scale_name not in tensors:
            continue
        values, scales = tensors[cast.inputs[0]].array(), tensors[scale_name].array()
        if values is None or scales is None or values.dtype != np.int8 or values.ndim != 2:
            continue
        columns = values.shape[1]
        # the same along each column: one scale, or one per column
        if scales.dtype != np.float32 or scales.shape not in {(), (1,), (1, 1), (columns,), (1, columns)}:
            continue
        column_scales = np.broadcast_to(scales.reshape(-1), (columns,)).astype(np.float32)
        return Int8Weight(values, column_scales, [cast, multiply], [cast.inputs[0], scale_name])
    return None


def quantize_rows(activation: str, number: int, opset: int) -> tuple[list[bytes], tuple[str, str]]:
    """The nodes that quantize ``activation`` one row at a time (see :func:`with_int8_matmuls`), and
    the names of the uint8 result and of the row scales."""
    prefix = f"indexer_int8_x{number}"
    if opset >= 18:  # ReduceMax takes its axes as an input from opset 18 on, as an attribute before
        reduce = node_proto(
            "ReduceMax",
            [f"{prefix}_abs", LAST_AXIS[0]],
            [f"{prefix}_max"],
            f"{prefix}_reducemax",
            attributes=int_attribute("keepdims", 1),
        )
    else:
        reduce = node_proto(
            "ReduceMax",
            [f"{prefix}_abs"],
            [f"{prefix}_max"],
            f"{prefix}_reducemax",
            attributes=int_attribute("axes", [-1]) + int_attribute("keepdims", 1),
        )
    nodes = [
        node_proto("Abs", [activation], [f"{prefix}_abs"], f"{prefix}_abs"),
        reduce,
        node_proto("Mul", [f"{prefix}_max", "indexer_int8_inverse_127"], [f"{prefix}_wide"], f"{prefix}_mul"),
        # a row of zeros gets a tiny scale instead of zero, and quantizes to zeros instead of NaN
        node_proto(
            "Max", [f"{prefix}_wide", "indexer_int8_smallest_scale"], [f"{prefix}_scale"], f"{prefix}_floor"
        ),
        node_proto("Div", [activation, f"{prefix}_scale"], [f"{prefix}_scaled"], f"{prefix}_div"),
        node_proto(
            "QuantizeLinear",
            [f"{prefix}_scaled", "indexer_int8_one", "indexer_int8_zero_point"],
            [f"{prefix}_uint8"],
            f"{prefix}_quantize",
        ),
    ]
    return nodes, (f"{prefix}_uint8", f"{prefix}_scale")
