"""Study: a per-index reference for the answer map, measured on the index itself.

The answer map judges whether a question has an answer here from its strongest hit's strength and
its margin over the hit at rank 100. Off-topic questions that share a topic word with a collection
of abstracts outscore real questions on docs folders on both (bench/RESULTS.md, issue 37). This
study adds one feature beside them: the strongest hit's strength less what this index gives
unrelated text, a quantile of the best cosines of everyday probe questions
(bench/data/probe-questions.txt, written for an earlier trial; none of them in the evaluation's
off-topic.jsonl), searched
against the index. It is constant for a question on an index, so it leaves the hit map (whose
scores are differences within one answer) unchanged, and enters the answer map only.

Each question is searched once per mode (vector, hybrid) and every hit's evidence kept, so that
main's maps, a refit of them, and the maps with the reference are scored from the same searches:

    SCORES_DATA=/work/data BEIR_DATA=/work/data/beir SCORES_CACHE=<cache> \\
      python bench/studies/probe_reference.py [--model M] [--sets ...] [--fit-sets ...]
"""

from __future__ import annotations

import argparse
import json
import pickle
import sys
from dataclasses import dataclass, replace
from pathlib import Path

import bench_folder  # noqa: F401  (bench/ on sys.path)
import bench_scores as bs
import numpy as np

from indexer.search import calibration
from indexer.search.calibration import DEFAULT_MIN_SCORE, in_rank_order, logistic, under_named
from indexer.search.evidence import Evidence
from indexer.search.query import Query
from indexer.search.run import CANDIDATE_DEPTH, NO_FILTER, Found

MODES = ("hybrid", "vector")
HELD_OUT = ("scifact", "cacm", "starlette", "fastapi", "click", "gobject", "glib", "prettier")


@dataclass
class Searched:
    """One question searched in one mode: every hit's evidence (the full order), floors, named,
    and the files of the first ``k`` hits."""

    features: np.ndarray  # (hits, 5): strength, gap, margin, known, together
    floors: list[float]
    named: list[bool]
    paths: list[str]  # of the first k hits
    expected: set[str]
    off_topic: bool
    lookup: bool


def probe_questions() -> list[str]:
    lines = (bs.DATA / "probe-questions.txt").read_text(encoding="utf-8").splitlines()
    return [line.strip() for line in lines if line.strip() and not line.startswith("#")]


def references(index, probes: list[str]) -> list[float]:
    """The best cosine each probe question gets on ``index``."""
    best = []
    for text in probes:
        found = Found.search(
            index.store, index.backend, Query.parse(text), CANDIDATE_DEPTH, "vector", NO_FILTER
        )
        best.append(max(found.vector.values(), default=0.0))
    return best


def searched(index, collection: bs.Collection, mode: str) -> list[Searched]:
    out = []
    for question in collection.questions:
        query = Query.parse(question.text)
        found = Found.search(index.store, index.backend, query, CANDIDATE_DEPTH, mode, NO_FILTER)
        if query.phrases and not found.order:
            found = Found.search(
                index.store, index.backend, query.with_phrases_as_words(), CANDIDATE_DEPTH, mode, NO_FILTER
            )
        k = bs.BEIR_HITS if question.kind == "beir" else bs.HITS
        evidence = found.evidence()
        chunks = found.read(index.store, found.order[: max(k, bs.HITS)])
        out.append(
            Searched(
                np.array([(e.strength, e.gap, e.margin, e.known, e.together) for e in evidence]).reshape(
                    -1, 5
                ),
                found.floors(),
                [chunk_id in found.named for chunk_id in found.order],
                [chunks[c].path for c in found.order[: max(k, bs.HITS)] if c in chunks],
                question.expected,
                question.kind == "off-topic",
                len(query.text.split()) == 1,
            )
        )
    return out


