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


class SizeType(click.ParamType):
    """A size in bytes, written ``64MB``, ``1.5G``, ``512k`` or as a number of bytes."""

    name = "SIZE"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> int:
        try:
            return parse_size(value)
        except ConfigError as error:
            self.fail(str(error), param, ctx)


#: How the CLI spells and types the build settings it offers (``flag``: its option when not
#: ``--NAME``); each option's default and help are :class:`BuildOptions`'s.
CLI_BUILD_OPTIONS: dict[str, dict[str, Any]] = {
    "batch_size": {"type": click.IntRange(min=1), "show_default": True},
    "concurrency": {"type": click.IntRange(min=1)},
    "workers": {"type": click.IntRange(min=0)},
    "chunk_tokens": {"type": click.IntRange(min=MIN_CHUNK_TOKENS)},
    "ignore_files": {"flag": "--ignore/--no-ignore"},
    "include": {"multiple": True, "metavar": "GLOB"},
    "exclude": {"multiple": True, "metavar": "GLOB"},
    "allow_secrets": {"flag": "--allow-secret", "multiple": True, "metavar": "GLOB"},
    "max_file_size": {"type": SizeType()},
    "allow_empty": {"is_flag": True},
    "wait": {"type": click.FloatRange(min=0), "show_default": True},
}
#: The settings that say what the walk takes, offered by ``index build`` and ``index watch``.
WALK_SETTINGS = ("ignore_files", "include", "exclude", "allow_secrets", "max_file_size")


def build_options(*names: str) -> Callable[[Callable], Callable]:
    """The options of the :class:`BuildOptions` fields ``names``, in that order, each with the
    field's default and help (its spelling and type from :data:`CLI_BUILD_OPTIONS`)."""
    concurrency = ", ".join(f"{kind} {count}" for kind, count in BUILTIN_CONCURRENCY.items())

    def add(command: Callable) -> Callable:
        for name in reversed(names):
            spelling = dict(CLI_BUILD_OPTIONS[name])
            flag = spelling.pop("flag", "--" + name.replace("_", "-"))
            default = getattr(BuildOptions, name)
            help_text = option_help(name, concurrency=concurrency)
            command = click.option(flag, name, default=default, help=help_text, **spelling)(command)
        return command

    return add


def cli_option_name(setting: str) -> str:
    """How the CLI names a build setting a warning advises: its option (``--allow-secret``; for a
    switch, the side that turns it off: ``--no-ignore``)."""
    flag = CLI_BUILD_OPTIONS.get(setting, {}).get("flag", "--" + setting.replace("_", "-"))
    return flag.split("/")[-1]


def build_settings(settings: dict[str, Any]) -> dict[str, Any]:
    """The build options given on the command line as :meth:`Index.build` takes them: a repeatable
    option not given is None, so the index's recorded value applies; warnings name the options."""
    given = {
        name: (value or None) if CLI_BUILD_OPTIONS[name].get("multiple") else value
        for name, value in settings.items()
    }
    return {**given, "option_name": cli_option_name}


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
@build_options("batch_size", "concurrency", "workers", "chunk_tokens", *WALK_SETTINGS, "allow_empty")
@click.option(
    "--rebuild", is_flag=True, help="Settings differ from the index's: build anew and swap in at the end."
)
@build_options("wait")
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
    rebuild: bool,
    quiet: bool,
    as_json: bool,
    **settings: Any,
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
            progress=output.progress or False,
            warn=output.warning,
            **build_settings(settings),
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
@build_options("wait")
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
@build_options("batch_size", *WALK_SETTINGS)
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
    quiet: bool,
    as_json: bool,
    **settings: Any,
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
            warn=output.warning,
            **build_settings(settings),
        )
