"""Which lines of a hit to show: the ones that hold the question's words, without their markup.

A chunk is up to a few thousand words; a reader looking down a list of hits wants the lines that
made it a hit, as a search engine shows them. The question's words are the keyword search's own
(:class:`indexer.search.query.Query`, :func:`indexer.search.query.keyword_words`): its plain words
with the same stop words left out, its quoted phrases' words, its ``word*`` prefixes; never the
words it excludes.
A word of the chunk matches one of them spelled the same, with its accents and case set aside, or
with the same rough stem (``punctures`` for ``puncture``), as the keyword index's stemmer finds them.

The lines kept are those holding most of the question's words (the first ones when none does: a
hit found by meaning alone), shown in the order of the chunk, ``…`` where lines were passed over (at
the start of the line after them, at the end of the last line); a long line is cut around its first
match. A document's markup is read as its rendered page shows it, by the format's reader
(:func:`readable_text`), and a line left with nothing is never shown.

Everything here is a few passes over the chunk's text with patterns whose every repeat is bounded,
so its cost is linear in the text's length: a megabyte of hostile text costs what a megabyte costs.
"""

from __future__ import annotations

import heapq
import re
import unicodedata
from dataclasses import asdict, dataclass

from indexer.formats import INLINE_READERS, READ_AS_SHOWN, extension_of
from indexer.search.hit import Hit
from indexer.search.query import Query, keyword_words

#: At most this many lines are shown, each cut to about :data:`LINE_CHARS` characters.
MAX_LINES = 3
LINE_CHARS = 200
GAP = "…"

_WORD = re.compile(r"\w+")
_SUFFIXES = (
    ("ingly", ""), ("edly", ""), ("ing", ""), ("ies", "y"), ("ied", "y"),
    ("es", ""), ("ed", ""), ("ly", ""), ("s", ""), ("e", ""),
)  # fmt: skip

#: The files whose text is markup a reader sees rendered (Markdown, AsciiDoc, reStructuredText): a
#: title's marks, emphasis, links, roles, attribute entries, a block's delimiters. Their snippets
#: show the lines as the page shows them (:func:`indexer.formats.shown_text`): the formats with an
#: inline reader, and LaTeX, whose reader reads each line as shown. An HTML file's chunks hold the
#: text its reader took out of the tags already, and code is shown as written.
SHOWN_EXTENSIONS = frozenset(INLINE_READERS) | READ_AS_SHOWN


def readable_text(path: str, text: str, code_lead: int = 0) -> str:
    """``text``, a chunk of the file at ``path``, as the file's rendered page shows it where that
    differs from the text (see :data:`SHOWN_EXTENSIONS`): lines of markup alone left out, the others
    with their markup read as their words, code as written. The reader is the build's own (one place
    knows each format), run on the chunk's lines, and linear in them; it is imported only when such
    a hit is shown. ``code_lead`` is what the build found of the chunk's first lines that its text
    alone cannot tell (:attr:`indexer.records.Chunk.code_lead`). Should the reader fail on a chunk
    (it read the whole file at the build), the chunk is shown as written: a snippet never fails a
    search."""
    if extension_of(path) not in SHOWN_EXTENSIONS:
        return text
    from indexer.formats import shown_text

    try:
        return shown_text(path, text, code_lead)
    except Exception:  # as the build takes a reader's failure on one file: shown as written instead
        return text


def hit_snippet_lines(hit: Hit, question: str, width: int = LINE_CHARS) -> list[str]:
    """:func:`snippet_lines` of a hit, read as its file's page shows it (:func:`readable_text`):
    what every front end shows under a hit."""
    return snippet_lines(readable_text(hit.path, hit.text, hit.code_lead), question, width=width)


_SUFFIX_ENDS = tuple({suffix[-1] for suffix, _ in _SUFFIXES})


