"""How much of embedding servers' capacity a build uses, with one server and with three.

A loopback server (tests/support/loopback.py) answers every request in a fixed time and serves P requests at
once, so it embeds at most P × batch_size / latency chunks per second. A build of a generated Markdown
corpus keeps ``concurrency`` batches in flight; its throughput (chunks embedded per second of the whole
build: walk, read, chunk, embed, check, write) is reported as a fraction of that capacity. Three servers
given to one backend (``--base-url`` three times) are measured against their summed capacity, and
against one server's throughput measured in the same run, at two batch sizes: at 32 chunks a batch their
capacity (7,680 chunks/s) is more than this 2-core machine's build can index while it also runs the three
servers, so that case measures the client's CPU; at 8 chunks a batch (1,920 chunks/s, the same 240
requests a second) it measures how well the batches are spread.

    .venv/bin/python bench/bench_http.py                  # 1,000 files, about 12,000 chunks
    .venv/bin/python bench/bench_http.py --quick          # a smaller corpus, for a CI smoke run
    .venv/bin/python bench/bench_http.py --json           # rows for bench/run.py
    .venv/bin/python bench/bench_http.py --dimension 64   # vector length (default 768, nomic-embed-text's)

Each server runs in a process of its own, as a real one would: in this one, three servers' threads would
compete with the build for the interpreter lock and the measure would be of Python, not of the client.
They still share the machine's cores with the build, which a real server does not. Under the table, one
line per case says where the capacity went (see :func:`diagnose`).
"""

from __future__ import annotations

import argparse
import math
import os
import random
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from support.rows import print_rows, row

from indexer import BuildReport, Index
from indexer.backends.ollama import OllamaBackend
from indexer.backends.openai import OpenAIBackend

REPO = Path(__file__).resolve().parent.parent

TARGET = 0.9
LATENCY = 0.05
BATCH_SIZE = 32

#: Runs the loopback server in a child process: prints its URL, serves until stdin closes. Its vectors are
#: rows of a fixed table, encoded once (JSON floats for Ollama, base64 for OpenAI) and spliced into each
#: answer, so the server's own work stays far below the latency it emulates, as with a real server
#: (which encodes in Go or C++, not in Python's json module).
SERVER_SCRIPT = """
import base64, hashlib, json, sys, time
import numpy as np
import loopback

kind, latency, parallel, dimension = sys.argv[1], float(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
table = np.random.default_rng(0).standard_normal((512, dimension)).astype("<f4")
table /= np.linalg.norm(table, axis=1, keepdims=True)
as_json = [json.dumps(row.tolist()) for row in table]
as_base64 = [base64.b64encode(row.tobytes()).decode("ascii") for row in table]

class Row(int):
    def tolist(self):
        return self

def vector(self, text, dimension=None):
    return Row(int.from_bytes(hashlib.blake2b(text.encode(), digest_size=4).digest(), "little") % len(table))

class SplicingJson:
    loads = staticmethod(json.loads)

    @staticmethod
    def dumps(payload):
        rows = payload.get("embeddings") if isinstance(payload, dict) else None
        if not rows or not isinstance(rows[0], Row):
            return json.dumps(payload)
        head = json.dumps({**payload, "embeddings": []})
        spliced = '"embeddings": [' + ",".join(as_json[row] for row in rows) + "]"
        return head.replace('"embeddings": []', spliced, 1)

loopback.json = SplicingJson
loopback._base64 = lambda row: as_base64[row]
base = loopback.OllamaServer if kind == "ollama" else loopback.OpenAIServer
server = type("TableServer", (base,), {"vector": vector})(dimension, latency=latency, parallel=parallel)
with server:
    ready = time.process_time()
    print(server.url, flush=True)
    sys.stdin.read()
print(time.process_time() - ready, flush=True)  # CPU seconds spent serving
"""


@dataclass(frozen=True)
class Case:
    """One measured build: the servers' kind, number and slots, and the batches the build keeps in
    flight (None: the backend's default). A case without a target is shown for comparison only."""

    kind: str
    parallel: int
    concurrency: int | None
    target: float | None = TARGET
    servers: int = 1
    batch: int = BATCH_SIZE
    #: The corpus is this many times the base one: three servers build three times as fast, so on three
    #: times the files their build lasts as long as one server's, and its start and end weigh as little.
    scale: int = 1
    #: Worker processes reading and chunking (None: the build's default, as ``index build`` has it).
    workers: int | None = None

    @property
    def capacity(self) -> float:
        """Chunks per second the servers can embed at most."""
        return self.servers * self.parallel * self.batch / LATENCY

    def describe(self) -> str:
        concurrency = "default" if self.concurrency is None else self.concurrency
        servers = f"{self.servers} servers, each " if self.servers > 1 else ""
        corpus = f", {self.scale}x the files" if self.scale > 1 else ""
        workers = "" if self.workers is None else f", {self.workers} workers"
        return (
            f"{self.kind} {servers}P={self.parallel} {LATENCY * 1000:g} ms, batch {self.batch}, "
            f"concurrency {concurrency}{corpus}{workers}: chunks/s vs capacity"
        )


