"""``index eval COLLECTION``: retrieval quality of the whole build-and-query path on a BEIR-layout collection.

The collection's documents become files (``title + " " + text``, as BEIR and MTEB embed them) in a
cache folder, and are indexed by the ordinary build, so the evaluation measures exactly what users
get: chunking, the vector check, the store and each search mode. The cache keeps the files and the
index, so a second run re-embeds nothing.
"""

from __future__ import annotations

import hashlib
import json
import os
import statistics
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote, unquote

import numpy as np

from indexer.api import Index
from indexer.backends.base import EmbeddingBackend
from indexer.backends.vector_check import check_vectors
from indexer.errors import ConfigError, IndexerError
from indexer.eval.metrics import mrr_at, ndcg_at, recall_at
from indexer.pipeline.options import BuildOptions
from indexer.progress import Progress
from indexer.request import MODES
from indexer.search.copies import shown_places

DOCUMENTS_PER_QUERY = 100


@dataclass(frozen=True)
class EvaluationReport:
    """What :func:`run` measured: scores per mode (and for the model on whole documents, when asked)."""

    collection: str
    documents: int
    queries: int
    split: str
    build_summary: str
    results: dict[str, dict[str, Any]]
    seconds: float


def run(
    folder: str | os.PathLike[str],
    split: str = "test",
    *,
    modes: Sequence[str] = MODES,
    cache: str | os.PathLike[str] | None = None,
    db: str | os.PathLike[str] | None = None,
    whole_documents: bool = False,
    batch_size: int = BuildOptions.batch_size,
    progress: Progress | None = None,
    per_query: bool = False,
) -> EvaluationReport:
    """Score retrieval on a BEIR-layout collection (what ``index eval`` prints).

    The documents are written as files in ``cache`` (default: :func:`default_cache`) and indexed
    into ``db`` (default: an index in the cache) by the ordinary build; every judged query then runs
    in each of ``modes``. ``whole_documents`` also scores the model on each whole document, embedded
    directly. ``progress`` shows how far each long step is (the build, the scoring, the whole
    documents). Raises :class:`IndexerError` when the build of the collection fails.
    """
    started = time.perf_counter()
    collection = load_collection(folder, split)
    cache_folder = Path(cache) if cache else default_cache(folder)
    documents = (cache_folder / "documents").resolve()
    write_documents(collection, documents)
    with Index.open(db or cache_folder / "index.db") as index:
        report = index.build(
            documents, batch_size=batch_size, progress=progress or False, warn=lambda message: None
        )
        if report.exit_code != 0:
            raise IndexerError(
                f"building the evaluation index failed: {report.failures[:1] or report.stopped}"
            )
        if db is None:
            drop_other_roots(index, documents)  # after the build, which re-uses their vectors
        results = evaluate(collection, index, modes, progress, per_query, root=documents)
        if whole_documents:
            backend = index.backend
            if backend is None:  # the build above records one; an index without any cannot embed
                raise IndexerError("the evaluation index has no embedding backend for whole documents")
            results["whole_documents"] = evaluate_whole_documents(collection, backend, cache_folder, progress)
    return EvaluationReport(
        collection=collection.name,
        documents=len(collection.documents),
        queries=len(collection.queries),
        split=split,
        build_summary=report.summary(),
        results=results,
        seconds=time.perf_counter() - started,
    )


@dataclass(frozen=True)
class Collection:
    name: str
    documents: dict[str, str]  # id -> title + " " + text
    queries: dict[str, str]  # id -> text, only the judged ones
    qrels: dict[str, dict[str, int]]  # query id -> {document id: relevance}