@dataclass(frozen=True)
class QueryWords:
    """What a line is matched against: the question's words, their stems, and its prefixes."""

    words: frozenset[str]
    stems: frozenset[str]
    prefixes: tuple[str, ...]
    #: The first letters every match begins with (a stem keeps a word's first three), so that most
    #: words of a text are passed over by one set look-up.
    heads: frozenset[str]
    head_length: int

    @classmethod
    def of(cls, question: str) -> QueryWords:
        query = Query.parse(question)
        words = {fold(word) for word in keyword_words(query.words)}
        words |= {fold(word) for phrase in query.phrases for word in _WORD.findall(phrase)}
        prefixes = tuple(fold(prefix) for prefix in query.prefixes)
        head_length = min((len(word) for word in (*words, *prefixes)), default=0)
        head_length = min(head_length, 3)
        heads = frozenset(word[:head_length] for word in (*words, *prefixes))
        stems = frozenset(stem(word) for word in words)
        return cls(frozenset(words), stems, prefixes, heads, head_length)

    def matches(self, word: str) -> str | None:
        """The question's word (or prefix) ``word`` of the text stands for, else None."""
        head = word[: self.head_length].lower()
        if head.isascii() and head not in self.heads:
            return None
        folded = fold(word)
        if folded in self.words:
            return folded
        stemmed = stem(folded)
        if stemmed in self.stems:
            return stemmed
        return next((prefix for prefix in self.prefixes if folded.startswith(prefix)), None)


def snippet(text: str, question: str, max_lines: int = MAX_LINES, width: int = LINE_CHARS) -> str:
    """The lines of ``text`` (as shown: see :func:`readable_text`) to show for ``question``, one per
    line; a line after lines passed over starts with ``…``, and the last ends with it when lines
    follow (see the module)."""
    return "\n".join(snippet_lines(text, question, max_lines, width))


def snippet_lines(text: str, question: str, max_lines: int = MAX_LINES, width: int = LINE_CHARS) -> list[str]:
    """:func:`snippet`, as its lines."""
    wanted = QueryWords.of(question)
    lines = [line for line in text.split("\n") if line and not line.isspace()]
    if not lines:
        return []
    known: dict[str, str | None] = {}
    found = [(place, line, _words_found(line, wanted, known)) for place, line in enumerate(lines)]
    best = heapq.nsmallest(max_lines, found, key=lambda item: (-len(item[2]), item[0]))
    best = [item for item in best if item[2]] or found[:max_lines]  # none: a hit found by meaning
    result: list[str] = []
    previous = -1  # the place in ``lines`` of the line shown last
    for place, line, _ in sorted(best, key=lambda item: item[0]):
        shown = _cut(" ".join(line.split()), wanted, width)
        if place > previous + 1 and not shown.startswith(GAP):
            shown = f"{GAP} {shown}"
        result.append(shown)
        previous = place
    if previous < len(lines) - 1 and not result[-1].endswith(GAP):
        result[-1] = f"{result[-1]} {GAP}"
    return result


def _words_found(line: str, wanted: QueryWords, known: dict[str, str | None]) -> set[str]:
    """The question's words ``line`` holds; ``known`` keeps what each word of the text stood for."""
    found = set()
    for match in _WORD.finditer(line):
        word = match.group()
        if word not in known:
            known[word] = wanted.matches(word)
        meaning = known[word]
        if meaning is not None:
            found.add(meaning)
    return found


def _cut(line: str, wanted: QueryWords, width: int) -> str:
    """``line``, or about ``width`` characters of it around its first match, cut at spaces."""
    if len(line) <= width:
        return line
    first = next((match.start() for match in _WORD.finditer(line) if wanted.matches(match.group())), 0)
    start = max(0, min(first - width // 4, len(line) - width))
    if start > 0:
        space = line.find(" ", start, first + 1)
        start = space + 1 if space >= 0 else start
    end = min(len(line), start + width)
    if end < len(line):
        space = line.rfind(" ", start + 1, end)
        end = space if space > start else end
    return f"{GAP} " * (start > 0) + line[start:end] + f" {GAP}" * (end < len(line))


def fold(word: str) -> str:
    """A word with its case and accents set aside, as the keyword index reads it."""
    lower = word.lower()
    if lower.isascii():
        return lower
    return "".join(c for c in unicodedata.normalize("NFD", lower) if not unicodedata.combining(c))


def stem(word: str) -> str:
    """A rough stem: the commonest English suffixes off a word of at least three letters left."""
    if not word.endswith(_SUFFIX_ENDS):
        return word
    for suffix, replacement in _SUFFIXES:
        if len(word) - len(suffix) >= 3 and word.endswith(suffix):
            return word[: -len(suffix)] + replacement
    return word


@dataclass(frozen=True)
class ShownHit(Hit):
    """A hit as every front end answers it: with ``snippet``, its lines that match the question."""

    snippet: str = ""

    @classmethod
    def of(cls, hit: Hit, question: str) -> ShownHit:
        return cls(**asdict(hit), snippet="\n".join(hit_snippet_lines(hit, question)))
