"""A user's own retrieval checks, run against an index they already have: questions, and the files
(or the lines, or the pages) that should come back. ``index eval --fixture questions.jsonl`` scores
them, query by query, and can fail a CI job when recall or nDCG falls under a floor.

Each line of a fixture file is ``{"query": "...", "expected": ["path", "path:12-30", "doc.pdf:page 3"]}``:
an expected item is a path relative to its folder, alone (any chunk of the file counts), with a line
range (a chunk whose lines overlap it counts), or with a page, cell or paragraph locator.
"""

from __future__ import annotations

import json
import os
import statistics
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from indexer.api import Index
from indexer.citations import Span, parse_citation
from indexer.errors import ConfigError
from indexer.eval.metrics import mrr_at, ndcg_at, recall_at
from indexer.progress import Progress
from indexer.request import MODES
from indexer.search.copies import shown_places
from indexer.search.hit import Hit

#: How many hits a check reads per question (recall@10, nDCG@10, MRR@10).
DEPTH = 10


@dataclass(frozen=True)
class Expected:
    """One item a question should find: a file, lines of it, or a page (cell, paragraph) of it,
    written as a citation (:mod:`indexer.citations`)."""

    path: str
    span: Span = Span()

    @classmethod
    def parse(cls, text: str) -> Expected:
        path, span = parse_citation(text)[0]
        return cls(path, span)

    def found_by(self, hit: Hit) -> bool:
        if hit.path != self.path:
            return False
        if self.span.kind:
            return self.span.overlaps_parts(hit.locator)
        if self.span.first is not None:
            return self.span.overlaps_lines(hit.start_line, hit.end_line)
        return True


@dataclass(frozen=True)
class Check:
    query: str
    expected: tuple[Expected, ...]


def load_checks(path: str | os.PathLike[str]) -> list[Check]:
    """The questions of a fixture file, or :class:`ConfigError` naming the line at fault."""
    checks = []
    for number, line in enumerate(Path(path).read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as error:
            raise ConfigError(f"{path} line {number}: not JSON ({error.msg})") from error
        query, expected = (
            (record.get("query"), record.get("expected")) if isinstance(record, dict) else (None, None)
        )
        if not isinstance(query, str) or not query.strip():
            raise ConfigError(f'{path} line {number}: needs a "query" string')
        if (
            not isinstance(expected, list)
            or not expected
            or not all(isinstance(item, str) for item in expected)
        ):
            raise ConfigError(f'{path} line {number}: needs an "expected" list of paths')
        checks.append(Check(query, tuple(Expected.parse(item) for item in expected)))
    if not checks:
        raise ConfigError(f"{path} holds no questions")
    return checks


def score(hits: Sequence[Hit], expected: Sequence[Expected]) -> dict[str, Any]:
    """One question's rank of its first expected item, recall@10, nDCG@10 (binary gains) and MRR@10.
    A hit's copies (the same text in other files, :mod:`indexer.search.copies`) are ranked right
    after it, in the order a reader meets them."""
    ranked = []  # per rank, the expected item its place was first to find, or a key of no item
    places = [place for hit in hits[:DEPTH] for place in shown_places(hit)]
    for rank, place in enumerate(places[:DEPTH], 1):
        found = (str(p) for p, item in enumerate(expected) if str(p) not in ranked and item.found_by(place))
        ranked.append(next(found, f"miss at {rank}"))
    relevant = {str(position): 1 for position in range(len(expected))}
    first = next((rank for rank, key in enumerate(ranked, 1) if key in relevant), None)
    return {
        "first_relevant_rank": first,
        "recall@10": round(recall_at(ranked, relevant, DEPTH), 4),
        "ndcg@10": round(ndcg_at(ranked, relevant, DEPTH), 4),
        "mrr@10": round(mrr_at(ranked, relevant, DEPTH), 4),
        "top": [hit.citation for hit in hits[:3]],
    }


def run_checks(
    index: Index, checks: Sequence[Check], modes: Sequence[str] = MODES, progress: Progress | None = None
) -> dict[str, dict[str, Any]]:
    """Every question in each mode: mean recall@10, nDCG@10, MRR@10, the median time, and each
    question's own result under ``"queries"``."""
    results: dict[str, dict[str, Any]] = {}
    for mode in modes:
        rows, timings = [], []
        if progress is not None:
            progress.start(f"checking {mode} search", "questions")
        for number, check in enumerate(checks, 1):
            started = time.perf_counter()
            hits = index.search(check.query, k=DEPTH, mode=mode)
            timings.append(time.perf_counter() - started)
            rows.append({"query": check.query, **score(hits, check.expected)})
            if progress is not None:
                progress.update(number, len(checks))
        results[mode] = {
            name: round(statistics.fmean(row[name] for row in rows), 4)
            for name in ("recall@10", "ndcg@10", "mrr@10")
        }
        results[mode]["median_ms"] = round(statistics.median(timings) * 1000, 2)
        results[mode]["queries"] = rows
    if progress is not None:
        progress.finish()
    return results


def unmet(results: dict[str, dict[str, Any]], floors: dict[str, float | None]) -> list[str]:
    """``recall@10 0.82 < 0.90 (hybrid)`` for each floor a mode misses."""
    return [
        f"{name} {scores[name]:.4f} < {floor} ({mode})"
        for mode, scores in results.items()
        for name, floor in floors.items()
        if floor is not None and name in scores and scores[name] < floor
    ]
