"""How the commands print what they got: hits (text with the matched words highlighted, CSV,
Markdown), build reports, status and evaluation scores. Formatting only: nothing here reads an
index."""

from __future__ import annotations

import csv
import io
import json
import os
import sys
from dataclasses import asdict
from typing import Any

import click

from indexer.api import iso_time
from indexer.cli.app import Output, iso_time_now
from indexer.display import csv_cell, json_safe, markdown_cell, visible
from indexer.progress import duration
from indexer.snippets import QueryWords, hit_snippet_lines


def show_report(output: Output, report: Any) -> None:
    """A build's failures (the first 20 in text) and its summary: a line, or a JSON object."""
    shown = report.failures if output.as_json else report.failures[:20]
    for failure in shown:
        output.error(failure.reason, path=failure.path)
    if len(report.failures) > len(shown):
        output.error(f"... and {len(report.failures) - len(shown)} more files failed")
    if output.as_json:
        record = {"time": iso_time_now(), "level": "info", "message": report.summary(), **report_dict(report)}
        click.echo(json_safe(json.dumps(record)))
    elif not output.quiet:
        click.echo(visible(report.summary()))


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


def use_color() -> bool:
    return sys.stdout.isatty() and not os.environ.get("NO_COLOR")


def hits_as_text(hits: list[Any], question: str, color: bool) -> str:
    """Each hit's rank, score, citation and heading path, the citations of its copies (the same text
    in other files), and under them the lines that match (:mod:`indexer.snippets`), the question's
    words in bold on a terminal that shows colour."""
    wanted = QueryWords.of(question)
    lines = []
    for number, hit in enumerate(hits, start=1):
        citation = visible(hit.citation)
        where = click.style(citation, fg="cyan") if color else citation
        heading = f"  [{visible(hit.heading)}]" if hit.heading else ""
        lines.append(f"{number}. {hit.score:.3f}  {where}{heading}")
        if hit.copies:
            lines.append(f"   also in {visible(', '.join(hit.copies_shown()))}")
        for line in hit_snippet_lines(hit, question):
            shown = visible(line)
            if color:
                shown = " ".join(
                    click.style(word, bold=True) if wanted.matches(word.strip(".,:;()*`'\"")) else word
                    for word in shown.split(" ")
                )
            lines.append(f"   {shown}")
    return "\n".join(lines)


def hits_as_csv(hits: list[Any]) -> str:
    """Hits as CSV, every text cell made safe for a spreadsheet (:func:`indexer.display.csv_cell`);
    ``copies`` holds the citations of the hit's copies, one a line (with its folder where that is
    not the hit's)."""
    buffer = io.StringIO()
    writer = csv.writer(buffer)
    writer.writerow(["score", "path", "start_line", "end_line", "locator", "heading", "text", "copies"])
    for hit in hits:
        copies = "\n".join(hit.copies_shown())
        texts = [csv_cell(value) for value in (hit.path, hit.heading, hit.text, copies)]
        locator = csv_cell(hit.locator)
        writer.writerow([f"{hit.score:.6f}", texts[0], hit.start_line, hit.end_line, locator, *texts[1:]])
    return buffer.getvalue()


def hits_as_markdown(hits: list[Any], question: str) -> str:
    """Hits as a Markdown table, the matching lines as the snippet, a hit's copies cited after it;
    every cell on one line."""
    rows = ["| score | where | heading | snippet |", "|---|---|---|---|"]
    for hit in hits:
        shown = " ".join(hit_snippet_lines(hit, question, width=120))
        cited = [markdown_cell(where).replace("`", "'") for where in (hit.citation, *hit.copies_shown())]
        where = " ".join(f"`{citation}`" for citation in cited)
        cells = [f"{hit.score:.3f}", where, markdown_cell(hit.heading), markdown_cell(shown)]
        rows.append("| " + " | ".join(cells) + " |")
    return "\n".join(rows)


def vector_search_line(vectors: dict[str, Any]) -> str:
    """``vectors     hnsw graph (usearch, int8), 12.0 MB file, ~12.1 MB in memory, 40 changes pending``."""
    parts = [vectors["structure"]]
    if vectors["file_bytes"]:
        parts.append(f"{vectors['file_bytes'] / 2**20:.1f} MB file")
    if vectors["memory_bytes"]:
        parts.append(f"~{vectors['memory_bytes'] / 2**20:.1f} MB in memory when searching")
    if vectors.get("rows_file_bytes"):
        parts.append(f"{vectors['rows_file_bytes'] / 2**20:.1f} MB float32 copy (pages read per search)")
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
    return [visible(line) for line in lines]


def threshold_text(scores: dict[str, Any]) -> str:
    found = scores["default_min_score"]
    return ", ".join(f"{mode} {'none' if found[mode] is None else found[mode]}" for mode in found)


def reranker_text(reranker: dict[str, Any]) -> str:
    loaded = "loaded" if reranker["loaded"] else "loaded on first --rerank"
    return (
        f"{reranker['model']} {reranker['precision']} (sha256 {reranker['sha256'][:12]}), "
        f"{reranker['candidates']} candidates of {reranker['pair_tokens']} tokens, {loaded}"
    )


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
                lines.append(visible(f"  {rank!s:>4} {row['ndcg@10']:.3f}  {row['query']}  -> {top}"))
    return lines
