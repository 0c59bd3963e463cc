"""Snippets: the lines of a hit that hold the question's words, without markup, in linear time."""

from __future__ import annotations

import gc
import time
from pathlib import Path

import pytest
from conftest import built_before, undo_migration, write
from helpers import HashBackend

from indexer import Index
from indexer.chunking import split_chunk
from indexer.records import Chunk, code_lead
from indexer.search.hit import Hit
from indexer.snippets import ShownHit, hit_snippet_lines, readable_text, snippet_lines

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


def _shown(path: str, text: str, question: str) -> list[str]:
    """The snippet lines every front end shows of a hit holding ``text`` of the file at ``path``."""
    return hit_snippet_lines(Hit(path, 1, text.count("\n") + 1, 0.9, "", text, "/root", "hybrid"), question)


def test_the_lines_that_hold_the_question_s_words_are_shown_in_order_with_gaps_marked():
    lines = _shown("guide.md", GUIDE, "how to patch a punctured tube")
    assert lines == [
        "… A puncture is found by pumping the tube and listening for the hiss.",
        "Mark the hole, then roughen the rubber & glue the patch on. …",
    ]


def test_markup_never_shows():
    for question in ("details summary", "contents", "bicycles", "nothing matches this zzz"):
        shown = "\n".join(_shown("guide.md", GUIDE, question))
        assert "<" not in shown and "&amp;" not in shown and "#" not in shown, shown