@dataclass(frozen=True)
class Maps:
    """A mode's maps, with the weight of the answer map's extra feature: the strongest hit's
    strength less the index's reference."""

    mode: calibration.ModeCalibration
    excess: float = 0.0

    def scores(self, one: Searched, reference: float, k: int) -> list[float]:
        if not len(one.features):
            return []
        evidence = [Evidence(*row) for row in one.features]
        odds = [self.mode.hit.logit(e) for e in evidence]
        strongest = max(range(len(odds)), key=odds.__getitem__)
        judged = self.mode.answer.logit(evidence[strongest])
        judged += self.excess * (evidence[strongest].strength - reference)
        scores = [logistic(judged + own - odds[strongest]) for own in odds]
        return in_rank_order(under_named(scores, one.named), one.floors)


def auc(positives: list[float], negatives: list[float]) -> float:
    return bs.auc(positives, negatives)


def measure(rows: list[Searched], maps: Maps, reference: float, beir: bool) -> dict[str, float]:
    k = bs.BEIR_HITS if beir else bs.HITS
    empty, kept, plain, positives, negatives = [], [], [], [], []
    for one in rows:
        scores = maps.scores(one, reference, k)[: len(one.paths)]
        files = list(dict.fromkeys(one.paths))
        kept_files = list(
            dict.fromkeys(p for p, s in zip(one.paths, scores, strict=False) if s >= DEFAULT_MIN_SCORE)
        )
        for place in range(min(3, len(scores))):
            (positives if one.paths[place] in one.expected else negatives).append(scores[place])
        if one.off_topic:
            empty.append(float(not kept_files))
            continue
        plain.append(float(bool(one.expected & set(files[:3]))))
        kept.append(float(bool(one.expected & set(kept_files[:3]))))
    return {
        "off-topic": float(np.mean(empty)),
        "off-topic answered": int(round(len(empty) - sum(empty))),
        "off-topic n": len(empty),
        "hit@3 kept": float(np.mean(kept)),
        "hit@3": float(np.mean(plain)),
        "AUC": auc(positives, negatives),
    }


DELTAS = np.round(np.arange(-1.5, 1.5001, 0.05), 2)


def window(
    rows: list[Searched], maps: Maps, reference: float, beir: bool
) -> tuple[np.ndarray, np.ndarray, float]:
    """Off-topic "no results" and hit@3 at the threshold for each shift of the answer map's offset
    in :data:`DELTAS`, and unthresholded hit@3 (``beir``: the hits were read as deep as a BEIR
    folder's questions are)."""
    empty, kept, plain = [], [], []
    for one in rows:
        if not len(one.features):
            continue
        evidence = [Evidence(*row) for row in one.features]
        odds = np.array([maps.mode.hit.logit(e) for e in evidence])
        strongest = int(np.argmax(odds))
        judged = maps.mode.answer.logit(evidence[strongest])
        judged += maps.excess * (evidence[strongest].strength - reference)
        factor = np.where(np.array(one.named) | (not any(one.named)), 1.0, calibration.NAMED_PAGE_SCORE)
        scores = (
            1 / (1 + np.exp(-np.clip(judged + odds - odds[strongest] + DELTAS[:, None], -50, 50))) * factor
        )
        scores = np.maximum(scores, np.array(one.floors))
        scores = np.maximum.accumulate(scores[:, ::-1], axis=1)[:, ::-1][:, : len(one.paths)]
        if one.off_topic:
            empty.append(scores[:, 0] < DEFAULT_MIN_SCORE)
            continue
        seen: list[str] = []
        place = None
        for at, path in enumerate(one.paths):
            if path not in seen:
                seen.append(path)
                if len(seen) > 3:
                    break
                if path in one.expected:
                    place = at
                    break
        plain.append(place is not None)
        kept.append(
            scores[:, place] >= DEFAULT_MIN_SCORE if place is not None else np.zeros(len(DELTAS), bool)
        )
    return np.mean(empty, axis=0), np.mean(kept, axis=0), float(np.mean(plain))


