"""GNU Info manuals read as ``info`` shows them: node titles as headings, definitions and table items
as the names they declare, menus and indexes as lists of other nodes, ``info``'s own tables hidden."""

from __future__ import annotations

import gzip

import pytest
from helpers import HashBackend, fastest_seconds, grows_linearly

from indexer import Index, corpus
from indexer.chunking import ChunkSettings, chunk_document
from indexer.formats import UnreadableFile, head_check, read_document
from indexer.formats.info import read_info, references_read

#: A manual as makeinfo writes it, shortened: a preamble, nodes, a node without a title, a
#: definition wrapped on two lines, a table of options, a menu, an index with its marker, and the
#: tables ``info`` reads for itself.
MANUAL = (
    "This is tool.info, produced by makeinfo version 6.8 from tool.texi.\n"
    "\n"
    "INFO-DIR-SECTION Basics\n"
    "START-INFO-DIR-ENTRY\n"
    "* tool: (tool).        Frobnicate files.\n"
    "END-INFO-DIR-ENTRY\n"
    "\n"
    "\x1f\n"
    "File: tool.info,  Node: Top,  Next: Invoking,  Up: (dir)\n"
    "\n"
    "GNU Tool\n"
    "********\n"
    "\n"
    "This manual documents the frobnicator.\n"
    "\n"
    "* Menu:\n"
    "\n"
    "* Invoking::                    How to run it.\n"
    "* Library: Calling the library.  The functions it offers.\n"
    "\n"
    "\x1f\n"
    "File: tool.info,  Node: Invoking,  Next: Calling the library,  Prev: Top,  Up: Top\n"
    "\n"
    "1 Invoking ‘tool’\n"
    "*****************\n"
    "\n"
    "‘tool’ frobnicates the files it is given.\n"
    "\n"
    "‘-m’\n"
    "‘--mirror’\n"
    "     Frobnicate every file twice, as a mirror does.\n"
    "\n"
    "‘--ignore=PATTERN’\n"
    "     Leave out the files whose names match PATTERN.\n"
    "\n"
    "‘-a’, ‘--all’\n"
    "     Frobnicate hidden files too.\n"
    "\n"
    "     tool --all ~\n"
    "\n"
    "‘-n MAX-ARGS’\n"
    "     Use at most MAX-ARGS arguments.\n"
    "\n"
    "‘SIGINT’, ‘SIGTERM’\n"
    "     Stop frobnicating.\n"
    "\n"
    "'-c --stdout'\n"
    "     Write to the standard output.\n"
    "\n"
    "Command    outcome\n"
    "-----------------------------------\n"
    "tool a     a frobnicated\n"
    "\n"
    '     \x00\x08[image src="flow.png" alt="How files flow"\x00\x08]\n'
    "\n"
    "\x1f\n"
    "File: tool.info,  Node: Exit status,  Prev: Invoking,  Up: Invoking\n"
    "\n"
    "The exit status is 0 when every file was frobnicated.\n"
    "\n"
    "\x1f\n"
    "File: tool.info,  Node: Calling the library,  Next: Index,  Prev: Invoking,  Up: Top\n"
    "\n"
    "2 Calling the library\n"
    "*********************\n"
    "\n"
    "2.1 Frobnicating a buffer\n"
    "=========================\n"
    "\n"
    " -- Function: const char * frob_buffer\n"
    "          (char *BUFFER, size_t LENGTH)\n"
    "     Frobnicate LENGTH bytes of BUFFER in place.\n"
    "\n"
    " -- Variable: int frob_level\n"
    " -- Test: -newer file\n"
    " -- Command: split [ (width|max) (height|max) ]\n"
    "     How deep the frobnication goes.\n"
    "\n"
    " -- Meta struct: ‘struct frob_hash’ name size\n"
    "     A hash's attributes.\n"
    "\n"
    "\x1f\n"
    "File: tool.info,  Node: Index,  Prev: Calling the library,  Up: Top\n"
    "\n"
    "Index\n"
    "*****\n"
    "\n"
    "\x00\x08[index\x00\x08]\n"
    "* Menu:\n"
    "\n"
    "* --all:                                 Invoking.              (line 13)\n"
    "* frob_buffer:                           Frobnicating a buffer.\n"
    "                                                                 (line 6)\n"
    "* keyedit:addkey:                        Invoking.\n"
    + "".join(f"* frob_level <{n}>:                Frobnicating a buffer.  (line {n})\n" for n in range(1, 9))
    + "\n"
    "\x1f\n"
    "Tag Table:\n"
    "Node: Top\x7f250\n"
    "Node: Invoking\x7f520\n"
    "\x1f\n"
    "End Tag Table\n"
    "\n"
    "\x1f\n"
    "Local Variables:\n"
    "coding: utf-8\n"
    "End:\n"
)
SOURCE = MANUAL.replace("\x00\x08", "").rstrip("\n").split("\n")


