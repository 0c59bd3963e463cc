"""A build in its own process, for tests that kill it, lock against it or query during it.

    python tests/build_worker.py INDEX FOLDER [--delay SECONDS] [--batch-size N] [--wait SECONDS]

Uses the deterministic HashBackend, slowed by ``--delay`` seconds per batch. Prints "started" once the
writer lock is held, then the report as JSON; exits with the report's (or the error's) exit code.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from helpers import HashBackend

from indexer import Index, IndexerError


class SlowHashBackend(HashBackend):
    def __init__(self, delay: float, model_name: str) -> None:
        super().__init__(model_name=model_name)
        self.delay = delay

    def embed(self, texts: list[str]):
        if self.calls == 0:
            print("started", flush=True)
        time.sleep(self.delay)
        return super().embed(texts)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("index")
    parser.add_argument("folder")
    parser.add_argument("--delay", type=float, default=0.0)
    parser.add_argument("--batch-size", type=int, default=4)
    parser.add_argument("--wait", type=float, default=0.0)
    parser.add_argument("--model-name", default="hash-v1")
    parser.add_argument("--rebuild", action="store_true")
    options = parser.parse_args()
    try:
        with Index.open(options.index) as index:
            report = index.build(
                options.folder,
                backend=SlowHashBackend(options.delay, options.model_name),
                batch_size=options.batch_size,
                wait=options.wait,
                rebuild=options.rebuild,
                warn=lambda message: None,
            )
    except IndexerError as error:
        print(f"error: {error}", file=sys.stderr)
        return error.exit_code
    print(json.dumps({"added": report.files_added, "embedded": report.chunks_embedded}), flush=True)
    return report.exit_code


if __name__ == "__main__":
    sys.exit(main())
