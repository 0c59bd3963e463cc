"""Edits that make a PyTorch-exported BERT-style graph run faster, computing the same.

On the graph onnxruntime saves optimised (:func:`streamline`):

1. Drop the NaN guard after each softmax. PyTorch's exporter writes attention as
   ``Where(IsNaN(p), 0, p)`` with ``p = Softmax(scores)``, to zero the rows of a query that may
   attend to nothing. Every text we embed has [CLS] and [SEP] unmasked, so no row is all masked and
   ``p`` holds no NaN: the guard returns ``p`` unchanged, yet onnxruntime runs it, single-threaded,
   over batch x heads x width x width values per layer. Outputs stay bit-identical.
2. Fuse each GELU with the bias add before it into onnxruntime's ``BiasGelu`` (exact erf GELU): six
   element-wise passes over the feed-forward activations become one.

On the model as shipped, before onnxruntime optimises it: a dynamic quantizer's products written
back as products by the stored int8 weights (:func:`with_float_products`), and each attention block
fused into one kernel (:func:`with_fused_attention`). A graph that does not have exactly the
expected shape is left as it is. Measured speed-ups are in bench/RESULTS.md.
"""

from __future__ import annotations

import math

import numpy as np

from indexer.backends.onnx.model import (
    FLOAT,
    GRAPH_INITIALIZER,
    GRAPH_INPUT,
    GRAPH_NODE,
    GRAPH_OUTPUT,
    INT32,
    MATRIX_PRODUCTS,
    MICROSOFT,
    Constants,
    Node,
    Tensor,
    dead_outputs,
    initializers,
    int_attribute,
    node_proto,
    only_graph,
    rebuild,
    rebuilt_graph,
    scalar_constants,
    value_info_name,
    with_graph,
)
from indexer.backends.onnx.protobuf import (
    parse,
)


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
    graph = only_graph(model_fields)
    if graph is None:
        return model, 0
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
    graph = only_graph(model_fields)
    if graph is None:
        return model, 0
    nodes = [Node.parse(field.payload) for field in graph if field.number == GRAPH_NODE]
    constants = scalar_constants(graph)
    produced_by = {output: node for node in nodes for output in node.outputs}
    users: dict[str, list[Node]] = {}
    for node in nodes:
        for name in node.inputs:
            users.setdefault(name, []).append(node)
    dropped: set[str] = set()
    added: dict[str, list[bytes]] = {}  # the final Mul's output -> the BiasGelu node that now makes it
    for erf in (node for node in nodes if node.op_type == "Erf"):
        chain = gelu_chain(erf, produced_by, users, constants)
        if chain is None:
            continue
        bias_add, others, final = chain
        matmul_output, bias = (
            bias_add.inputs if bias_add.inputs[1] in constants.names else bias_add.inputs[::-1]
        )
        dropped.update(output for node in (bias_add, *others) for output in node.outputs)
        added[final.outputs[0]] = [gelu_node(matmul_output, bias, final.outputs[0], len(added))]
    if not added:
        return model, 0
    return rebuild(model_fields, graph, dropped, {}, added), len(added)


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
    if len(matmul) != 1 or matmul[0] is None or matmul[0].op_type not in MATRIX_PRODUCTS:
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
    return node_proto("BiasGelu", [matmul_output, bias], [output], f"indexer_bias_gelu_{number}", MICROSOFT)


