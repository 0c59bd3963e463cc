"""Interactive query: wall time of `index query "…"` as a fresh process on the sample index.

Interpreter start, imports, model load, embed, search, print: median of 10 runs. The reference, in
the same run, is a fresh interpreter that only imports the libraries a query cannot do without
(numpy, onnxruntime, tokenizers, apsw): what is left above it is the project's own start-up.

    python bench/bench_cli.py [--quick] [--json]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
CACHE = REPO / "bench" / ".cache"
INDEX_COMMAND = [sys.executable, "-c", "from indexer.cli import main; main()"]
QUESTION = "how do I fix a puncture on my bicycle"


def sample_index() -> Path:
    """sample_corpus/ indexed with the default model (built once, then only checked)."""
    CACHE.mkdir(parents=True, exist_ok=True)
    path = CACHE / "sample.db"
    subprocess.run(
        [*INDEX_COMMAND, "build", str(REPO / "sample_corpus"), "--db", str(path), "--quiet"], check=True
    )
    return path


def wall_times(command: list[str], runs: int) -> list[float]:
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        subprocess.run(command, check=True, capture_output=True, cwd=REPO)
        times.append(time.perf_counter() - started)
    return times


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--json", action="store_true")
    options = parser.parse_args()
    runs = 3 if options.quick else 10
    index = sample_index()
    ours = statistics.median(
        wall_times([*INDEX_COMMAND, "query", QUESTION, "--db", str(index), "-k", "3"], runs)
    )
    bare = [sys.executable, "-c", "import numpy, onnxruntime, tokenizers, apsw"]
    reference = statistics.median(wall_times(bare, runs))
    rows = [
        {
            "what": f"fresh `index query` wall s, median of {runs} (ref: bare imports of numpy+onnxruntime)",
            "ours": round(ours, 3),
            "reference": round(reference, 3),
            "ratio": round(ours / reference, 2),
            "target": "< 0.5 s",
            "pass": ours < 0.5,
        }
    ]
    print(json.dumps(rows) if options.json else f"index query: {ours:.3f} s; bare imports: {reference:.3f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
