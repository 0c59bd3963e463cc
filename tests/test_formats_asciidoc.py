"""Reading AsciiDoc: sections in both title styles, delimited blocks, markup the page never shows, and
inline macros read as the text they show, on pages written as real manuals write them (a manual
page with underlined titles, an Antora page with attributes, anchors and admonitions)."""

from __future__ import annotations

import gc
import math
import time
from pathlib import Path

import pytest
from conftest import rows
from helpers import HashBackend, grows_linearly
from hypothesis import given, settings
from hypothesis import strategies as st

from indexer import Index
from indexer.chunking import ChunkSettings, chunk_document, split_chunk
from indexer.formats import parse_text, read_document
from indexer.formats.asciidoc import read_asciidoc, visible_text

FIXTURES = Path(__file__).parent / "fixtures" / "asciidoc"
MANUAL_PAGE = (FIXTURES / "git-stash-like.adoc").read_text()
ANTORA_PAGE = (FIXTURES / "antora-page.adoc").read_text()


def words(texts: list[str]) -> list[int]:
    return [len(text.split()) for text in texts]


def line_of(text: str, start: str) -> int:
    """The 1-based number of the first line of ``text`` that starts with ``start``."""
    return next(number for number, line in enumerate(text.split("\n"), 1) if line.startswith(start))


def read_lines(document, first: int, last: int) -> str:
    """What the model reads of lines ``first``-``last``: markup left out, each line as read."""
    return "\n".join(
        document.read_as.get(number, document.lines[number - 1])
        for number in range(first, last + 1)
        if number not in document.markup
    )


def test_every_asciidoc_extension_is_read_by_its_grammar():
    for name in ("page.adoc", "page.asciidoc", "page.asc"):
        document = read_document(name, b"= Guide\n\n== Install\n\nRun it.\n")
        assert [(heading.level, heading.title) for heading in document.headings] == [
            (1, "Guide"),
            (2, "Install"),
        ]


def test_underlined_titles_nest_as_their_underline_characters_say():
    document = read_asciidoc(MANUAL_PAGE)
    titles = [
        (heading.line, heading.level, heading.title, heading.last_line) for heading in document.headings
    ]
    assert titles == [
        (1, 1, "tool-stash(1)", 2),
        (4, 2, "NAME", 5),
        (8, 2, "SYNOPSIS", 9),
        (14, 2, "DESCRIPTION", 15),
        (27, 2, "OPTIONS", 28),
        (39, 2, "EXAMPLES", 40),
    ]
    assert {2, 5, 9, 15, 28, 40} <= document.markup  # the underlines


def test_an_underline_must_match_its_titles_length_within_one_character():
    text = "= Page\n\nA sentence longer than its dashes\n----\ncode\n----\n\nShort\n------\n\nabc\n------\n"
    document = read_asciidoc(text)
    assert [heading.title for heading in document.headings] == ["Page", "Short"]
    assert (4, 6) in document.literal  # under the long line, the dashes open a listing block
    assert (11, 11) not in document.literal and 11 not in document.markup  # "abc": three short of six


def test_a_title_inside_a_delimited_block_or_a_paragraph_is_no_heading():
    document = read_asciidoc(ANTORA_PAGE)
    assert [heading.title for heading in document.headings] == [
        "Back up a Keeper database online",
        "Options",
        "Schedule backups",
    ]
    in_listing = line_of(ANTORA_PAGE, "== not a title")
    assert any(first < in_listing <= last for first, last in document.literal)
    paragraph = read_asciidoc("Some text\n== still the paragraph\n\n== A title\n")
    assert [heading.line for heading in paragraph.headings] == [4]
    comment = read_asciidoc("////\n== Commented out\n////\n\n== Real\n")
    assert [heading.title for heading in comment.headings] == ["Real"]


def test_delimited_blocks_are_literal_or_text_as_the_grammar_says():
    text = (
        "....\nliteral\n....\n\n++++\n<b>raw</b>\n++++\n\n```python\nprint(1)\n```\n\n[source,java]\n--\ncode\n--\n\n"
        "****\nA sidebar\n****\n\n____\nA quote\n____\n\n[source]\nSELECT 1;\n"
    )
    document = read_asciidoc(text)
    assert document.literal == [(1, 3), (5, 7), (9, 11), (14, 16), (27, 27)]
    sidebar, quote = line_of(text, "A sidebar"), line_of(text, "A quote")
    assert not any(first <= line <= last for first, last in document.literal for line in (sidebar, quote))
    assert {sidebar - 1, sidebar + 1, quote - 1, quote + 1} <= document.markup  # their delimiters


