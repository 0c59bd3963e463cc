"""Nearest-neighbour search over all vectors held in memory, for processes that search many times.

sqlite-vec's PyPI build has no SIMD, and its ``vec0`` scan costs 70-150 ms per 100,000 vectors of
dimension 384. A process that asks more than once (an API server, ``index eval``) loads the vectors
once and searches them here instead. The vectors stay in the SQLite file; this is a cache. Choices,
measured at 1,000,000 x 384 on a busy 2-core machine (``bench/bench_query.py``):

- **Storage**: each unit vector as int16 with one float32 scale per row (its largest component maps
  to 32,767): half of float32's memory, cosines within about 1e-5 of float32's, so hits come in the
  same order as exact float32 search. float16 is as small, but numpy converts it to float32 about
  100x slower than int16 (11-19 ms per 4,000 rows, the whole budget of a search); int8 halves memory
  again but moves cosines by about 4e-4, which dropped recall@10 to 0.95-0.96 on dense collections.
- **Candidates**: up to ``EXACT_LIMIT`` rows every row is scored. Above, one bit per dimension picks
  candidates: the sign of each vector *minus the mean of all of them*. Many embedding models put every
  text in one narrow cone (mean cosine between unrelated texts 0.2-0.7); the signs of such vectors
  are nearly all alike and say little (recall@10 0.82 at a million vectors with mean cosine 0.7),
  while signs taken around the mean split the cone evenly (recall 1.0). Rows are ranked by Hamming
  distance (popcount of XOR) and the nearest are scored exactly.
- **How many candidates**: the most of ``CANDIDATES_PER_HIT`` per hit, ``MIN_CANDIDATES`` and
  ``CANDIDATE_SHARE`` of the rows (questions lie further from their answers than the answers lie from
  each other, and the best hits of real questions came from up to 0.9% of a million rows). When the
  best hits found come from the outer part of the candidates, the codes rank this query poorly and
  the candidates grow ``WIDEN`` times; where they would reach ``EXACT_SHARE`` of all rows, every row
  is scored instead.
- **Blocks**: scores are computed ``BLOCK_ELEMENTS`` numbers at a time, which keeps conversions in
  the CPU cache and each matrix product on the calling thread: OpenBLAS hands bigger ones to its
  threads, and on a busy machine waking them cost up to 16 ms per call.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Sequence

import numpy as np

EXACT_LIMIT = 50_000
CANDIDATES_PER_HIT = 40
MIN_CANDIDATES = 1_000
CANDIDATE_SHARE = 0.01
WIDEN = 4
EXACT_SHARE = 0.25
BLOCK_ELEMENTS = 262_144
LOAD_ROWS = 4_096
INT16_MAX = 32_767


class VectorMatrix:
    """Unit vectors with their chunk ids; answers ``nearest`` like the store's KNN (cosine distance).

    Made by :meth:`from_vectors` or :meth:`from_rows`; the arrays are ``ids`` (int64), ``values``
    (int16, one row per vector), ``scales`` (float32: a row's values times its scale is the unit
    vector), ``mean`` (float32, of the unit vectors) and ``codes`` (uint64 words of sign bits, one
    column per row, so each word of all rows is contiguous).
    """

    def __init__(self, ids: np.ndarray, values: np.ndarray, scales: np.ndarray, mean: np.ndarray) -> None:
        self.ids = ids
        self.values = values
        self.scales = scales
        self.mean = mean
        self.codes = np.empty((_words(values.shape[1]), len(ids)), dtype=np.uint64)
        for start, stop in _blocks(len(ids), values.shape[1]):
            unit = values[start:stop].astype(np.float32) * scales[start:stop, None]
            self.codes[:, start:stop] = _sign_codes(unit, mean).T
        self._by_id = np.argsort(ids, kind="stable")

    @classmethod
    def from_vectors(cls, ids: Sequence[int] | np.ndarray, vectors: np.ndarray) -> VectorMatrix:
        """From arrays in memory: chunk ids and their vectors (any scale; they are normalised)."""
        vectors = np.asarray(vectors, dtype=np.float32)
        ids = np.asarray(ids, dtype=np.int64)
        return cls.from_rows(zip(ids.tolist(), vectors, strict=True), len(ids), vectors.shape[1])

    @classmethod
    def from_rows(
        cls, rows: Iterable[tuple[int, bytes | np.ndarray]], count: int, dimension: int
    ) -> VectorMatrix:
        """From ``count`` (chunk id, float32 vector or its bytes) pairs, read ``LOAD_ROWS`` at a time,
        so a million rows never sit in memory as float32 or as Python objects at once."""
        ids = np.empty(count, dtype=np.int64)
        values = np.empty((count, dimension), dtype=np.int16)
        scales = np.empty(count, dtype=np.float32)
        total = np.zeros(dimension, dtype=np.float64)
        filled = 0
        rows = iter(rows)
        while batch := list(itertools.islice(rows, LOAD_ROWS)):
            stop = filled + len(batch)
            ids[filled:stop] = [chunk_id for chunk_id, _ in batch]
            vectors = np.frombuffer(b"".join(bytes(vector) for _, vector in batch), dtype=np.float32)
            vectors = vectors.reshape(len(batch), dimension)
            norms = np.linalg.norm(vectors, axis=1, keepdims=True)
            unit = vectors / np.where(norms > 0, norms, 1)
            total += unit.sum(axis=0, dtype=np.float64)
            values[filled:stop], scales[filled:stop] = _quantize(unit)
            filled = stop
        if filled != count:
            raise ValueError(f"expected {count} vectors, read {filled}")
        mean = (total / max(count, 1)).astype(np.float32)
        return cls(ids, values, scales, mean)

    def __len__(self) -> int:
        return len(self.ids)

    def nearest(
        self, query: np.ndarray, k: int, allowed_ids: Sequence[int] | None = None
    ) -> list[tuple[int, float]]:
        """The ``k`` nearest rows as (chunk id, cosine distance), nearest first. With ``allowed_ids``,
        every allowed row is scored (a filter keeps few rows, and codes would miss some of them)."""
        if k <= 0 or len(self) == 0:
            return []
        query = np.asarray(query, dtype=np.float32)
        query = query / (np.linalg.norm(query) or 1.0)
        if allowed_ids is not None:
            rows, similarities = self._best(query, k, self._rows_of(allowed_ids))
        elif len(self) > EXACT_LIMIT:
            rows, similarities = self._best_of_candidates(query, k)
        else:
            rows, similarities = self._best(query, k, None)
        hits = zip(self.ids[rows].tolist(), similarities.tolist(), strict=True)
        return [(chunk_id, 1.0 - similarity) for chunk_id, similarity in hits]

    def _best_of_candidates(self, query: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        """The best rows among those whose codes are nearest the query's; more of them while the
        best come from the outer part of the candidates (the codes then rank this query poorly)."""
        distances = self._hamming(query)
        # within[d]: how many rows lie at Hamming distance d or less
        within = np.cumsum(np.bincount(distances, minlength=self.codes.shape[0] * 64 + 1))
        wanted = max(MIN_CANDIDATES, CANDIDATES_PER_HIT * k, int(CANDIDATE_SHARE * len(self)))
        while wanted < EXACT_SHARE * len(self):
            cut = np.searchsorted(within, wanted)
            rows, similarities = self._best(query, k, np.flatnonzero(distances <= cut))
            if distances[rows].max() <= np.searchsorted(within, wanted // WIDEN):
                return rows, similarities
            wanted *= WIDEN
        return self._best(query, k, None)

    def _hamming(self, query: np.ndarray) -> np.ndarray:
        """Hamming distance from the query's code to every row's, one 64-bit word of all rows at a time."""
        distances = np.zeros(len(self), dtype=np.uint16)
        differing = np.empty(len(self), dtype=np.uint64)
        counts = np.empty(len(self), dtype=np.uint8)
        for word, column in zip(_sign_codes(query[None, :], self.mean)[0], self.codes, strict=True):
            np.bitwise_xor(column, word, out=differing)
            np.bitwise_count(differing, out=counts)
            distances += counts
        return distances

    def _best(self, query: np.ndarray, k: int, rows: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
        """The ``k`` best of ``rows`` (all rows when None) by cosine, best first: positions, cosines."""
        similarities = self._similarities(query, rows)
        top = min(k, len(similarities))
        if top == 0:
            return np.empty(0, dtype=np.int64), similarities
        best = np.argpartition(-similarities, top - 1)[:top]
        best = best[np.argsort(-similarities[best], kind="stable")]
        return (best if rows is None else rows[best]), similarities[best]

    def _similarities(self, query: np.ndarray, rows: np.ndarray | None) -> np.ndarray:
        """Cosines between the query and ``rows`` (all rows when None), a block at a time."""
        count = len(self) if rows is None else len(rows)
        similarities = np.empty(count, dtype=np.float32)
        scratch = np.empty((min(count, _block_rows(self.values.shape[1])), self.values.shape[1]), np.float32)
        for start, stop in _blocks(count, self.values.shape[1]):
            block = self.values[start:stop] if rows is None else self.values[rows[start:stop]]
            np.copyto(scratch[: stop - start], block)
            np.matmul(scratch[: stop - start], query, out=similarities[start:stop])
        similarities *= self.scales if rows is None else self.scales[rows]
        return similarities

    def _rows_of(self, chunk_ids: Sequence[int]) -> np.ndarray:
        """Positions of the given chunk ids that are in the matrix, each once, in order."""
        wanted = np.fromiter(chunk_ids, dtype=np.int64)
        slots = np.searchsorted(self.ids, wanted, sorter=self._by_id).clip(max=len(self) - 1)
        rows = self._by_id[slots]
        return np.unique(rows[self.ids[rows] == wanted])


def _quantize(unit: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """int16 values and float32 scales of unit vectors (a zero vector stays zero)."""
    largest = np.abs(unit).max(axis=1)
    scales = np.where(largest > 0, largest / INT16_MAX, 1.0).astype(np.float32)
    return np.round(unit / scales[:, None]).astype(np.int16), scales


def _sign_codes(unit: np.ndarray, mean: np.ndarray) -> np.ndarray:
    """One bit per dimension, set where the vector lies above the mean; as 64-bit words per row."""
    packed = np.packbits(unit > mean, axis=1)
    padded = np.zeros((len(unit), _words(unit.shape[1]) * 8), dtype=np.uint8)
    padded[:, : packed.shape[1]] = packed
    return padded.view(np.uint64)


def _words(dimension: int) -> int:
    return -(-dimension // 64)


def _block_rows(dimension: int) -> int:
    return max(1, BLOCK_ELEMENTS // dimension)


def _blocks(count: int, dimension: int) -> Iterable[tuple[int, int]]:
    step = _block_rows(dimension)
    return ((start, min(count, start + step)) for start in range(0, count, step))
