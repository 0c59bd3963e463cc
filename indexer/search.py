"""Stage 6: answer a question from the index: vector, keyword, or both fused, with calibrated scores.

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
   tests.
4. **What documents declare**: a question that is one name (``Path``, ``std::io::Stdout``) puts first
   the chunks of the pages named after it (:func:`named_first`); a question most of whose words a
   section declares as definitions puts that section first (:func:`defining_first`).
5. **Scores.** Each hit's :class:`Evidence` (its own strength, its gap below the hits ranked above
   it, its margin over what the collection gives non-answers, and in keyword and hybrid mode the
   share of the question's information the collection holds, :class:`Information`; keyword mode's
   strength is the share the hit holds) goes through the mode's logistic map
   fitted for the index's model (:data:`CALIBRATIONS`, :data:`KEYWORD_CALIBRATION`), fitted on
   collections of several kinds and checked on others: the score is the chance that the hit
   answers. Floors: a page named as a one-name question asks scores at least
   :data:`NAMED_PAGE_SCORE`; the chunks holding a one-word query's word best (in vector mode the
   nearest ones) at least :data:`DEFAULT_MIN_SCORE` (a lookup is answered in every mode whenever
   the index holds the word). Then each
   hit scores as the strongest hit ranked at or below it (:func:`in_rank_order`), so the list is
   sorted by the score and a threshold cuts only its tail: the first hit's score is the judgment of
   the whole answer ("nothing relevant here" under :data:`DEFAULT_MIN_SCORE`), and the hits under
   it keep scores of their own.
6. **Re-ranking** (optional): the fused best candidates are re-read by the cross-encoder
   (:mod:`indexer.rerank`) and ranked by its logit less :data:`FUSED_RANK_WEIGHT` times the log of
   their fused rank (:func:`reranked_order`); its probability is the score, under the same rule.

The blend ranks, but its value does not score: an off-topic question sharing a rare word with the
collection reaches the blend of a paraphrase sharing none, where the hit's own strength and its
margin keep them apart. The scale of each piece of evidence is chosen so that it does not move with
the question's length or with files unrelated to it: min-max normalising each list per query, as
this module once did, gave the best hit of any question a high score.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field, replace

from indexer.backends.base import EmbeddingBackend
from indexer.citations import format_citation
from indexer.errors import ConfigError
from indexer.records import HEADING_SEPARATOR, StoredChunk
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
        return cls(
            " ".join(kept), " ".join(words), *(tuple(dict.fromkeys(x)) for x in (phrases, excluded, prefixes))
        )

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
        return len(self.information_terms())

    def information_terms(self) -> list[str]:
        """The terms whose information the question asks for (:class:`Information`): its words (see
        :func:`keyword_words`), each phrase, each prefix marked with its ``*``; not the joined forms
        of :func:`keyword_terms`, which are other spellings of the same words."""
        return [*keyword_words(self.words), *self.phrases, *(prefix + "*" for prefix in self.prefixes)]


#: A part of a question: an optional leading ``-``, then a quoted phrase or a run of non-spaces.
_QUERY_PART = re.compile(r'(-?)(?:"([^"]*)"|(\S+))')
#: What a ``-`` must be followed by to leave a word out: a letter, then another word character.
_EXCLUDABLE = re.compile(r"[^\W\d_]\w")


@dataclass(frozen=True)
class Calibration:
    """A fixed logistic map from a hit's evidence (:class:`Evidence`) to the chance that it answers
    the question (Platt scaling over its four features), fitted by ``bench/studies/bench_scores.py --fit``."""

    strength: float
    gap: float
    margin: float
    offset: float
    known: float = 0.0
    together: float = 0.0

    def logit(self, evidence: Evidence) -> float:
        """The log-odds the map gives ``evidence``."""
        return (
            self.strength * evidence.strength
            + self.gap * evidence.gap
            + self.margin * evidence.margin
            + self.known * evidence.known
            + self.together * evidence.together
            + self.offset
        )

    def __call__(self, evidence: Evidence) -> float:
        return logistic(self.logit(evidence))


def logistic(logit: float) -> float:
    """The chance whose log-odds are ``logit``."""
    return 1.0 / (1.0 + math.exp(-min(max(logit, -50.0), 50.0)))


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
      word with an off-topic question does not (0 in the other modes)."""

    strength: float
    gap: float
    margin: float
    known: float = 1.0
    together: float = 0.0


