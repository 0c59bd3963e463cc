"""reStructuredText as the chunker reads it: Sphinx's object directives cut a section where it must
be cut and head the chunks of what they describe, and tables are read as their cells."""

from __future__ import annotations

import pytest

from indexer.chunking import ChunkSettings, chunk_document
from indexer.formats import parse_text, read_document
from indexer.formats.document import Heading


def words(texts: list[str]) -> list[int]:
    return [len(text.split()) for text in texts]


def chunks_of(path: str, text: str, limit: int = 60) -> list:
    return chunk_document(parse_text(path, text), words, ChunkSettings(max_tokens=limit, overlap_tokens=6))


def member(directive: str, name: str, sentences: int, indent: str = "") -> str:
    """An object directive and its indented description, ``sentences`` lines of eight words."""
    body = "\n".join(f"{indent}   {name} line {n} says what it does here." for n in range(sentences))
    return f"{indent}.. {directive}:: {name}\n\n{indent}   | :sl:`short summary of {name}`\n\n{body}\n\n"


#: A module's reference as pygame writes one: a section, then its functions and a class whose
#: methods are indented in its body, no subsection among them.
CLOCK_PAGE = (
    ":mod:`pygame.time`\n==================\n\n.. module:: pygame.time\n   :synopsis: monitoring time\n\n"
    "Times are represented in milliseconds.\n\n"
    + member("function", "get_ticks", 3)
    + member("function", "set_timer", 9)
    + member("class", "Clock", 2)
    + member("method", "tick", 7, indent="   ")
    + member("method", "get_fps", 4, indent="   ")
    + "See the examples folder for a game loop.\n"
)


def test_a_long_section_is_cut_before_a_definitions_line_and_its_names_go_with_its_body():
    lines = CLOCK_PAGE.split("\n")
    chunks = chunks_of("time.rst", CLOCK_PAGE)
    assert len(chunks) > 2
    for chunk in chunks[1:]:
        first = chunk.text.split("\n")[0].strip()
        assert first.startswith((".. ", "set_timer line", "tick line", "See the examples")), chunk.text
    declaring = {name: chunk for chunk in chunks for name in chunk.names}
    for name in ("get_ticks", "set_timer", "Clock.tick", "Clock.get_fps"):
        last = name.rsplit(".", 1)[-1]
        start = next(number for number, line in enumerate(lines, 1) if line.strip().endswith(f":: {last}"))
        holding = declaring[name]
        assert holding.start_line <= start and f"{last} line 0 says" in holding.text, (name, holding.text)
    assert declaring["pygame.time.Clock.tick"].heading == "pygame.time > Clock > tick"


def test_a_description_too_long_for_one_chunk_heads_each_of_its_chunks():
    chunks = chunks_of("time.rst", CLOCK_PAGE, limit=40)
    holding = [chunk for chunk in chunks if "set_timer line" in chunk.text]
    assert len(holding) >= 2
    assert [chunk.heading for chunk in holding] == ["pygame.time > set_timer"] * len(holding)
    assert holding[0].names == ("pygame.time.set_timer", "set_timer")
    assert all(not chunk.names for chunk in holding[1:])


def test_text_after_a_definitions_body_is_under_its_section_again():
    """The module's own words, back at the section's indentation after the class, are no part of
    the last method's description: they resume the section's heading, as code after a function
    resumes its module's."""
    headings = parse_text("time.rst", CLOCK_PAGE).headings
    lines = CLOCK_PAGE.split("\n")
    after = lines.index("See the examples folder for a game loop.") + 1
    assert [(heading.level, heading.title) for heading in headings] == [
        (1, "pygame.time"),
        (2, "get_ticks"),
        (2, "set_timer"),
        (2, "Clock"),
        (3, "tick"),
        (3, "get_fps"),
        (1, "pygame.time"),
    ]
    assert headings[-1].line == after
    assert chunks_of("time.rst", CLOCK_PAGE)[-1].heading == "pygame.time"


