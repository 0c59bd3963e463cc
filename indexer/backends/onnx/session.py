"""The onnxruntime set-up every in-process model shares (the embedder and the re-ranker): CPU
sessions, the graph edits made before optimising, sub-batches cut to pad little, and the tokenizer.

Sessions run one intra-op thread per physical core, no spinning, quiet logs, and the optimised
graph: the first optimised session saves it (:mod:`indexer.backends.onnx.cache`) with the edits of
:mod:`indexer.backends.onnx.fusions` and :mod:`indexer.backends.onnx.int8` made, and later
processes load that copy and run it at full speed, so a fresh ``index query`` pays neither the
optimisation nor a slow unoptimised run.
"""

from __future__ import annotations

import os
import threading
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import onnxruntime as ort
from onnxruntime.capi import onnxruntime_pybind11_state as ort_errors
from tokenizers import Tokenizer

from indexer.backends.onnx.cache import (
    OPTIMIZED_MODEL,
    OPTIMIZED_WEIGHTS,
    discard_folder,
    remove_abandoned,
    remove_folder,
    sync_folder,
)
from indexer.backends.onnx.fusions import streamline, with_float_products, with_fused_attention
from indexer.backends.onnx.int8 import INT8_SCHEME, with_int8_matmuls
from indexer.errors import BackendUnreachableError, ConfigError

#: How sub-batches are cut. A run costs about the same per padded token whatever its shape, plus a few
#: milliseconds, so a sub-batch takes texts while they are at most PAD_SLACK tokens shorter than its
#: longest. TOKEN_BUDGET (8 texts of 256 tokens) bounds memory, as attention scores grow with
#: rows x width^2, and larger runs are no faster when one run is split over every core (the
#: re-ranker's); runs of one thread each, side by side, are best smaller (the embedder's RUN_TOKENS).
PAD_SLACK = 16
TOKEN_BUDGET = 2048
MAX_ROWS = 64

#: The inputs a BERT-style model takes; a model may use a subset (many have no token_type_ids).
MODEL_INPUTS = ("input_ids", "attention_mask", "token_type_ids")

#: onnxruntime fuses residual add, bias add and layer norm into SkipLayerNormalization, whose kernel
#: on x86 CPUs ran ten times slower than the Add and LayerNormalization it replaces; left out, both
#: precisions run faster (bench/RESULTS.md, the `embedded ... SkipLayerNormalization` rows).
DISABLED_OPTIMIZERS = ["SkipLayerNormFusion"]

#: What onnxruntime raises when a model cannot be loaded or run (they share no base class but Exception).
ORT_ERRORS = tuple(
    getattr(ort_errors, name)
    for name in (
        "EPFail",
        "Fail",
        "InvalidArgument",
        "InvalidGraph",
        "InvalidProtobuf",
        "NoSuchFile",
        "NotImplemented",
        "RuntimeException",
    )
)


@dataclass(frozen=True)
class GraphEdits:
    """What is done to the model as shipped before onnxruntime optimises it: a dynamic quantizer's
    products written back as products by the stored int8 weights (:func:`with_float_products`), each
    attention block fused into one kernel (packaged models, whose attention is known to be a BERT
    encoder's; see :func:`indexer.backends.onnx.fusions.with_fused_attention`), and the weight
    products made int8 under ``scheme``. Part of the optimised copy's cache key."""

    float_products: bool = False
    int8: bool = False
    scheme: str = INT8_SCHEME
    fused_attention: bool = False
    weights: str = "int8"  # the int8 weights' layout for this CPU's kernel (int8.WEIGHT_LAYOUTS)

    def apply(self, model: bytes) -> tuple[bytes, bool]:
        """The edited model, and whether anything changed."""
        restored = fused = int8 = 0
        if self.float_products:
            model, restored = with_float_products(model)
        if self.fused_attention:
            model, fused = with_fused_attention(model)
        if self.int8:
            model, int8 = with_int8_matmuls(model, self.scheme, self.weights)
        return model, bool(restored or fused or int8)


