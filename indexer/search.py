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

The score users see, between 0 and 1, says how likely a hit answers the
question, so that one threshold means the same in every query and every mode: a fixed logistic map
(:data:`CALIBRATION`) of the hit's own *strength* (:func:`strengths`). In vector mode the strength is
the cosine; in keyword mode the keyword evidence less :data:`KEYWORD_DISCOUNT`; in hybrid mode the
stronger of the two, all through the same map, so a score means the same in every mode and a hit that
keyword mode shows at a score is in the hybrid answer at that score or more.
The blend ranks well but judges badly: an off-topic question sharing a rare word or two with a
collection reached the blend of a paraphrase that shares none, so a fixed map of the blend missed
both ways (SciFact, the sample corpus; ``bench/bench_ranking.py --calibrations`` measures the
candidates). A hybrid hit may therefore score above the hit ranked before it, and a threshold drops
the weak hits wherever they stand. Min-max normalising each list per query, as this module did
before, gave the best hit of any query a high score (a question about banana bread over a build
tool's manual scored 0.70).
"""

from __future__ import annotations

import math
import re
from dataclasses import asdict, dataclass, replace

from indexer.backends.base import EmbeddingBackend
from indexer.errors import ConfigError
from indexer.store.contract import IndexStore
from indexer.store.records import ChunkFilter, StoredChunk

MODES = ("hybrid", "vector", "keyword")
#: The most hits one search returns: enough to read a whole manual, small enough to answer quickly.
MAX_K = 10_000
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
KEYWORD_DISCOUNT = 0.35
_VECTOR_AND_HYBRID = Calibration(slope=30.675, offset=-11.727)  # 0.5 at a strength of 0.38
#: Fitted by ``bench/bench_ranking.py --fit`` for the default model (all-MiniLM-L6-v2) on the CMake
#: manual and SciFact (half of the off-topic questions): the slope by logistic regression of real
#: against off-topic questions (their top hits), the 0.5 point where 3% of the real questions' top hits
#: fall below it. Every mode shares the one map of the strength: keyword mode's own map, fitted the
#: same way, showed off-topic questions sharing one rare word with the index at 0.5 and above, so the
#: default mode could not both keep them out and keep every hit keyword mode showed. The man pages,
#: Rust's docs and the sample corpus are the held-out check (bench/data/README.md).
CALIBRATION = {mode: _VECTOR_AND_HYBRID for mode in ("vector", "keyword", "hybrid")}
#: The model the vector and hybrid calibrations were fitted for; other models' cosines run on other
#: scales, so their scores are only ordered, not calibrated, and no threshold is applied by default.
CALIBRATED_MODEL = "all-MiniLM-L6-v2-int8"
#: The score under which a hit is more likely noise than an answer: 97% of real questions' top hits
#: score above it on the fit collections.
DEFAULT_MIN_SCORE = 0.5


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
    so ``k`` hits come back whenever ``k`` chunks pass the filters. A quoted phrase that no chunk
    holds is searched as its words: quote marks in a pasted question never empty the answer alone."""
    if mode not in MODES:
        raise ConfigError(f"unknown search mode {mode!r} (choose one of: {', '.join(MODES)})")
    if k <= 0:
        return []
    query = Query.parse(text)
    if not query.text:
        raise ConfigError(f"the question {text!r} has nothing to search for, only words to leave out")
    found = Found.search(store, backend, query, k, mode, chunk_filter)
    if query.phrases and not found.order:
        found = Found.search(store, backend, query.with_phrases_as_words(), k, mode, chunk_filter)
    return found.hits(store, k, min_score)


@dataclass
class Found:
    """What the searches of one query found: each chunk's cosine and keyword scores, and the order
    of the answer."""

    mode: str
    order: list[int]
    vector: dict[int, float]
    keyword: KeywordScores
    chunks: dict[int, StoredChunk]

    @classmethod
    def search(
        cls,
        store: IndexStore,
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
            evidence = fuse(vector_scores, keyword.shares)
        else:
            evidence = vector_scores if mode == "vector" else keyword.evidence
        # ranked by the evidence itself: the calibrated score of two strong hits can round to the same 1.0
        order = [chunk_id for chunk_id, _ in sorted(evidence.items(), key=_best_first)]
        chunks: dict[int, StoredChunk] = {}
        name = asked_name(query.text) if mode != "vector" else None
        if name is not None:
            chunks = store.chunks_by_ids(order)
            order = named_first(order, chunks, name)
        return cls(mode, order, vector_scores, keyword, chunks)

    def scored(self) -> list[tuple[int, float]]:
        """(chunk id, calibrated score) in the answer's order."""
        found = strengths(self.mode, self.order, self.vector, self.keyword.evidence)
        calibrate = CALIBRATION[self.mode]
        return [(chunk_id, calibrate(strength)) for chunk_id, strength in zip(self.order, found, strict=True)]

    def hits(self, store: IndexStore, k: int, min_score: float | None) -> list[Hit]:
        ranked = self.scored()
        if min_score is not None:
            ranked = [(chunk_id, score) for chunk_id, score in ranked if score >= min_score]
        if self.mode == "hybrid":
            ranked = with_keyword_best(ranked, k, self.keyword.evidence)
        ranked = ranked[:k]
        chunks = self.chunks or store.chunks_by_ids([chunk_id for chunk_id, _ in ranked])
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


def with_keyword_best(
    ranked: list[tuple[int, float]], k: int, evidence: dict[int, float]
) -> list[tuple[int, float]]:
    """``ranked`` with the best keyword match among its first ``k`` whenever keyword mode would show
    it at the default threshold: the default mode never loses a strong keyword hit."""
    if not evidence:
        return ranked
    best = max(evidence, key=lambda chunk_id: (evidence[chunk_id], -chunk_id))
    if CALIBRATION["keyword"](evidence[best] - KEYWORD_DISCOUNT) < DEFAULT_MIN_SCORE:
        return ranked
    place = next((index for index, (chunk_id, _) in enumerate(ranked) if chunk_id == best), None)
    if place is None or place < k:
        return ranked
    return [*ranked[: k - 1], ranked[place], *ranked[k - 1 : place], *ranked[place + 1 :]]


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
    ``CMAKE_BUILD_TYPE.rst``)."""
    title = _TITLE_SUFFIX.sub("", chunk.title)
    names = set(title.split()[-1:])
    file_name = chunk.path.rsplit("/", 1)[-1]
    parts = file_name.split(".")[:-1] if "." in file_name else [file_name]
    return names | {part for part in parts if part[:1].isalpha()}


def named_first(order: list[int], chunks: dict[int, StoredChunk], name: str) -> list[int]:
    """``order`` with the chunks of the pages known by ``name`` (case as typed) first, each side in
    its own order. Developers type the name of what they look for, and the page named after it is
    the answer even where pages that use the name more often win on the words: ``Path`` finds
    ``Struct Path`` before ``PathBuf``'s page, ``read`` the function ``read`` before module ``io``'s
    index (bench/bench_ranking.py: Rust's std exact names top-1 0.83 to 0.995)."""
    named = [chunk_id for chunk_id in order if chunk_id in chunks and name in page_names(chunks[chunk_id])]
    if not named:
        return order
    chosen = set(named)
    return named + [chunk_id for chunk_id in order if chunk_id not in chosen]


def default_min_score(mode: str, model: str | None) -> float | None:
    """The threshold `index query` applies unless told otherwise: :data:`DEFAULT_MIN_SCORE` where the
    scores are calibrated (keyword mode always; the others for the model the calibration was fitted
    for), none elsewhere, where a fixed threshold could drop good answers."""
    return DEFAULT_MIN_SCORE if mode == "keyword" or model == CALIBRATED_MODEL else None


def embed_query(backend: EmbeddingBackend, text: str, dimension: int | None):
    """The question's vector, made the way the index's documents were (query prefix included) and
    held to the same vector check as any stored vector."""
    # imported here: numpy comes with it, which `index query` answered by a server never needs
    from indexer.validation import check_vectors

    vectors = backend.embed([backend.query_prefix + text])
    return check_vectors(vectors, 1, dimension)[0]


def keyword_words(text: str) -> list[str]:
    """The words of a keyword search: any of them matches; the store ranks chunks with more of the
    rarer words higher. A word typed twice counts twice, as BM25 counts a repeated query word. Every
    word the user typed can match: stop words are left out only of a question of three words or
    more, never from a name (``collections.Where``, ``os.path.join``, ``--leak-check``, ``open()``),
    and a question of stop words alone searches them."""
    tokens = [(token, [word.lower() for word in _WORD.findall(token)]) for token in text.split()]
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


def keyword_scores(store: IndexStore, query: Query, k: int, allowed: object = None) -> KeywordScores:
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


def keyword_evidence(store: IndexStore, query: Query, k: int, allowed: object = None) -> dict[int, float]:
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


def fuse(vector_scores: dict[int, float], keyword_scores: dict[int, float]) -> dict[int, float]:
    """Hybrid evidence of every chunk found by either search. A chunk the vector search did not
    return is given the cosine of the last one it did: it is no nearer than that, and often near it."""
    floor = min(vector_scores.values(), default=0.0)
    return {
        chunk_id: VECTOR_WEIGHT * vector_scores.get(chunk_id, floor)
        + (1 - VECTOR_WEIGHT) * keyword_scores.get(chunk_id, 0.0)
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
