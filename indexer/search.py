"""Stage 6: answer a question from the index: vector, keyword, or both fused, with calibrated scores.

Each mode first measures evidence on a scale that does not depend on the other hits of the query:

- vector: the cosine similarity of chunk and question;
- keyword: BM25 divided by the query's ceiling (:func:`keyword_ceiling`), so that a chunk holding a
  word found nowhere else in the index scores about 1 whatever the query, and a chunk sharing only
  common words with the question scores little;
- hybrid: ``VECTOR_WEIGHT * cosine + (1 - VECTOR_WEIGHT) * keyword share``, where the keyword share
  (:func:`keyword_scores`) is BM25 over the best match's, or over the ceiling of
  :data:`SHARE_FLOOR_WORDS` words when the best match is weaker: it stops shrinking as the question
  grows, so a long question keeps what keyword search ranks well, and a weak match stays weak.

The evidence ranks the hits, but for two rules: a question that is one name (``Path``,
``std::io::Stdout``) puts first the chunks of the page named after it (:func:`named_first`), and the
hybrid answer holds the best keyword hit whenever keyword mode would show it (:func:`with_keyword_best`).

The score users see, between 0 and 1, says how likely a hit answers the question, so that one
threshold means the same in every query, mode and front end, and it falls in rank order, so a user
reads the list as it is sorted:

- each hit's *strength* (:func:`strengths`: the cosine in vector mode, the keyword evidence less
  :data:`KEYWORD_DISCOUNT` in keyword mode, the stronger of the two in hybrid mode) goes through a
  fixed logistic map fitted for the index's model (:data:`CALIBRATIONS`);
- then each hit scores as the strongest hit ranked at or below it (:func:`in_rank_order`): the
  score shown is how likely an answer is here or further down, and a threshold cuts the list's
  tail, never its middle. A page named as a one-name question asks scores at least
  :data:`NAMED_PAGE_SCORE`.
- with re-ranking, the strength is the cross-encoder's probability (:mod:`indexer.rerank`), under
  the same rule, for any model; the candidates are ranked by its logit less
  :data:`FUSED_RANK_WEIGHT` times the log of their fused rank (:func:`reranked_order`).

In vector and keyword mode the evidence ranks the hits, so the score is a monotone map of it. In
hybrid mode the blend ranks (ranked by the strength instead, SciFact loses 0.05 nDCG@10) but judges
worse: an off-topic question sharing a rare word with a collection reaches the blend of a paraphrase
sharing none, where the strength keeps them apart (bench/RESULTS.md, issue 22). So hybrid ranks by
the blend and scores by the strength, held in rank order from below: a weak hit the blend ranks
above a strong one shows the strong one's score, which keeps, at the threshold, every hit strong on
its own (holding each hit under those before it instead dropped the answers of a quarter of the
sample corpus's paraphrases).

Min-max normalising each list per query, as this module did before issue 14, gave
the best hit of any query a high score (a question about banana bread over a build tool's manual
scored 0.70).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, replace

from indexer.backends.base import EmbeddingBackend
from indexer.citations import format_citation
from indexer.definitions import declared_names
from indexer.errors import ConfigError
from indexer.records import StoredChunk
from indexer.request import MAX_K as MAX_K
from indexer.request import MODES as MODES
from indexer.request import SearchRequest
from indexer.store.contract import AllowedChunks, SearchStore
from indexer.store.keywords import query_words
from indexer.store.records import ChunkFilter

NO_FILTER = ChunkFilter()
#: Share of the cosine in hybrid evidence, chosen on five collections at once (bench/bench_ranking.py
#: --compare): from 0.4 to 0.6, SciFact's nDCG@10 goes from 0.740 to 0.730 and the paraphrased
#: questions of the doc sets gain; exact names move by 0.01. 0.55 is the one weight that keeps every
#: question set at least as good as before and SciFact above 0.73.
VECTOR_WEIGHT = 0.55
_WORD = re.compile(r"\w+", re.UNICODE)
#: Queries of up to this many words also look for their neighbouring words joined (keyword_terms).
MAX_JOINED_WORDS = 6
#: A question of up to this many words keeps its stop words: "how to", "the who" ask for them.
MAX_UNFILTERED_WORDS = 2
#: Words joined as names are: ``a.b``, ``a::b``, ``a_b``, ``a-b``, ``a/b``, ``a()``.
_JOINED_NAME = re.compile(r"\w(?:\.|::|-|/)\w|\w_\w|\w\(\)")
#: A query that is one name as developers type it: an identifier, maybe with its namespace or a call's
#: parentheses (``Path``, ``std::io::Stdout``, ``os.path.join``, ``add_library``, ``open()``).
_NAME_QUERY = re.compile(r"[^\W\d]\w*(?:(?:::|\.|->|/)[^\W\d]\w*)*(?:\(\))?")
_NAME_SEPARATOR = re.compile(r"::|\.|->|/")
#: A name whose parts the keyword index holds as separate words (it keeps ``_`` inside a word).
_SPACED_NAME = re.compile(r"\w(?:\.|::|-|/|->)\w")
#: A manual section or an empty call at the end of a title: ``open(2)``, ``getenv()``.
_TITLE_SUFFIX = re.compile(r"\s*\((?:\d\w*)?\)$")
#: Where a camelCase word's parts meet: ``maxRetry``, ``MaxRetry``, ``HTTPServer`` (before "Server").
_CAMEL_HUMP = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")
#: Words too common to help a keyword search; left out of a question of three words or more, unless
#: they are part of a name or nothing else is left.
STOPWORDS = frozenset(
    """a about an and any are as at be been being but by can could did do does doing for from had has
    have how i if in into is it its just me my no not of on or our ours should so some such than that
    the their them then there these they this those to too up very was we were what when where which
    while who whom why will with would you your yours""".split()
)


@dataclass(frozen=True)
class Query:
    """A question as typed, read for the syntax people know from search engines: ``"exact phrase"``
    (the chunk must hold it), ``-word`` or ``-"a phrase"`` (the chunk must not), ``word*`` (any word
    it begins, in the keyword search). Whatever else is in the text is words; a quote left open is
    read as a word's character, and nothing is ever passed to a store as an operator. A minus
    before a number or a single letter is text, not an operator: ``-2`` in ``E2F-1, -2, -3`` or
    ``-l`` in ``ls -l`` are what the chunk should hold, never what it must not."""

    text: str  # what the model embeds: the words and phrases, without the operators
    words: str  # the plain words, for the keyword search
    phrases: tuple[str, ...] = ()
    excluded: tuple[str, ...] = ()
    prefixes: tuple[str, ...] = ()

    @classmethod
    def parse(cls, question: str) -> Query:
        kept: list[str] = []
        words: list[str] = []
        phrases: list[str] = []
        excluded: list[str] = []
        prefixes: list[str] = []
        for match in _QUERY_PART.finditer(question):
            minus, quoted, bare = match.group(1), match.group(2), match.group(3)
            text = quoted if quoted is not None else bare
            if not _WORD.search(text):
                continue
            if minus and quoted is None and not _EXCLUDABLE.match(bare):
                minus, bare = "", minus + bare
            if minus:
                excluded.append(" ".join(_WORD.findall(text)))
            elif quoted is not None:
                phrases.append(" ".join(_WORD.findall(text)))
                kept.append(quoted)
            elif bare.endswith("*") and _WORD.fullmatch(bare[:-1]):
                prefixes.append(bare[:-1].lower())
                kept.append(bare[:-1])
            else:
                words.append(bare)
                kept.append(bare)
        return cls(" ".join(kept), " ".join(words), tuple(phrases), tuple(excluded), tuple(prefixes))

    def with_phrases_as_words(self) -> Query:
        """The same question with its quoted phrases read as plain words."""
        words = " ".join([self.words, *self.phrases]).strip()
        return replace(self, words=words, phrases=())

    def keyword_terms(self) -> list[str]:
        """The terms of the keyword search: the words (see :func:`keyword_terms`), each phrase, and
        each prefix marked with its ``*``."""
        return [*keyword_terms(self.words), *self.phrases, *(prefix + "*" for prefix in self.prefixes)]

    def keyword_count(self) -> int:
        """How many terms the keyword scale counts (see :func:`keyword_ceiling`)."""
        return len(keyword_words(self.words)) + len(self.phrases) + len(self.prefixes)


#: A part of a question: an optional leading ``-``, then a quoted phrase or a run of non-spaces.
_QUERY_PART = re.compile(r'(-?)(?:"([^"]*)"|(\S+))')
#: What a ``-`` must be followed by to leave a word out: a letter, then another word character.
_EXCLUDABLE = re.compile(r"[^\W\d_]\w")


@dataclass(frozen=True)
class Calibration:
    """A fixed logistic map from a hit's strength to a score in 0..1 (Platt scaling)."""

    slope: float
    offset: float

    def __call__(self, strength: float) -> float:
        return 1.0 / (1.0 + math.exp(-(self.slope * strength + self.offset)))


