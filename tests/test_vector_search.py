"""In-memory vector search agrees with sqlite-vec's exact KNN."""

from __future__ import annotations

import numpy as np

from indexer.store import sqlite_vectors as vector_search
from indexer.store.sqlite import SQLiteStore as Store


def clustered_vectors(count: int, dimension: int = 64, clusters: int = 50, seed: int = 7) -> np.ndarray:
    rng = np.random.default_rng(seed)
    centres = rng.standard_normal((clusters, dimension))
    vectors = centres[rng.integers(0, clusters, count)] + 0.6 * rng.standard_normal((count, dimension))
    return (vectors / np.linalg.norm(vectors, axis=1, keepdims=True)).astype(np.float32)


def filled_store(path, vectors: np.ndarray) -> Store:
    store = Store.open(path, writable=True, create=True)
    with store.transaction():
        store.create_vector_table(vectors.shape[1])
        for row, vector in enumerate(vectors, start=1):
            store.db.execute(
                "INSERT INTO chunk_vectors (rowid, embedding) VALUES (?, ?)", (row * 3, vector.tobytes())
            )
    return store


def test_memory_search_returns_what_sqlite_vec_returns(tmp_path):
    vectors = clustered_vectors(3000)
    queries = clustered_vectors(20, seed=8)
    with filled_store(tmp_path / "index.db", vectors) as store:
        allowed = list(range(3, 3 * 3000, 7))
        scanned = [store.nearest(q, 10) for q in queries]
        filtered_scan = [store.nearest(q, 10, allowed) for q in queries]
        store.expect_many_searches()
        in_memory = [store.nearest(q, 10) for q in queries]
        filtered_memory = [store.nearest(q, 10, allowed) for q in queries]
    for expected, got in zip(scanned + filtered_scan, in_memory + filtered_memory, strict=False):
        assert [chunk_id for chunk_id, _ in got] == [chunk_id for chunk_id, _ in expected]
        assert np.allclose([d for _, d in got], [d for _, d in expected], atol=1e-5)
    assert all(chunk_id in allowed for hits in filtered_memory for chunk_id, _ in hits)


def test_memory_search_sees_rows_written_after_it_loaded(tmp_path):
    vectors = clustered_vectors(100)
    with filled_store(tmp_path / "index.db", vectors) as store:
        store.expect_many_searches()
        assert store.nearest(vectors[0], 1)[0][0] == 3
        newcomer = -vectors[0]
        with store.transaction():
            store.db.execute(
                "INSERT INTO chunk_vectors (rowid, embedding) VALUES (?, ?)", (9999, newcomer.tobytes())
            )
            store.set_meta({"vectors_version": "after the newcomer"})  # as every write of the store does
        assert store.nearest(newcomer, 1)[0][0] == 9999


def test_quantized_candidates_keep_recall_at_10_above_097(monkeypatch):
    """Queries near the data, as questions are near their answers (not random directions)."""
    monkeypatch.setattr(vector_search, "EXACT_LIMIT", 1000)
    vectors = clustered_vectors(20000, dimension=384, clusters=200)
    rng = np.random.default_rng(9)
    queries = vectors[rng.integers(0, len(vectors), 50)] + 0.03 * rng.standard_normal((50, 384)).astype(
        np.float32
    )
    matrix = vector_search.VectorMatrix(np.arange(len(vectors)), vectors)
    recalls = []
    for query in queries:
        exact = set(np.argsort(-(vectors @ query))[:10].tolist())
        found = {chunk_id for chunk_id, _ in matrix.nearest(query, 10)}
        recalls.append(len(exact & found) / 10)
    assert np.mean(recalls) >= 0.97
