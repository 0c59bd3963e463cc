"""Queries in their own process while builds run, for the tests of concurrent builders.

    python tests/support/query_worker.py INDEX STOP_FILE

Searches the index (HashBackend, hybrid and vector modes) in a loop until STOP_FILE exists, at most
120 s. Every answer must be a list of hits from a committed state; a query that raises ends the
worker with exit code 1 and the error on stderr. Prints the number of answers as JSON.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from helpers import HashBackend

from indexer import Index

QUERIES = ["paragraph of file", "Document 3 word", "alpha beta paragraph 2"]


def main() -> int:
    index_location, stop_file = sys.argv[1], Path(sys.argv[2])
    answered = 0
    deadline = time.monotonic() + 120
    with Index.open(index_location, create=False, backend=HashBackend()) as index:
        while not stop_file.exists() and time.monotonic() < deadline:
            for mode in ("hybrid", "vector", "keyword"):
                hits = index.search(QUERIES[answered % len(QUERIES)], k=5, mode=mode, min_score=0)
                if not isinstance(hits, list) or len(hits) > 5:
                    print(f"bad answer: {hits!r}", file=sys.stderr)
                    return 1
                answered += 1
    print(json.dumps({"answered": answered}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