def test_an_unclosed_block_runs_to_the_end_as_asciidoctor_reads_it():
    document = read_asciidoc("= Page\n\n----\ncode\n\n== Not a title\n")
    assert document.literal == [(3, 6)]
    assert [heading.title for heading in document.headings] == ["Page"]


@pytest.mark.parametrize(
    "block",
    [
        "|===\n| a\n\n  an indented cell line\n|===\n",  # a literal paragraph in a table's cell
        "[TIP]\n====\n[source,java]\nschema.create(true);\n====\n",  # a source paragraph in an example
    ],
)
def test_a_paragraph_ends_at_the_line_that_closes_the_block_it_is_in(block):
    document = read_asciidoc("= Page\n\n" + block + "\n== After the block\n")
    assert [heading.title for heading in document.headings] == ["Page", "After the block"]
    closing = 2 + block.count("\n")  # the block's last line, after the title and a blank line
    assert document.literal and all(last < closing for _, last in document.literal)


@pytest.mark.parametrize(
    ("line", "separator", "cells"),
    [
        ("|Name |Default", "|", ["Name", "Default"]),
        ("a|Some *bold* text", "|", ["Some *bold* text"]),
        ("2+|spanned .2+^.^h|next 3*|last", "|", ["spanned", "next", "last"]),
        ("|escaped \\| pipe|", "|", ["escaped | pipe", ""]),
        ("the end of a cell |a new one", "|", ["the end of a cell", "a new one"]),
        ("!inner !table", "!", ["inner", "table"]),
        ('"Baauer, X",Harlem Shake', ",", ["Baauer, X", "Harlem Shake"]),
        ("a:b\\:c", ":", ["a", "b:c"]),
    ],
)
def test_a_table_line_reads_as_its_cells_without_their_specifiers(line, separator, cells):
    """What a snippet shows of a table's line: the text of each cell, without the mark that starts
    it nor the specifier before the mark (a span, a duplication, an alignment, a style)."""
    from indexer.formats.asciidoc import table_cells

    assert table_cells(line, separator) == cells


def test_a_snippet_shows_a_table_s_cells_and_the_model_reads_its_lines_as_before():
    """The cells are the snippet's reading alone: the model reads a table's lines as written."""
    from indexer.formats.asciidoc import shown_pieces

    text = ":os: Linux\n\n|===\n|System |{os}\n2+|both\n|===\n\n|not a table |row\n"
    document = read_asciidoc(text)
    assert shown_pieces(text, document) == {4: ("System", "Linux"), 5: ("both",)}
    assert document.read_as.get(4) == "|System |Linux" and 5 not in document.read_as


def test_a_table_with_its_own_separator_or_format_shows_its_cells_in_a_snippet():
    """A table's attribute line may say what starts a cell (``separator=¦``, as a table whose cells
    hold pipes is written) or its format (``csv``, ``tsv``), its title line before or after it: each
    line of the table then shows its cells, as a table of ``|`` cells does."""
    from indexer.formats.asciidoc import shown_pieces

    text = (
        '.Feature gate maturity\n[cols="2*",options="header",separator=\u00a6]\n|===\n'
        "\u00a6Feature gate \u00a6GA\n\u00a6`UseKRaft`\n\u00a60.42\n|===\n\n"
        '[format=csv]\n.Artists\n|===\nName,"Baauer, X"\n|===\n\n[format=tsv]\n|===\nkey\tvalue\n|===\n\n'
        "|===\n|a \u00a6 b |c\n|===\n\n"
        "[separator=;]\n// a comment between changes nothing\n|===\n;x;y\n|===\n\n"
        "|===\n|outer\na|\n[format=psv]\n!===\n!inner !cell\n!===\n|===\n"
    )
    pieces = shown_pieces(text, read_asciidoc(text))
    lines = text.split("\n")
    assert pieces[lines.index("\u00a6Feature gate \u00a6GA") + 1] == ("Feature gate", "GA")
    assert pieces[lines.index("\u00a6`UseKRaft`") + 1] == ("`UseKRaft`",)
    assert pieces[lines.index('Name,"Baauer, X"') + 1] == ("Name", "Baauer, X")
    assert pieces[lines.index("key\tvalue") + 1] == ("key", "value")
    assert pieces[lines.index("|a \u00a6 b |c") + 1] == ("a \u00a6 b", "c")  # the next table's own marks
    assert pieces[lines.index(";x;y") + 1] == ("x", "y")
    assert pieces[lines.index("!inner !cell") + 1] == ("inner", "cell")  # a nested psv table's own mark


