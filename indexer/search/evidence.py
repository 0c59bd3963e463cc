"""What a hit's score is computed from (:class:`Evidence`), each piece on a scale that neither the
question's length nor files unrelated to it move: the cosine, BM25 over the query's ceiling
(:func:`keyword_ceiling`), the share of the question's information a hit holds
(:class:`Information`), and the blend hybrid mode ranks by (:func:`fuse`).

Apart from the maps that turn evidence into a score (:mod:`indexer.search.calibration`): evidence
is read from the store for each question; the maps are fitted over it, and refitting them changes
nothing here.
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass, field

from indexer.search.query import Query
from indexer.store.contract import AllowedChunks, SearchStore

#: Share of the cosine in hybrid evidence, chosen on five collections at once (bench/bench_ranking.py
#: --compare): more weight on the cosine gains on the doc sets' paraphrased questions and loses on
#: SciFact, and exact names hardly move; this weight is where no question set lost against the
#: weights beside it (bench/RESULTS.md, "Ranking quality: the figures behind the search's constants").
VECTOR_WEIGHT = 0.55
#: The least inverse document frequency BM25 gives a word in SQLite's FTS5 and in the PostgreSQL store
#: (a word in half the chunks or more would get none, or less than none).
BM25_SMALLEST_IDF = 1e-6
#: The keyword share (what the blend ranks by) of a chunk is its BM25 over the best match's, but
#: never over less than the ceiling of this many words: a question of up to this many words is
#: blended on its evidence, whose ceiling keeps a match of one common word among them weak, and a
#: longer question's best match counts as one of this many words would, however many words it lacks.
SHARE_FLOOR_WORDS = 12
#: What BM25 gives a word at most in a chunk, as a multiple of its inverse document frequency: ``k1 + 1``
#: with the ``k1`` of 1.2 that both stores use, reached as the word repeats.
BM25_SATURATION = 2.2
#: How much lower than a cosine the same keyword evidence counts in a hit's strength in hybrid mode:
#: a hit whose words name something rare (evidence near 1) is as strong as a close paraphrase, a few
#: words in common are weak.
KEYWORD_DISCOUNT = 0.4
#: The rank whose evidence stands for what the collection gives a question's non-answers (the
#: ``margin`` of :class:`Evidence`): deep enough to be past the answers of any question.
REFERENCE_RANK = 100


@dataclass(frozen=True)
class Evidence:
    """What a hit's score is computed from, each on a scale that neither the question's length nor
    files unrelated to it move:

    - ``strength``: its own evidence (:func:`strengths`);
    - ``gap``: how far it lies below the best hit ranked at or above it, on the scale the mode ranks
      by (the blend in hybrid mode), 0 for the first: a hit far below the first rarely answers;
    - ``margin``: its evidence over what the collection gives the question's non-answers, the
      evidence of the hit at :data:`REFERENCE_RANK` in the same list: a cosine of 0.5 is a
      standout where most chunks score 0.1 and ordinary where most score 0.45;
    - ``known``: the share of the question's information that the collection holds at all
      (:class:`Information`), the same for every hit of a question: an off-topic question shares a
      word or two of its many with the collection, a real one most of its rare ones, however long
      it is (1 where the mode does not read the keyword index);
    - ``together``: in keyword mode, the log of its BM25 over the most that one of the question's
      terms gets alone in any chunk, or 0 when it holds no more than that: above 0 only where the
      hit holds several of the question's words at once, as an answer does and a chunk sharing a
      word with an off-topic question does not. Where the hit at :data:`REFERENCE_RANK` holds
      more than that one term, it is measured over that hit's BM25 instead, as ``margin`` is: in a
      collection on one subject a long question's words meet in many chunks by chance, and holding
      them at once says only as much as it goes beyond what the collection gives the question's
      non-answers (0 in the other modes);
    - ``listed``: it is a chunk of a page that lists names, which the question does not ask for
      (an index, a changelog, release notes: :func:`indexer.search.name_rules.lists_names`), or a
      page's copy in another version than the one asked for, found with that one
      (:func:`indexer.search.order_rules.other_versions`). No map reads it; it says which hits
      may judge the whole answer (:class:`ModeCalibration`)."""

    strength: float
    gap: float
    margin: float
    known: float = 1.0
    together: float = 0.0
    listed: bool = False


@dataclass(frozen=True)
class Information:
    """How much a question asks for, on BM25's scale, and how much of it the collection holds. Each
    of its terms (:meth:`Query.information_terms`) counts what the keyword search gives it alone in
    its best chunk; a term that no chunk holds counts :data:`BM25_SATURATION` times the ceiling of a
    word found in one chunk, the most such a word could give: it is rarer than any word the
    collection holds. A chunk's BM25 over ``total`` is the share of the question's information the
    chunk holds, on a scale that the question's length does not move: a long question matched on
    most of its rare words scores as high as a short one, an off-topic question matched on a word or
    two of its many stays low, and words common in the collection weigh little in both."""

    total: float
    held: float
    strongest: float = 0.0  # the most a single term gets alone in any chunk, as often as asked

    @property
    def known(self) -> float:
        """The share of the question's information that some chunk holds."""
        return self.held / self.total if self.total > 0 else 0.0


