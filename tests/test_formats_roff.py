"""Man pages in roff read as ``man`` shows them: sections as headings, NAME as the names a page
defines, escapes and fonts as their text, line for line with the source."""

from __future__ import annotations

import gzip

import pytest
from helpers import HashBackend, fastest_seconds, grows_linearly

from indexer import Index, corpus
from indexer.chunking import ChunkSettings, chunk_document
from indexer.formats import UnreadableFile, read_document
from indexer.formats.roff import read_roff

GZIP_PAGE = r""".\" the gzip page, shortened
.de Xx
.ds Dt \\$2
..
.Xx Time-stamp: "2019-12-29"
.if \n[.g] \{\
.  am URL
.    ad l
.  .
.  LINKSTYLE blue R < >
.\}
.TH GZIP 1 local
.SH NAME
gzip, gunzip, zcat \- compress or expand files
.SH SYNOPSIS
.B gzip
.RB [ " \-acdfhklLnNrtvV19 " ]
.SH DESCRIPTION
The
.B gzip
command reduces the size of the named files \(em see
.BR zcat (1),
\fBzless\fR(1) and \*(lqpigz\*(rq\[aq]s notes.
.if n .ds Q "
.ig
this never shows
..
.SS "Advanced usage"
.nf
gzip \-c file > file.gz
.fi
.PP
Done.
"""

LS_PAGE = r""".Dd $Mdocdate: March 31 2022 $
.Dt LS 1
.Os
.Sh NAME
.Nm ls ,
.Nm dir
.Nd list directory contents
.Sh SYNOPSIS
.Nm
.Op Fl a
.Op Ar file ...
.Sh DESCRIPTION
.Bl -tag -width Ds
.It Fl v
Print each name as
.Xr ssh 1 ,
does.
.El
.Bd -literal
ls -la /tmp
.Ed
"""


def test_a_man_page_is_read_as_man_shows_it_line_for_line():
    document = read_roff(GZIP_PAGE)
    source = GZIP_PAGE.rstrip("\n").split("\n")
    assert len(document.lines) == len(source)  # a citation's lines are the source's
    shown = [line for line in document.lines if line]
    assert shown == [
        "GZIP(1)",
        "NAME",
        "gzip, gunzip, zcat - compress or expand files",
        "SYNOPSIS",
        "gzip",
        "[ -acdfhklLnNrtvV19 ]",
        "DESCRIPTION",
        "The",
        "gzip",
        "command reduces the size of the named files \u2014 see",
        "zcat(1),",
        "zless(1) and \u201cpigz\u201d's notes.",
        "Advanced usage",
        "gzip -c file > file.gz",
        "Done.",
    ]
    assert [(heading.level, heading.title) for heading in document.headings] == [
        (1, "GZIP(1)"),
        (2, "NAME"),
        (2, "SYNOPSIS"),
        (2, "DESCRIPTION"),
        (3, "Advanced usage"),
    ]
    assert document.definitions == {source.index(r"gzip, gunzip, zcat \- compress or expand files") + 1: (
        "gzip", "gunzip", "zcat")}  # fmt: skip
    code = source.index(r"gzip \-c file > file.gz") + 1
    assert document.literal == [(code, code)]


def test_an_mdoc_page_is_read_with_the_macros_it_calls():
    document = read_roff(LS_PAGE)
    shown = [line for line in document.lines if line]
    assert shown == [
        "LS(1)",
        "NAME",
        "ls,",
        "dir",
        "\u2014 list directory contents",
        "SYNOPSIS",
        "ls",
        "[-a]",
        "[file ...]",
        "DESCRIPTION",
        "-v",
        "Print each name as",
        "ssh(1),",
        "does.",
        "ls -la /tmp",
    ]
    assert sorted(document.definitions.values()) == [("-v",), ("ls", "dir")]  # an item's tag, NAME
    assert [heading.title for heading in document.headings] == ["LS(1)", "NAME", "SYNOPSIS", "DESCRIPTION"]
    literal = LS_PAGE.split("\n").index("ls -la /tmp") + 1
    assert document.literal == [(literal, literal)]


