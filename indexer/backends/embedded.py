"""The default backend: a sentence-embedding model run in this process, with no server and no PyTorch.

Decisions, so they are not re-made by accident:

- Models: the packaged ones (:mod:`indexer.backends.packaged`), selected by name, each run as its
  authors run it: all-MiniLM-L6-v2 (mean pooling, 256 tokens) and bge-small-en-v1.5 (CLS pooling,
  512 tokens, the retrieval instruction before questions and nothing before documents, from
  :mod:`indexer.backends.prefixes`), or a user's model folder. An index recorded before models had
  names (``"model": null``) was built with all-MiniLM-L6-v2 and keeps it. Both take ``input_ids``,
  ``attention_mask``, ``token_type_ids`` and output ``last_hidden_state`` [batch, sequence, 384];
  tokens come from the ``tokenizers`` library, truncated at the model's limit ([CLS] and [SEP]
  included) whatever ``tokenizer.json`` asks, and each sub-batch padded here.
- Vectors: the pooled token vectors (mean under the attention mask, or the [CLS] token's), then
  L2-normalised: what sentence-transformers computes for these models. all-MiniLM-L6-v2's match its
  vectors (tests/fixtures/minilm_reference.json), bge-small's the published ones (tests).
- Speed: inputs are sorted by token length and run in sub-batches of similar length, so little time is
  spent on padding (the pipeline's chunks mix full-size chunks with short tails). Each sub-batch is
  one run of the model on one thread, at most RUN_TOKENS tokens, and a call's runs are spread over
  the backend's threads (one per physical core): a small run keeps its activations in the core's
  cache, and runs side by side never wait for each other inside an operator, where one run split
  over every core hands each operator's halves between threads. The session set-up, the optimised
  copy kept on disk and the choice of arithmetic are shared with the re-ranker
  (:mod:`indexer.backends.onnx.session`). The session and tokenizers load on first use, so importing
  this module and making the backend stay cheap (``index query`` pays only for what it uses).
- Arithmetic: under int8 precision the matrix products by the model's weights run in int8, each
  token's activations quantized with a scale of their own, attention's value projections excepted
  (they cost the most fidelity; see :func:`indexer.backends.onnx.int8.with_int8_matmuls`), with
  32-bit sums that are exact on every CPU, so the vectors stay within cosine ~0.99 of float32 and a
  text's vector never depends on its batch-mates or on the machine. A new backend takes int8 where
  the CPU has int8 dot-product instructions or AVX2, whose exact u8 x u8 path costs less than
  float32 in runs of one thread, and float32 elsewhere (bench/RESULTS.md has both). Texts of at
  most FLOAT32_UP_TO_TOKENS tokens run the float32 graph under either precision. For the packaged
  models, whose attention is known to be a BERT encoder's, each attention block runs as one kernel
  in both graphs.
- A user's own model: ``model=PATH`` names a folder holding ``model.onnx`` (or ``onnx/model.onnx``)
  and ``tokenizer.json``; its input limit is ``max_seq_length`` from ``sentence_bert_config.json``
  when the folder has one, else 512 tokens; its pooling is what sentence-transformers'
  ``1_Pooling/config.json`` declares (mean or CLS), else mean.
"""

from __future__ import annotations

import os
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np
import onnxruntime as ort
from tokenizers import Tokenizer

from indexer.backends.base import EmbeddingBackend
from indexer.backends.kinds import BUILTIN_CONCURRENCY
from indexer.backends.onnx.cache import optimized_model_folder, sha256_of
from indexer.backends.onnx.cpu import (
    PRECISION_VARIABLE,
    PRECISIONS,
    UINT8_KERNEL,
    default_precision,
    int8_instructions,
    physical_cores,
    weight_layout,
)
from indexer.backends.onnx.folder import find_onnx_file, read_max_seq_length, read_pooling
from indexer.backends.onnx.int8 import INT8_SCHEME, INT8_SCHEMES
from indexer.backends.onnx.session import (
    ORT_ERRORS,
    GraphEdits,
    check_inputs,
    first_line,
    load_tokenizer,
    open_session,
    padded_inputs,
    plan_sub_batches,
)
from indexer.backends.packaged import EMBEDDING_MODELS, UNNAMED_MODEL
from indexer.backends.prefixes import known_prefixes
from indexer.errors import BackendError, BackendUnreachableError, ConfigError, IndexOutdatedError