def plan_sub_batches(lengths: list[int], token_budget: int = TOKEN_BUDGET) -> list[list[int]]:
    """Group text indices, longest first, into sub-batches that pad little and fit ``token_budget``
    (a text longer than it runs alone).

    Equal lengths keep their input order, so the same texts always run in the same sub-batches.
    """
    sub_batches: list[list[int]] = []
    for index in sorted(range(len(lengths)), key=lambda index: -lengths[index]):
        current = sub_batches[-1] if sub_batches else []
        width = lengths[current[0]] if current else 0
        fits = len(current) < MAX_ROWS and (len(current) + 1) * width <= token_budget
        if current and fits and width - lengths[index] <= PAD_SLACK:
            current.append(index)
        else:
            sub_batches.append([index])
    return sub_batches


def load_tokenizer(path: Path, max_length: int | None) -> Tokenizer:
    """Load ``tokenizer.json`` with our own truncation (None: off) and no padding, whatever the file says."""
    text = path.read_text(encoding="utf-8")  # an OSError (too many open files...) is the system's
    try:
        tokenizer = Tokenizer.from_str(text)
    except Exception as exc:  # the tokenizers library raises plain Exception for a file it cannot read
        raise ConfigError(f"cannot read tokenizer {path}: {first_line(exc)}") from exc
    if max_length is None:
        tokenizer.no_truncation()
    else:
        tokenizer.enable_truncation(max_length=max_length)
    tokenizer.no_padding()
    return tokenizer


def check_inputs(session: ort.InferenceSession, onnx_path: Path) -> list[str]:
    """The inputs the model takes, or BackendUnreachableError if it needs one we do not feed."""
    names = [model_input.name for model_input in session.get_inputs()]
    unknown = sorted(set(names) - set(MODEL_INPUTS))
    if unknown:
        raise BackendUnreachableError(
            f"ONNX model {onnx_path} needs inputs {unknown}; only {list(MODEL_INPUTS)} are fed"
        )
    return names


def padded_inputs(
    token_ids: list[list[int]], type_ids: list[list[int]] | None = None
) -> dict[str, np.ndarray]:
    """A sub-batch as a BERT-style model takes it: ids padded with 0 to the longest, the mask, and the
    token types (0 throughout unless given: a pair's second text is 1)."""
    width = max(len(ids) for ids in token_ids)
    input_ids = np.zeros((len(token_ids), width), dtype=np.int64)
    attention_mask = np.zeros((len(token_ids), width), dtype=np.int64)
    token_type_ids = np.zeros((len(token_ids), width), dtype=np.int64)
    for row, ids in enumerate(token_ids):
        input_ids[row, : len(ids)] = ids
        attention_mask[row, : len(ids)] = 1
        if type_ids is not None:
            token_type_ids[row, : len(ids)] = type_ids[row]
    return {"input_ids": input_ids, "attention_mask": attention_mask, "token_type_ids": token_type_ids}


def open_session(
    onnx_path: Path,
    threads: int,
    one_shot: bool = False,
    cache: Path | None = None,
    edits: GraphEdits = GraphEdits(),
) -> ort.InferenceSession:
    """Load an ONNX model for CPU inference (the caller checks its inputs and outputs).

    ``edits`` are made to the graph first (attention fused, int8 products; see :class:`GraphEdits`),
    in the saved copy and without one alike.

    With ``cache`` (a folder from :func:`optimized_model_folder`), an optimised copy saved there is
    loaded instead of optimising again; when there is none, one is made (the first process after an
    install or upgrade pays for it once). ``one_shot`` is for a process that embeds a text or two:
    it loads the copy without re-packing its weights for fast matrix products (re-packing costs
    more than it saves on one short text), and where no copy can be kept it runs the graph
    unoptimised rather than spend longer optimising it than embedding the text takes.
    """
    levels = ort.GraphOptimizationLevel
    unsaved_options = session_options(threads, levels.ORT_DISABLE_ALL if one_shot else levels.ORT_ENABLE_ALL)
    if cache is None:
        return load_session(onnx_path, unsaved_options, edits)
    cached = cache / OPTIMIZED_MODEL
    if cached.is_file():
        try:
            return load_session(cached, cached_copy_options(threads, one_shot))
        except BackendUnreachableError:
            discard_folder(cache)  # a partial or damaged copy: made again below
    if not save_optimized(onnx_path, threads, cache, edits):
        return load_session(onnx_path, unsaved_options, edits)
    return load_session(cached, cached_copy_options(threads, one_shot))


