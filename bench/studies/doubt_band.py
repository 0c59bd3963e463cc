"""Which judgments of keyword and vector mode are in doubt: the band of :data:`calibration.DOUBT`
measured against the bands beside it, in one run.

For each question of each collection (``bench_scores``' sets, off-topic questions among them) and
each single-evidence mode, the search is run once and scored twice: with the mode's own judgment of
the whole answer, and with hybrid mode's judgment of the same question (``Found.scored(maps,
judged)``, as ``indexer.search.run.search`` scores it). A band then picks, per question, the second
where the mode's own chance lies inside it. For each band and set: hit@3 of the answering file at
the default threshold against hit@3 of every hit, and the share of off-topic questions answered
"no results"; ``!`` marks a set where item 2 of issue 37 is missed (hit@3 more than 0.05 under, or
under 95% of off-topic questions refused).

    SCORES_DATA=/work/data BEIR_DATA=/work/data/beir SCORES_CACHE=<cache> \\
      python bench/studies/doubt_band.py --sets sample,cacm,fastapi,click [--model bge-small-en-v1.5]
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass

import bench_scores
from bench_scores import Collection, Question

from indexer import Index
from indexer.search.calibration import (
    CALIBRATED_MODEL,
    CALIBRATIONS,
    DEFAULT_MIN_SCORE,
    ModelCalibration,
    logistic,
)
from indexer.search.query import Query
from indexer.search.run import CANDIDATE_DEPTH, NO_FILTER, Found

#: The bands compared, as (lowest, highest) chance of an answer that is in doubt; (0.5, 0.5) asks
#: nothing but a judgment of exactly 0.5, (0, 1) asks hybrid mode every time.
BANDS = ((0.5, 0.5), (0.3, 0.7), (0.25, 0.75), (0.2, 0.8), (0.15, 0.85), (0.1, 0.9), (0.05, 0.95), (0.0, 1.0))
HITS = 10


@dataclass
class Judged:
    """One question in one mode: its own chance of an answer, the files of its first hits, and the
    files kept at the default threshold under its own judgment and under hybrid mode's."""

    chance: float
    files: list[str]
    own: list[str]
    both: list[str]
    expected: set[str]
    off_topic: bool


def kept_files(index: Index, ranked: list[tuple[int, float]]) -> list[str]:
    kept = [chunk_id for chunk_id, score in ranked[:HITS] if score >= DEFAULT_MIN_SCORE]
    chunks = index.store.chunks_by_ids(kept)
    return list(dict.fromkeys(chunks[chunk_id].path for chunk_id in kept))


def judged(index: Index, question: Question, mode: str, maps: ModelCalibration) -> Judged:
    store, query = index.store, Query.parse(question.text)
    off_topic = question.kind == "off-topic"
    backend = None if mode == "keyword" else index.backend
    found = Found.search(store, backend, query, CANDIDATE_DEPTH, mode, NO_FILTER)
    if not found.order:
        return Judged(0.0, [], [], [], question.expected, off_topic)
    both = Found.search(store, index.backend, query, CANDIDATE_DEPTH, "hybrid", NO_FILTER)
    own = found.scored(maps)
    chunks = store.chunks_by_ids(found.order[:HITS])
    files = list(dict.fromkeys(chunks[chunk_id].path for chunk_id in found.order[:HITS]))
    chance = logistic(maps.of(mode).judged(found.evidence()))
    lookup = bool(found.looked_up)  # the product never asks for a lookup: its floors answer it
    hybrid = own if lookup or not both.order else found.scored(maps, maps.hybrid.judged(both.evidence()))
    own_kept, hybrid_kept = kept_files(index, own), kept_files(index, hybrid)
    return Judged(chance, files, own_kept, hybrid_kept, question.expected, off_topic)


def measure(collection: Collection, model: str | None) -> dict[str, list[Judged]]:
    """Each mode's :class:`Judged` of every question of ``collection``."""
    maps = CALIBRATIONS[model or CALIBRATED_MODEL]
    with bench_scores.opened(collection, model) as index:
        index.store.expect_many_searches()
        return {
            mode: [judged(index, question, mode, maps) for question in collection.questions]
            for mode in ("keyword", "vector")
        }


def row(band: tuple[float, float], answers: list[Judged]) -> str:
    low, high = band
    real = [one for one in answers if not one.off_topic]
    off_topic = [one for one in answers if one.off_topic]

    def kept(one: Judged) -> list[str]:
        return one.both if low <= one.chance <= high else one.own

    every = sum(bool(one.expected & set(one.files[:3])) for one in real) / len(real)
    at = sum(bool(one.expected & set(kept(one)[:3])) for one in real) / len(real)
    empty = sum(not kept(one) for one in off_topic) / max(len(off_topic), 1)
    missed = "" if every - at <= 0.05 and empty >= 0.95 else "!"
    return f"{at:.3f} of {every:.3f}, {empty:.3f}{missed}"


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--sets", default="sample,cacm,fastapi,click,cobra,starlette,cairo,cranfield")
    parser.add_argument("--model", default=None)
    options = parser.parse_args()
    found, missing = bench_scores.collections(options.sets.split(","))
    if missing:
        print(f"not on this machine: {', '.join(missing)}")
    measured = {collection.name: measure(collection, options.model) for collection in found}
    for mode in ("keyword", "vector"):
        print(f"\n{mode} mode: hit@3 at the threshold of hit@3, off-topic 'no results'\n")
        print("| band | " + " | ".join(measured) + " |")
        print("|---|" + "---|" * len(measured))
        for band in BANDS:
            cells = [row(band, answers[mode]) for answers in measured.values()]
            print(f"| {band[0]:.2f}-{band[1]:.2f} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
