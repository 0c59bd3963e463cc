"""Re-reading a search's best candidates with a cross-encoder, which reads the question and a
passage together and says how well the passage answers it.

An embedding compares two vectors made apart; a cross-encoder attends from every word of the
question to every word of the passage, so it ranks the few best candidates better than the fusion
that found them, and its score means something on its own: the probability that the passage
answers the question.

- Model: ms-marco-MiniLM-L-12-v2 (sentence-transformers, Apache-2.0), trained on MS MARCO's real
  Bing questions and the passages that answer them (:mod:`indexer.backends.packaged` says where
  its file comes from). Input ``[CLS] question [SEP] passage [SEP]`` with token types 0 then 1;
  output one logit per pair.
- Passage: the chunk's heading path, a line break, and its text (:func:`passage_text`: what the
  embedder reads too). A pair is cut to PAIR_TOKENS tokens at the passage's end, never inside the
  question: the question is what every candidate is judged against, and a question cut differently
  for each would not be one question. Only a question longer than QUESTION_TOKENS (a pasted
  paragraph) is cut, to that, so every passage keeps most of the budget. Longer pairs cost time on
  every search; most chunks of the packaged embedders fit (all-MiniLM-L6-v2 cuts at 254 tokens).
- Score: the logit through a logistic function, :func:`probability`. sentence-transformers applies
  the plain sigmoid to this model's logit; on the sample corpus that put every answering hit near
  1 and every off-topic one near 0, so the map is the sigmoid of the logit as it is, not a fit.
- Sessions: the embedder's runner (:class:`indexer.backends.onnx.runner.OnnxRunner`): threads,
  precision, the optimised copy kept on disk, each attention block one kernel, and int8 products
  with a scale per token and exact sums on every CPU, so a pair's score never depends on the other
  pairs of its batch. The pairs are sorted by length and run in sub-batches of similar length, as
  the embedder's texts.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import onnxruntime as ort
from tokenizers import Tokenizer

from indexer.backends.onnx.runner import OnnxRunner
from indexer.backends.onnx.session import load_tokenizer, padded_inputs, plan_sub_batches
from indexer.backends.packaged import MS_MARCO_MINILM
from indexer.errors import BackendUnreachableError, ConfigError
from indexer.request import RERANK_TOP

#: The longest question-and-passage pair read, [CLS] and both [SEP] included.
PAIR_TOKENS = 256
#: The most of a question read (at most half a pair): MS MARCO's questions are a few words.
QUESTION_TOKENS = 64
#: [CLS] and the two [SEP] of a pair.
PAIR_SPECIAL_TOKENS = 3


def one_logit_per_pair(session: ort.InferenceSession, onnx_path: Path) -> None:
    """Refuse a model that does not output one logit per (question, passage) pair."""
    outputs = session.get_outputs()
    if len(outputs) != 1 or len(outputs[0].shape) != 2:
        raise BackendUnreachableError(f"ONNX model {onnx_path} does not output one logit per pair")


def passage_text(heading: str, text: str) -> str:
    """What the re-ranker reads of a chunk: its heading path, then its text."""
    body = text.strip()
    return f"{heading}\n{body}" if heading else body


def probability(logits: np.ndarray) -> np.ndarray:
    """The cross-encoder's logit as the probability that the passage answers the question."""
    return 1.0 / (1.0 + np.exp(-np.asarray(logits, dtype=np.float64)))