def test_a_hit_found_by_meaning_alone_shows_its_first_lines():
    assert _shown("guide.md", GUIDE, "velocipede maintenance") == [
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


#: Texts that would make a pattern that backtracks, or a scan to the end for each mark, take time
#: growing faster than their size: unclosed tags, comments, brackets, long lines and many lines...
HOSTILE = [
    "<a " * 30_000 + "x" * 100_000,
    "[[" * 50_000,
    "<" * 100_000,
    "a b\n" * 25_000,
    "```" + " " * 100_000 + "x",
    "<!--" + "-" * 100_000,
    "&#" * 50_000,
]
#: ...and each markup format's inline marks, never closed or closed at once.
HOSTILE_MARKS = [
    "*" * 100_000,
    "`" * 100_000,
    "<<" * 50_000,
    "[" * 100_000,
    ":role:" * 20_000,
    ":func:`" * 15_000,
    "*a " * 33_000,
    "_a " * 33_000,
    "#a " * 33_000,
    "`a " * 33_000,
    "**a" * 33_000,
    "`+" * 50_000,
    "[x](" * 25_000,
    "![" * 50_000,
    "{a}x[" * 20_000,
    "`a <" * 25_000,
    "*a\n" * 33_000,
    "`a\n" * 33_000,
    "[a\n" * 33_000,
    "# a { #" * 15_000,
    "{a}`" * 25_000,
    "[`a`" * 25_000,
    "*`a`" * 25_000,
    "**`" * 33_000,
]
#: ...and tables' and directives' marks: cells never closed, specifiers, borders as wide as the text,
#: directives and options one after another or nested, each one level deeper.
HOSTILE_BLOCKS = [
    "|" * 100_000,
    "a|" * 50_000,
    "2+|" * 33_000,
    "|===\n" + "|a 2+|b\\|" * 10_000,
    "|===\n" + "1111111111" * 10_000 + "|",
    "|===\n" + " " * 100_000 + "|",
    ",===\n" + '"a,' * 33_000,
    "| a | b |\n|---|---|\n" + "| x " * 25_000,
    "+" + "-+" * 50_000 + "\n" + "|\n" * 50_000,
    "+" + "-+" * 50_000 + "\n" + "| " * 50_000,
    "== " * 33_000 + "\nx\n" * 20_000,
    "=  =\n" + "a " * 50_000,
    ".. note::\n" * 10_000,
    ".. list-table::\n" + "".join(" " * depth + ".. list-table::\n" for depth in range(1, 400)),
    ".. list-table::\n" + "   * - a\n" * 10_000,
    ".. code-block::\n" + "   :a: b\n" * 10_000,
    ".. " * 33_000 + "::",
    "/// " * 25_000 + "| x",
    '!!! a "' * 15_000,
    "```{note}\n" + ":a: b\n" * 10_000,
    "```{eval-rst}\n" + ".. note::\n   :a: b\n" * 5_000,
    ":::{note}\n" * 10_000,
    "::: a\n" + " " * 100_000 + "x",
    "::: a\n" * 10_000,
]


@pytest.mark.heavy
@pytest.mark.parametrize("path", ["notes.txt", "guide.md", "guide.adoc", "guide.rst"])
def test_choosing_lines_is_linear_in_the_text_s_size_whatever_the_text(path):
    """Reading a hit's markup (the format's reader and its inline markup) and choosing its lines."""
    for whole in HOSTILE + (HOSTILE_MARKS + HOSTILE_BLOCKS if path != "notes.txt" else []):
        text = whole[: len(whole) // 10]  # a tenth of each, and ten times that: growth shows as well
        small = _seconds(path, text, "x* word bar")
        while small < MEASURABLE and len(text) < 64 * len(whole):  # too quick to tell growth: more
            text = whole[: 2 * len(text)] if len(text) < len(whole) else text + text
            small = _seconds(path, text, "x* word bar")
        bound = 30 * max(small, MEASURABLE)
        large = _seconds(path, text * 10, "x* word bar", under=bound)
        assert large < bound, (path, whole[:10], small, large)


#: The least time a run of the smaller text must take for ten times its size to show its growth
#: (a quadratic run of it would take a hundred times as long, past the bound of thirty).
MEASURABLE = 0.005


def _seconds(path: str, text: str, question: str, under: float = 0.0, turns: int = 3) -> float:
    """The least of ``turns`` runs over ``text`` (fewer once one takes less than ``under``: the
    larger text's runs are most of the test's time, and one run under the bound settles it), each
    timed by the CPU time of this thread with the garbage collector off: what the work itself
    costs. Wall time on a shared machine is every process's (in a whole suite's run, other work
    made ten times the lines take 42 times as long), and a collection during a run costs what every
    object of the test session costs; neither says anything of the work's growth. Nor is a
    collection forced between runs: it too walks the whole session's objects, and took most of this
    test's time in a whole suite's run."""
    least = float("inf")
    gc.disable()
    try:
        for _ in range(turns):
            started = time.thread_time()
            _shown(path, text, question)
            least = min(least, time.thread_time() - started)
            if least < under:
                break
    finally:
        gc.enable()
    return least


def test_a_shown_hit_is_the_hit_with_its_snippet():
    hit = Hit("guide.md", 1, 12, 0.9, "Bicycles", GUIDE, "/root", "hybrid")
    shown = ShownHit.of(hit, "puncture")
    assert shown.citation == hit.citation
    assert shown.to_dict() == {**hit.to_dict(), "snippet": shown.snippet}
    assert "A puncture is found" in shown.snippet


def test_code_keeps_its_angle_brackets_and_hashes():
    code = "#include <vector>\nstd::vector<int> counts;\n# a comment\nreturn counts;"
    assert snippet_lines(code, "vector counts") == [
        "#include <vector>",
        "std::vector<int> counts;",
        "… return counts;",
    ]
    hit = Hit("src/main.cpp", 1, 4, 0.5, "", code, "/root", "keyword")
    assert "std::vector<int> counts;" in ShownHit.of(hit, "vector").snippet
    assert readable_text("src/main.cpp", code) == code
    python = "def send(*args, **kwargs):\n    return a_b_c[x](y) ** 2  # *not* [a](link)\n"
    assert readable_text("src/send.py", python) == python


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
    assert readable_text("notes/plain.txt", MANUAL) == MANUAL  # other formats' text as it is


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


MARKDOWN = """## Sending *files* { #sending-files }

Read [the upload guide](https://example.org/upload "Uploads") or the [API reference][api] of
{func}`~httpx.post`, see ![a diagram](flow.png) and <https://example.org/help>; use [`files=`](#files)
with **care**.

```python
def send(*args, **kwargs):  # [x](y) is code
    return a_b_c[x](y) ** 2
```

[api]: https://example.org/api
"""


def test_a_markdown_hit_shows_links_images_and_emphasis_as_their_words_and_code_as_written():
    assert _shown("docs/upload.md", MARKDOWN, "sending files upload guide reference diagram") == [
        "Sending files",
        "Read the upload guide or the API reference of",
        "`post`, see a diagram and https://example.org/help; use `files=` …",
    ]
    assert _shown("docs/upload.md", MARKDOWN, "send args kwargs code return")[1:] == [
        "… def send(*args, **kwargs): # [x](y) is code",
        "return a_b_c[x](y) ** 2",
    ]


ASCIIDOC = """= Convert a *document*

Run the **man**ual converter with `+{backend}+`, press kbd:[Ctrl+T] or btn:[Save], pick menu:File[Export].
The _safe_ mode is [.term]#secure# by default; see <<safe-modes,the safe modes>>, <<api>> and
xref:cli:options.adoc#trace[the trace option]. [[intro]]It is "`fast`" and it's the user`'s choice.
Get the gem from {url-rubygems}/asciidoctor[RubyGems^].

[source,python]
----
def convert(*args, **kwargs):
    return a_b_c *x* _y_
----
"""


def test_an_asciidoc_hit_shows_its_inline_markup_as_the_words_it_shows_and_a_listing_as_written():
    assert _shown("docs/convert.adoc", ASCIIDOC, "convert manual converter safe mode gem") == [
        "Convert a document",
        "Run the manual converter with `{backend}`, press Ctrl+T or Save, pick File > Export.",
        "The safe mode is secure by default; see the safe modes, api and …",
    ]
    assert _shown("docs/convert.adoc", ASCIIDOC, "safe mode secure trace fast gem choice")[1:] == [
        "the trace option. It is \u201cfast\u201d and it's the user\u2019s choice.",
        "Get the gem from RubyGems. …",
    ]
    assert _shown("docs/convert.adoc", ASCIIDOC, "def convert return args kwargs")[1:] == [
        "… def convert(*args, **kwargs):",
        "return a_b_c *x* _y_",
    ]


RESTRUCTURED = """Routing
=======

See `the WSGI spec <https://peps.python.org/pep-3333/>`_, `Flask`_ and Python_ for *context*;
a rule is **matched** by :class:`~werkzeug.routing.Map` (:ref:`converters <url-converters>`,
:doc:`deployment/index`, :pep:`8`), with ``strict_slashes=False`` or `defaults`.

Use it like this::

    def view(*args, **kwargs):
        return a_b_c `x`_ :func:`y`

.. _Flask: https://flask.palletsprojects.com/
"""


def test_a_restructuredtext_hit_shows_links_roles_and_emphasis_as_their_words_and_code_as_written():
    assert _shown("docs/routing.rst", RESTRUCTURED, "routing rule matched spec context converters") == [
        "Routing",
        "See the WSGI spec, Flask and Python for context;",
        "a rule is matched by `Map` (converters, …",
    ]
    assert _shown("docs/routing.rst", RESTRUCTURED, "rule matched converters deployment strict slashes") == [
        "… a rule is matched by `Map` (converters,",
        "deployment/index, PEP 8), with `strict_slashes=False` or `defaults`. …",
    ]
    assert _shown("docs/routing.rst", RESTRUCTURED, "def view return args kwargs") == [
        "… def view(*args, **kwargs):",
        "return a_b_c `x`_ :func:`y`",
    ]


@pytest.mark.parametrize(
    ("path", "text", "shown"),
    [
        (
            "docs/debug.md",
            "It runs code. **Never use it\non production.** See the [security\nnotes](security.md).\n",
            "It runs code. Never use it\non production. See the security\nnotes.",
        ),
        (
            "docs/debug.rst",
            "It runs code. **Never use it\non production.** See the `security\nnotes <security.html>`_.\n",
            "It runs code. Never use it\non production. See the security notes\n.",
        ),
        (
            "docs/debug.adoc",
            "It runs code. *Never use it\non production.* See the _security\nnotes_.\n",
            "It runs code. Never use it\non production. See the security\nnotes.",
        ),
    ],
)
def test_markup_that_ends_on_a_later_line_of_its_paragraph_shows_as_its_words_line_for_line(
    path, text, shown
):
    assert readable_text(path, text) == shown


@pytest.mark.parametrize(
    ("path", "text"),
    [
        ("docs/options.md", "Set **`default_map` entries** for *SOURCE_DATE_EPOCH*, not `**kwargs`.\n"),
        ("docs/options.adoc", "Set *`default_map` entries* for *SOURCE_DATE_EPOCH*, not `+**kwargs+`.\n"),
    ],
)
def test_emphasis_may_hold_code_and_the_other_marks(path, text):
    assert readable_text(path, text) == "Set `default_map` entries for SOURCE_DATE_EPOCH, not `**kwargs`."


def test_the_snippets_read_as_shown_the_formats_whose_inline_markup_their_readers_read():
    """The snippets name these formats themselves, so that a hit of another format never loads the
    readers: the two lists must agree."""
    from indexer.formats import INLINE_READERS, READ_AS_SHOWN
    from indexer.snippets import SHOWN_EXTENSIONS

    assert SHOWN_EXTENSIONS == set(INLINE_READERS) | READ_AS_SHOWN


@pytest.mark.parametrize(
    ("path", "text", "shown"),
    [
        (
            "docs/options.md",
            "Options:\n\n| Option | Meaning |\n|---|---|\n| `--check` | Check *only* |\n| `a\\|b` | |\n",
            "Options:\n\nOption | Meaning\n`--check` | Check only\n`a|b`",
        ),
        (
            "docs/options.adoc",
            "Options:\n\n|===\n|Option |Meaning\n\n|`--check`\n|Check *only*\n\na|A _cell_ .2+^.^h|next\n"
            "2+|escaped \\| pipe\n|===\n",
            "Options:\n\nOption | Meaning\n\n`--check`\nCheck only\n\nA cell | next\nescaped | pipe",
        ),
        (
            "docs/options.rst",
            "Options:\n\n===========  ============\nOption       Meaning\n===========  ============\n"
            "``--check``  Check *only*\n===========  ============\n",
            "Options:\n\nOption | Meaning\n`--check` | Check only",
        ),
        (
            "docs/options.rst",
            "Options:\n\n+-------------+--------------+\n| Option      | Meaning      |\n"
            "+=============+==============+\n| ``--check`` | Check *only* |\n"
            "+-------------+--------------+\n",
            "Options:\n\nOption | Meaning\n`--check` | Check only",
        ),
        (
            "docs/options.rst",
            "+---------------------------+-----+\n| Installs from :term:`Eggs | No  |\n"
            "| <Egg>`                    |     |\n+---------------------------+-----+\n",
            "Installs from Eggs | No",
        ),
        (
            "docs/options.rst",
            ".. list-table:: Options\n   :header-rows: 1\n   :widths: 20 80\n\n"
            "   * - Option\n     - Meaning\n   * - ``--check``\n     - Check *only*\n",
            "Options\n\nOption\nMeaning\n`--check`\nCheck only",
        ),
        (
            "docs/options.rst",
            '.. csv-table::\n   :header: "Option", "Meaning"\n\n   ``--check``, "Check *only*, fast"\n',
            "\n`--check` | Check only, fast",
        ),
    ],
)
def test_a_table_row_shows_its_cells_text_set_apart_alike_in_every_format(path, text, shown):
    """The marks that set a table's cells apart (pipes, a cell's specifier, a column's border, a
    list-table's ``* -``) never show: a row shows its cells' text, read as the page reads it, with
    one separator between them, whatever the format; a border or an option shows nothing."""
    assert readable_text(path, text) == shown


@pytest.mark.parametrize(
    ("path", "code", "lead_in"),
    [
        ("docs/a.md", "| Option | Meaning |\n|---|---|\n| x | y |", ("```\n", "\n```\n")),
        ("docs/a.rst", "+----+----+\n| x  | y  |\n+----+----+\n.. note:: no", ("Example::\n\n", "\n")),
        ("docs/a.rst", "=====  =====\nx      y\n=====  =====", ("Example::\n\n", "\n")),
        ("docs/a.adoc", "|===\n|x |y\n2+|z\n|===", ("[source]\n----\n", "\n----\n")),
    ],
)
def test_a_table_in_code_keeps_its_characters_and_out_of_it_shows_its_cells(path, code, lead_in):
    indent = "    " if path.endswith(".rst") else ""
    block = lead_in[0] + "\n".join(indent + line for line in code.splitlines()) + lead_in[1]
    assert [line for line in readable_text(path, block).splitlines() if line.strip()][
        -len(code.splitlines()) :
    ] == [indent + line for line in code.splitlines()]
    assert "x | y" in readable_text(path, code).splitlines()


RST_DIRECTIVES = """Routing
=======

.. note::

   Rules are *matched* in order.

.. warning:: Never trust the *host*, see :doc:`the security
   notes <security>`.

.. versionadded:: 2.0

.. versionchanged:: 2.1
   The default changed.

.. toctree::
   :maxdepth: 2

   quickstart

.. image:: diagram.png
   :alt: A diagram of the routing

.. rubric:: Footnotes

.. autoclass:: werkzeug.routing.Map
   :members:

.. code-block:: python
   :caption: routing.py
   :linenos:

   rules = [Rule("/", endpoint="index")]
"""


def test_a_directive_shows_what_its_page_shows_of_it_and_its_content():
    """An admonition's line shows its title, a version note its sentence, a rubric its title, an
    object description its name (as code); a code block's, a table of contents' and an image's lines and a
    directive's options show nothing (a caption its text); the content is kept, code as written."""
    shown = [line for line in readable_text("docs/routing.rst", RST_DIRECTIVES).splitlines() if line.strip()]
    assert [line.strip() for line in shown] == [
        "Routing",
        "Note",
        "Rules are matched in order.",
        "Warning: Never trust the host, see the security notes",
        ".",
        "Added in version 2.0.",
        "Changed in version 2.1.",
        "The default changed.",
        "quickstart",
        "Footnotes",
        "`werkzeug.routing.Map`",
        "routing.py",
        'rules = [Rule("/", endpoint="index")]',
    ]
    assert '   rules = [Rule("/", endpoint="index")]' in shown  # code keeps its characters
    assert _shown("docs/routing.rst", RST_DIRECTIVES, "host matched order") == [
        "… Rules are matched in order.",
        "Warning: Never trust the host, see the security notes …",
    ]


@pytest.mark.parametrize(
    ("path", "chunk", "shown"),
    [
        (
            "docs/options.md",
            "| `--check` | Check *only* |\n| `--fix` | Fix |\n\nAfter | it.\n",
            "After | it.",
        ),
        (
            "docs/options.adoc",
            "more of a cell\n\n|`--check`\n2+|Check *only*\n|===\n\nAfter |it.\n",
            "After |it.",
        ),
        ("docs/options.rst", "``--check``  Check *only*\n===========  ==========\n\nAfter.\n", "After."),
        (
            "docs/options.rst",
            "| ``--check`` | Check *only* |\n+-------------+------------+\n\nAfter.\n",
            "After.",
        ),
        ("docs/options.rst", "     - Meaning\n   * - ``--check``\n     - Check *only*\n\nAfter.\n", "After."),
        (
            "docs/options.rst",
            "   :maxdepth: 2\n   :caption: Check *only*\n\n   ``--check``\n\nAfter.\n",
            "After.",
        ),
    ],
)
def test_a_chunk_that_starts_inside_a_table_or_a_directive_shows_it_as_the_page_does(path, chunk, shown):
    """A chunk starts where the one before it ended, the table's head or the directive's line left in
    that one: its rows still show as cells, its options as nothing, and the text after it as text."""
    lines = [line.strip() for line in readable_text(path, chunk).splitlines() if line.strip()]
    assert any(line.startswith("`--check`") for line in lines) and lines[-1] == shown, lines
    assert not any(line.startswith(("|", "*", ":", "=", "+", "-")) for line in lines), lines
    assert any("Check only" in line for line in lines), lines


def test_a_chunk_that_starts_on_options_hides_them_but_shows_a_function_s_info_fields():
    """Options of a directive whose line is in the chunk before show nothing; the fields of
    Sphinx's info field lists (``:returns:``) are what the page shows of a function."""
    options = "   :alt: a screenshot\n   :align: center\n\nAfter.\n"
    assert readable_text("docs/debug.rst", options) == "\nAfter."
    fields = "   :returns: the rule's *endpoint*.\n   :rtype: str\n\nAfter.\n"
    shown = "   :returns: the rule's endpoint.\n   :rtype: str\n\nAfter."
    assert readable_text("docs/routing.rst", fields) == shown


def test_a_line_block_shows_its_lines_without_their_pipes():
    text = "An address:\n\n| 12 Main Street\n| Springfield\n|\n| *USA*\n"
    assert readable_text("docs/address.rst", text) == "An address:\n\n12 Main Street\nSpringfield\nUSA"


MKDOCS = """# Settings

/// note | Technical Details

Settings are read *once*.

///

//// tab | Python 3.10+

Use `Annotated`.

////

!!! warning "Mind the cache"
    Restart after a change.

??? tip

::: httpx.get
    :docstring:

::: fastapi.FastAPI
    options:
      show_root_heading: true
      members:
        - openapi
"""

MYST = """# Commands

```{versionadded} 8.0 With a [link](https://example.org).
The `name` argument.
```

```{eval-rst}
.. currentmodule:: click

.. autoclass:: Command
   :members:

.. note:: See :doc:`the docs <index>`.

Add this to ``~/.bashrc``, see :func:`echo`::

    eval "$(_FOO_COMPLETE=bash_source foo)"

.. click:example::

    if __name__ == "__main__":
        cli(**kwargs)
```

```{code-block} python
:caption: hello.py

@click.command()
```
"""


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        (
            MKDOCS,
            [
                "Settings",
                "Technical Details",
                "Settings are read once.",
                "Python 3.10+",
                "Use `Annotated`.",
                "Mind the cache",
                "Restart after a change.",
                "Tip",
                "`httpx.get`",
                "`fastapi.FastAPI`",
                "`openapi`",
            ],
        ),
        (
            MYST,
            [
                "Commands",
                "Added in version 8.0: With a link.",
                "The `name` argument.",
                "`Command`",
                "Note: See the docs.",
                "Add this to `~/.bashrc`, see `echo`::",
                'eval "$(_FOO_COMPLETE=bash_source foo)"',
                'if __name__ == "__main__":',
                "cli(**kwargs)",
                "hello.py",
                "@click.command()",
            ],
        ),
    ],
)
def test_a_markdown_admonition_or_directive_shows_its_title_and_its_content(text, shown):
    """MkDocs' admonitions and blocks (``!!! warning "Title"``, ``/// note | Title``, ``//// tab``),
    an object documented by mkdocstrings (``::: httpx.get`` and its options), and MyST's fenced
    directives (```` ```{versionadded} 8.0 ````, ``{eval-rst}`` holding reST) show
    what the page shows: a title, a directive's line as reST's shows, options and closing lines
    nothing; the content as before (a MyST block's as written)."""
    assert [
        line.strip() for line in readable_text("docs/page.md", text).splitlines() if line.strip()
    ] == shown


