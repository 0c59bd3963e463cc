"""The HTTP API of ``index serve``: search, read by citation, status, on one open :class:`Index`.

FastAPI rather than bare Starlette: the MCP SDK brings Starlette, pydantic and uvicorn anyway, and
FastAPI adds only itself (2 MB) for what we would otherwise write by hand: parameter checks with
4xx answers, and an OpenAPI description (``/openapi.json``, browsable at ``/docs``) generated from
the same signatures, so it cannot drift from the code.

Endpoints are plain functions: FastAPI runs them on its thread pool, and the ``Index`` gives each
thread its own connection, so searches run side by side while a build writes.
"""

import hmac
import logging
from collections.abc import AsyncIterator, Callable
from contextlib import AsyncExitStack, asynccontextmanager
from typing import Annotated, Any, Literal

from fastapi import FastAPI, Query, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from mcp.server.transport_security import TransportSecuritySettings
from starlette.convertors import Convertor, register_url_convertor
from starlette.exceptions import HTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from indexer.api import Index
from indexer.display import json_safe
from indexer.errors import (
    BackendError,
    BackendUnreachableError,
    DatabaseUnreachableError,
    IndexerError,
    IndexLockedError,
    InvalidRequestError,
    NotInIndexError,
    StorageError,
)
from indexer.passages import Passage
from indexer.request import HELP, MAX_K, MAX_RERANK_TOP, MODES, RERANK_TOP, SearchRequest
from indexer.serving.discovery import INSTANCE_HEADER
from indexer.serving.hosts import HostRule
from indexer.serving.web import BrowserGuard, add_page_routes, is_public
from indexer.snippets import ShownHit


class AnythingConvertor(Convertor[str]):
    """A path parameter of any characters, newlines too (Starlette's ``path`` stops at one)."""

    regex = "[\\s\\S]*"

    def convert(self, value: str) -> str:
        return value

    def to_string(self, value: str) -> str:
        return value


register_url_convertor("anything", AnythingConvertor())

Mode = Literal[MODES]  # type: ignore[valid-type]  # the search modes, one place
log = logging.getLogger("indexer.serve")

#: HTTP status for each kind of library error, most specific first.
ERROR_STATUS: tuple[tuple[type[IndexerError], int], ...] = (
    (InvalidRequestError, 422),
    (NotInIndexError, 404),
    (IndexLockedError, 503),
    (BackendUnreachableError, 503),
    (DatabaseUnreachableError, 503),
    (BackendError, 502),
    (StorageError, 500),
    (IndexerError, 400),
)

DESCRIPTION = """Search a document index by meaning, and read its files back by citation.

A hit's citation is `path:START-END` (lines), or `path:page N` / `path:cells N-M` /
`path:paragraphs N-M` for PDFs, notebooks and Word files. `GET /chunks/{citation}` returns that text
as indexed; `GET /chunks/{path}` the whole file."""


def make_app(
    index: Index,
    instance: str,
    token: str | None = None,
    mcp: Any = None,
    on_start: Callable[[], None] = lambda: None,
    on_stop: Callable[[], None] = lambda: None,
    hosts: HostRule | None = None,
) -> FastAPI:
    """The ASGI app serving ``index``. ``token``: every request must carry ``Authorization: Bearer
    TOKEN``. ``mcp``: an MCP server (:mod:`indexer.serving.mcp_tools`) mounted at ``/mcp``.
    ``on_start`` and ``on_stop`` run when the server starts answering and when it stops. ``hosts``:
    the names a request's ``Host`` may give (:class:`indexer.serving.hosts.HostRule`; loopback's by
    default)."""
    app = FastAPI(
        title="indexer",
        default_response_class=SafeJSONResponse,
        description=DESCRIPTION,
        lifespan=_lifespan(mcp, on_start, on_stop),
        docs_url=None,  # /docs is the package's own page: FastAPI's loads Swagger UI from a CDN
        redoc_url=None,
    )
    _add_routes(app, index)
    add_page_routes(app, index)
    _add_error_handlers(app)
    if mcp is not None:
        # the SDK's own app carries one route (POST/GET/DELETE /mcp); its lifespan runs in ours. Its
        # Host and Origin checks are BrowserGuard's, the same for every route
        unchecked = TransportSecuritySettings(enable_dns_rebinding_protection=False)
        app.router.routes.extend(
            mcp.streamable_http_app(
                stateless_http=True, json_response=True, transport_security=unchecked
            ).routes
        )
    app.add_middleware(Guard, instance=instance, token=token)
    app.add_middleware(BrowserGuard, hosts=hosts or HostRule.serving("127.0.0.1"))
    return app


def _lifespan(
    mcp: Any, on_start: Callable[[], None], on_stop: Callable[[], None]
) -> Callable[[FastAPI], Any]:
    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        async with AsyncExitStack() as stack:
            if mcp is not None:
                await stack.enter_async_context(mcp.session_manager.run())
            on_start()
            stack.callback(on_stop)
            yield

    return lifespan


