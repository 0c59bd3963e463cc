"""Chunker properties: full coverage, right line numbers, the token limit, stable boundaries."""

from __future__ import annotations

import gc
import math
import time

import pytest
from helpers import grows_linearly
from hypothesis import given, settings
from hypothesis import strategies as st

from indexer.chunking import ChunkSettings, chunk_document, contents_entries, split_chunk
from indexer.formats import Document, Part, parse_text, read_document
from indexer.formats.text import read_plain


def file_lines(text: str) -> list[str]:
    """Lines as an editor numbers them: a final newline ends the last line, it does not add one."""
    lines = text.split("\n")
    return lines[:-1] if lines[-1] == "" else lines


def count_words(texts: list[str]) -> list[int]:
    return [len(text.split()) for text in texts]


SETTINGS = ChunkSettings.for_limit(40)


def chunk_text(text: str, count_tokens, settings: ChunkSettings, structured: bool = True):  # noqa: ANN201
    """Chunks of ``text`` read as Markdown, or as plain text (no headings) when not ``structured``."""
    document = parse_text("doc.md", text) if structured else read_plain(text, "utf-8")
    return chunk_document(document, count_tokens, settings)


word = st.text(alphabet="abcdefghijklmnopqrstuvwxyzé0123456789_", min_size=1, max_size=12)
line = st.one_of(
    st.just(""),
    st.lists(word, min_size=1, max_size=60).map(" ".join),
    st.builds(lambda level, title: "#" * level + " " + title, st.integers(1, 4), word),
    st.just("```"),
)
document = st.lists(line, min_size=1, max_size=80).map("\n".join)


@settings(max_examples=200, deadline=None)
@given(document, st.booleans())
def test_every_line_is_in_a_chunk_and_no_chunk_is_over_the_limit(text, structured):
    chunks = chunk_text(text, count_words, SETTINGS, structured=structured)
    lines = file_lines(text)
    if not any(line.strip() for line in lines):
        assert chunks == []
        return
    covered = set()
    for chunk in chunks:
        assert 1 <= chunk.start_line <= chunk.end_line <= len(lines)
        covered.update(range(chunk.start_line, chunk.end_line + 1))
        assert count_words([chunk.embed_text])[0] <= SETTINGS.max_tokens
    assert covered == set(range(1, len(lines) + 1))


@settings(max_examples=200, deadline=None)
@given(document)
def test_chunk_text_comes_from_its_lines(text):
    lines = text.split("\n")
    for chunk in chunk_text(text, count_words, SETTINGS):
        source = " ".join(" ".join(lines[chunk.start_line - 1 : chunk.end_line]).split())
        assert " ".join(chunk.text.split()) in source


@settings(max_examples=100, deadline=None)
@given(document)
def test_same_text_gives_the_same_chunks(text):
    assert chunk_text(text, count_words, SETTINGS) == chunk_text(text, count_words, SETTINGS)


def test_a_final_newline_does_not_add_a_line():
    chunks = chunk_text("a\nb\n", count_words, SETTINGS)
    assert [(chunk.start_line, chunk.end_line) for chunk in chunks] == [(1, 2)]


def section(title: str, words: int, marker: str = "##") -> str:
    return f"{marker} {title}\n\n" + " ".join(f"{title.lower()}{n}" for n in range(words)) + "\n"


def test_headings_give_each_chunk_its_heading_path():
    text = (
        "# Top\n\n" + section("Install", 30) + "\n" + section("Linux", 30, "###") + "\n" + section("Use", 30)
    )
    chunks = chunk_text(text, count_words, SETTINGS)
    assert [(chunk.heading, chunk.start_line) for chunk in chunks] == [
        ("Top > Install", 1),
        ("Top > Install > Linux", 7),
        ("Top > Use", 11),
    ]
    assert chunks[1].embed_text.startswith("Top > Install > Linux\n### Linux\n\nlinux0 linux1")


