"""Read a file back from the index by a citation, so an agent can read around a hit.

A citation is what a hit shows: ``path:START-END`` (lines), ``path:page 3`` or ``path:cells 4-6``
(parts, for PDFs, notebooks and Word files), or ``path`` alone for the whole file. The text comes
from the stored chunks, not from the disk: it is the file as indexed, which the searches saw, and
it is there when the index is read on another machine than the one that built it.

Chunks overlap a little (each starts with the last lines of the one before), so the overlap is
dropped where two neighbours meet: no line comes back twice. A chunk's line range was stretched by
the chunker over the blank lines around it (:func:`indexer.chunking._extend_to_cover`), which the
stored text does not carry; where that leaves a line's number uncertain, a range keeps the line
whenever it may lie inside, so a passage never misses text that was asked for.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass

from indexer.citations import (
    Span,
    citation_path,
    format_citation,
    format_span,
    name_parts,
    parse_citation,
    parse_locator,
)
from indexer.errors import ConfigError, InvalidRequestError, NotInIndexError
from indexer.names import spellings, stored_name
from indexer.records import StoredChunk
from indexer.store.contract import ChunkReads


@dataclass(frozen=True)
class Passage:
    """Text of one file as indexed: its lines ``start_line``-``end_line`` (and ``locator``, the
    parts they span, for files cited by parts)."""

    path: str
    root: str
    start_line: int
    end_line: int
    text: str
    locator: str = ""

    @property
    def citation(self) -> str:
        return format_citation(self.path, self.start_line, self.end_line, self.locator)

    def to_dict(self) -> dict[str, object]:
        return {**asdict(self), "citation": self.citation}


def read_passage(store: ChunkReads, citation: str, root: str | None = None) -> Passage:
    """The passage ``citation`` names, from ``store`` (under ``root`` when the index holds the same
    path under several folders). Its path is the name as a hit showed it, or the file's own name
    (:func:`indexer.names.spellings`: with its newline, or its bytes that are not UTF-8).

    Raises:
        NotInIndexError: the file is not in the index, or has no such lines or parts.
        InvalidRequestError: the lines or parts run backwards (``path:30-12``).
        ConfigError: the path is in several roots and ``root`` does not say which.
    """
    if not citation.strip():
        raise ConfigError("a citation names a file: PATH, PATH:START-END or PATH:page N")
    readings = [reading for spelling in spellings(citation) for reading in parse_citation(spelling)]
    for path, span in readings:
        chunks = store.file_chunks(path, root)
        if chunks:
            bounds = span.bounds
            if bounds is not None and bounds[1] < bounds[0]:
                turned = Span(bounds[1], bounds[0], span.kind)
                raise InvalidRequestError(f"{citation} runs backwards: ask for {path}:{format_span(turned)}")
            return assemble(_one_root(chunks, path), span)
    where = f" under {root}" if root else ""
    raise NotInIndexError(f"{stored_name(citation_path(citation))} is not in the index{where}")


def assemble(chunks: Sequence[StoredChunk], span: Span) -> Passage:
    """The passage of ``span`` from one file's ``chunks`` (all of them, in file order)."""
    placed = _place_lines(chunks)
    bounds = span.bounds
    if span.kind:
        chosen = [index for index, chunk in enumerate(chunks) if span.overlaps_parts(chunk.locator)]
    elif bounds is not None:
        chosen = [
            index
            for index, chunk in enumerate(chunks)
            if span.overlaps_lines(chunk.start_line, chunk.end_line)
        ]
    else:
        chosen = list(range(len(chunks)))
    taken = set(chosen)
    lines = [
        line
        for index in chosen
        for line in placed[index][_overlap(chunks[index - 1], chunks[index]) if index - 1 in taken else 0 :]
    ]
    line_bounds = None if span.kind else bounds
    if line_bounds is not None:
        lines = [line for line in lines if line.lowest <= line_bounds[1] and line.highest >= line_bounds[0]]
    if not lines:
        raise NotInIndexError(f"{chunks[0].path} has no {_describe(span)} in the index ({_extent(chunks)})")
    # blank lines at the edges are the chunker's, not text; cut at once, as a file may open with
    # any number of them
    written = [number for number, line in enumerate(lines) if line.text]
    lines = lines[written[0] : written[-1] + 1] if written else lines[:1]
    first, last = chunks[chosen[0]], chunks[chosen[-1]]
    # the range is the lines kept, so the text's first line is line `start_line`
    start, end = max(first.start_line, lines[0].lowest), min(last.end_line, lines[-1].highest)
    if line_bounds is not None:
        start, end = max(start, line_bounds[0]), min(end, line_bounds[1])
    return Passage(
        path=first.path,
        root=first.root,
        start_line=start,
        end_line=end,
        text="\n".join(line.text for line in lines),
        locator=_locator(first.locator, last.locator),
    )