def test_a_modules_id_in_single_quotes_is_declared_without_them():
    """Modular documentation's templates write each module's id in single quotes, with the context
    its assembly sets (``[id='proc-pausing-{context}']``): the title declares the id, as it does
    one in double quotes or bare."""
    page = (
        ":_mod-docs-content-type: PROCEDURE\n\n[id='proc-pausing-{context}']\n= Pausing reconciliation\n\n"
        'Text.\n\n[id="ref-gates"]\n== Feature gates\n\nText.\n\n[id=bare-id,role=_abstract]\n== Bare\n'
    )
    document = read_asciidoc(page)
    assert document.definitions == {
        line_of(page, "= Pausing"): ("proc-pausing-{context}",),
        line_of(page, "== Feature gates"): ("ref-gates",),
        line_of(page, "== Bare"): ("bare-id",),
    }


def test_markup_the_page_never_shows_is_left_out_of_what_the_model_reads():
    document = read_asciidoc(MANUAL_PAGE)
    for start in (
        "// a comment",
        ":tool-asciidoc:",
        "ifdef::",
        "endif::",
        "[[stash-list]]",
        "[verse]",
        "////",
    ):
        assert line_of(MANUAL_PAGE, start) in document.markup, start
    commented = line_of(MANUAL_PAGE, "EXAMPLES TO WRITE")
    assert {commented, commented + 1} <= document.markup  # a comment block's lines
    antora = read_asciidoc(ANTORA_PAGE)
    for start in (
        ":prodname:",
        "[[online-backup]]",
        ":toc:",
        "[#backup-options]",
        '[options="header"',
        "|===",
        "[NOTE]",
    ):
        assert line_of(ANTORA_PAGE, start) in antora.markup, start


def test_the_page_description_is_read_as_text_and_attribute_references_as_their_values():
    document = read_asciidoc(ANTORA_PAGE)
    assert document.read_as[1] == "How to back up a database while the server runs, and restore it."
    assert document.headings[0].title == "Back up a Keeper database online"


def test_an_attribute_default_set_in_a_one_line_condition_shows_nothing_and_is_read_in_references():
    text = (
        "= Guide\nifndef::product[:product: Acme Server]\n:edition: free\n"
        "ifndef::edition[:edition: never]\nifndef::region,edition[:region: never]\n"
        "ifdef::edition+product[:region: Europe]\n:product!:\nifdef::product[:product: never]\n"
        "ifdef::note[Shown only with notes.]\n\n"
        "Welcome to {region}, {edition} edition of {product}.\n"
    )
    document = read_asciidoc(text)
    assert document.read_as[line_of(text, "Welcome")] == "Welcome to Europe, free edition of {product}."
    assert {line_of(text, "ifndef::product"), line_of(text, "ifndef::edition")} <= document.markup
    assert document.read_as[line_of(text, "ifdef::note")] == "Shown only with notes."


def test_inline_macros_read_as_the_text_they_show_while_the_chunk_keeps_the_files_lines():
    document = read_asciidoc(MANUAL_PAGE)
    see = line_of(MANUAL_PAGE, "See linktool")
    assert document.read_as[see] == "See tool-commit(1) and the stash how-to."
    cross = line_of(MANUAL_PAGE, "The stash is a stack")
    assert document.read_as[cross] == "The stash is a stack of states, see listing stashes."
    antora = read_asciidoc(ANTORA_PAGE)
    shown = {
        start: antora.read_as[line_of(ANTORA_PAGE, start)]
        for start in ("| --to-path", "Backups", "Consider", "The `keeper")
    }
    assert shown == {
        "| --to-path": "| --to-path | Where the backup goes, see Restoring a backup.",
        "Backups": "Backups are compressed with zstd.",
        "Consider": "Consider the following: Ctrl+C stops it.",
        "The `keeper": "The `keeper-admin backup` command copies a running database. "
        "Enterprise edition only.",
    }
    (chunk,) = chunk_document(document, words, ChunkSettings(max_tokens=500, overlap_tokens=0))
    assert "linktool:tool-commit[1]" in chunk.text and "[verse]" in chunk.text  # the file's lines
    assert "See tool-commit(1) and the stash how-to." in chunk.embed_text
    assert "linktool:" not in chunk.embed_text and "ifdef::" not in chunk.embed_text
    assert "[verse]" not in chunk.embed_text and "OPTIONS\n-------" not in chunk.embed_text


