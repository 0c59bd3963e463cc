"""Scores that separate, every mode answering, lookups and lists of names: judged on real folders.

For each collection and packaged model, every judged question runs through ``Index.search`` in each
mode, ten hits deep with ``min_score=0``; the figures are ratios computed in this one run:

- hit@1, hit@3 and MRR@10 of the answering file (files ranked by their best chunk), unthresholded
  and at the mode's default threshold (``Index.default_min_score``), and nDCG@10 where the
  judgments are graded (BEIR folders);
- the share of off-topic questions answered with "no results" at the default threshold;
- the score's AUC: how often a top-three hit from an answering file outscores a top-three hit that
  is not one (off-topic questions' top three count as not answering), and the share of top-three
  hits scoring 0.99 or more;
- whether the first ten files are the same asked for 10, 20 and 200 hits (hybrid).

``--fit`` fits each model's score calibration (:data:`indexer.search.calibration.CALIBRATIONS`) on the
``--fit-sets`` and prints the constants, then reports every set with them, so the held-out sets
are the check. Collections (each skipped, with a note, where it is not on the machine):

- folders nobody wrote for this project, with questions written before any search of them
  (bench/data/README.md): ``starlette``, ``prettier``, ``cairo``, ``gobject``, ``glib``, ``fastapi``,
  ``click``, ``httpx``, ``asciidoctor``, ``cobra``, ``werkzeug``, ``packaging`` under $SCORES_DATA
  (/work/data);
- ``sample``: sample_corpus with tests/fixtures' questions (the doc sets of
  bench/support/docsets.py, ``cmake``, ``man``, ``rust``, are measured by bench/bench_ranking.py);
- BEIR-layout folders under $BEIR_DATA: ``scifact`` (test split; the seeded train subset of
  bench_ranking.py with ``--model``), ``cranfield``, ``cacm``, ``vaswani``
  (bench/support/classic_collections.py).

    python bench/studies/bench_scores.py [--sets starlette,prettier,cairo] [--model bge-small-en-v1.5]
        [--fit] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections import defaultdict
from dataclasses import asdict, dataclass, replace
from pathlib import Path

import bench_folder  # noqa: F401  (bench/ on sys.path: support/ and the suite's scripts)
import numpy as np
from support.off_topic import off_topic_rows
from support.vector_cache import VECTOR_CACHE, CachedModelBackend

from indexer import Index
from indexer.eval import beir, metrics
from indexer.search import calibration
from indexer.search.evidence import Evidence
from indexer.search.hit import Hit
from indexer.search.query import Query
from indexer.search.run import CANDIDATE_DEPTH, NO_FILTER, Found

BENCH = Path(__file__).resolve().parent.parent
REPO = BENCH.parent
DATA = BENCH / "data"
FOLDERS = Path(os.environ.get("SCORES_DATA", "/work/data"))
BEIR_DATA = Path(os.environ.get("BEIR_DATA", "/work/shared/eval"))
CACHE = Path(os.environ.get("SCORES_CACHE", BENCH / ".cache" / "scores"))
#: The folder of each real collection under FOLDERS, and what in it to index.
REAL_FOLDERS = {
    "starlette": "starlette-docs",
    "prettier": "prettier-docs",
    "cairo": "cairo-docs",
    "fastapi": "fastapi-docs-en/docs/en/docs",
    "gobject": "gobject-docs",
    "click": "click-docs/docs",
    "glib": "glib-docs",
    "httpx": "httpx-src/docs",
    "asciidoctor": "asciidoctor-src/docs",
    "cobra": "cobra-src",
    "werkzeug": "werkzeug-src/docs",
    "packaging": "packaging-docs/source",
}
BEIR_SETS = ("scifact", "cranfield", "cacm", "vaswani")
HITS = 10
#: Hits asked for on BEIR folders, as ``index eval`` asks (two chunks for each of 100 documents).
BEIR_HITS = 2 * beir.DOCUMENTS_PER_QUERY
#: The k that must give the same first ten files.
K_STABILITY = (10, 20, 200)
SATURATED = 0.99
#: SciFact train questions --fit reads (of 809), for time.
TRAIN_QUERIES = 200


@dataclass
class Question:
    text: str
    expected: set[str]
    kind: str  # identifier, question, name-words, beir, off-topic
    relevance: dict[str, int]


@dataclass
class Collection:
    name: str
    folder: Path
    questions: list[Question]


def read_jsonl(path: Path) -> list[dict]:
    with open(path, encoding="utf-8") as lines:
        return [json.loads(line) for line in lines if line.strip()]


def off_topic(name: str) -> list[Question]:
    return [Question(row["query"], set(), "off-topic", {}) for row in off_topic_rows(name)]


def folder_collection(name: str) -> Collection | None:
    folder = FOLDERS / REAL_FOLDERS[name]
    if not folder.is_dir():
        return None
    rows = [r for path in sorted(DATA.glob(f"{name}-*.jsonl")) for r in read_jsonl(path)]
    questions = [Question(r["query"], set(r["expected"]), r["kind"], {}) for r in rows]
    return Collection(name, folder, questions + off_topic(name))


def sample_collection() -> Collection:
    fixtures = REPO / "tests" / "fixtures"
    cases = json.loads((fixtures / "sample_queries.json").read_text(encoding="utf-8"))
    hybrid = json.loads((fixtures / "hybrid_queries.json").read_text(encoding="utf-8"))
    questions = [Question(c["query"], {c["expected"]}, "question", {}) for c in cases + hybrid["vector"]]
    questions += [
        Question(c["query"], {c["expected"]}, "identifier", {})
        for c in hybrid["keyword"] + hybrid["keyword_only"]
    ]
    return Collection("sample", REPO / "sample_corpus", questions + off_topic("sample"))


def beir_collection(name: str) -> Collection | None:
    """A BEIR folder's test judgments; ``scifact-train``: the first TRAIN_QUERIES of SciFact's train
    judgments, on the same documents and index (for fitting, the test split held out)."""
    source, _, split = name.partition("-")
    split = split or "test"
    folder = BEIR_DATA / source
    if not (folder / "qrels" / f"{split}.tsv").is_file():
        return None
    judged = beir.load_collection(folder, split)
    if split != "test":
        chosen = sorted(judged.queries)[:TRAIN_QUERIES]
        judged = replace(judged, queries={q: judged.queries[q] for q in chosen})
    documents = CACHE / f"beir-{source}" / "documents"
    beir.write_documents(judged, documents)
    questions = [
        Question(
            text,
            {beir.document_file_name(doc) for doc, grade in judged.qrels[qid].items() if grade > 0},
            "beir",
            {beir.document_file_name(doc): grade for doc, grade in judged.qrels[qid].items()},
        )
        for qid, text in judged.queries.items()
        if any(grade > 0 for grade in judged.qrels[qid].values())
    ]
    return Collection(name, documents, questions + off_topic(source))


def collections(names: list[str]) -> tuple[list[Collection], list[str]]:
    found: list[Collection] = []
    missing: list[str] = []
    for name in names:
        if name == "sample":
            found.append(sample_collection())
            continue
        made = folder_collection(name) if name in REAL_FOLDERS else beir_collection(name)
        if made is None:
            missing.append(name)
        else:
            found.append(made)
    return found, missing


def index_path(collection: Collection, model: str | None) -> Path:
    """One index per folder and model (SciFact's train and test questions share one)."""
    name = collection.name.partition("-")[0]
    return CACHE / f"{name}-{model or 'default'}.db"


def opened(collection: Collection, model: str | None) -> Index:
    """The collection's index for ``model``, built or brought up to date with cached vectors."""
    CACHE.mkdir(parents=True, exist_ok=True)
    path = index_path(collection, model)
    with Index.open(path, backend=CachedModelBackend(VECTOR_CACHE, model)) as building:
        report = building.build(collection.folder, warn=lambda message: None)
        roots = building.store.roots()
    if report.exit_code != 0:
        raise SystemExit(f"building {collection.name} failed: {report.summary()}")
    if len(roots) > 1:
        # an index copied from another cache, or built by another checkout (the sample corpus's root
        # is the checkout's): it would hold the collection twice, and every figure would be off
        raise SystemExit(f"{path} holds {len(roots)} folders ({', '.join(roots)}): use a cache of its own")
    return Index.open(path)


# -- measuring ---------------------------------------------------------------------------------


@dataclass
class Answer:
    """One question in one mode: the files in rank order (by their best chunk), the top three hits'
    scores and whether each is from an answering file, and the threshold's cut."""

    files: list[str]
    top3: list[tuple[float, bool]]
    kept_files: list[str]  # the files of the hits at or above the default threshold


def answer(index: Index, question: Question, mode: str, threshold: float | None, k: int = HITS) -> Answer:
    """The files the hits show, in order (a hit's own, then its copies', as ``index eval`` counts
    them), the score of each of the first three hits with whether it shows an answer, and the files
    the hits at the threshold show."""
    hits = index.search(question.text, k=k, mode=mode, min_score=0)
    files = list(dict.fromkeys(path for hit in hits for path in shown_paths(hit)))
    top3 = [(hit.score, bool(question.expected & set(shown_paths(hit)))) for hit in hits[:3]]
    kept = [hit for hit in hits if threshold is None or hit.score >= threshold]
    return Answer(files, top3, list(dict.fromkeys(path for hit in kept for path in shown_paths(hit))))


def shown_paths(hit: Hit) -> list[str]:
    """The files a hit shows: its own, then those of its copies (the same text in other files)."""
    return [hit.path, *(copy.citation.rpartition(":")[0] for copy in getattr(hit, "copies", ()))]


def first_ten(index: Index, text: str, k: int) -> tuple[str, ...]:
    """The citations of the first ten hits of a hybrid search asked for ``k``."""
    return tuple(hit.citation for hit in index.search(text, k=k, mode="hybrid", min_score=0)[:10])


def auc(positives: list[float], negatives: list[float]) -> float:
    """The chance that a positive outscores a negative (ties count half)."""
    if not positives or not negatives:
        return float("nan")
    negative = np.sort(np.array(negatives))
    below = np.searchsorted(negative, positives, side="left")
    equal = np.searchsorted(negative, positives, side="right") - below
    return float((below + equal / 2).sum() / (len(positives) * len(negatives)))


def measure(collection: Collection, index: Index, stability: int = 30) -> dict[str, dict[str, float]]:
    """Per mode and kind of question: the figures of the module docstring."""
    results: dict[str, dict[str, float]] = {}
    for mode in ("hybrid", "keyword", "vector"):
        threshold = index.default_min_score(mode)
        tallies: dict[str, list[float]] = defaultdict(list)
        positives: list[float] = []
        negatives: list[float] = []
        for question in collection.questions:
            found = answer(index, question, mode, threshold, BEIR_HITS if question.kind == "beir" else HITS)
            for score, answers in found.top3:
                (positives if answers else negatives).append(score)
            tallies["top-3 scores >= 0.99"] += [float(score >= SATURATED) for score, _ in found.top3]
            if question.kind == "off-topic":
                tallies["off-topic no results"].append(float(not found.kept_files))
                continue
            for kind in (question.kind, "all"):
                relevance = question.relevance or {path: 1 for path in question.expected}
                tallies[f"{kind} hit@1"].append(
                    float(found.files[:1] != [] and found.files[0] in question.expected)
                )
                tallies[f"{kind} hit@3"].append(float(bool(question.expected & set(found.files[:3]))))
                tallies[f"{kind} hit@3 kept"].append(
                    float(bool(question.expected & set(found.kept_files[:3])))
                )
                tallies[f"{kind} MRR@10"].append(metrics.mrr_at(found.files, relevance))
                if question.relevance:
                    tallies[f"{kind} nDCG@10"].append(metrics.ndcg_at(found.files, relevance))
        results[mode] = {name: round(float(np.mean(values)), 4) for name, values in tallies.items()}
        results[mode]["score AUC"] = round(auc(positives, negatives), 4)
    real = [q for q in collection.questions if q.kind != "off-topic"][:stability]
    same = [len({first_ten(index, q.text, k) for k in K_STABILITY}) == 1 for q in real]
    results["hybrid"]["same first ten at k=10/20/200"] = round(float(np.mean(same)), 4)
    return results


# -- fitting ----------------------------------------------------------------------------------

#: Where --fit fits each model's maps, by default: one collection of each kind at hand (notes, a
#: DocBook manual, abstracts, a classic collection); the others are held out.
FIT_SETS = ("sample", "cairo", "cranfield")
#: The share of the fit sets' off-topic questions (each collection weighing the same) that the
#: default threshold leaves without an answer: a margin over the 95% asked of every collection.
OFF_TOPIC_EMPTY = 0.97


@dataclass
class Sample:
    """One hit among a question's first ten: its evidence, whether it answers, its place."""

    collection: str
    question: int
    place: int
    features: tuple[float, float, float, float, float]  # strength, gap, margin, known, together
    answers: bool
    off_topic: bool
    lookup: bool  # a one-word query: the floors, not the maps, decide whether it is answered
    listed: bool = False  # of a list of names the question does not ask for: it judges nothing


def gather(collection: Collection, index: Index, mode: str) -> list[Sample]:
    """Every question's first ten hits in ``mode``, with their :class:`Evidence`."""
    samples = []
    store = index.store
    for number, question in enumerate(collection.questions):
        query = Query.parse(question.text)
        found = Found.search(store, index.backend, query, CANDIDATE_DEPTH, mode, NO_FILTER)
        order = found.order[:HITS]
        chunks = store.chunks_by_ids(order)
        for place, (chunk_id, evidence) in enumerate(zip(order, found.evidence()[:HITS], strict=False)):
            samples.append(
                Sample(
                    collection.name,
                    number,
                    place,
                    (evidence.strength, evidence.gap, evidence.margin, evidence.known, evidence.together),
                    chunks[chunk_id].path in question.expected,
                    question.kind == "off-topic",
                    len(query.text.split()) == 1,
                    chunk_id in found.listed,
                )
            )
    return samples


def logistic(x: np.ndarray, y: np.ndarray, weights: np.ndarray, ridge: float = 0.03) -> np.ndarray:
    """Weighted logistic regression by Newton's method, with a ridge on the weights (not the
    offset), so that evidence no collection of the fit contradicts does not drive a score to
    certainty: the weights of the columns of ``x``, then the offset."""
    design = np.hstack([x, np.ones((len(x), 1))])
    penalty = ridge * np.eye(design.shape[1])
    penalty[-1, -1] = 1e-9
    beta = np.zeros(design.shape[1])
    for _ in range(100):
        p = 1 / (1 + np.exp(-design @ beta))
        gradient = design.T @ (weights * (p - y)) + penalty @ beta
        hessian = (design * (weights * p * (1 - p))[:, None]).T @ design + penalty
        step = np.linalg.solve(hessian, gradient)
        beta -= step
        if np.abs(step).max() < 1e-8:
            break
    return beta


def positive_fit(
    x: np.ndarray, y: np.ndarray, weights: np.ndarray, columns: list[int]
) -> calibration.Calibration:
    """A map over the features of ``columns`` whose weights are all positive (more evidence never
    lowers a score): a feature whose weight comes out negative (collinear with another, as keyword
    mode's three nearly are) is dropped and the rest fitted again."""
    kept = list(columns)
    while True:
        fitted = logistic(x[:, kept], y, weights)
        if min(fitted[:-1], default=0.0) >= 0:
            break
        kept.pop(int(np.argmin(fitted[:-1])))
    beta = np.zeros(5)
    beta[kept] = fitted[:-1]
    strength, gap, margin, known, together = (round(float(w), 3) for w in beta)
    offset = round(float(fitted[-1]), 3)
    return calibration.Calibration(strength, gap, margin, offset=offset, known=known, together=together)


def balanced(keys: list[tuple[str, bool]]) -> np.ndarray:
    """Weights that give each collection the same weight, its off-topic questions as much as its
    real ones."""
    counts: dict[tuple[str, bool], int] = defaultdict(int)
    for key in keys:
        counts[key] += 1
    return np.array([1.0 / counts[key] for key in keys])


def fit(samples: list[Sample], mode: str) -> calibration.ModeCalibration:
    """A mode's maps. ``hit``: logistic regression of the top three hits that answer against those
    that do not (off-topic questions' among them), without the question's known share (the same
    for each of its hits, it cancels out of their scores). ``answer``: logistic regression of real
    questions against off-topic ones, on the evidence of each question's strongest hit by the
    ``hit`` map among its first ten (lists of names aside, as the search judges), without the gap
    (the whole answer has none), with the known share and how much more than one word the hit holds
    in keyword mode (where no cosine says how much of the question the collection holds), and
    without one-word queries, which the lookup floors answer."""
    top = [sample for sample in samples if sample.place < 3]
    hit = positive_fit(
        np.array([sample.features for sample in top]),
        np.array([float(sample.answers) for sample in top]),
        balanced([(sample.collection, sample.off_topic) for sample in top]),
        [0, 1, 2],
    )

    def judging(sample: Sample) -> tuple[bool, float]:  # as ModeCalibration picks it: lists last
        return not sample.listed, hit(Evidence(*sample.features))

    strongest: dict[tuple[str, int], Sample] = {}
    for sample in (one for one in samples if not one.lookup):
        key = (sample.collection, sample.question)
        if key not in strongest or judging(sample) > judging(strongest[key]):
            strongest[key] = sample
    chosen = list(strongest.values())
    answer = positive_fit(
        np.array([sample.features for sample in chosen]),
        np.array([float(not sample.off_topic) for sample in chosen]),
        balanced([(sample.collection, sample.off_topic) for sample in chosen]),
        [0, 2, 3, 4] if mode == "keyword" else [0, 2],
    )
    # the offset: the highest that leaves OFF_TOPIC_EMPTY of the off-topic questions (each
    # collection weighing the same) under the default threshold, where their strongest hit scores
    off_topic = [sample for sample in chosen if sample.off_topic]
    logits = np.array([answer.logit(Evidence(*sample.features)) - answer.offset for sample in off_topic])
    weights = balanced([(sample.collection, True) for sample in off_topic])
    order = np.argsort(logits)
    shares = np.cumsum(weights[order]) / weights.sum()
    cut = float(logits[order][min(int(np.searchsorted(shares, OFF_TOPIC_EMPTY)), len(order) - 1)])
    answer = replace(answer, offset=round(logit_of(calibration.DEFAULT_MIN_SCORE) - cut - 1e-3, 3))
    return calibration.ModeCalibration(answer=answer, hit=hit)


def logit_of(chance: float) -> float:
    return float(np.log(chance / (1 - chance)))


def fit_all(found: list[Collection], model: str | None) -> dict[str, calibration.ModeCalibration]:
    """Each mode's maps, fitted on every collection of ``found`` (the ``--fit-sets``)."""
    maps = {}
    for mode in ("hybrid", "vector", "keyword"):
        samples = []
        for collection in found:
            with opened(collection, model) as index:
                index.store.expect_many_searches()
                samples += gather(collection, index, mode)
        maps[mode] = fit(samples, mode)
        print(f"{mode}: {maps[mode]}", file=sys.stderr, flush=True)
    return maps


def use(maps: dict[str, calibration.ModeCalibration], model: str | None) -> None:
    """Search with ``maps`` in this process (what --fit then measures)."""
    name = calibration.CALIBRATED_MODEL if model is None else model
    calibration.KEYWORD_CALIBRATION = maps["keyword"]
    calibration.CALIBRATIONS[name] = calibration.ModelCalibration(
        vector=maps["vector"], hybrid=maps["hybrid"]
    )


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--sets", default="starlette,prettier,cairo,sample")
    parser.add_argument("--model", default=None)
    parser.add_argument("--build-only", action="store_true")
    parser.add_argument(
        "--fit", action="store_true", help="fit the maps on --fit-sets, then measure with them"
    )
    parser.add_argument("--fit-sets", default=",".join(FIT_SETS))
    parser.add_argument("--json", action="store_true")
    options = parser.parse_args()
    found, missing = collections(options.sets.split(","))
    for name in missing:
        print(f"skipped {name}: not on this machine", file=sys.stderr)
    if options.fit:
        fit_sets = options.fit_sets.split(",")
        maps = fit_all([c for c in found if c.name in fit_sets], options.model)
        print(json.dumps({mode: asdict(found_map) for mode, found_map in maps.items()}))
        use(maps, options.model)
    measured = {}
    for collection in found:
        with opened(collection, options.model) as index:
            print(f"{collection.name}: {index.store.chunk_count()} chunks", file=sys.stderr)
            if options.build_only:
                continue
            index.store.expect_many_searches()
            measured[collection.name] = measure(collection, index)
            print(json.dumps({collection.name: measured[collection.name]}), file=sys.stderr, flush=True)
    if options.json:
        print(json.dumps(measured))
    return 0


if __name__ == "__main__":
    sys.exit(main())
