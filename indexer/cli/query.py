"""``index query``: a search, through a running ``index serve`` when one answers for the index,
else in this process; printed as text, JSON, CSV or Markdown."""

from __future__ import annotations

import json
import os
import shlex
import sys
from dataclasses import fields
from typing import Any

import click

from indexer.api import Index, default_index_path
from indexer.cli.app import QUERY_CODE_1, db_option, exit_codes
from indexer.cli.output import hits_as_csv, hits_as_markdown, hits_as_text, use_color
from indexer.display import json_safe
from indexer.request import HELP, MAX_K, MAX_RERANK_TOP, MODES, RERANK_TOP, SearchRequest
from indexer.search.hit import Hit
from indexer.serving.discovery import ANSWER_SECONDS, RERANK_ANSWER_SECONDS, search_through_server
from indexer.snippets import ShownHit
from indexer.store import is_postgres_url


class QueryCommand(click.Command):
    """``index query``, whose question may start with a dash (``--leak-check=full``, ``-v``): click
    reads it as an unknown option, so the error says how to ask it instead, as a command to copy
    that keeps the other options given (``--db``: without it the copy would search another index).
    Beside the options of ours it may be a mistyping of (``Did you mean --type?``) it says so only
    where no question was given otherwise: ``index query --write`` looks up a tool's option, while
    ``index query bread --tpye md`` mistypes one of ours."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        given = list(args)  # the parser consumes its list
        try:
            return super().parse_args(ctx, args)
        except click.NoSuchOption as error:
            if error.possibilities and self.has_question(given):
                raise
            asked = next((arg for arg in given if arg.startswith(error.option_name)), error.option_name)
            others = [arg for arg in given if arg is not asked]
            hint = " To search for text that starts with '-', put -- before it: "
            hint += shlex.join(["index", "query", *others, "--", asked])
            raise click.UsageError(error.format_message() + hint, ctx=error.ctx) from error

    def has_question(self, given: list[str]) -> bool:
        """Whether ``given`` holds a word that is neither an option nor an option's value: the
        question, so that an unknown option beside it is one of ours mistyped. Read from this
        command's own options, as click reads them (``-k 3``, ``--type md``, ``--json``)."""
        taking_values = {
            name
            for param in self.params
            if isinstance(param, click.Option) and not param.is_flag
            for name in param.opts
        }
        value_next = False
        for arg in given:
            if not value_next and not arg.startswith("-"):
                return True
            value_next = not value_next and arg in taking_values
        return False


@click.command(cls=QueryCommand, epilog=exit_codes(0, 1, 2, 4, 5, c1=QUERY_CODE_1))
@click.argument("text")
@db_option
@click.option("-k", "k", type=click.IntRange(min=1, max=MAX_K), default=5, show_default=True, help=HELP["k"])
@click.option("--mode", type=click.Choice(MODES), default=MODES[0], show_default=True, help=HELP["mode"])
@click.option("--path", "paths", multiple=True, help=HELP["paths"] + " Repeatable.")
@click.option("--type", "types", multiple=True, help=HELP["types"] + " Repeatable.")
@click.option("--root", "roots", multiple=True, metavar="FOLDER", help=HELP["roots"] + " Repeatable.")
@click.option("--min-score", type=float, default=None, help=HELP["min_score"])
@click.option("--rerank/--no-rerank", default=False, show_default=True, help=HELP["rerank"])
@click.option(
    "--rerank-top",
    type=click.IntRange(1, MAX_RERANK_TOP),
    default=RERANK_TOP,
    show_default=True,
    metavar="N",
    help=HELP["rerank_top"],
)
@click.option("--json", "as_json", is_flag=True, help="Same as --format json.")
@click.option(
    "--format", "output_format", type=click.Choice(["text", "json", "csv", "markdown"]), default="text"
)
@click.option(
    "--base-url",
    multiple=True,
    help="Reach the index's embedding server at this address instead (repeatable: the first that answers).",
)
@click.option("--api-key", default=None, help="API key for the index's server (default: $OPENAI_API_KEY).")
@click.option(
    "--no-server",
    is_flag=True,
    envvar="INDEX_NO_SERVER",
    help="Search in this process even when `index serve` runs for this index ($INDEX_NO_SERVER).",
)
def query(
    text: str,
    db_path: str | None,
    k: int,
    mode: str,
    paths: tuple[str, ...],
    types: tuple[str, ...],
    roots: tuple[str, ...],
    min_score: float | None,
    rerank: bool,
    rerank_top: int,
    as_json: bool,
    output_format: str,
    base_url: tuple[str, ...],
    api_key: str | None,
    no_server: bool,
) -> None:
    """Print the chunks that best match TEXT ('-' reads it from stdin), with where they come from.

    In TEXT, "exact phrase" keeps chunks that hold it, -word leaves out chunks that hold it, and
    word* finds any word it begins. Nothing found is said on stderr, with exit code 1 (as grep does).
    When `index serve` runs for this index, it answers (with its model already loaded); when it does
    not answer at once, or with --no-server, the search runs here.
    """
    question = (sys.stdin.read() if text == "-" else text).strip()
    if not question:
        raise click.BadParameter("the question is empty", param_hint="TEXT")
    location = db_path or default_index_path()
    roots = tuple(root if is_postgres_url(location) else os.path.realpath(root) for root in roots)
    request = SearchRequest(
        question, k=k, mode=mode, paths=paths, types=types, roots=roots, min_score=min_score,
        rerank=rerank, rerank_top=rerank_top,
    )  # fmt: skip
    hits = None
    if not no_server and not base_url and api_key is None:
        hits = hits_from_server(location, request)
    if hits is None:
        # one question in this process: a backend may start faster
        with Index.open(location, create=False, one_shot=True) as index:
            if base_url or api_key is not None:
                index.connect(base_url or None, api_key)
            hits = index.search(request)
    output_format = "json" if as_json else output_format
    if output_format == "json":
        shown = [ShownHit.of(hit, question).to_dict() for hit in hits]
        click.echo(json_safe(json.dumps(shown, ensure_ascii=False, indent=2)))
    elif output_format == "csv":
        click.echo(hits_as_csv(hits), nl=False)
    elif hits:
        click.echo(
            hits_as_markdown(hits, question)
            if output_format == "markdown"
            else hits_as_text(hits, question, use_color())
        )
    if not hits:
        if output_format != "json":
            click.echo("no results", err=True)
        sys.exit(1)


def hits_from_server(location: str, request: SearchRequest) -> list[Hit] | None:
    """The hits a running ``index serve`` of this index gives, or None to search here."""
    params: dict[str, Any] = {"q": request.text, "k": request.k, "mode": request.mode}
    params.update({"paths": request.paths, "types": request.types, "roots": request.roots})
    if request.min_score is not None:
        params["min_score"] = repr(request.min_score)
    if request.rerank:
        params.update({"rerank": "true", "rerank_top": request.rerank_top})
    warn = lambda message: click.echo(f"warning: {message}", err=True)  # noqa: E731
    # a re-ranked answer takes the server seconds: waiting beats loading the model here
    wait = RERANK_ANSWER_SECONDS if request.rerank else ANSWER_SECONDS
    found = search_through_server(location, params, os.environ.get("INDEX_TOKEN") or None, warn, wait)
    names = {field.name for field in fields(Hit)}
    try:  # a hit's fields; a server's extra fields (its snippet) are left for its own page
        return (
            None if found is None else [Hit(**{k: v for k, v in hit.items() if k in names}) for hit in found]
        )
    except TypeError:  # a server of another version, whose hits lack fields
        return None