def test_nested_macros_read_innermost_first():
    line = "Use it.footnote:[See xref:admin.adoc#config[Admin -> Configuration] for details.]"
    assert read_asciidoc(line).read_as[1] == "Use it.See Admin -> Configuration for details."


def test_a_macros_named_attributes_never_show_and_its_content_shows_whole():
    lines = [
        "Mark it with javadoc:org.example.test.DataJpaTest[format=annotation].",  # an extension's macro
        "Set configprop:server.port[format=envvar] or link:https://example.org[the site, window=_blank].",
        "Press kbd:[Ctrl+=] to zoom.footnote:[Set x=1 in the file, then reload.]",
        "Read link:https://example.org[Hello, world] first.",
    ]
    read = read_asciidoc("\n".join(lines)).read_as
    assert [read[number] for number in range(1, 5)] == [
        "Mark it with org.example.test.DataJpaTest.",
        "Set server.port or the site.",
        "Press Ctrl+= to zoom.Set x=1 in the file, then reload.",
        "Read Hello, world first.",
    ]


def test_an_escaped_reference_and_a_passthrough_show_as_written_even_where_the_page_sets_the_name():
    """Spring Boot's reference writes the placeholders its users type as escaped references and
    monospace passthroughs: the page shows ``{profile}``, never the value a page sets, nor the
    backslash or the pluses; a javadoc target after the base address its Antora component sets
    reads as the type it names."""
    lines = [
        ":profile: dev",
        ":groupId: org.example",
        "",
        "Spring Boot will also attempt to load profile-specific files using the naming convention "
        "`application-\\{profile}`.",
        "The hints are written to a directory named `+META-INF/native-image/{groupId}/{artifactId}/+`.",
        "The application's javadoc:org.springframework.context.MessageSource[] is used when resolving "
        "+{parameters}+ and pass:[{groupId}] in constraint messages.",
        "If you have defined your own "
        "javadoc:{url-mongodb-driver-sync-javadoc}/com.mongodb.client.MongoClient[], it will be used.",
        "Set {groupId} in C++ or C++, with a+b+c and a `+` sign.",
    ]
    read = read_asciidoc("\n".join(lines)).read_as
    assert [read[number] for number in range(4, 9)] == [
        "Spring Boot will also attempt to load profile-specific files using the naming convention "
        "`application-{profile}`.",
        "The hints are written to a directory named `META-INF/native-image/{groupId}/{artifactId}/`.",
        "The application's org.springframework.context.MessageSource is used when resolving "
        "{parameters} and {groupId} in constraint messages.",
        "If you have defined your own com.mongodb.client.MongoClient, it will be used.",
        "Set org.example in C++ or C++, with a+b+c and a `+` sign.",
    ]


def test_a_link_whose_address_starts_with_an_unset_attribute_reads_as_its_text():
    """Antora components and included files set the base URLs a page links with: Asciidoctor
    replaces references before it reads macros, so the page shows the link's text, as it does a
    ``https://`` link's. A reference the page sets is read as its value first; one not followed by
    a target and brackets, or written inside a word or code, is no link."""
    lines = [
        "See the {gh-samples-url}[samples] and {spring-url}core/aot.html#aot[the annotation].",
        "Use {javadoc}UniqueConstraint.html[`@UniqueConstraint`] or ({enhancer}[bytecode enhancer^]).",
        "Keep a{x}[0], {unset} [a word] and `{code}[x]`.",
        ":docs-url: https://docs.example.org",
        "Read {docs-url}/guide[the guide].",
    ]
    read = read_asciidoc("\n".join(lines)).read_as
    assert [read.get(number) for number in (1, 2, 3, 5)] == [
        "See the samples and the annotation.",
        "Use `@UniqueConstraint` or (bytecode enhancer).",
        None,
        "Read the guide.",
    ]


def test_description_lists_and_block_titles_stay_readable():
    document = read_asciidoc(MANUAL_PAGE)
    assert document.read_as[line_of(MANUAL_PAGE, "--patch::")] == "--patch"
    assert document.read_as[line_of(MANUAL_PAGE, "--index;;")] == "--index"
    assert document.read_as[line_of(MANUAL_PAGE, ".Pulling")] == "Pulling into a dirty tree"
    listing = read_asciidoc("term:: what it means\n* item:: in a list\n")
    assert listing.read_as == {1: "term: what it means"}