#: Servers with P slots. Ollama with OLLAMA_NUM_PARALLEL=4 is run as the README says (--concurrency P+2
#: for each server), and once with exactly P in flight, to show what a request always waiting at the server
#: is worth. Three servers given to one backend are measured at 8 chunks a batch, and at 32 on three times
#: the files; one of them alone is measured the same way, for the ratio of their throughputs.
CASES = (
    Case("openai", 4, None),
    Case("ollama", 4, 6),
    Case("ollama", 1, None),
    Case("ollama", 4, 4, target=None),
    Case("openai", 4, None, target=None, batch=8),
    Case("openai", 4, None, servers=3, batch=8),
    Case("openai", 4, None, target=None, scale=3),
    Case("openai", 4, None, servers=3, scale=3),
    Case("ollama", 4, 18, servers=3, scale=3),
    Case("openai", 4, None, target=None, scale=3, workers=0),
    Case("openai", 4, None, servers=3, scale=3, target=None, workers=0),
)
#: ``--spread``: only three servers against one at 32 chunks a batch, with the build's default workers
#: and with none (the files read in the build's process), each case run ``--repeat`` times.
SPREAD_CASES = tuple(
    case for case in CASES if case.batch == BATCH_SIZE and case.scale == 3 and case.kind == "openai"
)
#: Three servers' throughput against one server's, measured in the same run.
SPREAD_TARGET = 2.7


def write_corpus(folder: Path, files: int, seed: int = 7) -> None:
    """Markdown files of a few sections each, with paragraphs of made-up words (every chunk distinct)."""
    rng = random.Random(seed)
    syllables = ["ka", "lo", "mi", "ra", "te", "su", "no", "vi", "de", "pa", "ri", "go", "ze", "bu"]
    words = ["".join(rng.choices(syllables, k=rng.randint(2, 4))) for _ in range(3000)]
    for number in range(files):
        parts = [f"# Document {number}\n"]
        for section in range(rng.randint(3, 5)):
            parts.append(f"## Section {section} of document {number}\n")
            for _ in range(rng.randint(2, 6)):
                parts.append(" ".join(rng.choices(words, k=rng.randint(40, 140))) + ".\n")
        path = folder / f"topic{number % 10}" / f"doc{number:04}.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("\n".join(parts), encoding="utf-8")


