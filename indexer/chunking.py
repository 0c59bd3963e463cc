"""Stage 2: cut a file's text into chunks that fit the model's input.

The one place for the chunk size limit. Sizes are measured with the backend's own token counter.

How boundaries are chosen, and why:
- A file is split into sections at headings (Markdown ``#`` headings, reStructuredText underlined
  titles). Each section is chunked on its own, so an edit in one section never moves the chunk
  boundaries of another.
- Inside a section the units are blocks: paragraphs separated by blank lines, and whole fenced code
  blocks. A chunk ends after a block whose text hash marks it as a cut point (content-defined
  chunking), or earlier when the next block would not fit. Because the cut points depend on the
  blocks' own text and not on where the chunk started, boundaries re-synchronise right after an edit:
  a one-line change re-embeds the chunk it is in and at most the next one or two.
- A block that is too big on its own is cut by lines, and a line too long on its own by words.
- Each chunk after the first of a section starts with the last lines of the previous one (a small
  overlap) so a sentence at a boundary is found from either side.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable
from dataclasses import dataclass

TokenCounter = Callable[[list[str]], list[int]]

CHUNKER_VERSION = 1
CUT_POINT_MODULUS = 3  # about one block in three ends a chunk once the chunk has some substance

_ATX_HEADING = re.compile(r"^ {0,3}(#{1,6})[ \t]+(.*?)[ \t#]*$")
_FENCE = re.compile(r"^ {0,3}(```+|~~~+)")
_RST_MARKS = frozenset("=-~^\"'`#*+:.<>_")
_RST_UNDERLINE = re.compile(r"^([=\-~^\"'`#*+:.<>_])\1{2,}\s*$")


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
    """A piece of a file: its lines (1-based, inclusive), the heading it sits under, and its text."""

    start_line: int
    end_line: int
    heading: str
    text: str

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


def chunk_text(
    text: str, count_tokens: TokenCounter, settings: ChunkSettings, structured: bool = True
) -> list[Chunk]:
    """Cut ``text`` into chunks whose :attr:`Chunk.embed_text` fits in ``settings.max_tokens``.

    ``structured`` turns on Markdown/reStructuredText heading detection (off for code and data files,
    where ``#`` starts a comment). Every line of the text lies in some chunk; the same text always
    gives the same chunks.
    """
    lines = [line.rstrip("\r") for line in text.split("\n")]
    if lines and lines[-1] == "":
        lines.pop()  # the newline that ends the last line does not start another
    if not any(line.strip() for line in lines):
        return []
    line_tokens = count_tokens(lines)
    pieces = [
        _Piece(number, line, tokens)
        for number, (line, tokens) in enumerate(zip(lines, line_tokens, strict=False), 1)
    ]
    sections = _sections(pieces, structured)
    chunks: list[Chunk] = []
    for section in sections:
        chunks.extend(_chunk_section(section, lines, count_tokens, settings))
    return _extend_to_cover(chunks, lines)


def _sections(pieces: list[_Piece], structured: bool) -> list[_Section]:
    """Group lines into sections (at headings) made of blocks (at blank lines, fences kept whole)."""
    sections = [_Section(heading="", blocks=[])]
    trail: list[tuple[int, str]] = []  # (level, title) of the headings above the current line
    block: list[_Piece] = []
    fence: str | None = None
    for index, piece in enumerate(pieces):
        stripped = piece.text.strip()
        if structured and fence is None:
            heading = _heading_at(pieces, index)
            if heading is not None:
                level, title = heading
                if block:
                    sections[-1].blocks.append(block)
                    block = []
                trail = [(lvl, name) for lvl, name in trail if lvl < level] + [(level, title)]
                sections.append(_Section(heading=" > ".join(name for _, name in trail), blocks=[]))
        fence_match = (
            _FENCE.match(piece.text)
            if structured and ("`" in piece.text[:4] or "~" in piece.text[:4])
            else None
        )
        if fence_match:
            marker = fence_match.group(1)
            if fence is None:
                fence = marker[0] * 3
            elif marker.startswith(fence):
                fence = None
        if not stripped and fence is None:
            if block:
                sections[-1].blocks.append(block)
                block = []
            continue
        block.append(piece)
    if block:
        sections[-1].blocks.append(block)
    return [section for section in sections if section.blocks]


def _heading_at(pieces: list[_Piece], index: int) -> tuple[int, str] | None:
    """The (level, title) of a heading starting at this line, if there is one."""
    line = pieces[index].text
    if "#" in line[:4]:
        atx = _ATX_HEADING.match(line)
        if atx:
            return len(atx.group(1)), atx.group(2).strip()
    following = pieces[index + 1].text if index + 1 < len(pieces) else ""
    if following[:1] in _RST_MARKS and line.strip() and not line.startswith((" ", "\t")):
        underline = _RST_UNDERLINE.match(following)
        if underline and len(following.strip()) >= len(line.strip()):
            return (1 if underline.group(1) == "=" else 2), line.strip()
    return None


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
        covered.append(Chunk(start, end, chunk.heading, chunk.text))
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
            Chunk(
                chunk.start_line,
                max(chunk.start_line, split_line - 1),
                chunk.heading,
                "\n".join(lines[:middle]),
            ),
            Chunk(split_line, chunk.end_line, chunk.heading, "\n".join(lines[middle:])),
        ]
    words = chunk.text.split()
    if len(words) < 2:
        return [chunk]
    middle = len(words) // 2
    return [
        Chunk(chunk.start_line, chunk.end_line, chunk.heading, " ".join(words[:middle])),
        Chunk(chunk.start_line, chunk.end_line, chunk.heading, " ".join(words[middle:])),
    ]
