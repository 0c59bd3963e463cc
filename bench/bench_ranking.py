"""Ranking quality and score calibration of `index query`, against the method before issue 14.

Collections (each skipped, with a note, where it is not on the machine):

- **sample**: sample_corpus/ with the questions of tests/fixtures (paraphrases, rare tokens);
- **cmake**, **man**, **rust**: real documentation found on this machine (bench/support/docsets.py), with
  the name -> defining page pairs, the paraphrased questions and the off-topic questions of
  bench/data/ (provenance in bench/data/README.md);
- **scifact**: SciFact's 809 train queries (BEIR layout, $SCIFACT or ../shared/eval/scifact), in the
  index `index eval` keeps in its cache.

For each, every query runs through ``Index.search`` in each mode. Rows: top-1 and top-10 of the
defining page (pages ranked by their best chunk), nDCG@10 on SciFact, the median query time, and
the calibration: the share of real queries whose top hit reaches the default threshold and the
share of off-topic ones that return nothing. The reference is the method before issue 14,
re-run here on the same index: 0.7 x cosine + 0.3 x BM25, each min-max normalised over its list.

    python bench/bench_ranking.py [--quick] [--json] [--sets cmake,man] [--compare]
        [--model bge-small-en-v1.5]

The score calibration is fitted by bench/studies/bench_scores.py --fit. ``--quick`` runs the sample
corpus only. ``--model`` builds and searches each collection with that packaged model instead of
the default one, in indexes of its own; on SciFact it takes the seeded subset bench/bench_models.py
measures (300 queries, 1,000 abstracts), since a 12-layer model takes hours over the whole corpus
on 2 cores. ``--compare`` prints the fusion candidates measured for
issue 14 on every collection.
Indexes are built once into bench/.cache/ranking/ (about 8 minutes per doc set here) and kept.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import sys
import time
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np
from support.docsets import DOCSETS
from support.off_topic import off_topic_rows
from support.rows import print_rows, row
from support.vector_cache import VECTOR_CACHE, CachedModelBackend

from indexer import Index
from indexer.eval import beir, metrics
from indexer.request import MODES
from indexer.search.calibration import DEFAULT_MIN_SCORE
from indexer.search.evidence import VECTOR_WEIGHT, keyword_ceiling
from indexer.search.query import keyword_terms, keyword_words
from indexer.search.run import embed_query

BENCH = Path(__file__).resolve().parent
REPO = BENCH.parent
DATA = BENCH / "data"
CACHE = BENCH / ".cache" / "ranking"
FIXTURES = REPO / "tests" / "fixtures"
#: Hits asked for per query on the doc sets: enough chunks to rank ten pages.
HITS = 50
#: The fold of the off-topic questions the calibration of issue 14 saw (the others are held out).
FIT_FOLD = "fit"
#: SciFact's seeded subset with another model (queries, abstracts; bench_models.py's, seed 22).
SCIFACT_SUBSET = (300, 1000)
SCIFACT_SUBSET_SEED = 22


@dataclass
class Query:
    text: str
    expected: set[str]
    kind: str  # identifier, name-words, question, scifact, off-topic
    relevance: dict[str, int] = field(default_factory=dict)  # SciFact's graded judgments
    fold: str = ""


@dataclass
class Collection:
    name: str
    index_path: Path
    folder: Path
    queries: list[Query]
    model: str | None = None  # a packaged model's name; None: the default model


# -- collections -------------------------------------------------------------------------------


def off_topic(collection: str) -> list[Query]:
    return [Query(row["query"], set(), "off-topic", fold=row["fold"]) for row in off_topic_rows(collection)]


def read_jsonl(path: Path) -> list[dict]:
    with open(path, encoding="utf-8") as lines:
        return [json.loads(line) for line in lines if line.strip()]


def sample_collection() -> Collection:
    queries = [Query(case["query"], {case["expected"]}, "question") for case in read_json("sample_queries")]
    hybrid = read_json("hybrid_queries")
    queries += [Query(case["query"], {case["expected"]}, "question") for case in hybrid["vector"]]
    queries += [
        Query(case["query"], {case["expected"]}, "identifier")
        for case in hybrid["keyword"] + hybrid["keyword_only"]
    ]
    return Collection("sample", CACHE / "sample.db", REPO / "sample_corpus", queries + off_topic("sample"))


def read_json(name: str) -> object:
    return json.loads((FIXTURES / f"{name}.json").read_text(encoding="utf-8"))


def docset_collection(name: str) -> Collection:
    docset = DOCSETS[name]
    rows = read_jsonl(DATA / f"{name}-names.jsonl") + read_jsonl(DATA / f"{name}-questions.jsonl")
    queries = [Query(row["query"], set(row["expected"]), row["kind"]) for row in rows]
    return Collection(name, CACHE / f"{name}.db", docset.prepare(), queries + off_topic(name))


def scifact_folder() -> Path | None:
    for candidate in (
        os.environ.get("SCIFACT"),
        REPO.parent / "shared/eval/scifact",
        REPO.parent.parent / "shared/eval/scifact",
    ):
        if candidate and (Path(candidate) / "qrels" / "train.tsv").is_file():
            return Path(candidate)
    return None


def scifact_collection(folder: Path) -> Collection:
    judged = beir.load_collection(folder, "train")
    cache = beir.default_cache(folder)
    beir.write_documents(judged, cache / "documents")
    queries = scifact_queries(judged)
    return Collection("scifact", cache / "index.db", cache / "documents", queries + off_topic("scifact"))


def scifact_queries(judged: beir.Collection) -> list[Query]:
    """Each judged query with the files of its relevant abstracts and their grades."""
    return [
        Query(
            text,
            {beir.document_file_name(doc) for doc in judged.qrels[query_id]},
            "scifact",
            {beir.document_file_name(doc): grade for doc, grade in judged.qrels[query_id].items()},
        )
        for query_id, text in judged.queries.items()
    ]


def scifact_subset_collection(folder: Path, model: str) -> Collection:
    """SciFact's seeded subset of bench_models.py (300 queries, 1,000 abstracts), for ``model``."""
    collection = beir.load_collection(folder, "train")
    chooser = random.Random(SCIFACT_SUBSET_SEED)
    chosen = sorted(chooser.sample(sorted(collection.queries), SCIFACT_SUBSET[0]))
    judged = {doc for query in chosen for doc in collection.qrels[query]}
    others = sorted(set(collection.documents) - judged)
    kept = judged | set(chooser.sample(others, max(0, SCIFACT_SUBSET[1] - len(judged))))
    subset = beir.Collection(
        name=collection.name,
        documents={doc: text for doc, text in collection.documents.items() if doc in kept},
        queries={query: collection.queries[query] for query in chosen},
        qrels={query: collection.qrels[query] for query in chosen},
    )
    documents = CACHE / f"scifact-{SCIFACT_SUBSET[0]}q-{len(subset.documents)}d" / "documents"
    beir.write_documents(subset, documents)
    queries = scifact_queries(subset)
    index_path = documents.parent / f"index-{model}.db"
    return Collection("scifact", index_path, documents, queries + off_topic("scifact"), model)