def load_collection(folder: str | os.PathLike[str], split: str = "test") -> Collection:
    """Read ``corpus.jsonl``, ``queries.jsonl`` and ``qrels/<split>.tsv`` from a BEIR-layout folder."""
    folder = Path(folder)
    for needed in ("corpus.jsonl", "queries.jsonl", f"qrels/{split}.tsv"):
        if not (folder / needed).is_file():
            raise ConfigError(
                f"{folder / needed} not found: `index eval` needs the BEIR layout (--qrels {split})"
            )
    documents = {}
    for record in _read_jsonl(folder / "corpus.jsonl"):
        documents[str(record["_id"])] = f"{record.get('title', '')} {record.get('text', '')}".strip()
    qrels: dict[str, dict[str, int]] = {}
    with open(folder / "qrels" / f"{split}.tsv", encoding="utf-8") as lines:
        for number, line in enumerate(lines, start=1):
            fields = line.rstrip("\n").split("\t")
            if number == 1 and fields[0] == "query-id":
                continue
            if len(fields) != 3:
                raise ConfigError(f"qrels/{split}.tsv line {number}: expected 3 tab-separated fields")
            if int(fields[2]) > 0:
                qrels.setdefault(fields[0], {})[fields[1]] = int(fields[2])
    queries = {
        str(r["_id"]): r["text"] for r in _read_jsonl(folder / "queries.jsonl") if str(r["_id"]) in qrels
    }
    return Collection(folder.resolve().name, documents, queries, {q: qrels[q] for q in queries})


def _read_jsonl(path: Path) -> Iterable[dict]:
    with open(path, encoding="utf-8") as lines:
        for number, line in enumerate(lines, start=1):
            if line.strip():
                try:
                    yield json.loads(line)
                except json.JSONDecodeError as error:
                    raise ConfigError(f"{path} line {number}: not JSON ({error.msg})") from error


def default_cache(folder: str | os.PathLike[str]) -> Path:
    """Where the documents-as-files and the index of a collection are kept between runs."""
    resolved = Path(folder).resolve()
    digest = hashlib.sha256(str(resolved).encode()).hexdigest()[:10]
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return base / "indexer" / "eval" / f"{resolved.name}-{digest}"


def write_documents(collection: Collection, folder: Path) -> None:
    """One file per document; a file already holding the same text is left alone (so its mtime stays
    and the next build does not even read it)."""
    folder.mkdir(parents=True, exist_ok=True)
    for doc_id, text in collection.documents.items():
        path = folder / document_file_name(doc_id)
        data = text.encode("utf-8")
        if not path.exists() or path.read_bytes() != data:
            path.write_bytes(data)


def document_file_name(doc_id: str) -> str:
    return quote(doc_id, safe="") + ".txt"


def document_id(path: str) -> str:
    return unquote(path.rsplit("/", 1)[-1].removesuffix(".txt"))


def score_rankings(rankings: dict[str, list[str]], qrels: dict[str, dict[str, int]]) -> dict[str, float]:
    """Mean nDCG@10, Recall@100 and MRR@10 over the judged queries."""
    metrics: dict[str, list[float]] = {"ndcg@10": [], "recall@100": [], "mrr@10": []}
    for query_id, relevant in qrels.items():
        ranked = rankings.get(query_id, [])
        metrics["ndcg@10"].append(ndcg_at(ranked, relevant))
        metrics["recall@100"].append(recall_at(ranked, relevant))
        metrics["mrr@10"].append(mrr_at(ranked, relevant))
    return {name: round(float(np.mean(values)), 4) if values else 0.0 for name, values in metrics.items()}


def drop_other_roots(index: Index, documents: Path) -> None:
    """Leave the cache's own index holding this collection's documents only. A cache folder that was
    copied or moved holds them under its old path too: searched together, every document would come
    back twice and each keyword count would double."""
    for root in index.status()["roots"]:
        if root["path"] != str(documents):
            index.remove_root(root["path"])


def rank_documents(index: Index, text: str, mode: str, root: Path | None = None) -> list[str]:
    """Document ids, best first, each once (a document's best chunk decides its place; a document
    whose text a hit shows as its copy comes right after that hit, where a reader meets it).
    ``root``: search only the collection's folder, when the index holds others."""
    # every hit: the ranking is measured, not the threshold
    hits = index.search(text, k=2 * DOCUMENTS_PER_QUERY, mode=mode, roots=[root] if root else (), min_score=0)
    shown = (document_id(place.path) for hit in hits for place in shown_places(hit))
    return list(dict.fromkeys(shown))[:DOCUMENTS_PER_QUERY]