def _add_routes(app: FastAPI, index: Index) -> None:
    @app.get("/search", response_model=list[ShownHit], summary="The chunks that best match a question")
    def search(
        q: Annotated[str, Query(min_length=1, description=HELP["text"])],
        k: Annotated[int, Query(ge=1, le=MAX_K, description=HELP["k"])] = 5,
        mode: Annotated[Mode, Query(description=HELP["mode"])] = "hybrid",
        paths: Annotated[list[str] | None, Query(description=HELP["paths"] + " Repeatable.")] = None,
        types: Annotated[list[str] | None, Query(description=HELP["types"] + " Repeatable.")] = None,
        roots: Annotated[list[str] | None, Query(description=HELP["roots"] + " Repeatable.")] = None,
        min_score: Annotated[float | None, Query(description=HELP["min_score"])] = None,
        rerank: Annotated[bool, Query(description=HELP["rerank"])] = False,
        rerank_top: Annotated[
            int, Query(ge=1, le=MAX_RERANK_TOP, description=HELP["rerank_top"])
        ] = RERANK_TOP,
        path: Annotated[list[str] | None, Query(description="Same as `paths` (older name).")] = None,
        type: Annotated[list[str] | None, Query(description="Same as `types` (older name).")] = None,
        root: Annotated[list[str] | None, Query(description="Same as `roots` (older name).")] = None,
    ) -> list[ShownHit]:
        """Hits as `index query --json` prints them, best first, each with its `snippet`: the lines
        that hold the question's words, `…` where lines were passed over, without markup."""
        request = SearchRequest(
            q,
            k=k,
            mode=mode,
            paths=(*(paths or ()), *(path or ())),
            types=(*(types or ()), *(type or ())),
            roots=(*(roots or ()), *(root or ())),
            min_score=min_score,
            rerank=rerank,
            rerank_top=rerank_top,
        )
        return [ShownHit.of(hit, q) for hit in index.search(request)]

    # a path parameter's pattern stops at a newline: this one takes every character (a raw name)
    @app.get("/chunks/{citation:anything}", response_model=Passage, summary="A file's text as indexed")
    def chunks(
        citation: str,
        root: Annotated[str | None, Query(description="The root, when the path is under several.")] = None,
    ) -> Passage:
        """`path:START-END`, `path:page N` (PDF), `path:cells N-M` (notebook) or `path` (the whole
        file): the text of those lines or parts, overlapping chunks merged without repeating a line."""
        return index.get(citation, root=root)

    @app.get("/status", summary="What the index holds (as `index status --json`)")
    def status(
        builds: Annotated[int, Query(ge=0, le=1000, description="How many of the last builds.")] = 5,
    ) -> dict[str, Any]:
        return index.status(builds)

    @app.get("/health", summary="Whether the server answers")
    def health() -> dict[str, str]:
        return {"status": "ok"}


def _add_error_handlers(app: FastAPI) -> None:
    """Every error is a JSON object ``{"error": "..."}``; a traceback goes to the log, never out."""

    @app.exception_handler(IndexerError)
    def library_error(request: Request, error: IndexerError) -> JSONResponse:
        status = next(code for kind, code in ERROR_STATUS if isinstance(error, kind))
        return SafeJSONResponse({"error": str(error)}, status_code=status)

    @app.exception_handler(RequestValidationError)
    def bad_parameters(request: Request, error: RequestValidationError) -> JSONResponse:
        problems = [
            f"{'.'.join(str(part) for part in problem['loc'])}: {problem['msg']}"
            for problem in error.errors()
        ]
        return SafeJSONResponse({"error": "; ".join(problems)}, status_code=422)

    @app.exception_handler(HTTPException)
    def http_error(request: Request, error: HTTPException) -> JSONResponse:
        return JSONResponse(
            {"error": str(error.detail)}, status_code=error.status_code, headers=error.headers
        )

    @app.exception_handler(Exception)
    def unexpected(request: Request, error: Exception) -> JSONResponse:
        log.error("%s %s failed", request.method, request.url.path, exc_info=error)
        return JSONResponse(
            {"error": f"internal error ({type(error).__name__}); see the server's log"}, status_code=500
        )


class SafeJSONResponse(JSONResponse):
    """JSON whose text a terminal can print (``curl`` of a hit): the characters a terminal acts on
    are written as JSON escapes (:func:`indexer.display.json_safe`), the same data once read."""

    def render(self, content: Any) -> bytes:
        return json_safe(super().render(content).decode("utf-8")).encode("utf-8")


class Guard:
    """ASGI middleware: refuses a request without the bearer token (when there is one), compared in
    constant time and never logged; stamps every answer with the server's instance id."""

    def __init__(self, app: ASGIApp, instance: str, token: str | None) -> None:
        self.app = app
        self.instance = instance.encode("ascii")
        self.expected = f"Bearer {token}".encode() if token else None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return

        async def stamped(message: Message) -> None:
            if message["type"] == "http.response.start":
                message["headers"] = [
                    *message.get("headers", []),
                    (INSTANCE_HEADER.lower().encode(), self.instance),
                ]
            await send(message)

        public = is_public(scope.get("method", ""), scope["path"])
        if not public and not self._authorized(scope):
            refusal = JSONResponse(
                {"error": "missing or wrong token: send Authorization: Bearer TOKEN"},
                status_code=401,
                headers={"WWW-Authenticate": "Bearer"},
            )
            await refusal(scope, receive, stamped)
            return
        await self.app(scope, receive, stamped)

    def _authorized(self, scope: Scope) -> bool:
        """Whether the request carries the token, or the server asks for none."""
        if self.expected is None:
            return True
        given = b""
        for name, value in scope.get("headers", ()):
            if name == b"authorization":
                given = value
        return hmac.compare_digest(given, self.expected)