def _line(text: str) -> int:
    return SOURCE.index(text) + 1


def _count_words(texts: list[str]) -> list[int]:
    return [len(text.split()) for text in texts]


def _document():
    return read_document("info/tool.info.gz", gzip.compress(MANUAL.encode(), mtime=0))


def test_a_manual_s_nodes_are_headed_by_their_titles_line_for_line():
    document = _document()
    assert len(document.lines) == len(SOURCE)  # a citation's lines are the file's
    assert [(heading.level, heading.title) for heading in document.headings] == [  # not a table's header
        (0, "GNU Tool"),  # the Top node's title is the manual's, above its chapters
        (1, "1 Invoking ‘tool’"),
        (2, "Exit status"),  # no title of its own: its name, under the node its Up names
        (1, "2 Calling the library"),
        (2, "2.1 Frobnicating a buffer"),
        (1, "Index"),
    ]
    invoking = next(heading for heading in document.headings if heading.title == "1 Invoking ‘tool’")
    node_line = _line("File: tool.info,  Node: Invoking,  Next: Calling the library,  Prev: Top,  Up: Top")
    assert (invoking.line, invoking.last_line) == (node_line - 1, node_line + 3)  # from its separator
    untitled = next(heading for heading in document.headings if heading.title == "Exit status")
    assert untitled.line == _line("File: tool.info,  Node: Exit status,  Prev: Invoking,  Up: Invoking")
    assert document.lines[untitled.line - 1] == "Exit status"
    assert _line("********") in document.markup  # an underline is no text


def test_a_part_s_first_nodes_are_headed_under_the_chapter_an_earlier_part_began():
    """A large manual is split into parts; ``tool.info-2`` continues chapter 2, whose title is in
    ``tool.info-1``: its nodes are headed under the node their ``Up`` names."""
    part = (
        "\x1f\nFile: tool.info,  Node: Hashing,  Next: Index,  Prev: Frobnicating,  Up: Calling\n\n"
        "2.2 Hashing\n===========\n\nHash a buffer.\n\n"
        "\x1f\nFile: tool.info,  Node: Salting,  Prev: Hashing,  Up: Calling\n\n"
        "2.3 Salting\n===========\n\nSalt it first.\n\n"
        "\x1f\nFile: tool.info,  Node: Index,  Prev: Salting,  Up: Top\n\n"
        "3 Index\n*******\n\n"
    )
    headings = read_info(part).headings
    assert [(heading.level, heading.title) for heading in headings] == [
        (1, "Calling"),
        (2, "2.2 Hashing"),
        (2, "2.3 Salting"),
        (1, "3 Index"),
    ]
    assert headings[0].line == headings[1].line == 1
    whole = [(heading.level, heading.title) for heading in _document().headings]
    assert ("Calling" not in {title for _, title in whole}) and whole[0] == (0, "GNU Tool")  # one file


def test_what_info_never_shows_shows_nothing():
    shown = "\n".join(_document().lines)
    for hidden in ("\x1f", "File:", "Next:", "Tag Table", "Node: Top", "Local Variables", "coding: utf-8",
                   "START-INFO-DIR-ENTRY", "[index]", "* Menu:", "\x00"):  # fmt: skip
        assert hidden not in shown
    assert "* tool: (tool).        Frobnicate files." in shown  # the manual's directory entry is its words
    assert "     How files flow" in shown.split("\n")  # an image shows its alt text


