"""Query latency at scale: the search step of the project's store against numpy exact search.

Unit vectors of dimension 384, stored through the project's own store at 100,000 and 1,000,000 rows,
of three kinds, each with queries that lie near the data as questions lie near their answers:

- clustered: synthetic clusters around random centres (vectors centred on zero);
- offset: the same vectors shifted along one shared direction, as many embedding models' vectors
  all lie in one cone, to a mean cosine of about 0.3 and 0.7 between unrelated vectors;
- real: the chunks of sample_corpus/ and of SciFact embedded by the default model, grown to the size
  by mixing random pairs of them with a little noise; the queries are SciFact's questions and the
  sample corpus's, embedded by the same model.

For each: median and 95th percentile of `SQLiteStore.nearest` (query vector given; vectors searched in
memory, as a process that searches more than once does), recall@10 against exact float32 search,
and numpy exact search over the same float32 vectors in memory, in the same run. Once per size: the
sqlite-vec scan, the time to load the vectors into memory, the index file size; at the largest
size, the memory a searching process holds (a fresh process that loads the vectors and searches).

The real vectors are embedded once (SciFact: about ten minutes) and kept in bench/.cache (delete
bench/.cache/real-vectors.npz to embed again); without SciFact, sample_corpus/ alone is used.

    python bench/bench_query.py [--quick] [--json] [--scifact DIR]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

import numpy as np
from rows import print_rows, row

from indexer.store.sqlite import SQLiteStore

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
MEMORY_TARGET_MB = 1000


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


def real_vectors(scifact: Path) -> tuple[np.ndarray, np.ndarray, str]:
    """Chunk vectors and question vectors from the default model, and what they are made of."""
    saved = CACHE / "real-vectors.npz"
    if not saved.exists():
        CACHE.mkdir(exist_ok=True)
        documents, queries, source = _embed_real(scifact)
        np.savez(saved, documents=documents, queries=queries, source=source)
    with np.load(saved) as arrays:
        return arrays["documents"], arrays["queries"], str(arrays["source"])


def _embed_real(scifact: Path) -> tuple[np.ndarray, np.ndarray, str]:
    """Index sample_corpus/ (and SciFact, as `index eval` writes it) with the ordinary build and the
    default model, then read the chunk vectors back; embed the questions with the same model."""
    from indexer import evaluation
    from indexer.api import Index
    from indexer.backends.embedded import EmbeddedBackend

    folders = {"sample": REPO / "sample_corpus"}
    texts = [case["query"] for case in json.loads((REPO / "tests/fixtures/sample_queries.json").read_text())]
    if (scifact / "corpus.jsonl").exists():
        collection = evaluation.load_collection(scifact, "train")
        evaluation.write_documents(collection, CACHE / "scifact-documents")
        folders["scifact"] = CACHE / "scifact-documents"
        with open(scifact / "queries.jsonl", encoding="utf-8") as lines:
            texts += [json.loads(line)["text"] for line in lines if line.strip()]
    documents = []
    for name, folder in folders.items():
        with Index.open(CACHE / f"real-{name}.db", backend=EmbeddedBackend()) as index:
            index.build(folder, rebuild=True, warn=lambda message: None)
            rows = index.store.db.execute("SELECT embedding FROM chunk_vectors").fetchall()
        documents.append(np.vstack([np.frombuffer(row[0], dtype=np.float32) for row in rows]))
    backend = EmbeddedBackend()
    queries = np.vstack([backend.embed(texts[i : i + 64]) for i in range(0, len(texts), 64)])
    source = " + ".join("SciFact" if name == "scifact" else "sample_corpus" for name in folders)
    return np.vstack(documents), queries.astype(np.float32), source


def stored(count: int, vectors: np.ndarray, name: str = "query") -> Path:
    """An index file holding the vectors (built once, kept in bench/.cache while they stay the same)."""
    CACHE.mkdir(exist_ok=True)
    path = CACHE / f"{name}-{count}.db"
    digest = hashlib.sha256(vectors[:: max(1, count // 1000)].tobytes()).hexdigest()
    if path.exists():
        with SQLiteStore.open(path, writable=True) as store:  # migrates a copy an older version made
            if store.get_meta("bench_vectors") == digest:
                return path
        for suffix in ("", "-wal", "-shm"):
            Path(str(path) + suffix).unlink(missing_ok=True)
    with SQLiteStore.open(path, writable=True, create=True) as store:
        with store.transaction():
            store.create_vector_table(DIMENSION)
            store.db.executemany(
                "INSERT INTO chunk_vectors (rowid, embedding) VALUES (?, ?)",
                ((row + 1, vectors[row].tobytes()) for row in range(count)),
            )
            store.set_meta({"bench_vectors": digest})
        store.db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    return path


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


def cases(count: int, quick: bool, scifact: Path) -> Iterator[tuple[str, str, np.ndarray, np.ndarray]]:
    """(label, cache name, vectors, queries) of each kind of vectors at this size, one at a time (a
    million float32 vectors take 1.5 GB)."""
    query_count = 20 if quick else 100
    clustered = synthetic(count)
    yield "clustered", "query", clustered, queries_near(clustered, query_count)
    for cosine in (0.7,) if quick else (0.3, 0.7):
        shifted = with_offset(clustered, cosine)
        label = f"offset, mean cos {mean_cosine(shifted):.2f}"
        yield label, f"offset{round(cosine * 100)}", shifted, queries_near(shifted, query_count)
    del clustered, shifted
    if quick and not (CACHE / "real-vectors.npz").exists():
        return  # embedding them takes minutes: not for a smoke run
    documents, questions, source = real_vectors(scifact)
    vectors = grown(documents, count)
    picked = np.random.default_rng(7).choice(len(questions), min(query_count, len(questions)), replace=False)
    yield (
        f"real ({source} chunks, mixed; mean cos {mean_cosine(vectors):.2f})",
        "real",
        vectors,
        questions[picked],
    )


def measure(label: str, name: str, vectors: np.ndarray, queries: np.ndarray, first: bool) -> list[dict]:
    """Rows for one kind of vectors at one size; the first kind also gets the rows measured once per size."""
    count = len(vectors)
    path = stored(count, vectors, name)
    with SQLiteStore.open(path) as store:
        store.expect_many_searches()
        started = time.perf_counter()
        store.nearest(queries[0], 10)
        load_seconds = time.perf_counter() - started
        ours_times = timed(lambda q: store.nearest(q, 10), queries)
        found = [{chunk_id - 1 for chunk_id, _ in store.nearest(q, 10)} for q in queries]
    with SQLiteStore.open(path) as scanner:  # a one-off query's process: sqlite-vec's scan, nothing in memory
        scan_times = timed(lambda q: scanner.nearest(q, 10), queries[: min(5, len(queries))] if first else [])

    def numpy_exact(query: np.ndarray) -> np.ndarray:
        scores = vectors @ query
        top = np.argpartition(-scores, 9)[:10]
        return top[np.argsort(-scores[top])]

    numpy_times = timed(numpy_exact, queries)
    truth = [set(numpy_exact(query).tolist()) for query in queries]
    recall = float(np.mean([len(f & t) / 10 for f, t in zip(found, truth, strict=True)]))
    ours, reference = statistics.median(ours_times), statistics.median(numpy_times)
    size = f"{count:,} x {DIMENSION}"
    small = count < 1_000_000
    rows = [
        row(
            f"search median ms, {size}, {label} (ref: numpy exact)",
            round(ours, 2),
            round(reference, 2),
            round(ours / reference, 2),
            target="<= 1.0 (no slower than numpy)" if small else "<= 30 ms",
            passed=ours <= reference if small else ours <= 30,
        ),
        row(
            f"search p95 ms, {size}, {label}",
            round(float(np.percentile(ours_times, 95)), 2),
            round(float(np.percentile(numpy_times, 95)), 2),
        ),
        row(
            f"recall@10, {size}, {label}",
            round(recall, 4),
            1.0,
            round(recall, 4),
            target=">= 0.97",
            passed=recall >= 0.97,
        ),
    ]
    if first:
        scan = statistics.median(scan_times)
        rows += [
            row(
                f"sqlite-vec scan median ms, {size} (first query of a process)",
                round(scan, 1),
                round(reference, 2),
                round(scan / reference, 2),
            ),
            row(f"load vectors into memory s, {size} (once per process)", round(load_seconds, 2)),
            row(f"index file MB per million chunks ({size})", round(os.path.getsize(path) / count, 0)),
        ]
    return rows


def memory_rows(count: int) -> list[dict]:
    """What a fresh process holds once it has loaded the vectors and searched (resident set, and its
    peak while loading), against the float32 vectors alone."""
    path = CACHE / f"query-{count}.db"
    result = subprocess.run(
        [sys.executable, __file__, "--hold", str(path)], capture_output=True, text=True, check=True
    )
    held = json.loads(result.stdout)
    float32_mb = round(count * DIMENSION * 4 / 1e6)
    size = f"{count:,} x {DIMENSION}"
    return [
        row(
            f"memory of a searching process MB, {size} (resident; ref: the float32 vectors alone)",
            held["resident_mb"],
            float32_mb,
            round(held["resident_mb"] / float32_mb, 2),
            target=f"< {MEMORY_TARGET_MB} MB",
            passed=held["resident_mb"] < MEMORY_TARGET_MB,
        ),
        row(f"memory of a searching process MB, {size}, peak while loading", held["peak_mb"], float32_mb),
    ]


def hold(path: Path) -> None:
    """(--hold) Load the vectors of ``path``, search 20 times, print what this process holds."""
    with SQLiteStore.open(path) as store:
        queries = [
            np.frombuffer(r[0], dtype=np.float32)
            for r in store.db.execute("SELECT embedding FROM chunk_vectors LIMIT 20")
        ]
        store.expect_many_searches()
        for query in queries:
            store.nearest(query, 10)
        status = dict(line.split(":", 1) for line in Path("/proc/self/status").read_text().splitlines())
    kilobytes = {key: int(status[key].split()[0]) for key in ("VmRSS", "VmHWM")}
    print(json.dumps({"resident_mb": kilobytes["VmRSS"] // 1000, "peak_mb": kilobytes["VmHWM"] // 1000}))


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--scifact", type=Path, default=SCIFACT, help="a BEIR-layout SciFact folder")
    parser.add_argument("--hold", type=Path, help=argparse.SUPPRESS)
    options = parser.parse_args()
    if options.hold:
        hold(options.hold)
        return 0
    sizes = [60_000] if options.quick else [100_000, 1_000_000]
    rows = []
    for count in sizes:
        kinds = cases(count, options.quick, options.scifact)
        for position, (label, name, vectors, queries) in enumerate(kinds):
            rows.extend(measure(label, name, vectors, queries, first=position == 0))
    rows.extend(memory_rows(sizes[-1]))
    print_rows(rows, options.json)
    return 0


if __name__ == "__main__":
    sys.exit(main())
