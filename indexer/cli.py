"""The `index` command: a thin click shell over :class:`indexer.Index`.

Each command's ``--help`` lists the exit codes it can return, with the meanings the error classes
of :mod:`indexer.errors` carry.

With ``--json`` a command writes JSON lines on stdout only (its results, its warnings and errors as
objects with ``time``, ``level`` and ``message``), so a log that collects both streams stays one JSON
object per line.
"""

from __future__ import annotations

import csv
import io
import json
import os
import shlex
import signal
import sys
from collections.abc import Callable
from dataclasses import asdict, dataclass
from datetime import datetime
from typing import Any

import click

from indexer import DISTRIBUTION
from indexer.api import Index, default_index_path, iso_time
from indexer.backends import EmbeddingBackend, make_backend
from indexer.backends.kinds import BACKEND_KINDS, BUILTIN_CONCURRENCY
from indexer.backends.packaged import DEFAULT_EMBEDDING_MODEL, EMBEDDING_MODELS
from indexer.errors import ConfigError, IndexerError, StorageError
from indexer.errors import exit_codes as exit_codes_of_errors
from indexer.ignore import parse_size
from indexer.pipeline.options import MIN_CHUNK_TOKENS, BuildOptions, option_help
from indexer.pipeline.report import Notice
from indexer.progress import Progress, duration
from indexer.request import HELP, MAX_K, MAX_RERANK_TOP, MODES, RERANK_TOP, SearchRequest
from indexer.search import Hit
from indexer.serving.discovery import ANSWER_SECONDS, RERANK_ANSWER_SECONDS, search_through_server
from indexer.serving.hosts import host_name
from indexer.store import is_postgres_url

EXIT_CODES = {code: exit_code.meaning for code, exit_code in exit_codes_of_errors().items()}
#: What code 1 means for a query.
QUERY_CODE_1 = "nothing found (as grep), or the question could not be embedded"


def exit_codes(*codes: int, **meanings: str) -> str:
    """The epilog of a command's help: the exit codes it can return (``c1="..."`` rewords code 1)."""
    lines = [f"  {code}  {meanings.get(f'c{code}', EXIT_CODES[code])}" for code in codes]
    return "\b\nExit codes:\n" + "\n".join(lines) + "\n"


db_option = click.option(
    "--db",
    "db_path",
    envvar="INDEX_DB",
    default=None,
    metavar="PATH",
    help="Index file, or a postgresql:// URL (default: $INDEX_DB or ./index.db).",
)


class Output:
    """Where a command's lines go. In text, results on stdout and warnings and errors on stderr; with
    ``--json``, one JSON object per line on stdout, each with ``time`` and ``level``, and nothing on
    stderr unless the process itself crashes."""

    def __init__(self, as_json: bool = False, quiet: bool = False, progress: Progress | None = None) -> None:
        self.as_json = as_json
        self.quiet = quiet
        self.progress = progress

    def log(self, level: str, message: str, **fields: Any) -> None:
        if self.as_json:
            record = {"time": iso_time_now(), "level": level, "message": message, **fields}
            click.echo(json.dumps(record, ensure_ascii=False))
        elif level == "error" or not self.quiet:
            line = f"{level}: {fields['path']}: {message}" if fields.get("path") else f"{level}: {message}"
            if self.progress is not None:
                self.progress.write(line)
            else:
                click.echo(line, err=True)

    def warning(self, notice: str) -> None:
        """A build's warning (a :class:`indexer.pipeline.report.Notice`, which keeps its path apart)."""
        notice = Notice.of(notice)
        if notice.path:
            self.log("warning", notice.message, path=notice.path)
        else:
            self.log("warning", notice)

    def error(self, message: str, **fields: Any) -> None:
        self.log("error", message, **fields)


def iso_time_now() -> str:
    return datetime.now().astimezone().isoformat(timespec="seconds")