def count_characters(texts: list[str]) -> list[int]:
    return [len(text) // 4 for text in texts]


def test_a_heading_path_too_long_is_shortened_to_the_titles_nearest_the_chunk():
    deep = "src/main/python/org/example/deeply/nested/package/parser.py"
    code = parse_text(deep, "class Parser:\n    def parse(self):\n        return 1\n")
    chunks = chunk_document(code, count_characters, SETTINGS)  # a heading takes 40 characters at most
    assert [chunk.heading for chunk in chunks] == ["parser.py > Parser > parse"]  # the file by its name
    titles = "# The whole of the reference manual\n\n## Its options\n\n### Verbose\n\nPrints more.\n"
    chunks = chunk_document(parse_text("doc.md", titles), count_characters, SETTINGS)
    assert chunks[-1].heading == "Its options > Verbose"  # the innermost titles that fit
    slashed = "# CI/CD\n\n## Caching dependencies between jobs\n\nKeep the cache.\n"
    chunks = chunk_document(parse_text("doc.md", slashed), count_characters, SETTINGS)
    assert chunks[-1].heading == "Caching dependencies between jobs"  # no file's path: not ``CD > ...``
    assert all(count_characters([chunk.embed_text])[0] <= SETTINGS.max_tokens for chunk in chunks)


def test_small_sections_are_packed_into_one_chunk_under_the_heading_they_share():
    text = "# Top\n\nintro words\n\n" + section("Install", 3) + "\n" + section("Use", 3)
    chunks = chunk_text(text, count_words, SETTINGS)
    assert [(chunk.heading, chunk.text.split("\n")[0]) for chunk in chunks] == [("Top", "# Top")]
    assert "## Install" in chunks[0].text
    assert "use2" in chunks[0].text


def test_sections_are_packed_toward_the_limit():
    text = "# Guide\n\n" + "\n".join(section(f"Part{n}", 4 + n % 5) for n in range(60))
    chunks = chunk_text(text, count_words, ChunkSettings(max_tokens=60, overlap_tokens=0))
    sizes = count_words([chunk.embed_text for chunk in chunks])
    assert max(sizes) <= 60
    assert sum(sizes[:-1]) / len(sizes[:-1]) >= 60 * 2 / 3


def test_a_heading_followed_at_once_by_another_travels_with_the_text_after_it():
    text = "# Guide\n\n## Install\n\n" + " ".join(f"w{n}" for n in range(30)) + "\n\n" + section("Use", 30)
    chunks = chunk_text(text, count_words, SETTINGS)
    assert [chunk.heading for chunk in chunks] == ["Guide > Install", "Guide > Use"]
    assert chunks[0].text.startswith("# Guide\n\n## Install\n\nw0 w1")


def test_a_heading_that_ends_a_file_joins_the_text_before_it():
    text = section("Body", 30) + "\n" + section("Use", 30) + "\n## See also\n"
    chunks = chunk_text(text, count_words, SETTINGS)
    assert chunks[-1].text.endswith("use29\n\n## See also")
    assert len(chunks) == 2


heading = st.builds(lambda level, title: "#" * level + " " + title, st.integers(1, 4), word)
paragraph = st.lists(word, min_size=1, max_size=30).map(" ".join)
#: Sections of up to three headings in a row, then a paragraph.
sections = st.lists(st.tuples(st.lists(heading, max_size=3), paragraph), min_size=1, max_size=15).map(
    lambda parts: "\n\n".join("\n\n".join([*titles, text]) for titles, text in parts)
)


@settings(max_examples=100, deadline=None)
@given(sections)
def test_no_chunk_is_a_heading_alone(text):
    for chunk in chunk_text(text, count_words, SETTINGS):
        assert any(line and not line.startswith("#") for line in chunk.text.split("\n"))


def test_headings_in_a_row_lead_the_first_line_of_a_paragraph_too_long_to_join_whole():
    # three titles and a 29-word line do not fit one 40-word chunk beside their heading path: the line
    # is cut so that its first part goes with the titles, rather than the titles making a chunk alone
    text = "# 0\n\n## 0\n\n### 0\n\n" + " ".join(["0"] * 29)
    chunks = chunk_text(text, count_words, SETTINGS)
    assert chunks[0].text.startswith("# 0\n## 0\n### 0\n0 0")
    for chunk in chunks:
        assert any(line and not line.startswith("#") for line in chunk.text.split("\n"))
        assert count_words([chunk.embed_text])[0] <= SETTINGS.max_tokens


def test_markup_lines_count_nothing_toward_the_limit():
    adornment = "=" * 30
    text = f"{adornment}\nGuide\n{adornment}\n\n" + "\n".join(f"step {n} of it" for n in range(9)) + "\n"

    def count_characters(texts: list[str]) -> list[int]:  # a counter by which an adornment costs much
        return [len(text.replace("\n", "")) for text in texts]

    chunks = chunk_document(parse_text("guide.rst", text), count_characters, ChunkSettings(120, 0))
    assert len(chunks) == 1
    assert chunks[0].text.startswith(adornment)  # shown as in the file
    assert adornment not in chunks[0].embed_text
    assert chunks[0].embed_text.startswith("Guide\nGuide\n\nstep 0")
    assert count_characters([chunks[0].embed_text])[0] <= 120 < count_characters([chunks[0].text])[0]


def test_hash_inside_a_code_fence_is_not_a_heading():
    text = "# Doc\n\n```sh\n# install\npip install x\n```\n"
    chunks = chunk_text(text, count_words, SETTINGS)
    assert [chunk.heading for chunk in chunks] == ["Doc"]


def test_code_comments_are_not_headings_when_unstructured():
    chunks = chunk_text("# a comment\nx = 1\n", count_words, SETTINGS, structured=False)
    assert [chunk.heading for chunk in chunks] == [""]


def test_restructuredtext_titles_are_headings():
    text = (
        "Guide\n=====\n\n"
        + " ".join(f"w{n}" for n in range(30))
        + "\n\nInstall\n-------\n\n"
        + " ".join(f"s{n}" for n in range(30))
    )
    assert [chunk.heading for chunk in chunk_text(text, count_words, SETTINGS)] == [
        "Guide",
        "Guide > Install",
    ]


def test_a_fence_that_fits_is_kept_whole():
    code = "\n".join(f"line{i} x" for i in range(12))
    text = f"# Doc\n\nbefore\n\n```\n{code}\n\nmore{code}\n```\n\nafter\n"
    chunks = chunk_text(text, count_words, ChunkSettings.for_limit(60))
    assert any("```\nline0 x" in chunk.text and "moreline0 x\nline1" in chunk.text for chunk in chunks)
    small = chunk_text(text, count_words, ChunkSettings(max_tokens=53, overlap_tokens=0))
    fenced = [chunk for chunk in small if "line5 x" in chunk.text]
    assert len(fenced) == 1
    assert "```\nline0" in fenced[0].text
    assert "line11 x\n```" in fenced[0].text


def test_a_line_longer_than_the_limit_is_cut_between_words():
    long_line = " ".join(f"w{i}" for i in range(100))
    chunks = chunk_text(long_line, count_words, SETTINGS)
    assert len(chunks) >= 3
    assert all(chunk.start_line == chunk.end_line == 1 for chunk in chunks)
    assert " ".join(chunk.text for chunk in chunks).split()[:5] == ["w0", "w1", "w2", "w3", "w4"]
    assert {word for chunk in chunks for word in chunk.text.split()} == set(long_line.split())


@settings(max_examples=200, deadline=None)
@given(st.integers(41, 400))
def test_a_line_too_long_is_cut_into_the_fewest_parts_of_about_the_same_size(words):
    # filled to the limit one part at a time, a line of 82 words would end on a stub of 2
    chunks = chunk_text(" ".join(f"w{i}" for i in range(words)), count_words, SETTINGS)
    sizes = [len(chunk.text.split()) for chunk in chunks]
    assert sum(sizes) == words and max(sizes) <= SETTINGS.max_tokens
    assert len(sizes) == math.ceil(words / SETTINGS.max_tokens)
    assert max(sizes) - min(sizes) <= 1, sizes


def test_the_model_reads_a_contents_pages_leaders_as_three_marks_and_the_text_keeps_them():
    entries = [f"Entry {n} " + ". " * 10 + str(n * 3) for n in range(30)]
    chunks = chunk_text("\n".join(entries), count_words, SETTINGS, structured=False)
    written = [line for chunk in chunks for line in chunk.text.split("\n")]
    assert set(written) == set(entries)
    read = [chunk.embed_text for chunk in chunks]
    assert all(". . . ." not in text for text in read)
    assert "Entry 7 ... 21" in "\n".join(read)
    # the limit counts the leaders as written: the chunks are where they were
    assert len(chunks) >= math.ceil(sum(len(entry.split()) for entry in entries) / SETTINGS.max_tokens)


def test_parts_of_a_line_cut_by_words_and_halves_of_a_refused_chunk_read_leaders_as_three_marks():
    long_line = " ".join(f"w{n} " + "- " * 8 + "end" for n in range(20))
    chunks = chunk_text(long_line, count_words, SETTINGS, structured=False)
    assert len(chunks) > 1
    assert all("- - - -" in chunk.text and "- - - -" not in chunk.embed_text for chunk in chunks)
    assert all("---" in chunk.embed_text for chunk in chunks)
    halves = split_chunk(chunks[0].__class__(1, 1, "", "Contents . . . . . . 3 Index . . . . . 9"))
    assert [half.text for half in halves] == ["Contents . . . . . .", "3 Index . . . . . 9"]
    assert [half.embed_text for half in halves] == ["Contents ...", "3 Index ... 9"]


def test_the_entries_of_a_contents_list_are_known_by_their_leaders_and_places():
    lists = [
        [
            "3 Tutorial . . . . . . . . . . . 9",
            "3.1 Drawing in batch mode . . . . . 10",
            "3.2 Labels . . . . . 12",
        ],
        [
            "1. Introduction .........................2",
            "2. Scope .......6",
            "   2.1. A title that wraps",
            "   onto a second line .......7",
        ],
        [
            "1. Contents.............: |glvs-contents|",
            "2. Usage..............: |glvs-usage|",
            "3. Data.....: |glvs-data|",
        ],
        ["CONTENTS", "", "Preface . . . . . xi", "Overview . . . . . 1", "", "Tutorial . . . . . 9"],
        ["Intro\t.....\t1", "Usage .....\t4", "Options ......:\t9"],
    ]
    for lines in lists:
        entries = [number for number, line in enumerate(lines, 1) if "...." in line or ". . . ." in line]
        assert contents_entries(lines) == set(entries), lines
    for lines in [
        [
            "Gross pay ........ 2500",
            "Net pay .......... 1900",
            "Check both each month, and keep every payslip.",
        ],
        ["Page one ..... 1"] + ["text"] * 6 + ["Page two ..... 2"] + ["text"] * 6 + ["Page three ..... 3"],
        ["Revenue ........ 12345", "Costs .......... 8000", "Profit ......... 4345"],  # figures, not pages
        ["Latte ..... 4", "Mocha ..... 5", "Tea ..... 3", "Water ..... 1"],
        ["Released ------ 2024-01-31", "Updated ------- 2024-02-28", "Checked ------- 2024-03-30"],
        ["Why .... did", "See .... mild", "Mix .... civil"],  # words spelt in roman numerals' letters
        ["Title", "=====", "", "Some text about the title.", "More text.", "-------------"],
        ['print("-" * 40)', 'line = "----------"', "rule = '==========' ", "x = 1"],
        ["| name | size |", "|------|------|", "| a    | 1    |"],
        ["INTRODUCTION . . . . . . . 394 POLLINATION . . . . . . . . 395 " * 10],
    ]:
        assert not contents_entries(lines), lines


def test_a_chunk_is_a_contents_list_by_its_own_lines_not_those_it_repeats_from_the_one_before():
    # the last chunk: entry 8 again, its own entry 9 and two lines of prose, which start the page
    entries = [f"{n}. Section {n} " + "." * 20 + f" {n * 3}" for n in range(1, 10)]
    text = "\n".join(entries) + "\n" + "\n".join(f"prose line {n} word word" for n in range(2))
    chunks = chunk_text(text, count_words, SETTINGS, structured=False)
    (last,) = [chunk for chunk in chunks if "prose line 0" in chunk.text]
    assert "8. Section 8" in last.text and "Section 1 " not in last.text, last.text
    assert not last.is_contents
    assert chunks[0].is_contents


def test_a_chunk_made_mostly_of_a_contents_lists_entries_is_one():
    entries = [f"{n}. Section {n} " + "." * 20 + f" {n * 3}" for n in range(1, 25)]
    text = "Some prose before the contents of this manual.\n\n" + "\n".join(entries) + "\n\n" + "prose " * 60
    chunks = chunk_text(text, count_words, SETTINGS, structured=False)
    listing = [chunk for chunk in chunks if "Section 12 " in chunk.text]
    assert listing and all(chunk.is_contents for chunk in listing)
    assert not any(chunk.is_contents for chunk in chunks if "Section" not in chunk.text)


def test_an_edit_in_one_section_keeps_the_other_sections_chunks():
    sections = [
        f"# S{n}\n\n" + "\n\n".join(f"para {n} {p} " + "word " * (5 + p % 7) for p in range(12))
        for n in range(4)
    ]
    before = chunk_text("\n\n".join(sections), count_words, SETTINGS)
    sections[1] = sections[1].replace("para 1 3", "para 1 3 with an edit", 1)
    after = chunk_text("\n\n".join(sections), count_words, SETTINGS)
    unchanged = lambda chunks, heading: [c.text for c in chunks if c.heading == heading]  # noqa: E731
    for heading in ("S0", "S2", "S3"):
        assert unchanged(before, heading) == unchanged(after, heading)
    assert unchanged(before, "S1") != unchanged(after, "S1")


def test_split_chunk_halves_by_lines_then_words():
    chunk = chunk_text("a b\nc d\ne f\ng h", count_words, SETTINGS)[0]
    halves = split_chunk(chunk)
    assert [h.text for h in halves] == ["a b\nc d", "e f\ng h"]
    assert [(h.start_line, h.end_line) for h in halves] == [(1, 2), (3, 4)]
    single = split_chunk(halves[0].__class__(1, 1, "", "one two three"))
    assert [h.text for h in single] == ["one", "two three"]


def test_chunking_a_paged_document_takes_time_linear_in_its_size():
    # one chunk per page: a chunker that looks over every page for each chunk is quadratic, and
    # eight times the pages then takes about 64 times as long instead of about 8
    def paged(pages: int) -> Document:
        lines = [f"cell{n} " + "word " * 30 for n in range(pages)]
        return Document(lines=lines, parts=[Part("cell", n, n, n) for n in range(1, pages + 1)])

    def seconds(pages: int) -> float:
        document = paged(pages)
        best = math.inf
        gc.disable()  # a collection walking the session's objects lands on either run at random
        try:
            for _ in range(3):
                started = time.perf_counter()
                chunks = chunk_document(document, count_words, ChunkSettings(max_tokens=40, overlap_tokens=0))
                best = min(best, time.perf_counter() - started)
        finally:
            gc.enable()
        assert len(chunks) == pages
        assert chunks[-1].locator == f"cell {pages}"
        return best

    # the smaller run long enough (tens of ms) that a loaded machine's pauses do not decide the ratio
    assert grows_linearly(seconds, 1000, 8000, 20)


def test_halves_of_a_refused_chunk_leave_its_markup_lines_out_of_what_the_model_reads():
    text = "# Guide\n\n```\nrun it\n```\n\nthen more text\n\n| a | b |\n|---|---|\n| 1 | 2 |\n"
    (chunk,) = chunk_text(text, count_words, ChunkSettings(max_tokens=200, overlap_tokens=0))
    halves = split_chunk(chunk)
    assert "\n".join(half.text for half in halves) == chunk.text
    read = [half.embed_text for half in halves]
    assert not any("```" in text or "|---|" in text for text in read)
    assert "run it" in read[0]
    assert "| 1 | 2 |" in read[1]


def test_titles_in_a_row_are_carried_together_into_the_text_after_them():
    text = "# A\n\n# B\n\n# C\n\n" + " ".join(["word"] * 17) + "\n\n" + " ".join(["more"] * 16)
    chunks = chunk_text(text, count_words, SETTINGS)
    assert all(any(line and not line.startswith("#") for line in chunk.text.split("\n")) for chunk in chunks)
    assert chunks[0].text.startswith("# A\n\n# B\n\n# C\n\nword")


def test_a_lead_in_sentence_shares_a_chunk_with_the_start_of_a_code_block_too_big_alone():
    lead = "Run these commands in order to set the project up on a new machine:"
    code = "\n".join(f"cmd{n} arg" for n in range(30))
    chunks = chunk_text(f"# Setup\n\n{lead}\n\n```\n{code}\n```\n", count_words, SETTINGS)
    assert lead in chunks[0].text
    assert "```\ncmd0 arg\ncmd1 arg" in chunks[0].text
    assert all(count_words([chunk.embed_text])[0] <= SETTINGS.max_tokens for chunk in chunks)


def test_a_short_section_after_a_long_one_shares_the_chunk_that_ends_it():
    long = "\n\n".join(" ".join(f"p{p}w{n}" for n in range(20)) for p in range(3))
    short = " ".join(f"s{n}" for n in range(12))
    chunks = chunk_text(f"# Doc\n\n## Long\n\n{long}\n\n## Short\n\n{short}\n", count_words, SETTINGS)
    assert len(chunks) == 3
    assert chunks[-1].text.startswith("p2w0")
    assert chunks[-1].text.endswith(short)
    assert chunks[-1].heading == "Doc > Long", "headed by where most of its text lies, not by their parent"


def test_the_tail_of_a_long_function_packed_with_the_next_is_headed_by_the_next():
    body = "\n".join(f"    total = total + step({n})" for n in range(41))
    short = "\n".join(f"    x = x + {n}" for n in range(3))
    source = f"def long_one(total):\n{body}\n    return total\n\n\ndef short_one(x):\n{short}\n    return x\n"
    chunks = chunk_document(parse_text("pkg/steps.py", source), count_words, SETTINGS)
    holding = next(chunk for chunk in chunks if "def short_one" in chunk.text)
    assert "step(40)" in holding.text, "the tail of long_one is packed before short_one"
    assert holding.heading == "pkg/steps.py > short_one"


def test_a_file_s_first_lines_before_its_class_do_not_head_the_chunk_the_class_fills():
    """Imports at a file's top are its preamble, the class after them holds the rest: the chunk
    holding both is headed by the class, where most of its text lies. Module constants between two
    functions are the file's own text, and a page's title and lead before its first subsection
    what the page says first, however the title is written: each keeps its heading."""
    methods = "\n\n".join(f"    def step{n}(self, x):\n        return x + {n}" for n in range(6))
    source = f"import os\nimport sys\n\n\nclass Runner:\n{methods}\n"
    chunks = chunk_document(parse_text("pkg/runner.py", source), count_words, SETTINGS)
    assert "import os" in chunks[0].text and "def step0" in chunks[0].text
    assert chunks[0].heading == "pkg/runner.py > Runner"
    body = "\n".join(f"    total = total + {n}" for n in range(12))
    middle = f"def first(total):\n{body}\n    return total\n\n\nLIMIT = 3\nNAMES = ('a', 'b')\n\n\n"
    middle += f"def second(total):\n{body}\n    return total\n"
    holding = [chunk for chunk in chunk_document(parse_text("m.py", middle), count_words, SETTINGS)]
    assert next(chunk for chunk in holding if "LIMIT = 3" in chunk.text).heading in ("m.py", "m.py > first")
    lead = " ".join(f"w{n}" for n in range(12))
    sub = " ".join(f"s{n}" for n in range(30))
    pages = {
        "a.md": f"# Testing {{ #testing }}\n\n{lead}\n\n## Using it\n\n{sub}\n",
        "b.adoc": f"= Features\n:description: {lead}\n\n{lead}\n\n== Readily available\n\n{sub}\n",
        "c.md": f"---\ntitle: Basic usage\ndescription: {lead}\n---\n\n{lead}\n\n## Defining\n\n{sub}\n",
    }
    for name, page in pages.items():
        first = chunk_document(parse_text(name, page), count_words, SETTINGS)[0]
        assert first.heading in ("Testing", "Features", "Basic usage"), (name, first.heading)
    page = "# Settings\n\n## Limits\n\nMaximum connections.\n\n## Timeouts\n\nKeep-alive timeout.\n"
    assert [chunk.heading for chunk in chunk_text(page, count_words, SETTINGS)] == ["Settings"]


@settings(max_examples=100, deadline=None)
@given(
    st.integers(1, 30),
    st.lists(st.integers(2, 4), min_size=25, max_size=60),
    st.integers(0, 6),
)
def test_no_chunk_of_a_code_block_too_big_alone_is_a_stub(lead_words, line_words, after_words):
    """The lines of a long code block go with the sentence before it and the one after it: none of
    its chunks, the first and the last included, holds less than a quarter of the limit."""
    lead = " ".join(f"lead{n}" for n in range(lead_words))
    code = "\n".join(" ".join(f"c{line}x{n}" for n in range(words)) for line, words in enumerate(line_words))
    after = " ".join(f"after{n}" for n in range(after_words))
    chunks = chunk_text(f"# Doc\n\n{lead}\n\n```\n{code}\n```\n\n{after}\n", count_words, SETTINGS)
    assert len(chunks) >= 2
    assert all(count_words([chunk.embed_text])[0] >= SETTINGS.max_tokens // 4 for chunk in chunks)


@settings(max_examples=100, deadline=None)
@given(st.integers(0, 30), st.lists(st.integers(1, 6), min_size=8, max_size=40), st.integers(0, 40))
def test_no_chunk_starts_with_a_tables_delimiter_row(lead_words, row_words, after_words):
    """A delimiter row marks the header above it: a chunk that began with it (cut there, or carried
    over as overlap) would hold rows that no longer read as a table."""
    lead = " ".join(f"lead{n}" for n in range(lead_words))
    rows = "\n".join(
        f"| {' '.join(f'r{row}w{n}' for n in range(words))} | x |" for row, words in enumerate(row_words)
    )
    after = " ".join(f"after{n}" for n in range(after_words))
    text = f"# Doc\n\n{lead}\n\n| name | value |\n|---|---|\n{rows}\n\n{after}\n"
    for chunk in chunk_text(text, count_words, SETTINGS):
        assert not chunk.text.lstrip().startswith("|---"), chunk.text


@pytest.mark.parametrize(
    ("path", "source"),
    [
        ("pkg/__init__.py", '"""Package."""\n'),
        ("src/lib.rs", "// src/lib.rs\nmod a;\n"),
        ("a.c", '#include "b.h"\n'),
    ],
)
def test_a_source_file_of_one_short_line_under_its_path_heading_is_stored(path, source):
    """A source file is headed by its path, which no title of its text writes: a line of as few words
    is its code, and a C ``#include`` no text another file stands in for."""
    chunks = chunk_document(read_document(path, source.encode()), count_words, SETTINGS)
    assert [(chunk.heading, chunk.text) for chunk in chunks] == [(path, source.rstrip("\n"))]


def test_a_page_of_one_title_over_the_files_it_includes_stores_nothing_and_one_of_several_titles_is_kept():
    single = '# Installing\n\n--8<-- "snippets/install.md"\n'
    assert chunk_document(parse_text("docs/install.md", single), count_words, SETTINGS) == []
    faq = (
        '# FAQ\n\n## How do I install it?\n\n--8<-- "snippets/install.md"\n\n'
        '## How do I upgrade it?\n\n--8<-- "snippets/upgrade.md"\n'
    )
    chunks = chunk_document(parse_text("docs/faq.md", faq), count_words, SETTINGS)
    assert "How do I upgrade it?" in "\n".join(chunk.text for chunk in chunks)


@pytest.mark.parametrize("title", ["# Title {n}", "* Title {n}", "Title {n}\n========"])
def test_chunking_thousands_of_titles_in_a_row_takes_time_linear_in_their_number(title):
    """Each title alone is carried into the text under it, with every title before it in the row:
    joined one title at a time, a file of titles alone (a generated table of contents) is quadratic."""
    extension = {"#": "md", "*": "org"}.get(title[0], "rst")

    def seconds(titles: int) -> float:
        text = "\n\n".join(title.format(n=n) for n in range(titles)) + "\n\nThe text under them.\n"
        document = read_document(f"titles.{extension}", text.encode("utf-8"))
        assert len(document.headings) == titles
        best = math.inf
        gc.disable()  # a collection walking the session's objects lands on either run at random
        try:
            for _ in range(3):
                started = time.perf_counter()
                chunks = chunk_document(document, count_words, ChunkSettings(max_tokens=64, overlap_tokens=8))
                best = min(best, time.perf_counter() - started)
        finally:
            gc.enable()
        assert chunks[-1].text.endswith("The text under them.")
        return best

    assert grows_linearly(seconds, 1000, 8000, 20)  # quadratic would be 64
