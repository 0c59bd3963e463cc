"""Snippets: the lines of a hit that hold the question's words, without markup, in linear time."""

from __future__ import annotations

import time

import pytest

from indexer.search.hit import Hit
from indexer.snippets import ShownHit, is_markup, readable_text, snippet, snippet_lines

GUIDE = """# Bicycles

<details markdown="1">
<summary>Contents</summary>
Frames, wheels and brakes.
</details>

Tyres wear out; check the tread every month.

A puncture is found by pumping the tube and listening for the hiss.
Mark the hole, then roughen the rubber &amp; glue the patch on.

Chains need oil.
"""


def test_the_lines_that_hold_the_question_s_words_are_shown_in_order_with_gaps_marked():
    lines = snippet_lines(GUIDE, "how to patch a punctured tube")
    assert lines == [
        "… A puncture is found by pumping the tube and listening for the hiss.",
        "Mark the hole, then roughen the rubber & glue the patch on. …",
    ]


def test_markup_never_shows():
    for question in ("details summary", "contents", "bicycles", "nothing matches this zzz"):
        shown = snippet(GUIDE, question)
        assert "<" not in shown and "&amp;" not in shown and "#" not in shown, shown


def test_a_hit_found_by_meaning_alone_shows_its_first_lines():
    assert snippet_lines(GUIDE, "velocipede maintenance") == [
        "Bicycles",
        "Contents",
        "Frames, wheels and brakes. …",
    ]


def test_the_words_are_the_keyword_search_s_own():
    text = "the the the the\nchains need oil\nwhat is it"
    assert snippet_lines(text, "what is the chain", max_lines=1) == ["… chains need oil …"]
    assert snippet_lines("brake pads\nbrake cable\npads only", "brake -cable", max_lines=1) == [
        "brake pads …"
    ]
    assert snippet_lines("one\nconfiguration here\nthree", "config*", max_lines=1) == [
        "… configuration here …"
    ]
    assert snippet_lines("one\nthe exact phrase\nthree", '"exact phrase"', max_lines=1) == [
        "… the exact phrase …"
    ]


def test_a_long_line_is_cut_around_its_first_match():
    line = "filler " * 200 + "puncture here " + "filler " * 200
    (shown,) = snippet_lines(line, "puncture")
    assert shown.startswith("… ") and shown.endswith(" …")
    assert "puncture here" in shown and len(shown) < 260


@pytest.mark.heavy
def test_choosing_lines_is_linear_in_the_text_s_size_whatever_the_text():
    hostile = [
        "<a " * 30_000 + "x" * 100_000,
        "[[" * 50_000,
        "<" * 100_000,
        "a b\n" * 25_000,
        "```" + " " * 100_000 + "x",
        "<!--" + "-" * 100_000,
        "&#" * 50_000,
    ]
    for text in hostile:
        small = _seconds(text, "x* word bar")
        large = _seconds(text * 10, "x* word bar")
        assert large < 30 * max(small, 0.005), (text[:10], small, large)


def _seconds(text: str, question: str, turns: int = 3) -> float:
    """The least of a few runs: on a shared machine one run can stall (another process, a
    collection of the megabyte's lines), which says nothing of the work's growth."""
    times = []
    for _ in range(turns):
        started = time.perf_counter()
        snippet(text, question)
        times.append(time.perf_counter() - started)
    return min(times)


def test_a_shown_hit_is_the_hit_with_its_snippet():
    hit = Hit("guide.md", 1, 12, 0.9, "Bicycles", GUIDE, "/root", "hybrid")
    shown = ShownHit.of(hit, "puncture")
    assert shown.citation == hit.citation
    assert shown.to_dict() == {**hit.to_dict(), "snippet": shown.snippet}
    assert "A puncture is found" in shown.snippet


def test_code_keeps_its_angle_brackets_and_hashes():
    code = "#include <vector>\nstd::vector<int> counts;\n# a comment\nreturn counts;"
    assert snippet_lines(code, "vector counts", markup=False) == [
        "#include <vector>",
        "std::vector<int> counts;",
        "… return counts;",
    ]
    hit = Hit("src/main.cpp", 1, 4, 0.5, "", code, "/root", "keyword")
    assert "std::vector<int> counts;" in ShownHit.of(hit, "vector").snippet
    assert is_markup("docs/guide.md") and is_markup("page.HTML") and not is_markup("src/main.rs")


MANUAL = """= Generate Manual Pages from AsciiDoc
:navtitle: Generate Manual Pages
:url-man: https://man7.org/linux/man-pages/

This page shows how to use link:https://asciidoctor.org[the Asciidoctor converter] to make man pages.

[source,console]
----
$ asciidoctor -b manpage README.adoc
:doctype: manpage
----

== Repurpose a man page
"""


def test_an_asciidoc_hit_shows_its_lines_as_its_reader_reads_them():
    """A title without its marks, a link macro as its text, attribute entries and delimiters left
    out, as the build's AsciiDoc reader reads them; a listing's lines as written."""
    hit = Hit(
        "docs/manpage.adoc", 1, 14, 0.9, "Generate Manual Pages from AsciiDoc", MANUAL, "/root", "hybrid"
    )
    shown = ShownHit.of(hit, "generate man pages with the converter").snippet
    assert shown.splitlines()[0] == "Generate Manual Pages from AsciiDoc"
    assert "the Asciidoctor converter to make man pages" in shown
    for markup in ("= ", ":navtitle:", "link:", "[source", "----", "https://"):
        assert markup not in shown, markup
    listing = ShownHit.of(hit, "doctype manpage README").snippet
    assert "$ asciidoctor -b manpage README.adoc" in listing and ":doctype: manpage" in listing
    assert ShownHit.of(hit, "repurpose").snippet.endswith("Repurpose a man page")
    assert readable_text("notes/plain.md", MANUAL) == MANUAL  # other formats' text as it is


def test_a_restructuredtext_hit_shows_its_titles_without_their_adornment():
    text = "Installing\n==========\n\nRun the installer.\n\nUpgrading\n---------\n\nRun it again.\n"
    hit = Hit("docs/install.rst", 1, 9, 0.9, "Installing", text, "/root", "hybrid")
    shown = ShownHit.of(hit, "upgrading").snippet
    assert "Upgrading" in shown and "---" not in shown and "===" not in shown


def test_a_reader_failing_on_a_chunk_shows_it_as_written(monkeypatch):
    """The reader read the whole file at the build; should it fail on a chunk, the snippet shows the
    chunk's lines as written rather than failing the search."""
    import indexer.formats

    def failing(path: str, text: str) -> None:
        raise ValueError("a reader's bug")

    monkeypatch.setattr(indexer.formats, "parse_text", failing)
    hit = Hit("docs/manpage.adoc", 1, 14, 0.9, "", MANUAL, "/root", "hybrid")
    assert readable_text(hit.path, MANUAL) == MANUAL
    assert ":navtitle: Generate Manual Pages" in ShownHit.of(hit, "navtitle").snippet


@pytest.mark.parametrize("path", ["docs/Guide.ADOC", "a.b/readme", "notes.md", "src/main.rs", "x.tar.gz", ""])
def test_the_snippets_read_extensions_as_the_formats_do(path):
    from indexer.formats import extension_of
    from indexer.snippets import _extension

    assert _extension(path) == extension_of(path)
