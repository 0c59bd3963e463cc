"""The embedded model's throughput against this machine's own peak for the same arithmetic.

For each precision the backend runs here (float32; int8 in the weight layout this CPU sums exactly,
and in the other layout too, which runs here though it clips on CPUs without int8 dot products):

- the model's multiply-adds per token, counted from its ONNX graph: the products by weight matrices
  (the same for every token) and the attention products (growing with the text's length);
- chunks/s and tokens/s of :class:`EmbeddedBackend` embedding every chunk of sample_corpus/, 32
  texts per call as a build calls it, and the multiply-adds per second that makes (counting each
  text at its own length: padding is overhead, not work);
- the peak: a large matrix product of the same precision through onnxruntime (a MatMul of float32,
  or the MatMulIntegerToFloat the int8 graph runs, with weights in the same layout), on the model's
  own product shapes at 2,048 rows (TOKEN_BUDGET) on as many threads as the backend runs side by
  side, each shape run once after every call of the backend, so that the load of other processes
  falls on both alike;
- the fraction (target: at least 50%) and, under the table, where the rest goes: onnxruntime's own
  profile of the model's nodes on the same texts (time in the weight products, the attention block,
  quantization, the rest) and the share of padded tokens.

Then the share of each step of a build of sample_corpus/ (read, parse, tokenize, chunk, embed, check,
write) in its time, with the CPU's features.

    .venv/bin/python bench/bench_peak.py [--quick] [--json]
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import platform
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import onnxruntime as ort
from bench_embedded import sample_corpus_chunks
from support.rows import print_rows, row

from indexer import Index
from indexer.backends.embedded import RUN_TOKENS, EmbeddedBackend
from indexer.backends.onnx import int8
from indexer.backends.onnx import model as onnx_model
from indexer.backends.onnx.cache import OPTIMIZED_MODEL
from indexer.backends.onnx.cpu import weight_layout
from indexer.backends.onnx.protobuf import encode_field, encode_int, first, parse
from indexer.backends.onnx.session import TOKEN_BUDGET, padded_inputs, plan_sub_batches, session_options

REPO = Path(__file__).resolve().parent.parent
TARGET = 0.5
BATCH = 32
PRODUCTS = ("MatMul", "MatMulInteger", "MatMulIntegerToFloat", "Gemm", "FusedMatMul")
#: onnxruntime's node kinds, grouped by what they do in a BERT encoder.
KINDS = {
    "weight products": PRODUCTS,
    "attention": ("Attention", "MultiHeadAttention", "Softmax"),
    "quantization": ("DynamicQuantizeLinear", "ReduceMax", "Abs", "Div", "Round", "Clip", "Cast", "Max"),
    "layer norms, GELU, bias": ("SkipLayerNormalization", "LayerNormalization", "BiasGelu", "Gelu", "Add"),
}
FLAGS = ("avx2", "fma", "avx512f", "avx512_vnni", "avx_vnni", "amx_int8", "asimddp")
ELEMENT = {np.float32: 1, np.uint8: 2, np.int8: 3}


def cpu_features() -> str:
    """The CPU's model and the instruction-set flags that decide onnxruntime's kernels."""
    try:
        text = Path("/proc/cpuinfo").read_text()
    except OSError:
        return platform.processor() or platform.machine()
    flags = next(
        (line.split(":", 1)[1].split() for line in text.splitlines() if line.startswith("flags")), []
    )
    name = next(
        (line.split(":", 1)[1].strip() for line in text.splitlines() if line.startswith("model name")), ""
    )
    return f"{name}, {os.cpu_count()} CPUs; " + " ".join(flag for flag in FLAGS if flag in flags)


def multiply_adds(onnx_path: Path) -> tuple[int, int, int]:
    """From the graph: multiply-adds per token of the weight products, the number of attention
    products (each costs width x length per token), and the model's width."""
    model = parse(onnx_path.read_bytes())
    graph = parse(first(model, onnx_model.MODEL_GRAPH).payload)
    tensors = {tensor.name: tensor for tensor in onnx_model.initializers(graph)}
    nodes = [onnx_model.Node.parse(field.payload) for field in graph if field.number == onnx_model.GRAPH_NODE]
    produced_by = {output: (position, node) for position, node in enumerate(nodes) for output in node.outputs}
    readers = collections.Counter(name for node in nodes for name in node.inputs)

    def weight_shape(name: str) -> tuple[int, ...] | None:
        """A constant weight matrix, as the int8 edit finds it (an initializer, or int8 values widened)."""
        weight = int8.int8_weight(name, produced_by, tensors, readers)
        return None if weight is None else weight.values.shape

    weights = attention = width = 0
    for node in nodes:
        if node.op_type in PRODUCTS:
            shape = weight_shape(node.inputs[1])
            if shape is None:
                attention += 1
            else:
                weights += shape[0] * shape[1]
                width = width or shape[0]
    return weights, attention, width