def test_a_list_item_s_tag_declares_the_names_it_writes_as_code():
    page = "\n".join(
        [
            ".TH SYSTEMD.EXEC 5",
            ".SH OPTIONS",
            ".PP",
            "\\fIPrivateTmp=\\fR",  # DocBook's variable list: a paragraph's one line, then its indent
            ".RS 4",
            "Takes a boolean argument\\&.",
            ".RE",
            ".PP",
            "A paragraph of one line in roman.",
            ".RS 4",
            ".RE",
            ".TP",
            "\\fB\\-v\\fR, \\fB\\-\\-verbose\\fR",
            "Print more.",
            ".TP",
            "Example",  # a tag in roman: a word, as prose has it
            "Something.",
            '.IP "\\fB\\-\\-color\\fR[=\\fIWHEN\\fR]" 4',
            ".Bl -tag",
            ".It Fl q",
            ".El",
            '.IP "\\fBauth\\ users\\fP"',  # a setting's name of words, joined by unbreakable spaces
            ".TP",
            "\\fBhosts\\ allow\\fP",
            '.IP "\\fBread only\\fP"',  # a plain space: a phrase
            '.IP "\\fBhosts\\ deny\\fP" 4',  # an indent after it, as Pod::Man writes one
            ".IP \\fBmax\\ connections\\fP",
        ]
    )
    assert read_roff(page).definitions == {
        4: ("PrivateTmp",),
        13: ("-v", "--verbose"),
        18: ("--color",),
        20: ("-q",),
        22: ("auth users",),
        24: ("hosts allow",),
        26: ("hosts deny",),
        27: ("max connections",),
    }


def test_a_tag_s_bold_words_before_a_value_in_italic_are_the_names_it_declares():
    page = "\n".join(
        [
            ".TH IP-ROUTE 8",
            ".SH OPTIONS",
            ".TP",
            '.BI table " TABLEID"',  # a keyword in bold, its value in italic
            ".TP",
            '.BI "mtu lock" " MTU"',  # keywords typed together: one name
            ".TP",
            "\\fBrealm\\fR \\fIREALMID\\fR",  # the same in font escapes
            ".TP",
            '.BI \\-c " file"',
            ".TP",
            '.BI netns " { PID | NAME } "',
            ".TP",
            '.BR up " and " down',  # a roman word after the bold: a phrase
            ".TP",
            ".BR ls (1)",  # a reference to a page
            ".TP",
            '.B "read only"',  # bold with no value after it: a phrase
            ".TP",
            '.IR file " name"',  # italic first: a value, no name
            ".TP",
            '.BI "Note: " text',  # bold words no command line types
            ".TP",
            '.BI "This option sets the " FILE',  # a sentence
            ".TP",
            "\\f[CR]hash keys\\f[R] \\f[I]KEYS\\f[R]",  # pandoc's constant width is typed as shown
        ]
    )
    assert read_roff(page).definitions == {
        4: ("table",),
        6: ("mtu lock",),
        8: ("realm",),
        10: ("-c",),
        12: ("netns",),
        26: ("hash keys",),
    }


def test_an_option_in_bold_declares_its_name_whatever_font_its_value_is_in():
    # logwatch(8) writes its options' values in roman: .IP "\fB--detail\fR level"
    page = "\n".join(
        [
            ".TH LOGWATCH 8",
            ".SH OPTIONS",
            '.IP "\\fB--detail\\fR level"',
            "This is the detail level of the report.",
            '.IP "\\fB--hostlimit\\fR host1,host2"',
            "Limit report to hostname - host1, host2.",
            '.IP "\\fB--archives\\fR"',
            "Search the archives too.",
            ".TP",
            "\\fB-v\\fR turns on all the messages this page describes below",  # a sentence, no value
            "More.",
        ]
    )
    assert read_roff(page).definitions == {3: ("--detail",), 5: ("--hostlimit",), 7: ("--archives",)}