def with_float_products(model: bytes) -> tuple[bytes, int]:
    """The serialised ModelProto with each product onnxruntime's dynamic quantizer made written back
    as a float ``MatMul`` by the model's own int8 weights, and how many (0: the bytes come back
    unchanged).

    The quantizer writes ``y = x W`` as ``DynamicQuantizeLinear(x)`` (one scale and zero point for
    the whole tensor), ``MatMulInteger`` by the int8 weights, a Cast and a multiplication by the two
    scales. One scale over the whole tensor makes a text's result depend on the other texts of its
    batch and on their padding, and on x86 without VNNI its u8 x s8 kernel adds pairs of products in
    16 bits with saturation. Each product becomes ``MatMul(x, Mul(Cast(W8), w))``: the form
    :func:`with_int8_matmuls` reads int8 weights in (so the int8 graph quantizes each token with a
    scale of its own and keeps the model's weights bit for bit), which onnxruntime folds into float
    weights for the float32 graph. Only weights with zero points of 0 (symmetric) are rewritten.
    """
    model_fields = parse(model)
    graph = only_graph(model_fields)
    if graph is None:
        return model, 0
    nodes = [Node.parse(field.payload) for field in graph if field.number == GRAPH_NODE]
    tensors = {tensor.name: tensor for tensor in initializers(graph)}
    produced_by = {output: node for node in nodes for output in node.outputs}
    users: dict[str, list[Node]] = {}
    for node in nodes:
        for name in node.inputs:
            users.setdefault(name, []).append(node)
    added: dict[str, list[bytes]] = {}
    replaced: set[int] = set()  # ids of the nodes a rewritten product no longer needs
    for product in (node for node in nodes if node.op_type == "MatMulInteger"):
        chain = quantized_product(product, produced_by, users, tensors)
        if chain is None:
            continue
        activation, weights, weight_scale, output, made_by = chain
        name = f"indexer_float_w{len(added)}"
        added[output] = [
            node_proto(
                "Cast", [weights], [f"{name}_wide"], f"{name}_cast", attributes=int_attribute("to", FLOAT)
            ),
            node_proto("Mul", [f"{name}_wide", weight_scale], [f"{name}_weights"], f"{name}_scale"),
            node_proto("MatMul", [activation, f"{name}_weights"], [output], f"{name}_matmul"),
        ]
        replaced.update(id(node) for node in made_by)
    if not added:
        return model, 0
    quantizers = [node for node in nodes if node.op_type == "DynamicQuantizeLinear"]
    for quantizer in quantizers:  # gone once every reader of its outputs is
        readers = [reader for output in quantizer.outputs for reader in users.get(output, [])]
        if all(id(reader) in replaced for reader in readers):
            replaced.add(id(quantizer))
    dropped = {
        output for node in nodes if id(node) in replaced for output in node.outputs if output not in added
    }
    read = {name for node in nodes if id(node) not in replaced for name in node.inputs}
    read |= {name for made in added.values() for node in made for name in Node.parse(node).inputs}
    kept = [
        field
        for field in graph
        if field.number != GRAPH_INITIALIZER or Tensor.parse(field.payload).name in read
    ]
    return rebuild(model_fields, kept, dropped, {}, added), len(added)


def quantized_product(
    product: Node, produced_by: dict[str, Node], users: dict[str, list[Node]], tensors: dict[str, Tensor]
) -> tuple[str, str, str, str, list[Node]] | None:
    """From a ``MatMulInteger``, the dynamic quantizer's product around it: (the float activation,
    the int8 weights, their scale, the product's float output, the nodes that made it from the
    quantized activation), or None when the graph differs in any way."""

    def only_user(name: str, op_type: str) -> Node | None:
        following = users.get(name, [])
        return following[0] if len(following) == 1 and following[0].op_type == op_type else None

    if len(product.inputs) != 4:
        return None
    quantized, weights, activation_zero, weight_zero = product.inputs
    quantizer = produced_by.get(quantized)
    weight = tensors.get(weights)
    zero = tensors.get(weight_zero)
    if quantizer is None or quantizer.op_type != "DynamicQuantizeLinear" or quantizer.outputs[0] != quantized:
        return None
    if activation_zero != quantizer.outputs[2] or weight is None or zero is None:
        return None
    values, zeros = weight.array(), zero.array()
    if values is None or values.dtype != np.int8 or values.ndim != 2 or zeros is None or zeros.any():
        return None
    widen = only_user(product.outputs[0], "Cast")
    if widen is None or widen.attributes.get("to") != FLOAT:
        return None
    rescale = only_user(widen.outputs[0], "Mul")
    if rescale is None:
        return None
    scales = produced_by.get(next((name for name in rescale.inputs if name != widen.outputs[0]), ""))
    if scales is None or scales.op_type != "Mul" or quantizer.outputs[1] not in scales.inputs:
        return None
    weight_scale = next((name for name in scales.inputs if name != quantizer.outputs[1]), "")
    scale = tensors.get(weight_scale)
    scale_values = scale.array() if scale is not None else None
    if (
        scale_values is None
        or scale_values.dtype != np.float32
        or scale_values.size not in (1, values.shape[1])
    ):
        return None
    if len(users.get(scales.outputs[0], [])) != 1:
        return None
    return quantizer.inputs[0], weights, weight_scale, rescale.outputs[0], [product, widen, scales, rescale]


#: The graph input a BERT-style export takes its padding mask from (1 for a token, 0 for padding).
ATTENTION_MASK = "attention_mask"

#: The ops an attention block passes the query, key and value through on their way into heads.
HEAD_SPLIT = ("Reshape", "Transpose", "Mul")