#: The least inverse document frequency BM25 gives a word in SQLite's FTS5 and in the PostgreSQL store
#: (a word in half the chunks or more would get none, or less than none).
BM25_SMALLEST_IDF = 1e-6
#: The keyword share (what the blend ranks by) of a chunk is its BM25 over the best match's, but
#: never over less than the ceiling of this many words: a question of up to six words is blended on
#: its evidence, whose ceiling keeps a match of one common word among them weak, and a longer
#: question's best match counts as a six-word question's would, however many words it lacks.
SHARE_FLOOR_WORDS = 12
#: How much lower than a cosine the same keyword evidence counts in a hit's strength: a hit
#: whose words name something rare (evidence near 1) is as strong as a close paraphrase, a few words
#: in common are weak. Fitted with the map below, by likelihood (bench/bench_ranking.py --fit).
KEYWORD_DISCOUNT = 0.4
#: Keyword mode's map, of the keyword evidence less :data:`KEYWORD_DISCOUNT`: the same for every
#: model, since no model takes part. Fitted by ``bench/bench_ranking.py --fit`` on the CMake manual and
#: SciFact (half of the off-topic questions): the slope by logistic regression of real against
#: off-topic questions (their top hits), the 0.5 point where 3% of the real questions' top hits fall
#: below it. The man pages, Rust's docs and the sample corpus are the held-out check.
KEYWORD_CALIBRATION = Calibration(slope=28.569, offset=-10.421)  # 0.5 at evidence 0.765


