"""Vector search at scale: the store's search against numpy exact search, on the CPU this runs on.

Unit vectors of dimension 384 at 100,000 and 1,000,000 rows (20,000 with --quick), of four kinds, each
with queries that lie near the data as questions lie near their answers:

- clustered: synthetic clusters around random centres (vectors centred on zero);
- offset: the same vectors shifted along one shared direction, as many embedding models' vectors
  all lie in one cone, to a mean cosine of about 0.3 and 0.7 between unrelated vectors (0.7 stands in
  for models such as bge-small);
- words: vectors of high intrinsic dimension, as a general model gives unrelated short notes: each
  word of a vocabulary a random direction, each text the sum of 5 to 40 words drawn by Zipf's law,
  plus one offset all texts share (mean cosine about 0.55); the queries are texts of 3 to 7 words.
  A graph walk finds such neighbours worst: they lie at nearly the same distance from the query;
- real: the chunks of sample_corpus/ and of SciFact embedded by the default model, grown to the size
  by mixing random pairs of them with a little noise; the queries are SciFact's questions and the
  sample corpus's, embedded by the same model;
- real-bge: the same, embedded by the packaged bge-small-en-v1.5 (its questions with its query
  instruction): a model whose vectors share a strong common direction.

Each is stored as a build leaves it: chunks in files of 100, the files in 100 folders (so one folder
holds 1% of the chunks), the vectors in sqlite-vec and the graph saved beside the index (made once
and kept in bench/.cache while the vectors and the graph's layout stay the same; its build time is
reported from when it was made).

For each: `SQLiteStore.nearest` median, p95 and recall@10 against exact float32 search, as a ratio
against numpy exact search over the same float32 vectors in memory, in the same run; the store's
graph walk, its exact scan of the graph's int8 rows and its exact search over the float32 copy, each
forced (the first two re-scored on float32), what the store chose (a process that searches many
times walks only once its audited walks found what scans find), and what a row scored by the walk
costs in rows scored exactly (`sqlite_vectors.WALK_ROW_COST` is this figure); usearch's own
search on the same graph (the library's figures: int8 against int8, nothing re-scored, no changes
to take in); the search restricted by `--path` to one folder (1% of the chunks), timed with the
filter's own SQL: median, p95, hits returned and recall among the allowed chunks. Once per size, on
the clustered vectors: the first search of a new process (the store opened and searched, and the
whole process), the graph file, and a reader following a writer: how long after a commit its first
search finds a new file's chunks, and no longer finds a removed file's, and what the next build's end
costs to fold them into a new file. At the largest size, the memory of a process that searched 500
times, against the float32 vectors alone.

The real vectors are embedded once per model (SciFact: about ten minutes on a quiet machine with the
default model, longer with bge-small) and kept in bench/.cache (delete bench/.cache/real-vectors*.npz
to embed again); without SciFact, sample_corpus/ alone is used.

    python bench/bench_query.py [--quick] [--json] [--scifact DIR] [--sizes N ...] [--kinds KIND ...]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

import numpy as np
from support.rows import print_rows, row

from indexer.backends.packaged import BGE_SMALL, MINILM
from indexer.records import Chunk
from indexer.store.records import ChunkFilter, NewFile
from indexer.store.sqlite import SQLiteStore, remove_database
from indexer.store.sqlite import vectors as sqlite_vectors

DIMENSION = 384
REPO = Path(__file__).resolve().parent.parent
CACHE = REPO / "bench" / ".cache"
#: shared/ lies beside the project root, or beside the folder of worktrees that holds it
SCIFACT = (
    next(
        (p for p in (REPO.parent / "shared", REPO.parent.parent / "shared") if p.is_dir()),
        REPO.parent / "shared",
    )
    / "eval"
    / "scifact"
)
#: noise added to each mix of two real vectors, as a share of a unit vector's length
MIX_NOISE = 0.05
#: the vocabulary of the word-sum vectors
WORDS = 30_000
MEMORY_TARGET_MB = 1000
CHUNKS_PER_FILE = 100
FOLDERS = 100
FILTERED_FOLDER = "part-007/"
ROOT = "/bench"
#: the issue's targets: at 1,000,000 rows, and below it against numpy exact search
TARGET_P50_MS, TARGET_P95_MS = 30.0, 60.0
TARGET_RATIO = 0.5
FIRST_SEARCH_TARGET_S = 1.0
FOLLOW_TARGET_S = 1.0
#: the cache names of the vector sets: clustered, offset to mean cosine 0.3 and 0.7, real
KINDS = ("query", "offset30", "offset70", "words", "real", "real-bge")
#: the model of each real set, by its cache name
REAL_MODELS = {"real": MINILM.name, "real-bge": BGE_SMALL.name}


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


def with_offset(vectors: np.ndarray, mean_cosine: float, seed: int = 4) -> np.ndarray:
    """The vectors shifted along one direction, so two unrelated ones meet at about ``mean_cosine``.
    The direction moves every dimension by the same amount (random signs): the hardest case for sign
    bits, which then mostly agree."""
    rng = np.random.default_rng(seed)
    direction = np.where(rng.random(DIMENSION) < 0.5, -1.0, 1.0).astype(np.float32) / np.sqrt(DIMENSION)
    # for near-orthogonal unit vectors a and b, cos(a + s d, b + s d) = s^2 / (1 + s^2)
    shift = np.float32(np.sqrt(mean_cosine / (1 - mean_cosine)))
    shifted = np.empty_like(vectors)
    for start in range(0, len(vectors), 100_000):
        block = vectors[start : start + 100_000] + shift * direction
        shifted[start : start + 100_000] = block / np.linalg.norm(block, axis=1, keepdims=True)
    return shifted


def word_sums(count: int, query_count: int, seed: int = 8) -> tuple[np.ndarray, np.ndarray]:
    """``count`` texts and ``query_count`` questions as unit sums of random word directions (Zipf
    frequencies over WORDS words) plus one offset they all share."""
    rng = np.random.default_rng(seed)
    words = rng.standard_normal((WORDS, DIMENSION), dtype=np.float32)
    words /= np.linalg.norm(words, axis=1, keepdims=True)
    offset = rng.standard_normal(DIMENSION).astype(np.float32)
    offset /= np.linalg.norm(offset)
    frequency = 1.0 / np.arange(1, WORDS + 1)
    cumulative = np.cumsum(frequency / frequency.sum())

    def texts(count: int, shortest: int, longest: int) -> np.ndarray:
        lengths = rng.integers(shortest, longest + 1, count)
        picked = np.minimum(np.searchsorted(cumulative, rng.random(int(lengths.sum()))), WORDS - 1)
        starts = np.concatenate(([0], np.cumsum(lengths)[:-1]))
        sums = np.add.reduceat(words[picked], starts, axis=0) / np.sqrt(lengths)[:, None] + offset
        return sums / np.linalg.norm(sums, axis=1, keepdims=True)

    vectors = np.empty((count, DIMENSION), dtype=np.float32)
    for start in range(0, count, 20_000):
        vectors[start : start + 20_000] = texts(min(count, start + 20_000) - start, 5, 40)
    return vectors, texts(query_count, 3, 7).astype(np.float32)


def grown(pool: np.ndarray, count: int, seed: int = 3) -> np.ndarray:
    """``count`` unit vectors: the pool itself, then mixes ``t a + (1 - t) b`` of random pairs of it
    (t uniform in 0..1) plus noise of length about MIX_NOISE."""
    rng = np.random.default_rng(seed)
    vectors = np.empty((count, pool.shape[1]), dtype=np.float32)
    vectors[: len(pool)] = pool[:count]
    for start in range(len(pool), count, 100_000):
        size = min(count, start + 100_000) - start
        t = rng.random((size, 1), dtype=np.float32)
        mixed = t * pool[rng.integers(0, len(pool), size)] + (1 - t) * pool[rng.integers(0, len(pool), size)]
        mixed += (MIX_NOISE / np.sqrt(pool.shape[1])) * rng.standard_normal(mixed.shape, dtype=np.float32)
        vectors[start : start + size] = mixed / np.linalg.norm(mixed, axis=1, keepdims=True)
    return vectors


def queries_near(vectors: np.ndarray, count: int, seed: int = 2) -> np.ndarray:
    rng = np.random.default_rng(seed)
    picked = vectors[rng.integers(0, len(vectors), count)]
    noisy = picked + 0.03 * rng.standard_normal(picked.shape).astype(np.float32)
    return noisy / np.linalg.norm(noisy, axis=1, keepdims=True)


def cache_tag(model: str) -> str:
    """What names a model's files in bench/.cache: nothing for the default model (older caches)."""
    return "" if model == MINILM.name else f"-{model}"


