"""Plain-text changelogs and NEWS files read by the entries their formats declare: a Debian
changelog's, a GNU ChangeLog's, GNU NEWS in outline mode, systemd's NEWS; a README's list stays a list."""

from __future__ import annotations

import gzip

import pytest
from conftest import write
from helpers import HashBackend, fastest_seconds, grows_linearly

from indexer import Index
from indexer.formats import heading_titles, read_document
from indexer.formats.changes import changelog_headings

DEBIAN_CHANGELOG = """\
tool (2.1-2) unstable; urgency=medium

  * Fix the postinst script when the cache directory is missing (Closes: #1001)

 -- Jane Doe <jane@example.org>  Tue, 20 Sep 2022 11:27:27 -0400

tool (2.1-1) unstable; urgency=low

  * New upstream version
    - adds the --zero option

 -- Jane Doe <jane@example.org>  Mon, 22 Jun 2020 14:39:28 -0400

tool (1:2.0~rc1-1) experimental; urgency=low

  * Upload the release candidate.

 -- Jane Doe <jane@example.org>  Sun, 21 Jun 2020 10:00:00 -0400
"""

GNU_NEWS = """\
GNU tool NEWS                                    -*- outline -*-

* Noteworthy changes in release 3.8 (2022-09-02) [stable]

** Changes in behavior

  The -P option is now based on PCRE2 instead of the older PCRE.

** Bug fixes

  The -s option no longer suppresses "binary file matches" messages.
  [bug introduced in tool 3.5]

* Noteworthy changes in release 3.7 (2021-08-14) [stable]

** Bug fixes

  Preprocessing N patterns no longer takes quadratic time.
"""

README = """\
This is GNU tool, the fastest tool in the west.

Features:
* searches files for patterns
* colors its matches
** and counts them

See the file NEWS for a description of major changes in this release.
"""


def test_a_debian_changelog_s_entries_are_headings_at_their_lines():
    document = read_document("changelog.Debian.gz", gzip.compress(DEBIAN_CHANGELOG.encode()))
    assert [(heading.line, heading.level, heading.title) for heading in document.headings] == [
        (1, 1, "tool (2.1-2) unstable; urgency=medium"),
        (7, 1, "tool (2.1-1) unstable; urgency=low"),
        (14, 1, "tool (1:2.0~rc1-1) experimental; urgency=low"),
    ]
    assert document.lines[6] == "tool (2.1-1) unstable; urgency=low"  # line numbers true to the file


def test_one_debian_opening_line_without_an_entry_s_trailer_is_no_heading():
    quoted = "Upgrading:\n\ntool (2.1-1) unstable; urgency=low\n\nis the first version with the option.\n"
    assert read_document("README", quoted.encode()).headings == []


def test_gnu_news_in_outline_mode_has_its_star_levels_as_headings():
    document = read_document("NEWS", GNU_NEWS.encode())
    assert [(heading.line, heading.level, heading.title) for heading in document.headings] == [
        (3, 1, "Noteworthy changes in release 3.8 (2022-09-02) [stable]"),
        (5, 2, "Changes in behavior"),
        (9, 2, "Bug fixes"),
        (14, 1, "Noteworthy changes in release 3.7 (2021-08-14) [stable]"),
        (16, 2, "Bug fixes"),
    ]
    assert document.read_as[5] == "Changes in behavior"  # read without its stars, shown as written
    assert document.lines[4] == "** Changes in behavior"


@pytest.mark.parametrize(
    "text",
    [
        # gnulib's NEWS template, without the mode line (GNU Wget's NEWS)
        "GNU Tool NEWS -- history of user-visible changes.\n\n* Noteworthy changes in release 1.21.3\n\n"
        "** Add option to select TLS 1.3\n",
        # the mode set among the local variables at the file's end
        "Tool NEWS\n\n* Version 1.2\n\n** Add option to select TLS 1.3\n\n"
        "Local Variables:\nmode: outline\nfill-column: 76\nEnd:\n",
        # the mode line among other variables
        "-*- mode: outline; coding: utf-8 -*-\n\n* Version 1.2\n\n** Add option to select TLS 1.3\n",
    ],
    ids=["gnulib-wording", "local-variables", "mode-line"],
)
def test_outline_mode_is_what_the_file_declares_by_its_mode_or_gnulib_s_wording(text):
    headings = read_document("NEWS", text.encode()).headings
    assert [heading.level for heading in headings] == [1, 2], headings
    assert headings[1].title == "Add option to select TLS 1.3"


