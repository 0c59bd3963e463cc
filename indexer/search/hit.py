"""One search result as every front end shows it (:class:`Hit`).

Apart, a leaf: a front end that only prints hits (``index query`` answered by a running server, the
retrievers, the web page's tests) imports this module and nothing of the search.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

from indexer.citations import format_citation


@dataclass(frozen=True)
class Hit:
    """One search result: where it is, how well it matched, and its text.

    ``score`` is the calibrated score, 0..1 in every mode: hits scoring under
    :data:`DEFAULT_MIN_SCORE` are more likely noise than answers. ``vector_score`` is the cosine
    similarity and ``keyword_score`` the keyword evidence (BM25 over the query's ceiling), each where
    the chunk was found by that search. ``code_lead`` says how its first lines lie in a code block
    its file opened before it (:attr:`indexer.records.Chunk.code_lead`): a client that shows the
    snippet of a hit a server found reads it, as the server does.
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

    @property
    def citation(self) -> str:
        """``path:start-end``, or ``path:page 3`` (``:cells 4-6``...) for a PDF, notebook or DOCX."""
        return format_citation(self.path, self.start_line, self.end_line, self.locator)

    def to_dict(self) -> dict[str, object]:
        return asdict(self)
