"""Hybrid nDCG@10 of `index eval`'s own path on BEIR folders, asked for 200 hits and for 20.

`index eval` (:func:`indexer.eval.beir.run`) asks each search for twice ``DOCUMENTS_PER_QUERY`` hits
(200). Setting that constant to 10 asks for 20, as a user's ``-k 20`` does, so code from before the
first ten stopped depending on k shows how much they moved. It runs whichever ``indexer`` is first on
PYTHONPATH, so an older commit (``git worktree add``) is measured on the same folders as today's.

    PYTHONPATH=<checkout> python bench/studies/eval_at_k.py CACHE FOLDER [FOLDER ...]

Every FOLDER is evaluated against the one index in CACHE (its documents are written there, and only
changed files are read again): folders that differ only in their queries or judgments share a build.
Prints one JSON line per folder.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from indexer.eval import beir


def main() -> int:
    cache, folders = sys.argv[1], sys.argv[2:]
    for folder in folders:
        row: dict[str, object] = {"folder": Path(folder).name}
        for k in (200, 20):
            beir.DOCUMENTS_PER_QUERY = k // 2
            report = beir.run(folder, modes=["hybrid"], cache=cache)
            row[f"ndcg@10 k={k}"] = report.results["hybrid"]["ndcg@10"]
            row[f"mrr@10 k={k}"] = report.results["hybrid"]["mrr@10"]
        row["queries"] = report.queries
        print(json.dumps(row), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
