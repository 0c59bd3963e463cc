"""The same text in several files is shown once: the hit ranked first holds the others' citations
as its copies, and the next hit takes their places (indexer/search/copies.py)."""

from __future__ import annotations

import json

import pytest
from conftest import write
from helpers import HashBackend, fastest_seconds, grows_linearly

from indexer import Index
from indexer.request import MODES, SearchRequest
from indexer.search import run
from indexer.search.copies import fold_copies, word_runs
from indexer.search.hit import Copy, Hit

BACKUP = (
    "Copy a live database to a backup file while other connections keep writing to it. The backup "
    "reads the source database page by page, holding its lock only while it copies a step of pages, "
    "and starts again from the first page when another connection changes a page it has already "
    "copied, so that the finished copy is consistent. Readers never wait for the backup to finish, "
    "and a writer waits only for the step in progress."
)
THREADS = (
    "A connection may be shared by threads when the library was compiled for serialized use: each "
    "call takes the connection's mutex, so two threads never run a statement of one connection at "
    "the same time, and a prepared statement stays with the connection that prepared it."
)
RESTORE = (
    "Restore a database from a backup file by copying the backup into the live database: the "
    "restore takes an exclusive lock on the destination for its whole run, so no other connection "
    "reads or writes the database until the restore is finished."
)
QUESTION = "copy a live database to a backup file while other connections keep writing"


def write_site(root) -> None:
    """A manual whose backup page is also in its one-page edition and in the source copy a site
    generator keeps beside it, with a page on restoring that shares the question's words."""
    write(root / "backup.md", f"# Online backup\n\n{BACKUP}\n")
    write(root / "_sources" / "backup.md.txt", f"Online backup\n=============\n\n{BACKUP}\n")
    write(root / "restore.md", f"# Restoring\n\n{RESTORE}\n")
    one_page = f"# The library\n\n## Threads\n\n{THREADS}\n\n## Online backup\n\n{BACKUP}\n"
    write(root / "all-in-one.md", one_page)


@pytest.mark.parametrize("mode", MODES)
def test_the_same_text_in_several_files_is_shown_once_with_its_copies(any_index, tmp_path, mode):
    write_site(tmp_path / "site")
    with Index.open(any_index, backend=HashBackend()) as index:
        assert index.build(tmp_path / "site").exit_code == 0
        hits = index.search(QUESTION, k=3, mode=mode, min_score=0)
        folded = [hit for hit in hits if hit.copies]
        assert folded, [hit.citation for hit in hits]
        for hit in folded:  # each part of the backup text once, citing the other two files' parts
            shown = {hit.path} | {copy.citation.rpartition(":")[0] for copy in hit.copies}
            assert shown == {"backup.md", "_sources/backup.md.txt", "all-in-one.md"}, hit
            for copy in hit.copies:  # each copy reads back where it is, saying what the hit says
                passage = index.get(copy.citation, root=copy.root)
                assert passage.path == copy.citation.rpartition(":")[0] and passage.root == copy.root
                assert word_runs(passage.text) & word_runs(hit.text)
        # the copies' places go to the next hits: the page on restoring is among the first three
        assert "restore.md" in [hit.path for hit in hits], [hit.citation for hit in hits]
        assert len(hits) == 3


def hit(path: str, text: str, line: int = 1, root: str = "root", score: float = 0.9) -> Hit:
    return Hit(path, line, line + 5, score, "", text, root, "hybrid")


def test_a_files_own_chunks_and_texts_that_share_a_little_are_not_copies():
    shared = hit("a.md", BACKUP)
    same_file = hit("a.md", BACKUP, line=20)  # a file repeats itself: two passages of it
    other_root = hit("a.md", BACKUP, root="elsewhere")  # another folder's file of that name
    quoting = hit("b.md", f"{THREADS} {RESTORE} {BACKUP[:120]}")  # quotes one sentence of it
    folded = fold_copies([shared, same_file, other_root, quoting], k=10, window=20)
    assert [one.citation for one in folded] == ["a.md:1-6", "a.md:20-25", "b.md:1-6"]
    assert folded[0].copies == (Copy("a.md:1-6", "elsewhere"),)
    assert folded[0].copies_shown() == ["a.md:1-6 in elsewhere"]
    assert folded[1].copies == () and folded[2].copies == ()