def collections(names: list[str], model: str | None = None) -> tuple[list[Collection], list[str]]:
    """The collections asked for that exist here, and a note for each that does not; with ``model``,
    each in an index of that model's own."""
    found, missing = [], []
    for name in names:
        if name == "scifact" and model is not None:
            folder = scifact_folder()
            if folder is None:
                missing.append("scifact: no BEIR folder (set $SCIFACT)")
            else:
                found.append(scifact_subset_collection(folder, model))
            continue
        if name == "sample":
            found.append(sample_collection())
        elif name == "scifact":
            folder = scifact_folder()
            if folder is None:
                missing.append("scifact: no BEIR folder (set $SCIFACT)")
            else:
                found.append(scifact_collection(folder))
        elif DOCSETS[name].available():
            found.append(docset_collection(name))
        else:
            missing.append(f"{name}: {DOCSETS[name].description} not on this machine")
    if model is not None:
        found = [
            replace(c, index_path=c.index_path.with_name(f"{c.index_path.stem}-{model}.db"), model=model)
            if c.model is None
            else c
            for c in found
        ]
    return found, missing


def opened(collection: Collection) -> Index:
    """The collection's index, built (or brought up to date) first, with vectors from the shared cache
    (bench/support/vector_cache.py); searched with the plain embedded backend, so query times are the
    model's."""
    CACHE.mkdir(parents=True, exist_ok=True)
    backend = CachedModelBackend(VECTOR_CACHE, collection.model)
    with Index.open(collection.index_path, backend=backend) as building:
        report = building.build(collection.folder, warn=lambda message: None)
    if report.exit_code != 0:
        raise SystemExit(f"building {collection.name} failed: {report.summary()}")
    return Index.open(collection.index_path)