@dataclass(frozen=True)
class ModelCalibration:
    """One model's map from a hit's strength on the cosine's scale (:func:`strengths`: the cosine
    in vector mode, the stronger of cosine and discounted keyword evidence in hybrid mode) to the
    score shown. Cosines run on another scale with every model, so a map fitted for one says nothing
    of another."""

    cosine: Calibration

    def of(self, mode: str) -> Calibration:
        return KEYWORD_CALIBRATION if mode == "keyword" else self.cosine

    def describe(self) -> dict[str, dict[str, float]]:
        """Each map, for ``index status``: (slope, offset) of the logistic."""
        maps = {"vector and hybrid": self.cosine, "keyword": KEYWORD_CALIBRATION}
        return {name: {"slope": found.slope, "offset": found.offset} for name, found in maps.items()}


#: The model each calibration was fitted for (its recorded name), fitted as keyword mode's is: the
#: slope by logistic regression of real against off-topic questions' top-hit strengths, the 0.5 point
#: where 3% of real questions' top hits fall below it. Other models' scores still fall in rank
#: order, through the default model's map, but are not calibrated: no default threshold applies in
#: vector and hybrid mode, and ``index status`` says so.
CALIBRATIONS = {
    "all-MiniLM-L6-v2-int8": ModelCalibration(cosine=Calibration(slope=28.569, offset=-10.421)),
    # on the CMake manual and SciFact's seeded subset (300 queries, 1,000 abstracts), at the shared
    # keyword discount: bge's cosines crowd higher and closer together than MiniLM's
    "bge-small-en-v1.5": ModelCalibration(cosine=Calibration(slope=75.745, offset=-49.33)),  # 0.5 at 0.651
}
#: The model whose maps order the scores of a model with none.
CALIBRATED_MODEL = "all-MiniLM-L6-v2-int8"
#: The score under which a hit is more likely noise than an answer: 97% of real questions' top hits
#: score above it on the fit collections.
DEFAULT_MIN_SCORE = 0.5
#: The same for the re-ranker's probability, whatever model found the candidates. The cross-encoder
#: puts off-topic questions' best candidates near 0 (under 0.01 for 97% of the sample corpus's), but
#: it also puts there the answers of many long, paraphrased questions, which MS MARCO's short web
#: searches did not teach it: a higher cut would silence them too (bench/RESULTS.md, bench_rerank).
RERANK_MIN_SCORE = 0.01
#: How much a candidate's fused rank counts against the cross-encoder's logit when re-ranking: the
#: candidates are ordered by ``logit - FUSED_RANK_WEIGHT * ln(fused rank)``, so the cross-encoder
#: moves a candidate up past a better-fused one only when it reads it as clearly better (the fifth
#: passes the first at 3.2 logits more). Alone, the cross-encoder (trained on short web searches)
#: lost to the fusion on SciFact and on long written questions; fitted on 100 SciFact train queries
#: (bench/RESULTS.md, issue 22).
FUSED_RANK_WEIGHT = 2.0
#: The fewest distinct words of a question that :func:`defining_first` reads as asking for the things
#: a chunk defines: one word is a name, for :func:`named_first`.
MIN_DEFINED_WORDS = 2
#: The least score of a page named exactly as a one-name question asks (:func:`named_first`): it is
#: what the user typed, a strong hit whatever its words' evidence.
NAMED_PAGE_SCORE = 0.9