def with_fused_attention(model: bytes) -> tuple[bytes, int]:
    """The serialised ModelProto with each self-attention block made one ``MultiHeadAttention``
    (onnxruntime's com.microsoft operator), and how many were fused (0: the bytes come back unchanged).

    The exporter writes a block as ``Softmax(q k^T s + mask) v`` over heads: reshapes and transposes
    into heads, two scalings, the score product, a mask built from ``attention_mask`` added over
    every score, the softmax (behind a NaN guard), the weighted sum, and transposes back; onnxruntime
    does not recognise this order of operations, so each runs as its own pass. ``MultiHeadAttention``
    takes the projected query, key and value and the padding mask and does the same in one kernel,
    faster in both precisions, its float32 vectors equal to the unfused ones but for rounding. Only
    a padding mask is fused: use this on models known to be BERT-style encoders (the embedded
    backend does so for its packaged models only).
    """
    model_fields = parse(model)
    graph = only_graph(model_fields)
    if graph is None:
        return model, 0
    graph_inputs = {value_info_name(field.payload) for field in graph if field.number == GRAPH_INPUT}
    if ATTENTION_MASK not in graph_inputs:
        return model, 0
    nodes = [Node.parse(field.payload) for field in graph if field.number == GRAPH_NODE]
    constants = scalar_constants(graph)
    biases = {tensor.name: tensor for tensor in initializers(graph)}
    produced_by = {output: node for node in nodes for output in node.outputs}
    users: dict[str, list[Node]] = {}
    for node in nodes:
        for name in node.inputs:
            users.setdefault(name, []).append(node)
    mask = "indexer_attention_key_mask"
    added: dict[str, list[bytes]] = {}
    for softmax in (node for node in nodes if node.op_type == "Softmax"):
        block = attention_block(softmax, produced_by, users, constants, biases)
        if block is None:
            continue
        query, key, value, output, heads = block
        fused = node_proto(
            "MultiHeadAttention",
            [query, key, value, "", mask],
            [output],
            f"indexer_attention_{len(added)}",
            MICROSOFT,
            int_attribute("num_heads", heads),
        )
        added[output] = [fused]
    if not added:
        return model, 0
    cast = node_proto("Cast", [ATTENTION_MASK], [mask], mask, attributes=int_attribute("to", INT32))
    first_output = next(iter(added))
    added[first_output] = [cast, *added[first_output]]
    dropped = dead_outputs(nodes, added, graph)
    read = {name for node in nodes if not set(node.outputs) & dropped for name in node.inputs}
    read |= {name for made in added.values() for name in Node.parse(made[-1]).inputs}
    kept = [
        field
        for field in graph
        if field.number != GRAPH_INITIALIZER or Tensor.parse(field.payload).name in read
    ]
    return with_graph(model_fields, rebuilt_graph(kept, dropped, {}, added), MICROSOFT), len(added)


def attention_block(
    softmax: Node,
    produced_by: dict[str, Node],
    users: dict[str, list[Node]],
    constants: Constants,
    tensors: dict[str, Tensor],
) -> tuple[str, str, str, str, int] | None:
    """From a Softmax, the block around it: (query, key and value projections, the block's output
    after the heads are merged, the number of heads), or None when the graph differs in any way."""
    scores = produced_by.get(softmax.inputs[0])
    if scores is None or scores.op_type != "Add":
        return None
    products = [scaled_product(name, produced_by, constants) for name in scores.inputs]
    product, product_scale = next(
        ((node, scale) for node, scale in products if node is not None), (None, 1.0)
    )
    following = users.get(softmax.outputs[0], [])
    guard = [node for node in following if node.op_type == "Where"]
    weights = guard[0].outputs[0] if guard else softmax.outputs[0]
    weighted = [
        node for node in users.get(weights, []) if node.op_type == "MatMul" and node.inputs[0] == weights
    ]
    if product is None or len(weighted) != 1:
        return None
    merge = users.get(weighted[0].outputs[0], [])
    if len(merge) != 1 or merge[0].op_type != "Transpose":
        return None
    # an older exporter also reads the merged heads' shape, to compute the Reshape's target
    reshape = [node for node in users.get(merge[0].outputs[0], []) if node.op_type != "Shape"]
    if len(reshape) != 1 or reshape[0].op_type != "Reshape":
        return None
    (query, query_scale), (key, key_scale) = (
        projection(name, produced_by, constants) for name in product.inputs
    )
    value, _ = projection(weighted[0].inputs[1], produced_by, constants)
    width = bias_width(query, produced_by, tensors)
    scale = query_scale * key_scale * product_scale
    if width is None or width != bias_width(key, produced_by, tensors) or scale <= 0:
        return None
    head_size = round(1 / scale**2)
    if head_size < 1 or width % head_size or abs(head_size * scale**2 - 1) > 1e-4:
        return None
    return query, key, value, reshape[0].outputs[0], width // head_size


