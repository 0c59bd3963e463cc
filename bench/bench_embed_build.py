"""A build with the embedded backend against a naive onnxruntime loop over the same packaged model,
and where the build's time goes.

Rows:

- tokens/s of ``Index.build`` with the default embedded backend over the first abstracts of a
  BEIR-style corpus (SciFact by default), one file each as ``index eval`` writes them (title + " " +
  text), into a fresh index: read, chunk, embed, check and write, all of it; against the naive loop
  of bench_embedded (:func:`bench_embedded.make_naive`: the packaged ``model.onnx`` in a default
  session, batches of 32 in the build's order padded to the longest, pooled with numpy) over the very
  texts the build embedded, so both count the same tokens (target: at least 2.3x);
- each step's share of the build's wall time: the build's own clock (read, parse, redact, the
  chunker's token counts, chunk, check, write) and the backend's (tokenize, pad, model, pool,
  copy). Steps on different threads overlap (the model runs while the main thread reads and chunks the next
  files, and on several threads at once), so the shares do not add up to 1; "model" against the
  build's time times the backend's threads is how busy those threads were;
- the CPU's features and the load average at the start and the end.

The build and the loop take turns: the abstracts are cut into ``--slices`` parts, each built into a
fresh index and then run through the loop (who goes first alternates), so a burst of load from
another process falls on both; a build's time is its own (``BuildReport.seconds``), without opening
the new index. ``--repeat`` makes the whole comparison again; each round's ratio is
printed under the table, the row holds their sum. The build runs this CPU's default precision;
``INDEXER_PRECISION=int8`` (or ``float32``) measures the other. Run from the repository root::

    .venv/bin/python bench/bench_embed_build.py [--abstracts 300] [--slices 6] [--repeat 2] [--json]
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar

import numpy as np
from bench_embedded import BATCH_SIZE, DEFAULT_CORPUS, batches, make_naive, read_documents
from bench_peak import cpu_features
from support.rows import print_rows, row

from indexer import Index
from indexer.backends.embedded import EmbeddedBackend
from indexer.eval.beir import document_file_name
from indexer.pipeline.report import BuildReport

TARGET = 2.3
Result = TypeVar("Result")
#: The build's stages as the table names them (the chunker's "tokenize" is its token counts).
BUILD_STAGES = {
    "read": "read",
    "parse": "parse",
    "redact": "redact",
    "tokenize": "count tokens (chunker)",
    "chunk": "chunk",
    "check": "check",
    "write": "write",
}


class TextsOnly(EmbeddedBackend):
    """The default embedded backend's tokenizer and settings, so a build cuts and batches the same
    texts, without the model: it keeps the texts and answers unit vectors, to learn what a build of a
    slice embeds without paying for it."""

    def __init__(self) -> None:
        super().__init__()
        self.texts: list[str] = []

    def embed(self, texts: list[str]) -> np.ndarray:
        self.texts.extend(texts)
        return np.full((len(texts), self.dimension or 1), 1 / np.sqrt(self.dimension or 1), dtype=np.float32)


@dataclass
class Tally:
    """Seconds and tokens of each side, and the build's steps, over every slice of a round."""

    build_seconds: float = 0.0
    naive_seconds: float = 0.0
    build_cpu: float = 0.0
    naive_cpu: float = 0.0
    tokens: int = 0
    chunks: int = 0
    stages: dict[str, float] = field(default_factory=dict)

    def add(self, seconds: dict[str, float]) -> None:
        for step, value in seconds.items():
            self.stages[step] = self.stages.get(step, 0.0) + value

    def ratio(self) -> float:
        return self.naive_seconds / self.build_seconds


