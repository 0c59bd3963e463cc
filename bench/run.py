"""`make bench`: run every benchmark script, print one table, write it to bench/RESULTS.md (one
table per subject, above the sections written by hand), and fail on a regression.

Each script prints its rows with `--json` as one line of JSON, the last of its stdout; a row is made
by bench/support/rows.py, which says what it holds. Every figure is a ratio against a reference measured in
the same run, because the machines this runs on are shared and noisy.

A run exits 1 when a script fails or a row misses its target and is not a known miss no worse than
it stood (bench/support/gate.py says how; bench/known_misses.json lists the misses and why). ``--quick``
runs small sizes, which no target is about: it fails only when a script fails. ``--check`` judges
the rows of the last runs (bench/results.json) against the known misses, running nothing.

    python bench/run.py [--quick] [--only NAME ...] [--rows NAME=FILE ...]
    python bench/run.py --check [FILE]
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path

from support import gate
from support.rows import COLUMNS, cell

BENCH = Path(__file__).resolve().parent
SCRIPTS = [
    "bench_pipeline",
    "bench_embedded",
    "bench_embed_build",
    "bench_peak",
    "bench_http",
    "bench_query",
    "compare_vector_indexes",
    "bench_filters",
    "bench_postgres",
    "bench_cli",
    "bench_ranking",
    "bench_models",
    "bench_rerank",
    "bench_serve",
    "bench_redaction",
    "bench_memory",
]
#: The subjects RESULTS.md groups the rows of the last runs by, each with the scripts that measure it
#: (a script named in none goes under OTHER).
SUBJECTS = {
    "Building an index": ("bench_pipeline", "bench_http"),
    "Embedding speed": ("bench_embedded", "bench_embed_build", "bench_peak"),
    "Search at scale": (
        "bench_query",
        "compare_vector_indexes",
        "bench_filters",
        "bench_postgres",
        "bench_cli",
        "bench_serve",
    ),
    "Ranking quality": ("bench_ranking",),
    "Other models and re-ranking": ("bench_models", "bench_rerank"),
    "Robustness": ("bench_redaction", "bench_memory"),
}
OTHER = "Other"
#: The heading of the generated part of RESULTS.md; the sections written by hand follow it.
RUNS_HEADING = "## The last runs, by subject"


def run_script(name: str, quick: bool) -> tuple[list[dict], float, str]:
    command = [sys.executable, str(BENCH / f"{name}.py"), "--json"] + (["--quick"] if quick else [])
    started = time.perf_counter()
    result = subprocess.run(command, capture_output=True, text=True, cwd=BENCH.parent)
    seconds = time.perf_counter() - started
    if result.returncode != 0:
        return [], seconds, f"{name} failed (exit {result.returncode}): {result.stderr.strip()[-600:]}"
    try:
        return json.loads(result.stdout.strip().splitlines()[-1]), seconds, ""
    except (json.JSONDecodeError, IndexError) as error:
        return [], seconds, f"{name} printed no JSON rows ({error}): {result.stdout[-300:]}"


def table(rows: list[dict]) -> str:
    """The rows as one Markdown table, with each row's note and date."""
    header = [*COLUMNS, "note", "measured"]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for row in rows:
        cells = [cell(row, column).replace("|", "\\|") for column in header]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def by_subject(rows: list[dict]) -> str:
    """The rows as one Markdown table per subject, in the order of SUBJECTS."""
    subject_of = {name: subject for subject, names in SUBJECTS.items() for name in names}
    parts = []
    for subject in [*SUBJECTS, OTHER]:
        picked = [row for row in rows if subject_of.get(row["script"], OTHER) == subject]
        if picked:
            parts.append(f"### {subject}\n\n{table(picked)}\n")
    return "\n".join(parts)


def results_text(header: str, rows: list[dict], problems: list[str], hand: str) -> str:
    """RESULTS.md: the header line of the last runs, their rows by subject, then the sections
    written by hand."""
    notes = "".join(f"\n- problem: {problem}" for problem in problems)
    return (
        f"# Benchmark results\n\n{header}\n\n"
        "A row marked KNOWN misses its target for the reason bench/known_misses.json gives; "
        "`make bench` fails on FAIL and WORSE (bench/support/gate.py). Below the tables, what was "
        "measured by hand (before/after comparisons, fits, studies), by subject.\n\n"
        f"{RUNS_HEADING}\n\n{by_subject(rows)}{notes}\n{hand}"
    )


def write_results(
    rows: list[dict],
    problems: list[str],
    names: list[str],
    partial: bool,
    known: list[gate.KnownMiss],
    pieces: Sequence[str] = (),
) -> None:
    """Write bench/RESULTS.md (and its rows as bench/results.json). A run of some scripts only
    (``--only``) replaces their rows and keeps the others' from the last run, each with its date
    (and judged again, since the known misses may have changed since)."""
    stamp = datetime.datetime.now().strftime("%Y-%m-%d %H:%M")
    rows = [{**row, "measured": stamp} for row in rows]
    saved = BENCH / "results.json"
    if partial and saved.exists():
        kept = [row for row in json.loads(saved.read_text()) if row.get("script") not in names]
        rows = sorted(kept + rows, key=lambda row: SCRIPTS.index(row["script"]))
    for verdict in gate.judge_rows(rows, known):
        verdict.line["verdict"] = verdict.state
    saved.write_text(json.dumps(rows, indent=1) + "\n")
    dates = sorted({row["measured"] for row in rows})
    command = "`make bench`"
    if partial:
        rows_from = "".join(f" --rows {piece}" for piece in pieces)
        command += f", then `python bench/run.py --only {' '.join(names)}{rows_from}`"
    header = (
        f"{', '.join(dates)}; the last run on {os.cpu_count()} cores, {machine()}, "
        f"Python {platform.python_version()}; commands: {command}"
    )
    results = BENCH / "RESULTS.md"
    results.write_text(results_text(header, rows, problems, hand_written(results)))


