"""The Model Context Protocol server: tools ``search``, ``get`` and ``status`` over one :class:`Index`.

Built with the official ``mcp`` SDK. ``index mcp`` runs it on stdio (a coding agent starts it as a
subprocess); ``index serve --mcp`` mounts it over streamable HTTP at ``/mcp``. The descriptions are
written for the model that reads them: what a citation is, how to narrow a search, what to do next.
Tools are plain functions; the SDK runs them on worker threads.
"""

import functools
from collections.abc import Callable
from typing import Annotated, Any, Literal

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import ToolAnnotations
from pydantic import Field

from indexer.api import Index
from indexer.display import visible
from indexer.errors import IndexerError
from indexer.request import HELP, MAX_K, MAX_RERANK_TOP, MODES, RERANK_TOP, SearchRequest
from indexer.snippets import ShownHit

Mode = Literal[MODES]  # type: ignore[valid-type]

INSTRUCTIONS = """This server searches a local index of documents (notes, manuals, code, PDFs) by
meaning and by keywords. Call `search` first; each hit has a `citation` such as `docs/guide.md:40-62`
or `manual.pdf:page 3`. To read more than the hit's snippet, call `get` with that citation, or with
the path alone for the whole file. Cite hits by their citation when you answer."""

SEARCH = """Find the passages of the indexed documents that best answer a question.

Returns up to k hits, best first. Each hit has `citation` (where it is: `path:START-END` for lines,
or `path:page N`, `path:cells N-M`, `path:paragraphs N-M` for PDFs, notebooks and Word files),
`path`, `start_line`, `end_line`, `heading` (the section it is under, as `Guide > Install`), `text`
(the passage), `snippet` (its lines that hold the question's words, `…` where lines were passed
over), `score` (0..1, in rank order) and `root` (the indexed folder it is from).
An empty list means nothing in the index is likely to answer (hits under the index's threshold are
left out; `min_score: 0` shows them). `rerank: true` re-reads the best candidates with a
cross-encoder: better order for a long question, seconds slower.
Narrow a search with `paths` (globs on the path relative to its folder: `docs/*`, `*.md`,
`api/**`; `*` also crosses folders), `types` (extensions such as `md`, `py`, `pdf`) or `roots`
(the indexed folders, as `status` lists them).
Mode `hybrid` (default) suits most questions; `keyword` finds exact names, error codes and
identifiers; `vector` finds paraphrases. Follow up with `get` on a citation to read around a hit."""

GET = """Read a file's text as it was indexed, by citation.

Pass a hit's `citation` (`docs/guide.md:40-62` returns those lines, `manual.pdf:page 3` that page)
or a path alone (`docs/guide.md`) for the whole file. Ask for wider lines than a hit's
(`docs/guide.md:1-120`) to read around it. Returns `text` with `path`, `start_line`, `end_line`,
`locator` and `citation`. `root` is needed only when the same path is indexed under several folders
(the hits' `root` says which)."""

STATUS = """What the index holds: files, chunks, the embedding model, the indexed folders (roots),
its last builds, how its scores are judged (the default threshold) and the re-ranker."""

READ_ONLY = ToolAnnotations(read_only_hint=True, idempotent_hint=True, open_world_hint=False)


def make_mcp_server(index: Index) -> MCPServer:
    """An MCP server whose tools read ``index``."""
    server = MCPServer(name="indexer", instructions=INSTRUCTIONS, log_level="WARNING")

    def search(
        query: Annotated[str, Field(min_length=1, description=HELP["text"])],
        k: Annotated[int, Field(ge=1, le=MAX_K, description=HELP["k"])] = 5,
        mode: Annotated[Mode, Field(description=HELP["mode"])] = "hybrid",
        paths: Annotated[list[str] | None, Field(description=HELP["paths"])] = None,
        types: Annotated[list[str] | None, Field(description=HELP["types"])] = None,
        roots: Annotated[list[str] | None, Field(description=HELP["roots"])] = None,
        min_score: Annotated[float | None, Field(description=HELP["min_score"])] = None,
        rerank: Annotated[bool, Field(description=HELP["rerank"])] = False,
        rerank_top: Annotated[
            int, Field(ge=1, le=MAX_RERANK_TOP, description=HELP["rerank_top"])
        ] = RERANK_TOP,
    ) -> list[dict[str, Any]]:
        request = SearchRequest(
            query, k=k, mode=mode, paths=tuple(paths or ()), types=tuple(types or ()),
            roots=tuple(roots or ()), min_score=min_score, rerank=rerank, rerank_top=rerank_top,
        )  # fmt: skip
        hits = [ShownHit.of(hit, query) for hit in index.search(request)]
        return [shown({"citation": hit.citation, **hit.to_dict()}) for hit in hits]

    def get(
        citation: Annotated[str, Field(min_length=1, description="A hit's citation, or a path.")],
        root: Annotated[str | None, Field(description="The folder, when the path is in several.")] = None,
    ) -> dict[str, Any]:
        passage = index.get(citation, root=root)
        return shown(passage.to_dict())

    def status() -> dict[str, Any]:
        info = index.status()
        return shown(
            {
                key: info[key]
                for key in (
                    "index",
                    "files",
                    "chunks",
                    "model",
                    "dimension",
                    "roots",
                    "builds",
                    "scores",
                    "reranker",
                )
            }
        )

    server.add_tool(told(search), description=SEARCH, annotations=READ_ONLY)
    server.add_tool(told(get), description=GET, annotations=READ_ONLY)
    server.add_tool(told(status), description=STATUS, annotations=READ_ONLY)
    return server


def shown(answer: dict[str, Any]) -> dict[str, Any]:
    """An answer whose texts a model may show its user: the characters a terminal acts on shown as
    escapes (:func:`indexer.display.visible`), lines kept."""
    return {key: _shown_value(value) for key, value in answer.items()}


def _shown_value(value: Any) -> Any:
    if isinstance(value, str):
        return visible(value, lines=True)
    if isinstance(value, dict):
        return shown(value)
    if isinstance(value, (list, tuple)):  # a hit's copies come as a tuple
        return [_shown_value(item) for item in value]
    return value


def told(tool: Callable[..., Any]) -> Callable[..., Any]:
    """``tool`` with the library's errors shown to the model (a missing file, a bad glob), which it
    can act on; the SDK would hide any other exception behind a generic message."""

    @functools.wraps(tool)
    def run(*args: Any, **kwargs: Any) -> Any:
        try:
            return tool(*args, **kwargs)
        except IndexerError as error:
            raise ToolError(visible(str(error))) from error

    return run