def write_slices(documents: list[dict], slices: int, folder: Path) -> list[Path]:
    """The documents as files, one folder per slice."""
    size = -(-len(documents) // slices)
    folders = []
    for number, start in enumerate(range(0, len(documents), size)):
        slice_folder = folder / f"slice{number}"
        slice_folder.mkdir()
        for position, document in enumerate(documents[start : start + size], start):
            text = f"{document.get('title', '')} {document['text']}".strip()
            name = document_file_name(str(document.get("_id", position)))  # sample_corpus's have none
            (slice_folder / name).write_text(text, encoding="utf-8")
        folders.append(slice_folder)
    return folders


def timed(action: Callable[[], Result]) -> tuple[Result, float, float]:
    """What ``action`` returns, its wall seconds and this process's CPU seconds (every thread's)."""
    wall, cpu = time.perf_counter(), time.process_time()
    result = action()
    return result, time.perf_counter() - wall, time.process_time() - cpu


def build_slice(backend: EmbeddedBackend, slice_folder: Path, scratch: Path) -> BuildReport:
    """Build one slice into a fresh index."""
    with tempfile.TemporaryDirectory(dir=scratch) as folder, Index.open(Path(folder) / "index.db") as index:
        report = index.build(slice_folder, backend=backend, warn=lambda message: None)
    if not report.ok:
        raise SystemExit(f"the build of {slice_folder} failed: {report.summary()}")
    return report


def texts_of(slice_folder: Path, scratch: Path) -> list[str]:
    """The texts a build of one slice embeds, in the order it sends them."""
    backend = TextsOnly()
    build_slice(backend, slice_folder, scratch)
    return backend.texts


def run_round(
    number: int,
    backend: EmbeddedBackend,
    naive: Callable[[list[str]], np.ndarray],
    slices: list[tuple[Path, list[str]]],
    scratch: Path,
) -> Tally:
    """One comparison: each slice built and run through the naive loop, who goes first alternating."""
    tally = Tally()
    for position, (slice_folder, texts) in enumerate(slices):
        steps_before = backend.step_seconds()

        def build(slice_folder: Path = slice_folder) -> BuildReport:
            return build_slice(backend, slice_folder, scratch)

        def loop(texts: list[str] = texts) -> None:
            for batch in batches(texts, BATCH_SIZE):
                naive(batch)

        if (number + position) % 2 == 0:
            report, _, build_cpu = timed(build)
            _, naive_seconds, naive_cpu = timed(loop)
        else:
            _, naive_seconds, naive_cpu = timed(loop)
            report, _, build_cpu = timed(build)
        tally.build_seconds += report.seconds  # the build's own time, not opening a new index
        tally.naive_seconds += naive_seconds
        tally.build_cpu += build_cpu
        tally.naive_cpu += naive_cpu
        tally.tokens += report.tokens
        tally.chunks += report.chunks_embedded
        tally.add({BUILD_STAGES[stage]: report.stage_seconds.get(stage, 0.0) for stage in BUILD_STAGES})
        steps_after = backend.step_seconds()
        tally.add({step: steps_after[step] - steps_before.get(step, 0.0) for step in steps_after})
    return tally


def step_rows(tally: Tally, threads: int) -> list[dict]:
    """Each step's seconds as a share of the build's wall time, and how busy the model's threads were."""
    rows = [
        row(
            f"embedded build: share of its wall time in {step} (share)",
            round(seconds / tally.build_seconds, 4),
        )
        for step, seconds in tally.stages.items()
    ]
    model = tally.stages.get("model", 0.0)
    rows.append(
        row(
            f"embedded build: model threads busy: model seconds / (build seconds x {threads}) (share)",
            round(model / (tally.build_seconds * threads), 4),
        )
    )
    return rows


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--abstracts", type=int, default=300, help="documents of the corpus to build")
    parser.add_argument("--slices", type=int, default=6, help="parts built in turn with the naive loop")
    parser.add_argument("--repeat", type=int, default=2, help="rounds of the whole comparison")
    parser.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS, help="a BEIR-style corpus.jsonl")
    parser.add_argument("--quick", action="store_true", help="60 abstracts in 2 slices, one round")
    parser.add_argument("--json", action="store_true", help="print the rows as one line of JSON")
    options = parser.parse_args()
    if options.quick:
        options.abstracts, options.slices, options.repeat = 60, 2, 1

    features = cpu_features()
    load_before = os.getloadavg()[0]
    backend = EmbeddedBackend()
    naive = make_naive()
    backend.embed(["load the session before the clock starts"])
    naive(["load the session before the clock starts"])
    documents = read_documents(options.corpus, options.abstracts)
    rounds = []
    with tempfile.TemporaryDirectory(prefix="indexer-bench-build-") as folder:
        scratch = Path(folder)
        folders = write_slices(documents, options.slices, scratch)
        slices = [(slice_folder, texts_of(slice_folder, scratch)) for slice_folder in folders]
        for number in range(options.repeat):
            rounds.append(run_round(number, backend, naive, slices, scratch))
    load = f"load average {load_before:.1f} at the start, {os.getloadavg()[0]:.1f} at the end"

    total = Tally()
    for tally in rounds:
        total.build_seconds += tally.build_seconds
        total.naive_seconds += tally.naive_seconds
        total.build_cpu += tally.build_cpu
        total.naive_cpu += tally.naive_cpu
        total.tokens += tally.tokens
        total.chunks += tally.chunks
        total.add(tally.stages)
    build_rate, naive_rate = total.tokens / total.build_seconds, total.tokens / total.naive_seconds
    ratio = build_rate / naive_rate
    precision = backend.describe().get("precision", "float32")
    label = f"{len(documents)} abstracts of {options.corpus.parent.name}, {precision}"
    rows = [
        row("CPU features (onnxruntime's kernels follow them)", f"{features}; {load}"),
        row(
            f"embedded build ({label}): tokens/s vs a naive onnxruntime loop over the same texts (tokens/s)",
            round(build_rate),
            round(naive_rate),
            round(ratio, 3),
            target=f">= {TARGET:g}",
            passed=ratio >= TARGET,
            note=f"rounds: {', '.join(f'{tally.ratio():.3f}' for tally in rounds)}; {load}",
        ),
        row(
            f"embedded build ({label}): CPU seconds per 1,000 tokens vs the naive loop's (seconds)",
            round(1000 * total.build_cpu / total.tokens, 3),
            round(1000 * total.naive_cpu / total.tokens, 3),
            round(total.build_cpu / total.naive_cpu, 3),
        ),
        *step_rows(total, backend.threads),
    ]
    details = [
        f"CPU: {features}; {load}",
        f"{label}: {total.chunks // len(rounds)} chunks, {total.tokens // len(rounds):,} tokens a round, "
        f"in {options.slices} slices, {len(rounds)} rounds",
        *(
            f"round {number}: build {tally.build_seconds:.1f} s "
            f"({tally.tokens / tally.build_seconds:,.0f} tokens/s), naive loop {tally.naive_seconds:.1f} s "
            f"({tally.tokens / tally.naive_seconds:,.0f} tokens/s): "
            f"{tally.ratio():.3f}x"
            for number, tally in enumerate(rounds, 1)
        ),
        "steps (seconds, all rounds): "
        + ", ".join(f"{step} {seconds:.2f}" for step, seconds in total.stages.items()),
    ]
    print_rows(rows, options.json, "\n".join(details))
    return 0


if __name__ == "__main__":
    sys.exit(main())