def question_information(
    store: SearchStore, query: Query, allowed: AllowedChunks | None = None
) -> Information:
    """The :class:`Information` of ``query`` in ``store`` (among the ``allowed`` chunks): one keyword
    lookup of a single match per term, each reading no more than the whole question's search does.
    A term the question repeats counts each time, as the keyword search counts it."""
    lacking = BM25_SATURATION * keyword_ceiling(1, store.keyword_chunk_count())
    asked = Counter(query.information_terms())
    alone = {term: store.keyword_matches([term], 1, allowed) for term in asked}
    held = {term: asked[term] * max(-found[0][1], 0.0) for term, found in alone.items() if found}
    missing = sum(times for term, times in asked.items() if term not in held)
    holding = sum(held.values())
    return Information(holding + lacking * missing, holding, max(held.values(), default=0.0))


@dataclass(frozen=True)
class KeywordScores:
    """A keyword search's matches on three scales: ``evidence`` (BM25 over the query's ceiling: how
    strong a hit is in the hybrid score), ``shares`` (BM25 over the best match's: what the hybrid
    blend ranks by), ``coverage`` (BM25 over the question's information: the share of it each hit
    holds, keyword mode's strength) and ``together`` (the log of BM25 over the most one term gets
    alone or the hit at :data:`REFERENCE_RANK` gets, see :class:`Evidence`); and ``known``, the
    share of the question's information the collection holds (:class:`Information`)."""

    evidence: dict[int, float]
    shares: dict[int, float]
    coverage: dict[int, float] = field(default_factory=dict)
    together: dict[int, float] = field(default_factory=dict)
    known: float = 0.0


def keyword_scores(
    store: SearchStore, query: Query, k: int, allowed: AllowedChunks | None = None
) -> KeywordScores:
    """The ``k`` best keyword matches of ``query`` on every scale (higher is better)."""
    matches = store.keyword_matches(query.keyword_terms(), k, allowed)
    if not matches:
        return KeywordScores({}, {})
    chunks, words = store.keyword_chunk_count(), query.keyword_count()
    ceiling = keyword_ceiling(words, chunks)
    best = max(-bm25 for _, bm25 in matches)
    scale = max(best, keyword_ceiling(min(words, SHARE_FLOOR_WORDS), chunks))
    information = question_information(store, query, allowed)
    total, strongest = information.total or ceiling, information.strongest or best
    listed = sorted((-bm25 for _, bm25 in matches), reverse=True)
    reference = listed[REFERENCE_RANK - 1] if len(listed) >= REFERENCE_RANK else 0.0
    apart = max(strongest, reference)  # what a chunk gets without holding the words at once
    return KeywordScores(
        evidence={chunk_id: -bm25 / ceiling for chunk_id, bm25 in matches},
        shares={chunk_id: -bm25 / scale for chunk_id, bm25 in matches},
        coverage={chunk_id: -bm25 / total for chunk_id, bm25 in matches},
        together={chunk_id: math.log(max(-bm25 / apart, 1.0)) for chunk_id, bm25 in matches},
        known=information.known,
    )


def keyword_evidence(
    store: SearchStore, query: Query, k: int, allowed: AllowedChunks | None = None
) -> dict[int, float]:
    """The ``k`` best keyword matches of ``query``, as BM25 over its ceiling (higher is better)."""
    return keyword_scores(store, query, k, allowed).evidence