# -- measuring ---------------------------------------------------------------------------------


@dataclass
class Outcome:
    """One query in one mode: the pages in rank order with their best scores, and the time taken."""

    pages: list[str]
    top_score: float
    seconds: float
    answered: bool = False  # an off-topic question returned hits at the default threshold


def run(index: Index, query: Query, mode: str) -> Outcome:
    started = time.perf_counter()
    found = index.search(query.text, k=hits_for(query), mode=mode, min_score=0)
    seconds = time.perf_counter() - started
    pages = list(dict.fromkeys(hit.path for hit in found))
    # an off-topic question as `index query` asks it: does any hit pass the threshold?
    answered = query.kind == "off-topic" and bool(
        index.search(query.text, mode=mode, min_score=DEFAULT_MIN_SCORE)
    )
    return Outcome(pages, found[0].score if found else 0.0, seconds, answered)


def quality(queries: list[Query], outcomes: list[list[str]]) -> dict[str, float]:
    """top-1 and top-10 per kind of query, and nDCG@10 where there are graded judgments."""
    tallies: dict[str, list[float]] = defaultdict(list)
    for query, pages in zip(queries, outcomes, strict=True):
        if query.kind == "off-topic":
            continue
        tallies[f"{query.kind} top-1"].append(float(bool(pages) and pages[0] in query.expected))
        tallies[f"{query.kind} top-10"].append(float(bool(query.expected & set(pages[:10]))))
        if query.relevance:
            tallies["nDCG@10"].append(metrics.ndcg_at(pages, query.relevance))
    return {name: round(float(np.mean(values)), 4) for name, values in tallies.items()}


def calibration_shares(
    queries: list[Query], top_scores: list[float], threshold: float, answered: list[bool] | None = None
) -> dict[str, float]:
    """The share of real queries whose top hit passes ``threshold``, of the real questions alone, and
    of the held-out off-topic questions (the fold the calibration never saw) that return nothing:
    none of their hits passes (``answered``, as a search at the threshold found), else their top hit
    does not."""
    pairs = list(zip(queries, top_scores, strict=True))
    real = [score >= threshold for query, score in pairs if query.kind != "off-topic"]
    questions = [score >= threshold for query, score in pairs if query.kind == "question"]
    found = answered if answered is not None else [score >= threshold for score in top_scores]
    empty = [
        not hit
        for query, hit in zip(queries, found, strict=True)
        if query.kind == "off-topic" and query.fold != FIT_FOLD
    ]
    shares = {"real kept": real, "questions kept": questions, "off-topic empty": empty}
    return {name: round(float(np.mean(values)), 4) for name, values in shares.items() if values}


def measure(collection: Collection, index: Index) -> dict[str, dict[str, float]]:
    """Per mode: quality, calibration shares and the median query time; and the reference."""
    results = {}
    index.search(
        "warm up", k=1, min_score=0
    )  # the model and, from the second search on, the vectors in memory
    for mode in MODES:
        outcomes = [run(index, query, mode) for query in collection.queries]
        results[mode] = {
            **quality(collection.queries, [outcome.pages for outcome in outcomes]),
            **calibration_shares(
                collection.queries,
                [outcome.top_score for outcome in outcomes],
                DEFAULT_MIN_SCORE,
                [outcome.answered for outcome in outcomes],
            ),
            "median ms": round(statistics.median(o.seconds for o in outcomes) * 1000, 1),
        }
    before = [reference_pages(index, query) for query in collection.queries]
    for mode in MODES:
        results[f"before {mode}"] = quality(collection.queries, [pages[mode] for pages in before])
    return results


# -- the method before issue 14, and the candidates measured for it -------------------------------


@dataclass
class Lists:
    """What the candidates fuse, for one query: the cosine of every chunk either search found, the
    vector list's order, BM25 lists (lower is better), and the keyword ceiling."""

    cosine: dict[int, float]
    vector: list[int]
    keyword: dict[str, list[tuple[int, float]]]
    ceiling: float
    lead: set[int]


