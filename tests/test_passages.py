"""Reading a file back by citation (`Index.get`), on both stores: the text as indexed, overlapping
chunks merged without a repeated line, lines and pages as cited, clear errors otherwise."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from conftest import SAMPLE_CORPUS
from documents import make_pdf
from helpers import HashBackend, fastest_seconds, grows_linearly

from indexer import ConfigError, Index, NotInIndexError
from indexer.errors import InvalidRequestError

#: every test reads an index holding a PDF, read by a worker process (make test-fast leaves them out)
pytestmark = pytest.mark.heavy

GUIDE = "bicycle-repair/fixing-a-flat-tyre.md"
PAGES = [("one", "saddles"), ("two", "chains"), ("three", "brakes")]  # a page longer than a chunk each


def source_lines(path: Path) -> list[str]:
    """A text file's lines as the index keeps them (whitespace-only lines are blank)."""
    return [
        line if line.strip() else "" for line in path.read_text(encoding="utf-8").rstrip("\n").split("\n")
    ]


@pytest.fixture
def index(any_index, tmp_path):
    """sample_corpus/ cut into small chunks (64 tokens), so that neighbours overlap."""
    folder = tmp_path / "docs"
    shutil.copytree(SAMPLE_CORPUS / "bicycle-repair", folder / "bicycle-repair")
    shutil.copytree(SAMPLE_CORPUS / "cooking", folder / "cooking")
    pages = [
        [f"Page {name} line {line}: " + " ".join([topic] * 6) for line in range(8)] for name, topic in PAGES
    ]
    (folder / "manual.pdf").write_bytes(make_pdf(pages))
    (folder / "leaflet.pdf").write_bytes(make_pdf([["Tiny page one."], ["Tiny page two."]]))
    with Index.open(any_index, backend=HashBackend(max_tokens=64)) as opened:
        assert opened.build(folder, warn=lambda message: None).exit_code == 0
        opened.folder = folder
        yield opened


def chunks_of(index: Index, path: str) -> list:
    return index.store.file_chunks(path)


def test_a_whole_file_reads_back_as_indexed_with_no_line_twice(index):
    chunks = chunks_of(index, GUIDE)
    overlaps = sum(
        1 for before, after in zip(chunks, chunks[1:], strict=False) if after.start_line <= before.end_line
    )
    assert len(chunks) > 5
    assert overlaps > 0  # the case that could repeat lines
    passage = index.get(GUIDE)
    assert passage.text.split("\n") == source_lines(index.folder / GUIDE)
    assert (passage.start_line, passage.end_line) == (1, len(source_lines(index.folder / GUIDE)))
    assert passage.root == str(index.folder.resolve())
    assert passage.locator == ""


def test_every_files_text_reads_back_whole(index):
    for path in sorted((index.folder / "cooking").glob("*.md")):
        relative = path.relative_to(index.folder).as_posix()
        assert index.get(relative).text.split("\n") == source_lines(path), relative


def test_a_hits_citation_gives_its_text_and_wider_lines_read_around_it(index):
    hit = index.search("patch the tube", k=1, mode="keyword", paths=GUIDE, min_score=0)[0]
    assert index.get(hit.citation).text == hit.text
    lines = source_lines(index.folder / GUIDE)
    start, end = max(1, hit.start_line - 3), hit.end_line + 3
    around = index.get(f"{GUIDE}:{start}-{end}")
    assert around.text.split("\n") == [*lines[start - 1 : end]]
    assert (around.start_line, around.end_line) == (start, end)
    assert index.get(f"{GUIDE}:3").text == lines[2] != ""


def test_a_range_from_or_to_a_blank_line_numbers_its_text_from_its_first_line(index):
    """Blank lines at a passage's edges are dropped, and its range with them: line i of the text is
    line start_line + i of the file (the search page numbers the lines it shows so). Past the
    file's first chunk, whose place is uncertain when the chunker stretched it over blank lines."""
    lines = source_lines(index.folder / GUIDE)
    exact = chunks_of(index, GUIDE)[0].end_line + 10
    blank = [
        number for number, line in enumerate(lines, start=1) if not line and exact < number <= len(lines) - 10
    ]
    assert len(blank) > 5
    for number in blank:
        for asked in (f"{number}-{number + 10}", f"{number - 10}-{number}"):
            passage = index.get(f"{GUIDE}:{asked}")
            assert passage.text.split("\n") == lines[passage.start_line - 1 : passage.end_line], asked
            assert passage.text.split("\n")[0]
            assert passage.text.split("\n")[-1]