def session_options(threads: int, level: ort.GraphOptimizationLevel) -> ort.SessionOptions:
    """CPU session options: ``threads`` intra-op threads, no spinning, quiet logs."""
    options = ort.SessionOptions()
    options.graph_optimization_level = level
    options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    # Idle pool threads would otherwise spin and take the cores the pipeline's own thread and the user's
    # other programs need: on a loaded machine, embedding runs faster without it.
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    # Failures reach the user once, as our exception; onnxruntime would also log them to stderr.
    options.log_severity_level = 4
    return options


def cached_copy_options(threads: int, one_shot: bool) -> ort.SessionOptions:
    """Options for a saved optimised copy: optimised already, so no optimisation pass."""
    options = session_options(threads, ort.GraphOptimizationLevel.ORT_DISABLE_ALL)
    if one_shot:
        options.add_session_config_entry("session.disable_prepacking", "1")
    return options


def load_session(
    onnx_path: Path, options: ort.SessionOptions, edits: GraphEdits = GraphEdits()
) -> ort.InferenceSession:
    """An onnxruntime CPU session, or BackendUnreachableError naming the file; ``edits`` made first."""
    model: str | bytes = str(onnx_path)
    if edits != GraphEdits():
        edited, changed = edits.apply(onnx_path.read_bytes())
        model = edited if changed else model
    try:
        return ort.InferenceSession(
            model, options, providers=["CPUExecutionProvider"], disabled_optimizers=DISABLED_OPTIMIZERS
        )
    except ORT_ERRORS as exc:
        raise BackendUnreachableError(f"cannot load ONNX model {onnx_path}: {first_line(exc)}") from exc


def save_optimized(onnx_path: Path, threads: int, cache: Path, edits: GraphEdits = GraphEdits()) -> bool:
    """Optimise the model (``edits`` made first), streamline its graph, and save the result as
    ``cache``.

    Extended (not full) optimisation, because what full optimisation adds may only suit this CPU,
    and for this kind of model it adds nothing; then :func:`indexer.backends.onnx.fusions.streamline`.
    The copy is written into a scratch folder beside ``cache`` and renamed into place, so a reader
    finds either nothing or a whole copy; when another process got there first, its copy stays.
    Returns False when no copy can be kept (read-only home, full disk): that costs only speed.
    """
    scratch = cache.with_name(f".partial-{os.getpid()}-{threading.get_ident()}-{cache.name}")
    try:
        remove_abandoned(cache.parent)
        scratch.mkdir(parents=True)
    except OSError:
        return False
    try:
        options = session_options(threads, ort.GraphOptimizationLevel.ORT_ENABLE_EXTENDED)
        options.optimized_model_filepath = str(scratch / OPTIMIZED_MODEL)
        options.add_session_config_entry(
            "session.optimized_model_external_initializers_file_name", OPTIMIZED_WEIGHTS
        )
        try:
            load_session(onnx_path, options, edits)
        except BackendUnreachableError:
            # Saving may be what failed (a full disk); when the model itself is at fault, the
            # caller's load of the original raises.
            return False
        graph_path = scratch / OPTIMIZED_MODEL
        try:
            graph, streamlined = streamline(graph_path.read_bytes())
        except ValueError:
            streamlined = {}  # a graph we cannot read is saved as onnxruntime wrote it: correct, a bit slower
        if any(streamlined.values()):
            graph_path.write_bytes(graph)
        sync_folder(scratch)
        try:
            os.rename(scratch, cache)
        except OSError:
            if not (cache / OPTIMIZED_MODEL).is_file():
                raise
            # another process renamed its finished copy into place first: it serves as well as ours
        return True
    finally:
        if scratch.exists():
            remove_folder(scratch)


def first_line(exc: BaseException) -> str:
    """The first line of an error message (onnxruntime's run to several), so the CLI prints one line."""
    lines = str(exc).strip().splitlines()
    return lines[0] if lines else type(exc).__name__
