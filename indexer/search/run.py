"""The search itself: the steps of one search, in order, over a store.

The pipeline of one search (:func:`search`, :meth:`Found.search`, :meth:`Found.scored`):

1. **Lists.** Each search the mode uses reads :data:`CANDIDATE_DEPTH` candidates (more only when
   ``k`` asks for more), whatever ``k``: the vector search by cosine, the keyword search by BM25
   divided by the query's ceiling (:func:`keyword_ceiling`: what a word found in one chunk scores),
   so that a rare name matched exactly scores about 1 whatever the query and common words little.
   BM25's statistics count only chunks that hold words, so a file without any changes no score.
2. **Fusion** (hybrid): ``VECTOR_WEIGHT * cosine + (1 - VECTOR_WEIGHT) * keyword share``, the share
   being BM25 over the best match's, or over the ceiling of :data:`SHARE_FLOOR_WORDS` words when
   the best match is weaker (:func:`keyword_scores`), so a long question keeps what keyword search
   ranks well and a weak match stays weak. The best keyword hit takes :data:`KEYWORD_BEST_PLACE`
   at the latest whenever keyword mode would show it (:func:`with_keyword_best`).
3. **Lists of names last** (:func:`lists_last`): among the first :data:`RULE_WINDOW`, chunks of a
   page that lists names (a generated index, a changelog's dated or numbered entries, release
   notes, a glossary, as the page declares them) go after the others, unless the question asks
   for such a list. **Tests after the code** (:func:`code_before_tests`): there too, the code a test
   calls takes the test's place and the tests go after the rest, unless the question asks for
   tests. **The version asked for first** (:func:`other_versions`): a page's copy in another
   version than the one the question names, else the newest, counts as a list of names does, here
   and in the scores, where that version's copy is among those hits too (``docs/v1/flags.md``
   beside ``docs/v3/flags.md``, ``versioned_docs/version-2.0/...``).
4. **What documents declare**: a question that is one name (``Path``, ``std::io::Stdout``) puts first
   the chunks of the pages named after it or declaring it (:func:`named_first`), in every mode:
   where a name is defined is what a page declares, not a word's statistics, so vector mode reads
   it too, among its own list and the keyword search's (:func:`_keyword_only`); a question of
   several words that is a page's whole title puts that page first (:func:`titled_first`); one most of
   whose words a section declares as definitions puts that section first (:func:`defining_first`);
   a question asking for a list and naming a version puts first
   the entries whose heading declares that version (:func:`version_entries_first`), found among
   the first :data:`RULE_WINDOW` and the chunks that best hold its numbers.
5. **Scores.** Each hit's :class:`Evidence` (its own strength, its gap below the hits ranked above
   it, its margin over what the collection gives non-answers, and in keyword and hybrid mode the
   share of the question's information the collection holds, :class:`Information`; keyword mode's
   strength is the share the hit holds) goes through the mode's logistic map
   fitted for the index's model (:data:`CALIBRATIONS`, :data:`KEYWORD_CALIBRATION`), fitted on
   collections of several kinds and checked on others: the score is the chance that the hit
   answers. Floors: a page named as a one-name question asks, and an entry of the version a
   question asks a list of, score at least :data:`NAMED_PAGE_SCORE`; the chunks holding a
   one-word query's word best (in vector mode its first ones) at least
   :data:`DEFAULT_MIN_SCORE` (a lookup is answered in every mode whenever the index holds the
   word). Before the floors, where some page is named as asked (or some entry declares the asked
   version), every other hit's score is multiplied by :data:`NAMED_PAGE_SCORE`
   (:func:`under_named`): a chunk that only uses the name holds it as strongly as its definition
   does, and answers only as far as it is about the named thing. Then each hit scores as the
   strongest hit ranked at or below it (:func:`in_rank_order`), so the list is sorted by the score
   and a threshold cuts only its tail: the first hit's score is the judgment of the whole answer
   ("nothing relevant here" under :data:`DEFAULT_MIN_SCORE`), and the hits under it keep scores of
   their own. Where keyword mode's own evidence leaves that judgment in doubt, hybrid mode's
   judgment of the same question, on both kinds of evidence, stands for it (:func:`judged_on_both`).
6. **Re-ranking** (optional): the fused best candidates are re-read by the cross-encoder
   (:mod:`indexer.backends.reranker`) and ranked by its logit less :data:`FUSED_RANK_WEIGHT` times the log of
   their fused rank (:func:`reranked_order`); its probability is the score, under the same rule.
7. **Copies.** A hit all of whose text stands in hits above it from other files (a manual's
   one-page edition beside its chapters, a page kept unchanged in each version of a site's docs)
   is folded into the one holding most of it as one of its ``copies``, and the next hit takes its
   place (:func:`fold_copies`).

The blend ranks, but its value does not score: an off-topic question sharing a rare word with the
collection reaches the blend of a paraphrase sharing none, where the hit's own strength and its
margin keep them apart. The scale of each piece of evidence is chosen so that it does not move with
the question's length or with files unrelated to it: min-max normalising each list per query would
give the best hit of any question, answered or not, the top score.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, replace
from functools import partial

from indexer.backends.base import EmbeddingBackend
from indexer.errors import BackendError, ConfigError
from indexer.formats import heading_titles
from indexer.records import StoredChunk
from indexer.request import SearchRequest
from indexer.search.calibration import (
    CALIBRATED_MODEL,
    CALIBRATIONS,
    DEFAULT_MIN_SCORE,
    NAMED_PAGE_SCORE,
    ModelCalibration,
    in_doubt,
    in_rank_order,
    under_named,
)
from indexer.search.copies import fold_copies
from indexer.search.evidence import (
    Evidence,
    KeywordScores,
    fuse,
    hit_evidence,
    keyword_scores,
    question_information,
)
from indexer.search.hit import Hit
from indexer.search.name_rules import (
    MIN_DEFINED_WORDS,
    Version,
    asked_names,
    asked_versions,
    asks_for_entry,
    declared_versions,
    defining_first,
    is_entry_of,
    lists_names,
    named_first,
    spelled_version,
    titled_first,
    version_entries_first,
    version_owners,
)
from indexer.search.order_rules import (
    LOOKUP_HITS,
    RULE_WINDOW,
    TEST_WORDS,
    best_matches,
    code_before_tests,
    lists_last,
    looked_up_first,
    other_versions,
    reranked_order,
    with_keyword_best,
)
from indexer.search.query import Query, keyword_words
from indexer.store.contract import AllowedChunks, SearchStore
from indexer.store.records import ChunkFilter

_log = logging.getLogger(__name__)
NO_FILTER = ChunkFilter()
#: How deep every search reads its lists, whatever ``k``: the fusion, the rules and the scores see the
#: same candidates whether 10, 20 or 200 hits are asked for, so the first ten are the same.
CANDIDATE_DEPTH = 400
#: Scores chunks against a question: the probability that each answers it, in order.
Rerank = Callable[[str, Sequence[StoredChunk]], Sequence[float]]


def search(
    store: SearchStore,
    backend_for: Callable[[], EmbeddingBackend | None],
    request: SearchRequest,
    chunk_filter: ChunkFilter = NO_FILTER,
    rerank: Rerank | None = None,
    calibration: ModelCalibration | None = None,
) -> list[Hit]:
    """The ``request.k`` best chunks for ``request.text``, best first, each scored in rank order.

    Filters (path globs, file types) apply inside each search, so ``k`` hits come back whenever
    ``k`` chunks pass the filters. A quoted phrase that no chunk holds is searched as its words:
    quote marks in a pasted question never empty the answer alone. With ``request.rerank``, the
    fused best ``request.candidates`` are re-read by ``rerank`` and ranked by its probability.
    ``calibration`` maps the hits' strengths to scores (default: the built-in model's; a model
    without one gets no second opinion, :func:`judged_on_both`). ``backend_for`` gives the
    index's embedding backend, asked for only when the question is to be embedded (keyword mode
    embeds it only where its own evidence leaves the answer in doubt). ``request.min_score`` only
    cuts: the scores fall in rank order, so it keeps a first part."""
    query = Query.parse(request.text)
    if not query.text:
        raise ConfigError(f"the question {request.text!r} has nothing to search for, only words to leave out")
    depth = max(request.candidates if request.rerank else request.k, CANDIDATE_DEPTH)
    backend = backend_for() if request.mode != "keyword" else None
    found = Found.search(store, backend, query, depth, request.mode, chunk_filter)
    if query.phrases and not found.order:
        query = query.with_phrases_as_words()
        found = Found.search(store, backend, query, depth, request.mode, chunk_filter)
    if request.rerank:
        if rerank is None:
            raise ConfigError("re-ranking needs a re-ranker")
        ranked = found.reranked(store, request, rerank)
    else:
        on_both = partial(_in_hybrid_mode, store, backend_for, query, depth, chunk_filter)
        judged = None if calibration is None else judged_on_both(found, calibration, on_both)
        ranked = found.scored(calibration or CALIBRATIONS[CALIBRATED_MODEL], judged)
    if request.min_score is not None:
        ranked = [(chunk_id, score) for chunk_id, score in ranked if score >= request.min_score]
    batch = max(request.k, RULE_WINDOW)  # folding the copies reads the first RULE_WINDOW at least
    return fold_copies(found.hits(store, ranked, batch), request.k, RULE_WINDOW)


def _in_hybrid_mode(
    store: SearchStore,
    backend_for: Callable[[], EmbeddingBackend | None],
    query: Query,
    depth: int,
    chunk_filter: ChunkFilter,
) -> Found | None:
    """What a hybrid search of ``query`` finds (None: the index has no model yet)."""
    backend = backend_for()
    return None if backend is None else Found.search(store, backend, query, depth, "hybrid", chunk_filter)


def judged_on_both(
    found: Found, calibration: ModelCalibration, on_both: Callable[[], Found | None]
) -> float | None:
    """The whole answer's log-odds as hybrid mode judges it, on both kinds of evidence, where keyword
    mode's own evidence leaves it in doubt (:func:`in_doubt`); None where the mode's own judgment
    stands, as in a one-word lookup (:attr:`Found.looked_up`). Keyword mode's order and the scores of
    its hits relative to its strongest are its own: only whether the question has an answer here is
    asked of both. ``on_both`` searches the question in hybrid mode, which embeds it (None: the
    index has no model yet). A model that cannot be reached leaves keyword mode its own judgment,
    with a warning in the log. Vector mode keeps its own: the cosine is the model's reading already,
    and hybrid's judgment, which adds the keyword evidence of words an off-topic question shares
    with abstracts, refused fewer off-topic questions than the cosine alone on classic collections
    (bench/RESULTS.md)."""
    if found.mode != "keyword" or not found.order or found.looked_up:
        return None  # a lookup's floors answer it, whatever the judgment
    if not in_doubt(calibration.of(found.mode).judged(found.evidence())):
        return None
    try:
        both = on_both()
    except BackendError as error:
        _log.warning("warning: keyword mode judged an answer on keywords alone: %s", error)
        return None
    if both is None or not both.order:
        return None
    return calibration.hybrid.judged(both.evidence())


@dataclass
class Found:
    """What the searches of one query found: each chunk's cosine and keyword scores, the evidence the
    answer was ranked by, its order, and the chunks whose score has a floor (``named``: the pages
    named as asked and the entries of a version asked for, which the question names as exactly;
    ``looked_up``: the chunks holding a one-word query's word)."""

    mode: str
    order: list[int]
    vector: dict[int, float]
    keyword: KeywordScores
    ranking: dict[int, float]
    chunks: dict[int, StoredChunk]
    named: frozenset[int] = frozenset()
    looked_up: frozenset[int] = frozenset()
    listed: frozenset[int] = frozenset()

    @classmethod
    def search(
        cls,
        store: SearchStore,
        backend: EmbeddingBackend | None,
        query: Query,
        depth: int,
        mode: str,
        chunk_filter: ChunkFilter,
    ) -> Found:
        """Steps 1 to 4 of the module's pipeline, each list ``depth`` deep."""
        chunk_filter = replace(chunk_filter, phrases=query.phrases, excluded=query.excluded)
        allowed = store.chunk_filter(chunk_filter) if chunk_filter else None
        vector_scores: dict[int, float] = {}
        keyword = KeywordScores({}, {})
        if mode in ("vector", "hybrid"):
            if backend is None:
                raise ConfigError("vector search needs an embedding backend")
            vector = embed_query(backend, query.text, store.dimension)
            nearest = store.nearest(vector, depth, allowed)
            vector_scores = {chunk_id: 1.0 - distance for chunk_id, distance in nearest}
        if mode in ("keyword", "hybrid"):
            keyword = keyword_scores(store, query, depth, allowed)
        if mode == "hybrid":
            ranking = fuse(vector_scores, keyword.shares, cut=len(keyword.shares) >= depth)
        else:
            ranking = vector_scores if mode == "vector" else keyword.evidence
        order = [chunk_id for chunk_id, _ in sorted(ranking.items(), key=_best_first)]
        if mode == "hybrid":
            order = with_keyword_best(order, keyword)
        chunks = store.chunks_by_ids(order[:RULE_WINDOW])
        words = set(keyword_words(query.text))
        lists = {chunk_id for chunk_id, chunk in chunks.items() if lists_names(chunk, words)}
        lists |= other_versions(order[:RULE_WINDOW], chunks, query.text)
        order = code_before_tests(lists_last(order, lists), chunks, words)
        named: frozenset[int] = frozenset()
        names = asked_names(query.text)
        typed_words = len(query.text.split())
        if names:
            keyword_found = _keyword_only(store, query, order, depth, allowed) if mode == "vector" else []
            fetched = store.chunks_by_ids([c for c in order + keyword_found if c not in chunks])
            lists |= {chunk_id for chunk_id, chunk in fetched.items() if lists_names(chunk, words)}
            chunks = {**chunks, **fetched}
            order, named = named_first(order + keyword_found, chunks, names, lists)
            unnamed = set(keyword_found) - named
            order = [chunk_id for chunk_id in order if chunk_id not in unnamed]
        elif typed_words > 1:
            order, named = titled_first(order, RULE_WINDOW, chunks, query.text)
        if not named and mode != "vector":
            words = set(keyword_words(query.words))
            if len(words) >= MIN_DEFINED_WORDS:
                order = defining_first(order, RULE_WINDOW, chunks, words)
        versions = asked_versions(query.text) if asks_for_entry(words) else set()
        if versions:
            asked = (versions, version_owners(query.text))
            order, chunks, entries = _version_entries_first(store, order, chunks, asked, allowed)
            named |= entries
        looked_up: frozenset[int] = frozenset()
        if typed_words == 1 and mode != "vector":
            chunks, lists = _lookup_lists(
                store, keyword.evidence, chunks, lists, set(keyword_words(query.text))
            )
            tests = set() if words & TEST_WORDS else {c for c, chunk in chunks.items() if chunk.is_test}
            order, looked_up = looked_up_first(order, keyword.evidence, lists, len(named), tests)
        elif typed_words == 1 and order and question_information(store, query, allowed).held:
            looked_up = frozenset(order[:LOOKUP_HITS])  # vector mode: its first chunks answer it
        return cls(mode, order, vector_scores, keyword, ranking, chunks, named, looked_up, frozenset(lists))

    def evidence(self) -> list[Evidence]:
        """Each hit's :class:`Evidence`, in the answer's order, the lists of names (and older
        versions' copies) marked."""
        if self.mode == "vector":
            found = hit_evidence(self.mode, self.order, self.vector, {}, self.ranking)
        elif self.mode == "hybrid":
            keyword, known = self.keyword, self.keyword.known
            found = hit_evidence(self.mode, self.order, self.vector, keyword.evidence, self.ranking, known)
        else:
            keyword = self.keyword
            found = hit_evidence(
                self.mode, self.order, {}, keyword.coverage, self.ranking, keyword.known, keyword.together
            )
        if not self.listed:
            return found
        marked = zip(self.order, found, strict=True)
        return [replace(one, listed=True) if chunk_id in self.listed else one for chunk_id, one in marked]

    def scored(self, calibration: ModelCalibration, judged: float | None = None) -> list[tuple[int, float]]:
        """(chunk id, score) in the answer's order (step 5): each hit's evidence through the mode's
        map (the whole answer judged ``judged`` where both kinds of evidence judged it,
        :func:`judged_on_both`), those of the hits that are not named as asked put under the named
        (:func:`under_named`), then raised to their floors and held in rank order
        (:func:`in_rank_order`)."""
        scores = calibration.of(self.mode).scores(self.evidence(), judged)
        weighed = under_named(scores, [chunk_id in self.named for chunk_id in self.order])
        return list(zip(self.order, in_rank_order(weighed, self.floors()), strict=True))

    def reranked(self, store: SearchStore, request: SearchRequest, rerank: Rerank) -> list[tuple[int, float]]:
        """(chunk id, the re-ranker's probability) of the fused best ``request.candidates``, ranked by
        it; the pages named as a one-name question asks and the entries of an asked version stay
        first, as without re-ranking."""
        best = self.distinct_best(store, request.candidates)
        chunks = self.read(store, best)
        candidates = [chunk_id for chunk_id in best if chunk_id in chunks]
        read = rerank(request.text, [chunks[chunk_id] for chunk_id in candidates])
        probability = dict(zip(candidates, read, strict=True))
        named = [chunk_id for chunk_id in candidates if chunk_id in self.named]
        others = reranked_order([c for c in candidates if c not in self.named], probability)
        order = named + others
        scores = in_rank_order([float(probability[chunk_id]) for chunk_id in order], self.floors(order))
        return list(zip(order, scores, strict=True))

    def distinct_best(self, store: SearchStore, count: int) -> list[int]:
        """The first chunks of the order that hold ``count`` hits not copies of one before them
        (:func:`fold_copies`), their copies among them: the re-ranker reads the copies too, and they
        are folded again in its order, so ``count`` hits come back wherever enough chunks match."""
        end = count
        while True:
            best = self.order[:end]
            hits = self._hits(store, [(chunk_id, 0.0) for chunk_id in best])
            distinct = len(fold_copies(hits, len(hits), RULE_WINDOW))
            if distinct >= count or end >= len(self.order):
                return best
            end += count - distinct

    def floors(self, order: list[int] | None = None) -> list[float]:
        """The least score of each hit: :data:`NAMED_PAGE_SCORE` for a page named as asked or an
        entry of an asked version, :data:`DEFAULT_MIN_SCORE` for the chunks that hold a one-word
        query's word best (in vector mode, its first :data:`LOOKUP_HITS` when some chunk holds the
        word)."""
        return [
            NAMED_PAGE_SCORE
            if chunk_id in self.named
            else DEFAULT_MIN_SCORE
            if chunk_id in self.looked_up
            else 0.0
            for chunk_id in (self.order if order is None else order)
        ]

    def read(self, store: SearchStore, chunk_ids: list[int]) -> dict[int, StoredChunk]:
        """The chunks read so far, with those of ``chunk_ids`` not yet read: what the re-ranker and
        the hits need, each chunk read from the store once."""
        missing = [chunk_id for chunk_id in chunk_ids if chunk_id not in self.chunks]
        if missing:
            self.chunks = {**self.chunks, **store.chunks_by_ids(missing)}
        return self.chunks

    def hits(self, store: SearchStore, ranked: list[tuple[int, float]], batch: int) -> Iterator[Hit]:
        """The hits of ``ranked``, in order, their chunks read ``batch`` at a time as they are asked
        for: the copies folded (:func:`fold_copies`) take a few more than were asked for."""
        for start in range(0, len(ranked), batch):
            yield from self._hits(store, ranked[start : start + batch])

    def _hits(self, store: SearchStore, ranked: list[tuple[int, float]]) -> list[Hit]:
        chunks = self.read(store, [chunk_id for chunk_id, _ in ranked])
        return [
            Hit(
                path=chunks[chunk_id].path,
                start_line=chunks[chunk_id].start_line,
                end_line=chunks[chunk_id].end_line,
                score=score,
                heading=chunks[chunk_id].heading,
                text=chunks[chunk_id].text,
                root=chunks[chunk_id].root,
                mode=self.mode,
                vector_score=self.vector.get(chunk_id),
                keyword_score=self.keyword.evidence.get(chunk_id),
                locator=chunks[chunk_id].locator,
                code_lead=chunks[chunk_id].code_lead,
            )
            for chunk_id, score in ranked
            if chunk_id in chunks
        ]


def embed_query(backend: EmbeddingBackend, text: str, dimension: int | None):
    """The question's vector, made the way the index's documents were (query prefix included) and
    held to the same vector check as any stored vector."""
    # imported here: numpy comes with it, which `index query` answered by a server never needs
    from indexer.backends.vector_check import check_vectors

    vectors = backend.embed([backend.query_prefix + text])
    return check_vectors(vectors, 1, dimension)[0]


def _version_entries_first(
    store: SearchStore,
    order: list[int],
    chunks: dict[int, StoredChunk],
    asked: tuple[set[Version], set[str]],
    allowed: AllowedChunks | None,
) -> tuple[list[int], dict[int, StoredChunk], frozenset[int]]:
    """:func:`version_entries_first` over the first :data:`RULE_WINDOW` candidates and the chunks
    that best hold an asked version's numbers (a keyword lookup of each, as a phrase): the entry of
    an older version often ranks far below the newest entries, whose words it shares, and in a long
    changelog beyond the candidates (in vector mode, where a version's digits mean little, often):
    an entry found by the lookup alone joins them. The headings inside the chunks that hold the
    numbers are read by their format's reader (:func:`indexer.formats.heading_titles`): a short
    entry shares a chunk with the one before it. ``asked``: the versions, and the names the question
    gives them (:func:`version_owners`): the entries of a file that never names one are of another
    project's version (``numpy 2.0`` asked of Poetry's changelog), not the asked one."""
    versions, owners = asked
    spelled = sorted(spelled_version(version) for version in versions)
    holding = [chunk_id for chunk_id, _ in store.keyword_matches(spelled, RULE_WINDOW, allowed)]
    chunks = {**chunks, **store.chunks_by_ids([c for c in holding if c not in chunks])}
    declared = {
        chunk_id: declared_versions(
            chunk, heading_titles(chunk.path, chunk.text) if chunk_id in holding else ()
        )
        for chunk_id, chunk in chunks.items()
    }
    if owners:
        files = {
            (chunks[c].root, chunks[c].path) for c, found in declared.items() if is_entry_of(found, versions)
        }
        owned = {file for file in files if _names_all(store, file, owners)}
        declared = {
            c: found if (chunks[c].root, chunks[c].path) in owned else [] for c, found in declared.items()
        }
    candidates = set(order)
    order = order + [c for c in holding if c not in candidates and is_entry_of(declared[c], versions)]
    order, entries = version_entries_first(order, declared, versions)
    return order, chunks, entries


def _lookup_lists(
    store: SearchStore,
    evidence: dict[int, float],
    chunks: dict[int, StoredChunk],
    lists: set[int],
    words: set[str],
) -> tuple[dict[int, StoredChunk], set[int]]:
    """``chunks`` and ``lists`` (the chunks of pages listing names, :func:`lists_names`) with the
    :data:`RULE_WINDOW` chunks that hold a one-word query's word best read too: the lookup
    (:func:`looked_up_first`) chooses among them, and a generated index holding the word as often as
    its definition would otherwise take the definition's place, being no list to a window it is not in."""
    holding = best_matches(evidence)[:RULE_WINDOW]
    chunks = {**chunks, **store.chunks_by_ids([chunk_id for chunk_id in holding if chunk_id not in chunks])}
    listing = {
        chunk_id for chunk_id in holding if chunk_id in chunks and lists_names(chunks[chunk_id], words)
    }
    return chunks, lists | listing


def _keyword_only(
    store: SearchStore, query: Query, order: list[int], depth: int, allowed: AllowedChunks | None
) -> list[int]:
    """The keyword search's ``depth`` best chunks for a one-name question that ``order`` (the vector
    list) lacks: where the name is declared is a fact of the page, not of the model's reading, and
    a name the model reads as a few characters (``-m``, ``ssl``) leaves its definition beyond the
    nearest chunks. Only those named as asked join the answer (:func:`named_first`)."""
    listed = set(order)
    found = store.keyword_matches(query.keyword_terms(), depth, allowed)
    return [chunk_id for chunk_id, _ in found if chunk_id not in listed]


def _names_all(store: SearchStore, file: tuple[str, str], words: set[str]) -> bool:
    """Whether the file at ``file`` (its root and path) holds each of ``words``: one keyword lookup
    of each, within the file."""
    root, path = file
    within = store.chunk_filter(ChunkFilter(path_globs=(path,), roots=(root,)))
    return all(store.keyword_matches([word], 1, within) for word in words)


def _best_first(item: tuple[int, float]) -> tuple[float, int]:
    return (-item[1], item[0])
