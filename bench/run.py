"""`make bench`: run every benchmark script, print one table, write it to bench/RESULTS.md.

Each script prints a JSON list of rows with `--json`: {"what", "ours", "reference", "ratio", "target",
"pass"}, and "note" where a target is missed: why, and what would meet it. Every figure is a ratio
against a reference measured in the same run, because the machines this runs on are shared and noisy.

    python bench/run.py [--quick] [--only NAME ...]
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
from pathlib import Path

BENCH = Path(__file__).resolve().parent
SCRIPTS = ["bench_pipeline", "bench_embedded", "bench_http", "bench_query", "bench_postgres", "bench_cli"]


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
    header = ["what", "ours", "reference", "ratio", "target", "pass", "note"]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for row in rows:
        cells = [_cell(row.get(column)) for column in header]
        cells[5] = {True: "PASS", False: "FAIL"}.get(row.get("pass"), cells[5])
        lines.append("| " + " | ".join(cell.replace("|", "\\|") for cell in cells) + " |")
    return "\n".join(lines)


def _cell(value: object) -> str:
    return "" if value is None else str(value)


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--quick", action="store_true", help="small sizes: a smoke test for CI")
    parser.add_argument("--only", nargs="*", default=None, help="run only these scripts")
    options = parser.parse_args()
    names = [name for name in SCRIPTS if options.only is None or name in options.only]
    rows: list[dict] = []
    problems: list[str] = []
    for name in names:
        if not (BENCH / f"{name}.py").exists():
            continue
        print(f"running {name} ...", file=sys.stderr, flush=True)
        script_rows, seconds, problem = run_script(name, options.quick)
        rows.extend({**row, "script": name} for row in script_rows)
        if problem:
            problems.append(problem)
        print(f"  {name}: {len(script_rows)} rows in {seconds:.0f} s", file=sys.stderr)
    command = "make bench" if not options.quick else "make bench-quick"
    text = table(rows)
    print(text)
    for problem in problems:
        print(f"problem: {problem}")
    if not options.quick:
        stamp = datetime.datetime.now().strftime("%Y-%m-%d %H:%M")
        header = (
            f"# Benchmark results\n\n{stamp}, {os.cpu_count()} cores, "
            f"{platform.processor() or platform.machine()}, "
            f"Python {platform.python_version()}; command: `{command}`\n\n"
        )
        notes = "".join(f"\n- problem: {problem}" for problem in problems)
        (BENCH / "RESULTS.md").write_text(header + text + "\n" + notes + "\n")
    failed = [row for row in rows if row.get("pass") is False]
    return 1 if problems or (failed and not options.quick) else 0


if __name__ == "__main__":
    sys.exit(main())