def test_an_option_whose_value_is_a_list_declares_its_long_name_too():
    # help2man copies a GNU tool's --help: a value that takes a list ends with ",..." after its comma
    page = "\n".join(
        [
            '.TH RECSEL "1" "April 2022" "recsel 1.9" "User Commands"',
            ".SH DESCRIPTION",
            ".TP",
            "\\fB\\-G\\fR, \\fB\\-\\-group\\-by\\fR=\\fI\\,FIELD\\/\\fR,...",
            "group records by the specified fields.",
            ".TP",
            "\\fB\\-n\\fR, \\fB\\-\\-number\\fR=\\fI\\,NUM\\/\\fR,\u2026",
            "select specific records by position.",
            ".TP",
            "\\fB\\-a\\fR, ...",  # no value before it: nothing to repeat, and not a name
            "more.",
        ]
    )
    assert read_roff(page).definitions == {4: ("-G", "--group-by"), 7: ("-n", "--number")}


SSH_PAGE = r""".Dd $Mdocdate: July 1 2024 $
.Dt SSH 1
.Os
.Sh NAME
.Nm ssh
.Nd OpenSSH remote login client
.Sh DESCRIPTION
.Bl -tag -width Ds
.It Fl J Ar destination
Connect to the target host by first making a
.Nm
connection to the jump host described by
.Ar destination .
.It Fl W Ar host : Ns Ar port
Requests that standard input and output on the client be forwarded to
.Ar host .
.It Fl t Cm ecdsa | ed25519 | rsa
Specifies the type of key to create.
.It Fl b , Fl Fl brief
Do not prepend filenames.
.It Cm s | Cm S
seconds
.It Xo Ic get
.Op Fl afpR
.Ar remote-path
.Xc
Retrieve the remote-path and store it on the local machine.
.It Cm MaxStartups Ns = Ns Ar start : Ns Ar rate
A keyword with its value.
.It Pa ~/.ssh/config
A file.
.El
"""


def test_an_mdoc_item_declares_the_names_its_macros_mark_not_their_values():
    document = read_roff(SSH_PAGE)
    source = SSH_PAGE.split("\n")
    tags = {source[number - 1]: names for number, names in document.definitions.items() if number > 6}
    assert tags == {
        ".It Fl J Ar destination": ("-J",),
        ".It Fl W Ar host : Ns Ar port": ("-W",),
        ".It Fl t Cm ecdsa | ed25519 | rsa": ("-t",),  # the key types are the flag's values
        ".It Fl b , Fl Fl brief": ("-b", "--brief"),
        ".It Cm s | Cm S": ("s", "S"),
        ".It Xo Ic get": ("get",),
        ".It Cm MaxStartups Ns = Ns Ar start : Ns Ar rate": ("MaxStartups",),
    }
    assert document.lines[source.index(".It Fl J Ar destination")] == "-J destination"