def gather(index: Index, text: str, depth: int) -> Lists:
    """Both searches, ``depth`` deep, through the store (SQLite), plus the keyword variants the
    candidates compare: as before issue 14 (words only, no heading weight) and as now."""
    store = index.store
    store.expect_many_searches()
    query = embed_query(index.backend, text, store.dimension)
    vector = [chunk_id for chunk_id, _ in store.nearest(query, depth)]
    words = keyword_words(text)
    keyword = {
        "before": bm25_list(store, words, depth, heading_weight=1.0),
        "words": store.keyword_matches(words, depth),
        "now": store.keyword_matches(keyword_terms(text), depth),
    }
    found = set(vector) | {chunk_id for matches in keyword.values() for chunk_id, _ in matches}
    # the cosine of each found chunk, as the store's in-memory search computes it
    cosine = {
        chunk_id: 1.0 - distance for chunk_id, distance in store.nearest(query, len(found), sorted(found))
    }
    ceiling = keyword_ceiling(len(words), store.counts()["chunks"])
    lead = {
        row[0]
        for row in store.db.execute(
            "SELECT id FROM chunks WHERE seq = 0 AND id IN (SELECT value FROM json_each(?))",
            (json.dumps(sorted(found)),),
        )
    }
    return Lists(cosine, vector, keyword, ceiling, lead)


def bm25_list(store: object, words: list[str], depth: int, heading_weight: float) -> list[tuple[int, float]]:
    fts_query = " OR ".join(f'"{word}"' for word in words)
    if not fts_query:
        return []
    sql = (
        "SELECT rowid, bm25(chunks_fts, ?, 1.0) AS rank FROM chunks_fts WHERE chunks_fts MATCH ? "
        "ORDER BY rank LIMIT ?"
    )
    return [(row[0], row[1]) for row in store.db.execute(sql, (heading_weight, fts_query, depth))]


Fusion = Callable[[Lists, str], dict[int, float]]


def min_max(weight: float, keyword: str = "before") -> Fusion:
    """Before issue 14: each list min-max normalised over its candidates, then blended."""

    def fused(lists: Lists, text: str) -> dict[int, float]:
        vector = normalised({c: lists.cosine[c] for c in lists.vector})
        found = normalised({c: -bm25 for c, bm25 in lists.keyword[keyword]})
        return {
            c: weight * vector.get(c, 0) + (1 - weight) * found.get(c, 0)
            for c in vector.keys() | found.keys()
        }

    return fused


def normalised(scores: dict[int, float]) -> dict[int, float]:
    if not scores:
        return {}
    low, high = min(scores.values()), max(scores.values())
    return {c: (s - low) / (high - low) if high > low else 1.0 for c, s in scores.items()}


def reciprocal_rank(constant: int, keyword: str = "now") -> Fusion:
    def fused(lists: Lists, text: str) -> dict[int, float]:
        scores: dict[int, float] = defaultdict(float)
        for ranked in (lists.vector, [c for c, _ in lists.keyword[keyword]]):
            for rank, chunk_id in enumerate(ranked):
                scores[chunk_id] += 1 / (constant + rank + 1)
        return dict(scores)

    return fused


def z_scores(weight: float) -> Fusion:
    """Each list's scores as z-scores over the list; a chunk missing from a list gets its lowest."""

    def fused(lists: Lists, text: str) -> dict[int, float]:
        vector = standardised({c: lists.cosine[c] for c in lists.vector})
        found = standardised({c: -bm25 for c, bm25 in lists.keyword["now"]})
        floor_v, floor_k = min(vector.values(), default=0), min(found.values(), default=0)
        return {
            c: weight * vector.get(c, floor_v) + (1 - weight) * found.get(c, floor_k)
            for c in vector.keys() | found.keys()
        }

    return fused


def standardised(scores: dict[int, float]) -> dict[int, float]:
    if len(scores) < 2:
        return {c: 0.0 for c in scores}
    mean, spread = statistics.fmean(scores.values()), statistics.pstdev(scores.values()) or 1.0
    return {c: (s - mean) / spread for c, s in scores.items()}