#: The least inverse document frequency BM25 gives a word in SQLite's FTS5 and in the PostgreSQL store
#: (a word in half the chunks or more would get none, or less than none).
BM25_SMALLEST_IDF = 1e-6
#: The keyword share (what the blend ranks by) of a chunk is its BM25 over the best match's, but
#: never over less than the ceiling of this many words: a question of up to six words is blended on
#: its evidence, whose ceiling keeps a match of one common word among them weak, and a longer
#: question's best match counts as a six-word question's would, however many words it lacks.
SHARE_FLOOR_WORDS = 12
#: What BM25 gives a word at most in a chunk, as a multiple of its inverse document frequency: ``k1 + 1``
#: with the ``k1`` of 1.2 that both stores use, reached as the word repeats.
BM25_SATURATION = 2.2
#: How much lower than a cosine the same keyword evidence counts in a hit's strength in hybrid mode:
#: a hit whose words name something rare (evidence near 1) is as strong as a close paraphrase, a few
#: words in common are weak.
KEYWORD_DISCOUNT = 0.4
#: How deep every search reads its lists, whatever ``k``: the fusion, the rules and the scores see the
#: same candidates whether 10, 20 or 200 hits are asked for, so the first ten are the same.
CANDIDATE_DEPTH = 400
#: The rank whose evidence stands for what the collection gives a question's non-answers (the
#: ``margin`` of :class:`Evidence`): deep enough to be past the answers of any question.
REFERENCE_RANK = 100


@dataclass(frozen=True)
class ModeCalibration:
    """A mode's two maps. ``answer`` judges the whole answer: the chance that the question has an
    answer here, from the evidence of its strongest hit, which scores that chance. ``hit`` judges
    each hit: the other hits score the whole answer's odds times their own odds of being an answer
    over the strongest hit's, so that the "nothing relevant here" decision (the strongest hit under
    :data:`DEFAULT_MIN_SCORE`) does not flatten the scores of the hits it keeps: a hit nearly as
    strong as the strongest scores nearly as high, one far below it little."""

    answer: Calibration
    hit: Calibration

    def scores(self, evidence: Sequence[Evidence]) -> list[float]:
        """The score of each hit with ``evidence``."""
        if not evidence:
            return []
        odds = [self.hit.logit(one) for one in evidence]
        strongest = max(range(len(odds)), key=odds.__getitem__)
        judged = self.answer.logit(evidence[strongest])
        return [logistic(judged + own - odds[strongest]) for own in odds]


#: Keyword mode's maps: the same for every model, since no model takes part. Every map is fitted by
#: ``bench/studies/bench_scores.py --fit`` on collections of different kinds, others held out to check it
#: (bench/RESULTS.md, "Ranking quality"): each ``hit`` map by logistic regression of the top three
#: hits that answer against those that do not (off-topic questions' among them); each ``answer``
#: map by logistic regression of real questions against off-topic ones on their strongest hit, its
#: offset then set so that the default threshold leaves most off-topic questions without an answer.
KEYWORD_CALIBRATION = ModeCalibration(
    answer=Calibration(strength=0.895, gap=0.0, margin=0.596, offset=-4.292, known=2.945, together=3.65),
    hit=Calibration(strength=2.277, gap=0.0, margin=2.12, offset=-2.606),
)


@dataclass(frozen=True)
class ModelCalibration:
    """One model's maps for vector and hybrid mode (keyword mode's are :data:`KEYWORD_CALIBRATION`,
    every model's). Cosines run on another scale with every model, so a map fitted for one says
    nothing of another."""

    vector: ModeCalibration
    hybrid: ModeCalibration

    def of(self, mode: str) -> ModeCalibration:
        return {"keyword": KEYWORD_CALIBRATION, "vector": self.vector}.get(mode, self.hybrid)

    def describe(self) -> dict[str, dict[str, dict[str, float]]]:
        """Each mode's maps, for ``index status``: the weight of each feature and the offset."""
        return {mode: asdict(self.of(mode)) for mode in MODES}