def test_mdoc_macros_print_what_mdoc_sets_them_to():
    page = "\n".join(
        [
            ".Dd $Mdocdate: July 1 2024 $",
            ".Dt SSH-AGENT 1",
            ".Sh NAME",
            ".Nm ssh-agent",
            ".Nd OpenSSH authentication agent",
            ".Sh SYNOPSIS",
            ".Op Fl c | s",
            ".Op Fl w Ar local_tun Ns Op : Ns Ar remote_tun",
            ".Sh DESCRIPTION",
            "If this is set to",
            ".Dq yes ,",
            "the escape is",
            ".Ql ~ ) .",
            "It listens on a",
            ".Ux Ns -domain",
            "socket; with",
            ".Fl b , Fl Fl brief",
            "or",
            ".Sq Bq 3 ) ,",
            "in the background,",
            ".Nm .",
            ".Sh HISTORY",
            "It first appeared in",
            ".Ox 2.8 ,",
            ".Pf non- Ox",
            "and",
            ".Bx 4.4 .",
        ]
    )
    shown = [line for line in read_roff(page).lines if line]
    assert shown[shown.index("SYNOPSIS") + 1 :] == [
        "[-c | -s]",  # Fl dashes each of its arguments
        "[-w local_tun[:remote_tun]]",
        "DESCRIPTION",
        "If this is set to",
        "\u201cyes\u201d,",  # punctuation that ends the line goes after the quotes
        "the escape is",
        "\u2018~\u2019).",
        "It listens on a",
        "UNIX-domain",
        "socket; with",
        "-b, --brief",
        "or",
        "\u2018[3]\u2019),",
        "in the background,",
        "ssh-agent.",  # the page's name, then the full stop
        "HISTORY",
        "It first appeared in",
        "OpenBSD 2.8,",
        "non-OpenBSD",
        "and",
        "4.4BSD.",
    ]


def test_references_to_other_pages_alone_are_a_list_of_them():
    index = read_roff(
        ".TH SYSTEMD.DIRECTIVES 7\n.SH UNIT DIRECTIVES\n.PP\n\\fIPrivateTmp=\\fR\n.RS 4\n"
        "\\fBsystemd.exec\\fR(5)\n.RE\n.SH SEE ALSO\n\\fBls\\fR(1), \\fBdir\\fR(1).\n"
        "Read the manual(7) first.\n"
    )
    assert index.linked_entries == {6: len("systemd.exec(5)"), 9: len("ls(1),dir(1).")}
    items = "".join(f".PP\n\\fIDirective{n}=\\fR\n.RS 4\n\\fBsystemd.exec\\fR(5)\n.RE\n" for n in range(40))
    page = read_roff(".TH SYSTEMD.DIRECTIVES 7\n.SH UNIT DIRECTIVES\n" + items)
    chunks = chunk_document(page, lambda texts: [len(text.split()) for text in texts], ChunkSettings(60, 0))
    assert len(chunks) > 1
    assert all(chunk.is_contents for chunk in chunks)  # each is names and the pages they link
    assert "Directive7" in chunks[0].names


def test_what_a_terminal_shows_of_tables_branches_and_pod_s_verbatim_blocks():
    page = read_roff(
        "\n".join(
            [
                ".TH FFI 3",
                ".SH NAME",
                "frobnicate",
                ".PP",
                "This page is about the tool \\- really.",  # past the entry's paragraph: no name
                ".SH TABLE",
                ".TS",
                "allbox tab(:);",
                "lB lB.",
                "Setting:Meaning",
                "_",
                "T{",
                "\\fBKillMode=\\fR",
                "T}:T{",
                "how to stop",
                "T}",
                ".TE",
                ".ie n \\{\\",
                "on a terminal",
                ".\\}",
                ".el \\{\\",
                "on paper",
                ".\\}",
                ".Vb 2",
                "\\&  use Dpkg;",
                ".Ve",
                "\\[uD800]\\N'55296'\\[u00E9]",  # a lone surrogate is no character
            ]
        )
    )
    shown = [line for line in page.lines if line]
    assert shown == [
        "FFI(3)", "NAME", "frobnicate", "This page is about the tool - really.", "TABLE",
        "Setting  Meaning", "KillMode=", "how to stop", "on a terminal", "  use Dpkg;", "\u00e9",
    ]  # fmt: skip
    assert page.definitions == {}
    assert page.literal == [(25, 25)]
    mdoc = read_roff(".Dd x\n.Dt FFI 3\n.Sh NAME\n.Nm FFI\n.Nd a library\n.Sh SYNOPSIS\n.Nm\n")
    assert [line for line in mdoc.lines if line][-1] == "FFI"  # the first .Nm's name, not the title's