def test_flat_qualified_members_and_other_domains_head_their_descriptions():
    """MicroPython writes each method at the class's own indentation, qualified by its name; C's
    and the standard domain's directives are definitions too; a module's directive opens no body."""
    page = (
        "class Pin\n=========\n\n.. currentmodule:: machine\n\n.. class:: Pin(id, mode=-1)\n\n   A pin.\n\n"
        "Methods\n-------\n\n.. method:: Pin.irq(handler=None, trigger=IRQ_FALLING)\n\n   Set a callback.\n\n"
        ".. data:: Pin.IN\n          Pin.OUT\n\n   Modes.\n\n"
        ".. c:function:: int pin_read(pin_t *pin)\n\n   Reads it.\n\n"
        ".. option:: -v, --verbose\n\n   Says more.\n"
    )
    headings = parse_text("machine.Pin.rst", page).headings
    assert [(heading.line, heading.level, heading.title) for heading in headings] == [
        (1, 1, "class Pin"),
        (6, 3, "Pin"),
        (10, 2, "Methods"),
        (13, 3, "Pin.irq"),
        (17, 3, "Pin.IN"),
        (22, 3, "pin_read"),
        (26, 3, "-v, --verbose"),
    ]
    module = ".. module:: pygame.mixer\n\nMixer\n=====\n\n.. module:: pygame.mixer.music\n\nText.\n"
    assert parse_text("mixer.rst", module).headings == [Heading(3, 1, "Mixer", 4)]


def test_a_section_tail_packed_with_the_next_section_is_headed_by_what_both_lie_in():
    """A section's last function shares a chunk with the next section, which holds more of its text:
    the chunk is headed by the page, not by the next section, whose title comes after the function."""
    page = (
        "asyncio\n=======\n\nAdditional functions\n--------------------\n\n"
        + member("function", "wait_for", 10)
        + member("function", "gather", 2)
        + "class Task\n----------\n\n"
        + member("class", "Task", 3)
    )
    chunks = chunks_of("asyncio.rst", page)
    holding = next(chunk for chunk in chunks if "class Task" in chunk.text)
    assert holding.text.startswith(".. function:: gather"), [chunk.text for chunk in chunks]
    assert holding.heading == "asyncio"
    assert holding.names == ("gather", "Task")


GRID_TABLE = """Differences
===========

+-----------------------+---------------------------+
| Feature               | Status                    |
+=======================+===========================+
| asyncio.gather runs   | Supported, but the        |
| coroutines together   | exceptions are grouped    |
+-----------------------+---------------------------+
|                       |                           |
+-----------------------+---------------------------+

=====  ========
Name   Meaning
=====  ========
IN     input
=====  ========
"""


def test_a_grid_table_is_read_as_its_cells_and_a_simple_tables_rules_as_nothing():
    document = parse_text("differences.rst", GRID_TABLE)
    lines = GRID_TABLE.split("\n")
    assert document.read_as == {
        5: "Feature | Status",
        7: "asyncio.gather runs coroutines together | Supported, but the exceptions are grouped",
    }
    borders = {number for number, line in enumerate(lines, 1) if line.startswith(("+", "====="))}
    assert borders | {8, 10} <= document.markup  # a row's second line, an empty row
    assert not {5, 7, 14, 16} & document.markup  # rows: read
    (chunk,) = chunks_of("differences.rst", GRID_TABLE)
    assert chunk.text == GRID_TABLE.rstrip("\n")  # the text as written, for keywords and citations
    assert chunk.model_text.split("\n")[3:6] == ["", "Feature | Status", ""]
    assert "-----" not in chunk.model_text and "=====" not in chunk.model_text


def test_a_description_that_fits_alone_but_not_beside_its_directive_starts_the_chunk_with_it():
    """A C function's one long paragraph fits a chunk, but not with the directive's line: the line
    does not end the chunk before, stranding the name away from what is said of it; the paragraph
    is cut where the chunk the directive starts is full."""
    lead = " ".join(f"lead{n}" for n in range(20))
    body = "\n".join(f"   Reads line {n} of the file it is given." for n in range(7))
    page = f"API\n===\n\n{lead}\n\n.. c:function:: int pg_read(int fd)\n\n{body}\n"
    chunks = chunks_of("rwobject.rst", page)
    declaring = next(chunk for chunk in chunks if chunk.names)
    assert declaring.names == ("pg_read",)
    assert declaring.text.startswith(".. c:function:: int pg_read(int fd)\n\n   Reads line 0"), declaring.text
    assert declaring.heading == "API > pg_read"


def test_a_small_chunk_after_a_definition_does_not_take_the_end_of_its_description():
    """Text after a class, back at the page's indentation, is too short for a chunk of its own: it
    never takes the last method's description away from the chunk that declares the method."""
    chunks = chunks_of("time.rst", CLOCK_PAGE)
    declaring = next(chunk for chunk in chunks if "get_fps" in chunk.names)
    assert all(f"get_fps line {n} says" in declaring.text for n in range(4)), declaring.text
    trailing = next(chunk for chunk in chunks if "See the examples folder" in chunk.text)
    assert trailing is declaring or not any("get_fps line" in line for line in trailing.text.split("\n"))