def test_items_written_at_column_0_in_an_outline_file_stay_items():
    text = (
        "GNU tool NEWS    -*- outline -*-\n\n"
        "* Major changes in release 5.97 (2006-06-24) [stable]\n"
        "* Major changes in release 5.96 (2006-05-22) [stable]\n\n"
        "[see the branch for details]\n\n"
        "* Major changes in release 4.5 (2001-01-01)\n\n"
        "* du no longer fails with more than one DIR argument when any but the last\n"
        "  does not contain a slash\n"
        "* printf no longer treats \\x specially\n"
        "* seq accepts a field width of '0'\n\n"
        "** Bug fixes\n"
        "The -s option works again.\n"
    )
    headings = read_document("NEWS", text.encode()).headings
    assert [(heading.line, heading.level) for heading in headings] == [
        (3, 1),
        (4, 1),
        (8, 1),
        (13, 1),
        (15, 2),
    ]
    # an item's text runs on indented, or the next item follows at once; the last one alone is a title
    assert headings[3].title == "seq accepts a field width of '0'"
    assert headings[4].title == "Bug fixes"  # a section's text may follow its title at once


def test_a_readme_s_star_list_stays_a_list(tmp_path):
    assert read_document("README", README.encode()).headings == []
    # a mode line that sets another mode declares no outline
    assert read_document("README", ("-*- text -*-\n" + README).encode()).headings == []
    write(tmp_path / "docs" / "README", README)
    with Index.open(tmp_path / "index.db", backend=HashBackend()) as index:
        assert index.build(tmp_path / "docs", warn=lambda message: None).exit_code == 0
        hits = index.search("colors its matches", k=5, mode="keyword", min_score=0)
    assert hits and all(hit.heading == "" for hit in hits), [hit.heading for hit in hits]


def test_a_gnu_changelog_s_dated_entries_are_headings():
    text = (
        "2022-04-15  Jane Doe  <jane@example.org>\n\n\tversion 9.1\n\t* NEWS: Record release date.\n\n"
        "Tue Sep  6 12:00:00 1994  Richard Roe  <roe@example.org>\n\n"
        "\t* tail.c (main): Detect a closed pipe.\n"
    )
    headings = read_document("ChangeLog", text.encode()).headings
    assert [(heading.line, heading.title) for heading in headings] == [
        (1, "2022-04-15 Jane Doe <jane@example.org>"),
        (6, "Tue Sep 6 12:00:00 1994 Richard Roe <roe@example.org>"),
    ]
    # a dated line that no indented items follow is a line of prose, not an entry
    prose = "2022-04-15  Jane Doe  <jane@example.org>\nwrote the first release.\n"
    assert read_document("README", prose.encode()).headings == []


def test_systemd_s_news_entries_are_headings():
    text = "systemd System and Service Manager\n\nCHANGES WITH 252 \U0001f383:\n\n        * Remove x.\n\n"
    text += "CHANGES WITH 251:\n\n        * Add y.\n"
    headings = read_document("NEWS", text.encode()).headings
    assert [(heading.line, heading.title) for heading in headings] == [
        (3, "CHANGES WITH 252 \U0001f383:"),
        (7, "CHANGES WITH 251:"),
    ]


def test_a_chunk_of_a_changelog_read_alone_has_its_entries_titles():
    # the search reads the headings inside a chunk that packs short entries (heading_titles)
    titles = heading_titles("changelog.Debian.gz", DEBIAN_CHANGELOG)
    assert titles[:2] == ["tool (2.1-2) unstable; urgency=medium", "tool (2.1-1) unstable; urgency=low"]
    assert heading_titles("NEWS", GNU_NEWS)[0].startswith("Noteworthy changes in release 3.8")
    assert heading_titles("tool.py", GNU_NEWS) == []  # source code is read by its grammar