#: A code block longer than a chunk of HashBackend's (so a later chunk starts inside it), each of its
#: lines holding what inline markup would read (``*kept*``), then prose and a heading after it.
CODE_LINES = [f"value_{n} = scale(point_{n}) * 2  # *kept* as written" for n in range(1, 25)]
AFTER_CODE = "Read the *manual* for **more**."
CODE_FILES = {
    "guide.md": "# Guide\n\nHow to *scale* points.\n\n```python\n{code}\n```\n\n{after}\n\n## Next steps\n\n",
    "guide.rst": "Guide\n=====\n\nRun this::\n\n{indented}\n\n{after}\n\nNext steps\n----------\n\n",
    "guide.adoc": "= Guide\n\n[source,python]\n----\n{code}\n----\n\n{after}\n\n== Next steps\n\n",
}


def write_code_guides(folder: Path) -> Path:
    for name, template in CODE_FILES.items():
        text = template.format(
            code="\n".join(CODE_LINES),
            indented="\n".join(f"    {line}" for line in CODE_LINES),
            after=AFTER_CODE,
        )
        write(folder / name, text + "The *reference* lists every option.\n")
    return folder


def code_guide_hits(index: Index) -> dict[str, Hit]:
    """The hit of each guide holding the prose after its code block: a chunk that starts inside it.
    The guides say the same in three formats, so each is searched alone: together, the first would
    show the others as its copies."""
    hits = {
        name: index.search("manual reference", k=1, mode="keyword", min_score=0, paths=[name])[0]
        for name in CODE_FILES
    }
    assert {hit.path for hit in hits.values()} == set(CODE_FILES)
    for hit in hits.values():
        assert hit.text.startswith("value_") or hit.text.startswith("    value_"), hit.text
    return hits


