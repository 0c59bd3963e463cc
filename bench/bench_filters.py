"""What a filter (`--path`, `--type`, `--root`) costs a search, against the same search unfiltered.

A filter becomes the list of chunk ids it allows, which each search applies inside its scan (so k hits
come back whenever k pass). The list is as long as the index when the filter matches every file, which
is the case measured here, beside a filter matching one folder in four: if applying the list cost per
allowed id, the whole-index case would show it. Instant vectors (bench_pipeline's), so the search is
measured, not the model; the vectors are searched in memory, as a long-lived process does.

    .venv/bin/python bench/bench_filters.py [--quick] [--json]
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

from bench_pipeline import InstantBackend, write_corpus
from support.rows import print_rows, row

from indexer import Index

MODES = ("keyword", "hybrid", "vector")
#: A filter may cost this many times the unfiltered search at most, or this many milliseconds more
#: (reading the ids a filter allows takes a few ms for 20,000 chunks, next to a 1 ms vector search).
TARGET = 2.0
SLACK_MS = 5.0


def questions(index: Index, count: int, seed: int = 5) -> list[str]:
    """Three neighbouring words of random chunks: each question has answers in the index."""
    rng = random.Random(seed)
    texts = [hit.text for hit in index.search("ka to ri me", k=200, mode="keyword", min_score=0)]
    picked = []
    for text in rng.choices(texts, k=count):
        words = [word for word in text.split() if word.isalpha()]
        start = rng.randrange(max(len(words) - 3, 1))
        picked.append(" ".join(words[start : start + 3]))
    return picked


def median_ms(index: Index, asked: list[str], mode: str, paths: list[str]) -> float:
    index.search(
        asked[0], k=10, mode=mode, paths=paths, min_score=0
    )  # the vectors loaded, the statements prepared
    timings = []
    for question in asked:
        started = time.perf_counter()
        index.search(question, k=10, mode=mode, paths=paths, min_score=0)
        timings.append(time.perf_counter() - started)
    return statistics.median(timings) * 1000


def measure(files: int, asked_count: int) -> list[dict[str, object]]:
    rows = []
    with tempfile.TemporaryDirectory(prefix="bench-filters-") as scratch:
        corpus = Path(scratch) / "corpus"
        write_corpus(corpus, files)
        with Index.open(Path(scratch) / "index.db", backend=InstantBackend()) as index:
            index.build(corpus, warn=lambda message: None)
            chunks = index.status()["chunks"]
            asked = questions(index, asked_count)
            for mode in MODES:
                plain = median_ms(index, asked, mode, [])
                for label, paths in (("every file", ["*"]), ("one folder in four", ["part-000/"])):
                    filtered = median_ms(index, asked, mode, paths)
                    ratio = filtered / plain
                    rows.append(
                        row(
                            f"{mode} search, k=10, {chunks:,} chunks, --path matching {label}: "
                            "median ms vs unfiltered",
                            round(filtered, 2),
                            round(plain, 2),
                            round(ratio, 2),
                            target=f"<= {TARGET:g}x unfiltered or + {SLACK_MS:g} ms",
                            passed=ratio <= TARGET or filtered - plain <= SLACK_MS,
                            note="applying the allowed chunk ids costs per id: see the search's plan",
                        )
                    )
    return rows


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="a smaller index, for a CI smoke run")
    parser.add_argument("--json", action="store_true", help="print the rows as JSON for bench/run.py")
    options = parser.parse_args()
    files, asked = (200, 20) if options.quick else (2000, 100)
    print_rows(measure(files, asked), options.json)
    return 0


if __name__ == "__main__":
    sys.exit(main())
