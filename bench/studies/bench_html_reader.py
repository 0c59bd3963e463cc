"""The HTML reader (lxml, libxml2's HTML5 tokenizer) against the one it replaced (the standard
library's ``html.parser``, as of commit 4b15591's parent, loaded from git): seconds to read every page
of a folder, the words each keeps, and a page of unclosed comments, on which ``html.parser`` is
quadratic (issue 26 item 3).

    .venv/bin/python bench/studies/bench_html_reader.py /usr/share/doc/rust-doc/html/book [--json]
"""

from __future__ import annotations

import argparse
import importlib.util
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import bench_folder  # noqa: F401  (bench/ on sys.path: support/ and the suite's scripts)
from support.rows import print_rows, row

from indexer.formats.document import Document
from indexer.formats.html import read_html

#: The commit whose parent read HTML with html.parser.
SWITCH = "4b15591"
#: Unclosed comments in the hostile page: 80 KB, a third of the issue's 240 KB page (129 s there),
#: so html.parser's reading of it takes seconds, not minutes.
COMMENTS = 20_000


def old_reader() -> Callable[[str], Document]:
    """``read_html`` as it was before the switch, from git."""
    source = subprocess.run(
        ["git", "show", f"{SWITCH}^:indexer/formats/html.py"], capture_output=True, text=True, check=True
    ).stdout
    with tempfile.NamedTemporaryFile("w", suffix=".py", delete=False) as file:
        file.write(source)
    spec = importlib.util.spec_from_file_location("html_parser_reader", file.name)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.read_html


def seconds_and_words(
    reader: Callable[[str], Document], pages: list[str], repeats: int = 3
) -> tuple[float, int]:
    """The best of ``repeats`` readings of every page, and the words kept."""
    best, words = float("inf"), 0
    for _ in range(repeats):
        started = time.perf_counter()
        words = sum(len(" ".join(reader(page).lines).split()) for page in pages)
        best = min(best, time.perf_counter() - started)
    return best, words


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("folder", type=Path)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    pages = [path.read_text(errors="replace") for path in sorted(args.folder.rglob("*.html"))]
    megabytes = sum(map(len, pages)) / 1e6
    old = old_reader()
    ours, ours_words = seconds_and_words(read_html, pages)
    theirs, their_words = seconds_and_words(old, pages)
    hostile = ["<p>text</p>" + "<!--" * COMMENTS]
    ours_hostile, _ = seconds_and_words(read_html, hostile)
    theirs_hostile, _ = seconds_and_words(old, hostile, repeats=1)
    where = f"{args.folder.name} ({len(pages)} pages, {megabytes:.1f} MB)"
    print_rows(
        [
            row(
                f"HTML reader: seconds, lxml vs html.parser, {where}",
                round(ours, 2),
                round(theirs, 2),
                round(ours / theirs, 3),
                target="<= 1",
                passed=ours <= theirs,
            ),
            row(
                f"HTML reader: words kept, lxml vs html.parser, {where}",
                ours_words,
                their_words,
                round(ours_words / their_words, 3),
            ),
            row(
                f"HTML reader: seconds on a page of {COMMENTS:,} unclosed comments "
                f"({len(hostile[0]) // 1000} KB), lxml vs html.parser",
                round(ours_hostile, 4),
                round(theirs_hostile, 2),
                round(ours_hostile / theirs_hostile, 5),
            ),
        ],
        args.json,
    )


if __name__ == "__main__":
    sys.exit(main())