class IndexerGroup(click.Group):
    """Turns library errors into one line (or one JSON object, with ``--json``) and the documented
    exit code; SIGTERM, as ``kill``, ``timeout`` and ``systemctl stop`` send it, stops a command as
    Ctrl-C does, so a build records that it was interrupted: exit 143 for SIGTERM, 130 for Ctrl-C."""

    def invoke(self, ctx: click.Context) -> Any:
        _received.clear()
        for number in INTERRUPTING_SIGNALS:
            if signal.getsignal(number) is not signal.SIG_IGN:  # a background job ignores Ctrl-C
                signal.signal(number, _interrupt)
        try:
            return super().invoke(ctx)
        except IndexerError as error:
            self._fail(ctx, str(error), error.exit_code)
        except OSError as error:  # the system refused something the library did not expect to fail
            self._fail(ctx, describe_os_error(error), StorageError.exit_code)
        except KeyboardInterrupt as error:
            number = getattr(error, "signal_number", None) or (_received[-1] if _received else signal.SIGINT)
            self._fail(ctx, f"interrupted ({INTERRUPTING_SIGNALS[number]})", 128 + number)
        except click.UsageError as error:
            output = ctx.meta.get("output")
            if output is None or not output.as_json:
                raise  # click prints it with the usage line
            self._fail(ctx, error.format_message(), error.exit_code)

    @staticmethod
    def _fail(ctx: click.Context, message: str, code: int) -> None:
        output = ctx.meta.get("output") or Output()
        output.error(message, exit_code=code)
        ctx.exit(code)


#: The signals that stop a command, and how its one-line message names them.
INTERRUPTING_SIGNALS = {signal.SIGINT: "Ctrl-C", signal.SIGTERM: "SIGTERM"}
#: The signals received since the command started. A library that catches the KeyboardInterrupt a
#: handler raised may raise a bare one of its own (watchfiles does, while ``index watch`` waits for
#: changes), which no longer says which signal it was.
_received: list[int] = []


class Interrupted(KeyboardInterrupt):
    """Ctrl-C or SIGTERM, raised where the program is, as Ctrl-C raises KeyboardInterrupt, with the
    signal that raised it."""

    def __init__(self, signal_number: int) -> None:
        super().__init__(INTERRUPTING_SIGNALS[signal_number])
        self.signal_number = signal_number


def _interrupt(signum: int, frame: object) -> None:
    _received.append(signum)
    raise Interrupted(signum)


def describe_os_error(error: OSError) -> str:
    """``too many open files: /path`` from an OSError, on one line."""
    reason = (error.strerror or str(error) or type(error).__name__).lower()
    return f"{reason}: {error.filename}" if error.filename else reason


@click.group(
    cls=IndexerGroup,
    context_settings={"help_option_names": ["-h", "--help"]},
    epilog=exit_codes(0, 1, 2, 3, 4, 5),
)
@click.version_option(package_name=DISTRIBUTION)
def main() -> None:
    """Index a folder of documents and search it by meaning."""


# -- build ----------------------------------------------------------------------------------------


def build_option(name: str, flag: str | None = None, **options: Any) -> Callable[[Callable], Callable]:
    """A ``--NAME`` option (or ``flag``) of ``index build`` whose default and help come from
    :class:`BuildOptions`."""
    concurrency = ", ".join(f"{kind} {count}" for kind, count in BUILTIN_CONCURRENCY.items())
    return click.option(
        flag or "--" + name.replace("_", "-"),
        name,
        default=getattr(BuildOptions, name),
        help=option_help(name, concurrency=concurrency),
        **options,
    )


class SizeType(click.ParamType):
    """A size in bytes, written ``64MB``, ``1.5G``, ``512k`` or as a number of bytes."""

    name = "SIZE"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> int:
        try:
            return parse_size(value)
        except ConfigError as error:
            self.fail(str(error), param, ctx)