@pytest.mark.parametrize(
    "hostile",
    [
        lambda n: "a (" + "1" * n + "\n -- x <y>  z\n",
        lambda n: "a (1) " + "b " * n + "\n -- x <y>  z\n",
        lambda n: "2022-01-01  " + "a " * n + "\n\tb\n",
        lambda n: "2022-01-01  a\n" * n,
        lambda n: "* Noteworthy " + "changes " * n + "\n",
        lambda n: "CHANGES WITH 1" + " " * n + "x\n",
        lambda n: "Local Variables:\n" + "mode: text\n" * n,
        lambda n: "-*-" * n + "\n",
        lambda n: "2023-01-08 (" + "1." * n + "\n",
    ],
    ids=["debian-version", "debian-distributions", "changelog-author", "changelog-dates",
         "gnu-wording", "systemd", "local-variables", "mode-marks", "date-first"],
)  # fmt: skip
@pytest.mark.slow
def test_reading_a_changelog_takes_time_linear_in_its_size_whatever_it_holds(hostile):
    def seconds(repeats: int) -> float:
        lines = hostile(repeats).split("\n")
        return fastest_seconds(lambda: changelog_headings(lines), repeats=3)

    assert grows_linearly(seconds, 10_000, 80_000, 24)  # quadratic would be 64


@pytest.mark.parametrize("mode", ["hybrid", "vector", "keyword"])
def test_a_question_naming_a_version_finds_that_versions_news_entry_first(tmp_path, mode):
    folder = tmp_path / "doc"
    bullets = "".join(
        f"  The -{letter} option now reports the troublesome input file name on failure.\n\n"
        for letter in "abcdefgh"
    )
    news = "GNU tool NEWS    -*- outline -*-\n\n" + "".join(
        f"* Noteworthy changes in release {version} (2021-0{number}-01) [stable]\n\n** Bug fixes\n\n{bullets}"
        for number, version in enumerate(("3.9", "3.8", "3.7", "3.6"), start=1)
    )
    write(folder / "NEWS", news)
    write(folder / "README", README + "\nThe option -s reports matches in binary files as warnings.\n")
    with Index.open(tmp_path / "index.db", backend=HashBackend()) as index:
        assert index.build(folder, warn=lambda message: None).exit_code == 0
        entry = index.search("what changed in tool 3.7", k=3, mode=mode, min_score=0)
        readme = index.search("which option reports matches in binary files", k=3, mode=mode, min_score=0)
    assert entry[0].path == "NEWS", [(hit.path, hit.heading) for hit in entry]
    assert entry[0].heading.startswith("Noteworthy changes in release 3.7 (2021-03-01)"), entry[0].heading
    # a question naming no version is ranked by its words (the test's vectors are hashes of words,
    # which say nothing of meaning: the vector search alone is left out)
    if mode != "vector":
        assert readme[0].path == "README", [(hit.path, hit.heading) for hit in readme]


@pytest.mark.parametrize("mode", ["hybrid", "vector", "keyword"])
def test_a_short_debian_entry_packed_with_the_one_before_it_is_found_for_its_version(tmp_path, mode):
    folder = tmp_path / "doc"
    long_entry = "".join(  # the words of the question, and its version's numbers as a library's
        f"  * Changed the build on architecture {n} for libfoo 2.4 (Closes: #{n})\n" for n in range(12)
    )
    trailer = " -- Jane Doe <jane@example.org>  Mon, 22 Jun 2020 14:39:28 -0400\n\n"
    entries = [
        ("3.0-1", long_entry),
        ("2.5-2", "  * Upload to unstable.\n"),
        ("2.4-1", "  * Add a flag.\n"),
        ("2.3-1", long_entry),
    ]
    text = "".join(
        f"tool ({version}) unstable; urgency=low\n\n{body}\n{trailer}" for version, body in entries
    )
    write(folder / "changelog.Debian", text)
    with Index.open(tmp_path / "index.db", backend=HashBackend(max_tokens=128)) as index:
        assert index.build(folder, warn=lambda message: None).exit_code == 0
        holding = [
            hit
            for hit in index.search("2.4", k=50, mode="keyword", min_score=0)
            if "tool (2.4-1)" in hit.text
        ]
        first = index.search("what changed in 2.4", k=3, mode=mode, min_score=0)[0]
    assert holding and not holding[0].heading.startswith("tool (2.4-1)"), "packed under the entry before it"
    assert "tool (2.4-1)" in first.text, (first.heading, first.text)


