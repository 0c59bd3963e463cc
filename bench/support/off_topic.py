"""The off-topic questions (bench/data/off-topic.jsonl), less those on a subject a collection
covers: such a question may have its answer there, so "no results" is not what it must get
(bench/data/README.md, "Off-topic questions")."""

from __future__ import annotations

import json
from pathlib import Path

QUESTIONS = Path(__file__).resolve().parents[1] / "data" / "off-topic.jsonl"
#: The topics of off-topic.jsonl that each collection covers, by what its documents are about.
COVERED_TOPICS = {
    "scifact": {"cooking", "health"},  # biomedical abstracts: food, health and the human body
    "sample": {"cooking", "health", "home", "money", "sky"},  # notes on recipes, first aid, home,
    # finance and astronomy (the Moon's phases, light pollution, telescopes)
    "vaswani": {"sky"},  # physics abstracts: the Moon and planets, the sky's light and the ionosphere
}


def off_topic_rows(collection: str) -> list[dict]:
    """The rows of off-topic.jsonl that are off-topic for ``collection`` (a set's name)."""
    covered = COVERED_TOPICS.get(collection, set())
    with open(QUESTIONS, encoding="utf-8") as lines:
        rows = [json.loads(line) for line in lines if line.strip()]
    return [row for row in rows if row["topic"] not in covered]
