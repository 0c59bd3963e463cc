"""A build of a real folder with the model's own tokenizer and instant vectors: what goes in and how
long the pipeline takes, for the closing figures of issue 13 (files and chunks indexed, what was left
out, time per build, and a seeded sample of chunks to read).

The tokenizer is the embedded model's, so chunks are cut where a real build cuts them; the vectors are
instant (bench/instant.py), so the time is the pipeline's own (a real model embeds ~50 chunks/s).

Usage:
    python bench/bench_real_folder.py FOLDER [--repeats 3] [--sample 50] [--db PATH] [--json]

Runs with whichever ``indexer`` is importable first (set PYTHONPATH to measure another checkout).
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

import numpy as np
from instant import DIMENSION, instant_vectors

from indexer import EmbeddingBackend, Index
from indexer.backends.embedded import EmbeddedBackend


class TokenizerInstantBackend(EmbeddingBackend):
    """The embedded model's tokenizer and input limit, with instant vectors."""

    kind = "bench-instant"
    model_name = "instant-minilm-tokens"

    def __init__(self) -> None:
        self.model = EmbeddedBackend()
        self.max_tokens = self.model.max_tokens

    @property
    def dimension(self) -> int:
        return DIMENSION

    def count_tokens(self, texts: list[str]) -> list[int]:
        return self.model.count_tokens(texts)

    def embed(self, texts: list[str]) -> np.ndarray:
        return instant_vectors(texts)

    def describe(self) -> dict[str, object]:
        return {"backend": self.kind, "model": self.model_name, "dimension": DIMENSION}


def build_once(folder: Path, db: Path, backend: EmbeddingBackend) -> tuple[float, object]:
    for suffix in ("", "-wal", "-shm", ".lock"):
        Path(f"{db}{suffix}").unlink(missing_ok=True)
    started = time.perf_counter()
    with Index.open(db, backend=backend) as index:
        report = index.build(folder, warn=lambda message: None)
    return time.perf_counter() - started, report


def sample_chunks(db: Path, count: int, seed: int = 13) -> list[dict[str, object]]:
    import apsw

    connection = apsw.Connection(str(db), flags=apsw.SQLITE_OPEN_READONLY)
    rows = list(
        connection.execute(
            "SELECT f.path, c.start_line, c.end_line, c.heading, c.text FROM chunks c "
            "JOIN files f ON f.id = c.file_id ORDER BY c.id"
        )
    )
    picked = random.Random(seed).sample(rows, min(count, len(rows)))
    return [
        {"path": p, "lines": f"{s}-{e}", "heading": h, "text": " ".join(t.split())[:160]}
        for p, s, e, h, t in picked
    ]


def indexed_files(db: Path) -> tuple[int, int, Counter]:
    import apsw

    connection = apsw.Connection(str(db), flags=apsw.SQLITE_OPEN_READONLY)
    files = connection.execute("SELECT count(*) FROM files WHERE status = 'indexed'").fetchall()[0][0]
    chunks = connection.execute("SELECT count(*) FROM chunks").fetchall()[0][0]
    tops = Counter(
        path.split("/")[0] if "/" in path else "."
        for (path,) in connection.execute("SELECT f.path FROM chunks c JOIN files f ON f.id = c.file_id")
    )
    return files, chunks, tops


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", type=Path)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--sample", type=int, default=0)
    parser.add_argument("--db", type=Path, default=None)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    db = args.db or Path(tempfile.mkdtemp(prefix="real-folder-")) / "index.db"
    backend = TokenizerInstantBackend()
    times = []
    for _ in range(args.repeats):
        seconds, report = build_once(args.folder, db, backend)
        times.append(seconds)
    files, chunks, tops = indexed_files(db)
    result = {
        "folder": str(args.folder),
        "files_indexed": files,
        "chunks": chunks,
        "chunks_by_top_folder": dict(tops.most_common(12)),
        "seconds_best": min(times),
        "seconds": times,
        "summary": report.summary(),
        "db": str(db),
    }
    if args.sample:
        result["sample"] = sample_chunks(db, args.sample)
    json.dump(result, sys.stdout, indent=None if args.json else 2, ensure_ascii=False)
    print()


if __name__ == "__main__":
    main()
