"""Stage 6: answer a question from the index: vector, keyword, or both fused."""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass

from indexer.backends.base import EmbeddingBackend
from indexer.errors import ConfigError
from indexer.store.contract import IndexStore
from indexer.store.records import ChunkFilter

MODES = ("hybrid", "vector", "keyword")
#: The most hits one search returns: enough to read a whole manual, small enough to answer quickly.
MAX_K = 10_000
NO_FILTER = ChunkFilter()
#: Share of the vector list in hybrid scores. Measured on SciFact's train judgments (nDCG@10):
#: 0.5 -> 0.729, 0.6 -> 0.722, 0.7 -> 0.719, 0.8 -> 0.699, reciprocal rank fusion 0.707; on the
#: sample corpus's paraphrased questions 0.7 keeps every answer in the top 3, 0.5-0.6 do not.
VECTOR_WEIGHT = 0.7
_WORD = re.compile(r"\w+", re.UNICODE)
#: Words too common to help a keyword search; left out of the query unless nothing else is left.
STOPWORDS = frozenset(
    """a about an and any are as at be been being but by can could did do does doing for from had has
    have how i if in into is it its just me my no not of on or our ours should so some such than that
    the their them then there these they this those to too up very was we were what when where which
    while who whom why will with would you your yours""".split()
)


@dataclass(frozen=True)
class Hit:
    """One search result: where it is, how well it matched, and its text.

    ``score`` is higher for better matches: cosine similarity in vector mode, BM25 (sign flipped) in
    keyword mode, and in hybrid mode a 0..1 blend of both lists' min-max normalised scores (see
    :func:`combine`). ``vector_score`` and ``keyword_score`` carry each list's own score where the
    chunk appeared in it.
    """

    path: str
    start_line: int
    end_line: int
    score: float
    heading: str
    text: str
    root: str
    mode: str
    vector_score: float | None = None
    keyword_score: float | None = None
    locator: str = ""  # where a reader finds it when lines do not say it: 'page 3', 'cells 4-6'

    @property
    def citation(self) -> str:
        """``path:start-end``, or ``path:page 3`` (``:cells 4-6``...) for a PDF, notebook or DOCX."""
        return f"{self.path}:{self.locator or f'{self.start_line}-{self.end_line}'}"

    def to_dict(self) -> dict[str, object]:
        return asdict(self)


def search(
    store: IndexStore,
    backend: EmbeddingBackend | None,
    text: str,
    k: int = 5,
    mode: str = "hybrid",
    chunk_filter: ChunkFilter = NO_FILTER,
    min_score: float | None = None,
) -> list[Hit]:
    """The ``k`` best chunks for ``text``. Filters (path globs, file types) apply inside each search,
    so ``k`` hits come back whenever ``k`` chunks pass the filters."""
    if mode not in MODES:
        raise ConfigError(f"unknown search mode {mode!r} (choose one of: {', '.join(MODES)})")
    if k <= 0:
        return []
    allowed = store.chunk_filter(chunk_filter) if chunk_filter else None
    pool = k if mode != "hybrid" else max(4 * k, 50)
    vector_scores: dict[int, float] = {}
    keyword_scores: dict[int, float] = {}
    vector_ranked: list[int] = []
    keyword_ranked: list[int] = []
    if mode in ("vector", "hybrid"):
        if backend is None:
            raise ConfigError("vector search needs an embedding backend")
        for chunk_id, distance in store.nearest(embed_query(backend, text, store.dimension), pool, allowed):
            vector_scores[chunk_id] = 1.0 - distance
            vector_ranked.append(chunk_id)
    if mode in ("keyword", "hybrid"):
        for chunk_id, bm25 in store.keyword_matches(keyword_words(text), pool, allowed):
            keyword_scores[chunk_id] = -bm25
            keyword_ranked.append(chunk_id)
    if mode == "vector":
        ranked = [(chunk_id, vector_scores[chunk_id]) for chunk_id in vector_ranked]
    elif mode == "keyword":
        ranked = [(chunk_id, keyword_scores[chunk_id]) for chunk_id in keyword_ranked]
    else:
        ranked = combine(vector_scores, keyword_scores, VECTOR_WEIGHT)
    if min_score is not None:
        ranked = [(chunk_id, score) for chunk_id, score in ranked if score >= min_score]
    ranked = ranked[:k]
    chunks = store.chunks_by_ids([chunk_id for chunk_id, _ in ranked])
    return [
        Hit(
            path=chunks[chunk_id].path,
            start_line=chunks[chunk_id].start_line,
            end_line=chunks[chunk_id].end_line,
            score=float(score),
            heading=chunks[chunk_id].heading,
            text=chunks[chunk_id].text,
            root=chunks[chunk_id].root,
            mode=mode,
            vector_score=vector_scores.get(chunk_id),
            keyword_score=keyword_scores.get(chunk_id),
            locator=chunks[chunk_id].locator,
        )
        for chunk_id, score in ranked
        if chunk_id in chunks
    ]


def embed_query(backend: EmbeddingBackend, text: str, dimension: int | None):
    """The question's vector, made the way the index's documents were (query prefix included) and
    held to the same vector check as any stored vector."""
    # imported here: numpy comes with it, which `index query` answered by a server never needs
    from indexer.validation import check_vectors

    vectors = backend.embed([backend.query_prefix + text])
    return check_vectors(vectors, 1, dimension)[0]


def keyword_words(text: str) -> list[str]:
    """The words of a keyword search: any of them matches, stopwords left out (unless nothing else
    is left); the store ranks chunks with more of the rarer words higher."""
    words = list(dict.fromkeys(word.lower() for word in _WORD.findall(text)))
    return [word for word in words if word not in STOPWORDS] or words


def combine(
    vector_scores: dict[int, float], keyword_scores: dict[int, float], weight: float
) -> list[tuple[int, float]]:
    """Convex combination of each list's scores, normalised (see :func:`_normalise`): ``weight`` for
    the vector list, the rest for BM25. A chunk missing from a list gets nothing from it."""
    vector, keyword = _normalise(vector_scores), _normalise(keyword_scores)
    scores = {
        chunk_id: weight * vector.get(chunk_id, 0.0) + (1 - weight) * keyword.get(chunk_id, 0.0)
        for chunk_id in vector_scores.keys() | keyword_scores.keys()
    }
    return sorted(scores.items(), key=lambda item: (-item[1], item[0]))


def _normalise(scores: dict[int, float]) -> dict[int, float]:
    """Min-max over the list, so the best of each list scores 1 and the worst 0."""
    if not scores:
        return {}
    low, high = min(scores.values()), max(scores.values())
    return {
        chunk_id: (score - low) / (high - low) if high > low else 1.0 for chunk_id, score in scores.items()
    }
