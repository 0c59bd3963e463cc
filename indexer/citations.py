"""How a hit is cited and how a citation is read back: the one grammar every front end shares.

A citation is ``path:START-END`` (lines), ``path:page 3`` or ``path:cells 4-6`` (parts, for PDFs,
notebooks and Word files), or ``path`` alone for the whole file. Hits and passages write it,
``index passage`` and the MCP ``read`` tool parse it, and ``index eval --fixture`` reads its
expected items with it, so a citation a hit showed is always one the other commands accept.
A leaf module: the formats, the search and the passages all import it, and it imports none of them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

#: A line or part number has at most 18 digits (no file has more lines, and SQLite's integers end
#: at 19): a longer one is no number, and its citation is read as a path that holds a colon, where
#: Python would refuse to read it as an integer (past 4,300 digits) or take quadratic time to.
_NUMBER = r"\d{1,18}"
_LINES = re.compile(rf"(?P<first>{_NUMBER})(?:-(?P<last>{_NUMBER}))?")
_PARTS = re.compile(rf"(?P<kind>[a-z]+) (?P<first>{_NUMBER})(?:-(?P<last>{_NUMBER}))?")


@dataclass(frozen=True)
class Span:
    """What part of a file a citation asks for: lines ``first``-``last``, or parts of ``kind``
    (``page``, ``cell``, ``paragraph``); no bounds for the whole file."""

    first: int | None = None
    last: int | None = None
    kind: str = ""  # '' for lines

    @property
    def bounds(self) -> tuple[int, int] | None:
        """``(first, last)``, or None when the citation asks for the whole file."""
        if self.first is None or self.last is None:
            return None
        return self.first, self.last

    def overlaps_lines(self, start_line: int, end_line: int) -> bool:
        """Whether lines ``start_line``-``end_line`` share a line with this span (of lines)."""
        return (
            self.first is not None
            and self.last is not None
            and start_line <= self.last
            and end_line >= self.first
        )

    def overlaps_parts(self, locator: str) -> bool:
        """Whether the parts ``locator`` names (``pages 3-4``) share one with this span (of parts)."""
        parts = parse_locator(locator)
        if parts is None or self.first is None or self.last is None:
            return False
        return parts[0] == self.kind and parts[1] <= self.last and parts[2] >= self.first


def name_parts(kind: str, first: int, last: int) -> str:
    """How a citation names parts ``first``-``last`` of one kind: 'page 3', 'cells 4-6'."""
    return f"{kind} {first}" if first == last else f"{kind}s {first}-{last}"


def format_citation(path: str, start_line: int, end_line: int, locator: str = "") -> str:
    """``path:start-end``, or ``path:page 3`` (``:cells 4-6``...) where the parts say where it is."""
    return f"{path}:{locator or f'{start_line}-{end_line}'}"


def format_span(span: Span) -> str:
    """How a citation writes ``span`` after its path's colon: ``12-30``, ``pages 3-4``."""
    if span.first is None or span.last is None:
        return ""
    return name_parts(span.kind, span.first, span.last) if span.kind else f"{span.first}-{span.last}"


def parse_citation(citation: str) -> list[tuple[str, Span]]:
    """The readings of ``citation``, most likely first: ``path:12-30`` as lines 12-30 of ``path``,
    then the whole text as a path (a file name may hold a colon)."""
    readings: list[tuple[str, Span]] = []
    path, colon, where = citation.rpartition(":")
    if colon and path:
        lines, parts = _LINES.fullmatch(where), _PARTS.fullmatch(where)
        if lines:
            first = int(lines["first"])
            readings.append((path, Span(first, int(lines["last"] or first))))
        elif parts:
            first = int(parts["first"])
            readings.append((path, Span(first, int(parts["last"] or first), _singular(parts["kind"]))))
    return [*readings, (citation, Span())]


def citation_path(citation: str) -> str:
    """The path a citation most likely names (for messages)."""
    return parse_citation(citation)[0][0]


def parse_locator(locator: str) -> tuple[str, int, int] | None:
    """('page', 3, 4) from 'pages 3-4'; None for a chunk cited by lines."""
    match = _PARTS.fullmatch(locator)
    if match is None:
        return None
    first = int(match["first"])
    return _singular(match["kind"]), first, int(match["last"] or first)


def _singular(kind: str) -> str:
    return kind[:-1] if kind.endswith("s") else kind