def text_work(lengths: list[int], weights: int, attention: int, width: int) -> float:
    """Multiply-adds of embedding texts of these token lengths, each at its own length."""
    lengths_array = np.asarray(lengths, dtype=np.float64)
    return float((lengths_array * (weights + attention * width * lengths_array)).sum())


def padded_tokens(lengths: list[int]) -> int:
    """Tokens run once each sub-batch is padded to its longest, cut as the backend cuts them."""
    total = 0
    for start in range(0, len(lengths), BATCH):
        batch = lengths[start : start + BATCH]
        runs = plan_sub_batches(batch, RUN_TOKENS)
        total += sum(len(rows) * max(batch[index] for index in rows) for rows in runs)
    return total


def product_model(rows: int, inner: int, columns: int, precision: str, layout: str) -> bytes:
    """A one-node ONNX model: rows x inner input by an inner x columns weight, as the model's graph
    multiplies (MatMul in float32; MatMulIntegerToFloat, weights in ``layout``, under int8)."""
    rng = np.random.default_rng(0)

    def value_info(name: str, element: int, dims: list[int | str]) -> bytes:
        shape = b"".join(
            encode_field(1, encode_int(1, dim) if isinstance(dim, int) else encode_field(2, dim.encode()))
            for dim in dims
        )
        tensor_type = encode_int(1, element) + encode_field(2, shape)
        return encode_field(1, name.encode()) + encode_field(2, encode_field(1, tensor_type))

    if precision == "float32":
        weight = rng.standard_normal((inner, columns)).astype(np.float32)
        tensors = [onnx_model.tensor_proto("w", weight)]
        node = onnx_model.node_proto("MatMul", ["x", "w"], ["y"], "product")
        input_type = ELEMENT[np.float32]
    else:
        signed = rng.integers(-127, 128, (inner, columns)).astype(np.int8)
        weight = (signed.astype(np.int16) + 128).astype(np.uint8) if layout == "uint8" else signed
        tensors = [
            onnx_model.tensor_proto("w", weight),
            onnx_model.tensor_proto("x_scale", np.array(0.01, dtype=np.float32)),
            onnx_model.tensor_proto("w_scale", np.full(columns, 0.01, dtype=np.float32)),
            onnx_model.tensor_proto("zero_point", np.array(128, dtype=np.uint8)),
        ]
        zero_points = ["zero_point"] * (2 if layout == "uint8" else 1)
        inputs = ["x", "w", "x_scale", "w_scale", *zero_points]
        node = onnx_model.node_proto("MatMulIntegerToFloat", inputs, ["y"], "product", "com.microsoft")
        input_type = ELEMENT[np.uint8]
    graph = (
        encode_field(onnx_model.GRAPH_NODE, node)
        + encode_field(2, b"peak")
        + b"".join(encode_field(onnx_model.GRAPH_INITIALIZER, tensor) for tensor in tensors)
        + encode_field(onnx_model.GRAPH_INPUT, value_info("x", input_type, ["rows", inner]))
        + encode_field(onnx_model.GRAPH_OUTPUT, value_info("y", ELEMENT[np.float32], ["rows", columns]))
    )
    opsets = [("", 17), ("com.microsoft", 1)]
    opset_fields = b"".join(
        encode_field(onnx_model.MODEL_OPSET_IMPORT, encode_field(1, domain.encode()) + encode_int(2, version))
        for domain, version in opsets
    )
    return encode_int(1, 8) + opset_fields + encode_field(onnx_model.MODEL_GRAPH, graph)


