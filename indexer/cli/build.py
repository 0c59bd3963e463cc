"""``index build``, ``index watch`` and ``index remove``: the commands that change an index, their
options read from :class:`indexer.pipeline.options.BuildOptions`."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import Any

import click

from indexer.api import Index, default_index_path
from indexer.backends import EmbeddingBackend
from indexer.backends.kinds import BACKEND_KINDS, BUILTIN_CONCURRENCY, backend_class
from indexer.backends.packaged import DEFAULT_EMBEDDING_MODEL, EMBEDDING_MODELS
from indexer.cli.app import Output, db_option, exit_codes
from indexer.cli.output import show_report
from indexer.display import visible
from indexer.errors import ConfigError
from indexer.pipeline.options import MIN_CHUNK_TOKENS, BuildOptions, option_help
from indexer.progress import Progress
from indexer.sizes import parse_size


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


@click.command(epilog=exit_codes(0, 1, 2, 3, 4, 5))
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
@build_option("workers", type=click.IntRange(min=0))
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
    workers: int | None,
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
            workers=workers,
            chunk_tokens=chunk_tokens,
            **walk_settings(ignore_files, include, exclude, allow_secrets, max_file_size),
            allow_empty=allow_empty,
            wait=wait,
            progress=output.progress or False,
            warn=output.warning,
        )
    show_report(output, report)
    sys.exit(report.exit_code)


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
    backend = backend_class(kind)
    allowed = backend.command_line_options
    if server.given(*allowed):
        raise click.UsageError(f"{', '.join(server.given(*allowed))} do not apply to --backend {kind}")
    if backend.needs_model and not model:
        raise click.UsageError(f"--backend {kind} needs --model")
    chosen = {name: value for name, value in asdict(server).items() if name in allowed and value is not None}
    return backend.from_command_line(model, **chosen)


@click.command(epilog=exit_codes(0, 2, 3, 4, 5))
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
        click.echo(visible(message))


@click.command(epilog=exit_codes(0, 2, 3, 4, 5))
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