#: The poolings, as an index's description names them (mean's words are what every index built
#: before pooling was a choice recorded).
POOLINGS = {"mean": "mean, L2-normalised", "cls": "CLS, L2-normalised"}
#: Under int8 precision, texts of at most this many tokens ([CLS] and [SEP] included) still run float32.
#: Mean pooling averages the int8 rounding of a long text away, not of a one-word query: "hello" fell to
#: cosine 0.989 against sentence-transformers, the empty text to 0.978 (float32: 0.998, 0.996), while
#: no sample_corpus chunk went below 0.991. Such texts cost a few milliseconds in float32, and queries
#: are mostly this short, so a one-off query loads only the float32 copy, as before.
FLOAT32_UP_TO_TOKENS = 32
#: Tokens (padding included) in one run of the model, a run being one thread's: a text longer runs
#: alone. Runs this small keep a layer's activations in the core's cache and cost less per token than
#: runs of thousands of tokens, while the model's fixed cost per run stays small beside them
#: (bench/RESULTS.md, "Embedding speed").
RUN_TOKENS = 256
#: The steps of :meth:`EmbeddedBackend.embed`, timed apart (:meth:`EmbeddedBackend.step_seconds`):
#: the tokenizer, padding a run's inputs, the model, pooling and normalising its token vectors, and
#: copying each run's vectors into the call's array, in the texts' order.
STEPS = ("tokenize", "pad", "model", "pool", "copy")