class Peak:
    """Large products of one precision through onnxruntime, run in turns with the model (one of
    each after every call of the backend), so that the load of other processes falls on both alike."""

    def __init__(self, shapes: list[tuple[int, int, int]], precision: str, layout: str, threads: int) -> None:
        rng = np.random.default_rng(1)
        self.runs: list[tuple[ort.InferenceSession, dict, int]] = []
        for rows, inner, columns in shapes:
            options = session_options(threads, ort.GraphOptimizationLevel.ORT_ENABLE_ALL)
            model = product_model(rows, inner, columns, precision, layout)
            session = ort.InferenceSession(model, options, providers=["CPUExecutionProvider"])
            if precision == "float32":
                feed = {"x": rng.standard_normal((rows, inner)).astype(np.float32)}
            else:
                feed = {"x": rng.integers(0, 256, (rows, inner)).astype(np.uint8)}
            session.run(None, feed)
            self.runs.append((session, feed, rows * inner * columns))
        self.seconds = [0.0] * len(self.runs)
        self.done = [0] * len(self.runs)

    def turn(self) -> None:
        for position, (session, feed, _) in enumerate(self.runs):
            started = time.perf_counter()
            session.run(None, feed)
            self.seconds[position] += time.perf_counter() - started
            self.done[position] += 1

    def best(self) -> float:
        """Multiply-adds per second of the fastest shape, over all its turns."""
        return max(
            work * done / seconds
            for (_, _, work), done, seconds in zip(self.runs, self.done, self.seconds, strict=True)
        )


def node_profile(backend: EmbeddedBackend, int8: bool, texts: list[str]) -> dict[str, float]:
    """Shares of the model's run time by kind of node (:data:`KINDS`), from onnxruntime's profile of
    the backend's own optimised copy running these texts in the backend's sub-batches."""
    options = session_options(1, ort.GraphOptimizationLevel.ORT_DISABLE_ALL)  # a run is one thread's
    options.enable_profiling = True
    with tempfile.TemporaryDirectory() as folder:
        options.profile_file_prefix = str(Path(folder) / "profile")
        model = backend.runner.cache_folder(int8) / OPTIMIZED_MODEL
        session = ort.InferenceSession(str(model), options, providers=["CPUExecutionProvider"])
        names = [model_input.name for model_input in session.get_inputs()]
        encodings = backend._embedder().encode_batch_fast(texts)
        lengths = [len(encoding.ids) for encoding in encodings]
        for rows in plan_sub_batches(lengths, RUN_TOKENS):
            inputs = padded_inputs([encodings[row].ids for row in rows])
            session.run(None, {name: inputs[name] for name in names})
        events = json.loads(Path(session.end_profiling()).read_text())
    by_op: collections.Counter[str] = collections.Counter()
    for event in events:
        if event.get("cat") == "Node" and event.get("name", "").endswith("_kernel_time"):
            by_op[event["args"].get("op_name", "?")] += event["dur"]
    total = sum(by_op.values()) or 1
    shares = {kind: sum(by_op[op] for op in ops) / total for kind, ops in KINDS.items()}
    shares["other"] = 1 - sum(shares.values())
    return shares


def throughput(backend: EmbeddedBackend, texts: list[str], peak: Peak) -> float:
    """Seconds to embed ``texts`` in calls of :data:`BATCH`, the peak's products taking turns."""
    backend.embed(texts[:BATCH])  # loads the session (and makes its optimised copy once)
    seconds = 0.0
    for start in range(0, len(texts), BATCH):
        started = time.perf_counter()
        backend.embed(texts[start : start + BATCH])
        seconds += time.perf_counter() - started
        peak.turn()
    return seconds


