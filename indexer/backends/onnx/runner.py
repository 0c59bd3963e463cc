"""One ONNX model run in this process, as the embedder and the re-ranker both run theirs: the
threads and precision asked for (checked once, here), the float32 and int8 sessions, each loaded on
first use and once whatever the threads asking, from the optimised copy kept on disk
(:mod:`indexer.backends.onnx.cache`) with the graph edits this CPU's int8 kernel wants, the inputs
fed, the runs spread over the model's threads, and a failed run as one :class:`BackendError`.

Threads serve a model in one of two ways. The embedder's runs are small, each on one thread of its
own, side by side (:meth:`OnnxRunner.side_by_side`): a small run keeps its activations in the core's
cache, and runs side by side never wait for each other inside an operator. The re-ranker's few
pairs run as one run split over every thread (onnxruntime's intra-op threads).

What differs between the two models stays with them: the embedder's output is token vectors it
pools, the re-ranker's one logit per pair; each checks its output when its session loads
(``check_outputs``).
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

import numpy as np
import onnxruntime as ort

from indexer.backends.onnx.cache import optimized_model_folder
from indexer.backends.onnx.cpu import (
    INT8_SCHEME,
    PRECISION_VARIABLE,
    PRECISIONS,
    UINT8_KERNEL,
    default_precision,
    int8_instructions,
    physical_cores,
    weight_layout,
)
from indexer.backends.onnx.session import ORT_ERRORS, GraphEdits, check_inputs, first_line, open_session
from indexer.errors import BackendError, ConfigError, IndexerError

if TYPE_CHECKING:
    from concurrent.futures import ThreadPoolExecutor

Work = TypeVar("Work")


class OnnxRunner:
    """The sessions of one ONNX model, run on the CPU.

    Args:
        owner: what the model serves, as messages name it ("embedded backend", "re-ranker").
        onnx_path: the model file as shipped.
        cache_identity: what the optimised copy is known by (the file's SHA-256, or its path, size
            and mtime), asked when a session first loads.
        threads: the threads the model runs on; None means one per physical core.
        one_thread_runs: each run of the model is one thread's, and runs go side by side on
            ``threads`` of them (:meth:`side_by_side`); else each run is split over ``threads``
            (onnxruntime's intra-op threads).
        precision: "int8" or "float32"; None means ``$INDEXER_PRECISION``, else ``precision_default``.
        precision_default: what None means without the variable; None: what
            :func:`~indexer.backends.onnx.cpu.default_precision` chooses for this CPU.
        one_shot: this process runs the model once or twice (see
            :func:`indexer.backends.onnx.session.open_session`).
        int8_scheme: which products run in int8 under int8 precision.
        float_products: the model's dynamic quantizer's products are written back as products.
        fused_attention: each attention block runs as one kernel (a known BERT encoder's).
        check_outputs: called with each session as it loads, before it is used; raises
            :class:`~indexer.errors.BackendUnreachableError` when the outputs are not what the owner reads.

    Raises:
        ConfigError: ``threads`` below 1, or a precision we do not know.
    """

    def __init__(
        self,
        owner: str,
        onnx_path: Path,
        cache_identity: Callable[[], str],
        *,
        threads: int | None,
        one_thread_runs: bool = False,
        precision: str | None,
        precision_default: str | None,
        one_shot: bool,
        int8_scheme: str = INT8_SCHEME,
        float_products: bool,
        fused_attention: bool,
        check_outputs: Callable[[ort.InferenceSession, Path], None],
    ) -> None:
        if threads is not None and threads < 1:
            raise ConfigError(f"{owner}: threads must be at least 1, got {threads}")
        self.owner = owner
        #: The CPU's int8 dot-product instructions (None: none, the int8 products then run u8 x u8).
        self.int8_instructions = int8_instructions()
        default = precision_default or default_precision(self.int8_instructions)
        self.precision = precision or os.environ.get(PRECISION_VARIABLE) or default
        if self.precision not in PRECISIONS:
            known = ", ".join(PRECISIONS)
            raise ConfigError(f"{owner}: precision must be one of {known}, got {self.precision!r}")
        self.onnx_path = onnx_path
        self.int8_scheme = int8_scheme
        #: The threads the model runs on (0: onnxruntime's own count, for runs split over them).
        self.threads = threads if threads is not None else physical_cores()
        if one_thread_runs and not self.threads:
            self.threads = os.cpu_count() or 1
        self._one_thread_runs = one_thread_runs
        self._pool: ThreadPoolExecutor | None = None  # the threads runs go side by side on
        self._cache_identity = cache_identity
        self._one_shot = one_shot
        self._float_products = float_products
        self._fused_attention = fused_attention
        self._check_outputs = check_outputs
        self._lock = threading.Lock()
        self._sessions: dict[bool, ort.InferenceSession] = {}  # False: float32, True: int8
        self._input_names: list[str] = []

    def session(self, int8: bool) -> ort.InferenceSession:
        """The float32 or int8 session, loaded on first use (once, even with several threads asking):
        a process that needs only one never loads the other."""
        session = self._sessions.get(int8)
        if session is not None:
            return session
        with self._lock:
            if int8 not in self._sessions:
                session = open_session(
                    self.onnx_path,
                    1 if self._one_thread_runs else self.threads,
                    one_shot=self._one_shot,
                    cache=self.cache_folder(int8),
                    edits=self._edits(int8),
                )
                self._check_outputs(session, self.onnx_path)
                self._input_names = check_inputs(session, self.onnx_path)
                self._sessions[int8] = session
            return self._sessions[int8]

    def load_beside(self, int8: bool) -> None:
        """Start loading the float32 or int8 session on a thread of its own, so that it loads while
        the caller does other work (a one-off query loads its tokenizer meanwhile): onnxruntime loads
        a model without holding the interpreter's lock. :meth:`session` waits for it, and raises
        what made it fail (loading again)."""
        if int8 not in self._sessions:
            threading.Thread(target=self._load, args=(int8,), name=f"{self.owner} load", daemon=True).start()

    def _load(self, int8: bool) -> None:
        try:
            self.session(int8)
        except (IndexerError, OSError):
            return  # raised again where the session is asked for (see load_beside)

    def run(
        self, session: ort.InferenceSession, inputs: dict[str, np.ndarray], output: str | None, failure: str
    ) -> np.ndarray:
        """Run one sub-batch: the ``inputs`` the model takes, its ``output`` (None: its only one).

        Raises:
            BackendError: onnxruntime failed: ``failure`` (which model, which batch), then why.
        """
        feed = {name: inputs[name] for name in self._input_names}
        try:
            (out,) = session.run(None if output is None else [output], feed)
        except ORT_ERRORS as exc:
            raise BackendError(f"{failure}: {first_line(exc)}") from exc
        return out

    def side_by_side(self, work: Callable[[Work], np.ndarray], runs: Sequence[Work]) -> list[np.ndarray]:
        """``work`` done for each of ``runs``, in their order: side by side on the runner's threads
        when each run is one thread's, else one after another (a lone run, such as a query's, on the
        caller's own thread)."""
        if len(runs) == 1 or self.threads == 1 or not self._one_thread_runs:
            return [work(run) for run in runs]
        with self._lock:
            if self._pool is None:
                # imported here: a process that runs the model once (a query) never needs the pool
                from concurrent.futures import ThreadPoolExecutor

                self._pool = ThreadPoolExecutor(self.threads, thread_name_prefix=f"{self.owner} model")
            pool = self._pool
        return list(pool.map(work, runs))

    @property
    def loaded(self) -> bool:
        """Whether a session is loaded in this process."""
        return bool(self._sessions)

    def close(self) -> None:
        """Drop the sessions and their memory, and end the threads runs go side by side on; the next
        :meth:`session` loads again."""
        with self._lock:
            self._sessions = {}
            pool, self._pool = self._pool, None
        if pool is not None:
            pool.shutdown(wait=False)

    def _edits(self, int8: bool) -> GraphEdits:
        weights = weight_layout(self.int8_instructions) if int8 else "int8"
        return GraphEdits(
            float_products=self._float_products,
            int8=int8,
            scheme=self.int8_scheme,
            fused_attention=self._fused_attention,
            weights=weights,
        )

    def cache_folder(self, int8: bool) -> Path:
        """Where the optimised copy of the float32 or int8 graph is kept, for this CPU's kernel."""
        kernel = (self.int8_instructions or UINT8_KERNEL) if int8 else None
        return optimized_model_folder(self._cache_identity(), kernel, self.int8_scheme, self._fused_attention)