def test_a_manual_pages_name_section_its_options_and_the_anchors_of_titles_are_its_definitions():
    document = read_asciidoc(MANUAL_PAGE)
    assert document.definitions == {
        line_of(MANUAL_PAGE, "tool-stash - Stash"): ("tool-stash",),
        line_of(MANUAL_PAGE, "-p::"): ("-p",),
        line_of(MANUAL_PAGE, "--patch::"): ("--patch",),
        line_of(MANUAL_PAGE, "--index;;"): ("--index",),
        line_of(MANUAL_PAGE, "EXAMPLES"): ("stash-list",),
    }
    antora = read_asciidoc(ANTORA_PAGE)
    assert antora.definitions == {
        4: ("online-backup",),
        line_of(ANTORA_PAGE, "== Options"): ("backup-options",),
    }
    atx_manual = read_asciidoc("= tool-log(1)\n\n== NAME\n\ntool-log, tool-whatchanged - Show logs\n")
    assert atx_manual.definitions == {5: ("tool-log", "tool-whatchanged")}


def test_a_title_of_code_or_of_config_keys_declares_them_as_a_markdown_title_does():
    page = (
        "= Git Configuration\n\n==== Core settings\n\n===== `core.autocrlf`\n\nLine endings.\n\n"
        "===== `core.editor` and `+core.pager+`\n\nEditors.\n\n== server.port\n\nThe port.\n\n"
        "[[commit-cmd]]\n== The `git commit` command\n\nRecords changes.\n"
    )
    document = read_asciidoc(page)
    assert document.definitions == {
        line_of(page, "===== `core.autocrlf`"): ("core.autocrlf",),
        line_of(page, "===== `core.editor`"): ("core.editor", "core.pager"),
        line_of(page, "== server.port"): ("server.port",),
        line_of(page, "== The `git commit`"): ("commit-cmd",),  # a phrase with code in it: its anchor alone
    }


def test_a_description_list_term_that_is_names_declares_them():
    page = (
        "`-m` _<msg>_::\n--message=<msg>::\n\tThe message.\n\n--[no-]verify::\n\tRun the hooks.\n\n"
        "core.editor::\n\tThe editor.\n\nStep one:: Read the manual.\n\n<commit>::\n\tA commit.\n\n"
        "* item:: in a list\n\n----\n--in-a-listing::\n----\n\n"
        "branch.<name>.merge::\n\tA key with a placeholder.\n\n_<branch-name>_::\n\tA placeholder.\n\n"
        "commit::\n\tA subcommand, a word as prose has it.\n\nGIT_EDITOR::\n\tAn environment variable.\n\n"
        "--stat[=<width>[,<count>]]::\n\tA value with commas.\n\n-L<start>,<end>:<file>::\n\tAnother.\n\n"
        "read-only::\n\tA glossary's word.\n\nJavaScript::\n\tA name as prose spells it.\n"
    )
    assert read_asciidoc(page).definitions == {
        1: ("-m",),
        2: ("--message",),
        5: ("--verify", "--no-verify"),
        8: ("core.editor",),  # not `editor`: many keys end with it
        31: ("GIT_EDITOR",),
        34: ("--stat",),
        37: ("-L",),
    }


def test_a_term_in_bold_or_monospace_declares_the_names_the_page_shows():
    page = (
        "= asciidoctor(1)\n\n== OPTIONS\n\n"
        "*-o, --out-file*=_OUT_FILE_::\n  Write output to file _OUT_FILE_.\n\n"
        "*--failure-level*=_LEVEL_::\n  Set the minimum logging level that yields a non-zero exit code.\n\n"
        "*-h, --help* [_TOPIC_]::\n  Print a help message.\n\n"
        "*0*::\n  Success.\n\n"
        "`convert`::\n  A subcommand in monospace: code.\n\n"
        "convert::\n  The same word in prose.\n\n"
        "`--safe`, `asciidoctor-safe`::\n  Both in monospace.\n"
    )
    assert read_asciidoc(page).definitions == {
        line_of(page, "*-o"): ("-o", "--out-file"),
        line_of(page, "*--failure-level"): ("--failure-level",),
        line_of(page, "*-h"): ("-h", "--help"),
        line_of(page, "`convert`"): ("convert",),
        line_of(page, "`--safe`"): ("--safe", "asciidoctor-safe"),
    }