def evaluate(
    collection: Collection,
    index: Index,
    modes: Sequence[str] = MODES,
    progress: Progress | None = None,
    per_query: bool = False,
    root: Path | None = None,
) -> dict[str, dict[str, Any]]:
    """Run every judged query in each mode; metrics plus the median and 95th percentile query time,
    and with ``per_query`` each query's result under ``"queries"`` (see :func:`query_results`)."""
    results: dict[str, dict[str, Any]] = {}
    for mode in modes:
        rankings, timings = {}, []
        if progress is not None:
            progress.start(f"scoring {mode} search", "queries")
        for number, (query_id, text) in enumerate(collection.queries.items(), 1):
            started = time.perf_counter()
            rankings[query_id] = rank_documents(index, text, mode, root)
            timings.append(time.perf_counter() - started)
            if progress is not None:
                progress.update(number, len(collection.queries))
        results[mode] = {
            **score_rankings(rankings, collection.qrels),
            "median_ms": round(statistics.median(timings) * 1000, 2) if timings else 0.0,
            "p95_ms": round(float(np.percentile(timings, 95)) * 1000, 2) if timings else 0.0,
        }
        if per_query:
            results[mode]["queries"] = query_results(collection, rankings)
    if progress is not None:
        progress.finish()
    return results


def query_results(collection: Collection, rankings: dict[str, list[str]]) -> list[dict[str, Any]]:
    """Each query's rank of its first relevant document (None: not in the first 100), its nDCG@10,
    and its three best documents: which questions fail, and what came back instead."""
    results = []
    for query_id, text in collection.queries.items():
        ranked, relevant = rankings.get(query_id, []), collection.qrels[query_id]
        first = next((rank for rank, doc in enumerate(ranked, 1) if doc in relevant), None)
        results.append(
            {
                "id": query_id,
                "query": text,
                "first_relevant_rank": first,
                "ndcg@10": round(ndcg_at(ranked, relevant), 4),
                "top": ranked[:3],
            }
        )
    return results


def evaluate_whole_documents(
    collection: Collection, backend: EmbeddingBackend, cache: Path, progress: Progress | None = None
) -> dict[str, float]:
    """The model on its own: each whole document embedded directly (the model truncates what it cannot
    read), exact cosine search. The gap to vector mode is what chunking and the store cost or gain."""
    ids = list(collection.documents)
    fingerprint = hashlib.sha256(json.dumps(backend.describe(), sort_keys=True).encode()).hexdigest()[:12]
    saved = cache / f"whole-documents-{fingerprint}.npy"
    if saved.exists():
        matrix = np.load(saved)
    else:
        texts = [backend.document_prefix + collection.documents[doc_id] for doc_id in ids]
        if progress is not None:
            progress.start("embedding whole documents", "documents")
        parts = []
        for start in range(0, len(texts), 64):
            parts.append(
                check_vectors(backend.embed(texts[start : start + 64]), len(texts[start : start + 64]), None)
            )
            if progress is not None:
                progress.update(start + len(parts[-1]), len(texts))
        if progress is not None:
            progress.finish()
        matrix = np.vstack(parts)
        matrix /= np.linalg.norm(matrix, axis=1, keepdims=True)
        np.save(saved, matrix)
    queries = list(collection.queries.items())
    query_vectors = check_vectors(
        backend.embed([backend.query_prefix + text for _, text in queries]), len(queries), None
    )
    query_vectors /= np.linalg.norm(query_vectors, axis=1, keepdims=True)
    scores = query_vectors @ matrix.T
    rankings = {}
    for row, (query_id, _) in enumerate(queries):
        top = np.argsort(-scores[row])[:DOCUMENTS_PER_QUERY]
        rankings[query_id] = [ids[i] for i in top]
    return score_rankings(rankings, collection.qrels)
