"""The chunk, as the chunker makes it and as a store hands it back: one record for each, in a leaf
module, so the chunker, the stores, the search and the passages share them without any of them
importing another. How a chunk is cited is :mod:`indexer.citations`'.
"""

from __future__ import annotations

from dataclasses import dataclass

from indexer.citations import format_citation

#: Between the headings of a chunk's heading path: "Page title > Section > Subsection".
HEADING_SEPARATOR = " > "


@dataclass(frozen=True)
class Chunk:
    """A piece of a file: its lines (1-based, inclusive), the heading it sits under, its text, and
    where a reader finds it in the original when lines do not say it ('page 3', 'cells 4-6').
    ``model_text`` is what the model reads of it when that differs from ``text`` (markup left out,
    lines read as their reader read them: an AsciiDoc link as its text). ``names`` are the names its
    lines declare they define (``Document.definitions``); ``is_test`` says its lines are tests, as
    their language declares them (``Document.tests``). ``code_lead`` says how its first lines lie in
    a literal block its file opened before it (:func:`code_lead`), which its text read alone cannot
    tell: a snippet shows them as the file's page does. ``is_contents`` says its lines are a
    contents list: titles each with leaders and a page (:func:`indexer.chunking.contents_entries`),
    or a list's entries that link to other pages (``Document.linked_entries``)."""

    start_line: int
    end_line: int
    heading: str
    text: str
    locator: str = ""
    model_text: str = ""
    names: tuple[str, ...] = ()
    is_test: bool = False
    code_lead: int = 0
    is_contents: bool = False

    @property
    def embed_text(self) -> str:
        """What the model reads: the heading path gives a chunk from deep in a section its context."""
        body = (self.model_text or self.text).strip()
        return f"{self.heading}\n{body}" if self.heading else body


@dataclass(frozen=True)
class StoredChunk:
    """A chunk as the search reads it back, with the names it declares (:attr:`Chunk.names`) and
    whether it is a test (:attr:`Chunk.is_test`), how its first lines lie in code
    (:attr:`Chunk.code_lead`), and whether it is a contents list (:attr:`Chunk.is_contents`)."""

    id: int
    root: str
    path: str
    start_line: int
    end_line: int
    heading: str
    text: str
    locator: str = ""
    names: tuple[str, ...] = ()
    is_test: bool = False
    code_lead: int = 0
    is_contents: bool = False

    @property
    def citation(self) -> str:
        """Where a reader finds it: ``path:start-end``, or ``path:page 3`` for a file cited by parts."""
        return format_citation(self.path, self.start_line, self.end_line, self.locator)

    @property
    def title(self) -> str:
        """The title of the chunk's page: the first heading of its path ('' without headings)."""
        return self.heading.split(HEADING_SEPARATOR, 1)[0].strip()


def code_lead(lines: int, closed: bool) -> int:
    """A chunk's first ``lines`` lines lie in a literal block its file opened before the chunk, the
    last of them the block's closing markup line when ``closed``: stored as one number, ``lines``
    (negative when ``closed``; 0: the chunk starts outside any such block, read as its text says)."""
    return -lines if closed else lines


def lead_lines(lead: int) -> tuple[int, bool]:
    """What :func:`code_lead` stored: the number of lines, and whether the last closes the block."""
    return abs(lead), lead < 0
