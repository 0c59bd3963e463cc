"""Query latency at scale: the search step of the project's store against numpy exact search.

Synthetic unit vectors of dimension 384, clustered as real embeddings are (queries lie near the data,
as questions lie near their answers), stored through the project's own store at 100,000 and
1,000,000 rows. For each size: median and 95th percentile of `Store.nearest` (vector already
computed; vectors searched in memory, as a process that searches more than once does), recall@10
against exact search, and numpy exact brute force over the same vectors in memory, in the same run.

    python bench/bench_query.py [--quick] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from indexer.store.sqlite import SQLiteStore as Store  # noqa: E402

DIMENSION = 384
CACHE = Path(__file__).resolve().parent / ".cache"


def synthetic(count: int, seed: int = 1) -> np.ndarray:
    rng = np.random.default_rng(seed)
    clusters = max(10, count // 500)
    centres = rng.standard_normal((clusters, DIMENSION)).astype(np.float32)
    vectors = np.empty((count, DIMENSION), dtype=np.float32)
    for start in range(0, count, 100_000):
        stop = min(count, start + 100_000)
        labels = rng.integers(0, clusters, stop - start)
        vectors[start:stop] = centres[labels] + 0.6 * rng.standard_normal(
            (stop - start, DIMENSION), dtype=np.float32
        )
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    return vectors


def queries_near(vectors: np.ndarray, count: int, seed: int = 2) -> np.ndarray:
    rng = np.random.default_rng(seed)
    picked = vectors[rng.integers(0, len(vectors), count)]
    noisy = picked + 0.03 * rng.standard_normal(picked.shape).astype(np.float32)
    return noisy / np.linalg.norm(noisy, axis=1, keepdims=True)


def stored(count: int, vectors: np.ndarray) -> Path:
    """An index file holding the vectors (built once, kept in bench/.cache)."""
    CACHE.mkdir(exist_ok=True)
    path = CACHE / f"query-{count}.db"
    if path.exists():
        with Store.open(path) as store:
            if (
                store.dimension == DIMENSION
                and store.db.execute("SELECT count(*) FROM chunk_vectors").fetchall()[0][0] == count
            ):
                return path
        for suffix in ("", "-wal", "-shm"):
            Path(str(path) + suffix).unlink(missing_ok=True)
    with Store.open(path) as store:
        with store.transaction():
            store.create_vector_table(DIMENSION)
            store.db.executemany(
                "INSERT INTO chunk_vectors (rowid, embedding) VALUES (?, ?)",
                ((row + 1, vectors[row].tobytes()) for row in range(count)),
            )
        store.db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    return path


def timed(function, repeats: list) -> list[float]:  # noqa: ANN001
    times = []
    for argument in repeats:
        started = time.perf_counter()
        function(argument)
        times.append((time.perf_counter() - started) * 1000)
    return times


def measure(count: int, query_count: int) -> list[dict]:
    vectors = synthetic(count)
    queries = queries_near(vectors, query_count)
    path = stored(count, vectors)
    rows = []
    with Store.open(path) as store:
        store.expect_many_searches()
        started = time.perf_counter()
        store.nearest(queries[0], 10)
        load_seconds = time.perf_counter() - started
        ours_times = timed(lambda q: store.nearest(q, 10), queries)
        found = [{chunk_id - 1 for chunk_id, _ in store.nearest(q, 10)} for q in queries]
        store.vectors_in_memory = False
        scan_times = timed(lambda q: store.nearest(q, 10), queries[: min(5, query_count)])

    def numpy_exact(query: np.ndarray) -> np.ndarray:
        scores = vectors @ query
        top = np.argpartition(-scores, 9)[:10]
        return top[np.argsort(-scores[top])]

    numpy_times = timed(numpy_exact, queries)
    recall = float(
        np.mean([len(found[i] & set(numpy_exact(q).tolist())) / 10 for i, q in enumerate(queries)])
    )
    ours, reference = statistics.median(ours_times), statistics.median(numpy_times)
    size_mb = os.path.getsize(path) / 1e6
    label = f"{count:,} x {DIMENSION}"
    rows.append(
        {
            "what": f"search median ms, {label} (ref: numpy exact)",
            "ours": round(ours, 2),
            "reference": round(reference, 2),
            "ratio": round(ours / reference, 2),
            "target": "<= 1.0 (no slower than numpy)" if count < 1_000_000 else "<= 100 ms",
            "pass": ours <= reference if count < 1_000_000 else ours <= 100,
        }
    )
    rows.append(
        {
            "what": f"search p95 ms, {label}",
            "ours": round(float(np.percentile(ours_times, 95)), 2),
            "reference": round(float(np.percentile(numpy_times, 95)), 2),
            "ratio": "",
            "target": "",
            "pass": "",
        }
    )
    rows.append(
        {
            "what": f"recall@10, {label}",
            "ours": round(recall, 4),
            "reference": 1.0,
            "ratio": round(recall, 4),
            "target": ">= 0.97",
            "pass": recall >= 0.97,
        }
    )
    rows.append(
        {
            "what": f"sqlite-vec scan median ms, {label} (first query of a process)",
            "ours": round(statistics.median(scan_times), 1),
            "reference": round(reference, 2),
            "ratio": round(statistics.median(scan_times) / reference, 2),
            "target": "",
            "pass": "",
        }
    )
    rows.append(
        {
            "what": f"load vectors into memory s, {label} (once per process)",
            "ours": round(load_seconds, 2),
            "reference": "",
            "ratio": "",
            "target": "",
            "pass": "",
        }
    )
    rows.append(
        {
            "what": f"index file MB per million chunks ({label})",
            "ours": round(size_mb * 1e6 / count, 0),
            "reference": "",
            "ratio": "",
            "target": "",
            "pass": "",
        }
    )
    return rows


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--json", action="store_true")
    options = parser.parse_args()
    sizes = [60_000] if options.quick else [100_000, 1_000_000]
    rows = []
    for count in sizes:
        rows.extend(measure(count, 20 if options.quick else 100))
    if options.json:
        print(json.dumps(rows))
    else:
        for row in rows:
            print(
                f"{row['what']:<70} {row['ours']!s:>10} {row['reference']!s:>10} "
                f"{row['ratio']!s:>8} {row['target']}"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
