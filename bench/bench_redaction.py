"""What redacting secrets costs a build, and what it finds, on real documentation nobody wrote for
this project (CMake's reStructuredText manual, the Rust book and standard library as HTML, the text
files of /usr/share/doc).

For each folder, every file is read as a build reads it (indexer.formats), then redacted
(indexer.redaction) and chunked with the embedded model's tokenizer, each stage timed on the same
documents in the same run: the ratio is redaction's time against reading and chunking. What it found
is counted: these folders hold no real secret, so every finding is one the rules should not make
(sample findings are printed with --show).

    .venv/bin/python bench/bench_redaction.py [--quick] [--json] [--show N]
"""

from __future__ import annotations

import argparse
import glob
import sys
import time
from pathlib import Path

from support.rows import print_rows, row

from indexer.backends.embedded import EmbeddedBackend
from indexer.chunking import ChunkSettings, chunk_document
from indexer.formats import UnreadableFile, read_document
from indexer.redaction import find_secrets, redact_document

FOLDERS = {
    "CMake manual": "/usr/share/cmake-3.25/Help/**/*.rst",
    "Rust book and std (HTML)": "/root/.rustup/toolchains/*/share/doc/rust/html/**/*.html",
    "/usr/share/doc text": "/usr/share/doc/**/*.md",
}
#: Target: redaction may add at most this share to reading and chunking.
MOST_ADDED = 0.10


def documents(pattern: str, limit: int) -> list[tuple[str, object]]:
    found = []
    for path in sorted(glob.glob(pattern, recursive=True))[:limit]:
        try:
            found.append((path, read_document(path, Path(path).read_bytes())))
        except (UnreadableFile, OSError):
            continue
    return found


def measure(name: str, pattern: str, limit: int, show: int) -> list[dict[str, object]]:
    started = time.perf_counter()
    docs = documents(pattern, limit)
    reading = time.perf_counter() - started
    megabytes = sum(sum(map(len, document.lines)) for _, document in docs) / 1e6
    started = time.perf_counter()
    redacted = [(path, *redact_document(document)) for path, document in docs]
    redacting = time.perf_counter() - started
    backend = EmbeddedBackend()
    settings = ChunkSettings.for_limit(backend.max_tokens)
    started = time.perf_counter()
    for _, document, _ in redacted:
        chunk_document(document, backend.count_tokens, settings)
    chunking = time.perf_counter() - started
    findings = [(path, finding) for path, _, found in redacted for finding in found]
    for path, finding in findings[:show]:
        data = "\n".join(dict(docs)[path].lines).encode()
        start, end, _ = next(
            span for span in find_secrets(data) if data.count(b"\n", 0, span[0]) + 1 == finding.line
        )
        context = data[max(0, start - 40) : end + 10].decode("utf-8", "replace").replace("\n", "\\n")
        print(f"{name}: {path}:{finding.line} {finding.kind}: {context}", file=sys.stderr)
    ratio = redacting / (reading + chunking)
    where = f"{name}, {len(docs):,} files, {megabytes:.1f} MB of text"
    return [
        row(
            f"redaction: seconds vs reading and chunking the same files ({where})",
            round(redacting, 3),
            round(reading + chunking, 3),
            round(ratio, 3),
            target=f"<= {MOST_ADDED}",
            passed=ratio <= MOST_ADDED,
            note="the scan's passes are substring searches and literal-prefixed expressions over the text "
            "as bytes; what is left is Python's per-match work",
        ),
        row(f"redaction: secrets found in documentation that holds none ({where})", len(findings)),
    ]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="300 files a folder, for a CI smoke run")
    parser.add_argument("--json", action="store_true", help="print the rows as JSON for bench/run.py")
    parser.add_argument("--show", type=int, default=0, metavar="N", help="print N findings a folder")
    options = parser.parse_args()
    limit = 300 if options.quick else 3000
    rows = [line for name, pattern in FOLDERS.items() for line in measure(name, pattern, limit, options.show)]
    print_rows(rows, options.json)
    return 0


if __name__ == "__main__":
    sys.exit(main())
