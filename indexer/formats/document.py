"""What every format reader hands the chunker: text lines, and the structure a parser found in them.

The chunker never guesses structure from the text: a ``#`` line is a heading only when the format's
parser says so, and a code block is literal only when the parser says so. Readers keep line numbers
true to the source where the source has lines (Markdown, reStructuredText, HTML, plain text); for
PDF pages, notebook cells and Word paragraphs, :class:`Part` names what a citation points at.
"""

from __future__ import annotations

import bisect
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import cached_property
from typing import Protocol

from indexer.citations import name_parts
from indexer.errors import UnreadableFile

__all__ = [
    "MAX_LINES",
    "MAX_TEXT_CHARS",
    "Document",
    "Heading",
    "Layout",
    "Neighbours",
    "Part",
    "UnreadableFile",
    "shown_characters",
    "split_lines",
    "too_much_text",
]

#: The most text a document may hold, whatever its format: its text, lines, chunks and vectors are
#: what a build holds in memory for one file (many times its text, and a few hundred bytes a line),
#: so these caps are what bound a build's memory (bench/RESULTS.md has the figures). A PDF or DOCX
#: holds its text compressed, so its size on disk says little: its reader stops once past them.
MAX_TEXT_CHARS = 16 * 1024 * 1024
MAX_LINES = 500_000


@dataclass(frozen=True)
class Heading:
    """A section starts at ``line`` (1-based; the overline, for an over- and underlined title) and its
    title ends at ``last_line`` (the underline of an underlined title; 0: on ``line`` itself)."""

    line: int
    level: int  # smaller is higher; only the order matters
    title: str
    last_line: int = 0

    @property
    def lines(self) -> range:
        """The lines the heading itself takes up (title and adornment)."""
        return range(self.line, max(self.line, self.last_line) + 1)


@dataclass(frozen=True)
class Part:
    """A unit a reader can find in the original: a PDF page, a notebook cell, a Word paragraph."""

    kind: str
    number: int
    first_line: int
    last_line: int


@dataclass(frozen=True)
class Document:
    """A file as the chunker reads it.

    ``literal`` ranges (inclusive, 1-based) are code: a blank line inside does not end a block, and no
    heading is ever taken from them. Blocks (the units the chunker packs into chunks) end at blank
    lines and before each of ``block_starts`` (an HTML ``<p>`` on the line after another) and each
    part's first line, so a chunk never cuts a page, cell or paragraph in the middle unless it must.
    """

    lines: list[str]
    headings: list[Heading] = field(default_factory=list)
    literal: list[tuple[int, int]] = field(default_factory=list)
    parts: list[Part] = field(default_factory=list)
    block_starts: list[int] = field(default_factory=list)  # lines that start a block with no blank before
    encoding: str = ""  # the text encoding it was decoded from, for the file's record; '' for PDF/DOCX
    #: Lines of markup alone (a title's adornment, a code fence, a table's delimiter row, a
    #: transition): kept in a chunk's text as in the file, but no reader reads them, so the model does
    #: not either and they count nothing toward a chunk's size.
    markup: frozenset[int] = frozenset()
    #: The names each line declares it defines (1-based line: names), as the format's own markup
    #: says: a Sphinx object directive, a man page's NAME line, a function or class in source code.
    #: Found once here, by the reader, and stored with the chunk holding the line, so that a
    #: one-name question finds its definition without reading any text at query time.
    definitions: dict[int, tuple[str, ...]] = field(default_factory=dict)
    #: The text a reader reads of a line (1-based line: text, one line, never empty) where the
    #: format's markup makes it differ from the line as written: an AsciiDoc link macro read as its
    #: visible text, a section title without its ``==``. A chunk's text keeps the file's lines, which
    #: its citation and keyword matches read; the model reads these instead, and they are what counts
    #: toward a chunk's size.
    read_as: dict[int, str] = field(default_factory=dict)
    #: The lines that are tests (inclusive, 1-based ranges, in order), as the language or its test
    #: tool declares them (:mod:`indexer.formats.code`): a question about what the code does is
    #: answered by the code before the tests that call it.
    tests: list[tuple[int, int]] = field(default_factory=list)
    #: How many characters (spaces aside) of each line (1-based) are a list's entries that are links
    #: to other pages, as the format's markup declares them (an HTML ``<li>`` or ``<dt>`` of links and
    #: two words at most beside them): a generated index, a cross-reference or a contents page names what
    #: other pages are about, and a chunk whose text is half or more of them is stored as a
    #: contents list. Counted in characters, not lines: a site's menu of one word per line beside
    #: a page's paragraphs is a small part of what the page says.
    linked_entries: dict[int, int] = field(default_factory=dict)
    #: Whether the whole file is a list of other pages' names, as its markup declares it (javadoc's
    #: ``<body class="class-use-page">``): every chunk of it is stored as a contents list, though its
    #: entries say a sentence each of what they link, which the linked entries' rule cannot tell from
    #: a page's own text.
    is_contents: bool = False
    #: The lines that include another file's text where they stand, as the format's markup declares
    #: it (AsciiDoc's ``include::`` line, DocBook's ``xi:include`` or a reference to an external
    #: entity, reStructuredText's ``.. include::``, an MDX page's imported page, an MkDocs snippet):
    #: the text there is that file's, which a build reads as a file of its own, not this one's. A
    #: file whose own text is its titles alone around them stores no chunk
    #: (:func:`indexer.chunking.chunk_document`).
    includes: frozenset[int] = frozenset()

    def locator(self, start_line: int, end_line: int) -> str:
        """How a citation names lines ``start_line``-``end_line``: 'page 3', 'cells 4-6'; '' when the
        file's own line numbers say it best."""
        if not self.parts:
            return ""
        starts = self._part_starts
        first = self.parts[max(0, bisect.bisect_right(starts, start_line) - 1)]
        last = self.parts[max(0, bisect.bisect_right(starts, end_line) - 1)]
        return name_parts(first.kind, first.number, last.number)

    @cached_property
    def _part_starts(self) -> list[int]:
        # made once: a notebook of 100,000 cells asks for a locator per chunk
        return [part.first_line for part in self.parts]