def absolute(
    weight: float,
    keyword: str = "now",
    exact_cosine: bool = False,
    code_weight: float | None = None,
    lead: float = 0.0,
) -> Fusion:
    """The chosen family: cosine and BM25 over the query's ceiling, blended as they are. Options:
    the true cosine of keyword-only chunks rather than the vector list's last, a weight of its own
    for queries that look like code, a bonus for the first chunk of a file."""

    def fused(lists: Lists, text: str) -> dict[int, float]:
        vector = {c: lists.cosine[c] for c in lists.vector}
        found = {c: -bm25 / lists.ceiling for c, bm25 in lists.keyword[keyword]}
        floor = min(vector.values(), default=0.0)
        share = code_weight if code_weight is not None and looks_like_code(text) else weight
        return {
            c: share * (lists.cosine[c] if exact_cosine else vector.get(c, floor))
            + (1 - share) * found.get(c, 0.0)
            + (lead if c in lists.lead else 0.0)
            for c in vector.keys() | found.keys()
        }

    return fused


def looks_like_code(text: str) -> bool:
    """One word, or up to three with one spelled like code (``a_b``, ``a::b``, ``aB``, ``A1``)."""
    tokens = text.split()
    code = ("_" in t or "::" in t or "." in t.strip(".") or any(ch.isupper() for ch in t[1:]) for t in tokens)
    return len(tokens) == 1 or (len(tokens) <= 3 and any(code))


CANDIDATES: dict[str, Fusion] = {
    "before: min-max 0.7/0.3": min_max(0.7),
    "min-max 0.5/0.5": min_max(0.5),
    "RRF k=60": reciprocal_rank(60),
    "RRF k=10": reciprocal_rank(10),
    "z-score 0.5/0.5": z_scores(0.5),
    "absolute 0.4": absolute(0.4),
    "absolute 0.5": absolute(0.5),
    "absolute 0.55 (chosen)": absolute(VECTOR_WEIGHT),
    "absolute 0.6": absolute(0.6),
    "chosen, no joined words": absolute(VECTOR_WEIGHT, keyword="words"),
    "chosen, neither joined words nor heading weight": absolute(VECTOR_WEIGHT, keyword="before"),
    "chosen, true cosine of keyword-only chunks": absolute(VECTOR_WEIGHT, exact_cosine=True),
    "chosen, 0.2 for code-like queries": absolute(VECTOR_WEIGHT, code_weight=0.2),
    "chosen, first chunk of a file +0.05": absolute(VECTOR_WEIGHT, lead=0.05),
}


def reference_pages(index: Index, query: Query) -> dict[str, list[str]]:
    """The pages the method before issue 14 ranks for ``query``, in each mode."""
    lists = gather(index, query.text, pool(query))
    hits = hits_for(query)
    return {
        "vector": pages_of(index, {c: lists.cosine[c] for c in lists.vector[:hits]}),
        "keyword": pages_of(index, {c: -bm25 for c, bm25 in lists.keyword["before"][:hits]}),
        "hybrid": pages_of(index, min_max(0.7)(lists, query.text)),
    }


def hits_for(query: Query) -> int:
    """Hits asked for: as `index eval` does on SciFact, HITS (enough to rank ten pages) elsewhere."""
    return 2 * beir.DOCUMENTS_PER_QUERY if query.kind == "scifact" else HITS


def pool(query: Query) -> int:
    """How deep each list of a hybrid search goes for ``hits_for(query)`` hits (as search() does)."""
    return max(4 * hits_for(query), 50)


def pages_of(index: Index, scores: dict[int, float]) -> list[str]:
    ranked = sorted(scores, key=lambda chunk_id: -scores[chunk_id])
    chunks = index.store.chunks_by_ids(ranked)
    return list(dict.fromkeys(chunks[chunk_id].path for chunk_id in ranked if chunk_id in chunks))


def compare(collection: Collection, index: Index) -> dict[str, dict[str, float]]:
    """Every candidate's quality on the collection, from the same two lists per query."""
    queries = [query for query in collection.queries if query.kind != "off-topic"]
    gathered = [gather(index, query.text, pool(query)) for query in queries]
    results = {}
    for name, fusion in CANDIDATES.items():
        pages = [
            pages_of(index, fusion(lists, query.text)) for lists, query in zip(gathered, queries, strict=True)
        ]
        results[name] = quality(queries, pages)
    return results


# -- rows --------------------------------------------------------------------------------------


