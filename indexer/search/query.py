"""The question as typed, read as the syntax people know from search engines (:class:`Query`), and
the terms the keyword search looks for in it (:func:`keyword_words`, :func:`keyword_terms`).

Apart because it is about what people type, not about how hits rank: a rule about quotes, stop words
or a name's separators changes here, and every later step reads what it made.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, replace

from indexer.store.keywords import query_words

_WORD = re.compile(r"\w+", re.UNICODE)
#: Queries of up to this many words also look for their neighbouring words joined (keyword_terms).
MAX_JOINED_WORDS = 6
#: A question of up to this many words keeps its stop words: "how to", "the who" ask for them.
MAX_UNFILTERED_WORDS = 2
#: How many times a word the question repeats is looked for at most (:func:`keyword_words`).
MAX_REPEATS = 10
#: Words joined as names are: ``a.b``, ``a::b``, ``a_b``, ``a-b``, ``a/b``, ``a()``.
_JOINED_NAME = re.compile(r"\w(?:\.|::|-|/)\w|\w_\w|\w\(\)")
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
    ``-l`` in ``ls -l`` are what the chunk should hold, never what it must not. A question made only
    of words with a minus before each (``-newer``, ``--null -print0``) names options, as a manual
    writes them: it has nothing else for them to leave out, so each is a word to find."""

    text: str  # what the model embeds: the words and phrases, without the operators
    words: str  # the plain words, for the keyword search
    phrases: tuple[str, ...] = ()
    excluded: tuple[str, ...] = ()
    prefixes: tuple[str, ...] = ()

    @classmethod
    def parse(cls, question: str) -> Query:
        if question.split() and all(_OPTION.fullmatch(part) for part in question.split()):
            return cls(question.strip(), question.strip())
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
#: A word with a minus before it, as an option is written (``-newer``, ``--null``).
_OPTION = re.compile(r"-{1,2}\w[\w.=-]*")


def keyword_words(text: str) -> list[str]:
    """The words of a keyword search: any of them matches; the store ranks chunks with more of the
    rarer words higher. Every word the user typed can match: stop words are left out only of a
    question of three words or more, never from a name (``collections.Where``, ``os.path.join``,
    ``--leak-check``, ``open()``), and a question of stop words alone searches them. A word the
    question repeats is looked for as often as it is typed, up to :data:`MAX_REPEATS` times, in the
    order it first comes: a question that names a word again asks for it more (BM25's query term
    frequency; both stores add a term's score once for each time it is asked for), and a longer
    run of it is a list or noise, whose repeats would make the keyword index's cost grow faster than
    linearly with the question. A run of Chinese, Japanese or Korean letters
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
    counts = Counter(everything)
    return [word for word in dict.fromkeys(everything) for _ in range(min(counts[word], MAX_REPEATS))]


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
    that no chunk holds costs a lookup: in a long question, where a name is rarely typed as words,
    they cost the keyword search several times its time, for nothing."""
    names = [" ".join(_WORD.findall(token)).lower() for token in text.split() if _SPACED_NAME.search(token)]
    words = [word.lower() for word in _WORD.findall(text)]
    if len(words) > MAX_JOINED_WORDS:
        return [*keyword_words(text), *dict.fromkeys(names)]
    runs = [words[start : start + size] for size in (2, 3) for start in range(len(words) - size + 1)]
    joined = [form for run in runs for form in ("_".join(run), "".join(run))]
    snake = [_CAMEL_HUMP.sub("_", word).lower() for word in _WORD.findall(text) if _CAMEL_HUMP.search(word)]
    extra = [term for term in dict.fromkeys([*names, *joined, *snake]) if term not in words]
    return [*keyword_words(text), *extra]