@dataclass(frozen=True)
class Hit:
    """One search result: where it is, how well it matched, and its text.

    ``score`` is the calibrated score, 0..1 in every mode: hits scoring under
    :data:`DEFAULT_MIN_SCORE` are more likely noise than answers. ``vector_score`` is the cosine
    similarity and ``keyword_score`` the keyword evidence (BM25 over the query's ceiling), each where
    the chunk was found by that search.
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
        return format_citation(self.path, self.start_line, self.end_line, self.locator)

    def to_dict(self) -> dict[str, object]:
        return asdict(self)


#: Scores chunks against a question: the probability that each answers it, in order.
Rerank = Callable[[str, Sequence[StoredChunk]], Sequence[float]]


def search(
    store: SearchStore,
    backend: EmbeddingBackend | None,
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
    ``calibration`` maps the hits' strengths to scores (default: the built-in model's).
    ``request.min_score`` only cuts: the scores fall in rank order, so it keeps a first part."""
    query = Query.parse(request.text)
    if not query.text:
        raise ConfigError(f"the question {request.text!r} has nothing to search for, only words to leave out")
    depth = request.candidates if request.rerank else request.k
    found = Found.search(store, backend, query, depth, request.mode, chunk_filter)
    if query.phrases and not found.order:
        found = Found.search(store, backend, query.with_phrases_as_words(), depth, request.mode, chunk_filter)
    if request.rerank:
        if rerank is None:
            raise ConfigError("re-ranking needs a re-ranker")
        ranked = found.reranked(store, request, rerank)
    else:
        ranked = found.scored(calibration or CALIBRATIONS[CALIBRATED_MODEL])
    if request.min_score is not None:
        ranked = [(chunk_id, score) for chunk_id, score in ranked if score >= request.min_score]
    return found.hits(store, ranked[: request.k])


