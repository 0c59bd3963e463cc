"""The `index` command: a thin click shell over :class:`indexer.Index`.

Exit codes (also in the README and `index --help`):
  0  success
  1  some files failed (the others were indexed), or a query failed at the backend
  2  usage or configuration error (bad option, missing index, settings that differ from the index's)
  3  the index is locked by another build
  4  the embedding backend or the PostgreSQL database is unreachable (connection refused, unknown
     model, bad credentials)
"""

from __future__ import annotations

import csv
import io
import json
import os
import sys
from typing import Any

import click

from indexer.api import DEFAULT_BATCH_SIZE, Index, default_index_path
from indexer.errors import IndexerError
from indexer.search import DEFAULT_MIN_SCORE

EXIT_CODES_HELP = """\b
Exit codes:
  0  success
  1  some files failed (the others were indexed)
  2  usage or configuration error
  3  index locked by another build
  4  embedding backend or database unreachable
"""

db_option = click.option(
    "--db",
    "db_path",
    envvar="INDEX_DB",
    default=None,
    metavar="PATH",
    help="Index file, or a postgresql:// URL (default: $INDEX_DB or ./index.db).",
)


class IndexerGroup(click.Group):
    """Turns library errors into one line on stderr and the documented exit code."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except IndexerError as error:
            click.echo(f"error: {error}", err=True)
            ctx.exit(error.exit_code)


@click.group(cls=IndexerGroup, epilog=EXIT_CODES_HELP)
@click.version_option(package_name="indexer")
def main() -> None:
    """Index a folder of documents and search it by meaning."""


@main.command(epilog=EXIT_CODES_HELP)
@click.argument("folder", type=click.Path(file_okay=False, path_type=str))
@db_option
@click.option(
    "--backend",
    type=click.Choice(["embedded", "ollama", "openai"]),
    default=None,
    help="Embedding backend (default: the index's, or 'embedded' for a new index).",
)
@click.option(
    "--model", default=None, help="Model name, or for 'embedded' a folder with model.onnx + tokenizer.json."
)
@click.option("--base-url", default=None, help="Server URL (openai: $OPENAI_BASE_URL; ollama: $OLLAMA_HOST).")
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
@click.option(
    "--batch-size",
    type=click.IntRange(min=1),
    default=DEFAULT_BATCH_SIZE,
    show_default=True,
    help="Chunks per embed call.",
)
@click.option(
    "--concurrency",
    type=click.IntRange(min=1),
    default=None,
    help="Batches in flight at once (default: 1 for embedded and ollama, 4 for openai).",
)
@click.option("--chunk-tokens", type=int, default=None, help="Smaller chunks than the model's input limit.")
@click.option(
    "--rebuild", is_flag=True, help="Settings differ from the index's: build anew and swap in at the end."
)
@click.option(
    "--wait",
    "wait_seconds",
    type=click.FloatRange(min=0),
    default=0,
    show_default=True,
    help="Seconds to wait for another build to finish.",
)
@click.option("--quiet", "-q", is_flag=True, help="No progress bar, no warnings, no summary line.")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON summary object.")
def build(
    folder: str,
    db_path: str | None,
    backend: str | None,
    model: str | None,
    base_url: str | None,
    api_key: str | None,
    dimensions: int | None,
    query_prefix: str | None,
    document_prefix: str | None,
    batch_size: int,
    concurrency: int | None,
    chunk_tokens: int | None,
    rebuild: bool,
    wait_seconds: float,
    quiet: bool,
    as_json: bool,
) -> None:
    """Index FOLDER: embed new and changed files, remove deleted ones."""
    chosen = backend_from_options(
        backend, model, base_url, api_key, dimensions, query_prefix, document_prefix
    )
    show_progress = not quiet and not as_json and sys.stderr.isatty()
    warn = (lambda message: None) if quiet else (lambda message: click.echo(f"warning: {message}", err=True))
    with Index.open(db_path or default_index_path()) as index:
        report = index.build(
            folder,
            backend=chosen,
            batch_size=batch_size,
            concurrency=concurrency,
            chunk_tokens=chunk_tokens,
            rebuild=rebuild,
            wait=wait_seconds,
            progress=show_progress,
            warn=warn,
        )
    for failure in report.failures[:20]:
        click.echo(f"error: {failure.path}: {failure.reason}", err=True)
    if len(report.failures) > 20:
        click.echo(f"error: ... and {len(report.failures) - 20} more files failed", err=True)
    if as_json:
        click.echo(json.dumps(report_dict(report)))
    elif not quiet:
        click.echo(report.summary())
    sys.exit(report.exit_code)


def backend_from_options(
    kind: str | None,
    model: str | None,
    base_url: str | None,
    api_key: str | None,
    dimensions: int | None,
    query_prefix: str | None,
    document_prefix: str | None,
):  # noqa: ANN201
    """A backend when the options name one; None to let the index decide (its recorded backend)."""
    if kind is None and model is None:
        if any(value is not None for value in (base_url, api_key, dimensions, query_prefix, document_prefix)):
            raise click.UsageError("--base-url, --api-key, --dimensions and prefixes need --backend")
        return None
    from indexer.backends import make_backend

    config: dict[str, Any] = {"backend": kind or "embedded", "model": model}
    if config["backend"] == "ollama":
        config.update(host=base_url, query_prefix=query_prefix, document_prefix=document_prefix)
    elif config["backend"] == "openai":
        config.update(
            base_url=base_url,
            api_key=api_key,
            dimensions=dimensions,
            query_prefix=query_prefix,
            document_prefix=document_prefix,
        )
    elif any(value is not None for value in (base_url, api_key, dimensions, query_prefix, document_prefix)):
        raise click.UsageError(
            "--base-url, --api-key, --dimensions and prefixes apply to ollama and openai only"
        )
    if config["backend"] != "embedded" and not model:
        raise click.UsageError(f"--backend {config['backend']} needs --model")
    return make_backend(config)


def report_dict(report: Any) -> dict[str, Any]:
    data = {key: value for key, value in vars(report).items() if key not in ("failures", "warnings")}
    data["failures"] = [{"path": failure.path, "reason": failure.reason} for failure in report.failures]
    data["warnings"] = list(report.warnings)
    data["exit_code"] = report.exit_code
    return data


@main.command(epilog=EXIT_CODES_HELP)
@click.argument("text")
@db_option
@click.option("-k", "k", type=click.IntRange(min=1), default=5, show_default=True, help="How many hits.")
@click.option(
    "--mode", type=click.Choice(["hybrid", "vector", "keyword"]), default="hybrid", show_default=True
)
@click.option(
    "--path", "paths", multiple=True, help="Only files whose relative path matches this glob (repeatable)."
)
@click.option("--type", "types", multiple=True, help="Only files with this extension, e.g. md (repeatable).")
@click.option(
    "--min-score",
    type=float,
    default=None,
    help=f"Drop hits scoring lower; scores run 0..1 in every mode. Default {DEFAULT_MIN_SCORE} in keyword "
    "mode and with the built-in model (calibrated: an off-topic question returns nothing), none with "
    "other models. 0 keeps every hit.",
)
@click.option("--json", "as_json", is_flag=True, help="Same as --format json.")
@click.option(
    "--format", "output_format", type=click.Choice(["text", "json", "csv", "markdown"]), default="text"
)
@click.option("--base-url", default=None, help="Reach the index's embedding server at this address instead.")
@click.option("--api-key", default=None, help="API key for the index's server (default: $OPENAI_API_KEY).")
def query(
    text: str,
    db_path: str | None,
    k: int,
    mode: str,
    paths: tuple[str, ...],
    types: tuple[str, ...],
    min_score: float | None,
    as_json: bool,
    output_format: str,
    base_url: str | None,
    api_key: str | None,
) -> None:
    """Print the chunks that best match TEXT, with where they come from."""
    with Index.open(db_path or default_index_path(), create=False) as index:
        if base_url is not None or api_key is not None:
            index.connect(base_url, api_key)
        if index.backend is not None and mode != "keyword":
            index.backend.one_shot = True  # this process asks one question: start fast
        if min_score is None:
            min_score = index.default_min_score(mode)
        hits = index.search(text, k=k, mode=mode, paths=paths, types=types, min_score=min_score)
    output_format = "json" if as_json else output_format
    if output_format == "json":
        click.echo(json.dumps([hit.to_dict() for hit in hits], ensure_ascii=False, indent=2))
    elif output_format == "csv":
        click.echo(hits_as_csv(hits), nl=False)
    elif output_format == "markdown":
        click.echo(hits_as_markdown(hits))
    else:
        click.echo(hits_as_text(hits, text, color=use_color()))


def use_color() -> bool:
    return sys.stdout.isatty() and not os.environ.get("NO_COLOR")


def snippet(text: str, limit: int = 240) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1].rsplit(" ", 1)[0] + " …"


def hits_as_text(hits: list[Any], question: str, color: bool) -> str:
    if not hits:
        return "no results"
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
    writer.writerow(["score", "path", "start_line", "end_line", "heading", "text"])
    for hit in hits:
        writer.writerow([f"{hit.score:.6f}", hit.path, hit.start_line, hit.end_line, hit.heading, hit.text])
    return buffer.getvalue()


def hits_as_markdown(hits: list[Any]) -> str:
    rows = ["| score | where | heading | snippet |", "|---|---|---|---|"]
    for hit in hits:
        cells = [f"{hit.score:.3f}", f"`{hit.citation}`", hit.heading, snippet(hit.text, 120)]
        rows.append("| " + " | ".join(cell.replace("|", "\\|") for cell in cells) + " |")
    return "\n".join(rows)


@main.command(epilog=EXIT_CODES_HELP)
@db_option
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def status(db_path: str | None, as_json: bool) -> None:
    """Show what the index holds and its last builds."""
    with Index.open(db_path or default_index_path(), create=False) as index:
        info = index.status()
    if as_json:
        click.echo(json.dumps(info, indent=2))
        return
    click.echo(f"index       {info['index']}")
    click.echo(f"files       {info['files']}")
    click.echo(f"chunks      {info['chunks']}")
    click.echo(f"model       {info['model']} ({(info['backend'] or {}).get('backend')})")
    click.echo(f"dimension   {info['dimension']}")
    click.echo(f"fingerprint {info['fingerprint']}")
    for root in info["roots"]:
        click.echo(f"root        {root}")
    for build_row in info["builds"]:
        click.echo(
            f"build #{build_row['id']} {build_row['outcome']}: +{build_row['files_added']} "
            f"~{build_row['files_changed']} -{build_row['files_removed']} files, "
            f"{build_row['files_failed']} failed; "
            f"{build_row['chunks_embedded']} embedded, {build_row['chunks_reused']} re-used; "
            f"{build_row['requests']} requests, {build_row['tokens']} tokens"
        )


@main.command(epilog=EXIT_CODES_HELP)
@click.argument("folder", type=click.Path(exists=True, file_okay=False, path_type=str))
@db_option
@click.option(
    "--debounce",
    type=click.IntRange(min=0),
    default=500,
    show_default=True,
    help="Milliseconds of quiet before a burst of changes triggers a build.",
)
@click.option("--batch-size", type=click.IntRange(min=1), default=DEFAULT_BATCH_SIZE, show_default=True)
@click.option("--json", "as_json", is_flag=True, help="One JSON summary line per build.")
def watch(folder: str, db_path: str | None, debounce: int, batch_size: int, as_json: bool) -> None:
    """Index FOLDER, then re-index it whenever its files change (Ctrl-C stops)."""
    from indexer.watch import watch as watch_folder

    def show(report: Any) -> None:
        for failure in report.failures[:20]:
            click.echo(f"error: {failure.path}: {failure.reason}", err=True)
        click.echo(json.dumps(report_dict(report)) if as_json else report.summary())

    warn = lambda message: click.echo(f"warning: {message}", err=True)  # noqa: E731
    with Index.open(db_path or default_index_path()) as index:
        watch_folder(index, folder, show, debounce_ms=debounce, batch_size=batch_size, warn=warn)


@main.command("eval", epilog=EXIT_CODES_HELP)
@click.argument("folder", type=click.Path(exists=True, file_okay=False, path_type=str))
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
    "--mode",
    "modes",
    multiple=True,
    type=click.Choice(["vector", "keyword", "hybrid"]),
    help="Modes to score (default: all three).",
)
@click.option(
    "--whole-documents",
    is_flag=True,
    help="Also score the model on each whole document embedded directly (no chunking).",
)
@click.option("--batch-size", type=click.IntRange(min=1), default=DEFAULT_BATCH_SIZE, show_default=True)
@click.option("--json", "as_json", is_flag=True, help="Print the scores as JSON.")
@click.option(
    "--db",
    "db_path",
    default=None,
    metavar="PATH",
    help="Index to build the collection into: a file or a postgresql:// URL (default: in the cache).",
)
def evaluate(
    folder: str,
    split: str,
    cache_dir: str | None,
    modes: tuple[str, ...],
    whole_documents: bool,
    batch_size: int,
    as_json: bool,
    db_path: str | None,
) -> None:
    """Score retrieval on a BEIR-layout collection: nDCG@10, Recall@100, MRR@10 per mode."""
    import time
    from pathlib import Path

    from indexer import evaluation

    started = time.perf_counter()
    collection = evaluation.load_collection(folder, split)
    cache = Path(cache_dir) if cache_dir else evaluation.default_cache(folder)
    evaluation.write_documents(collection, cache / "documents")
    with Index.open(db_path or cache / "index.db") as index:
        report = index.build(
            cache / "documents",
            batch_size=batch_size,
            progress=sys.stderr.isatty(),
            warn=lambda message: None,
        )
        if report.exit_code != 0:
            raise IndexerError(
                f"building the evaluation index failed: {report.failures[:1] or report.stopped}"
            )
        click.echo(f"index: {report.summary()}", err=True)
        results = evaluation.evaluate(collection, index, modes or evaluation.MODES)
        if whole_documents:
            results["whole_documents"] = evaluation.evaluate_whole_documents(collection, index.backend, cache)
    seconds = time.perf_counter() - started
    if as_json:
        click.echo(json.dumps(results, indent=2))
        return
    click.echo(
        f"{collection.name}: {len(collection.documents)} documents, {len(collection.queries)} judged queries "
        f"(qrels/{split}.tsv), {seconds:.1f} s"
    )
    click.echo(f"{'mode':<16}{'nDCG@10':>9}{'Recall@100':>12}{'MRR@10':>9}{'median ms':>11}")
    for mode, scores in results.items():
        click.echo(
            f"{mode:<16}{scores['ndcg@10']:>9.4f}{scores['recall@100']:>12.4f}{scores['mrr@10']:>9.4f}"
            f"{scores.get('median_ms', float('nan')):>11.1f}"
        )