def test_an_anchored_list_item_of_one_term_declares_it_as_a_description_list_would():
    """Spring Security's namespace appendix lists each element's attributes as list items, a term in
    bold under a block anchor, its description after: the anchor makes the item the attribute's
    definition. An item with prose after its term, or with no anchor, declares nothing."""
    page = (
        "== <session-management> Attributes\n\n"
        "[[nsa-session-fixation-protection]]\n* **session-fixation-protection**\n"
        "Indicates how session fixation protection will be applied.\n\n"
        "[#nsa-max-sessions]\n* `maxSessions`: The most sessions a user may have.\n\n"
        "[[nsa-note]]\n* **Note** that this is prose.\n\n"
        "* **invalid-session-url**\nWhere to go.\n"
    )
    assert read_asciidoc(page).definitions == {
        line_of(page, "* **session"): ("session-fixation-protection",),
        line_of(page, "* `maxSessions`"): ("maxSessions",),
    }


def test_a_list_of_links_to_other_pages_is_a_contents_list_not_a_page():
    navigation = (
        "* xref:index.adoc[]\n** xref:convert-files.adoc[]\n** xref:set-safe-mode.adoc[]\n"
        "** xref:man1/asciidoctor.adoc#options[CLI Options]\n"
    )
    document = read_asciidoc(navigation)
    assert sorted(document.linked_entries) == [1, 2, 3, 4]
    assert document.read_as[2] == "** convert-files"  # an empty text shows the page's name
    chunks = chunk_document(document, words, ChunkSettings(max_tokens=100, overlap_tokens=0))
    assert [chunk.is_contents for chunk in chunks] == [True]
    page = (
        "= Convert files\n\nUse `Asciidoctor.convert_file` to convert a file.\n\n"
        "* <<safe>>\n* xref:id[]\n* <<#top>>\n"  # this page's own ids
        "* xref:a.adoc[A] explains the API in more words\n* link:#top[Top]\n\n"
        "== Next steps\n\n* xref:convert-strings.adoc[Convert a string]\n"
        "* <<options.adoc#safe,Safe modes>>, link:https://docs.asciidoctor.org[the site].\n"
        "* https://rubydoc.info/gems/asciidoctor[API docs]\n"
    )
    assert sorted(read_asciidoc(page).linked_entries) == [
        line_of(page, "* xref:convert"),
        line_of(page, "* <<options"),
        line_of(page, "* https"),
    ]


def test_a_chunk_of_an_asciidoc_section_carries_its_heading_path():
    chunks = chunk_document(read_asciidoc(MANUAL_PAGE), words, ChunkSettings(max_tokens=30, overlap_tokens=0))
    assert {"tool-stash(1) > DESCRIPTION", "tool-stash(1) > OPTIONS", "tool-stash(1) > EXAMPLES"} <= {
        chunk.heading for chunk in chunks
    }
    options = next(
        chunk for chunk in chunks if chunk.start_line <= line_of(MANUAL_PAGE, "-p::") <= chunk.end_line
    )
    assert "\nOPTIONS\n\n-p\n--patch\n\tInteractively" in options.embed_text


def test_halves_of_a_refused_chunk_read_the_lines_as_the_reader_read_them():
    (chunk,) = chunk_document(
        read_asciidoc(MANUAL_PAGE), words, ChunkSettings(max_tokens=500, overlap_tokens=0)
    )
    halves = split_chunk(chunk)
    assert "\n".join(half.text for half in halves) == chunk.text
    read = "\n".join(half.embed_text for half in halves)
    assert "See tool-commit(1) and the stash how-to." in read
    assert "linktool:" not in read and "[verse]" not in read


@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.sampled_from(
            [
                "",
                "== T",
                "T",
                "----",
                "--",
                "====",
                "|===",
                "////",
                "[source]",
                "[[a]]",
                ":a: b \\",
                "+",
                ".T",
                "  x",
                "a:: b",
                "link:x[y]",
                "<<a,b>>",
                "ifdef::a[]",
                "{a}",
                "```",
                "NAME",
                "x - y",
                "[comment]",
            ]
        ),  # fmt: skip
        max_size=40,
    )
)
def test_any_text_is_read_without_failing_and_within_its_lines(lines):
    text = "\n".join(lines)
    document = read_asciidoc(text)
    count = len(document.lines)
    assert all(1 <= first <= last <= count for first, last in document.literal)
    assert all(1 <= heading.line <= heading.last_line <= count for heading in document.headings)
    assert all(1 <= number <= count for number in document.markup | set(document.read_as))
    assert all(shown.strip() and "\n" not in shown for shown in document.read_as.values())
    chunk_document(document, words, ChunkSettings(max_tokens=8, overlap_tokens=2))