@dataclass
class Found:
    """What the searches of one query found: each chunk's cosine and keyword scores, and the order
    of the answer (with the chunks of the pages named as asked)."""

    mode: str
    order: list[int]
    vector: dict[int, float]
    keyword: KeywordScores
    chunks: dict[int, StoredChunk]
    named: frozenset[int] = frozenset()

    @classmethod
    def search(
        cls,
        store: SearchStore,
        backend: EmbeddingBackend | None,
        query: Query,
        k: int,
        mode: str,
        chunk_filter: ChunkFilter,
    ) -> Found:
        chunk_filter = replace(chunk_filter, phrases=query.phrases, excluded=query.excluded)
        allowed = store.chunk_filter(chunk_filter) if chunk_filter else None
        pool = k if mode != "hybrid" else max(4 * k, 50)
        vector_scores: dict[int, float] = {}
        keyword = KeywordScores({}, {})
        if mode in ("vector", "hybrid"):
            if backend is None:
                raise ConfigError("vector search needs an embedding backend")
            vector = embed_query(backend, query.text, store.dimension)
            nearest = store.nearest(vector, pool, allowed)
            vector_scores = {chunk_id: 1.0 - distance for chunk_id, distance in nearest}
        if mode in ("keyword", "hybrid"):
            keyword = keyword_scores(store, query, pool, allowed)
        if mode == "hybrid":
            evidence = fuse(vector_scores, keyword.shares, cut=len(keyword.shares) >= pool)
        else:
            evidence = vector_scores if mode == "vector" else keyword.evidence
        order = [chunk_id for chunk_id, _ in sorted(evidence.items(), key=_best_first)]
        if mode == "hybrid":
            order = with_keyword_best(order, k, keyword.evidence)
        chunks: dict[int, StoredChunk] = {}
        named: frozenset[int] = frozenset()
        name = asked_name(query.text) if mode != "vector" else None
        if name is not None:
            chunks = store.chunks_by_ids(order)
            order, named = named_first(order, chunks, name)
        elif mode != "vector":
            words = set(keyword_words(query.words))
            if len(words) >= MIN_DEFINED_WORDS:
                chunks = store.chunks_by_ids(order[:k])
                order = defining_first(order, k, chunks, words)
        return cls(mode, order, vector_scores, keyword, chunks, named)

    def scored(self, calibration: ModelCalibration) -> list[tuple[int, float]]:
        """(chunk id, score) in the answer's order: each hit's strength (:func:`strengths`) through
        the mode's map, then held in rank order (:func:`in_rank_order`)."""
        calibrate = calibration.of(self.mode)
        found = strengths(self.mode, self.order, self.vector, self.keyword.evidence)
        scores = [calibrate(strength) for strength in found]
        return list(zip(self.order, in_rank_order(scores, self.floors()), strict=True))

    def reranked(self, store: SearchStore, request: SearchRequest, rerank: Rerank) -> list[tuple[int, float]]:
        """(chunk id, the re-ranker's probability) of the fused best ``request.candidates``, ranked by
        it; the pages named as a one-name question asks stay first, as without re-ranking."""
        chunks = self.read(store, self.order[: request.candidates])
        candidates = [chunk_id for chunk_id in self.order[: request.candidates] if chunk_id in chunks]
        read = rerank(request.text, [chunks[chunk_id] for chunk_id in candidates])
        probability = dict(zip(candidates, read, strict=True))
        named = [chunk_id for chunk_id in candidates if chunk_id in self.named]
        others = reranked_order([c for c in candidates if c not in self.named], probability)
        order = named + others
        scores = in_rank_order([float(probability[chunk_id]) for chunk_id in order], self.floors(order))
        return list(zip(order, scores, strict=True))

    def floors(self, order: list[int] | None = None) -> list[float]:
        """The least score of each hit: :data:`NAMED_PAGE_SCORE` for a page named as asked."""
        return [
            NAMED_PAGE_SCORE if chunk_id in self.named else 0.0
            for chunk_id in (self.order if order is None else order)
        ]

    def read(self, store: SearchStore, chunk_ids: list[int]) -> dict[int, StoredChunk]:
        """The chunks read so far, with those of ``chunk_ids`` not yet read: what the re-ranker and
        the hits need, each chunk read from the store once."""
        missing = [chunk_id for chunk_id in chunk_ids if chunk_id not in self.chunks]
        if missing:
            self.chunks = {**self.chunks, **store.chunks_by_ids(missing)}
        return self.chunks

    def hits(self, store: SearchStore, ranked: list[tuple[int, float]]) -> list[Hit]:
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
            )
            for chunk_id, score in ranked
            if chunk_id in chunks
        ]