def rows_for(name: str, results: dict[str, dict[str, float]]) -> list[dict]:
    """The rows of one collection. What each mode alone scores goes in brackets in ``what``: it is
    there to read beside the hybrid figure, not a note (notes say why a target is missed)."""
    hybrid, before = results["hybrid"], results["before hybrid"]
    rows = []
    if "identifier top-1" in hybrid:
        for depth, target in (("top-1", 0.90), ("top-10", 0.98)):
            rows.append(
                judged(
                    f"{name}: exact names, hybrid {depth} (vector "
                    f"{results['vector'][f'identifier {depth}']:.2f}, keyword "
                    f"{results['keyword'][f'identifier {depth}']:.2f} alone)",
                    hybrid[f"identifier {depth}"],
                    before[f"identifier {depth}"],
                    f">= {target}",
                    hybrid[f"identifier {depth}"] >= target,
                )
            )
    for kind in ("question", "name-words"):
        if f"{kind} top-1" in hybrid:
            for depth in ("top-1", "top-10"):
                ours, then = hybrid[f"{kind} {depth}"], before[f"{kind} {depth}"]
                rows.append(
                    judged(
                        f"{name}: {KIND_NAMES[kind]}, hybrid {depth}", ours, then, "no worse", ours >= then
                    )
                )
    if "nDCG@10" in hybrid:
        for mode in MODES:
            ours, then = results[mode]["nDCG@10"], results[f"before {mode}"]["nDCG@10"]
            target = ">= 0.73" if mode == "hybrid" else "no worse"
            rows.append(
                judged(
                    f"{name}: nDCG@10, {mode}",
                    ours,
                    then,
                    target,
                    ours >= (0.73 if mode == "hybrid" else then),
                )
            )
        rows.append(
            judged(
                f"{name}: median query, hybrid (ms; ref: vector mode)",
                hybrid["median ms"],
                results["vector"]["median ms"],
                "< 50",
                hybrid["median ms"] < 50,
            )
        )
    return rows + calibration_rows(name, results)


def calibration_rows(name: str, results: dict[str, dict[str, float]]) -> list[dict]:
    """The shares of real and off-topic queries on either side of the default threshold."""
    hybrid = results["hybrid"]
    others = ", ".join(
        f"{mode} {results[mode]['real kept']:.2f}/{results[mode]['off-topic empty']:.2f}"
        for mode in ("vector", "keyword")
    )
    if "questions kept" in hybrid:
        others += f"; written questions alone {hybrid['questions kept']:.2f}"
    return [
        judged(
            f"{name}: real queries keeping their top hit at {DEFAULT_MIN_SCORE}, hybrid "
            f"(kept/empty in {others})",
            hybrid["real kept"],
            None,
            ">= 0.95",
            hybrid["real kept"] >= 0.95,
        ),
        judged(
            f"{name}: held-out off-topic queries returning nothing at {DEFAULT_MIN_SCORE}, hybrid",
            hybrid["off-topic empty"],
            None,
            ">= 0.90",
            hybrid["off-topic empty"] >= 0.90,
        ),
    ]


KIND_NAMES = {"question": "paraphrased questions", "name-words": "names as plain words"}


def judged(what: str, ours: float, reference: float | None, target: str, passed: bool) -> dict:
    """A row with its target; the ratio is ours over the reference when there is one."""
    ratio = round(ours / reference, 3) if reference else None
    return row(what, ours, reference, ratio, target=target, passed=passed)


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--quick", action="store_true", help="the sample corpus only")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--sets", default="sample,cmake,man,rust,scifact")
    parser.add_argument("--compare", action="store_true", help="print every fusion candidate's quality")
    parser.add_argument("--model", default=None, help="a packaged model's name (default: the default model)")
    options = parser.parse_args()
    found, missing = collections(["sample"] if options.quick else options.sets.split(","), options.model)
    for note in missing:
        print(f"skipped {note}", file=sys.stderr)
    rows = []
    for collection in found:
        with opened(collection) as index:
            if options.compare:
                for name, scores in compare(collection, index).items():
                    print(f"{collection.name:<8} {name:<34} {json.dumps(scores)}")
                continue
            rows += rows_for(collection.name, measure(collection, index))
    if rows or options.json:  # --compare prints its own lines instead
        print_rows(rows, options.json)
    return 0


if __name__ == "__main__":
    sys.exit(main())