def machine() -> str:
    """The CPU of this run, by model and the instruction sets the kernels choose by (machines of the
    project differ: the rows of one say nothing of another's)."""
    model, flags = platform.machine(), set()
    cpuinfo = Path("/proc/cpuinfo")
    if cpuinfo.exists():
        for line in cpuinfo.read_text(errors="replace").splitlines():
            key, _, value = line.partition(":")
            if key.strip() == "model name":
                model = value.strip()
            elif key.strip() == "flags":
                flags = set(value.split())
    found = [flag for flag in ("avx2", "avx512f", "avx512_vnni", "avx_vnni") if flag in flags]
    return f"{model} ({' '.join(found) or 'no avx2'})"


def hand_written(results: Path) -> str:
    """The sections written by hand below the tables (each under a ``## `` heading: a subject, its
    before/after comparisons and fits under ``### ``), which a run keeps as they are."""
    if not results.exists():
        return ""
    text = results.read_text()
    generated = text.find(f"\n{RUNS_HEADING}")
    start = text.find("\n## ", generated + 1 if generated >= 0 else 0)
    return "" if start < 0 else text[start:]


def rows_given(pieces: list[str]) -> dict[str, list[dict]]:
    """The rows of ``SCRIPT=FILE`` pieces, by script, in the order given (each FILE holds the last
    line a script printed with --json)."""
    given: dict[str, list[dict]] = {}
    for piece in pieces:
        name, _, file = piece.partition("=")
        if name not in SCRIPTS or not file:
            raise SystemExit(f"--rows {piece}: expected SCRIPT=FILE with SCRIPT one of {', '.join(SCRIPTS)}")
        given.setdefault(name, []).extend(json.loads(Path(file).read_text().strip().splitlines()[-1]))
    return given


def judged(rows: list[dict], known: list[gate.KnownMiss]) -> tuple[bool, list[str]]:
    """Mark each row with a target with its verdict; say whether the rows fail the run, and what
    needs doing, as lines to print."""
    verdicts = gate.judge_rows(rows, known)
    lines = []
    for verdict in verdicts:
        verdict.line["verdict"] = verdict.state
        if verdict.message:
            lines.append(
                f"{verdict.state}: {verdict.line['script']}: {verdict.line['what']}: {verdict.message}"
            )
    for miss in gate.unmatched(rows, known):
        lines.append(f"note: the known miss {miss.script}: {miss.what!r} names no row of this run: delete it")
    counts = ", ".join(
        f"{sum(verdict.state == state for verdict in verdicts)} {state}" for state in gate.STATES
    )
    lines.append(f"gate ({gate.KNOWN_MISSES.name}): {counts}")
    return any(verdict.fails for verdict in verdicts), lines


def check(saved: Path) -> int:
    """Judge the rows of the last runs, as saved, against the known misses."""
    failed, lines = judged(json.loads(saved.read_text()), gate.read_known())
    print("\n".join(lines))
    return 1 if failed else 0


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--quick", action="store_true", help="small sizes: a smoke test for CI")
    parser.add_argument("--only", nargs="*", default=None, help="run only these scripts")
    parser.add_argument(
        "--rows",
        nargs="*",
        default=[],
        metavar="SCRIPT=FILE",
        help="take a script's rows from FILE (what it printed with --json: a run made in pieces, each "
        "file one piece) instead of running it",
    )
    parser.add_argument(
        "--check",
        nargs="?",
        type=Path,
        const=BENCH / "results.json",
        metavar="FILE",
        help="judge the rows of FILE (default: bench/results.json, the last runs) against "
        "bench/known_misses.json; run nothing",
    )
    options = parser.parse_args()
    if options.check:
        return check(options.check)
    known = gate.read_known()
    given = rows_given(options.rows)
    names = [name for name in SCRIPTS if options.only is None or name in options.only]
    rows: list[dict] = []
    problems: list[str] = []
    for name in names:
        if not (BENCH / f"{name}.py").exists():
            continue
        if name in given:
            rows.extend({**row, "script": name} for row in given[name])
            continue
        print(f"running {name} ...", file=sys.stderr, flush=True)
        script_rows, seconds, problem = run_script(name, options.quick)
        rows.extend({**row, "script": name} for row in script_rows)
        if problem:
            problems.append(problem)
        print(f"  {name}: {len(script_rows)} rows in {seconds:.0f} s", file=sys.stderr)
    failed, verdicts = (False, []) if options.quick else judged(rows, known)
    print(table(rows))
    for line in [*verdicts, *(f"problem: {problem}" for problem in problems)]:
        print(line)
    if not options.quick:
        write_results(rows, problems, names, options.only is not None, known, options.rows)
    return 1 if problems or failed else 0


if __name__ == "__main__":
    sys.exit(main())
