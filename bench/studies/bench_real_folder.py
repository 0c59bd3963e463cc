"""A build of a real folder: what goes in (chunks, their size, those too small to read or without a
heading path), how long the pipeline takes, and, given written questions, how often the expected file
comes first (hit@1) or in the first three (hit@3) in each search mode and with plain BM25 (bm25s). A
question may name its answer by lines of a file (``find.info-1.gz:417-453``), as for a manual in one
file: a hit answers it when it overlaps them, and each hit counts apart.

Structure and time come from a build with the embedded model's own tokenizer and instant vectors
(bench/support/instant.py), so chunks are cut where a real build cuts them and the time is the pipeline's own.
Questions need real vectors: a second index is built with the embedded model, every vector kept in a
cache (bench/support/vector_cache.py) keyed by the text it embeds, so a text embedded once (by this
checkout or another) is never embedded again.

Each mode is asked twice: with every hit (``min_score=0``: the ranking) and as a user asks, at the
mode's default threshold (``default hit@1``: a question answered "no results" misses).

Usage:
    python bench/studies/bench_real_folder.py FOLDER [--questions FILE.jsonl] [--reference CHECKOUT]
        [--repeats 1] [--sample 50] [--db PATH] [--keep DIR] [--questions-only]
        [--answers FILE.txt] [--json]

``--reference CHECKOUT`` runs the same measurements with another checkout's ``indexer`` (a
``git archive`` of main, say) in a subprocess, in the same run, and prints both side by side.
Without it the script measures whichever ``indexer`` is importable first. ``--keep DIR`` keeps the
indexes in DIR (the reference's in DIR/reference) and brings them up to date on the next run
instead of building them anew; ``--questions-only`` skips the structure and timing build;
``--answers`` writes each question's first three hits per mode (file, heading, score, cosine and
keyword evidence) to read, the reference's beside it (``.reference`` before the suffix).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import subprocess
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import bench_folder  # noqa: F401  (bench/ on sys.path: support/ and the suite's scripts)
import numpy as np
from support.tokenizer_instant import TokenizerInstantBackend
from support.vector_cache import VECTOR_CACHE, CachedModelBackend

from indexer import EmbeddingBackend, Index
from indexer.citations import Span, parse_citation
from indexer.eval.fixtures import Expected

#: Hits asked for per question: enough chunks to rank ten files.
HITS = 50
#: A chunk with fewer words than this carries no text a reader can use (a title, a link line).
FEW_WORDS = 10
_WORD = re.compile(r"\w+")
#: What a chunk that starts with raw front matter starts with: a fence, then a `key:` or `key =` line.
_FRONT_MATTER = re.compile(r"^(?:---|\+\+\+)\s*\n\s*[\w-]+\s*[:=]")


def build_once(folder: Path, db: Path, backend: EmbeddingBackend, fresh: bool = True) -> tuple[float, object]:
    """Build ``folder`` into ``db``: from nothing when ``fresh``, else bringing ``db`` up to date."""
    for suffix in ("", "-wal", "-shm", ".lock") if fresh else ():
        Path(f"{db}{suffix}").unlink(missing_ok=True)
    started = time.perf_counter()
    with Index.open(db, backend=backend) as index:
        report = index.build(folder, warn=lambda message: None)
    return time.perf_counter() - started, report


def stored_chunks(db: Path) -> list[tuple[str, int, int, str, str]]:
    """(path, start line, end line, heading, text) of every chunk, in id order."""
    import apsw

    connection = apsw.Connection(str(db), flags=apsw.SQLITE_OPEN_READONLY)
    return list(
        connection.execute(
            "SELECT f.path, c.start_line, c.end_line, c.heading, c.text FROM chunks c "
            "JOIN files f ON f.id = c.file_id ORDER BY c.id"
        )
    )


def chunk_figures(db: Path, count_tokens) -> dict[str, object]:  # noqa: ANN001 (a token counter)
    """Chunks; their average tokens as the model reads them (heading path, then text); the shares of
    chunks under FEW_WORDS words of text, without a heading path, and starting with raw front matter."""
    import apsw

    chunks = stored_chunks(db)
    connection = apsw.Connection(str(db), flags=apsw.SQLITE_OPEN_READONLY)
    files = connection.execute("SELECT count(*) FROM files WHERE status = 'indexed'").fetchall()[0][0]
    if not chunks:
        return {"files_indexed": files, "chunks": 0}
    tokens = count_tokens(
        [f"{heading}\n{text.strip()}" if heading else text.strip() for *_, heading, text in chunks]
    )
    few = [len(_WORD.findall(text)) < FEW_WORDS for *_, text in chunks]
    per_file = Counter(path for path, *_ in chunks)
    alone = [per_file[path] == 1 for path, *_ in chunks]
    return {
        "files_indexed": files,
        "chunks": len(chunks),
        "tokens_per_chunk": round(float(np.mean(tokens)), 1),
        # files cut in two or more: a file shorter than the limit is one chunk whatever the chunker
        "tokens_per_chunk_of_longer_files": round(
            float(np.mean([count for count, one in zip(tokens, alone, strict=True) if not one] or [0])), 1
        ),
        "under_10_words": round(float(np.mean(few)), 4),
        # of those, the whole text of their file: no cut can give them more
        "under_10_words_whole_file": sum(f and one for f, one in zip(few, alone, strict=True)),
        "without_heading": round(float(np.mean([not heading for *_, heading, _ in chunks])), 4),
        "front_matter_first": sum(bool(_FRONT_MATTER.match(text.lstrip())) for *_, text in chunks),
        "chunks_by_top_folder": dict(
            Counter(path.split("/")[0] if "/" in path else "." for path, *_ in chunks).most_common(8)
        ),
    }


def sample_chunks(db: Path, count: int, seed: int = 13) -> list[dict[str, object]]:
    rows = stored_chunks(db)
    picked = random.Random(seed).sample(rows, min(count, len(rows)))
    return [
        {"path": p, "lines": f"{s}-{e}", "heading": h, "text": " ".join(t.split())[:160]}
        for p, s, e, h, t in picked
    ]


# -- questions ---------------------------------------------------------------------------------


def read_questions(path: Path) -> list[dict]:
    with open(path, encoding="utf-8") as lines:
        return [json.loads(line) for line in lines if line.strip()]


def hits_at(ranked: list[list[str]], questions: list[dict], prefix: str) -> dict[str, float]:
    """hit@1 and hit@3 of files ranked per question, overall, apart for questions of up to 12 words
    (short) and of more (long), and apart for each kind of question where a set has several (a code
    repository's ``source`` and ``docs`` questions)."""
    figures: dict[str, float] = {}
    groups = {
        "short": [len(q["query"].split()) <= 12 for q in questions],
        "long": [len(q["query"].split()) > 12 for q in questions],
    }
    if not all(groups["short"]):
        groups = {}
    kinds = sorted({q.get("kind", "") for q in questions})
    if len(kinds) > 1:
        groups.update({kind: [q.get("kind", "") == kind for q in questions] for kind in kinds})
    for depth in (1, 3):
        found = [
            bool(set(q["expected"]) & set(pages[:depth])) for q, pages in zip(questions, ranked, strict=True)
        ]
        figures[f"{prefix} hit@{depth}"] = round(float(np.mean(found)), 4)
        for name, members in groups.items():
            picked = [hit for hit, member in zip(found, members, strict=True) if member]
            if picked:
                figures[f"{prefix} {name} hit@{depth}"] = round(float(np.mean(picked)), 4)
    return figures


def question_figures(
    folder: Path, questions: list[dict], db: Path, fresh: bool = True, answers: Path | None = None
) -> dict[str, object]:
    """hit@1/hit@3 per mode on an index built with the embedded model (vectors cached), with every
    hit and at the mode's default threshold, and bm25s's."""
    backend = CachedModelBackend(VECTOR_CACHE)
    started = time.perf_counter()
    _, report = build_once(folder, db, backend, fresh)
    figures: dict[str, object] = {"model_build_seconds": round(time.perf_counter() - started, 1)}
    figures["texts_embedded"] = backend.embedded
    read: list[str] = []
    with Index.open(db, backend=backend) as index:
        for mode in ("hybrid", "vector", "keyword"):
            found = [index.search(q["query"], k=HITS, mode=mode, min_score=0) for q in questions]
            ranked = [answers_given(hit_places(hits), q) for q, hits in zip(questions, found, strict=True)]
            figures.update(hits_at(ranked, questions, mode))
            shown = [
                answers_given(hit_places(hits), q) if lines_expected(q) else shown_files(hits)
                for q, hits in zip(questions, found, strict=True)
            ]
            figures.update(hits_at(shown, questions, f"{mode} shown"))
            figures[f"{mode} misses@3"] = [
                q["query"]
                for q, pages in zip(questions, ranked, strict=True)
                if not set(q["expected"]) & set(pages[:3])
            ]
            kept = [
                answers_given(hit_places(index.search(q["query"], k=HITS, mode=mode)), q) for q in questions
            ]
            figures.update(hits_at(kept, questions, f"{mode} default"))
            read += answer_lines(mode, questions, found, ranked)
    figures.update(hits_at(bm25s_ranking(db, questions), questions, "bm25s"))
    if answers is not None:
        answers.write_text("\n".join(read) + "\n", encoding="utf-8")
    return figures


@dataclass(frozen=True)
class Place:
    """Where a hit is, as :meth:`Expected.found_by` reads it: a stored hit's or a chunk bm25s ranks."""

    path: str
    start_line: int
    end_line: int
    locator: str = ""


def hit_places(hits: list) -> list[Place]:
    """Each hit's place."""
    return [Place(hit.path, hit.start_line, hit.end_line, hit.locator) for hit in hits]


def lines_expected(question: dict) -> bool:
    """Whether a question names its answer by a part of a file (``find.info-1.gz:417-453``), as for a
    manual in one file, rather than by a file."""
    return any(Expected.parse(item).span != Span() for item in question["expected"])


def answers_given(places: list[Place], question: dict) -> list[str]:
    """What the hits at ``places`` give, in order, each once: for a question that names its answer
    by a file, the hits' files; for one that names it by a part of a file, the expected part a hit
    finds (:meth:`Expected.found_by`, as ``index eval`` finds it), else the hit's own lines (each
    chunk apart, so hit@3 is the first three chunks)."""
    if not lines_expected(question):
        return list(dict.fromkeys(place.path for place in places))
    expected = [(item, Expected.parse(item)) for item in question["expected"]]
    given = []
    for place in places:
        found = (item for item, wanted in expected if wanted.found_by(place))  # type: ignore[arg-type]
        given.append(next(found, f"{place.path}:{place.start_line}-{place.end_line}"))
    return list(dict.fromkeys(given))


def shown_files(hits: list) -> list[str]:
    """The files the hits show, in the order a reader meets them: each hit's own, then those of its
    copies (the same text in other files, cited under it), as ``index eval`` counts them."""
    shown = []
    for hit in hits:
        shown.append(hit.path)
        shown += [parse_citation(copy.citation)[0][0] for copy in getattr(hit, "copies", ())]
    return list(dict.fromkeys(shown))


def answer_lines(mode: str, questions: list[dict], found: list[list], ranked: list[list[str]]) -> list[str]:
    """Each question's place of its expected file (``-``: not in the first three files) and its first
    three hits: citation, heading, score, cosine, keyword evidence."""
    lines = []
    for q, hits, pages in zip(questions, found, ranked, strict=True):
        place = next((n for n, page in enumerate(pages[:3], 1) if page in q["expected"]), "-")
        lines.append(f"{mode} {place} {q['query']}  [{', '.join(q['expected'])}]")
        for hit in hits[:3]:
            cosine = "-" if hit.vector_score is None else f"{hit.vector_score:.3f}"
            keyword = "-" if hit.keyword_score is None else f"{hit.keyword_score:.3f}"
            lines.append(
                f"    {hit.citation} [{hit.heading[:90]}] score {hit.score:.3f} cos {cosine} kw {keyword}"
            )
            lines += [f"      also {copy.citation}" for copy in getattr(hit, "copies", ())]
    return lines


def bm25s_ranking(db: Path, questions: list[dict]) -> list[list[str]]:
    """Files ranked by their best chunk under plain BM25 (bm25s: English stop words, Snowball stems)
    over the same chunks, heading path and text, as the index holds them."""
    import bm25s
    import Stemmer

    chunks = stored_chunks(db)
    if not chunks:  # a folder the checkout reads nothing of
        return [[] for _ in questions]
    stemmer = Stemmer.Stemmer("english")
    corpus = bm25s.tokenize(
        [f"{heading}\n{text}" for *_, heading, text in chunks],
        stopwords="en",
        stemmer=stemmer,
        show_progress=False,
    )
    retriever = bm25s.BM25()
    retriever.index(corpus, show_progress=False)
    ranked = []
    for q in questions:
        tokens = bm25s.tokenize([q["query"]], stopwords="en", stemmer=stemmer, show_progress=False)
        if not tokens.vocab:
            ranked.append([])
            continue
        found, scores = retriever.retrieve(tokens, k=min(HITS, len(chunks)), show_progress=False)
        places = [
            Place(*chunks[int(i)][:3]) for i, score in zip(found[0], scores[0], strict=True) if score > 0
        ]
        ranked.append(answers_given(places, q))
    return ranked


# -- one checkout, and two side by side ----------------------------------------------------------


def measure(args: argparse.Namespace) -> dict[str, object]:
    workspace = args.keep or Path(tempfile.mkdtemp(prefix="real-folder-"))
    workspace.mkdir(parents=True, exist_ok=True)
    fresh = args.keep is None
    result: dict[str, object] = {
        "folder": str(args.folder),
        "indexer": str(Path(sys.modules["indexer"].__file__).parent.parent),
    }
    if not args.questions_only:
        db = args.db or workspace / "index.db"
        backend = TokenizerInstantBackend()
        times = []
        for _ in range(args.repeats):
            seconds, report = build_once(args.folder, db, backend)
            times.append(round(seconds, 3))
        result.update(chunk_figures(db, backend.count_tokens))
        result.update({"seconds_best": min(times), "seconds": times, "summary": report.summary()})
        if args.sample:
            result["sample"] = sample_chunks(db, args.sample)
    if args.questions:
        questions = read_questions(args.questions)
        result["questions"] = len(questions)
        result.update(question_figures(args.folder, questions, workspace / "model.db", fresh, args.answers))
    return result


def reference_run(args: argparse.Namespace) -> dict[str, object]:
    """The same measurements with the ``indexer`` of ``args.reference``, in a subprocess."""
    command = [sys.executable, __file__, str(args.folder), "--json", "--repeats", str(args.repeats)]
    if args.questions:
        command += ["--questions", str(args.questions)]
    if args.keep:
        command += ["--keep", str(args.keep / "reference")]
    if args.questions_only:
        command += ["--questions-only"]
    if args.answers:
        command += ["--answers", str(args.answers.with_suffix(".reference" + args.answers.suffix))]
    environment = {**os.environ, "PYTHONPATH": str(args.reference)}
    done = subprocess.run(command, capture_output=True, text=True, env=environment, check=False)
    if done.returncode != 0:
        raise SystemExit(f"the reference run failed: {done.stderr.strip()[-800:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


COMPARED = (
    "files_indexed",
    "chunks",
    "tokens_per_chunk",
    "tokens_per_chunk_of_longer_files",
    "under_10_words",
    "under_10_words_whole_file",
    "without_heading",
    "front_matter_first",
    "seconds_best",
)


def side_by_side(before: dict[str, object], after: dict[str, object]) -> str:
    """A Markdown table of the figures both runs have: reference, then this checkout."""
    names = [name for name in before if name in after and isinstance(after[name], (int, float))]
    names = [name for name in COMPARED if name in names] + [name for name in names if name not in COMPARED]
    lines = [f"| {after['folder']} | before | after |", "|---|---|---|"]
    lines += [f"| {name} | {before[name]} | {after[name]} |" for name in names]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", type=Path)
    parser.add_argument(
        "--questions", type=Path, default=None, help="JSONL: query, expected (paths, or path:first-last)"
    )
    parser.add_argument("--reference", type=Path, default=None, help="another checkout to measure too")
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument("--sample", type=int, default=0)
    parser.add_argument("--db", type=Path, default=None)
    parser.add_argument("--keep", type=Path, default=None, help="keep the indexes here, re-used next run")
    parser.add_argument("--questions-only", action="store_true", help="skip the structure and timing build")
    parser.add_argument("--answers", type=Path, default=None, help="write each question's first hits here")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    args.folder = args.folder.resolve()
    for name in ("questions", "keep", "answers"):
        if getattr(args, name):
            setattr(args, name, getattr(args, name).resolve())
    if args.reference is None:
        json.dump(measure(args), sys.stdout, indent=None if args.json else 2, ensure_ascii=False)
        print()
        return
    before = reference_run(args)
    after = measure(args)
    if args.json:
        print(json.dumps({"before": before, "after": after}, ensure_ascii=False))
        return
    print(side_by_side(before, after))
    for name in ("hybrid misses@3",):
        if name in after:
            print(f"\n{name} (after): {json.dumps(after[name], ensure_ascii=False)}")


if __name__ == "__main__":
    main()