def reranked_order(candidates: list[int], probability: dict[int, float]) -> list[int]:
    """``candidates`` (in fused order) ranked by the cross-encoder's logit less
    :data:`FUSED_RANK_WEIGHT` times the log of their fused rank (1 for the first)."""

    def key(place: int) -> tuple[float, int]:
        chance = min(max(float(probability[candidates[place]]), 1e-12), 1 - 1e-12)
        logit = math.log(chance) - math.log1p(-chance)
        return (-(logit - FUSED_RANK_WEIGHT * math.log(place + 1)), place)

    return [candidates[place] for place in sorted(range(len(candidates)), key=key)]


def in_rank_order(scores: list[float], floors: list[float]) -> list[float]:
    """``scores`` (each raised to its floor) made to fall in rank order: a hit scores as the
    strongest hit ranked at or below it. So the score shown is how likely an answer is here or
    further down the list, and a threshold cuts only the tail where none is likely, keeping the
    order and every hit strong on its own."""
    shown = [max(score, floor) for score, floor in zip(scores, floors, strict=True)]
    for place in range(len(shown) - 2, -1, -1):
        shown[place] = max(shown[place], shown[place + 1])
    return shown


def with_keyword_best(order: list[int], k: int, evidence: dict[int, float]) -> list[int]:
    """``order`` with the best keyword match among its first ``k`` whenever keyword mode would show
    it at the default threshold: the default mode never loses a strong keyword hit."""
    if not evidence:
        return order
    best = max(evidence, key=lambda chunk_id: (evidence[chunk_id], -chunk_id))
    if KEYWORD_CALIBRATION(evidence[best] - KEYWORD_DISCOUNT) < DEFAULT_MIN_SCORE:
        return order
    place = order.index(best) if best in order else None
    if place is None or place < k:
        return order
    return [*order[: k - 1], best, *order[k - 1 : place], *order[place + 1 :]]


def asked_name(text: str) -> str | None:
    """The name a query asks for when it is one name, else None: its last part (``Stdout`` of
    ``std::io::Stdout``, ``join`` of ``os.path.join``, ``open`` of ``open()``)."""
    text = text.strip()
    if not _NAME_QUERY.fullmatch(text):
        return None
    return _NAME_SEPARATOR.split(text.removesuffix("()"))[-1]


def page_names(chunk: StoredChunk) -> set[str]:
    """The names a chunk's page is known by: the last word of its title (its first heading, a manual
    section or ``()`` dropped: ``Struct Path``, ``add_library``, ``open(2)``) and the parts of its
    file name before the extension that start with a letter (``struct.Path.html``, ``open.2.txt``,
    ``CMAKE_BUILD_TYPE.rst``); and those the chunk's own text declares it defines
    (:func:`indexer.definitions.declared_names`: ``.. confval:: intersphinx_mapping``, a man page's
    NAME line)."""
    title = _TITLE_SUFFIX.sub("", chunk.title)
    names = set(title.split()[-1:])
    file_name = chunk.path.rsplit("/", 1)[-1]
    parts = file_name.split(".")[:-1] if "." in file_name else [file_name]
    return names | {part for part in parts if part[:1].isalpha()} | declared_names(chunk.text)