def real_vectors_file(model: str) -> Path:
    return CACHE / f"real-vectors{cache_tag(model)}.npz"


def real_vectors(scifact: Path, model: str = MINILM.name) -> tuple[np.ndarray, np.ndarray, str]:
    """Chunk vectors and question vectors from ``model``, and what they are made of."""
    saved = real_vectors_file(model)
    if not saved.exists():
        CACHE.mkdir(exist_ok=True)
        documents, queries, source = _embed_real(scifact, model)
        np.savez(saved, documents=documents, queries=queries, source=source)
    with np.load(saved) as arrays:
        return arrays["documents"], arrays["queries"], str(arrays["source"])


def _embed_real(scifact: Path, model: str) -> tuple[np.ndarray, np.ndarray, str]:
    """Index sample_corpus/ (and SciFact, as `index eval` writes it) with the ordinary build and
    ``model``, then read the chunk vectors back; embed the questions with the same model, as a search
    does (its query instruction first)."""
    from indexer.api import Index
    from indexer.backends.embedded import EmbeddedBackend
    from indexer.eval import beir

    folders = {"sample": REPO / "sample_corpus"}
    texts = [case["query"] for case in json.loads((REPO / "tests/fixtures/sample_queries.json").read_text())]
    if (scifact / "corpus.jsonl").exists():
        collection = beir.load_collection(scifact, "train")
        beir.write_documents(collection, CACHE / "scifact-documents")
        folders["scifact"] = CACHE / "scifact-documents"
        with open(scifact / "queries.jsonl", encoding="utf-8") as lines:
            texts += [json.loads(line)["text"] for line in lines if line.strip()]
    documents = []
    for name, folder in folders.items():
        with Index.open(CACHE / f"real{cache_tag(model)}-{name}.db", backend=EmbeddedBackend(model)) as index:
            index.build(folder, rebuild=True, warn=lambda message: None)
            rows = index.store.db.execute("SELECT embedding FROM chunk_vectors").fetchall()
        documents.append(np.vstack([np.frombuffer(row[0], dtype=np.float32) for row in rows]))
    backend = EmbeddedBackend(model)
    asked = [backend.query_prefix + text for text in texts]
    queries = np.vstack([backend.embed(asked[i : i + 64]) for i in range(0, len(asked), 64)])
    source = " + ".join("SciFact" if name == "scifact" else "sample_corpus" for name in folders)
    return np.vstack(documents), queries.astype(np.float32), source