def test_pages_are_read_by_their_citation(index):
    page = index.get("manual.pdf:page 2")
    assert "chains" in page.text
    assert "saddles" not in page.text
    assert "brakes" not in page.text
    assert page.text.startswith("Page two line 0")
    assert page.text.endswith("chains")
    assert page.locator == "page 2"
    assert page.citation == "manual.pdf:page 2"
    both = index.get("manual.pdf:pages 2-3")
    assert "chains" in both.text
    assert "brakes" in both.text
    assert "saddles" not in both.text
    assert both.locator == "pages 2-3"
    # pages small enough to share a chunk come back together, and the locator says so
    assert index.get("leaflet.pdf:page 2").locator == "pages 1-2"


def test_what_is_not_in_the_index_is_a_clear_error(index):
    with pytest.raises(NotInIndexError, match="no/such.md is not in the index"):
        index.get("no/such.md")
    with pytest.raises(NotInIndexError, match=r"no lines 900-910 in the index \(it has lines 1-"):
        index.get(f"{GUIDE}:900-910")
    with pytest.raises(NotInIndexError, match=r"no page 9 in the index \(it has pages 1-3\)"):
        index.get("manual.pdf:page 9")
    with pytest.raises(ConfigError):
        index.get("  ")


def test_a_range_that_runs_backwards_or_a_nul_byte_is_a_bad_request_naming_it(index):
    with pytest.raises(InvalidRequestError, match=rf"^{GUIDE}:5-1 runs backwards: ask for {GUIDE}:1-5$"):
        index.get(f"{GUIDE}:5-1")
    with pytest.raises(InvalidRequestError, match="runs backwards: ask for manual.pdf:pages 1-3$"):
        index.get("manual.pdf:pages 3-1")
    with pytest.raises(InvalidRequestError, match=r"the citation '.*\\x00.*' holds a NUL byte"):
        index.get(f"{GUIDE}\0:1-5")
    with pytest.raises(InvalidRequestError, match=r"^root '/x\\x00' holds a NUL byte"):
        index.get(GUIDE, root="/x\0")


def test_a_path_in_two_roots_needs_its_root_and_roots_filter_searches(index, tmp_path):
    other = tmp_path / "other"
    shutil.copytree(index.folder / "bicycle-repair", other / "bicycle-repair")
    (other / GUIDE).write_text("# Another guide\n\nOnly this copy mentions zeppelins.\n")
    index.build(other)
    with pytest.raises(ConfigError, match="several folders"):
        index.get(GUIDE)
    assert "zeppelins" in index.get(GUIDE, root=str(other.resolve())).text
    assert "zeppelins" not in index.get(GUIDE, root=str(index.folder.resolve())).text
    hits = index.search("zeppelins", mode="keyword", roots=[str(index.folder.resolve())], min_score=0)
    assert hits == []
    hits = index.search("zeppelins", mode="keyword", roots=str(other.resolve()), min_score=0)
    assert [hit.root for hit in hits] == [str(other.resolve())]


def test_a_file_whose_name_holds_a_colon_is_read_by_its_name(index, tmp_path):
    folder = tmp_path / "colons"
    folder.mkdir()
    (folder / "notes:12-14.md").write_text("# Colon\n\nA file named like a citation.\n")
    index.build(folder)
    assert "named like a citation" in index.get("notes:12-14.md").text


def test_a_file_opening_with_many_blank_lines_reads_back_in_linear_time(tmp_path):
    """The first chunk of a file that opens with blank lines is stretched over them: reading it back
    drops them at once, not one by one from the front of the list."""

    def indexed(blank_lines: int) -> Index:
        folder = tmp_path / f"docs{blank_lines}"
        folder.mkdir()
        (folder / "notes.txt").write_text("\n" * blank_lines + "alpha beta gamma\n" * 40, encoding="utf-8")
        index = Index.open(tmp_path / f"{blank_lines}.db", backend=HashBackend())
        assert index.build(folder, warn=lambda message: None).exit_code == 0
        return index

    small, large = indexed(4_000), indexed(64_000)
    assert large.get("notes.txt").text == "alpha beta gamma\n" * 39 + "alpha beta gamma"

    def seconds(size: int) -> float:
        index = small if size == 4_000 else large
        return fastest_seconds(lambda: index.get("notes.txt"), repeats=3)

    assert grows_linearly(seconds, 4_000, 64_000, 40)  # quadratic would be 256