def start_server(case: Case, dimension: int) -> tuple[subprocess.Popen[str], str]:
    process = subprocess.Popen(
        [sys.executable, "-c", SERVER_SCRIPT, case.kind, str(LATENCY), str(case.parallel), str(dimension)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": str(REPO / "tests" / "support")},
    )
    assert process.stdout is not None
    url = process.stdout.readline().strip()
    if not url:
        process.kill()
        raise RuntimeError("the loopback server did not start")
    return process, url


def stop_server(process: subprocess.Popen[str]) -> float:
    """Stop the server; return the CPU seconds it spent serving (NaN if it did not say)."""
    assert process.stdin is not None and process.stdout is not None
    process.stdin.close()
    try:
        said = process.stdout.readline().strip()
        process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
        return math.nan
    return float(said) if said else math.nan


def measure(case: Case, corpora: dict[int, Path], scratch: Path, dimension: int) -> dict[str, Any]:
    """Build ``corpus`` into a fresh index against fresh servers: the table row and where the time went."""
    started = [start_server(case, dimension) for _ in range(case.servers)]
    urls = [url for _, url in started]
    before = time.process_time()
    own_thread_before = time.thread_time()
    call_started = time.perf_counter()
    try:
        if case.kind == "ollama":
            backend = OllamaBackend("nomic-embed-text", host=urls)
        else:
            backend = OpenAIBackend(
                "text-embedding-3-small", base_url=[url + "/v1" for url in urls], api_key="sk-bench"
            )
        index_path = scratch / (
            f"{case.kind}-{case.servers}-{case.parallel}-{case.concurrency}-{case.scale}-{case.batch}-"
            f"{case.workers}-{time.monotonic_ns()}.db"
        )
        with Index.open(index_path) as index:
            report = index.build(
                corpora[case.scale], backend=backend, batch_size=case.batch, concurrency=case.concurrency,
                workers=case.workers, warn=lambda message: None,
            )  # fmt: skip
        own_thread = time.thread_time() - own_thread_before
        graph_save = time.perf_counter() - call_started - report.seconds
    finally:
        server = sum(stop_server(process) for process, _ in started)
    client = time.process_time() - before
    if report.exit_code != 0:
        raise RuntimeError(f"the build failed: {report.failures[:1] or report.stopped}")
    ratio = report.chunks_embedded / report.seconds / case.capacity
    cpu = (
        f"the build used {client:.1f} s of CPU and the loopback server{'s' if case.servers > 1 else ''} "
        f"{server:.1f} s "
        f"in {report.seconds:.1f} s on {os.cpu_count()} cores (load average {os.getloadavg()[0]:.1f}); "
        f"{own_thread:.1f} s of it on the thread that called the build, whose last step, saving the "
        f"vector graph, took {graph_save:.1f} s after the throughput's clock stopped"
    )
    note = ""
    if case.target is not None and ratio < case.target:
        note = (
            f"{cpu}: the server shares the machine with the build it serves; a real server runs on "
            "its own, or more --concurrency keeps more requests waiting at it"
            if case.servers == 1
            else f"{cpu}: the build is one Python process whose own work (read, chunk, check, write, and "
            f"about 1 ms of httpx a request, {case.servers * case.parallel / LATENCY:.0f} requests a second "
            "here) runs under one interpreter lock, on two cores shared with the servers and whatever else "
            "runs (the load average)"
        )
    line = row(
        case.describe(),
        round(report.chunks_embedded / report.seconds, 1),
        round(case.capacity, 1),
        round(ratio, 3),
        target=None if case.target is None else f">= {case.target:.0%} of capacity",
        passed=None if case.target is None else ratio >= case.target,
        note=note,
    )
    return {"row": line, "diagnosis": diagnose(case, report, ratio) + "; " + cpu, "case": case}


def spread_rows(results: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Three servers' chunks/s against one server's of the same kind, slots, batch and files, measured in
    the same run (for the cases that have such a reference)."""
    alone: dict[Case, dict[str, Any]] = {}  # the latest of each (with --repeat, the same round's)
    rows = []
    for many in results:
        case = many["case"]
        if case.servers == 1:
            alone[case] = many
            continue
        one = alone.get(replace(case, servers=1, target=None))
        if one is None:
            continue
        ratio = many["row"]["ours"] / one["row"]["ours"]
        line = row(
            f"{case.describe().split(':')[0]}: chunks/s vs one such server's",
            many["row"]["ours"],
            one["row"]["ours"],
            round(ratio, 3),
            target=f">= {SPREAD_TARGET}x one server",
            passed=ratio >= SPREAD_TARGET,
            note=f"{case.servers} servers: {many['diagnosis']}",
        )
        rows.append({"row": line, "diagnosis": f"{case.servers} servers against one, same run"})
    return rows


def diagnose(case: Case, report: BuildReport, ratio: float) -> str:
    """Where the time went: the requests (a request beyond the latency waited at the server for a free
    slot, or for the client to read its answer), the main thread (read, chunk, check: between those it
    sends the next batch) and the writer thread (SQLite, beside the main thread). The stages' figures
    are wall-clock seconds: on a busy machine they hold the waits for a core and for the interpreter
    lock, so the CPU figures of :func:`measure` say what the build's work costs."""
    stages = report.stage_seconds
    request = stages["embed"] / max(report.requests, 1)
    main_thread = sum(
        stages[stage] for stage in ("walk", "read", "parse", "redact", "tokenize", "chunk", "check")
    )
    ideal = report.chunks_embedded / case.capacity
    return (
        f"{report.chunks_embedded} chunks, {report.requests} requests, {report.seconds:.2f} s "
        f"(ideal {ideal:.2f} s, ratio {ratio:.0%}); {request * 1000:.0f} ms a request for "
        f"{LATENCY * 1000:g} ms latency; main thread {main_thread:.2f} s, in worker processes when "
        f"there are some (read {stages['read']:.2f}, "
        f"parse {stages['parse']:.2f}, tokenize {stages['tokenize']:.2f}, chunk {stages['chunk']:.2f}, "
        f"check {stages['check']:.2f}); writer thread {stages['write']:.2f} s of commits, waits included"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="a smaller corpus, for a CI smoke run")
    parser.add_argument("--json", action="store_true", help="print the rows as a JSON list")
    parser.add_argument("--dimension", type=int, default=768, help="vector length the server answers with")
    parser.add_argument("--spread", action="store_true", help="only three servers against one, batch 32")
    parser.add_argument("--repeat", type=int, default=1, help="run each case this many times, in turn")
    options = parser.parse_args()
    files = 60 if options.quick else 1000
    cases = (SPREAD_CASES if options.spread else CASES) * options.repeat
    with tempfile.TemporaryDirectory(prefix="bench-http-") as temporary:
        scratch = Path(temporary)
        corpora = {scale: scratch / f"corpus-{scale}" for scale in sorted({case.scale for case in cases})}
        for scale, corpus in corpora.items():
            write_corpus(corpus, files * scale)
        results = [measure(case, corpora, scratch, options.dimension) for case in cases]
    results += spread_rows(results)
    details = [
        f"build throughput against loopback servers: {files} files, {options.dimension}-dimension vectors, "
        f"{LATENCY * 1000:g} ms per request"
    ]
    details += [f"{result['row']['what'].split(':')[0]}: {result['diagnosis']}" for result in results]
    print_rows([result["row"] for result in results], options.json, "\n".join(details))
    return 0


if __name__ == "__main__":
    sys.exit(main())
