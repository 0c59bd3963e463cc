"""A build in its own process, for tests that kill it, lock against it or query during it.

    python tests/support/build_worker.py INDEX FOLDER [--delay SECONDS] [--batch-size N] [--wait SECONDS]
                                 [--commit-seconds SECONDS] [--tell-embedded] [--workers N]

Uses the deterministic HashBackend, slowed by ``--delay`` seconds per batch. Prints "started" once the
writer lock is held (with ``--tell-embedded``, then "embedded N" after each batch, N texts so far),
then the report as JSON; exits with the report's (or the error's) exit code.
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
    def __init__(self, delay: float, model_name: str, tell_embedded: bool = False) -> None:
        super().__init__(model_name=model_name)
        self.delay = delay
        self.tell_embedded = tell_embedded

    def embed(self, texts: list[str]):
        if self.calls == 0:
            print("started", flush=True)
        time.sleep(self.delay)
        vectors = super().embed(texts)
        if self.tell_embedded:
            print(f"embedded {len(self.embedded)}", flush=True)
        return vectors


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("index")
    parser.add_argument("folder")
    parser.add_argument("--delay", type=float, default=0.0)
    parser.add_argument("--batch-size", type=int, default=4)
    parser.add_argument("--wait", type=float, default=0.0)
    parser.add_argument("--model-name", default="hash-v1")
    parser.add_argument("--rebuild", action="store_true")
    parser.add_argument("--commit-seconds", type=float, default=None)
    parser.add_argument("--tell-embedded", action="store_true")
    parser.add_argument("--workers", type=int, default=0)
    options = parser.parse_args()
    try:
        with Index.open(options.index) as index:
            report = index.build(
                options.folder,
                backend=SlowHashBackend(options.delay, options.model_name, options.tell_embedded),
                batch_size=options.batch_size,
                wait=options.wait,
                rebuild=options.rebuild,
                commit_seconds=options.commit_seconds,
                workers=options.workers,
                warn=lambda message: None,
            )
    except IndexerError as error:
        print(f"error: {error}", file=sys.stderr)
        return error.exit_code
    print(json.dumps({"added": report.files_added, "embedded": report.chunks_embedded}), flush=True)
    return report.exit_code


if __name__ == "__main__":
    sys.exit(main())