@dataclass(frozen=True)
class _Line:
    """One line of a chunk's text and the line numbers it may have in the file (usually one)."""

    lowest: int
    highest: int
    text: str


def _place_lines(chunks: Sequence[StoredChunk]) -> list[list[_Line]]:
    """Each chunk's lines with the numbers they may have in the file."""
    return [
        _chunk_lines(
            chunk, first_of_file=index == 0, following=chunks[index + 1] if index + 1 < len(chunks) else None
        )
        for index, chunk in enumerate(chunks)
    ]


def _chunk_lines(chunk: StoredChunk, first_of_file: bool, following: StoredChunk | None) -> list[_Line]:
    texts = chunk.text.split("\n")
    start, span = chunk.start_line, chunk.end_line - chunk.start_line + 1
    if len(texts) > span:  # a line too long for the model, cut into pieces: any number in the range
        return [_Line(start, chunk.end_line, text) for text in texts]
    # The text is consecutive lines of the range; the rest are blank lines the chunker counted in,
    # after the text, and in a file's first chunk also before it: all before when the next chunk
    # overlaps this one (its end is then exact), else in shares the index does not record.
    slack = span - len(texts)
    leading = (
        slack if first_of_file and following is not None and following.start_line <= chunk.end_line else 0
    )
    slots = [""] * leading + texts + [""] * (slack - leading)
    if not first_of_file or leading or not slack:
        return [_Line(start + number, start + number, text) for number, text in enumerate(slots)]
    return [
        _Line(start + number, start + number + slack, text)
        if number < len(texts)
        else _Line(start, chunk.end_line, text)
        for number, text in enumerate(slots)
    ]


def _overlap(previous: StoredChunk, chunk: StoredChunk) -> int:
    """How many of ``chunk``'s first lines repeat ``previous``'s last ones (0 when none do)."""
    shared = previous.end_line - chunk.start_line + 1
    if shared <= 0:
        return 0
    before, after = previous.text.split("\n"), chunk.text.split("\n")
    if shared > min(len(before), len(after)) or before[-shared:] != after[:shared]:
        return 0
    return shared


def _locator(first: str, last: str) -> str:
    """The parts a passage spans, from its first and last chunks' locators ('' for lines)."""
    start, end = parse_locator(first), parse_locator(last)
    if start is None or end is None:
        return ""
    return name_parts(start[0], start[1], end[2])


def _one_root(chunks: Sequence[StoredChunk], path: str) -> list[StoredChunk]:
    roots = list(dict.fromkeys(chunk.root for chunk in chunks))
    if len(roots) > 1:
        raise ConfigError(f"{path} is in several folders of the index ({', '.join(roots)}): name one as root")
    return list(chunks)


def _describe(span: Span) -> str:
    bounds = span.bounds
    if bounds is None:
        return "text"
    if span.kind:
        return name_parts(span.kind, *bounds)
    return f"lines {bounds[0]}-{bounds[1]}"


def _extent(chunks: Sequence[StoredChunk]) -> str:
    parts = [part for chunk in chunks if (part := parse_locator(chunk.locator)) is not None]
    if len(parts) == len(chunks):
        return f"it has {name_parts(parts[0][0], parts[0][1], parts[-1][2])}"
    return f"it has lines {chunks[0].start_line}-{chunks[-1].end_line}"