def test_a_chunk_that_starts_inside_a_code_block_shows_its_code_as_written_and_then_prose(
    any_index, tmp_path
):
    """Read alone, such a chunk's first fence (the one that closes the block) would open one: the prose
    after it shown as code, and the code before it read as text. The build read the whole file: its
    snippet shows the code as written, the closing fence as nothing, and the prose as the page does."""
    folder = write_code_guides(tmp_path / "docs")
    with Index.open(any_index, backend=HashBackend()) as index:
        index.build(folder, warn=lambda message: None)
        hits = code_guide_hits(index)
    for path, hit in hits.items():
        code = [line for line in hit.text.split("\n") if line.strip().startswith("value_")]
        shown = readable_text(hit.path, hit.text, hit.code_lead).split("\n")
        assert code and all(line in shown for line in code), (path, shown)  # code keeps its characters
        prose = [line for line in shown if line.strip() and line not in code]
        assert prose == ["Read the manual for more.", "Next steps", "The reference lists every option."], path
        snippet = ShownHit.of(hit, "manual reference").snippet.split("\n")
        assert snippet == ["… Read the manual for more.", "… The reference lists every option."], path


def make_pre_0012(location: Path | str) -> None:
    """What an index made before migration 0012 held: no column for the code a chunk starts in."""
    drop = ["ALTER TABLE chunks DROP COLUMN code_lead"]
    undo_migration(location, 12, sqlite=drop, postgres=drop)