class EmbeddedBackend(EmbeddingBackend):
    """Embed in-process with an ONNX sentence-embedding model.

    Args:
        model: a packaged model's name (:data:`indexer.backends.packaged.EMBEDDING_MODELS`:
            ``"all-MiniLM-L6-v2"``, ``"bge-small-en-v1.5"``), None for all-MiniLM-L6-v2 (what an
            index recorded before models had names was built with), or the path of a folder with
            ``model.onnx`` (or ``onnx/model.onnx``) and ``tokenizer.json``.
        threads: runs of the model side by side, each on one thread; None means one per physical
            core.
        precision: "int8" (int8 matrix products, on any CPU) or "float32" (the model's arithmetic
            as exported); None means ``$INDEXER_PRECISION``, else int8 where the CPU has int8
            dot-product instructions or AVX2, float32 elsewhere.
        one_shot: this process embeds a text or two (a one-off ``index query``): start fast, at the
            cost of slower calls (see :func:`indexer.backends.onnx.session.open_session`); the
            vectors are the same.
        int8_scheme: which products run in int8 under int8 precision, one of
            :data:`indexer.backends.onnx.int8.INT8_SCHEMES`: the newest for a new backend; an index
            keeps the one it was built with (recorded in its config), a rebuild with a new backend
            (``--rebuild --backend embedded``) takes the newest.
        pooling: "mean" or "cls"; None means the model's own (a folder's ``1_Pooling/config.json``,
            else mean).

    Raises:
        ConfigError: the folder is missing, lacks a file or declares a pooling we do not run,
            ``threads`` is below 1, or the precision or pooling is not one we know.
    """

    kind = "embedded"
    default_concurrency = BUILTIN_CONCURRENCY["embedded"]

    @classmethod
    def from_command_line(cls, model: str | None, **options: Any) -> EmbeddingBackend:
        """A new index's backend: the model named (None: the default), at this CPU's precision."""
        return cls(model)

    @classmethod
    def from_config(cls, options: dict[str, Any], one_shot: bool = False) -> EmbeddingBackend:
        """The backend an index recorded. A config without the precision and pooling (and, under
        int8, the int8 scheme) that made its vectors was written by an earlier version, whose
        arithmetic this one may not have: refused, rather than guessed and its vectors mixed."""
        missing = [key for key in ("precision", "pooling") if key not in options]
        if options.get("precision") == "int8" and options.get("int8_scheme") not in INT8_SCHEMES:
            missing.append("known int8_scheme")
        if missing:
            raise IndexOutdatedError(
                f"the index records no {' or '.join(missing)} for its embedded model: an earlier version "
                "of indexer built it; rebuild it with `index build DOCS --rebuild`"
            )
        return cls(**options, one_shot=one_shot)

    def __init__(
        self,
        model: str | None = None,
        threads: int | None = None,
        precision: str | None = None,
        one_shot: bool = False,
        int8_scheme: str = INT8_SCHEME,
        pooling: str | None = None,
    ) -> None:
        if threads is not None and threads < 1:
            raise ConfigError(f"embedded backend: threads must be at least 1, got {threads}")
        #: The CPU's int8 dot-product instructions (None: none, the int8 products then run u8 x u8).
        self.int8_instructions = int8_instructions()
        default = default_precision(self.int8_instructions)
        self.precision = precision or os.environ.get(PRECISION_VARIABLE) or default
        if self.precision not in PRECISIONS:
            raise ConfigError(
                f"embedded backend: precision must be one of {', '.join(PRECISIONS)}, got {self.precision!r}"
            )
        if int8_scheme not in INT8_SCHEMES:
            raise ConfigError(
                f"embedded backend: int8_scheme must be one of {', '.join(INT8_SCHEMES)}, got {int8_scheme!r}"
            )
        self.int8_scheme = int8_scheme
        self._model = model
        self._one_shot = one_shot
        #: Runs of the model at once, each on one thread of its own.
        self.threads = threads if threads is not None else physical_cores() or os.cpu_count() or 1
        packaged = UNNAMED_MODEL if model is None else EMBEDDING_MODELS.get(model)
        if packaged is not None:
            self.model_name = packaged.recorded_name
            self._onnx_path = packaged.onnx_path()
            self._tokenizer_path = packaged.tokenizer_path()
            self._max_seq_length = packaged.max_seq_length
            self._dimension: int | None = packaged.dimension
            self._onnx_sha256: str | None = packaged.onnx_sha256
            own_pooling = packaged.pooling
            prefixes = known_prefixes(packaged.name)
            if prefixes is not None:
                self.query_prefix, self.document_prefix = prefixes.query, prefixes.document
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
            own_pooling = pooling or read_pooling(folder)  # a recorded pooling wins over the folder's
        self.pooling = pooling or own_pooling
        if self.pooling not in POOLINGS:
            raise ConfigError(
                f"embedded backend: pooling must be one of {', '.join(POOLINGS)}, got {self.pooling!r}"
            )
        self._float_products = packaged is not None and packaged.dynamic_quantization
        self._fused_attention = packaged is not None
        self._load_lock = threading.Lock()
        self._usage_lock = threading.Lock()
        self._sessions: dict[bool, ort.InferenceSession] = {}  # False: float32, True: int8
        self._runner: ThreadPoolExecutor | None = None  # the threads the runs are spread over
        self._input_names: list[str] = []
        self._output_name = ""
        # Two tokenizers because counting must see the whole text, while embedding truncates it.
        self._count_tokenizer: Tokenizer | None = None
        self._embed_tokenizer: Tokenizer | None = None
        self._requests = 0
        self._tokens = 0
        self._step_seconds = dict.fromkeys(STEPS, 0.0)

    @property
    def max_tokens(self) -> int:
        """Longest input embedded whole, in :meth:`count_tokens` tokens (254 for all-MiniLM-L6-v2,
        510 for bge-small-en-v1.5)."""
        return self._max_seq_length - self._counter().num_special_tokens_to_add(is_pair=False)

    @property
    def dimension(self) -> int | None:
        """384 for the packaged models; for a user's model, its output width (loads the model to read it)."""
        if self._dimension is None:
            self._load_session(self.precision == "int8")
        return self._dimension

    def config(self) -> dict[str, Any]:
        """Settings that recreate this backend: ``{"backend": "embedded", "model": the name, the
        folder or None, "precision": "int8" or "float32", "pooling": "mean" or "cls"}``, and the
        ``int8_scheme`` under int8 precision."""
        config = {
            "backend": self.kind,
            "model": self._model,
            "precision": self.precision,
            "pooling": self.pooling,
        }
        if self.precision == "int8":
            config["int8_scheme"] = self.int8_scheme
        return config

    def describe(self) -> dict[str, Any]:
        """Everything that changes the vectors: model, its ONNX file, tokenizer, input limit, pooling,
        and ``"precision": "int8"`` with the int8 scheme when the matrix products run in int8.

        int8 products move a vector by more than rounding (cosine ~0.999 to float32's), so an index
        records which it was built with, and which products stayed float32, and a build never mixes
        them. float32 adds no key: it is the model's own arithmetic (fused attention moves float32
        vectors by rounding alone and adds none either; under int8 it is named).
        A packaged file's sha256 is the constant :mod:`indexer.backends.packaged` pins; a user's file
        is hashed here, once. The query and document prefixes go into the fingerprint beside this.
        """
        if self._onnx_sha256 is None:
            self._onnx_sha256 = sha256_of(self._onnx_path)
        arithmetic: dict[str, Any] = {}
        if self.precision == "int8":  # whatever the CPU's kernel: every one sums exactly, the same
            arithmetic = {"precision": "int8", "float32_up_to_tokens": FLOAT32_UP_TO_TOKENS}
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
            "pooling": POOLINGS[self.pooling],
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
        started = time.perf_counter()
        encodings = self._embedder().encode_batch_fast(texts)
        lengths = [len(encoding.ids) for encoding in encodings]
        self._add_steps(tokenize=time.perf_counter() - started)
        runs = []
        for int8, group in self._by_arithmetic(lengths):
            session = self._load_session(int8)
            for rows in plan_sub_batches([lengths[row] for row in group], RUN_TOKENS):
                runs.append((session, [group[row] for row in rows]))
        parts = self._run_all([(session, [encodings[row].ids for row in rows]) for session, rows in runs])
        copying = time.perf_counter()
        vectors = np.empty((len(texts), parts[0].shape[1]), dtype=np.float32)
        for (_, rows), part in zip(runs, parts, strict=True):
            vectors[rows] = part
        self._add_steps(copy=time.perf_counter() - copying)
        with self._usage_lock:
            self._requests += 1
            self._tokens += sum(lengths)
        return vectors

    def usage(self) -> dict[str, int]:
        """Calls to :meth:`embed` and tokens embedded (special tokens included) since the backend was made."""
        with self._usage_lock:
            return {"requests": self._requests, "tokens": self._tokens}

    def step_seconds(self) -> dict[str, float]:
        """Seconds :meth:`embed` spent in each of :data:`STEPS` since the backend was made, summed over
        its threads (the model's runs overlap one another, and the tokenizing of another call)."""
        with self._usage_lock:
            return dict(self._step_seconds)

    def close(self) -> None:
        """Drop the onnxruntime sessions and their memory, and end the runs' threads; the next
        :meth:`embed` loads again."""
        with self._load_lock:
            self._sessions = {}
            runner, self._runner = self._runner, None
        if runner is not None:
            runner.shutdown(wait=False)

    def _by_arithmetic(self, lengths: list[int]) -> list[tuple[bool, list[int]]]:
        """The texts' indices in two groups, each run by its own session: (False, float32 ones) and
        (True, int8 ones). A text's group follows from its own length alone, never its batch-mates'."""
        if self.precision != "int8":
            return [(False, list(range(len(lengths))))]
        groups: list[tuple[bool, list[int]]] = [(False, []), (True, [])]
        for index, length in enumerate(lengths):
            groups[length > FLOAT32_UP_TO_TOKENS][1].append(index)
        return [group for group in groups if group[1]]

    def _run_all(self, runs: list[tuple[ort.InferenceSession, list[list[int]]]]) -> list[np.ndarray]:
        """Each run's vectors, the runs spread over the backend's threads (a lone run, such as a
        query's, on the caller's own)."""
        if len(runs) == 1 or self.threads == 1:
            return [self._run(session, token_ids) for session, token_ids in runs]
        runner = self._threads_for_runs()
        futures = [runner.submit(self._run, session, token_ids) for session, token_ids in runs]
        return [future.result() for future in futures]

    def _threads_for_runs(self) -> ThreadPoolExecutor:
        with self._load_lock:
            if self._runner is None:
                self._runner = ThreadPoolExecutor(self.threads, thread_name_prefix="embedded-model")
            return self._runner

    def _run(self, session: ort.InferenceSession, token_ids: list[list[int]]) -> np.ndarray:
        """Embed one sub-batch: pad to its longest text, run the model, pool, normalise."""
        started = time.perf_counter()
        inputs = padded_inputs(token_ids)
        feed = {name: inputs[name] for name in self._input_names}
        padded = time.perf_counter()
        try:
            (hidden,) = session.run([self._output_name], feed)
        except ORT_ERRORS as exc:
            raise BackendError(
                f"embedded model {self.model_name} failed on a batch of {len(token_ids)} "
                f"(longest {inputs['input_ids'].shape[1]} tokens): {first_line(exc)}"
            ) from exc
        ran = time.perf_counter()
        pooled = pool(hidden, inputs["attention_mask"], self.pooling)
        if self._dimension is None:
            self._dimension = int(pooled.shape[1])
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        vectors = (pooled / np.maximum(norms, 1e-12)).astype(np.float32)
        self._add_steps(pad=padded - started, model=ran - padded, pool=time.perf_counter() - ran)
        return vectors

    def _add_steps(self, **seconds: float) -> None:
        with self._usage_lock:
            for step, spent in seconds.items():
                self._step_seconds[step] += spent

    def _load_session(self, int8: bool = False) -> ort.InferenceSession:
        """The float32 or int8 onnxruntime session, created on first use (once, even with several
        threads asking): a process that embeds only short texts never loads the int8 one."""
        session = self._sessions.get(int8)
        if session is not None:
            return session
        with self._load_lock:
            if int8 not in self._sessions:
                session = open_session(
                    self._onnx_path,
                    1,  # a run is one thread's; runs go side by side (see RUN_TOKENS)
                    one_shot=self._one_shot,
                    cache=self._cache_folder(int8),
                    edits=self._edits(int8),
                )
                output = token_vector_output(session, self._onnx_path)
                if isinstance(output.shape[2], int):
                    self._dimension = output.shape[2]
                self._input_names = check_inputs(session, self._onnx_path)
                self._output_name = output.name
                self._sessions[int8] = session
            return self._sessions[int8]

    def _edits(self, int8: bool) -> GraphEdits:
        weights = weight_layout(self.int8_instructions) if int8 else "int8"
        return GraphEdits(
            float_products=self._float_products,
            int8=int8,
            scheme=self.int8_scheme,
            fused_attention=self._fused_attention,
            weights=weights,
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


def pool(hidden: np.ndarray, attention_mask: np.ndarray, pooling: str) -> np.ndarray:
    """One vector per text from its token vectors: the [CLS] token's, or the mean under the mask."""
    if pooling == "cls":
        return hidden[:, 0, :]
    mask = attention_mask.astype(np.float32)
    return np.einsum("bsd,bs->bd", hidden, mask) / np.maximum(mask.sum(axis=1, keepdims=True), 1e-9)


def token_vector_output(session: ort.InferenceSession, onnx_path: Path) -> ort.NodeArg:
    """The session's token-vector output (``last_hidden_state`` or ``token_embeddings`` when so named,
    else the first), or BackendUnreachableError if it has none."""
    outputs = {output.name: output for output in session.get_outputs()}
    output = outputs.get("last_hidden_state") or outputs.get("token_embeddings") or session.get_outputs()[0]
    if len(output.shape) != 3:
        raise BackendUnreachableError(
            f"ONNX model {onnx_path} outputs {output.name} of shape {output.shape}; "
            "expected token vectors [batch, sequence, dimension]"
        )
    return output