#: Each packaged model's maps, under the name an index records for it, fitted as keyword mode's are
#: on that model's own indexes (a map fitted for one model says nothing of another). Other models'
#: scores still fall in rank order, through the default model's maps, but are not calibrated: no
#: default threshold applies in vector and hybrid mode, and ``index status`` says so.
CALIBRATIONS = {
    "all-MiniLM-L6-v2-int8": ModelCalibration(
        vector=ModeCalibration(
            answer=Calibration(strength=5.983, gap=0.0, margin=3.136, offset=-2.909),
            hit=Calibration(strength=3.66, gap=0.0, margin=2.887, offset=-3.04),
        ),
        hybrid=ModeCalibration(
            answer=Calibration(strength=6.177, gap=0.0, margin=2.481, offset=-2.786),
            hit=Calibration(strength=3.797, gap=0.0, margin=2.301, offset=-2.884),
        ),
    ),
    "bge-small-en-v1.5": ModelCalibration(
        vector=ModeCalibration(
            answer=Calibration(strength=5.842, gap=0.0, margin=2.45, offset=-4.178),
            hit=Calibration(strength=4.833, gap=0.129, margin=1.716, offset=-4.086),
        ),
        hybrid=ModeCalibration(
            answer=Calibration(strength=5.905, gap=0.0, margin=2.354, offset=-4.192),
            hit=Calibration(strength=4.527, gap=0.0, margin=1.908, offset=-3.852),
        ),
    ),
}
#: The model whose maps order the scores of a model with none.
CALIBRATED_MODEL = "all-MiniLM-L6-v2-int8"
#: The score under which a search's strongest hit says "nothing relevant here", and any hit is more
#: likely noise than an answer.
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
#: (bench/RESULTS.md, the re-ranker's calibration).
FUSED_RANK_WEIGHT = 2.0
#: The fewest distinct words of a question that :func:`defining_first` reads as asking for the things
#: a chunk defines: one word is a name, for :func:`named_first`.
MIN_DEFINED_WORDS = 2
#: The least score of a page named exactly as a one-name question asks (:func:`named_first`): it is
#: what the user typed, a strong hit whatever its words' evidence.
NAMED_PAGE_SCORE = 0.9
#: How many of the first hits the rules that reorder by what chunks declare read (:func:`lists_last`,
#: :func:`defining_first`): a fixed window, so that they do not depend on ``k``.
RULE_WINDOW = 20
#: The place the best keyword match takes in a hybrid answer, at the latest, whenever keyword mode
#: would show it (:func:`with_keyword_best`): the last of the hits a search returns by default.
KEYWORD_BEST_PLACE = 5
#: How many of the chunks holding a one-word query's word keep a score at the default threshold
#: (:data:`DEFAULT_MIN_SCORE`): a word typed alone is a lookup, answered whenever the index holds it.
LOOKUP_HITS = 3
#: Words by which a question asks for tests: then a test ranks where its evidence puts it.
TEST_WORDS = frozenset("test tests tested testing".split())
#: A name as code spells it, in a test's text.
_IDENTIFIER = re.compile(r"[^\W\d]\w*")
#: Words by which a question asks for a list of names (a changelog, release notes, an index, a
#: glossary) rather than for the page a name is about: a list ranks above that page only then.
LIST_WORDS = frozenset(
    """added changed changelog changes deprecated glossary history index new news notes release
    released releases removed version versions""".split()
)
#: The titles of pages that list names, as their documents declare them (a generated index, a
#: changelog, release notes, a glossary), compared in lower case without punctuation.
LIST_TITLES = (
    "index",
    "changelog",
    "change log",
    "changes",
    "release notes",
    "history",
    "news",
    "what s new",
    "glossary",
)
#: A heading that opens a changelog's entry: a version, maybe after ``v``, ``version`` or ``release``,
#: maybe followed by its date (``0.47.3 (August 24, 2025)``, ``[1.2.0] - 2024-01-31``, ``v2.0``).
_VERSION_HEADING = re.compile(r"\[?(?:v|version |release )?\d+\.\d+", re.IGNORECASE)
_TITLE_PUNCTUATION = re.compile(r"[^\w]+")


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
    depth = max(request.candidates if request.rerank else request.k, CANDIDATE_DEPTH)
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
    """What the searches of one query found: each chunk's cosine and keyword scores, the evidence the
    answer was ranked by, its order, and the chunks whose score has a floor (the pages named as
    asked, the chunks holding a one-word query's word)."""

    mode: str
    order: list[int]
    vector: dict[int, float]
    keyword: KeywordScores
    ranking: dict[int, float]
    chunks: dict[int, StoredChunk]
    named: frozenset[int] = frozenset()
    looked_up: frozenset[int] = frozenset()

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
        order = code_before_tests(lists_last(order, lists), chunks, words)
        named: frozenset[int] = frozenset()
        name = asked_name(query.text) if mode != "vector" else None
        if name is not None:
            chunks = {**chunks, **store.chunks_by_ids([c for c in order if c not in chunks])}
            order, named = named_first(order, chunks, name)
        elif mode != "vector":
            words = set(keyword_words(query.words))
            if len(words) >= MIN_DEFINED_WORDS:
                order = defining_first(order, RULE_WINDOW, chunks, words)
        looked_up: frozenset[int] = frozenset()
        if len(query.text.split()) == 1 and mode != "vector":
            order, looked_up = looked_up_first(order, keyword.evidence, lists, len(named))
        elif len(query.text.split()) == 1 and order and question_information(store, query, allowed).held:
            looked_up = frozenset(order[:LOOKUP_HITS])  # vector mode: the nearest chunks answer it
        return cls(mode, order, vector_scores, keyword, ranking, chunks, named, looked_up)

    def evidence(self) -> list[Evidence]:
        """Each hit's :class:`Evidence`, in the answer's order."""
        if self.mode == "vector":
            return hit_evidence(self.mode, self.order, self.vector, {}, self.ranking)
        if self.mode == "hybrid":
            keyword, known = self.keyword, self.keyword.known
            return hit_evidence(self.mode, self.order, self.vector, keyword.evidence, self.ranking, known)
        keyword = self.keyword
        return hit_evidence(
            self.mode, self.order, {}, keyword.coverage, self.ranking, keyword.known, keyword.together
        )

    def scored(self, calibration: ModelCalibration) -> list[tuple[int, float]]:
        """(chunk id, score) in the answer's order (step 5): each hit's evidence through the mode's
        map, raised to its floor, then held in rank order (:func:`in_rank_order`)."""
        scores = calibration.of(self.mode).scores(self.evidence())
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
        """The least score of each hit: :data:`NAMED_PAGE_SCORE` for a page named as asked,
        :data:`DEFAULT_MIN_SCORE` for the chunks that hold a one-word query's word best (in vector
        mode, the :data:`LOOKUP_HITS` nearest when some chunk holds the word)."""
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