@pytest.mark.slow
def test_reading_takes_time_linear_in_the_texts_size():
    # lines made to make a backtracking pattern slow: many macro-like prefixes, open brackets,
    # description-list colons, passthrough marks and title markers, none closed
    nasty = "a:b:c:d:" * 40 + " [[" * 40 + " <<x" * 40 + " ::" * 40 + " {x" * 40 + "\n== " + "= " * 60 + "\n"
    nasty += "a" + " `+" * 40 + " +x" * 40 + " `+++a" * 40 + " pass:[" * 40 + " \\{x}" * 40 + "\n"

    def seconds(copies: int) -> float:
        text = nasty * copies
        best = math.inf
        gc.disable()
        try:
            for _ in range(3):
                started = time.perf_counter()
                read_asciidoc(text)
                best = min(best, time.perf_counter() - started)
        finally:
            gc.enable()
        return best

    assert grows_linearly(seconds, 50, 400, 20)


def test_a_damaged_asciidoc_file_is_read_as_what_it_holds_without_failing_the_build():
    document = parse_text("broken.adoc", "[[\n----\n====\n|===\n<<x,\nlink:[\n:a:\n\\\n")
    assert document.lines[0] == "[["


def test_a_one_line_edit_inside_a_section_reembeds_that_sections_chunks_only(tmp_path):
    folder = tmp_path / "manual"
    folder.mkdir()
    sections = [
        f"== Section {n}\n\n"
        + "\n\n".join(
            f"Paragraph {n}.{p} see xref:other.adoc[Other {p}] " + "word " * (20 + p % 5) for p in range(6)
        )
        for n in range(6)
    ]
    page = folder / "guide.adoc"
    page.write_text("= Guide\n:toc:\n\n" + "\n\n".join(sections) + "\n")
    index_path = tmp_path / "index.db"
    with Index.open(index_path) as index:
        first = index.build(folder, backend=HashBackend(max_tokens=96), warn=lambda message: None)
        headings = {row[0] for row in rows(index.store, "SELECT heading FROM chunks")}
    assert first.chunks_embedded >= 12
    assert {f"Guide > Section {n}" for n in range(6)} <= headings
    page.write_text(page.read_text().replace("Paragraph 3.2 see", "Paragraph 3.2, edited, see", 1))
    counting = HashBackend(max_tokens=96)
    with Index.open(index_path) as index:
        report = index.build(folder, backend=counting, warn=lambda message: None)
    assert 1 <= report.chunks_embedded <= 2
    assert all(text.startswith("Guide > Section 3\n") for text in counting.embedded)
    assert not any("xref:" in text for text in counting.embedded)  # read as the text it shows


def test_adding_a_section_reembeds_at_most_the_neighbours_it_joins(tmp_path):
    folder = tmp_path / "manual"
    folder.mkdir()
    sections = [
        f"== Section {n}\n\n"
        + "\n\n".join(f"Paragraph {n}.{p} of the guide " + "word " * (20 + p % 5) for p in range(6))
        for n in range(6)
    ]
    page = folder / "guide.adoc"
    page.write_text("= Guide\n\n" + "\n\n".join(sections) + "\n")
    index_path = tmp_path / "index.db"
    with Index.open(index_path) as index:
        first = index.build(folder, backend=HashBackend(max_tokens=96), warn=lambda message: None)
    added = "== Added section\n\nA new paragraph about [.term]*rotation* of the logs.\n\n"
    page.write_text(page.read_text().replace("== Section 3\n", added + "== Section 3\n", 1))
    counting = HashBackend(max_tokens=96)
    with Index.open(index_path) as index:
        report = index.build(folder, backend=counting, warn=lambda message: None)
        hits = index.search("rotation", k=1, mode="keyword", min_score=0)
    assert first.chunks_embedded >= 12
    assert 1 <= report.chunks_embedded <= 3
    assert any("Added section" in text for text in counting.embedded)
    assert "rotation" in hits[0].text


