"""A user's own retrieval checks, run against an index they already have: questions, and the files
(or the lines, or the pages) that should come back. ``index eval --fixture questions.jsonl`` scores
them, query by query, and can fail a CI job when recall or nDCG falls under a floor.

Each line of a fixture file is ``{"query": "...", "expected": ["path", "path:12-30", "doc.pdf:page 3"]}``:
an expected item is a path relative to its folder, alone (any chunk of the file counts), with a line
range (a chunk whose lines overlap it counts), or with a page, cell or paragraph locator.
"""

from __future__ import annotations

import json
import math
import os
import re
import statistics
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from indexer.api import Index
from indexer.errors import ConfigError
from indexer.progress import Progress
from indexer.search import MODES, Hit

#: How many hits a check reads per question (recall@10, nDCG@10, MRR@10).
DEPTH = 10
_LINES = re.compile(r"^(?P<path>.+):(?P<start>\d+)(?:-(?P<end>\d+))?$")
_LOCATOR = re.compile(r"^(?P<path>.+):(?P<locator>(?:page|pages|cell|cells|paragraph|paragraphs) [\d-]+)$")


@dataclass(frozen=True)
class Expected:
    """One item a question should find: a file, lines of it, or a page (cell, paragraph) of it."""

    path: str
    start: int | None = None
    end: int | None = None
    locator: str | None = None

    @classmethod
    def parse(cls, text: str) -> Expected:
        if match := _LOCATOR.match(text):
            return cls(match["path"], locator=match["locator"])
        if match := _LINES.match(text):
            start = int(match["start"])
            return cls(match["path"], start, int(match["end"] or start))
        return cls(text)

    def found_by(self, hit: Hit) -> bool:
        if hit.path != self.path:
            return False
        if self.locator is not None:
            same_kind = _kind(hit.locator) == _kind(self.locator)
            return same_kind and bool(_numbers(hit.locator) & _numbers(self.locator))
        if self.start is not None:
            return hit.start_line <= self.end and self.start <= hit.end_line
        return True


def _kind(locator: str) -> str:
    """``pages 3-4`` -> ``page``; '' for a chunk cited by lines."""
    return locator.split()[0].removesuffix("s") if locator else ""


def _numbers(locator: str) -> set[int]:
    """``pages 3-5`` -> {3, 4, 5}."""
    found = re.findall(r"\d+", locator)
    if not found:
        return set()
    return set(range(int(found[0]), int(found[-1]) + 1))


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
    """One question's rank of its first expected item, recall@10, nDCG@10 (binary gains) and MRR@10."""
    found_at: dict[int, int] = {}  # expected item -> the rank that first found it
    for rank, hit in enumerate(hits[:DEPTH], 1):
        for position, item in enumerate(expected):
            if position not in found_at and item.found_by(hit):
                found_at[position] = rank
                break
    ranks = sorted(found_at.values())
    dcg = sum(1 / math.log2(rank + 1) for rank in ranks)
    ideal = sum(1 / math.log2(rank + 1) for rank in range(1, min(len(expected), DEPTH) + 1))
    return {
        "first_relevant_rank": ranks[0] if ranks else None,
        "recall@10": round(len(ranks) / len(expected), 4),
        "ndcg@10": round(dcg / ideal, 4),
        "mrr@10": round(1 / ranks[0], 4) if ranks else 0.0,
        "top": [hit.citation for hit in hits[:3]],
    }


def run_checks(
    index: Index, checks: Sequence[Check], modes: Sequence[str] = MODES, progress: Progress | None = None
) -> dict[str, dict[str, Any]]:
    """Every question in each mode: mean recall@10, nDCG@10, MRR@10, the median time, and each
    question's own result under ``"queries"``."""
    results = {}
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