@pytest.mark.parametrize("text", ["", "\n", "   \n\n", "|", "+--+\n"])
def test_an_empty_or_blank_page_or_a_lone_table_mark_is_read_not_failed(text):
    """A collection's empty abstract (Cranfield has two), a page of blank lines, a stray mark."""
    for path in ("empty.rst", "empty.txt"):
        assert read_document(path, text.encode()).lines == text.split("\n")[: len(text.splitlines())]


def test_a_labelled_title_declares_its_label_and_its_name_when_the_title_is_one():
    """A reference page labels each entry (``.. _metadata-soa-edit-api:`` over ``SOA-EDIT-API``):
    the label is how a ``:ref:`` cites the section, and a title of names alone is what the entry
    defines, so a one-name question finds it. A title of a plain word or a phrase, or a version,
    declares nothing: a section of prose is no entry, however it is cited; a target with a link
    after it is a link, and labels nothing."""
    page = (
        "Domain Metadata\n===============\n\n.. _metadata-soa-edit-api:\n\nSOA-EDIT-API\n------------\n\n"
        "Edits the serial.\n\n.. _metadata-dnsupdate:\n\n"
        "ALLOW-DNSUPDATE-FROM, SOA-EDIT-DNSUPDATE\n---------------------------------------\n\nUpdates.\n\n"
        ".. _setting-8bit-dns:\n.. _setting-8-bit:\n\n``8bit-dns``\n------------\n\nEight bits.\n\n"
        ".. _installing:\n\nInstallation\n------------\n\nSteps.\n\n.. _changelog-4.9.0:\n\n4.9.0\n-----\n\n"
        "Fixes.\n\n.. _read-only:\n\nRead-only\n---------\n\nText.\n\n.. _rc:\n\n4.9.0-rc1\n---------\n\n"
        "Fixes.\n\n.. _pip: https://pip.pypa.io/\n\nUsing pip-tools\n---------------\n\nText.\n"
    )
    lines = page.split("\n")
    definitions = parse_text("domainmetadata.rst", page).definitions
    assert definitions == {
        lines.index("SOA-EDIT-API") + 1: ("SOA-EDIT-API", "metadata-soa-edit-api"),
        lines.index("ALLOW-DNSUPDATE-FROM, SOA-EDIT-DNSUPDATE") + 1: (
            "ALLOW-DNSUPDATE-FROM",
            "SOA-EDIT-DNSUPDATE",
            "metadata-dnsupdate",
        ),
        lines.index("``8bit-dns``") + 1: ("8bit-dns", "setting-8bit-dns", "setting-8-bit"),
    }  # not Installation, 4.9.0, Read-only (a word hyphenated as prose is no name) nor 4.9.0-rc1


def test_a_long_labelled_title_is_read_in_time_linear_in_its_size():
    from helpers import fastest_seconds, grows_linearly

    for joint in "-_":  # ``_`` is a word character too: a name must not split two ways

        def seconds(size: int, joint: str = joint) -> float:
            title = f"a{joint}" * size + "!"
            page = f".. _label:\n\n{title}\n{'-' * len(title)}\n\nText.\n"
            return fastest_seconds(lambda: parse_text("page.rst", page))

        assert grows_linearly(seconds, 12_500, 100_000, 20), joint

    def labelled(size: int) -> float:  # a title with many labels before it
        page = ".. _a:\n" * size + "\nTitle\n-----\n\nText.\n"
        return fastest_seconds(lambda: parse_text("page.rst", page))

    assert grows_linearly(labelled, 2_000, 16_000, 20)


#: A tool's manual page as rst2man reads one: an option list, then a definition list of options.
TOOL_MANUAL = """zone2sql
========

Options
-------

-h, --help              Show summary of options
--config-dir <DIR>      Location of pdns.conf.
--named-conf=<PATH>     Read *PATH* to get the BIND configuration
--zone-name=<NAME>
                        Set the zone name.

Backends
--------

--gmysql
    Output for the Generic MySQL backend.
``qname``
    The name asked for.
dnssec
    Set the DO bit, a word as prose has it.
``sync`` (the default)
    A phrase.

A phrase as a term
    declares nothing.

- a list item
    indented under it declares nothing either.
"""