def test_a_file_named_as_a_man_page_that_is_no_roff_is_read_as_lines():
    rendered = "LS(1)\n\nNAME\n       ls - list directory contents\n\nDESCRIPTION\n       List files.\n"
    document = read_document("ls.1", rendered.encode())
    assert document.lines == rendered.rstrip("\n").split("\n")
    assert document.headings == []
    assert list(document.definitions.values()) == [("ls",)]  # the rendered NAME section, as before


def test_an_alias_page_shows_nothing_and_a_compressed_page_is_read_as_its_roff():
    alias = read_document("zcat.1.gz", gzip.compress(b".so man1/gzip.1\n"))
    assert not any(line.strip() for line in alias.lines)
    page = read_document("man1/gzip.1.gz", gzip.compress(GZIP_PAGE.encode()))
    assert page.headings == read_roff(GZIP_PAGE).headings


def test_the_walk_takes_man_pages_by_their_section():
    taken = ["man1/ls.1", "man1/ls.1.gz", "man3/Pod::Usage.3perl.gz", "man1/openssl.1ssl.gz", "doc/tool.man"]
    left = [
        "notes.0", "man/figure.png", "data.10", "python-build/3.10.1", "lib/2.7.18.gz", "lib/libz.so.1",
        "log/app.log.1", "backup.7z", "clip.3gp",
    ]  # fmt: skip
    assert [name for name in taken if not corpus.is_text_name(name)] == []
    assert [name for name in left if corpus.is_text_name(name)] == []


@pytest.mark.parametrize(
    "hostile",
    [
        lambda n: "\\" * 2 * n,
        lambda n: "\\(" * n,
        lambda n: "\\[" * n,
        lambda n: "\\f[" * n,
        lambda n: "\\h'" * n,
        lambda n: "\\*[" * n,
        lambda n: '.B "' + 'a "' * n,
        lambda n: ".BR " + "a " * n,
        lambda n: ".Op " + "Fl Op Ns " * n,
        lambda n: ".de X\n" * n,
        lambda n: ".SH NAME\n" + "a \\- b\n" * n,
        lambda n: "a(1)." * n + "!",  # references that almost make a line of them
        lambda n: ".TS\ntab(:);\nl l.\n" + "T{\na:b\nT}:T{\n" * n + ".TE",
        lambda n: ".el \\{\\{" + "\\}" * n,
    ],
    ids=["backslashes", "specials", "brackets", "fonts", "quoted", "strings", "quotes", "words", "mdoc",
         "definitions", "names", "references", "table", "branches"],
)  # fmt: skip
@pytest.mark.slow
def test_reading_a_page_takes_time_linear_in_its_size_whatever_it_holds(hostile):
    def seconds(repeats: int) -> float:
        text = ".TH X 1\n" + hostile(repeats) + "\n"
        return fastest_seconds(lambda: read_roff(text), repeats=3)

    assert grows_linearly(seconds, 5_000, 40_000, 24)  # quadratic would be 64


def test_a_binary_file_named_as_a_man_page_is_refused_as_binary():
    with pytest.raises(UnreadableFile, match="binary") as refused:
        read_document("ls.1", b".TH LS 1\n\x00\x01")
    assert refused.value.status == "binary"