def with_keyword_best(order: list[int], keyword: KeywordScores) -> list[int]:
    """``order`` with the best keyword match at :data:`KEYWORD_BEST_PLACE` at the latest whenever
    keyword mode would show it at the default threshold: the default mode never loses a strong
    keyword hit."""
    coverage = keyword.coverage
    if not coverage:
        return order
    ranked = best_matches(coverage)
    best = ranked[0]
    reference = coverage[ranked[REFERENCE_RANK - 1]] if len(ranked) >= REFERENCE_RANK else 0.0
    shown = KEYWORD_CALIBRATION.answer(
        Evidence(coverage[best], 0.0, coverage[best] - reference, keyword.known, keyword.together[best])
    )
    place = order.index(best) if best in order else None
    if shown < DEFAULT_MIN_SCORE or place is None or place < KEYWORD_BEST_PLACE:
        return order
    last = KEYWORD_BEST_PLACE - 1
    return [*order[:last], best, *order[last:place], *order[place + 1 :]]


def best_matches(evidence: dict[int, float]) -> list[int]:
    """The chunks of ``evidence``, best first, ties in the order ``evidence`` holds them: the store's,
    which puts equal scores in file order, so indexes holding the same files answer alike whatever
    order their chunks were written in (ids follow the builders' commits)."""
    return sorted(evidence, key=lambda chunk_id: -evidence[chunk_id])


def lists_last(order: list[int], lists: set[int]) -> list[int]:
    """``order`` with the chunks of ``lists`` among its first :data:`RULE_WINDOW` (chunks of pages
    that list names, :func:`lists_names`) after the others of the window, each side in its own
    order: an index page, a changelog or release notes name everything, and win on names over the
    page a question is about (``Response`` finds the page on responses before the release notes
    that mention it in every entry)."""
    window = order[:RULE_WINDOW]
    if not lists & set(window) or set(window) <= lists:
        return order
    return [c for c in window if c not in lists] + [c for c in window if c in lists] + order[RULE_WINDOW:]