def test_a_cross_reference_reads_as_a_rendered_manual_prints_it():
    text = (
        "\x1f\nFile: a.info,  Node: Top,  Up: (dir)\n\nA\n*\n\n"
        "Print them with -fprint (*note Print File Name::).  *Note\n"
        "Invoking find::, for the rest.  Also see *note Common\n"
        "options::.  *Note Regular Expressions: (grep)Regular\n"
        "Expressions.  Keep a: b and c:: d as they are.\n"
        "\n"
        "* Menu:\n\n* Invoking find::  How to run it.\n"
    )
    assert read_info(text).lines[6:13] == [
        "Print them with -fprint (see Print File Name).  See",
        "Invoking find, for the rest.  Also see Common",  # no "see see"; the name wraps
        "options.  See Regular Expressions: (grep)Regular",  # a label's node names where to look
        "Expressions.  Keep a: b and c:: d as they are.",
        "",
        "",
        "",
    ]
    assert read_info(text).lines[-1] == "* Invoking find::  How to run it."  # a menu's entry, no reference
    assert read_info(text).read_as == {  # the model reads the node's own words, not those it points at
        7: "Print them with -fprint ().",
        8: ", for the rest. Also see",
        9: ".",  # a label's node is the reference's too
        10: ". Keep a: b and c:: d as they are.",
    }


def test_what_is_no_reference_stays_and_a_wrapped_name_alone_is_read_as_nothing():
    lines = ["*Note:* do not run it as root.", "foresee *note Jobs::.", "See *note", "Job", "Control::."]
    shown, read_as, unread = references_read(lines)
    assert shown == ["*Note:* do not run it as root.", "foresee see Jobs.", "See", "Job", "Control."]
    assert read_as == {2: "foresee .", 3: "See", 5: "."}
    assert unread == {4}  # the line is only the name the reference points at


def test_definitions_and_table_items_declare_what_they_define():
    definitions = _document().definitions
    assert definitions == {
        _line("‘-m’"): ("-m",),
        _line("‘--mirror’"): ("--mirror",),
        _line("‘--ignore=PATTERN’"): ("--ignore",),
        _line("‘-a’, ‘--all’"): ("-a", "--all"),
        _line("‘-n MAX-ARGS’"): ("-n",),  # a placeholder of several words
        _line("‘SIGINT’, ‘SIGTERM’"): ("SIGINT", "SIGTERM"),  # two names, not a name and its value
        _line("'-c --stdout'"): ("-c", "--stdout"),
        _line(" -- Function: const char * frob_buffer"): ("frob_buffer",),  # wrapped before its parameters
        _line(" -- Variable: int frob_level"): ("frob_level",),  # after its type
        _line(" -- Test: -newer file"): ("-newer",),  # before its argument
        _line(" -- Command: split [ (width|max) (height|max) ]"): ("split",),  # choices, no parameters
        _line(" -- Meta struct: ‘struct frob_hash’ name size"): ("frob_hash",),  # before its attributes
    }


def test_menus_and_indexes_are_links_to_other_nodes():
    document = _document()
    linked = document.linked_entries
    menu_entry = _line("* Invoking::                    How to run it.")
    assert linked[menu_entry] == len("*Invoking::")  # its name; the description is the node's words
    assert linked[_line("* Library: Calling the library.  The functions it offers.")] == len(
        "*Library:Callingthelibrary."
    )
    index_entry = _line("* --all:                                 Invoking.              (line 13)")
    assert linked[index_entry] == len("*--all:Invoking.(line13)")  # an index's entries, whole
    assert linked[index_entry + 2] == len("(line6)")
    assert linked[_line("* keyedit:addkey:                        Invoking.")] == len(
        "*keyedit:addkey:Invoking."
    )
    directory_entry = _line("* tool: (tool).        Frobnicate files.")
    assert directory_entry not in linked  # not in a menu
    chunks = chunk_document(document, _count_words, ChunkSettings(30, 0))
    index_chunk = next(chunk for chunk in chunks if "frob_buffer:" in chunk.text)
    assert index_chunk.is_contents
    assert not next(chunk for chunk in chunks if "--mirror" in chunk.text).is_contents


