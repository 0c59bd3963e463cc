"""What indexing Chinese, Japanese and Korean runs as pairs of characters costs (issue 37), against
another checkout in the same run: a folder's build time and index size, the keyword index's share of
it, the time this checkout's next build takes to bring the other checkout's index up to date
(migration 0008), and the latency of Latin-script keyword queries.

Builds use the embedded model's tokenizer with instant vectors (bench_real_folder's backend), so the
time is the pipeline's and the store's own, not the model's. Each measurement runs in a subprocess
with one checkout's ``indexer`` first on the path, the two checkouts taking turns in every repeat.

Usage:
    python bench/studies/bench_scripts.py FOLDER --reference CHECKOUT [--queries FILE] [--repeats 3]
        [--postgres URL] [--json]

``--queries``: one Latin-script query per line (default: a few written for Vue's English docs).
``--postgres URL``: a server on which to measure the same on PostgreSQL (two databases are created).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import bench_folder  # noqa: F401  (bench/ on sys.path: support/ and the suite's scripts)

#: Keyword queries in English for the latency figure (any Latin-script words do).
LATIN_QUERIES = [
    "computed property caching",
    "v-model modifiers",
    "KeepAlive max",
    "defineProps",
    "provide inject",
    "teleport to body",
    "watchEffect cleanup",
    "hydration mismatch",
    "custom directive hooks",
    "async components loading state",
    "v-if v-show",
    "list rendering key",
    "event modifiers",
    "slot props",
    "reactive ref unwrapping",
    "server side rendering",
    "TypeScript props",
    "lifecycle hooks onMounted",
    "transition classes",
    "pinia store",
]


# -- the worker: one measurement with whichever indexer is importable first ------------------------


def worker_build(folder: Path, location: str) -> dict[str, object]:
    from support.tokenizer_instant import TokenizerInstantBackend

    from indexer import Index

    if not location.startswith("postgresql:"):
        for suffix in ("", "-wal", "-shm", ".lock"):
            Path(location + suffix).unlink(missing_ok=True)
    backend = TokenizerInstantBackend()
    started, cpu_started = time.perf_counter(), process_cpu_seconds()
    with Index.open(location, backend=backend) as index:
        report = index.build(folder, warn=lambda message: None)
        seconds = time.perf_counter() - started
        cpu_seconds = process_cpu_seconds() - cpu_started
        size = index.store.size_bytes()
    return {
        "seconds": seconds,
        # every thread of the build (on SQLite, the store's work too), not stretched by other processes
        "cpu_seconds": cpu_seconds,
        "index_bytes": size,
        "keyword_bytes": keyword_bytes(location),
        "report": report.summary(),
    }


def process_cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def keyword_bytes(location: str) -> int:
    """The keyword index's size: FTS5's tables, or the tsvector column with its GIN index."""
    if location.startswith("postgresql:"):
        import psycopg

        with psycopg.connect(location) as connection:
            column = connection.execute("SELECT coalesce(sum(pg_column_size(search_text)), 0) FROM chunks")
            gin = connection.execute("SELECT pg_relation_size('chunks_search_text')")
            return int(column.fetchone()[0]) + int(gin.fetchone()[0])
    import apsw

    database = apsw.Connection(location, flags=apsw.SQLITE_OPEN_READONLY)
    rows = database.execute("SELECT coalesce(sum(pgsize), 0) FROM dbstat WHERE name LIKE 'chunks_fts%'")
    return int(rows.fetchall()[0][0])


def worker_upgrade(folder: Path, location: str) -> dict[str, object]:
    """Open another version's index as a build does (applying the migrations it lacks), then build the
    unchanged folder: the two steps of the next build."""
    from support.tokenizer_instant import TokenizerInstantBackend

    from indexer import Index

    started = time.perf_counter()
    with Index.open(location, backend=TokenizerInstantBackend()) as index:
        opened = time.perf_counter() - started
        report = index.build(folder, warn=lambda message: None)
        applied = index.store.applied_migrations()[-1]
    return {
        "migrate_seconds": opened,
        "build_seconds": time.perf_counter() - started - opened,
        "last_migration": applied,
        "report": report.summary(),
        "keyword_bytes": keyword_bytes(location),
    }


def worker_queries(location: str, queries: list[str], rounds: int) -> dict[str, object]:
    from indexer import Index

    with Index.open(location, create=False) as index:
        hits = {  # and warms: the first search of a process reads the model's record, pages
            query: [
                [hit.path, hit.start_line, hit.end_line, hit.keyword_score]
                for hit in index.search(query, k=10, mode="keyword", min_score=0)
            ]
            for query in queries
        }
        times, cpu_times = [], []
        for _ in range(rounds):
            for query in queries:
                started, cpu_started = time.perf_counter(), time.thread_time()
                index.search(query, k=10, mode="keyword", min_score=0)
                times.append(time.perf_counter() - started)
                cpu_times.append(time.thread_time() - cpu_started)
    return {
        "median_ms": 1000 * statistics.median(times),
        # the CPU time a search takes, which other processes on a shared machine do not stretch
        "cpu_mean_ms": 1000 * statistics.fmean(cpu_times),
        "hits": hits,
    }


def worker(args: argparse.Namespace) -> None:
    queries = json.loads(args.worker_queries) if args.worker_queries else []
    if args.worker == "build":
        result = worker_build(args.folder, args.location)
    elif args.worker == "upgrade":
        result = worker_upgrade(args.folder, args.location)
    else:
        result = worker_queries(args.location, queries, args.rounds)
    result["indexer"] = str(Path(sys.modules["indexer"].__file__).parent.parent)
    print(json.dumps(result))


# -- the driver ------------------------------------------------------------------------------------


def run(checkout: Path | None, *arguments: str) -> dict[str, object]:
    """One worker in a subprocess, with ``checkout``'s indexer first on the path (None: this one)."""
    environment = dict(os.environ)
    if checkout is not None:
        environment["PYTHONPATH"] = str(checkout)
    done = subprocess.run(
        [sys.executable, __file__, *arguments], capture_output=True, text=True, env=environment, check=False
    )
    if done.returncode != 0:
        raise SystemExit(f"a worker failed ({' '.join(arguments[:4])}): {done.stderr.strip()[-1500:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def new_postgres_database(server_url: str, name: str) -> str:
    import psycopg

    with psycopg.connect(server_url, autocommit=True) as admin:
        admin.execute(f"DROP DATABASE IF EXISTS {name}")
        admin.execute(f"CREATE DATABASE {name}")
    return server_url.replace("/postgres?", f"/{name}?")


def measure(args: argparse.Namespace) -> dict[str, list[dict[str, object]]]:
    workspace = Path(tempfile.mkdtemp(prefix="bench-scripts-"))
    checkouts = {"reference": args.reference, "this": None}
    queries = json.dumps(read_queries(args.queries))
    figures: dict[str, list[dict[str, object]]] = {}
    for repeat in range(args.repeats):
        order = list(checkouts.items()) if repeat % 2 == 0 else list(checkouts.items())[::-1]
        for name, checkout in order:
            db = str(workspace / f"{name}.db")
            figures.setdefault(f"{name} build", []).append(
                run(checkout, "--worker", "build", str(args.folder), db)
            )
            figures.setdefault(f"{name} queries", []).append(
                run(checkout, "--worker", "queries", str(args.folder), db, "--worker-queries", queries,
                    "--rounds", str(args.rounds))
            )  # fmt: skip
        # the next build of the reference's index: by the reference (nothing to migrate), and by this
        # checkout (migrating), each on a copy with its vector graph, so that none is made again
        for name, checkout in order:
            copy = workspace / f"next-{name}.db"
            for path in workspace.glob("reference.db*"):
                shutil.copyfile(path, str(copy) + path.name.removeprefix("reference.db"))
            figures.setdefault(f"{name} next build", []).append(
                run(checkout, "--worker", "upgrade", str(args.folder), str(copy))
            )
    if args.postgres:
        for name, checkout in checkouts.items():
            url = new_postgres_database(args.postgres, f"bench_scripts_{name}")
            figures[f"{name} postgres build"] = [run(checkout, "--worker", "build", str(args.folder), url)]
        reference_url = args.postgres.replace("/postgres?", "/bench_scripts_reference?")
        figures["this postgres next build"] = [
            run(None, "--worker", "upgrade", str(args.folder), reference_url)
        ]
    shutil.rmtree(workspace)
    return figures


def read_queries(path: Path | None) -> list[str]:
    if path is None:
        return LATIN_QUERIES
    return [line.strip() for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def best(runs: list[dict[str, object]], name: str) -> float:
    return min(float(one[name]) for one in runs)  # type: ignore[arg-type]


def table(figures: dict[str, list[dict[str, object]]]) -> str:
    """The figures as Markdown: the reference, this checkout, and their ratio (the best of the repeats)."""
    lines = ["| figure | reference | this | ratio |", "|---|---|---|---|"]

    def row(label: str, reference: float, this: float, unit: str = "") -> None:
        lines.append(f"| {label} | {reference:,.3f}{unit} | {this:,.3f}{unit} | {this / reference:.3f} |")

    builds = (figures["reference build"], figures["this build"])
    row("build, instant vectors (s, best)", best(builds[0], "seconds"), best(builds[1], "seconds"))
    row("build, CPU of its process (s, best)", best(builds[0], "cpu_seconds"), best(builds[1], "cpu_seconds"))
    row("index size (MB)", best(builds[0], "index_bytes") / 1e6, best(builds[1], "index_bytes") / 1e6)
    row("keyword index (MB)", best(builds[0], "keyword_bytes") / 1e6, best(builds[1], "keyword_bytes") / 1e6)
    searches = (figures["reference queries"], figures["this queries"])
    row(
        "Latin keyword query, median (ms, best)",
        best(searches[0], "median_ms"),
        best(searches[1], "median_ms"),
    )
    row(
        "Latin keyword query, CPU mean (ms, best)",
        best(searches[0], "cpu_mean_ms"),
        best(searches[1], "cpu_mean_ms"),
    )
    same = [
        query
        for query, hits in searches[1][0]["hits"].items()  # type: ignore[attr-defined]
        if hits == searches[0][0]["hits"][query]  # type: ignore[index]
    ]
    lines.append(
        f"| Latin keyword queries whose 10 hits and scores are the reference's | | {len(same)} of "
        f"{len(searches[1][0]['hits'])} | |"
    )  # type: ignore[arg-type]
    after = (figures["reference next build"], figures["this next build"])
    row(
        "next build of the reference's index: opening it (s, best)",
        best(after[0], "migrate_seconds"),
        best(after[1], "migrate_seconds"),
    )
    row(
        "then the unchanged folder (s, best)",
        best(after[0], "build_seconds"),
        best(after[1], "build_seconds"),
    )
    if "reference postgres build" in figures:
        pg = (figures["reference postgres build"], figures["this postgres build"])
        row("PostgreSQL build (s)", best(pg[0], "seconds"), best(pg[1], "seconds"))
        row("PostgreSQL index size (MB)", best(pg[0], "index_bytes") / 1e6, best(pg[1], "index_bytes") / 1e6)
        row(
            "PostgreSQL keywords (MB)", best(pg[0], "keyword_bytes") / 1e6, best(pg[1], "keyword_bytes") / 1e6
        )
        pg_next = figures["this postgres next build"]
        lines.append(
            f"| PostgreSQL: opening the reference's index (s) | | {best(pg_next, 'migrate_seconds'):.3f} | |"
        )
    lines.append("")
    lines.append(f"builds: {figures['this build'][0]['report']}")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", type=Path)
    parser.add_argument("location", nargs="?", default=None, help=argparse.SUPPRESS)
    parser.add_argument("--reference", type=Path)
    parser.add_argument("--queries", type=Path, default=None)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--rounds", type=int, default=5, help="passes over the queries per measurement")
    parser.add_argument("--postgres", default=None, help="a server URL (its postgres database)")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--worker", choices=["build", "upgrade", "queries"], help=argparse.SUPPRESS)
    parser.add_argument("--worker-queries", default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    args.folder = args.folder.resolve()
    if args.worker:
        worker(args)
        return
    if args.reference is None:
        parser.error("--reference CHECKOUT is needed: every figure is a ratio against it")
    figures = measure(args)
    print(json.dumps(figures) if args.json else table(figures))


if __name__ == "__main__":
    main()