def precision_rows(texts: list[str]) -> tuple[list[dict], list[str]]:
    rows, details = [], []
    reference = EmbeddedBackend(precision="float32")
    weights, attention, width = multiply_adds(reference._onnx_path)
    lengths = [len(encoding.ids) for encoding in reference._embedder().encode_batch_fast(texts)]
    tokens, work = sum(lengths), text_work(lengths, weights, attention, width)
    mean_length = tokens / len(lengths)
    per_token = weights + attention * width * mean_length
    rows.append(
        row(
            f"embedded model: multiply-adds per token, counted from the graph (weights {weights:,} + "
            f"{attention} attention products x {width} x length), at sample_corpus's mean "
            f"{mean_length:.0f} tokens",
            round(per_token),
        )
    )
    padding = padded_tokens(lengths) / tokens - 1
    shapes = [
        (TOKEN_BUDGET, width, 4 * width),
        (TOKEN_BUDGET, 4 * width, width),
        (TOKEN_BUDGET, width, width),
    ]
    own_layout = weight_layout(reference.runner.int8_instructions)
    setups = [("float32", "float32", None)]
    setups += [("int8", layout, layout) for layout in (own_layout, *(set(("int8", "uint8")) - {own_layout}))]
    for precision, layout, weights_layout in setups:
        backend = EmbeddedBackend(precision=precision)
        if weights_layout is not None and weights_layout != own_layout:
            backend.runner.int8_instructions = "bench: signed weights"  # the other layout's graph and cache
        products = Peak(shapes, precision, layout, backend.threads)
        seconds = throughput(backend, texts, products)
        achieved = work / seconds
        best = products.best()
        fraction = achieved / best
        label = precision if weights_layout is None else f"int8, {weights_layout} weights"
        if weights_layout is not None and weights_layout == own_layout:
            label += " (this CPU's exact layout)"
        shares = node_profile(backend, precision == "int8", texts[: 4 * BATCH])
        where = ", ".join(f"{kind} {share:.0%}" for kind, share in shares.items())
        products_rate = weights * (tokens * (1 + padding)) / (seconds * shares["weight products"] or 1)
        attention_share = attention * width * mean_length / per_token
        note = (
            f"of the model's node time: {where}; the weight products alone run at "
            f"{products_rate / best:.0%} of the peak; attention is {attention_share:.0%} of the "
            f"multiply-adds, "
            f"padding adds {padding:.0%} tokens; the rest of the time is outside the products "
            f"(per-token quantization, layer norms, GELU, bias adds, pooling, Python per call)"
        )
        rows.append(
            row(
                f"embedded {label}: multiply-adds/s vs this machine's {precision} product peak "
                f"(onnxruntime, {backend.threads} threads; GMAC/s)",
                round(achieved / 1e9, 2),
                round(best / 1e9, 2),
                round(fraction, 3),
                target=f">= {TARGET:.0%} of peak",
                passed=fraction >= TARGET,
                note=note,
            )
        )
        rows.append(
            row(
                f"embedded {label}: sample_corpus chunks/s (tokens/s)",
                round(len(texts) / seconds, 1),
                f"{tokens / seconds:,.0f} tokens/s",
            )
        )
        details.append(f"{label}: {len(texts)} chunks, {tokens:,} tokens in {seconds:.2f} s; nodes: {where}")
    return rows, details


def build_step_rows() -> tuple[list[dict], str]:
    """Each step's share of a build of sample_corpus/ with the default embedded backend."""
    with tempfile.TemporaryDirectory() as folder, Index.open(Path(folder) / "index.db") as index:
        report = index.build(REPO / "sample_corpus", warn=lambda message: None)
    stages = report.stage_seconds
    rows = [
        row(
            f"sample_corpus build: share of its {report.seconds:.1f} s in {stage}",
            round(seconds / report.seconds, 3),
        )
        for stage, seconds in stages.items()
        if stage != "walk"
    ]
    shown = ", ".join(f"{stage} {seconds:.2f} s" for stage, seconds in stages.items())
    return rows, f"sample_corpus build, {report.chunks_embedded} chunks in {report.seconds:.2f} s: {shown}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="fewer texts and shorter timings")
    parser.add_argument("--json", action="store_true", help="print the rows as a JSON list")
    options = parser.parse_args()
    texts = sample_corpus_chunks(EmbeddedBackend(precision="float32"))
    if options.quick:
        texts = texts[: 2 * BATCH]
    features = cpu_features()
    started_load = os.getloadavg()[0]
    rows = [row("CPU features (onnxruntime's kernels follow them)", features)]
    product_rows, details = precision_rows(texts)
    rows += product_rows
    step_rows, steps = build_step_rows()
    rows += step_rows
    load = f"load average {started_load:.1f} at the start, {os.getloadavg()[0]:.1f} at the end"
    rows[0]["ours"] = f"{features}; {load}"
    print_rows(rows, options.json, "\n".join([f"CPU: {features}", *details, steps]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
