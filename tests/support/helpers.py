"""Test backends: real EmbeddingBackend subclasses with known behaviour, for tests and benchmarks."""

from __future__ import annotations

import gc
import hashlib
import math
import os
import signal
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

from indexer import EmbeddingBackend


def hash_vector(text: str, dimension: int) -> np.ndarray:
    """A deterministic unit vector for a text (same text, same vector, whatever the batch)."""
    seed = int.from_bytes(hashlib.blake2b(text.encode("utf-8"), digest_size=8).digest(), "little")
    vector = np.random.default_rng(seed).standard_normal(dimension).astype(np.float32)
    return vector / np.linalg.norm(vector)


def count_words(texts: list[str]) -> list[int]:
    """HashBackend's token count: one per word (a function, so worker processes can be sent it)."""
    return [len(text.split()) for text in texts]


#: A word that makes :func:`count_words_or_die` kill the process counting it.
KILLS_ITS_READER = "worker-killer"


def count_words_or_die(texts: list[str]) -> list[int]:
    """:func:`count_words`, but the process dies (SIGKILL, as the out-of-memory killer sends it)
    when a text holds :data:`KILLS_ITS_READER`: for a worker process killed under a file."""
    if any(KILLS_ITS_READER in text for text in texts):
        os.kill(os.getpid(), signal.SIGKILL)
    return count_words(texts)


class HashBackend(EmbeddingBackend):
    """Instant, deterministic vectors; counts calls and the texts it embedded."""

    kind = "test-hash"

    def __init__(self, dimension: int = 32, max_tokens: int = 64, model_name: str = "hash-v1") -> None:
        self._dimension = dimension
        self.max_tokens = max_tokens
        self.model_name = model_name
        self.calls = 0
        self.embedded: list[str] = []
        self._lock = threading.Lock()

    @property
    def dimension(self) -> int:
        return self._dimension

    def count_tokens(self, texts: list[str]) -> list[int]:
        return count_words(texts)

    def token_counter(self):
        return count_words

    def embed(self, texts: list[str]) -> np.ndarray:
        with self._lock:
            self.calls += 1
            self.embedded.extend(texts)
        return np.stack([hash_vector(text, self._dimension) for text in texts]) if texts else np.zeros((0, 0))

    def describe(self) -> dict[str, object]:
        return {"backend": self.kind, "model": self.model_name, "dimension": self._dimension}

    def usage(self) -> dict[str, int]:
        return {"requests": self.calls, "tokens": sum(len(text.split()) for text in self.embedded)}


class FaultyBackend(HashBackend):
    """Like HashBackend, but batch number ``fail_on`` (1-based) comes back wrong in the given way."""

    def __init__(self, fault: str, fail_on: int = 1, **options: object) -> None:
        super().__init__(**options)  # type: ignore[arg-type]
        self.fault = fault
        self.fail_on = fail_on

    def embed(self, texts: list[str]):
        vectors = [list(map(float, row)) for row in super().embed(texts)]
        if self.calls != self.fail_on:
            return vectors
        if self.fault == "too_few":
            return vectors[:-1]
        if self.fault == "too_many":
            return vectors + [vectors[0]]
        if self.fault == "empty":
            vectors[0] = []
            return vectors
        if self.fault == "empty_list":
            return []
        if self.fault == "nan":
            vectors[-1][3] = float("nan")
            return vectors
        if self.fault == "inf":
            vectors[0][0] = float("inf")
            return vectors
        if self.fault == "zero":
            vectors[0] = [0.0] * len(vectors[0])
            return vectors
        if self.fault == "wrong_dimension":
            return [row + [0.5] for row in vectors]
        if self.fault == "ragged":
            vectors[1] = vectors[1][:-1]
            return vectors
        if self.fault == "not_numbers":
            vectors[0][0] = "x"
            return vectors
        if self.fault == "raise":
            raise RuntimeError("the model fell over")
        raise AssertionError(f"unknown fault {self.fault}")


def index_command() -> list[str]:
    """The installed ``index`` console script, else the same entry point through this interpreter."""
    script = Path(sys.executable).parent / "index"
    if script.exists():
        return [str(script)]
    return [sys.executable, "-c", "from indexer.cli import run; run()"]


def write_corpus(folder: Path, files: int = 30, paragraphs: int = 6, version: str = "v1") -> Path:
    """``files`` Markdown documents of ``paragraphs`` paragraphs each, every paragraph unique to its
    file (a ``version`` changes them all); returns ``folder``."""
    folder.mkdir(parents=True, exist_ok=True)
    for number in range(files):
        body = "\n\n".join(
            f"{version} paragraph {p} of file {number}: "
            + " ".join(f"word{number}x{p}x{w}" for w in range(10 + 3 * p))
            for p in range(paragraphs)
        )
        (folder / f"doc{number:02}.md").write_text(f"# Document {number}\n\n{body}\n", encoding="utf-8")
    return folder


def grows_linearly(
    seconds: Callable[[int], float], small: int, large: int, bound: float, tries: int = 3
) -> bool:
    """Whether the time ``seconds`` measures at size ``large`` is less than ``bound`` times the time
    at size ``small``, in one of ``tries`` measurements, each timing both sizes anew. On a shared
    machine a burst of load can slow the runs of one size and not the other's; a cost that grows
    faster than the bound allows (a quadratic one: 64 times for eight times the size) is over it
    every time, so trying again lets no such cost through."""
    return any(seconds(large) / seconds(small) < bound for _ in range(tries))


def fastest_seconds(call: Callable[[], object], repeats: int = 5) -> float:
    """The fastest of ``repeats`` runs of ``call``, the collector off during each: a collection
    walking the session's objects lands on either side of a comparison at random."""
    best = math.inf
    for _ in range(repeats):
        gc.disable()
        try:
            started = time.perf_counter()
            call()
            best = min(best, time.perf_counter() - started)
        finally:
            gc.enable()
    return best