#: The CLI's names for the build settings a warning may advise (the Python API names them by their
#: argument): warnings printed by ``index build`` and ``index watch`` name what the user can type.
CLI_OPTION_NAMES = {
    "allow_secrets": "--allow-secret",
    "max_file_size": "--max-file-size",
    "allow_empty": "--allow-empty",
    "ignore_files": "--no-ignore",
}


def cli_option_name(setting: str) -> str:
    """How the CLI names a build setting: its option (``--allow-secret``)."""
    return CLI_OPTION_NAMES.get(setting, "--" + setting.replace("_", "-"))


def walk_options(command: Callable) -> Callable:
    """The options of ``index build`` and ``index watch`` that say what the walk takes."""
    for option in reversed(
        [
            build_option("ignore_files", "--ignore/--no-ignore"),
            build_option("include", multiple=True, metavar="GLOB"),
            build_option("exclude", multiple=True, metavar="GLOB"),
            build_option("allow_secrets", "--allow-secret", multiple=True, metavar="GLOB"),
            build_option("max_file_size", type=SizeType()),
        ]
    ):
        command = option(command)
    return command


def walk_settings(
    ignore_files: bool | None,
    include: tuple[str, ...],
    exclude: tuple[str, ...],
    allow_secrets: tuple[str, ...],
    max_file_size: int | None,
) -> dict[str, Any]:
    """The walk options as :meth:`Index.build` takes them: a repeatable option not given is None, so
    the index's recorded value applies."""
    return {
        "ignore_files": ignore_files,
        "include": include or None,
        "exclude": exclude or None,
        "allow_secrets": allow_secrets or None,
        "max_file_size": max_file_size,
        "option_name": cli_option_name,
    }


@main.command(epilog=exit_codes(0, 1, 2, 3, 4, 5))
@click.argument("folder", type=click.Path(file_okay=False, path_type=str))
@db_option
@click.option(
    "--backend",
    "kind",
    default=None,
    metavar="|".join(BACKEND_KINDS),
    help="Embedding backend (default: the index's, or 'embedded' for a new index); a package can add "
    "more under the 'indexer.backends' entry point group.",
)
@click.option(
    "--model",
    default=None,
    help=f"Model name (embedded: {' or '.join(EMBEDDING_MODELS)}, default {DEFAULT_EMBEDDING_MODEL}; "
    "or a folder with model.onnx + tokenizer.json).",
)
@click.option(
    "--base-url",
    multiple=True,
    help="Server URL (openai: $OPENAI_BASE_URL; ollama: $OLLAMA_HOST). Repeat it to spread the batches "
    "over several servers of the same model.",
)
@click.option("--api-key", default=None, help="API key (default: $OPENAI_API_KEY). Never stored.")
@click.option(
    "--dimensions", type=int, default=None, help="Ask the server for vectors of this size (openai)."
)
@click.option(
    "--query-prefix", default=None, help="Text put before each query (default: the model's known one)."
)
@click.option(
    "--document-prefix", default=None, help="Text put before each chunk (default: the model's known one)."
)
@build_option("batch_size", type=click.IntRange(min=1), show_default=True)
@build_option("concurrency", type=click.IntRange(min=1))
@build_option("chunk_tokens", type=click.IntRange(min=MIN_CHUNK_TOKENS))
@walk_options
@build_option("allow_empty", is_flag=True)
@click.option(
    "--rebuild", is_flag=True, help="Settings differ from the index's: build anew and swap in at the end."
)
@build_option("wait", type=click.FloatRange(min=0), show_default=True)
@click.option("--quiet", "-q", is_flag=True, help="No progress, no warnings, no summary line.")
@click.option("--json", "as_json", is_flag=True, help="JSON lines on stdout: warnings, errors, a summary.")
@click.pass_context
def build(
    ctx: click.Context,
    folder: str,
    db_path: str | None,
    kind: str | None,
    model: str | None,
    base_url: tuple[str, ...],
    api_key: str | None,
    dimensions: int | None,
    query_prefix: str | None,
    document_prefix: str | None,
    batch_size: int,
    concurrency: int | None,
    chunk_tokens: int | None,
    ignore_files: bool | None,
    include: tuple[str, ...],
    exclude: tuple[str, ...],
    allow_secrets: tuple[str, ...],
    max_file_size: int | None,
    allow_empty: bool,
    rebuild: bool,
    wait: float,
    quiet: bool,
    as_json: bool,
) -> None:
    """Index FOLDER: embed new and changed files, remove deleted ones."""
    output = ctx.meta["output"] = Output(as_json, quiet, None if quiet or as_json else Progress())
    if not os.path.isdir(folder):  # before the index is opened: a typo creates nothing
        raise click.BadParameter(f"{folder} does not exist or is not a folder", param_hint="FOLDER")
    server = ServerOptions(base_url or None, api_key, dimensions, query_prefix, document_prefix)
    chosen = chosen_backend(kind, model, server)
    with Index.open(db_path or default_index_path()) as index:
        report = index.build(
            folder,
            backend=chosen,
            rebuild=rebuild,
            batch_size=batch_size,
            concurrency=concurrency,
            chunk_tokens=chunk_tokens,
            **walk_settings(ignore_files, include, exclude, allow_secrets, max_file_size),
            allow_empty=allow_empty,
            wait=wait,
            progress=output.progress or False,
            warn=output.warning,
        )
    show_report(output, report)
    sys.exit(report.exit_code)


