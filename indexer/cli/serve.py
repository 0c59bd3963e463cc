"""``index serve`` (HTTP and the search page) and ``index mcp`` (the Model Context Protocol over
stdio): the commands that let programs and agents search an index."""

from __future__ import annotations

from typing import Any

import click

from indexer.api import Index, default_index_path
from indexer.cli.app import db_option, exit_codes
from indexer.errors import ConfigError
from indexer.serving.hosts import host_name


def serving_module() -> Any:
    """:mod:`indexer.serving.run`, whose libraries are the optional ``serve`` extra."""
    try:
        from indexer.serving import run
    except ImportError as error:
        raise ConfigError(
            f"serving needs the serve extra ({error.name} is missing): pip install 'indexer-search[serve]'"
        ) from error
    return run


@click.command(epilog=exit_codes(0, 2, 4, 5))
@db_option
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to listen on.")
@click.option(
    "--port", type=click.IntRange(0, 65535), default=8765, show_default=True, help="0: any free port."
)
@click.option(
    "--token",
    envvar="INDEX_TOKEN",
    default=None,
    help="Every request must send 'Authorization: Bearer TOKEN' ($INDEX_TOKEN; needed beyond loopback).",
)
@click.option(
    "--mcp", "with_mcp", is_flag=True, help="Also serve the MCP tools over streamable HTTP at /mcp."
)
@click.option(
    "--allowed-host",
    "allowed_hosts",
    multiple=True,
    callback=lambda ctx, param, names: [checked_host_name(name) for name in names],
    help="Also answer requests whose Host is this name (repeatable; others get 421).",
)
def serve(
    db_path: str | None, host: str, port: int, token: str | None, with_mcp: bool, allowed_hosts: list[str]
) -> None:
    """Answer searches over HTTP with the model loaded once: a search page at /, a JSON API
    (reference at /docs).

    GET /search?q=...&k=&mode=&paths=&types=&roots=&min_score=&rerank=&rerank_top=,
    GET /chunks/CITATION, GET /status, GET /health. `index query` on the same index uses it while it
    runs. Stop with Ctrl-C."""
    run = serving_module()
    say = lambda message: click.echo(message, err=True)  # noqa: E731
    with Index.open(db_path or default_index_path(), create=False) as index:
        run.serve(
            index, host=host, port=port, token=token, mcp=with_mcp, say=say, allowed_hosts=allowed_hosts
        )


def checked_host_name(name: str) -> str:
    """``name`` if a request's Host can give it (``docs.example``, ``[fe80::1]``), else a usage error."""
    if host_name(name) is None:
        raise click.BadParameter(f"{name!r} is not a host name", param_hint="--allowed-host")
    return name


@click.command("mcp", epilog=exit_codes(0, 2, 4, 5))
@db_option
def mcp_command(db_path: str | None) -> None:
    """Serve the index to an AI agent over MCP on stdin/stdout (tools: search, get, status)."""
    run = serving_module()
    say = lambda message: click.echo(message, err=True)  # noqa: E731
    with Index.open(db_path or default_index_path(), create=False) as index:
        run.serve_mcp_stdio(index, say=say)