def test_a_copy_is_folded_into_the_hit_holding_most_of_it():
    whole = " ".join(f"w{n}" for n in range(20))
    part = " ".join(f"w{n}" for n in range(14)) + " other words here entirely"
    folded = fold_copies([hit("a.md", part), hit("b.md", whole), hit("c.md", whole)], k=10, window=20)
    assert [one.path for one in folded] == ["a.md", "b.md"]
    assert folded[0].copies == () and folded[1].copies == (Copy("c.md:1-6", "root"),)


def test_two_versions_of_a_page_that_differ_in_a_default_stay_two_hits():
    setting = "minimumReleaseAge: the minutes a new version must wait before it is installed. Default: {}."
    newer = hit("docs/settings.md", setting.format(1440))
    older = hit("versioned_docs/version-10.x/settings.md", setting.format(0), score=0.8)
    signed = hit("versioned_docs/version-9.x/settings.md", setting.format(-1440), score=0.8)
    same = hit("versioned_docs/version-8.x/settings.md", setting.format(1440), score=0.8)
    folded = fold_copies([newer, older, signed, same], k=10, window=20)
    assert [one.path for one in folded] == [newer.path, older.path, signed.path]
    assert folded[0].copies == (Copy("versioned_docs/version-8.x/settings.md:1-6", "root"),)
    assert folded[1].copies == folded[2].copies == ()


def test_the_first_hits_do_not_depend_on_how_many_are_asked_for(tmp_path):
    write_site(tmp_path / "site")
    with Index.open(tmp_path / "index.db", backend=HashBackend()) as index:
        assert index.build(tmp_path / "site").exit_code == 0
        answers = {k: index.search(QUESTION, k=k, mode="hybrid", min_score=0) for k in (1, 2, 3, 10)}
    for k, hits in answers.items():
        assert hits == answers[10][:k], k
    assert answers[1][0].copies  # the first hit's copies are known with one hit asked for


def test_re_ranked_hits_are_as_many_as_asked_when_copies_are_folded(tmp_path):
    def by_words(question: str, chunks) -> list[float]:  # the re-ranker's part: any order will do
        asked = set(question.lower().split())
        return [len(asked & set(chunk.text.lower().split())) / len(asked) for chunk in chunks]

    write_site(tmp_path / "site")
    with Index.open(tmp_path / "index.db", backend=HashBackend()) as index:
        assert index.build(tmp_path / "site").exit_code == 0
        request = SearchRequest(QUESTION, k=3, mode="keyword", min_score=0, rerank=True, rerank_top=3)
        hits = run.search(index.store, lambda: index.backend, request, rerank=by_words)
    assert len(hits) == 3 and any(one.copies for one in hits)
    assert "restore.md" in [one.path for one in hits]


def test_hits_read_back_from_json_keep_their_copies():
    folded = fold_copies([hit("a.md", BACKUP), hit("b.md", BACKUP, root="elsewhere")], k=1, window=20)[0]
    again = Hit(**json.loads(json.dumps(folded.to_dict())))
    assert again == folded and again.copies == (Copy("b.md:1-6", "elsewhere"),)


@pytest.mark.parametrize("words", [" ".join(f"w{n}" for n in range(16_000)), "word " * 64_000])
def test_folding_copies_is_linear_in_the_hits_text(words):
    # hit texts are stored text, read at query time: eight times their size must take about eight
    # times as long (best of five, the collector off), not sixty-four; distinct words few enough that
    # the sets of runs stay in the CPU's caches, whose misses alone nearly double the time of larger
    # ones, one word repeated long enough that the smaller text takes milliseconds, not one
    def seconds(size: int) -> float:
        hits = [Hit(f"{n}.md", 1, 2, 0.9, "", words[:size], "root", "hybrid") for n in range(4)]
        return fastest_seconds(lambda: fold_copies(hits, k=4, window=4))

    assert grows_linearly(seconds, len(words) // 8, len(words), 24)  # quadratic would be 64


def test_runs_of_words_read_past_markup_and_case():
    assert word_runs("`read_po` reads a PO file") == word_runs("READ_PO reads a po file.")
    assert word_runs("two words") == set()