@pytest.mark.heavy
def test_a_folder_of_man_pages_is_searched_by_its_words_and_names(tmp_path):
    folder = tmp_path / "man"
    (folder / "man1").mkdir(parents=True)
    (folder / "man1" / "gzip.1.gz").write_bytes(gzip.compress(GZIP_PAGE.encode()))
    (folder / "man1" / "zcat.1.gz").write_bytes(gzip.compress(b".so man1/gzip.1\n"))
    (folder / "man1" / "ls.1").write_text(LS_PAGE)
    with Index.open(tmp_path / "index.db", backend=HashBackend(max_tokens=512)) as index:
        report = index.build(folder, warn=lambda message: None)
        bold = index.search("zless pigz", k=1, mode="keyword", min_score=0)
        named = index.search("gunzip", k=2, mode="keyword", min_score=0)
    assert (report.files_added, report.files_skipped) == (2, 1)  # the alias page is empty
    assert bold[0].path == "man1/gzip.1.gz"
    assert "\\f" not in bold[0].text and "zless(1)" in bold[0].text
    assert named[0].path == "man1/gzip.1.gz"
    assert named[0].heading.startswith("GZIP(1)")


#: lftp(1), as its Debian package ships it, shortened: its commands written as synopses (``.B``
#: and the arguments' macros), its settings as ``.TP`` items of a scope and key and their value's
#: type.
LFTP_PAGE = r""".TH lftp 1 "12 Jan 2020"
.SH DESCRIPTION
.SS Commands
.P
.B open
.RI [ OPTS ]
.I site
.PP
Select a server by host name, URL or bookmark.
Options:
.Sp
.RS
.TS
l	lx	.
\-e \fIcmd\fP	execute the command just after selecting the server
.TE
.RE
.P
.B pget
.RI [ OPTS ]
.I rfile
.RI [ "\fB-o\fP lfile" ]

Gets the specified file using several connections.

.B lcd
\fIldir\fP
.PP
Change current local directory.

.B version
.PP
Print \fBlftp\fR version.
.PP
.B lftp
has the following settable variables:
.SS Settings
.TP
.BR xfer:clobber \ (boolean)
when off, get commands will not overwrite existing files.
.TP
.BR cache:expire " (time interval)"
Positive cache entries expire in this time interval.
.TP
.BR dns:order " (list of protocol names)"
Sets the order of DNS queries.
.TP
.B net:max-retries
the maximum number of sequential tries of an operation.
"""


def test_a_setting_s_tag_of_a_scope_and_key_declares_it_whatever_its_value_s_type():
    definitions = read_roff(LFTP_PAGE).definitions
    assert [definitions[line] for line in (39, 42, 45, 48)] == [
        ("xfer:clobber",),
        ("cache:expire",),
        ("dns:order",),
        ("net:max-retries",),
    ]


def test_a_command_s_synopsis_declares_it_opens_its_entry_and_reads_as_one_line():
    document = read_roff(LFTP_PAGE)
    commands = {line: names for line, names in document.definitions.items() if line < 37}
    assert commands == {5: ("open",), 19: ("pget",), 26: ("lcd",), 31: ("version",)}
    assert document.block_starts == [5, 19, 26, 31]
    assert document.read_as[19] == "pget [OPTS] rfile [-o lfile]"  # as man fills the paragraph
    assert document.lines[18:22] == ["pget", "[OPTS]", "rfile", "[-o lfile]"]  # cited line for line
    assert {20, 21, 22} <= document.markup
    assert 35 not in document.definitions  # ``.B lftp`` starting a sentence declares nothing


@pytest.mark.parametrize("mode", ["hybrid", "keyword"])
def test_a_one_name_question_of_a_scope_and_key_finds_the_setting_s_entry_first(tmp_path, mode):
    changes = "".join(
        f"Version 1.{n} - 2020-01-{n + 10}\n\n* xfer:clobber: fixed case {n}.\n\n" for n in range(9)
    )
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "lftp.1.gz").write_bytes(gzip.compress(LFTP_PAGE.encode()))
    (tmp_path / "docs" / "changelog").write_text(changes)
    with Index.open(tmp_path / "index.db", backend=HashBackend()) as index:
        assert index.build(tmp_path / "docs", warn=lambda message: None).exit_code == 0
        hits = index.search("xfer:clobber", k=5, mode=mode, min_score=0)
    assert hits[0].path.endswith("lftp.1.gz") and "xfer:clobber" in hits[0].text