def test_the_delimiter_closing_a_block_around_a_nested_one_starts_no_block():
    text = "= Page\n\n[TIP]\n====\nA tip:\n[source,bash]\n----\njbang -Dx run.jsh\n----\n====\n"
    assert 10 not in read_asciidoc(text).block_starts  # the closing ``====``, right after the ``----``


def test_a_title_of_one_directive_or_variable_declares_it_and_a_word_does_not():
    text = "= Directives\n\n== //DEPS\n\nDependencies.\n\n== JBANG_CACHE_DIR\n\nCache.\n\n== Usage\n\nUse.\n"
    assert read_asciidoc(text).definitions == {3: ("//DEPS",), 7: ("JBANG_CACHE_DIR",)}


def test_a_man_page_s_name_with_a_double_dash_declares_its_name():
    text = "= jbang-config-unset(1)\n:doctype: manpage\n\n== Name\n\njbang config unset -- Remove a value\n"
    assert ("jbang config unset",) in read_asciidoc(text).definitions.values()


#: A manual's assembly, as Red Hat's modular docs write one: a title over the modules it includes.
ASSEMBLY = """:context: admin
[id="assembly-managing-users_{context}"]
= Managing users

include::users/proc-creating-user.adoc[leveloffset=+1]

include::users/proc-deleting-user.adoc[leveloffset=+1]
"""
MODULE = """[id="proc-deleting-user_{context}"]
= Deleting a user

You can delete a user who no longer needs access to applications.

.Procedure
. Click *Users* in the menu, then *Delete* beside the user.
"""


def test_an_assembly_of_a_title_over_include_lines_stores_no_chunk_and_the_module_answers(tmp_path):
    """The title over the modules it includes holds none of their text: a chunk of it alone would come
    first for what the included module says, with nothing in it to read."""
    assembly = read_asciidoc(ASSEMBLY)
    assert assembly.includes == {
        line_of(ASSEMBLY, "include::users/proc-creating"),
        line_of(ASSEMBLY, "include::users/proc-del"),
    }
    assert chunk_document(assembly, words, ChunkSettings.for_limit(64)) == []
    (tmp_path / "guide" / "users").mkdir(parents=True)
    (tmp_path / "guide" / "assembly-managing-users.adoc").write_text(ASSEMBLY)
    (tmp_path / "guide" / "users" / "proc-deleting-user.adoc").write_text(MODULE)
    with Index.open(tmp_path / "index.db", backend=HashBackend(max_tokens=64)) as index:
        report = index.build(tmp_path / "guide")
        hits = index.search("managing users deleting a user", k=5, mode="keyword", min_score=0)
    assert report.files_added == 2
    assert {hit.path for hit in hits} == {"users/proc-deleting-user.adoc"}


def test_an_assembly_with_prose_of_its_own_and_a_page_of_a_title_alone_are_stored():
    with_prose = ASSEMBLY.replace("= Managing users\n", "= Managing users\n\nYou can manage users.\n")
    chunks = chunk_document(read_asciidoc(with_prose), words, ChunkSettings.for_limit(64))
    assert [chunk.text.count("You can manage users.") for chunk in chunks] == [1]
    stub = "= Deleting a user\n\n// to be written\n"  # includes nothing: its title is all it says
    assert [
        chunk.heading for chunk in chunk_document(read_asciidoc(stub), words, ChunkSettings.for_limit(64))
    ] == ["Deleting a user"]


def test_an_include_line_inside_a_listing_includes_the_file_it_names():
    text = "= Example\n\n[source,java]\n----\ninclude::Example.java[tags=main]\n----\n"
    document = read_asciidoc(text)
    assert document.includes == {5}
    assert chunk_document(document, words, ChunkSettings.for_limit(64)) == []


def test_a_page_holding_private_use_characters_keeps_them_and_reads_its_passthroughs():
    """Icon fonts put their glyphs in Unicode's private use area, where the reader holds a
    passthrough's text while the rest of its line is read: such a line is read whole, not taken
    for its own marks (the file was "damaged")."""
    page = "= Icons\n\nThe glyph \ue0007\ue001 marks +x+ here.\n"
    document = read_document("icons.adoc", page.encode())
    assert document.lines[2] == "The glyph \ue0007\ue001 marks +x+ here."
    assert visible_text("a \ue0000\ue001 mark +x+", {}) == "a \ue0000\ue001 mark +x+", "no glyph swapped"
