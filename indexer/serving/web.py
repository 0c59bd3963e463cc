"""What a browser gets from ``index serve``: the search page at ``/``, the API reference at ``/docs``,
and the rules that keep other web pages away from the index.

The page is plain HTML, CSS and JavaScript in ``static/``, shipped inside the package: it works on a
machine with no internet, and there is nothing to build. Its files hold no index data, so they are
served without the token; the page asks for the token when the API refuses it (401).

Two rules hold for every answer of the server, JSON or page, in :class:`BrowserGuard`:

- **The Host must name this server** (:mod:`indexer.serving.hosts`, against DNS rebinding), or the
  answer is 421; a request from a page of another origin (its ``Origin`` header) gets 403. No
  answer carries CORS headers, so no other origin's script reads one.
- **A Content-Security-Policy** allows scripts, styles, images and requests from this origin only:
  no inline script, no outside host, no framing, so text from a document can never run as code.
"""

from __future__ import annotations

from importlib.resources import files
from pathlib import Path
from typing import Any

from fastapi import FastAPI
from fastapi.responses import FileResponse, JSONResponse
from starlette.staticfiles import StaticFiles
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from indexer.api import Index
from indexer.display import visible
from indexer.names import UNSAFE_CHARACTERS, local_name
from indexer.request import MODES
from indexer.search.query import STOPWORDS
from indexer.serving.hosts import HostRule

STATIC = Path(str(files("indexer.serving") / "static"))
#: Paths a browser loads before it can send the token (the page's own files, no index data).
PUBLIC_PATHS = ("/", "/docs", "/favicon.ico")
PUBLIC_PREFIX = "/static/"

CONTENT_SECURITY_POLICY = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; font-src 'self'; manifest-src 'self'; base-uri 'none'; form-action 'self'; "
    "frame-ancestors 'none'"
)
SECURITY_HEADERS = (
    ("content-security-policy", CONTENT_SECURITY_POLICY),
    ("x-content-type-options", "nosniff"),
    ("referrer-policy", "no-referrer"),
    ("x-frame-options", "DENY"),
    ("cross-origin-resource-policy", "same-origin"),
    ("cross-origin-opener-policy", "same-origin"),
)


def is_public(method: str, path: str) -> bool:
    """Whether a request may come without the token: a GET of the page's own files."""
    return method in ("GET", "HEAD") and (path in PUBLIC_PATHS or path.startswith(PUBLIC_PREFIX))


def add_page_routes(app: FastAPI, index: Index) -> None:
    """``/`` (the search page), ``/docs`` (the API reference), ``/static/*``, and two small answers
    for the page: the settings it takes from the library rather than repeating them, and where an
    indexed file is on this machine."""
    app.mount("/static", StaticFiles(directory=STATIC), name="static")

    @app.get("/", include_in_schema=False)
    def page() -> FileResponse:
        return FileResponse(STATIC / "index.html")

    @app.get("/docs", include_in_schema=False)
    def docs() -> FileResponse:
        return FileResponse(STATIC / "docs.html")

    @app.get("/favicon.ico", include_in_schema=False)
    def favicon() -> FileResponse:
        return FileResponse(STATIC / "icon.svg", media_type="image/svg+xml")

    @app.get("/page/settings", include_in_schema=False)
    def settings() -> dict[str, Any]:
        """The search modes (the first is the default), the words a keyword search leaves out, which
        the page does not mark, and how it shows the characters a page must not act on (each and its
        escape, as :func:`indexer.display.visible` shows them; newlines and tabs are the page's)."""
        return {"modes": list(MODES), "stopwords": sorted(STOPWORDS), "escapes": page_escapes()}

    @app.get("/page/file", include_in_schema=False)
    def file(root: str, path: str) -> dict[str, str | None]:
        """A ``file://`` address for an indexed file that is on this machine, else None (the index
        may be read where it was not built). Only files the index holds are looked up."""
        state = index.store.file_states(root).get(path)
        where = Path(root, local_name(path))  # the name the file system knows
        found = state is not None and state.status == "indexed" and where.is_absolute() and where.is_file()
        return {"url": where.as_uri() if found else None}


def page_escapes() -> dict[str, str]:
    """Each character the page shows as an escape, and the escape (:func:`indexer.display.visible`)."""
    shown = {chr(code): visible(chr(code), lines=True) for code in sorted(UNSAFE_CHARACTERS)}
    return {character: escape for character, escape in shown.items() if escape != character}


class BrowserGuard:
    """ASGI middleware, outermost: refuses a request whose ``Host`` is not this server (421) or that
    comes from another origin's page (403), and puts the security headers on every answer."""

    def __init__(self, app: ASGIApp, hosts: HostRule) -> None:
        self.app = app
        self.hosts = hosts

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return

        async def secured(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = list(message.get("headers", []))
                if not any(name.lower() == b"cache-control" for name, _ in headers):
                    headers.append((b"cache-control", b"no-cache"))
                message["headers"] = headers + [
                    (name.encode(), value.encode()) for name, value in SECURITY_HEADERS
                ]
            await send(message)

        refusal = self._refusal(scope)
        if refusal is not None and scope["type"] == "websocket":
            await send({"type": "websocket.close", "code": 1008})  # policy violation
            return
        if refusal is not None:
            await refusal(scope, receive, secured)
            return
        await self.app(scope, receive, secured)

    def _refusal(self, scope: Scope) -> JSONResponse | None:
        headers = {name: value.decode("latin-1") for name, value in scope.get("headers", ())}
        host = headers.get(b"host")
        if not self.hosts.admits(host):
            shown = (host or "")[:100]
            return JSONResponse(
                {
                    "error": f"this server does not answer for Host {shown!r}: it answers for "
                    f"{self.hosts.describe()} (index serve --allowed-host NAME adds a name)"
                },
                status_code=421,
            )
        origin = headers.get(b"origin")
        if origin is not None and not self.hosts.admits_origin(origin):
            return JSONResponse(
                {"error": f"requests from pages of another origin ({origin[:100]!r}) are refused"},
                status_code=403,
            )
        return None