def test_an_index_made_before_shows_its_snippets_as_before_until_its_next_build(
    any_index, tmp_path, monkeypatch
):
    """The column comes with the migration, 0 in every chunk: a chunk is read alone, as before. The
    next build reads every file again (the chunker's version changed), embeds nothing again, and
    records where each chunk starts."""
    folder = write_code_guides(tmp_path / "docs")
    built_before(any_index, folder, monkeypatch, make_pre_0012)
    with Index.open(any_index, backend=HashBackend()) as index:
        assert "0012_code_lead.sql" in index.store.applied_migrations()
        hits = code_guide_hits(index)
        assert all(hit.code_lead == 0 for hit in hits.values())
        before = {path: readable_text(path, hit.text) for path, hit in hits.items()}
        assert [ShownHit.of(hit, "manual").snippet for hit in hits.values()] == [
            "\n".join(snippet_lines(before[path], "manual")) for path in hits
        ]
    with Index.open(any_index, backend=HashBackend()) as index:
        report = index.build(folder, warn=lambda message: None)
        assert (report.files_changed, report.chunks_embedded) == (len(CODE_FILES), 0), report
        hits = code_guide_hits(index)
        assert all(hit.code_lead != 0 for hit in hits.values())
        assert all("Read the manual for more." in ShownHit.of(hit, "manual").snippet for hit in hits.values())
        assert not index.store.integrity_problems()


def test_a_chunk_cut_in_two_keeps_the_code_it_starts_in_with_its_lines():
    chunk = Chunk(10, 14, "", "a = 1\nb = 2\nc = 3\n```\nProse *here*.", code_lead=code_lead(4, True))
    first, second = split_chunk(chunk)
    assert readable_text("x.md", first.text, first.code_lead) == "a = 1\nb = 2"
    assert readable_text("x.md", second.text, second.code_lead) == "c = 3\nProse here."