def scaled_product(
    name: str, produced_by: dict[str, Node], constants: Constants
) -> tuple[Node | None, float]:
    """The ``MatMul`` that makes ``name``, directly or through a division or multiplication by a
    constant (an older exporter scales the scores, ``q k^T / sqrt(d)``, rather than q and k), with
    that scaling; (None, 1.0) when ``name`` is no such product."""
    node = produced_by.get(name)
    scale = 1.0
    if node is not None and node.op_type in ("Div", "Mul") and len(node.inputs) == 2:
        factor = constants.scalars.get(node.inputs[1])
        if factor is None or factor == 0:
            return None, 1.0
        scale = 1 / factor if node.op_type == "Div" else factor
        node = produced_by.get(node.inputs[0])
    if node is None or node.op_type != "MatMul":
        return None, 1.0
    return node, scale


def projection(name: str, produced_by: dict[str, Node], constants: Constants) -> tuple[str, float]:
    """Back from a head-split tensor to the projection it came from, through reshapes, transposes and
    scalings by constants: the projection's name, and the product of the scalings."""
    scale = 1.0
    node = produced_by.get(name)
    while node is not None and node.op_type in HEAD_SPLIT:
        if node.op_type == "Mul":
            factor = [constants.scalars.get(each) for each in node.inputs[1:]]
            if len(factor) == 1 and factor[0] is None:
                factor = [shape_scale(node.inputs[1], produced_by, constants)]
            if len(factor) != 1 or factor[0] is None:
                break
            scale *= factor[0]
        name = node.inputs[0]
        node = produced_by.get(name)
    return name, scale


def shape_scale(name: str, produced_by: dict[str, Node], constants: Constants) -> float | None:
    """The value of ``sqrt(c / sqrt(d))``, the scaling PyTorch's export of scaled dot-product
    attention puts on q and on k, with ``d`` the last dimension of a tensor read at run time
    (``Cast(Slice(Shape(t)))``): known when ``t`` is the heads of a ``Reshape`` to a constant head
    width (``Transpose(Reshape(x, Concat(..., d)))``); else None."""

    def through_cast(node: Node | None) -> Node | None:
        return produced_by.get(node.inputs[0]) if node is not None and node.op_type == "Cast" else node

    outer = through_cast(produced_by.get(name))
    if outer is None or outer.op_type != "Sqrt":
        return None
    divide = through_cast(produced_by.get(outer.inputs[0]))
    if divide is None or divide.op_type != "Div" or divide.inputs[0] not in constants.scalars:
        return None
    inner = through_cast(produced_by.get(divide.inputs[1]))
    if inner is None or inner.op_type != "Sqrt":
        return None
    piece = through_cast(produced_by.get(inner.inputs[0]))
    if piece is None or piece.op_type != "Slice" or len(piece.inputs) < 2:
        return None
    if constants.integers.get(piece.inputs[1]) != (-1,):
        return None  # not the last dimension
    shape = produced_by.get(piece.inputs[0])
    heads = produced_by.get(shape.inputs[0]) if shape is not None and shape.op_type == "Shape" else None
    split = produced_by.get(heads.inputs[0]) if heads is not None and heads.op_type == "Transpose" else None
    target = produced_by.get(split.inputs[1]) if split is not None and split.op_type == "Reshape" else None
    if target is None or target.op_type != "Concat":
        return None
    width = constants.integers.get(target.inputs[-1])
    if width is None or len(width) != 1 or width[0] < 1:
        return None
    value = constants.scalars[divide.inputs[0]] / math.sqrt(width[0])
    return math.sqrt(value) if value > 0 else None


def bias_width(name: str, produced_by: dict[str, Node], tensors: dict[str, Tensor]) -> int | None:
    """The width of a projection ``Add(MatMul(x, W), bias)``: its bias's length, else None."""
    node = produced_by.get(name)
    if node is None or node.op_type != "Add":
        return None
    for each in node.inputs:
        if each in tensors and len(tensors[each].dims) == 1:
            return tensors[each].dims[0]
    return None
