"""Study: does a question naming a version find that version's changelog entry first?

For each question of bench/data/changelog-questions.jsonl (written before any search of its folder),
the place of the first hit that is in an expected file and holds the asked version's entry (its
heading path holds the version, or a line of its text opens with it: a Markdown heading, a reST
title, ``Version 2.3.0``),
in each mode, unthresholded and at the mode's default threshold; and how many questions have it
first each way. The folders are
``$VERSION_DATA/<set>`` (bench/data/README.md says what each holds); each is indexed once with the
default model under ``$VERSION_CACHE``. Run it with main's code and a branch's
(``PYTHONPATH=<checkout>``) on the same indexes to compare:

    VERSION_DATA=<folders> VERSION_CACHE=<scratch> python bench/studies/version_entries.py
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

from indexer import Index
from indexer.request import MODES

QUESTIONS = Path(__file__).resolve().parents[1] / "data" / "changelog-questions.jsonl"


def entry_place(index: Index, question: dict, mode: str, min_score: float | None = 0) -> int | None:
    """The place (1 for the first) of the first hit of ``question``'s version entry among the hits
    scoring at least ``min_score`` (None: the mode's default threshold), else None."""
    version = re.compile(r"(?<![\d.])" + re.escape(question["version"]) + r"(?!\d)")
    prefix = r"^[ \t]*(?:#{1,6} )?(?:[a-z][\w.-]* )?(?:v|version )?\[?"  # a title, a project's name, ``[``
    opening = re.compile(prefix + re.escape(question["version"]) + r"(?![\d.])", re.I | re.M)
    hits = index.search(question["query"], k=10, mode=mode, min_score=min_score)
    return next(
        (
            place
            for place, hit in enumerate(hits, 1)
            if hit.path in question["expected"] and (version.search(hit.heading) or opening.search(hit.text))
        ),
        None,
    )


def main() -> None:
    data, cache = Path(os.environ["VERSION_DATA"]), Path(os.environ["VERSION_CACHE"])
    questions = [json.loads(line) for line in QUESTIONS.read_text().splitlines()]
    first, kept = dict.fromkeys(MODES, 0), dict.fromkeys(MODES, 0)
    for name in dict.fromkeys(question["set"] for question in questions):
        with Index.open(cache / f"{name}.db") as index:
            if not index.status().get("chunks"):
                index.build(data / name)
            for question in (one for one in questions if one["set"] == name):
                places = {mode: entry_place(index, question, mode) for mode in MODES}
                held = {mode: entry_place(index, question, mode, None) for mode in MODES}
                first.update({mode: first[mode] + (places[mode] == 1) for mode in MODES})
                kept.update({mode: kept[mode] + (held[mode] == 1) for mode in MODES})
                shown = "  ".join(f"{mode} {places[mode] or '-':>2}/{held[mode] or '-':>2}" for mode in MODES)
                print(f"{name:8} {question['query'][:40]:40} {shown}")
    print("first:", "  ".join(f"{mode} {first[mode]}/{len(questions)}" for mode in MODES))
    held = "  ".join(f"{mode} {kept[mode]}/{len(questions)}" for mode in MODES)
    print("first at the default threshold:", held)


if __name__ == "__main__":
    main()