def test_an_option_lists_options_and_a_definition_lists_names_are_declared():
    """An option list's options (each item after the one before, or after a blank line) and a
    definition list's terms that are names, in an inline literal or spelt as an option: what a
    manual written in reStructuredText defines, as a man page's and an AsciiDoc page's lists are."""
    starts = [line.split("  ")[0] for line in TOOL_MANUAL.split("\n")]
    definitions = parse_text("zone2sql.1.rst", TOOL_MANUAL).definitions
    assert definitions == {
        starts.index("-h, --help") + 1: ("-h", "--help"),
        starts.index("--config-dir <DIR>") + 1: ("--config-dir",),
        starts.index("--named-conf=<PATH>") + 1: ("--named-conf",),
        starts.index("--zone-name=<NAME>") + 1: ("--zone-name",),
        starts.index("--gmysql") + 1: ("--gmysql",),
        starts.index("``qname``") + 1: ("qname",),
    }


def test_the_first_term_of_a_definition_list_inside_a_definition_is_declared():
    """Borg's environment variables are a definition list in a definition (``General:`` over
    ``BORG_REPO``): the first variable is a term as much as the ones after it. A list item's text
    going on at its column is no term, whatever follows it."""
    page = (
        "Environment Variables\n~~~~~~~~~~~~~~~~~~~~~\n\nBorg uses some environment variables:\n\n"
        "General:\n    BORG_REPO\n        When set, use the value to give the default repository location.\n"
        "    BORG_OTHER_REPO\n        Similar to BORG_REPO, but gives the default for ``--other-repo``.\n\n"
        "- set ``BORG_RSH``\n  CUSTOM_VALUE\n    in the shell that runs borg.\n"
    )
    starts = [line.strip() for line in page.split("\n")]
    assert parse_text("usage/general/environment.rst.inc", page).definitions == {
        starts.index("BORG_REPO") + 1: ("BORG_REPO",),
        starts.index("BORG_OTHER_REPO") + 1: ("BORG_OTHER_REPO",),
    }


def test_a_grid_tables_row_keyed_by_options_declares_them():
    """Borg's command reference tabulates each command's options in a grid table whose first
    column only groups them: a row's first cell with text, options in inline literals alone,
    declares them, as a manual's option list does; a row keyed by anything else declares nothing."""
    widths = (10, 26, 34)
    border = "+" + "+".join("-" * width for width in widths) + "+"

    def row(*cells: str) -> str:
        return (
            "|" + "|".join(f" {cell}".ljust(width) for cell, width in zip(cells, widths, strict=True)) + "|"
        )

    lines = [
        "borg create",
        "-----------",
        "",
        border,
        "| **options**".ljust(len(border) - 1) + "|",
        border,
        row("", "``-n``, ``--dry-run``", "do not create a backup archive"),
        border,
        row("", "``--exclude-caches``", "exclude directories that"),
        row("", "", "contain a CACHEDIR.TAG file"),
        border,
        row("", "``NAME``", "specify the archive name"),
        border,
        row("", "``auto``", "a value, not an option"),
        border,
        "",
    ]
    definitions = read_document("usage/create.rst.inc", "\n".join(lines).encode()).definitions
    assert definitions == {7: ("-n", "--dry-run"), 9: ("--exclude-caches",)}


def test_a_long_option_list_line_is_read_in_time_linear_in_its_size():
    from helpers import fastest_seconds, grows_linearly

    def seconds(size: int) -> float:
        page = "Options\n=======\n\n" + "-a, --b=<c>, " * size + "x\n    Text.\n"
        return fastest_seconds(lambda: parse_text("page.rst", page))

    assert grows_linearly(seconds, 1_000, 8_000, 20)


def test_a_sphinx_page_that_only_includes_the_changelog_stores_no_chunk():
    """``docs/changelog.rst`` is a title over the project's ``CHANGES.rst``: a chunk of "Changelog"
    alone would come first for every question the changelog answers, with nothing in it to read."""
    page = "Changelog\n=========\n\n.. include:: ../CHANGES.rst\n   :start-after: .. begin\n"
    document = read_document("docs/changelog.rst", page.encode())
    assert document.includes == {4} and {4, 5} <= document.markup
    assert chunks_of("docs/changelog.rst", page) == []


def test_a_page_with_its_own_text_beside_an_include_is_stored_without_reading_the_directive():
    page = "Usage\n=====\n\nRun the example.\n\n.. literalinclude:: ../example.py\n   :language: python\n"
    chunks = chunks_of("docs/usage.rst", page)
    assert [chunk.heading for chunk in chunks] == ["Usage"]
    assert "Run the example." in chunks[0].embed_text and "literalinclude" not in chunks[0].embed_text
