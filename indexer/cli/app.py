"""The ``index`` group and what every command shares: the one-line error and its documented exit
code, ``--db``, the output (text, or JSON lines with ``--json``), and Ctrl-C and SIGTERM turned into
a clean stop.

With ``--json`` a command writes JSON lines on stdout only (its results, its warnings and errors as
objects with ``time``, ``level`` and ``message``), so a log that collects both streams stays one JSON
object per line.
"""

from __future__ import annotations

import importlib
import json
import signal
from datetime import datetime
from typing import Any

import click

from indexer import DISTRIBUTION
from indexer.display import json_safe, visible
from indexer.errors import IndexerError, StorageError
from indexer.errors import exit_codes as exit_codes_of_errors
from indexer.pipeline.report import Notice
from indexer.progress import Progress

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
            click.echo(json_safe(json.dumps(record, ensure_ascii=False)))
        elif level == "error" or not self.quiet:
            line = f"{level}: {fields['path']}: {message}" if fields.get("path") else f"{level}: {message}"
            line = visible(line)  # a file's name or a reader's message may hold a terminal's escapes
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


#: Each command and where it is defined, imported when it is run or listed: ``index query`` loads
#: nothing that ``index build``, ``serve`` or ``status`` alone need.
COMMANDS = {
    "build": "indexer.cli.build:build",
    "query": "indexer.cli.query:query",
    "status": "indexer.cli.status:status",
    "remove": "indexer.cli.build:remove",
    "watch": "indexer.cli.build:watch",
    "eval": "indexer.cli.status:evaluate",
    "serve": "indexer.cli.serve:serve",
    "mcp": "indexer.cli.serve:mcp_command",
}


def commands() -> dict[str, click.Command]:
    """Every command, by name, in the order of :data:`COMMANDS` (each module imported)."""
    context = click.Context(main, info_name="index")
    return {name: command for name in COMMANDS if (command := main.get_command(context, name)) is not None}


class IndexerGroup(click.Group):
    """Turns library errors into one line (or one JSON object, with ``--json``) and the documented
    exit code; SIGTERM, as ``kill``, ``timeout`` and ``systemctl stop`` send it, stops a command as
    Ctrl-C does, so a build records that it was interrupted: exit 143 for SIGTERM, 130 for Ctrl-C.
    Its commands are imported from :data:`COMMANDS` when asked for."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*super().list_commands(ctx), *COMMANDS})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        command = super().get_command(ctx, cmd_name)
        if command is None and cmd_name in COMMANDS:
            module, name = COMMANDS[cmd_name].split(":")
            command = getattr(importlib.import_module(module), name)
            self.add_command(command, cmd_name)
        return command

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
            number = error.signal_number if isinstance(error, Interrupted) else signal_received()
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
INTERRUPTING_SIGNALS: dict[int, str] = {signal.SIGINT: "Ctrl-C", signal.SIGTERM: "SIGTERM"}

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


def signal_received() -> int:
    """The last signal that stopped the command (a bare KeyboardInterrupt says none: Ctrl-C)."""
    return _received[-1] if _received else signal.SIGINT


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
