"""Org files read as Org's syntax declares them: headlines as headings, blocks as code or text,
keywords, drawers and comments as markup, links and emphasis as their words."""

from __future__ import annotations

import pytest
from helpers import HashBackend, fastest_seconds, grows_linearly

from indexer import Index
from indexer.formats import read_document
from indexer.formats.org import inline_text, read_org
from indexer.snippets import readable_text

NOTES = """#+TITLE: Zutty /user/ guide
#+STARTUP: overview
#+TODO: TODO WAITING | DONE
* Installation
:PROPERTIES:
:CUSTOM_ID: install
:END:
Build it with [[https://waf.io][waf]] and =python3=.
** WAITING [#A] Configure the source                             :build:setup:
SCHEDULED: <2024-01-01 Mon>
#+BEGIN_SRC sh
./waf configure
,* a headline escaped inside code
#+END_SRC
: $ ./waf build
# a comment
** Options
- =-fontsize= :: The font's size in pixels.
- ~--login~, ~-l~ :: Start a login shell.
- plain words :: Not names.
- {{{kbd(S-TAB)}}} (~org-global-cycle~), {{{kbd(C-u TAB)}}} :: Cycle the whole buffer.
- =TITLE=, =BEGIN= ... =END= :: Keywords.
| key | value |
|-----+-------|
| a   | b     |
#+begin_quote
*Bold* words in a quote are text.
#+end_quote
"""


def test_headlines_are_headings_without_keywords_priorities_or_tags():
    document = read_org(NOTES)
    assert [(heading.level, heading.title) for heading in document.headings] == [
        (0, "Zutty user guide"),  # the title, read as its words, above the headlines
        (1, "Installation"),
        (2, "Configure the source"),  # a keyword the file declares, a priority and tags left out
        (2, "Options"),
    ]
    assert len(document.lines) == len(NOTES.rstrip("\n").split("\n"))


def test_blocks_fixed_width_lines_and_markup_are_what_org_says():
    document = read_org(NOTES)
    lines = NOTES.split("\n")

    def number(text: str) -> int:
        return lines.index(text) + 1

    assert document.literal == [(number("./waf configure"), number(",* a headline escaped inside code")),
                                (number(": $ ./waf build"), number(": $ ./waf build"))]  # fmt: skip
    markup = ["#+STARTUP: overview", ":PROPERTIES:", ":CUSTOM_ID: install", ":END:", "# a comment",
              "SCHEDULED: <2024-01-01 Mon>", "#+BEGIN_SRC sh", "#+END_SRC", "|-----+-------|"]  # fmt: skip
    assert [line for line in markup if number(line) not in document.markup] == []
    assert number("*Bold* words in a quote are text.") not in document.markup
    assert document.read_as[number("Build it with [[https://waf.io][waf]] and =python3=.")] == (
        "Build it with waf and python3."
    )


def test_a_headline_ends_a_block_or_drawer_left_open_and_blocks_nest():
    unclosed = read_org("#+begin_src sh\nls\n* Head\n:PROPERTIES:\n:ID: x\n** Next\ntext\n")
    assert [heading.title for heading in unclosed.headings] == ["Head", "Next"]
    assert unclosed.literal == [(2, 2)] and 7 not in unclosed.markup
    stray = read_org("* Head\n:smile:\nA paragraph after a stray drawer's name.\n")
    assert stray.markup == frozenset()  # no :END: closes it: a paragraph's line, as Org reads it
    nested = read_org("#+begin_note\nSee *this*:\n#+begin_src elisp\n(setq a *x*)\n#+end_src\n#+end_note\n")
    assert nested.literal == [(4, 4)] and {1, 3, 5, 6} <= nested.markup
    assert nested.read_as == {2: "See this:"}  # a note's text read as text, its code as written


def test_a_chunk_that_starts_inside_a_block_shows_no_delimiter():
    assert readable_text("notes.org", "x = 1\n#+end_src\nSome *bold* text") == "x = 1\nSome bold text"


def test_a_description_list_s_term_in_code_declares_its_names():
    document = read_org(NOTES)
    assert sorted(document.definitions.values()) == [
        ("--login", "-l"),
        ("-fontsize",),
        ("TITLE", "BEGIN", "END"),
        ("org-global-cycle",),  # the command the keys run
    ]
    lines = NOTES.split("\n")
    keys = lines.index(
        "- {{{kbd(S-TAB)}}} (~org-global-cycle~), {{{kbd(C-u TAB)}}} :: Cycle the whole buffer."
    )
    assert document.read_as[keys + 1] == "- S-TAB (org-global-cycle), C-u TAB :: Cycle the whole buffer."


def test_inline_text_reads_links_and_emphasis_and_leaves_arithmetic_alone():
    assert (
        inline_text("see [[file:a.org]] and ~org-mode~, a*b*c, 2*3=6")
        == "see file:a.org and org-mode, a*b*c, 2*3=6"
    )
    assert readable_text("notes.org", "#+STARTUP: overview\nUse =ls= here.") == "Use ls here."


@pytest.mark.parametrize(
    "hostile",
    [lambda n: "*a " * n, lambda n: "=" + "a" * n, lambda n: "[[" * n, lambda n: "- " + "a " * n + "::"],
)
@pytest.mark.slow
def test_reading_org_takes_time_linear_in_its_size(hostile):
    def seconds(size: int) -> float:
        text = "* Title\n" + hostile(size) + "\n"
        return fastest_seconds(lambda: read_org(text), repeats=3)

    assert grows_linearly(seconds, 5_000, 40_000, 24)  # quadratic would be 64


@pytest.mark.heavy
def test_an_org_folder_is_searched_by_its_headlines(tmp_path):
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "guide.org").write_text(
        NOTES
        + "\n* Fonts\nPick a monospace font with every glyph.\n"
        + "Sizes and faces are set apart.\n" * 8
    )
    with Index.open(tmp_path / "index.db", backend=HashBackend(max_tokens=48)) as index:
        index.build(tmp_path / "docs", warn=lambda message: None)
        hits = index.search("monospace glyph", k=1, mode="keyword", min_score=0)
        named = index.search("--login", k=1, mode="keyword", min_score=0)
    assert hits[0].heading == "Zutty user guide > Fonts"
    assert "Start a login shell." in named[0].text
    assert read_document("guide.org", NOTES.encode()).headings == read_org(NOTES).headings