class Neighbours(Protocol):
    """The other files of the folder a build indexes, as a reader may read them beside the file it
    reads (a DocBook file's declarations of entities): named relative to that folder with forward
    slashes, and never one outside it."""

    def read(self, name: str) -> bytes | None:
        """The bytes of the file ``name``; None when there is none, or it may not be read."""
        ...


@dataclass
class Layout:
    """What a reader that reads a file a line at a time finds as it goes, as 1-based line numbers:
    the :class:`Document` fields other than its lines, gathered in one place for every such reader."""

    headings: list[Heading] = field(default_factory=list)
    literal: list[tuple[int, int]] = field(default_factory=list)
    markup: set[int] = field(default_factory=set)
    read_as: dict[int, str] = field(default_factory=dict)
    definitions: dict[int, tuple[str, ...]] = field(default_factory=dict)
    block_starts: list[int] = field(default_factory=list)
    linked_entries: dict[int, int] = field(default_factory=dict)
    includes: set[int] = field(default_factory=set)

    def document(self, lines: list[str], encoding: str) -> Document:
        """The document of ``lines`` with what was found in them (literal ranges in order: a reader
        closes a nested block before the block around it)."""
        return Document(
            lines=lines,
            headings=self.headings,
            literal=sorted(self.literal),
            block_starts=self.block_starts,
            encoding=encoding,
            markup=frozenset(self.markup),
            definitions=self.definitions,
            read_as=self.read_as,
            linked_entries=self.linked_entries,
            includes=frozenset(self.includes),
        )


def placed_lines(pieces: Iterable[tuple[int, str]], count: int, literal: set[int]) -> list[str]:
    """The ``count`` lines of a page whose texts a markup reader placed at their source lines
    (``pieces``: 1-based line, text), in order: a line of code (``literal``) as its texts are written,
    any other's words one space apart, as the page lays them out. Markup readers (HTML, DocBook)
    give a page's words at the lines that hold them, so that a hit cites the source."""
    words: list[list[str]] = [[] for _ in range(count)]
    for line, text in pieces:
        if 1 <= line <= count:
            words[line - 1].append(text)
    return [
        "".join(parts).rstrip() if number in literal else " ".join("".join(parts).split())
        for number, parts in enumerate(words, 1)
    ]


def shown_characters(text: str) -> int:
    """How many characters of ``text`` are not spaces: what a line's share of linked entries is
    counted in (:attr:`Document.linked_entries`)."""
    return len("".join(text.split()))


def split_lines(text: str) -> list[str]:
    """Lines as an editor numbers them: a final newline ends the last line rather than adding one."""
    lines = text.split("\n")
    if "\r" in text:
        lines = [line.rstrip("\r") for line in lines]
    if lines and lines[-1] == "":
        lines.pop()
    return lines


def too_much_text(characters: int, lines: int) -> UnreadableFile | None:
    """The refusal of a document of this much text, past :data:`MAX_TEXT_CHARS` or
    :data:`MAX_LINES`; None for one within them."""
    if characters > MAX_TEXT_CHARS:
        return UnreadableFile(
            f"its text passes {MAX_TEXT_CHARS >> 20} M characters (the cap on a document's text)", "too-large"
        )
    if lines > MAX_LINES:
        return UnreadableFile(
            f"it has more than {MAX_LINES:,} lines (the cap on a document's lines)", "too-large"
        )
    return None
