"""How many lines of the snippets a search shows still show a table's or a directive's markup.

For each set (a real folder of bench_scores.py, with its questions in bench/data/<set>-*.jsonl,
off-topic ones left out) this counts the lines that show block markup raw (:data:`RAW`: a table
row's pipes, an AsciiDoc cell's specifier, a table's border, a reStructuredText directive's line,
its options, a list-table's ``* -``, a pipe at a line's start (a table row's, a grid table's, a
line block's); a line ending with a pipe is most often prose, ``Docs | Issues |``, as written; in
Markdown, MyST's directives and options (``{eval-rst}`` blocks hold reST), MkDocs' ``!!!``,
``???`` and ``///`` lines):

- in the snippet lines of the first three hits of a hybrid search for each question, as every front
  end shows them (``indexer.snippets.hit_snippet_lines``);
- in every line of every chunk of the index, as a snippet would show it
  (``indexer.snippets.readable_text``): the lines any question could bring up.

Run it with ``PYTHONPATH`` at each checkout, on the same index (the search is the same; only what a
snippet shows of a hit differs), and compare the two runs' JSON, which keeps each snippet's lines:

    SCORES_DATA=/work/data SCORES_CACHE=<cache> PYTHONPATH=<checkout> \\
      python bench/studies/snippet_markup.py --sets werkzeug,asciidoctor,click > run.json
    python bench/studies/snippet_markup.py --compare before.json after.json

A code block's line that happens to look like markup (a shell pipe at the start of a line) counts
too, before and after alike: code keeps its characters.
"""

from __future__ import annotations

import argparse
import json
import re
import sqlite3
import sys
from collections import Counter

import bench_scores

from indexer.snippets import hit_snippet_lines, readable_text

#: What shows a table's or a directive's markup raw, by the formats it is markup in.
RAW = {
    "table pipe": (("md", "adoc"), re.compile(r"^\|")),
    "grid or line block pipe": (("rst",), re.compile(r"^\|")),
    "cell specifier": (("adoc",), re.compile(r"^(?:\d{1,4}(?:\.\d{1,4})?[*+])?[<^>]?(?:\.[<^>])?[a-z]?\|")),
    "table border": (("rst",), re.compile(r"^=+(?: +=+)+$|^\+[-=+]*\+$")),
    "directive": (("rst", "md"), re.compile(r"^\.\.\s+[\w:.+-]+::")),
    "directive option": (("rst", "md"), re.compile(r"^:[\w-]+:(?:\s|$)")),
    "admonition or block marker": (("md",), re.compile(r"^(?:/{3,}|!!!|\?\?\?|:{3,}|`{3,}\{|~{3,}\{)")),
    "list-table cell": (("rst",), re.compile(r"^\*\s+-(?:\s|$)")),
}
GAP = "…"


def raw_kinds(path: str, line: str) -> list[str]:
    """The kinds of raw markup ``line`` (of a snippet of the file at ``path``) shows."""
    extension = path.rsplit(".", 1)[-1].lower()
    extension = {"markdown": "md", "rest": "rst", "asciidoc": "adoc", "asc": "adoc"}.get(extension, extension)
    text = line.strip().removeprefix(GAP).removesuffix(GAP).strip()
    return [kind for kind, (formats, pattern) in RAW.items() if extension in formats and pattern.search(text)]


def measure(name: str) -> dict:
    (collection,), missing = bench_scores.collections([name])
    if missing:
        raise SystemExit(f"{name}: its folder is not under $SCORES_DATA")
    index = bench_scores.opened(collection, None)
    snippets = []
    counted: Counter[str] = Counter()
    lines = 0
    for question in collection.questions:
        if question.kind == "off-topic":
            continue
        for rank, hit in enumerate(index.search(question.text, k=3, mode="hybrid", min_score=0), 1):
            shown = hit_snippet_lines(hit, question.text)
            raw = [kind for line in shown for kind in raw_kinds(hit.path, line)]
            counted.update(raw)
            lines += len(shown)
            snippets.append(
                {"question": question.text, "rank": rank, "citation": hit.citation, "lines": shown}
            )
    chunk_lines = 0
    chunk_counted: Counter[str] = Counter()
    index.close()
    chunks = sqlite3.connect(f"file:{bench_scores.index_path(collection, None)}?mode=ro", uri=True)
    for path, text in chunks.execute(
        "SELECT path, text FROM chunks JOIN files ON files.id = file_id ORDER BY path, seq"
    ):
        for line in readable_text(path, text).split("\n"):
            if line.strip():
                chunk_lines += 1
                chunk_counted.update(raw_kinds(path, line))
    chunks.close()
    return {
        "set": name,
        "snippets": len(snippets),
        "snippet lines": lines,
        "raw snippet lines": sum(counted.values()),
        "raw snippet lines by kind": dict(counted),
        "chunk lines": chunk_lines,
        "raw chunk lines": sum(chunk_counted.values()),
        "raw chunk lines by kind": dict(chunk_counted),
        "shown": snippets,
    }


def compare(before_path: str, after_path: str, examples: int) -> None:
    """Each set's counts before → after, and a few snippets whose lines changed."""
    with open(before_path, encoding="utf-8") as before_file, open(after_path, encoding="utf-8") as after_file:
        before, after = json.load(before_file), json.load(after_file)
    for old, new in zip(before, after, strict=True):
        print(
            f"{old['set']}: {old['snippets']} snippets; raw snippet lines {old['raw snippet lines']} → "
            f"{new['raw snippet lines']} of {old['snippet lines']} → {new['snippet lines']}; "
            f"raw chunk lines {old['raw chunk lines']} → {new['raw chunk lines']} "
            f"of {old['chunk lines']} → {new['chunk lines']}"
        )
        print(f"  by kind, snippets: {old['raw snippet lines by kind']} → {new['raw snippet lines by kind']}")
        print(f"  by kind, chunks: {old['raw chunk lines by kind']} → {new['raw chunk lines by kind']}")
        shown = 0
        for was, now in zip(old["shown"], new["shown"], strict=True):
            assert was["citation"] == now["citation"], "the runs' searches differ"
            if was["lines"] != now["lines"] and shown < examples:
                shown += 1
                print(f'  {now["citation"]}, "{now["question"]}"')
                print("\n".join(f"    - {line}" for line in was["lines"]))
                print("\n".join(f"    + {line}" for line in now["lines"]))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--sets", default="werkzeug,asciidoctor,click")
    parser.add_argument("--compare", nargs=2, metavar=("BEFORE", "AFTER"))
    parser.add_argument("--examples", type=int, default=4)
    options = parser.parse_args()
    if options.compare:
        compare(*options.compare, options.examples)
        return 0
    json.dump([measure(name) for name in options.sets.split(",")], sys.stdout, ensure_ascii=False, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