#: lftp's upstream changelog, as its Debian package ships it (``changelog.gz``), its head and its
#: oldest entries: dated releases, then releases that were given no date.
DATED_RELEASES = """\
Version 4.9.2 - 2020-08-13

* mkdir: fixed exit code with -f option.
* ftp: made ftp:use-pret setting tri-boolean.

Version 4.9.0 - 2019-12-21

* ftp: enabled TLS by default.

Version 0.14.2 - 1998-03-03

bugs fixed:
	Thanks to Jeffrey Nickelson for this fix.

Version 0.4.5

* This was a release with no date.
"""


def test_releases_written_with_their_version_and_date_are_entries():
    document = read_document("changelog.gz", gzip.compress(DATED_RELEASES.encode()))
    assert [(heading.line, heading.title) for heading in document.headings] == [
        (1, "Version 4.9.2 - 2020-08-13"),
        (6, "Version 4.9.0 - 2019-12-21"),
        (10, "Version 0.14.2 - 1998-03-03"),
        (15, "Version 0.4.5"),  # written as the dated ones are, in a file of them
    ]
    other_styles = "4.9.2 (2020-08-13)\n- a\n\n4.9.1 (2020-01-15)\n- b\n\nv1.2.0 - May 2, 2020\n- c\n"
    assert [heading.line for heading in read_document("NEWS", other_styles.encode()).headings] == [1, 4, 7]
    date_first = (
        "2023-01-08 (2.9.0dev.12)\n* add a rewind() call\n\n2022-12-28 (2.9.0dev.11)\n* update URLs\n"
    )
    assert [heading.title for heading in read_document("CHANGES", date_first.encode()).headings] == [
        "2023-01-08 (2.9.0dev.12)",
        "2022-12-28 (2.9.0dev.11)",
    ]


@pytest.mark.parametrize(
    "text",
    [
        "Version 4.9.2 - 2020-08-13\n\n* one release alone: maybe a sentence that looks like one\n",
        "1.5,2020-01-01,alpha\n1.6,2020-01-02,beta\n1.7,2020-01-03,gamma\n",  # data
        "3.0 2020-01-01 started\n3.1 2020-01-02 stopped\n",  # a log's lines, no items after them
        "1.2.3.4 - - [10/Oct/2000:13:55:36] GET /\n1.2.3.5 - - [10/Oct/2000:13:55:37] GET /\n",
    ],
)
def test_a_version_and_a_date_that_do_not_recur_with_items_open_no_entry(text):
    assert read_document("NEWS", text.encode()).headings == []


RECUTILS_NEWS = """\
This NEWS file records noteworthy changes, very tersely.

\f Version 1.9 (16 April 2022)
* Utilities:
  . Fix a segfault that occured when csv2rec was presented with
    invalid data.

\f Version 1.8 (3 January 2019)
* Utilities:
  . Fix the build of readrec with recent bash headers.

\f Version 0.9
* The first release.
"""


def test_releases_written_a_space_in_after_a_page_break_are_entries():
    document = read_document("NEWS.gz", gzip.compress(RECUTILS_NEWS.encode()))
    assert [(heading.line, heading.title) for heading in document.headings] == [
        (3, "Version 1.9 (16 April 2022)"),
        (8, "Version 1.8 (3 January 2019)"),
        (12, "Version 0.9"),  # written as the dated ones are
    ]


def test_a_version_and_a_date_deeper_than_releases_are_written_are_a_list_s_text():
    items = "* Fixes:\n    Version 1.2 (4 May 2020)\n    - a\n    Version 1.3 (5 May 2020)\n    - b\n"
    assert read_document("NEWS", items.encode()).headings == []
    mixed = " Version 1.2 (4 May 2020)\n* a\n\nVersion 1.3 (5 May 2020)\n* b\n"  # no style of the file's
    assert read_document("NEWS", mixed.encode()).headings == []
