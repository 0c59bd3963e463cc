"""Why the store searches through usearch: the candidates measured side by side in one run.

At 100,000 x 384 on bench_query.py's four kinds of vectors (clustered, offset 0.3 and 0.7, real),
each candidate's median and p95 search time with one thread, recall@10 against exact float32 search,
its build time and its size, as ratios against numpy exact search in the same run:

- the store as it is (usearch graph, int8 scaled per row, candidates re-scored on float32 from
  sqlite-vec, through `SQLiteStore.nearest` on bench_query's cached index);
- the sign codes it replaced (read from git history), searching int16 rows in memory;
- usearch with its own float32-to-int8 conversion (what per-row scaling fixes);
- faiss HNSW with 8-bit scalar quantization (one range per dimension), filtered by IDSelector;
- hnswlib (float32 only).

faiss and hnswlib are not dependencies: `pip install faiss-cpu hnswlib` first (a missing one is
skipped, and said so in a row).

    python bench/compare_vector_indexes.py [--count 100000] [--quick] [--json] [--kinds KIND ...]
"""

from __future__ import annotations

import argparse
import importlib.util
import statistics
import subprocess
import sys
import time
import types
from collections.abc import Callable
from pathlib import Path

import numpy as np
from bench_query import CACHE, KINDS, SCIFACT, cases, cpu_row, exact_top, p95, recall, stored
from support.rows import print_rows, row

from indexer.store.sqlite import SQLiteStore

#: the last commit with the sign-code search (indexer/store/sqlite_vectors.py's VectorMatrix)
SIGN_CODES_COMMIT = "5f06395"
CONNECTIVITY, EXPANSION_ADD, EXPANSION_SEARCH = 16, 64, 256


def sign_codes_module() -> types.ModuleType | None:
    """The module the graph replaced, as it was at SIGN_CODES_COMMIT (None outside a git checkout)."""
    result = subprocess.run(
        ["git", "show", f"{SIGN_CODES_COMMIT}:indexer/store/sqlite_vectors.py"],
        capture_output=True,
        text=True,
        cwd=Path(__file__).resolve().parent,
    )
    if result.returncode != 0:
        return None
    module = types.ModuleType("sign_codes")
    exec(compile(result.stdout, "sign_codes", "exec"), module.__dict__)
    return module


def candidates(vectors: np.ndarray) -> dict[str, tuple[Callable[[np.ndarray], np.ndarray], float, float]]:
    """name: (search returning 10 row positions, build seconds, size MB) for each candidate at hand."""
    found = {}
    ids = np.arange(len(vectors))
    module = sign_codes_module()
    if module is not None:
        started = time.perf_counter()
        matrix = module.VectorMatrix.from_vectors(ids, vectors)
        size = (matrix.values.nbytes + matrix.codes.nbytes) / 1e6
        found["sign codes + int16 rows (replaced)"] = (
            lambda q: np.array([i for i, _ in matrix.nearest(q, 10)]),
            time.perf_counter() - started,
            size,
        )
    from usearch.index import Index

    started = time.perf_counter()
    own = Index(
        ndim=vectors.shape[1],
        metric="cos",
        dtype="i8",
        connectivity=CONNECTIVITY,
        expansion_add=EXPANSION_ADD,
        expansion_search=EXPANSION_SEARCH,
    )
    own.add(ids, vectors)
    found["usearch, its own int8 conversion"] = (
        lambda q: own.search(q, 10).keys,
        time.perf_counter() - started,
        own.serialized_length / 1e6,
    )
    missing = [name for name in ("faiss", "hnswlib") if importlib.util.find_spec(name) is None]
    if missing:
        print(f"  not installed, not compared: {', '.join(missing)}", file=sys.stderr)
    if importlib.util.find_spec("faiss"):
        import faiss

        started = time.perf_counter()
        index = faiss.IndexHNSWSQ(
            vectors.shape[1], faiss.ScalarQuantizer.QT_8bit, CONNECTIVITY, faiss.METRIC_INNER_PRODUCT
        )
        index.hnsw.efConstruction = EXPANSION_ADD
        index.train(vectors)
        index.add(vectors)
        index.hnsw.efSearch = EXPANSION_SEARCH
        faiss.omp_set_num_threads(1)
        size = len(faiss.serialize_index(index)) / 1e6
        found["faiss HNSW, 8-bit per dimension"] = (
            lambda q: index.search(q[None, :], 10)[1][0],
            time.perf_counter() - started,
            size,
        )
    if importlib.util.find_spec("hnswlib"):
        import hnswlib

        started = time.perf_counter()
        graph = hnswlib.Index(space="ip", dim=vectors.shape[1])
        graph.init_index(max_elements=len(vectors), ef_construction=EXPANSION_ADD, M=CONNECTIVITY)
        graph.add_items(vectors, ids)
        graph.set_ef(EXPANSION_SEARCH)
        graph.set_num_threads(1)
        size = len(vectors) * (vectors.shape[1] * 4 + CONNECTIVITY * 2 * 4 + 16) / 1e6
        found["hnswlib, float32"] = (
            lambda q: graph.knn_query(q, 10)[0][0],
            time.perf_counter() - started,
            size,
        )
    return found