def defining_first(order: list[int], k: int, chunks: dict[int, StoredChunk], words: set[str]) -> list[int]:
    """``order`` with those of its first ``k`` chunks whose section declares as definitions
    (:func:`indexer.definitions.declared_names`, over the section's chunks among them) most of the
    question's words first, each side in its own order: ``note warning and tip boxes`` asks for three of the
    directives the section that declares ``.. note::``, ``.. tip::`` and ``.. warning::`` defines,
    whatever the words' counts say. What a document declares does not fade with the question's
    length, nor depend on how often other pages use a word."""
    section = {
        chunk_id: (chunks[chunk_id].path, chunks[chunk_id].heading)
        for chunk_id in order[:k]
        if chunk_id in chunks
    }
    declared: dict[tuple[str, str], set[str]] = {}
    for chunk_id, place in section.items():
        names = {name.lower() for name in declared_names(chunks[chunk_id].text)}
        declared.setdefault(place, set()).update(names & words)
    defining = [chunk_id for chunk_id, place in section.items() if 2 * len(declared[place]) > len(words)]
    chosen = set(defining)
    return defining + [chunk_id for chunk_id in order if chunk_id not in chosen]


def named_first(
    order: list[int], chunks: dict[int, StoredChunk], name: str
) -> tuple[list[int], frozenset[int]]:
    """``order`` with the chunks of the pages known by ``name`` (case as typed) first, each side in
    its own order, and those chunks. Developers type the name of what they look for, and the page
    named after it is the answer even where pages that use the name more often win on the words:
    ``Path`` finds ``Struct Path`` before ``PathBuf``'s page, ``read`` the function ``read`` before
    module ``io``'s index (bench/bench_ranking.py: Rust's std exact names top-1 0.83 to 0.995)."""
    named = [chunk_id for chunk_id in order if chunk_id in chunks and name in page_names(chunks[chunk_id])]
    chosen = frozenset(named)
    return named + [chunk_id for chunk_id in order if chunk_id not in chosen], chosen


def calibration_for(model: str | None) -> ModelCalibration | None:
    """The maps fitted for ``model`` (its recorded name), or None for a model with none."""
    return CALIBRATIONS.get(model or "")


def default_min_score(mode: str, model: str | None, rerank: bool = False) -> float | None:
    """The threshold every front end applies unless told otherwise: :data:`RERANK_MIN_SCORE` with
    re-ranking, :data:`DEFAULT_MIN_SCORE` where the scores are calibrated (keyword mode always; the
    others for a model with a calibration), none elsewhere, where a fixed threshold could drop good
    answers."""
    if rerank:
        return RERANK_MIN_SCORE
    return DEFAULT_MIN_SCORE if mode == "keyword" or calibration_for(model) else None


def embed_query(backend: EmbeddingBackend, text: str, dimension: int | None):
    """The question's vector, made the way the index's documents were (query prefix included) and
    held to the same vector check as any stored vector."""
    # imported here: numpy comes with it, which `index query` answered by a server never needs
    from indexer.pipeline.vector_check import check_vectors

    vectors = backend.embed([backend.query_prefix + text])
    return check_vectors(vectors, 1, dimension)[0]


def keyword_words(text: str) -> list[str]:
    """The words of a keyword search: any of them matches; the store ranks chunks with more of the
    rarer words higher. A word typed twice counts twice, as BM25 counts a repeated query word. Every
    word the user typed can match: stop words are left out only of a question of three words or
    more, never from a name (``collections.Where``, ``os.path.join``, ``--leak-check``, ``open()``),
    and a question of stop words alone searches them. A run of Chinese, Japanese or Korean letters
    is the words the index holds it as (:func:`indexer.store.keywords.query_words`: its pairs of
    characters), each one counted."""
    tokens = [
        (token, [term for word in _WORD.findall(token) for term in query_words(word.lower())])
        for token in text.split()
    ]
    everything = [word for _, words in tokens for word in words]
    if len(tokens) <= MAX_UNFILTERED_WORDS:
        return everything
    kept = [word for token, words in tokens for word in words if is_name(token) or word not in STOPWORDS]
    return kept or everything


