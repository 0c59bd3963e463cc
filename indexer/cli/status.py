"""``index status`` and ``index eval``: what an index holds and how it was built, and how well it
answers."""

from __future__ import annotations

import json
import sys

import click

from indexer.api import Index, default_index_path
from indexer.cli.app import Output, db_option, exit_codes
from indexer.cli.build import build_option
from indexer.cli.output import score_lines, status_lines
from indexer.display import json_safe, visible
from indexer.progress import Progress
from indexer.request import MODES


@click.command(epilog=exit_codes(0, 2, 4, 5))
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
        click.echo(json_safe(json.dumps(info, indent=2)))
        return
    click.echo("\n".join(status_lines(info)))


@click.command(
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
    progress = None if quiet else Progress()
    if fixture is not None and folder is None:
        from indexer.eval import fixtures

        questions = fixtures.load_checks(fixture)
        with Index.open(db_path or default_index_path(), create=False) as index:
            results = fixtures.run_checks(index, questions, modes or MODES, progress)
        title = f"{fixture}: {len(questions)} questions"
        recall = "recall@10"
    elif folder is not None and fixture is None:
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
        click.echo(visible(f"index: {report.build_summary}"), err=True)
        results = report.results
        title = (
            f"{report.collection}: {report.documents} documents, {report.queries} judged queries "
            f"(qrels/{split}.tsv), {report.seconds:.1f} s"
        )
        recall = "recall@100"
    else:
        raise click.UsageError("give a BEIR FOLDER or --fixture FILE (one of them)")
    if not per_query:
        for scores in results.values():
            scores.pop("queries", None)
    if as_json:
        click.echo(json_safe(json.dumps(results, indent=2, ensure_ascii=False)))
    else:
        click.echo("\n".join([title, *score_lines(results, recall)]))
    from indexer.eval.fixtures import unmet

    missed = unmet(results, {recall: min_recall, "ndcg@10": min_ndcg})
    if missed:
        click.echo(visible(f"error: below the floor: {'; '.join(missed)}"), err=True)
        sys.exit(1)