def samples(name: str, rows: list[Searched], reference: float) -> list[tuple]:
    """(collection, question, place, features + excess, answers, off_topic, lookup) of each of the
    first ten hits, as bench_scores.gather gives them, with the sixth feature."""
    out = []
    for number, one in enumerate(rows):
        for place, row in enumerate(one.features[: bs.HITS]):
            if place >= len(one.paths):
                break
            features = (*row, row[0] - reference)
            out.append(
                (name, number, place, features, one.paths[place] in one.expected, one.off_topic, one.lookup)
            )
    return out


def positive_fit(x, y, weights, columns):
    kept = list(columns)
    while True:
        fitted = bs.logistic(x[:, kept], y, weights)
        if min(fitted[:-1], default=0.0) >= 0:
            break
        kept.pop(int(np.argmin(fitted[:-1])))
    beta = np.zeros(x.shape[1])
    beta[kept] = fitted[:-1]
    return [round(float(w), 3) for w in beta], round(float(fitted[-1]), 3)


def fit(all_samples: list[tuple], with_excess: bool) -> Maps:
    """bench_scores.fit, with the sixth feature (the excess over the reference) in the answer map."""
    top = [s for s in all_samples if s[2] < 3]
    x = np.array([s[3] for s in top])
    weights, offset = positive_fit(
        x, np.array([float(s[4]) for s in top]), bs.balanced([(s[0], s[5]) for s in top]), [0, 1, 2]
    )
    hit = calibration.Calibration(weights[0], weights[1], weights[2], offset=offset)
    strongest: dict[tuple[str, int], tuple] = {}
    for s in (one for one in all_samples if not one[6]):
        key = (s[0], s[1])
        if key not in strongest or hit(Evidence(*s[3][:5])) > hit(Evidence(*strongest[key][3][:5])):
            strongest[key] = s
    chosen = list(strongest.values())
    x = np.array([s[3] for s in chosen])
    columns = [0, 2, 5] if with_excess else [0, 2]
    weights, offset = positive_fit(
        x, np.array([float(not s[5]) for s in chosen]), bs.balanced([(s[0], s[5]) for s in chosen]), columns
    )
    answer = calibration.Calibration(weights[0], 0.0, weights[2], offset=offset)
    excess = weights[5]
    off = [s for s in chosen if s[5]]
    logits = np.array([answer.logit(Evidence(*s[3][:5])) - offset + excess * s[3][5] for s in off])
    w = bs.balanced([(s[0], True) for s in off])
    order = np.argsort(logits)
    shares = np.cumsum(w[order]) / w.sum()
    cut = float(logits[order][min(int(np.searchsorted(shares, bs.OFF_TOPIC_EMPTY)), len(order) - 1)])
    answer = replace(answer, offset=round(bs.logit_of(DEFAULT_MIN_SCORE) - cut - 1e-3, 3))
    return Maps(calibration.ModeCalibration(answer=answer, hit=hit), excess)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--model", default=None)
    parser.add_argument(
        "--sets",
        default="sample,cairo,cranfield,vaswani,scifact-train,scifact,cacm,starlette,fastapi,click,gobject,glib,prettier",
    )
    parser.add_argument("--fit-sets", default="sample,cairo,cranfield,vaswani,scifact-train")
    parser.add_argument("--quantiles", default="0.5,0.9")
    parser.add_argument("--dump", default=None, help="write every set's references and figures here")
    parser.add_argument(
        "--searches", default=None, help="keep the searches in this pickle (read if it exists)"
    )
    options = parser.parse_args()
    probes = probe_questions()
    quantiles = [float(q) for q in options.quantiles.split(",")]
    rows: dict[str, dict[str, list[Searched]]] = {}
    probe_best: dict[str, list[float]] = {}
    kept = Path(options.searches) if options.searches else None
    if kept and kept.exists():
        rows, probe_best = pickle.loads(kept.read_bytes())
    else:
        found, missing = bs.collections(options.sets.split(","))
        for name in missing:
            print(f"skipped {name}", file=sys.stderr)
        for collection in found:
            with bs.opened(collection, options.model) as index:
                index.store.expect_many_searches()
                probe_best[collection.name] = references(index, probes)
                rows[collection.name] = {mode: searched(index, collection, mode) for mode in MODES}
            print(
                f"{collection.name}: probes' best cosine median {np.median(probe_best[collection.name]):.3f}",
                file=sys.stderr,
                flush=True,
            )
        if kept:
            kept.write_bytes(pickle.dumps((rows, probe_best)))
    name = calibration.CALIBRATED_MODEL if options.model is None else options.model
    main_maps = {mode: Maps(calibration.CALIBRATIONS[name].of(mode)) for mode in MODES}
    fit_sets = options.fit_sets.split(",")
    variants: dict[str, tuple[dict[str, Maps], float | None]] = {"main": (main_maps, None)}
    refs = {q: {c: float(np.quantile(b, q)) for c, b in probe_best.items()} for q in quantiles}
    for mode_with in [False, *quantiles]:
        maps = {}
        for mode in MODES:
            pooled = []
            for c in fit_sets:
                reference = refs[mode_with][c] if mode_with else 0.0
                pooled += samples(c, rows[c][mode], reference)
            maps[mode] = fit(pooled, bool(mode_with))
            print(f"{mode_with or 'refit'} {mode}: {maps[mode]}", file=sys.stderr)
        variants[f"q{mode_with}" if mode_with else "refit"] = (maps, mode_with or None)
    table = {}
    for variant, (maps, quantile) in variants.items():
        for c in rows:
            for mode in MODES:
                reference = refs[quantile][c] if quantile else 0.0
                beir = c not in ("sample", *bs.REAL_FOLDERS)
                table[f"{variant}|{c}|{mode}"] = measure(rows[c][mode], maps[mode], reference, beir)
    summary = {
        "probe best cosine": {
            c: [round(float(np.quantile(b, q)), 4) for q in (0.1, 0.5, 0.9)] for c, b in probe_best.items()
        },
        "maps": {
            v: {m: [str(maps[m].mode), maps[m].excess] for m in MODES} for v, (maps, _) in variants.items()
        },
        "table": table,
    }
    if options.dump:
        with open(options.dump, "w", encoding="utf-8") as out:
            json.dump(summary, out, indent=1)
    for variant in variants:
        misses = 0
        for c in rows:
            for mode in MODES:
                r = table[f"{variant}|{c}|{mode}"]
                miss = r["off-topic"] < 0.95 or r["hit@3 kept"] < r["hit@3"] - 0.05 - 1e-9
                misses += miss and c in HELD_OUT
                print(
                    f"{variant:6} {c:14} {mode:6} off {r['off-topic']:.3f}"
                    f" ({r['off-topic answered']}/{r['off-topic n']})"
                    f" hit@3 kept {r['hit@3 kept']:.3f} ({r['hit@3']:.3f}) AUC {r['AUC']:.3f}"
                    f"{' MISS' if miss else ''}"
                )
        print(f"{variant}: {misses} misses on held-out sets")
        # the shifts of the answer offset that each set allows, and what all allow at once
        allowed = np.ones(len(DELTAS), bool)
        for c in rows:
            for mode in MODES:
                reference = refs[variants[variant][1]][c] if variants[variant][1] else 0.0
                beir = c not in ("sample", *bs.REAL_FOLDERS)
                empty, kept, plain = window(rows[c][mode], variants[variant][0][mode], reference, beir)
                off_ok, hit_ok = empty >= 0.95 - 1e-9, kept >= plain - 0.05 - 1e-9
                allowed &= off_ok & hit_ok
                low = DELTAS[off_ok].max() if off_ok.any() else None
                high = DELTAS[hit_ok].min() if hit_ok.any() else None
                print(
                    f"  window {variant} {c:14} {mode:6}: off-topic needs shift <= {low},"
                    f" hit@3 needs >= {high}"
                )
        print(f"  {variant}: shifts every set allows: {list(DELTAS[allowed])}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