def show_report(output: Output, report: Any) -> None:
    """A build's failures (the first 20 in text) and its summary: a line, or a JSON object."""
    shown = report.failures if output.as_json else report.failures[:20]
    for failure in shown:
        output.error(failure.reason, path=failure.path)
    if len(report.failures) > len(shown):
        output.error(f"... and {len(report.failures) - len(shown)} more files failed")
    if output.as_json:
        click.echo(
            json.dumps(
                {"time": iso_time_now(), "level": "info", "message": report.summary(), **report_dict(report)}
            )
        )
    elif not output.quiet:
        click.echo(report.summary())


@dataclass(frozen=True)
class ServerOptions:
    """What ``index build`` may say about a backend besides its kind and model."""

    base_url: tuple[str, ...] | None = None
    api_key: str | None = None
    dimensions: int | None = None
    query_prefix: str | None = None
    document_prefix: str | None = None

    def given(self, *allowed: str) -> list[str]:
        """The flags given that are not among ``allowed``."""
        return [
            f"--{name.replace('_', '-')}"
            for name, value in asdict(self).items()
            if value is not None and name not in allowed
        ]


def chosen_backend(kind: str | None, model: str | None, server: ServerOptions) -> EmbeddingBackend | None:
    """The backend the options name; None to let the index decide (its recorded backend)."""
    if kind is None and model is None:
        if server.given():
            raise click.UsageError(f"{', '.join(server.given())} need --backend")
        return None
    kind = kind or "embedded"
    allowed = {
        "ollama": ("base_url", "query_prefix", "document_prefix"),
        "openai": ("base_url", "api_key", "dimensions", "query_prefix", "document_prefix"),
    }.get(kind, ())
    if server.given(*allowed):
        raise click.UsageError(f"{', '.join(server.given(*allowed))} do not apply to --backend {kind}")
    if kind == "embedded":
        from indexer.backends.embedded import EmbeddedBackend

        return EmbeddedBackend(model)
    if not model:
        raise click.UsageError(f"--backend {kind} needs --model")
    if kind == "ollama":
        from indexer.backends.ollama import OllamaBackend

        return OllamaBackend(
            model, server.base_url, query_prefix=server.query_prefix, document_prefix=server.document_prefix
        )
    if kind == "openai":
        from indexer.backends.openai import OpenAIBackend

        return OpenAIBackend(
            model,
            server.base_url,
            server.api_key,
            dimensions=server.dimensions,
            query_prefix=server.query_prefix,
            document_prefix=server.document_prefix,
        )
    return make_backend({"backend": kind, "model": model})