def code_before_tests(order: list[int], chunks: dict[int, StoredChunk], words: set[str]) -> list[int]:
    """``order`` with the tests among its first :data:`RULE_WINDOW` (:attr:`StoredChunk.is_test`,
    as their language declares them) after the other chunks of the window, and the code each test
    calls at the test's place when it ranks below it: the best ranked chunk that defines what the
    test's text names (:func:`exercised_by`). A test is written about the code it calls, so it is
    found for the same words, and often first; the question is about that code. Unless the
    question asks for tests (:data:`TEST_WORDS`): then the order stays as found."""
    window = order[:RULE_WINDOW]
    tests = [chunk_id for chunk_id in window if chunk_id in chunks and chunks[chunk_id].is_test]
    if not tests or words & TEST_WORDS:
        return order
    rank = {chunk_id: place for place, chunk_id in enumerate(window) if chunk_id not in tests}
    for test in tests:
        place = window.index(test)
        called = set(_IDENTIFIER.findall(chunks[test].text))
        below = sorted((chunk_id for chunk_id in rank if rank[chunk_id] > place), key=rank.__getitem__)
        subject = next((c for c in below if c in chunks and exercised_by(chunks[c], called)), None)
        if subject is not None:
            rank[subject] = place
    return sorted(rank, key=rank.__getitem__) + tests + order[RULE_WINDOW:]


def exercised_by(chunk: StoredChunk, called: set[str]) -> bool:
    """Whether a test naming ``called`` calls what ``chunk`` defines: the definition the chunk is in
    (a code chunk's heading path after its file: each of ``Renderer`` and ``draw`` of
    ``Renderer > draw``) or one it declares (:attr:`StoredChunk.names`, under that path)."""
    parts = chunk.heading.split(HEADING_SEPARATOR)
    inside = [_IDENTIFIER.findall(part) for part in parts[1:]] if parts[0] == chunk.path else []
    within = {name for part in inside for name in part}
    if inside and within <= called:
        return True
    return any(name in called and within <= called for name in chunk.names)


def looked_up_first(
    order: list[int], evidence: dict[int, float], lists: set[int], named: int
) -> tuple[list[int], frozenset[int]]:
    """For a one-word query, ``order`` with the :data:`LOOKUP_HITS` chunks that hold the word best
    (by keyword evidence, lists of names after the others) right after the ``named`` first (the
    pages named after it), and those chunks: a word typed alone is a lookup, answered by the chunks
    that define or most use it, whatever the model makes of one word."""
    ranked = sorted(best_matches(evidence), key=lambda chunk_id: chunk_id in lists)
    chosen = [chunk_id for chunk_id in ranked[:LOOKUP_HITS] if chunk_id not in order[:named]]
    rest = [chunk_id for chunk_id in order[named:] if chunk_id not in chosen]
    return order[:named] + chosen + rest, frozenset(chosen)