def is_name(token: str) -> bool:
    """Whether a token is a name as code spells it: words joined by ``.``, ``::``, ``_``, ``-``,
    ``/`` or followed by ``()``."""
    return bool(_JOINED_NAME.search(token))


def keyword_terms(text: str) -> list[str]:
    """What the keyword search looks for: the words of :func:`keyword_words`, and in a short query
    each run of two or three neighbouring words joined as an identifier would spell them (``read to
    string`` also finds ``read_to_string``, ``buf reader`` finds ``BufReader``) and each camelCase
    word in snake_case (``MaxRetries`` finds ``max_retries``), so a name is found with or without
    its separators; and each name whose words the index keeps apart (``collections.Where``) as a
    phrase, so the chunk that spells it scores above those that use its words apart. A joined form
    that no chunk holds costs a lookup: in a long question they tripled the keyword search's time on
    SciFact, for nothing."""
    names = [" ".join(_WORD.findall(token)).lower() for token in text.split() if _SPACED_NAME.search(token)]
    words = [word.lower() for word in _WORD.findall(text)]
    if len(words) > MAX_JOINED_WORDS:
        return [*keyword_words(text), *dict.fromkeys(names)]
    runs = [words[start : start + size] for size in (2, 3) for start in range(len(words) - size + 1)]
    joined = [form for run in runs for form in ("_".join(run), "".join(run))]
    snake = [_CAMEL_HUMP.sub("_", word).lower() for word in _WORD.findall(text) if _CAMEL_HUMP.search(word)]
    extra = [term for term in dict.fromkeys([*names, *joined, *snake]) if term not in words]
    return [*keyword_words(text), *extra]


@dataclass(frozen=True)
class KeywordScores:
    """A keyword search's matches on the two scales: ``evidence`` (BM25 over the query's ceiling:
    how strong a hit is, for its score) and ``shares`` (BM25 over the best match's: what the hybrid
    blend ranks by)."""

    evidence: dict[int, float]
    shares: dict[int, float]


def keyword_scores(
    store: SearchStore, query: Query, k: int, allowed: AllowedChunks | None = None
) -> KeywordScores:
    """The ``k`` best keyword matches of ``query`` on both scales (higher is better)."""
    matches = store.keyword_matches(query.keyword_terms(), k, allowed)
    if not matches:
        return KeywordScores({}, {})
    chunks, words = store.chunk_count(), query.keyword_count()
    ceiling = keyword_ceiling(words, chunks)
    best = max(-bm25 for _, bm25 in matches)
    scale = max(best, keyword_ceiling(min(words, SHARE_FLOOR_WORDS), chunks))
    return KeywordScores(
        evidence={chunk_id: -bm25 / ceiling for chunk_id, bm25 in matches},
        shares={chunk_id: -bm25 / scale for chunk_id, bm25 in matches},
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
    """How strongly each hit of ``order`` answers the question, on the cosine's scale, from its own
    evidence alone: in vector mode its cosine, in keyword mode its keyword evidence less
    ``discount``, in hybrid mode the stronger of its cosine (a chunk only the keyword search found:
    the vector list's last, as :func:`fuse` gives it) and its keyword evidence less ``discount``."""
    if mode == "vector":
        return [vector_scores[chunk_id] for chunk_id in order]
    if mode == "keyword":
        return [keyword_scores[chunk_id] - discount for chunk_id in order]
    floor = min(vector_scores.values(), default=0.0)
    return [
        max(vector_scores.get(chunk_id, floor), keyword_scores.get(chunk_id, 0.0) - discount)
        for chunk_id in order
    ]


def _best_first(item: tuple[int, float]) -> tuple[float, int]:
    return (-item[1], item[0])