class Reranker:
    """Score (question, passage) pairs with the packaged cross-encoder, in this process.

    Args:
        threads: onnxruntime intra-op threads; None means one per physical core.
        precision: "int8" or "float32"; None means ``$INDEXER_PRECISION``, else int8, on every CPU:
            with int8 dot products it is the faster, and without them (x86 AVX2), where the exact
            u8 x u8 kernel runs, it measured 1.05-1.12x float32's speed on 20 candidates, unlike
            the embedder's shorter, wider batches (bench/RESULTS.md). No index records a score,
            so the choice can follow the measurements.
        one_shot: this process scores one question (a one-off ``index query``): start fast.
        pair_tokens: the longest pair read (see :data:`PAIR_TOKENS`).

    Raises:
        ConfigError: ``threads`` below 1, an unknown precision, or ``pair_tokens`` below 8.
    """

    def __init__(
        self,
        threads: int | None = None,
        precision: str | None = None,
        one_shot: bool = False,
        pair_tokens: int = PAIR_TOKENS,
    ) -> None:
        if pair_tokens < 8:
            raise ConfigError(f"re-ranker: pair_tokens must be at least 8, got {pair_tokens}")
        #: The model's sessions, threads and precision (None: int8 on every CPU).
        self.runner = OnnxRunner(
            "re-ranker",
            MS_MARCO_MINILM.onnx_path(),
            lambda: MS_MARCO_MINILM.onnx_sha256,
            threads=threads,
            precision=precision,
            precision_default="int8",
            one_shot=one_shot,
            float_products=True,
            fused_attention=True,
            check_outputs=one_logit_per_pair,
        )
        self.precision = self.runner.precision
        self.model_name = MS_MARCO_MINILM.name
        self.pair_tokens = pair_tokens
        self._lock = threading.Lock()
        self._tokenizer: Tokenizer | None = None

    def scores(self, question: str, passages: Sequence[str]) -> np.ndarray:
        """The probability that each passage answers the question (float64, in input order)."""
        return probability(self.logits(question, passages))

    def logits(self, question: str, passages: Sequence[str]) -> np.ndarray:
        """The cross-encoder's logit for each (question, passage) pair, in input order.

        Raises:
            BackendError: onnxruntime failed on a batch.
            BackendUnreachableError: the model file cannot be loaded.
        """
        if not passages:
            return np.zeros(0, dtype=np.float32)
        tokenizer = self._pair_tokenizer()
        question = self.read_question(question)
        encodings = tokenizer.encode_batch_fast([(question, passage) for passage in passages])
        session = self.runner.session(self.precision == "int8")
        logits = np.empty(len(passages), dtype=np.float32)
        for rows in plan_sub_batches([len(encoding.ids) for encoding in encodings]):
            chosen = [encodings[row] for row in rows]
            inputs = padded_inputs([each.ids for each in chosen], [each.type_ids for each in chosen])
            failure = f"re-ranker {self.model_name} failed on {len(rows)} pairs"
            logits[rows] = self.runner.run(session, inputs, None, failure).reshape(len(rows))
        return logits

    def read_question(self, question: str) -> str:
        """``question`` as the pairs hold it: whole, or its first :data:`QUESTION_TOKENS` tokens (at
        most half the pair), so that the pair's truncation cuts only the passage."""
        most = min(QUESTION_TOKENS, (self.pair_tokens - PAIR_SPECIAL_TOKENS) // 2)
        offsets = self._pair_tokenizer().encode(question, add_special_tokens=False).offsets
        return question if len(offsets) <= most else question[: offsets[most - 1][1]]

    def describe(self) -> dict[str, object]:
        """What ``index status`` says of the re-ranker: model, file, precision, pair length, and
        whether this process has loaded it."""
        return {
            "model": self.model_name,
            "sha256": MS_MARCO_MINILM.onnx_sha256,
            "precision": self.precision,
            "pair_tokens": self.pair_tokens,
            "candidates": RERANK_TOP,
            "loaded": self.runner.loaded,
        }

    def close(self) -> None:
        """Drop the session and its memory; the next call loads it again."""
        self.runner.close()

    def _pair_tokenizer(self) -> Tokenizer:
        with self._lock:
            if self._tokenizer is None:
                # longest first: with the question at most half the pair, that is the passage
                self._tokenizer = load_tokenizer(
                    MS_MARCO_MINILM.tokenizer_path(), max_length=self.pair_tokens
                )
            return self._tokenizer

    def __enter__(self) -> Reranker:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()