def stored(count: int, vectors: np.ndarray, name: str) -> Path:
    """An index holding the vectors as a build leaves it, its graph saved beside it (made once, kept
    in bench/.cache while the vectors and the graph's layout stay the same)."""
    CACHE.mkdir(exist_ok=True)
    path = CACHE / f"{name}-{count}.db"
    digest = hashlib.sha256(b"files and chunks" + vectors[:: max(1, count // 1000)].tobytes()).hexdigest()
    if path.exists():
        with SQLiteStore.open(path, writable=True) as store:  # migrates a copy an older version made
            if store.get_meta("bench_vectors") == digest:
                started = time.perf_counter()
                store.update_vector_graph(min_changes=1)  # what a follow run left; a graph of an old layout
                if store.get_meta("bench_graph_seconds") is None:  # a run stopped before its graph was made
                    with store.transaction():
                        store.set_meta(
                            {
                                "bench_graph_seconds": f"{time.perf_counter() - started:.1f}",
                                "bench_load_avg": load(),
                            }
                        )
                return path
        remove_database(str(path))
    started = time.perf_counter()
    with SQLiteStore.open(path, writable=True, create=True) as store:
        with store.transaction():
            store.create_vector_table(DIMENSION)
            files = -(-count // CHUNKS_PER_FILE)
            store.db.executemany(
                "INSERT INTO files (id, root, path, size, mtime_ns, content_hash) VALUES (?, ?, ?, 1, 1, ?)",
                ((f + 1, ROOT, f"part-{f % FOLDERS:03d}/file-{f}.txt", str(f)) for f in range(files)),
            )
            store.db.executemany(
                "INSERT INTO chunks (id, file_id, seq, start_line, end_line, heading, text, text_hash) "
                "VALUES (?, ?, ?, 1, 1, '', '', ?)",
                ((i + 1, i // CHUNKS_PER_FILE + 1, i % CHUNKS_PER_FILE, str(i)) for i in range(count)),
            )
            store.db.executemany(
                "INSERT INTO chunk_vectors (rowid, embedding) VALUES (?, ?)",
                ((i + 1, vectors[i].tobytes()) for i in range(count)),
            )
            store.set_meta({"bench_vectors": digest, "chunk_count": str(count)})
        loaded = time.perf_counter()
        store.update_vector_graph(min_changes=1)
        with store.transaction():
            store.set_meta(
                {"bench_graph_seconds": f"{time.perf_counter() - loaded:.1f}", "bench_load_avg": load()}
            )
        store.db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    print(f"  stored {path.name} in {time.perf_counter() - started:.0f} s", file=sys.stderr, flush=True)
    return path


def load() -> str:
    return f"{os.getloadavg()[0]:.1f}"


def timed(function: Callable[[np.ndarray], object], arguments: Sequence[np.ndarray]) -> list[float]:
    """Milliseconds of one call of ``function`` per argument."""
    times = []
    for argument in arguments:
        started = time.perf_counter()
        function(argument)
        times.append((time.perf_counter() - started) * 1000)
    return times


def mean_cosine(vectors: np.ndarray, pairs: int = 4000, seed: int = 6) -> float:
    rng = np.random.default_rng(seed)
    first, second = rng.integers(0, len(vectors), (2, pairs))
    return float(np.mean(np.sum(vectors[first] * vectors[second], axis=1)))


def cases(
    count: int, quick: bool, scifact: Path, kinds: Sequence[str] = KINDS
) -> Iterator[tuple[str, str, np.ndarray, np.ndarray]]:
    """(label, cache name, vectors, queries) of each kind of vectors at this size, one at a time (a
    million float32 vectors take 1.5 GB); a real set only where ``kinds`` asks for it (its model
    embeds SciFact first, once)."""
    query_count = 20 if quick else 100
    clustered = synthetic(count)
    yield "clustered", "query", clustered, queries_near(clustered, query_count)
    for cosine in (0.7,) if quick else (0.3, 0.7):
        shifted = with_offset(clustered, cosine)
        label = f"offset, mean cos {mean_cosine(shifted):.2f}"
        yield label, f"offset{round(cosine * 100)}", shifted, queries_near(shifted, query_count)
    del clustered, shifted
    if "words" in kinds:
        vectors, questions = word_sums(count, query_count)
        yield (
            f"words (sums of random directions, mean cos {mean_cosine(vectors):.2f})",
            "words",
            vectors,
            questions,
        )
        del vectors
    for name, model in REAL_MODELS.items():
        if name not in kinds or (quick and not real_vectors_file(model).exists()):
            continue  # embedding them takes minutes: not for a smoke run
        documents, questions, source = real_vectors(scifact, model)
        vectors = grown(documents, count)
        asked = min(query_count, len(questions))
        picked = np.random.default_rng(7).choice(len(questions), asked, replace=False)
        label = f"real, {model} ({source} chunks, mixed; mean cos {mean_cosine(vectors):.2f})"
        yield label, name, vectors, questions[picked]
        del vectors


def exact_top(vectors: np.ndarray, query: np.ndarray, rows: np.ndarray | None = None) -> np.ndarray:
    """Positions of the 10 nearest rows (among ``rows``), by float32 exact search."""
    scores = (vectors if rows is None else vectors[rows]) @ query
    top = np.argpartition(-scores, 9)[:10]
    top = top[np.argsort(-scores[top])]
    return top if rows is None else rows[top]


def recall(found: list[set[int]], truth: list[set[int]]) -> float:
    return round(float(np.mean([len(f & t) / 10 for f, t in zip(found, truth, strict=True)])), 4)


def p95(times: list[float]) -> float:
    return round(float(np.percentile(times, 95)), 2)


def measure(label: str, name: str, vectors: np.ndarray, queries: np.ndarray) -> list[dict]:
    """Rows for one kind of vectors at one size."""
    count = len(vectors)
    path = stored(count, vectors, name)
    size = f"{count:,} x {DIMENSION}"
    small = count < 1_000_000
    folder = ChunkFilter(path_globs=(FILTERED_FOLDER,))
    with SQLiteStore.open(path) as store:
        store.expect_many_searches()
        store.nearest(queries[0], 10)  # the graph, or the float32 copy, opened
        ours = timed(lambda q: store.nearest(q, 10), queries)
        found = [{chunk_id - 1 for chunk_id, _ in store.nearest(q, 10)} for q in queries]
        chosen = store.graph._search
        audit = chosen.audit if chosen is not None else None
    walk_times, walk_found, walked = forced(path, queries, "walk")
    scan_times, scan_found, _ = forced(path, queries, "scan")
    exact_times, _, _ = forced(path, queries, "exact")
    walk_median, exact_rows_median = statistics.median(walk_times), statistics.median(exact_times)
    walk_row_cost = (walk_median / sqlite_vectors.scored_by_walk(0, count)) / (exact_rows_median / count)
    with SQLiteStore.open(path) as store:
        graph = walked.graph  # held by its search, which keeps the bytes it reads alive
        graph.expansion_search = sqlite_vectors.EXPANSION_SEARCH

        def library(query: np.ndarray) -> np.ndarray:
            return graph.search(sqlite_vectors.quantize(sqlite_vectors.unit_rows(query)), 10).keys

        library_times = timed(library, queries)
        library_found = [{int(key) - 1 for key in library(q)} for q in queries]
        filtered_times = timed(lambda q: store.nearest(q, 10, store.chunk_filter(folder)), queries)
        allowed = store.chunk_filter(folder)
        filtered = [store.nearest(q, 10, allowed) for q in queries]
    reference = timed(lambda q: exact_top(vectors, q), queries)
    truth = [set(exact_top(vectors, q).tolist()) for q in queries]
    rows_allowed = np.array(allowed) - 1
    filtered_truth = [set(exact_top(vectors, q, rows_allowed).tolist()) for q in queries]
    filtered_found = [{chunk_id - 1 for chunk_id, _ in hits} for hits in filtered]
    ours_recall = recall(found, truth)
    walk_recall = recall(walk_found, truth)
    median, exact_median = statistics.median(ours), statistics.median(reference)
    filtered_median = statistics.median(filtered_times)
    share = len(allowed) / count
    if small:  # as fast as exact search, or faster
        speed_target, speed_passed = "<= 1 x numpy", median <= exact_median
    else:
        speed_target, speed_passed = f"<= {TARGET_RATIO} x numpy", median <= TARGET_RATIO * exact_median
    p95_passed = small or p95(ours) <= TARGET_P95_MS
    if chosen is not None and chosen.exact is not None:
        way = "exact over the float32 copy"
    elif audit is not None:
        walked = "walk" if audit.walks_right else "scan"
        way = f"graph {walked}, audited walks found {audit.found} of {audit.asked}"
    else:
        way = "graph scan"
    scan_median = statistics.median(scan_times)
    return [
        row(
            f"graph scan forced (int8 rows, exact), median ms, {size}, {label} (ref: the store's exact "
            f"search over its float32 copy, forced; the scan's recall@10 {recall(scan_found, truth)})",
            round(scan_median, 2),
            round(exact_rows_median, 2),
            round(scan_median / exact_rows_median, 3),
        ),
        row(
            f"graph walk forced, median ms, {size}, {label} (ref: the store's exact search over its "
            "float32 copy, forced)",
            round(walk_median, 2),
            round(exact_rows_median, 2),
            round(walk_median / exact_rows_median, 3),
        ),
        row(
            f"graph walk forced, recall@10 and its cost per row scored in rows scored exactly, {size}, "
            f"{label} (the store chose: {way}; WALK_ROW_COST {sqlite_vectors.WALK_ROW_COST})",
            walk_recall,
            round(walk_row_cost, 1),
        ),
        row(
            f"vector search median ms, {size}, {label} (ref: numpy exact)",
            round(median, 2),
            round(exact_median, 2),
            round(median / exact_median, 3),
            target=speed_target,
            passed=speed_passed,
        ),
        row(
            f"vector search p95 ms, {size}, {label} (ref: numpy exact)",
            p95(ours),
            p95(reference),
            target=None if small else f"<= {TARGET_P95_MS:g} ms",
            passed=None if small else p95_passed,
        ),
        row(
            f"recall@10, {size}, {label}",
            ours_recall,
            1.0,
            ours_recall,
            target=">= 0.97",
            passed=ours_recall >= 0.97,
        ),
        row(
            f"usearch's own search median ms and recall@10, {size}, {label} (int8 query, nothing re-scored)",
            round(statistics.median(library_times), 3),
            recall(library_found, truth),
        ),
        row(
            f"--path one folder ({share:.1%} of the chunks) median ms, {size}, {label}, with its SQL "
            "(ref: unfiltered)",
            round(filtered_median, 2),
            round(median, 2),
            round(filtered_median / median, 2),
            target=f"<= {TARGET_P50_MS:g} ms, p95 <= {TARGET_P95_MS:g} ms",
            passed=filtered_median <= TARGET_P50_MS and p95(filtered_times) <= TARGET_P95_MS,
        ),
        row(
            f"--path one folder: hits of k=10 (fewest), p95 ms, recall@10 among the allowed, {size}, {label}",
            min(len(hits) for hits in filtered),
            p95(filtered_times),
            recall(filtered_found, filtered_truth),
            target="10 hits, recall >= 0.97",
            passed=min(len(hits) for hits in filtered) == 10
            and recall(filtered_found, filtered_truth) >= 0.97,
        ),
    ]


def forced(
    path: Path, queries: np.ndarray, way: str
) -> tuple[list[float], list[set[int]], sqlite_vectors.VectorSearch]:
    """(ms per search, rows found, the search) of the store's graph walk ("walk"), its scan of the
    graph's int8 rows ("scan") or its exact search over the float32 copy ("exact"), whatever the size
    and the audit say."""
    names = ("WALK_ROW_COST", "WALK_RECALL", "AUDIT_SEARCHES", "AUDIT_EVERY")
    saved = {name: getattr(sqlite_vectors, name) for name in names}
    sqlite_vectors.WALK_ROW_COST = 10**9 if way == "exact" else 0
    sqlite_vectors.WALK_RECALL = 0  # walks right from the start
    sqlite_vectors.AUDIT_SEARCHES, sqlite_vectors.AUDIT_EVERY = 0, 10**9  # nothing audited
    try:
        with SQLiteStore.open(path) as store:
            if way != "scan":  # a one-off search audits nothing: it scans
                store.expect_many_searches()
            store.nearest(queries[0], 10)
            times = timed(lambda q: store.nearest(q, 10), queries)
            found = [{chunk_id - 1 for chunk_id, _ in store.nearest(q, 10)} for q in queries]
            return times, found, store.graph._search
    finally:
        for name, value in saved.items():
            setattr(sqlite_vectors, name, value)


def once_per_size(count: int, queries: np.ndarray) -> list[dict]:
    """The clustered index's first search in a new process, its graph, and a reader following a writer."""
    path = CACHE / f"query-{count}.db"
    size = f"{count:,} x {DIMENSION}"
    first = [first_search(path) for _ in range(3)]
    inside = statistics.median(run["open_and_search_s"] for run in first)
    whole = statistics.median(run["process_s"] for run in first)
    with SQLiteStore.open(path) as store:
        status = store.vector_search_status()
        graph_seconds = store.get_meta("bench_graph_seconds")
        graph_load = store.get_meta("bench_load_avg")
    seen, gone, fold = follow(path, queries[0])
    return [
        row(
            f"first search of a new process s, {size}: store opened + first search (ref: whole process, "
            f"imports included; load average {load()})",
            round(inside, 3),
            round(whole, 3),
            target=f"<= {FIRST_SEARCH_TARGET_S:g} s (whole process)",
            passed=whole <= FIRST_SEARCH_TARGET_S,
        ),
        row(
            f"vector graph file MB, {size} (ref: the float32 vectors alone); "
            f"build s (load average {graph_load})",
            round(status["file_bytes"] / 1e6, 1),
            round(count * DIMENSION * 4 / 1e6, 1),
            graph_seconds,
        ),
        row(
            f"float32 copy beside the graph MB, {size}, read for the re-scored candidates "
            "(ref: the vector graph file)",
            round(status.get("rows_file_bytes", 0) / 1e6, 1),
            round(status["file_bytes"] / 1e6, 1),
        ),
        row(
            f"a reader following a build, {size}: ms from a commit to its first search finding the new "
            "file's 100 chunks, and no longer finding a removed file's",
            round(seen * 1000, 1),
            round(gone * 1000, 1),
            target=f"<= {FOLLOW_TARGET_S:g} s",
            passed=max(seen, gone) <= FOLLOW_TARGET_S,
        ),
        row(f"a build's end folding 200 changes into a new graph file s, {size}", round(fold, 2)),
    ]


def first_search(path: Path) -> dict[str, float]:
    """(--first) A new process opens the index and searches once: what `index query` pays for the
    vector search without a server."""
    started = time.perf_counter()
    result = subprocess.run(
        [sys.executable, __file__, "--first", str(path)], capture_output=True, text=True, check=True
    )
    return {**json.loads(result.stdout), "process_s": time.perf_counter() - started}


def first(path: Path) -> None:
    started = time.perf_counter()
    with SQLiteStore.open(path) as store:
        query = np.frombuffer(
            store.query("SELECT embedding FROM chunk_vectors WHERE rowid = 77")[0][0], np.float32
        )
        assert store.nearest(query, 10)[0][0] == 77
    print(json.dumps({"open_and_search_s": time.perf_counter() - started}))


def follow(path: Path, query: np.ndarray) -> tuple[float, float, float]:
    """A long-lived reader and a writer: seconds from a commit to the reader's first search that
    finds a new file's chunks, then that no longer finds a removed file's; and the fold after."""
    fresh = queries_near(np.tile(query, (CHUNKS_PER_FILE, 1)), CHUNKS_PER_FILE, seed=11)
    added = NewFile(
        root=ROOT,
        path="followed/new.txt",
        size=1,
        mtime_ns=1,
        content_hash="new",
        status="indexed",
        chunks=[Chunk(1, 1, "", "") for _ in range(CHUNKS_PER_FILE)],
        text_hashes=[f"new-{i}" for i in range(CHUNKS_PER_FILE)],
        vectors=[vector.tobytes() for vector in fresh],
    )
    with SQLiteStore.open(path, writable=True) as writer, SQLiteStore.open(path) as reader:
        reader.expect_many_searches()
        reader.nearest(query, 10)
        with writer.transaction():
            writer.write_files([added])
        started = time.perf_counter()
        hits = reader.nearest(fresh[5], 10)
        seen = time.perf_counter() - started
        new_ids = {
            row[0]
            for row in writer.query(
                "SELECT c.id FROM chunks c JOIN files f ON f.id = c.file_id WHERE f.path = 'followed/new.txt'"
            )
        }
        assert hits[0][0] in new_ids, "the reader did not find the new chunks"
        with writer.transaction():
            writer.remove_file(writer.query("SELECT id FROM files WHERE path = 'followed/new.txt'")[0][0])
        started = time.perf_counter()
        hits = reader.nearest(fresh[5], 10)
        gone = time.perf_counter() - started
        assert not new_ids & {chunk_id for chunk_id, _ in hits}, "the reader still found removed chunks"
        started = time.perf_counter()
        writer.update_vector_graph(min_changes=1)
        fold = time.perf_counter() - started
    return seen, gone, fold


def memory_rows(count: int) -> list[dict]:
    """What a fresh process holds once it has searched 500 times (resident set, and its peak), against
    the float32 vectors alone."""
    path = CACHE / f"query-{count}.db"
    result = subprocess.run(
        [sys.executable, __file__, "--hold", str(path)], capture_output=True, text=True, check=True
    )
    held = json.loads(result.stdout)
    float32_mb = round(count * DIMENSION * 4 / 1e6)
    size = f"{count:,} x {DIMENSION}"
    return [
        row(
            f"memory of a process that searched 500 times MB, {size} "
            "(resident; ref: the float32 vectors alone)",
            held["resident_mb"],
            float32_mb,
            round(held["resident_mb"] / float32_mb, 2),
            target=f"< {MEMORY_TARGET_MB} MB",
            passed=held["resident_mb"] < MEMORY_TARGET_MB,
        ),
        row(
            f"memory of a searching process MB, {size}, peak; as `index status` states it",
            held["peak_mb"],
            held["status_mb"],
        ),
    ]


def hold(path: Path) -> None:
    """(--hold) Search ``path`` 500 times with queries near its vectors, print what this process holds."""
    with SQLiteStore.open(path) as store:
        stored_rows = store.query("SELECT embedding FROM chunk_vectors WHERE rowid % 997 = 1 LIMIT 100")
        vectors = np.vstack([np.frombuffer(blob, dtype=np.float32) for (blob,) in stored_rows])
        store.expect_many_searches()
        for query in queries_near(vectors, 500, seed=13):
            store.nearest(query, 10)
        status_mb = store.vector_search_status()["memory_bytes"] // 1_000_000
        status = dict(line.split(":", 1) for line in Path("/proc/self/status").read_text().splitlines())
    kilobytes = {key: int(status[key].split()[0]) for key in ("VmRSS", "VmHWM")}
    print(
        json.dumps(
            {
                "resident_mb": kilobytes["VmRSS"] // 1000,
                "peak_mb": kilobytes["VmHWM"] // 1000,
                "status_mb": status_mb,
            }
        )
    )


def cpu_row() -> dict:
    """The CPU's vector instructions, and the kernels usearch picked for them."""
    try:
        flags = set(re.findall(r"\w+", Path("/proc/cpuinfo").read_text().split("flags", 1)[1].split("\n")[0]))
    except (OSError, IndexError):
        flags = set()
    wanted = ("avx2", "fma", "avx512f", "avx512_vnni", "avx_vnni")
    found = " ".join(flag if flag in flags else f"no {flag}" for flag in wanted)
    kernels = sqlite_vectors.new_graph(DIMENSION).hardware_acceleration
    # the rows of a long run are made in pieces: each piece's first row says which command made it
    command = " ".join(["python", "bench/" + Path(sys.argv[0]).name, *sys.argv[1:]])
    return row(
        f"CPU: {found}; {os.cpu_count()} cores; usearch kernels: {kernels}; rows below from `{command}`",
        load(),
        "load average",
    )


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--scifact", type=Path, default=SCIFACT, help="a BEIR-layout SciFact folder")
    parser.add_argument("--sizes", type=int, nargs="*", help="rows of each index (default 100000 1000000)")
    parser.add_argument(
        "--kinds",
        nargs="*",
        choices=KINDS,
        default=KINDS,
        help="vector sets (default all; the once-per-size rows need query, the clustered set)",
    )
    parser.add_argument("--hold", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--first", type=Path, help=argparse.SUPPRESS)
    options = parser.parse_args()
    if options.hold:
        hold(options.hold)
        return 0
    if options.first:
        first(options.first)
        return 0
    sizes = options.sizes or ([20_000] if options.quick else [100_000, 1_000_000])
    rows = [cpu_row()]
    for count in sizes:
        queries = None
        for label, name, vectors, kind_queries in cases(count, options.quick, options.scifact, options.kinds):
            if name in options.kinds:
                rows.extend(measure(label, name, vectors, kind_queries))
            queries = kind_queries if queries is None else queries
        if "query" in options.kinds:
            rows.extend(once_per_size(count, queries))
    if "query" in options.kinds:
        rows.extend(memory_rows(sizes[-1]))
    print_rows(rows, options.json)
    return 0


if __name__ == "__main__":
    sys.exit(main())