def lists_names(chunk: StoredChunk, words: set[str]) -> bool:
    """Whether ``chunk`` belongs to a list of names that a question with ``words`` does not ask for:
    its page's title declares an index, a changelog, release notes, a history or a glossary
    (:data:`LIST_TITLES`), or one of its headings opens a changelog's dated or numbered entry
    (:data:`_VERSION_HEADING`). Such a list is asked for when the question holds a word of
    :data:`LIST_WORDS` or of the list's own title."""
    title = _TITLE_PUNCTUATION.sub(" ", chunk.title.lower()).strip()
    headings = chunk.heading.split(HEADING_SEPARATOR)
    declared = any(title == name or title.startswith(name + " ") for name in LIST_TITLES)
    listed = declared or any(_VERSION_HEADING.match(part.strip()) for part in headings)
    return listed and not (words & LIST_WORDS or words & set(title.split()))


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
    ``CMAKE_BUILD_TYPE.rst``); and those the chunk declares it defines, as its reader found them
    (:attr:`StoredChunk.names`: ``.. confval:: intersphinx_mapping``, a man page's NAME line)."""
    names = set(without_title_suffix(chunk.title).split()[-1:])
    file_name = chunk.path.rsplit("/", 1)[-1]
    parts = file_name.split(".")[:-1] if "." in file_name else [file_name]
    return names | {part for part in parts if part[:1].isalpha()} | set(chunk.names)


def without_title_suffix(title: str) -> str:
    """``title`` without a manual section or an empty call at its end: ``open`` of ``open(2)``,
    ``getenv`` of ``getenv()``. Read from the end, not by a pattern searched from every position: a
    title is stored text, and that search is quadratic in a run of spaces."""
    opening = title.rfind("(")
    inside = title[opening + 1 : -1]
    if not title.endswith(")") or opening < 0:
        return title
    if inside and not (inside[0].isdecimal() and all(char.isalnum() or char == "_" for char in inside)):
        return title
    return title[:opening].rstrip()


def defining_first(order: list[int], k: int, chunks: dict[int, StoredChunk], words: set[str]) -> list[int]:
    """``order`` with those of its first ``k`` chunks whose section declares as definitions
    (:attr:`StoredChunk.names`, over the section's chunks among them) most of the
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
        names = {name.lower() for name in chunks[chunk_id].names}
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
    """The words of a keyword search, each once: any of them matches; the store ranks chunks with
    more of the rarer words higher. Every word the user typed can match: stop words are left out only
    of a question of three words or more, never from a name (``collections.Where``,
    ``os.path.join``, ``--leak-check``, ``open()``), and a question of stop words alone searches
    them. A word typed twice is looked for once: the keyword index's cost grows with each term it is
    asked for, faster than linearly when terms repeat. A run of Chinese, Japanese or Korean letters
    is the words the index holds it as (:func:`indexer.store.keywords.query_words`: its pairs of
    characters)."""
    tokens = [
        (token, [term for word in _WORD.findall(token) for term in query_words(word.lower())])
        for token in text.split()
    ]
    everything = [word for _, words in tokens for word in words]
    if len(tokens) > MAX_UNFILTERED_WORDS:
        kept = [word for token, words in tokens for word in words if is_name(token) or word not in STOPWORDS]
        everything = kept or everything
    return list(dict.fromkeys(everything))


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
    strongest: float = 0.0  # the most a single term gets alone in any chunk

    @property
    def known(self) -> float:
        """The share of the question's information that some chunk holds."""
        return self.held / self.total if self.total > 0 else 0.0


def question_information(
    store: SearchStore, query: Query, allowed: AllowedChunks | None = None
) -> Information:
    """The :class:`Information` of ``query`` in ``store`` (among the ``allowed`` chunks): one keyword
    lookup of a single match per term, each reading no more than the whole question's search does."""
    lacking = BM25_SATURATION * keyword_ceiling(1, store.keyword_chunk_count())
    best = [store.keyword_matches([term], 1, allowed) for term in query.information_terms()]
    held = [max(-found[0][1], 0.0) for found in best if found]
    return Information(sum(held) + lacking * (len(best) - len(held)), sum(held), max(held, default=0.0))


@dataclass(frozen=True)
class KeywordScores:
    """A keyword search's matches on three scales: ``evidence`` (BM25 over the query's ceiling: how
    strong a hit is in the hybrid score), ``shares`` (BM25 over the best match's: what the hybrid
    blend ranks by), ``coverage`` (BM25 over the question's information: the share of it each hit
    holds, keyword mode's strength) and ``together`` (the log of BM25 over the most one term gets
    alone, see :class:`Evidence`); and ``known``, the share of the question's information the collection holds
    (:class:`Information`)."""

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
    return KeywordScores(
        evidence={chunk_id: -bm25 / ceiling for chunk_id, bm25 in matches},
        shares={chunk_id: -bm25 / scale for chunk_id, bm25 in matches},
        coverage={chunk_id: -bm25 / total for chunk_id, bm25 in matches},
        together={chunk_id: math.log(max(-bm25 / strongest, 1.0)) for chunk_id, bm25 in matches},
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
    and its keyword evidence less ``discount``."""
    if mode == "vector":
        return [vector_scores[chunk_id] for chunk_id in order]
    if mode == "keyword":
        return [keyword_scores[chunk_id] for chunk_id in order]
    floor = min(vector_scores.values(), default=0.0)
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


def _best_first(item: tuple[int, float]) -> tuple[float, int]:
    return (-item[1], item[0])