def timed(
    search: Callable[[np.ndarray], np.ndarray], queries: np.ndarray
) -> tuple[list[float], list[set[int]]]:
    search(queries[0])
    times, found = [], []
    for query in queries:
        started = time.perf_counter()
        hits = search(query)
        times.append((time.perf_counter() - started) * 1000)
        found.append({int(i) for i in hits})
    return times, found


def compare(count: int, quick: bool, kinds: tuple[str, ...] = KINDS) -> list[dict]:
    rows = [cpu_row()]
    for label, name, vectors, queries in cases(count, quick=quick, scifact=SCIFACT):
        if name not in kinds:
            continue
        size = f"{count:,} x {vectors.shape[1]}"
        truth = [set(exact_top(vectors, q).tolist()) for q in queries]
        exact_times, _ = timed(lambda q, rows=vectors: exact_top(rows, q), queries)
        exact_median = statistics.median(exact_times)
        path = stored(count, vectors, name)
        with SQLiteStore.open(path) as store:
            store.expect_many_searches()
            ours_times, ours_found = timed(
                lambda q: np.array([chunk_id - 1 for chunk_id, _ in store.nearest(q, 10)]), queries
            )
            graph_mb = store.vector_search_status()["file_bytes"] / 1e6
        built = store_graph_seconds(path)
        entries = {
            "the store: usearch, int8 per row, float32 re-scored": (ours_times, ours_found, built, graph_mb)
        }
        for candidate, (search, seconds, mb) in candidates(vectors).items():
            times, found = timed(search, queries)
            entries[candidate] = (times, found, seconds, mb)
        for candidate, (times, found, seconds, mb) in entries.items():
            median = statistics.median(times)
            rows.append(
                row(
                    f"{candidate}, {size}, {label}: median ms (ref: numpy exact), p95 ms, recall@10, "
                    f"build s, MB",
                    round(median, 2),
                    round(exact_median, 2),
                    f"{median / exact_median:.3f}; p95 {p95(times)}; recall {recall(found, truth)}; "
                    f"build {seconds:.0f} s; {mb:.0f} MB",
                )
            )
    return rows


def store_graph_seconds(path: Path) -> float:
    with SQLiteStore.open(path) as store:
        return float(store.get_meta("bench_graph_seconds") or "nan")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--count", type=int, help="vectors of each kind (default 100,000; 20,000 with --quick)"
    )
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--kinds", nargs="*", choices=KINDS, default=KINDS, help="vector sets (default all)")
    options = parser.parse_args()
    CACHE.mkdir(exist_ok=True)
    count = options.count or (20_000 if options.quick else 100_000)
    print_rows(compare(count, options.quick, tuple(options.kinds)), options.json)
    return 0


if __name__ == "__main__":
    sys.exit(main())