def report_dict(report: Any) -> dict[str, Any]:
    """A build's report as JSON: every field, the exit code, its times in ISO 8601, and each file
    left out (``skipped``: path, kind, reason) with the counts by kind."""
    listed = ("failures", "warnings", "skipped")
    data = {key: value for key, value in vars(report).items() if key not in listed}
    data["failures"] = [{"path": failure.path, "reason": failure.reason} for failure in report.failures]
    data["skipped"] = [asdict(skipped) for skipped in report.skipped]
    data["skipped_by_kind"] = report.skipped_by_kind()
    data["warnings"] = [{"path": notice.path, "message": notice.message} for notice in report.warnings]
    data["started_at"] = iso_time(report.started_at)
    data["finished_at"] = iso_time(report.finished_at)
    data["exit_code"] = report.exit_code
    return data


# -- query ----------------------------------------------------------------------------------------


class QueryCommand(click.Command):
    """``index query``, whose question may start with a dash (``--leak-check=full``, ``-v``): click
    reads it as an unknown option, so the error says how to ask it instead."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        given = list(args)  # the parser consumes its list
        try:
            return super().parse_args(ctx, args)
        except click.NoSuchOption as error:
            if not error.possibilities:  # not a mistyped option of ours ("Did you mean --type?")
                asked = next((arg for arg in given if arg.startswith(error.option_name)), error.option_name)
                error.message += (
                    f" To search for text that starts with '-', put -- before it: "
                    f"index query -- {shlex.quote(asked)}"
                )
            raise


@main.command(cls=QueryCommand, epilog=exit_codes(0, 1, 2, 4, 5, c1=QUERY_CODE_1))
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
        click.echo(json.dumps([hit.to_dict() for hit in hits], ensure_ascii=False, indent=2))
    elif output_format == "csv":
        click.echo(hits_as_csv(hits), nl=False)
    elif hits:
        click.echo(
            hits_as_markdown(hits)
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
    try:
        return None if found is None else [Hit(**hit) for hit in found]
    except TypeError:  # a server of another version, whose hits have other fields
        return None


def use_color() -> bool:
    return sys.stdout.isatty() and not os.environ.get("NO_COLOR")


def snippet(text: str, limit: int = 240) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1].rsplit(" ", 1)[0] + " …"


def hits_as_text(hits: list[Any], question: str, color: bool) -> str:
    words = {word.lower() for word in question.split() if len(word) > 2}
    lines = []
    for number, hit in enumerate(hits, start=1):
        where = click.style(hit.citation, fg="cyan") if color else hit.citation
        heading = f"  [{hit.heading}]" if hit.heading else ""
        lines.append(f"{number}. {hit.score:.3f}  {where}{heading}")
        text = snippet(hit.text)
        if color and words:
            text = " ".join(
                click.style(w, bold=True) if w.lower().strip(".,:;()") in words else w for w in text.split()
            )
        lines.append(f"   {text}")
    return "\n".join(lines)


def hits_as_csv(hits: list[Any]) -> str:
    buffer = io.StringIO()
    writer = csv.writer(buffer)
    writer.writerow(["score", "path", "start_line", "end_line", "locator", "heading", "text"])
    for hit in hits:
        writer.writerow(
            [f"{hit.score:.6f}", hit.path, hit.start_line, hit.end_line, hit.locator, hit.heading, hit.text]
        )
    return buffer.getvalue()


def hits_as_markdown(hits: list[Any]) -> str:
    rows = ["| score | where | heading | snippet |", "|---|---|---|---|"]
    for hit in hits:
        cells = [f"{hit.score:.3f}", f"`{hit.citation}`", hit.heading, snippet(hit.text, 120)]
        rows.append("| " + " | ".join(cell.replace("|", "\\|") for cell in cells) + " |")
    return "\n".join(rows)


# -- status and remove ----------------------------------------------------------------------------


@main.command(epilog=exit_codes(0, 2, 4, 5))
@db_option
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.option(
    "--builds",
    "build_count",
    type=click.IntRange(min=0),
    default=5,
    show_default=True,
    help="How many builds to show.",
)
@click.pass_context
def status(ctx: click.Context, db_path: str | None, as_json: bool, build_count: int) -> None:
    """Show what the index holds, its size, and its last builds (when, how long, what they did)."""
    ctx.meta["output"] = Output(as_json)
    with Index.open(db_path or default_index_path(), create=False) as index:
        info = index.status(build_count)
    if as_json:
        click.echo(json.dumps(info, indent=2))
        return
    click.echo("\n".join(status_lines(info)))


def vector_search_line(vectors: dict[str, Any]) -> str:
    """``vectors     hnsw graph (usearch, int8), 12.0 MB file, ~12.1 MB in memory, 40 changes pending``."""
    parts = [vectors["structure"]]
    if vectors["file_bytes"]:
        parts.append(f"{vectors['file_bytes'] / 2**20:.1f} MB file")
    if vectors["memory_bytes"]:
        parts.append(f"~{vectors['memory_bytes'] / 2**20:.1f} MB in memory when searching")
    if vectors.get("pending_changes"):
        parts.append(f"{vectors['pending_changes']} changes since it was saved")
    return f"vectors     {', '.join(parts)}"


def status_lines(info: dict[str, Any]) -> list[str]:
    backend = (info["backend"] or {}).get("backend")
    lines = [
        f"index       {info['index']} ({info['size_bytes'] / 2**20:.1f} MB)",
        f"files       {info['files']}",
        f"chunks      {info['chunks']}",
        f"model       {info['model']} ({backend})",
        f"dimension   {info['dimension']}",
        vector_search_line(info["vector_search"]),
        f"fingerprint {info['fingerprint']}",
        f"scores      {info['scores']['note']}; threshold {threshold_text(info['scores'])}",
        f"re-ranker   {reranker_text(info['reranker'])}",
    ]
    lines += [
        f"root        {root['path']}  ({root['files']} files, {root['chunks']} chunks)"
        for root in info["roots"]
    ]
    for build_row in info["builds"]:
        lines.append(
            f"build #{build_row['id']} {build_row['started_at']}  {duration(build_row['seconds'])}  "
            f"{build_row['outcome']}: +{build_row['files_added']} ~{build_row['files_changed']} "
            f"-{build_row['files_removed']} files, {build_row['files_failed']} failed; "
            f"{build_row['chunks_embedded']} embedded, {build_row['chunks_reused']} re-used; "
            f"{build_row['requests']} requests, {build_row['tokens']} tokens"
        )
    return lines


def threshold_text(scores: dict[str, Any]) -> str:
    found = scores["default_min_score"]
    return ", ".join(f"{mode} {'none' if found[mode] is None else found[mode]}" for mode in found)


def reranker_text(reranker: dict[str, Any]) -> str:
    loaded = "loaded" if reranker["loaded"] else "loaded on first --rerank"
    return (
        f"{reranker['model']} {reranker['precision']} (sha256 {reranker['sha256'][:12]}), "
        f"{reranker['candidates']} candidates of {reranker['pair_tokens']} tokens, {loaded}"
    )


@main.command(epilog=exit_codes(0, 2, 3, 4, 5))
@click.argument("root", type=click.Path(path_type=str))
@db_option
@build_option("wait", type=click.FloatRange(min=0), show_default=True)
@click.option("--json", "as_json", is_flag=True, help="Print one JSON line.")
@click.pass_context
def remove(ctx: click.Context, root: str, db_path: str | None, wait: float, as_json: bool) -> None:
    """Remove the folder ROOT from the index: its files, chunks, vectors and keywords, in one step."""
    output = ctx.meta["output"] = Output(as_json)
    with Index.open(db_path or default_index_path(), create=False) as index:
        removed = index.remove_root(root, wait=wait)
    message = f"removed {root}: {removed} files"
    if output.as_json:
        output.log("info", message, root=root, files_removed=removed)
    else:
        click.echo(message)


# -- watch and eval -------------------------------------------------------------------------------


@main.command(epilog=exit_codes(0, 2, 3, 4, 5))
@click.argument("folder", type=click.Path(exists=True, file_okay=False, path_type=str))
@db_option
@click.option(
    "--debounce",
    type=click.IntRange(min=0),
    default=500,
    show_default=True,
    help="Milliseconds of quiet before a burst of changes triggers a build.",
)
@build_option("batch_size", type=click.IntRange(min=1), show_default=True)
@walk_options
@click.option("--quiet", "-q", is_flag=True, help="No warnings, no summary lines.")
@click.option(
    "--json", "as_json", is_flag=True, help="JSON lines on stdout: one summary per build, warnings, errors."
)
@click.pass_context
def watch(
    ctx: click.Context,
    folder: str,
    db_path: str | None,
    debounce: int,
    batch_size: int,
    ignore_files: bool | None,
    include: tuple[str, ...],
    exclude: tuple[str, ...],
    allow_secrets: tuple[str, ...],
    max_file_size: int | None,
    quiet: bool,
    as_json: bool,
) -> None:
    """Index FOLDER, then re-index it whenever its files change (Ctrl-C or SIGTERM stops)."""
    from indexer.watch import watch as watch_folder

    output = ctx.meta["output"] = Output(as_json, quiet)
    with Index.open(db_path or default_index_path()) as index:
        watch_folder(
            index,
            folder,
            lambda report: show_report(output, report),
            debounce_ms=debounce,
            batch_size=batch_size,
            warn=output.warning,
            **walk_settings(ignore_files, include, exclude, allow_secrets, max_file_size),
        )


@main.command(
    "eval", epilog=exit_codes(0, 1, 2, 3, 4, 5, c1="a floor given by --min-recall or --min-ndcg is not met")
)
@click.argument("folder", required=False, type=click.Path(exists=True, file_okay=False, path_type=str))
@click.option(
    "--fixture",
    type=click.Path(exists=True, dir_okay=False, path_type=str),
    help='Your own checks, run on an existing index (--db): JSON lines {"query": ..., "expected": [paths]}.',
)
@click.option(
    "--qrels", "split", default="test", show_default=True, help="Judgments to use: qrels/SPLIT.tsv."
)
@click.option(
    "--cache",
    "cache_dir",
    default=None,
    metavar="DIR",
    help="Where the documents and their index are kept between runs (default: ~/.cache/indexer/eval/...).",
)
@click.option(
    "--mode", "modes", multiple=True, type=click.Choice(MODES), help="Modes to score (default: all)."
)
@click.option(
    "--whole-documents",
    is_flag=True,
    help="Also score the model on each whole document embedded directly (no chunking).",
)
@click.option(
    "--per-query", is_flag=True, help="Each query's rank of its first relevant result, nDCG@10, top hits."
)
@click.option(
    "--min-recall", type=click.FloatRange(0, 1), default=None, help="Exit 1 when recall is lower (any mode)."
)
@click.option(
    "--min-ndcg", type=click.FloatRange(0, 1), default=None, help="Exit 1 when nDCG@10 is lower (any mode)."
)
@build_option("batch_size", type=click.IntRange(min=1), show_default=True)
@click.option("--quiet", "-q", is_flag=True, help="No progress.")
@click.option("--json", "as_json", is_flag=True, help="Print the scores as JSON.")
@click.option(
    "--db",
    "db_path",
    default=None,
    metavar="PATH",
    help="With FOLDER, the index to build it into (default: in the cache); with --fixture, the index to "
    "check (default: $INDEX_DB or ./index.db).",
)
@click.pass_context
def evaluate(
    ctx: click.Context,
    folder: str | None,
    fixture: str | None,
    split: str,
    cache_dir: str | None,
    modes: tuple[str, ...],
    whole_documents: bool,
    per_query: bool,
    min_recall: float | None,
    min_ndcg: float | None,
    batch_size: int,
    quiet: bool,
    as_json: bool,
    db_path: str | None,
) -> None:
    """Score retrieval: on a BEIR-layout collection FOLDER (nDCG@10, Recall@100, MRR@10 per mode), or
    on your own questions (--fixture) against an index you have."""
    ctx.meta["output"] = Output(as_json)
    if (folder is None) == (fixture is None):
        raise click.UsageError("give a BEIR FOLDER or --fixture FILE (one of them)")
    progress = None if quiet else Progress()
    if fixture is not None:
        from indexer.eval import fixtures

        questions = fixtures.load_checks(fixture)
        with Index.open(db_path or default_index_path(), create=False) as index:
            results = fixtures.run_checks(index, questions, modes or MODES, progress)
        title = f"{fixture}: {len(questions)} questions"
        recall = "recall@10"
    else:
        from indexer.eval import beir

        report = beir.run(
            folder,
            split,
            modes=modes or MODES,
            cache=cache_dir,
            db=db_path,
            whole_documents=whole_documents,
            batch_size=batch_size,
            progress=progress,
            per_query=per_query,
        )
        click.echo(f"index: {report.build_summary}", err=True)
        results = report.results
        title = (
            f"{report.collection}: {report.documents} documents, {report.queries} judged queries "
            f"(qrels/{split}.tsv), {report.seconds:.1f} s"
        )
        recall = "recall@100"
    if not per_query:
        for scores in results.values():
            scores.pop("queries", None)
    if as_json:
        click.echo(json.dumps(results, indent=2, ensure_ascii=False))
    else:
        click.echo("\n".join([title, *score_lines(results, recall)]))
    from indexer.eval.fixtures import unmet

    missed = unmet(results, {recall: min_recall, "ndcg@10": min_ndcg})
    if missed:
        click.echo(f"error: below the floor: {'; '.join(missed)}", err=True)
        sys.exit(1)


def score_lines(results: dict[str, dict[str, Any]], recall: str) -> list[str]:
    """The table of ``index eval``, and each query's line under its mode when there are any."""
    lines = [
        f"{'mode':<16}{'nDCG@10':>9}{recall.replace('recall', 'Recall'):>12}{'MRR@10':>9}{'median ms':>11}"
    ]
    for mode, scores in results.items():
        lines.append(
            f"{mode:<16}{scores['ndcg@10']:>9.4f}{scores[recall]:>12.4f}{scores['mrr@10']:>9.4f}"
            f"{scores.get('median_ms', float('nan')):>11.1f}"
        )
    for mode, scores in results.items():
        if scores.get("queries"):
            lines += ["", f"{mode}: rank of the first relevant result, nDCG@10, query -> best hit"]
            for row in scores["queries"]:
                rank = row["first_relevant_rank"] or "-"
                top = row["top"][0] if row["top"] else "nothing"
                lines.append(f"  {rank!s:>4} {row['ndcg@10']:.3f}  {row['query']}  -> {top}")
    return lines


def serving_module() -> Any:
    """:mod:`indexer.serving.run`, whose libraries are the optional ``serve`` extra."""
    try:
        from indexer.serving import run
    except ImportError as error:
        raise ConfigError(
            f"serving needs the serve extra ({error.name} is missing): pip install 'indexer-search[serve]'"
        ) from error
    return run


@main.command(epilog=exit_codes(0, 2, 4, 5))
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


@main.command("mcp", epilog=exit_codes(0, 2, 4, 5))
@db_option
def mcp_command(db_path: str | None) -> None:
    """Serve the index to an AI agent over MCP on stdin/stdout (tools: search, get, status)."""
    run = serving_module()
    say = lambda message: click.echo(message, err=True)  # noqa: E731
    with Index.open(db_path or default_index_path(), create=False) as index:
        run.serve_mcp_stdio(index, say=say)
