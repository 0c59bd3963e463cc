"""How near a build's progress estimate of the chunks to embed is to the truth, along the build.

Builds FOLDER into a scratch index with instant vectors (bench_pipeline's: the estimate is measured,
not the model) and prints the estimate shown when 10%, 25%, 50% and 75% of the files have been
planned, as a ratio to the chunks the build embedded in the end (1.00 is right).

    .venv/bin/python bench/studies/progress_estimate.py FOLDER [FOLDER...]
"""

from __future__ import annotations

import sys
import tempfile

import bench_folder  # noqa: F401  (bench/ on sys.path: support/ and the suite's scripts)
from bench_pipeline import InstantBackend

from indexer import Index
from indexer.pipeline import build as stage
from indexer.progress import Progress

SHARES = (0.10, 0.25, 0.50, 0.75)


class Recorder(Progress):
    """Keeps each estimate with how many of the files had been planned when it was shown."""

    def __init__(self) -> None:
        super().__init__(terminal=False)
        self.build: stage.Build | None = None
        self.seen: list[tuple[int, int, int | None]] = []  # files planned, files found, estimate

    def update(self, done: int, total: int | None, detail: str = "") -> None:
        if self.build is not None:
            self.seen.append((self.build.files_visited, self.build.files_found, total))


def measure(folder: str) -> str:
    recorder = Recorder()
    shown = stage.Build._show_progress

    def watched(build: stage.Build) -> None:
        recorder.build = build
        shown(build)

    stage.Build._show_progress = watched
    try:
        with tempfile.TemporaryDirectory() as scratch, Index.open(f"{scratch}/index.db") as index:
            report = index.build(folder, backend=InstantBackend(), progress=recorder, warn=lambda line: None)
    finally:
        stage.Build._show_progress = shown
    truth = report.chunks_embedded
    ratios = []
    for share in SHARES:
        estimate = next(total for planned, found, total in recorder.seen if planned >= share * found)
        ratios.append(f"{share:.0%} {estimate / truth:.2f}" if estimate else f"{share:.0%} -")
    return (
        f"{folder}: {recorder.seen[-1][1]:,} files, {truth:,} chunks embedded; estimate/truth at "
        + ", ".join(ratios)
    )


if __name__ == "__main__":
    for folder in sys.argv[1:]:
        print(measure(folder), flush=True)