def test_an_info_file_s_markers_are_no_binary_but_a_nul_elsewhere_is():
    marked = b"File: a.info,  Node: Index\n\x00\x08[index\x00\x08]\n"
    check = head_check("a.info")
    assert check is not None and not check(marked)
    assert not check(marked + b"\x00")  # a marker the head's end cuts in two
    assert check(marked + b"\x00\x01")
    with pytest.raises(UnreadableFile, match="binary"):
        read_document("a.info", b"\x1f\nFile: a.info,  Node: Top\n\x00\x01")


def test_a_file_named_info_that_holds_no_node_is_read_as_lines():
    module = "name = Views\ndescription = Create customized lists.\ncore = 7.x\n"  # a Drupal module's .info
    document = read_info(module)
    assert document.lines == module.rstrip("\n").split("\n")
    assert document.headings == [] and document.definitions == {}


def test_the_walk_takes_info_files_and_their_parts():
    taken = ["info/find.info.gz", "info/find.info-1.gz", "info/find.info-12.gz", "doc/tool.info"]
    left = ["info/dir", "info/gnupg-module-overview.png", "info.png", "tool.information", "find.info-x.gz"]
    assert [name for name in taken if not corpus.is_text_name(name)] == []
    assert [name for name in left if corpus.is_text_name(name)] == []


@pytest.mark.parametrize(
    "hostile",
    [
        lambda n: "\x1f\n" * n,
        lambda n: "\x1f\nFile: a,  Node: b" + ",  Up: c" * n,
        lambda n: "x\n*\n" * n,
        lambda n: " -- Function: f\n" + "          a\n" * n,
        lambda n: "‘-a’\n" * n + "     b\n",
        lambda n: "* Menu:\n" + "* a: " * n + "\n",
        lambda n: "* Menu:\n* a:" + " " * (20 * n) + "\n",
        lambda n: "‘" * n + "’\n     b\n",
        lambda n: "*note a: " * n + "\n" + ":: *Note\n" * n,
    ],
    ids=[
        "separators",
        "pointers",
        "underlines",
        "signature",
        "tags",
        "menu",
        "menu spaces",
        "quotes",
        "references",
    ],  # fmt: skip
)
@pytest.mark.slow
def test_reading_a_manual_takes_time_linear_in_its_size_whatever_it_holds(hostile):
    def seconds(repeats: int) -> float:
        text = "\x1f\nFile: a.info,  Node: Top\n\n" + hostile(repeats) + "\n"
        return fastest_seconds(lambda: read_info(text), repeats=3)

    assert grows_linearly(seconds, 5_000, 40_000, 24)  # quadratic would be 64


@pytest.mark.heavy
def test_a_folder_of_info_manuals_is_searched_by_its_words_and_names(tmp_path):
    folder = tmp_path / "info"
    folder.mkdir()
    (folder / "tool.info.gz").write_bytes(gzip.compress(MANUAL.encode(), mtime=0))
    (folder / "dir").write_text("This is the file .../info/dir.\n")
    with Index.open(tmp_path / "index.db", backend=HashBackend(max_tokens=48)) as index:
        report = index.build(folder, warn=lambda message: None)
        option = index.search("--mirror", k=1, mode="keyword", min_score=0)
        words = index.search("frobnicate hidden files", k=1, mode="keyword", min_score=0)
    assert (report.files_added, report.files_failed) == (1, 0)
    assert option[0].path == "tool.info.gz"
    assert "‘--mirror’" in option[0].text and "Tag Table" not in option[0].text
    assert option[0].heading.endswith("1 Invoking ‘tool’")
    assert "Frobnicate hidden files too." in words[0].text