def keyword_ceiling(words: int, chunks: int) -> float:
    """What BM25 gives, about, to a chunk of average length holding each of ``words`` query words
    once, when each is found in no other chunk of the ``chunks``: the words times the inverse document
    frequency of a word in one chunk, as BM25 computes it (clamped, as the stores clamp it, so that in
    an index of two chunks a word found in one still scores about 1). Dividing by it makes keyword
    scores comparable across queries and indexes: a rare name matched exactly scores near 1, common
    words little."""
    return max(words, 1) * max(math.log((max(chunks, 1) - 0.5) / 1.5), BM25_SMALLEST_IDF)


def fuse(
    vector_scores: dict[int, float], keyword_scores: dict[int, float], cut: bool = False
) -> dict[int, float]:
    """Hybrid evidence of every chunk found by either search. A chunk the vector search did not
    return is given the cosine of the last one it did: it is no nearer than that, and often near it.
    Where the keyword list was ``cut`` (it holds as many matches as were asked for, so more chunks
    match), a chunk it did not return is likewise given the last one's share: it may hold the words
    as well as that one, and in a long question of common words often does. Only where every match
    came back does a chunk missing from the list have none of the words, and a share of 0."""
    floor = min(vector_scores.values(), default=0.0)
    keyword_floor = min(keyword_scores.values(), default=0.0) if cut else 0.0
    return {
        chunk_id: VECTOR_WEIGHT * vector_scores.get(chunk_id, floor)
        + (1 - VECTOR_WEIGHT) * keyword_scores.get(chunk_id, keyword_floor)
        for chunk_id in vector_scores.keys() | keyword_scores.keys()
    }


def strengths(
    mode: str,
    order: list[int],
    vector_scores: dict[int, float],
    keyword_scores: dict[int, float],
    discount: float = KEYWORD_DISCOUNT,
) -> list[float]:
    """How strongly each hit of ``order`` answers the question from its own evidence alone: in
    vector mode its cosine, in keyword mode its keyword evidence, in hybrid mode the stronger of its
    cosine (a chunk only the keyword search found: the vector list's last, as :func:`fuse` gives it)
    and its keyword evidence less ``discount``. A chunk that the mode's own search did not return (a
    rule brought it: an asked version's entry) has the list's last cosine and no keyword evidence."""
    floor = min(vector_scores.values(), default=0.0)
    if mode == "vector":
        return [vector_scores.get(chunk_id, floor) for chunk_id in order]
    if mode == "keyword":
        return [keyword_scores.get(chunk_id, 0.0) for chunk_id in order]
    return [
        max(vector_scores.get(chunk_id, floor), keyword_scores.get(chunk_id, 0.0) - discount)
        for chunk_id in order
    ]


def hit_evidence(
    mode: str,
    order: list[int],
    vector_scores: dict[int, float],
    keyword_scores: dict[int, float],
    ranking: dict[int, float],
    known: float = 1.0,
    together: dict[int, float] | None = None,
) -> list[Evidence]:
    """Each hit's :class:`Evidence`: its strength (:func:`strengths`, ``keyword_scores`` on the scale
    the mode reads: the coverage in keyword mode); its gap below the best hit at or above it on the
    ``ranking`` scale; its margin, the cosine (keyword score in keyword mode) over the list's at
    :data:`REFERENCE_RANK` (0 when the keyword list is shorter: the collection gives the other chunks
    none of the words); the question's ``known`` share; and in keyword mode its ``together``."""
    found = strengths(mode, order, vector_scores, keyword_scores)
    own = keyword_scores if mode == "keyword" else vector_scores
    listed = sorted(own.values(), reverse=True)
    if len(listed) >= REFERENCE_RANK:
        reference = listed[REFERENCE_RANK - 1]
    else:
        reference = 0.0 if mode == "keyword" or not listed else listed[-1]
    floor = listed[-1] if listed else 0.0
    evidence, best = [], -math.inf
    for chunk_id, strength in zip(order, found, strict=True):
        ranked = ranking.get(chunk_id, 0.0)
        best = max(best, ranked)
        joint = (together or {}).get(chunk_id, 0.0)
        evidence.append(Evidence(strength, ranked - best, own.get(chunk_id, floor) - reference, known, joint))
    return evidence
