"""Interactive query: wall time of `index query "…"` as a fresh process on the sample index.

Interpreter start, imports, model load, embed, search, print: median of 10 runs. The reference, in
the same run, is a fresh interpreter that only imports the libraries a query cannot do without
(numpy, onnxruntime, tokenizers, apsw): what is left above it is the project's own start-up. The two
commands alternate, so load from other processes falls on both alike. Beside it, in the same turns:
the same query in keyword mode (no model), a bare interpreter (`python -c pass`), and with
`--against DIR` both queries run from another checkout of the project (its `indexer` first on the
path), e.g. main's, so that a change in start-up shows as a ratio measured in one run.

Measured as a user's installed copy runs: the package is byte-compiled first, as pip does when it
installs a wheel (an editable checkout under PYTHONDONTWRITEBYTECODE=1 would otherwise compile
indexer's modules in every process, ~30 ms), and one untimed query goes first, so the optimised
model is in the cache as after any earlier build or query on this machine.

    python bench/bench_cli.py [--quick] [--json] [--runs N] [--against DIR]
"""

from __future__ import annotations

import argparse
import compileall
import os
import re
import statistics
import subprocess
import sys
import time
from pathlib import Path

from support.rows import print_rows, row

REPO = Path(__file__).resolve().parent.parent
CACHE = REPO / "bench" / ".cache"
#: The console script's entry point (``run``; a version from before it had only ``main``).
INDEX_COMMAND = [sys.executable, "-c", "import indexer.cli as cli; getattr(cli, 'run', cli.main)()"]
#: What a cold query may take on a quiet machine of this kind (issue 25).
TARGET_SECONDS = 0.3
QUESTION = "how do I fix a puncture on my bicycle"
#: What the keyword query asks: words the sample corpus holds (it exits 1 when nothing is found).
KEYWORDS = "flat tyre"


def sample_index() -> Path:
    """sample_corpus/ indexed with the default model (built once, then only checked)."""
    CACHE.mkdir(parents=True, exist_ok=True)
    path = CACHE / "sample.db"
    subprocess.run(
        [*INDEX_COMMAND, "build", str(REPO / "sample_corpus"), "--db", str(path), "--quiet"], check=True
    )
    return path


def wall_times(
    commands: list[list[str]], runs: int, checkouts: list[Path] | None = None
) -> list[list[float]]:
    """Seconds of each command per run, each run in its checkout (default this one: ``python -c``
    imports ``indexer`` from the folder it runs in); the commands take turns, after one untimed run
    each."""
    times: list[list[float]] = [[] for _ in commands]
    for run in range(runs + 1):
        for command, seconds, checkout in zip(
            commands, times, checkouts or [REPO] * len(commands), strict=True
        ):
            started = time.perf_counter()
            subprocess.run(command, check=True, capture_output=True, cwd=checkout)
            if run > 0:
                seconds.append(time.perf_counter() - started)
    return times


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--runs", type=int, help="runs of each command (default 10, 3 with --quick)")
    parser.add_argument(
        "--against",
        type=Path,
        help="a copy of another version (`git archive REV | tar -x -C DIR`), whose queries run beside these",
    )
    options = parser.parse_args()
    runs = options.runs or (3 if options.quick else 10)
    index = sample_index()
    compileall.compile_dir(REPO / "indexer", quiet=1)
    query = [*INDEX_COMMAND, "query", QUESTION, "--db", str(index), "-k", "3", "--no-server"]
    keyword = [
        *INDEX_COMMAND,
        "query",
        KEYWORDS,
        "--db",
        str(index),
        "-k",
        "3",
        "--no-server",
        "--mode",
        "keyword",
    ]
    bare = [sys.executable, "-c", "import numpy, onnxruntime, tokenizers, apsw"]
    empty = [sys.executable, "-c", "pass"]
    commands, checkouts = [query, bare, keyword, empty], [REPO] * 4
    if options.against:  # a copy of its own (its byte-code is written there): see --help
        compileall.compile_dir(options.against / "indexer", quiet=1)
        commands += [query, keyword]
        checkouts += [options.against, options.against]
    medians = [statistics.median(times) for times in wall_times(commands, runs, checkouts)]
    ours, reference, keyword_s, empty_s = medians[:4]
    load = os.getloadavg()[0]
    note = (
        f"{ours - reference:.2f} s above the bare imports, which took {reference:.2f} s in this run; "
        f"load average {load:.1f} at the end"
    )
    rows = [
        row(
            f"fresh `index query` wall s, median of {runs} (ref: bare imports of numpy+onnxruntime)",
            round(ours, 3),
            round(reference, 3),
            round(ours / reference, 2),
            target=f"<= {TARGET_SECONDS} s",
            passed=ours <= TARGET_SECONDS,
            note=note,
        ),
        row(
            f"fresh `index query` wall s, median of {runs} (ref: `python -c pass`)",
            round(ours, 3),
            round(empty_s, 3),
            round(ours / empty_s, 2),
        ),
        row(
            f"fresh `index query --mode keyword` wall s, median of {runs} (ref: `python -c pass`)",
            round(keyword_s, 3),
            round(empty_s, 3),
            round(keyword_s / empty_s, 2),
        ),
    ]
    if options.against:
        for what, mine, theirs in (("", ours, medians[4]), (" --mode keyword", keyword_s, medians[5])):
            rows.append(
                row(
                    f"fresh `index query{what}` wall s, median of {runs} "
                    f"(ref: the same from {options.against})",
                    round(mine, 3),
                    round(theirs, 3),
                    round(mine / theirs, 3),
                )
            )
    rows.insert(0, cpu_row(load))
    print_rows(rows, options.json)
    return 0


def cpu_row(load: float) -> dict:
    """The CPU's vector instructions, which the model's speed depends on, and the load."""
    try:
        flags = set(re.findall(r"\w+", Path("/proc/cpuinfo").read_text().split("flags", 1)[1].split("\n")[0]))
    except (OSError, IndexError):
        flags = set()
    found = " ".join(flag for flag in ("avx2", "avx512f", "avx512_vnni", "avx_vnni") if flag in flags)
    return row(
        f"CPU: {found or 'none of avx2, avx512'}; {os.cpu_count()} cores", round(load, 1), "load average"
    )


if __name__ == "__main__":
    sys.exit(main())
