"""Nearest-neighbour search over all vectors held in memory, for processes that search many times.

sqlite-vec's PyPI build has no SIMD, and its ``vec0`` scan costs 70-150 ms per 100,000 vectors of
dimension 384. A process that asks more than once (an API server, ``index eval``) loads the vectors
once and searches them here instead: exactly (one matrix product) up to ``EXACT_LIMIT`` rows, above
that with binary quantization (one bit per dimension, Hamming distance via popcount) to pick
candidates that are then re-scored exactly. The vectors stay in the SQLite file; this is a cache.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

EXACT_LIMIT = 50_000
CANDIDATES_PER_HIT = 40
MIN_CANDIDATES = 800


class VectorMatrix:
    """Unit vectors with their chunk ids; answers ``nearest`` like the store's KNN (cosine distance)."""

    def __init__(self, ids: np.ndarray, vectors: np.ndarray) -> None:
        norms = np.linalg.norm(vectors, axis=1, keepdims=True)
        self.ids = np.ascontiguousarray(ids, dtype=np.int64)
        self.vectors = np.ascontiguousarray(vectors / np.where(norms > 0, norms, 1), dtype=np.float32)
        self.codes = _binary_codes(self.vectors)
        self._position = {int(chunk_id): row for row, chunk_id in enumerate(self.ids)}

    def __len__(self) -> int:
        return len(self.ids)

    def nearest(
        self, query: np.ndarray, k: int, allowed_ids: Sequence[int] | None = None
    ) -> list[tuple[int, float]]:
        """The ``k`` nearest rows as (chunk id, cosine distance), nearest first."""
        query = np.asarray(query, dtype=np.float32)
        query = query / (np.linalg.norm(query) or 1.0)
        if allowed_ids is not None:
            rows = np.fromiter(
                (self._position[i] for i in allowed_ids if i in self._position), dtype=np.int64
            )
        elif len(self) > EXACT_LIMIT:
            rows = self._candidates(query, k)
        else:
            rows = None
        return self._exact(query, k, rows)

    def _candidates(self, query: np.ndarray, k: int) -> np.ndarray:
        """Rows whose binary codes are nearest the query's in Hamming distance."""
        wanted = min(len(self), max(MIN_CANDIDATES, CANDIDATES_PER_HIT * k))
        distances = np.bitwise_count(self.codes ^ _binary_codes(query[None, :])).sum(axis=1, dtype=np.int32)
        if wanted >= len(self):
            return np.arange(len(self))
        return np.argpartition(distances, wanted - 1)[:wanted]

    def _exact(self, query: np.ndarray, k: int, rows: np.ndarray | None) -> list[tuple[int, float]]:
        vectors = self.vectors if rows is None else self.vectors[rows]
        if len(vectors) == 0 or k <= 0:
            return []
        similarities = vectors @ query
        top = min(k, len(similarities))
        best = np.argpartition(-similarities, top - 1)[:top]
        best = best[np.argsort(-similarities[best], kind="stable")]
        ids = self.ids[best] if rows is None else self.ids[rows[best]]
        return [(int(chunk_id), float(1.0 - similarities[i])) for chunk_id, i in zip(ids, best, strict=False)]


def _binary_codes(vectors: np.ndarray) -> np.ndarray:
    """One bit per dimension (the sign), packed; as 64-bit words when the width allows."""
    packed = np.packbits(vectors > 0, axis=1)
    if packed.shape[1] % 8 == 0:
        return packed.view(np.uint64)
    return packed
