"""Instant embeddings for benchmarks: deterministic vectors from a cheap hash of the text, no model.

Shared by the project's side of the benchmark and by the framework comparison, which runs in its own
virtual environment without `indexer` installed; so this module needs numpy and nothing else. Every
tool measured gets the very same vectors at the very same cost (a few microseconds per text), which
leaves the pipeline around the model as the only thing that differs.
"""

from __future__ import annotations

import zlib

import numpy as np

DIMENSION = 384
MAX_TOKENS = 200  # words per chunk; the model's "input limit" for our chunker

_TABLE_ROWS = 4096
_TABLE = np.random.default_rng(20240601).standard_normal((_TABLE_ROWS, DIMENSION)).astype(np.float32)


def instant_vectors(texts: list[str]) -> np.ndarray:
    """One unit float32 vector per text; the same text always gives the same vector.

    Two CRC32 values of the text pick two rows of a fixed random table; their weighted sum, normalised,
    is the vector. Distinct texts get distinct vectors (barring CRC collisions), which is all a
    benchmark of the plumbing needs.
    """
    if not texts:
        return np.zeros((0, DIMENSION), dtype=np.float32)
    first = np.fromiter(
        (zlib.crc32(text.encode("utf-8")) for text in texts), dtype=np.uint64, count=len(texts)
    )
    second = (first * np.uint64(2654435761)) >> np.uint64(7)
    vectors = _TABLE[first % _TABLE_ROWS] + 0.5 * _TABLE[second % _TABLE_ROWS]
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    return vectors


def count_words(texts: list[str]) -> list[int]:
    """The instant model's "tokens": whitespace-separated words."""
    return [len(text.split()) for text in texts]
