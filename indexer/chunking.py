"""Stage 2: cut a file's text into chunks that fit the model's input.

The one place for the chunk size limit. Sizes are measured with the backend's own token counter.

How boundaries are chosen, and why:
- A file is split into sections at the headings its format's parser found (:mod:`indexer.formats`:
  the chunker never guesses a heading from a ``#``). Each section is chunked on its own, so an edit in
  one section never moves the chunk boundaries of another.
- Inside a section the units are blocks: paragraphs separated by blank lines (or started where the
  reader says, as at an HTML ``<p>``, a PDF page or a notebook cell), and whole code blocks, which
  the reader marks as literal. A chunk ends after a block whose text hash marks it as a cut point
  (content-defined chunking), or earlier when the next block would not fit. Because the cut points
  depend on the blocks' own text and not on where the chunk started, boundaries re-synchronise right
  after an edit: a one-line change re-embeds the chunk it is in and at most the next one or two.
- A block that is too big on its own is cut by lines, and a line too long on its own by words.
- Each chunk after the first of a section starts with the last lines of the previous one (a small
  overlap) so a sentence at a boundary is found from either side.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass, replace

from indexer.formats.document import Document, Heading
from indexer.store.records import HEADING_SEPARATOR

TokenCounter = Callable[[list[str]], list[int]]

#: 2: structure from each format's parser (headings, literal blocks, parts) instead of guessed;
#: 3: the words of a block inside an HTML heading kept apart
CHUNKER_VERSION = 3
CUT_POINT_MODULUS = 3  # about one block in three ends a chunk once the chunk has some substance


@dataclass(frozen=True)
class ChunkSettings:
    """Everything that decides where chunks fall; recorded in the index's fingerprint."""

    max_tokens: int
    overlap_tokens: int

    @classmethod
    def for_limit(cls, max_tokens: int) -> ChunkSettings:
        return cls(max_tokens=max_tokens, overlap_tokens=max(8, max_tokens // 10))

    def describe(self) -> dict[str, int]:
        return {
            "max_tokens": self.max_tokens,
            "overlap_tokens": self.overlap_tokens,
            "version": CHUNKER_VERSION,
        }


@dataclass(frozen=True)
class Chunk:
    """A piece of a file: its lines (1-based, inclusive), the heading it sits under, its text, and
    where a reader finds it in the original when lines do not say it ('page 3', 'cells 4-6')."""

    start_line: int
    end_line: int
    heading: str
    text: str
    locator: str = ""

    @property
    def embed_text(self) -> str:
        """What the model reads: the heading path gives a chunk from deep in a section its context."""
        body = self.text.strip()
        return f"{self.heading}\n{body}" if self.heading else body


@dataclass
class _Piece:
    """One line, or part of an over-long line, with its tokens."""

    line: int
    text: str
    tokens: int


@dataclass
class _Section:
    heading: str
    blocks: list[list[_Piece]]


def chunk_document(document: Document, count_tokens: TokenCounter, settings: ChunkSettings) -> list[Chunk]:
    """Cut ``document`` into chunks whose :attr:`Chunk.embed_text` fits in ``settings.max_tokens``.

    Every line of the document lies in some chunk; the same document always gives the same chunks.
    """
    lines = document.lines
    if not any(line.strip() for line in lines):
        return []
    line_tokens = count_tokens(lines)
    pieces = [
        _Piece(number, line, tokens)
        for number, (line, tokens) in enumerate(zip(lines, line_tokens, strict=False), 1)
    ]
    chunks: list[Chunk] = []
    for section in _sections(pieces, document):
        chunks.extend(_chunk_section(section, lines, count_tokens, settings))
    covered = _extend_to_cover(chunks, lines)
    if document.parts:
        covered = [
            replace(chunk, locator=document.locator(chunk.start_line, chunk.end_line)) for chunk in covered
        ]
    return covered


def _sections(pieces: list[_Piece], document: Document) -> list[_Section]:
    """Group lines into sections (at the document's headings) made of blocks (at blank lines and
    block starts; a literal range is one block, whatever blank lines it holds)."""
    headings: dict[int, list[Heading]] = {}
    for heading in document.headings:
        headings.setdefault(heading.line, []).append(heading)
    inside_literal = {line for first, last in document.literal for line in range(first + 1, last + 1)}
    breaks = set(document.block_starts) | {part.first_line for part in document.parts}
    sections = [_Section(heading="", blocks=[])]
    trail: list[tuple[int, str]] = []  # (level, title) of the headings above the current line
    block: list[_Piece] = []
    for piece in pieces:
        continues = piece.line in inside_literal
        if not continues and (piece.line in headings or piece.line in breaks or not piece.text.strip()):
            if block:
                sections[-1].blocks.append(block)
                block = []
            if piece.line in headings:
                for heading in headings[piece.line]:
                    trail = [(level, name) for level, name in trail if level < heading.level]
                    trail.append((heading.level, heading.title))
                heading_path = HEADING_SEPARATOR.join(name for _, name in trail)
                sections.append(_Section(heading=heading_path, blocks=[]))
            if not piece.text.strip():
                continue
        block.append(piece)
    if block:
        sections[-1].blocks.append(block)
    return [section for section in sections if section.blocks]


def _chunk_section(
    section: _Section, lines: list[str], count_tokens: TokenCounter, settings: ChunkSettings
) -> list[Chunk]:
    heading = section.heading
    heading_tokens = count_tokens([heading])[0] + 1 if heading else 0
    if heading_tokens > settings.max_tokens // 4:  # an absurd heading must not starve the text
        heading, heading_tokens = "", 0
    budget = max(1, settings.max_tokens - heading_tokens)
    minimum = budget // 8
    groups: list[list[_Piece]] = []
    current: list[_Piece] = []
    current_tokens = 0
    for block in section.blocks:
        for unit in _fit_block(block, budget, count_tokens):
            unit_tokens = sum(piece.tokens for piece in unit)
            if current and current_tokens + unit_tokens > budget:
                groups.append(current)
                current, current_tokens = [], 0
            current.extend(unit)
            current_tokens += unit_tokens
        if current_tokens >= minimum and _is_cut_point(block):
            groups.append(current)
            current, current_tokens = [], 0
    if current:
        groups.append(current)
    return [
        _make_chunk(heading, pieces, lines)
        for pieces in _with_overlap(groups, budget, settings.overlap_tokens)
    ]


def _fit_block(block: list[_Piece], budget: int, count_tokens: TokenCounter) -> list[list[_Piece]]:
    """A block as one unit when it fits, else as runs of lines that fit (long lines cut by words)."""
    if sum(piece.tokens for piece in block) <= budget:
        return [block]
    units: list[list[_Piece]] = []
    run: list[_Piece] = []
    run_tokens = 0
    for piece in block:
        for part in _fit_line(piece, budget, count_tokens):
            if run and run_tokens + part.tokens > budget:
                units.append(run)
                run, run_tokens = [], 0
            run.append(part)
            run_tokens += part.tokens
    if run:
        units.append(run)
    return units


def _fit_line(piece: _Piece, budget: int, count_tokens: TokenCounter) -> list[_Piece]:
    """A line as is when it fits, else cut between words (or inside a word that is too long alone)."""
    if piece.tokens <= budget:
        return [piece]
    words = _split_long_words(piece.text.split(), budget, count_tokens)
    word_tokens = count_tokens(words)
    parts: list[_Piece] = []
    words_in_part: list[str] = []
    part_tokens = 0
    for word, tokens in zip(words, word_tokens, strict=False):
        if words_in_part and part_tokens + tokens > budget:
            parts.append(_Piece(piece.line, " ".join(words_in_part), part_tokens))
            words_in_part, part_tokens = [], 0
        words_in_part.append(word)
        part_tokens += tokens
    if words_in_part:
        parts.append(_Piece(piece.line, " ".join(words_in_part), part_tokens))
    return parts


def _split_long_words(words: list[str], budget: int, count_tokens: TokenCounter) -> list[str]:
    """Cut any single word whose tokens exceed the budget into character slices that fit."""
    result: list[str] = []
    for word, tokens in zip(words, count_tokens(words), strict=False):
        if tokens <= budget:
            result.append(word)
            continue
        step = max(1, len(word) * budget // (tokens * 2))
        result.extend(word[start : start + step] for start in range(0, len(word), step))
    return result


def _is_cut_point(block: list[_Piece]) -> bool:
    text = "\n".join(piece.text for piece in block).encode("utf-8")
    return hashlib.blake2b(text, digest_size=8).digest()[0] % CUT_POINT_MODULUS == 0


def _with_overlap(groups: list[list[_Piece]], budget: int, overlap_tokens: int) -> list[list[_Piece]]:
    """Prefix each group after the first with whole trailing lines of the previous one, when they fit."""
    result: list[list[_Piece]] = []
    for index, group in enumerate(groups):
        if index == 0:
            result.append(group)
            continue
        room = min(overlap_tokens, budget - sum(piece.tokens for piece in group))
        carried: list[_Piece] = []
        for piece in reversed(groups[index - 1]):
            if piece.tokens > room or piece.line == group[0].line:
                break
            carried.insert(0, piece)
            room -= piece.tokens
        result.append(carried + group)
    return result


def _make_chunk(heading: str, pieces: list[_Piece], lines: list[str]) -> Chunk:
    """A chunk over its pieces; whole lines keep the blank lines between them, as in the file."""
    start, end = pieces[0].line, pieces[-1].line
    if all(piece.text == lines[piece.line - 1] for piece in pieces):
        text = "\n".join(lines[start - 1 : end])
    else:
        text = "\n".join(piece.text for piece in pieces)
    return Chunk(start_line=start, end_line=end, heading=heading, text=text)


def _extend_to_cover(chunks: list[Chunk], lines: list[str]) -> list[Chunk]:
    """Stretch line ranges over the blank lines between chunks, so every line is in some chunk."""
    covered: list[Chunk] = []
    for index, chunk in enumerate(chunks):
        start = 1 if index == 0 else chunk.start_line
        if index + 1 < len(chunks):
            end = max(chunk.end_line, chunks[index + 1].start_line - 1)
        else:
            end = len(lines)
        covered.append(Chunk(start, end, chunk.heading, chunk.text, chunk.locator))
    return covered


def split_chunk(chunk: Chunk) -> list[Chunk]:
    """Cut a chunk that a server refused as too long into two halves (by lines, else by words).

    Used when the server's tokenizer counts more tokens than ours estimated. Returns the chunk alone
    when it cannot be cut (a single word).
    """
    lines = chunk.text.split("\n")
    if len(lines) > 1:
        middle = len(lines) // 2
        split_line = min(chunk.end_line, chunk.start_line + middle)
        return [
            replace(chunk, end_line=max(chunk.start_line, split_line - 1), text="\n".join(lines[:middle])),
            replace(chunk, start_line=split_line, text="\n".join(lines[middle:])),
        ]
    words = chunk.text.split()
    if len(words) < 2:
        return [chunk]
    middle = len(words) // 2
    return [
        replace(chunk, text=" ".join(words[:middle])),
        replace(chunk, text=" ".join(words[middle:])),
    ]
