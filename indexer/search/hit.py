"""One search result as every front end shows it (:class:`Hit`).

Apart, a leaf: a front end that only prints hits (``index query`` answered by a running server, the
retrievers, the web page's tests) imports this module and nothing of the search.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

from indexer.citations import format_citation


@dataclass(frozen=True)
class Copy:
    """Where else a hit's text is: ``citation`` in the folder ``root`` (a citation alone names no
    folder, and the same path may be in several)."""

    citation: str
    root: str


@dataclass(frozen=True)
class Hit:
    """One search result: where it is, how well it matched, and its text.

    ``score`` is the calibrated score, 0..1 in every mode: hits scoring under
    :data:`DEFAULT_MIN_SCORE` are more likely noise than answers. ``vector_score`` is the cosine
    similarity and ``keyword_score`` the keyword evidence (BM25 over the query's ceiling), each where
    the chunk was found by that search. ``code_lead`` says how its first lines lie in a code block
    its file opened before it (:attr:`indexer.records.Chunk.code_lead`): a client that shows the
    snippet of a hit a server found reads it, as the server does. ``copies``: where the hits folded
    into it are, the same text in other files (:mod:`indexer.search.copies`).
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
    code_lead: int = 0
    copies: tuple[Copy, ...] = ()

    def __post_init__(self) -> None:
        # read back from JSON (a server's answer, ``asdict``), a copy is a mapping
        copies = tuple(Copy(**copy) if isinstance(copy, dict) else copy for copy in self.copies)
        object.__setattr__(self, "copies", copies)

    @property
    def citation(self) -> str:
        """``path:start-end``, or ``path:page 3`` (``:cells 4-6``...) for a PDF, notebook or DOCX."""
        return format_citation(self.path, self.start_line, self.end_line, self.locator)

    def to_dict(self) -> dict[str, object]:
        return asdict(self)

    def copies_shown(self) -> list[str]:
        """Each copy's citation, with its folder where that is not this hit's."""
        return [
            copy.citation + ("" if copy.root == self.root else f" in {copy.root}") for copy in self.copies
        ]
