"""The name rules' knowledge of the entries plain-text changelog formats declare: a Debian
changelog's, GNU NEWS's and systemd's openings are a version's entries on any page, a Debian
revision one of its upstream version's; a GNU ChangeLog's dated entries are a list of names."""

from __future__ import annotations

import pytest
from helpers import fastest_seconds, grows_linearly

from indexer.records import StoredChunk
from indexer.search.name_rules import (
    asked_versions,
    declared_versions,
    entry_opening,
    is_entry_of,
    lists_names,
    opens_listed_entry,
    spelled_version,
    version_entries_first,
    version_owners,
)


def chunk(heading: str, path: str = "NEWS") -> StoredChunk:
    return StoredChunk(id=1, root="r", path=path, start_line=1, end_line=2, heading=heading, text="")


@pytest.mark.parametrize(
    ("heading", "versions"),
    [
        ("coreutils (9.1-1) unstable; urgency=low", [(9, 1, -4, 1)]),
        ("openssh (1:9.2p1-2+deb12u2) bookworm-security; urgency=medium", [(9, 2, -4, 2)]),
        ("systemd (252.39-1~deb12u2) bookworm; urgency=medium", [(252, 39, -4, 1)]),
        ("tool (2.0~rc1-1) experimental; urgency=low", [(2, 0, -1, 1, -4, 1)]),
        ("dpkg (1.21.22) unstable; urgency=medium", [(1, 21, 22)]),  # a native package: no revision
        ("Noteworthy changes in release 3.8 (2022-09-02) [stable] > Bug fixes", [(3, 8)]),
        ("Major changes in release 4.7.0, 2019-08-29 > Improvements", [(4, 7, 0)]),
        ("systemd 252 > CHANGES WITH 252 \U0001f383:", [(252,)]),
    ],
)
def test_the_entries_plain_text_changelogs_declare_are_their_versions_entries(heading, versions):
    assert declared_versions(chunk(heading)) == versions
    # notes for a package's users, ranked by their words as a page is, not put after the others
    # (a title that is a list's, ``CHANGES WITH 252:`` alone, is one: declares_list)
    assert not lists_names(chunk(heading), {"cp", "copies"})


def test_a_debian_revision_is_one_of_its_upstream_versions_entries_after_the_release():
    assert asked_versions("what changed in 8.32-4?") == {(8, 32, -4, 4)}
    assert asked_versions("from 3.0-3.2") == set()  # a range, no version
    assert version_owners("what changed in coreutils 8.32-4") == {"coreutils"}
    assert spelled_version((8, 32, -4, 4)) == "8.32-4"
    news, debian, other = 1, 2, 3
    declared = {news: [(8, 32)], debian: [(8, 32, -4, 4)], other: [(8, 32, -4, 3)]}
    # asked for the upstream version: its NEWS entry, then the Debian revisions of it
    assert version_entries_first([debian, other, news], declared, {(8, 32)})[0] == [news, debian, other]
    # asked for the Debian revision: its entry alone
    assert version_entries_first([other, news, debian], declared, {(8, 32, -4, 4)})[0][0] == debian
    assert not is_entry_of(declared[news], {(8, 32, -4, 4)})


def test_a_gnu_changelog_s_dated_entry_is_a_list_of_names_without_a_version():
    for title in (
        "2022-04-15 Jane Doe <jane@example.org>",
        "Tue Sep 6 12:00:00 1994 Richard Roe <roe@example.org>",
    ):
        assert opens_listed_entry(title) and entry_opening(title, False) is None
        assert lists_names(chunk(title, "ChangeLog"), {"tail", "pipe"})
        assert not lists_names(chunk(title, "ChangeLog"), {"what", "changed", "tail"})
        assert declared_versions(chunk(title, "ChangeLog")) == []


@pytest.mark.parametrize(
    "heading",
    [
        "Python (3.8)",
        "Install > Debian (bookworm)",
        "Bug fixes",
        "Noteworthy features",
        "2022-04-15 meeting notes",
    ],
)
def test_headings_that_only_look_like_entries_open_none(heading):
    assert entry_opening(heading.split(" > ")[-1], False) is None
    assert not lists_names(chunk(heading, "README.md"), {"install"})


def test_a_plain_text_format_s_entry_is_read_as_it_spells_it_and_no_looser():
    for title in (
        "Python (3.10) support; notes",  # no urgency field: no Debian entry
        "Install (2.0) first; then",
        "Changes with 3 new options",  # not in systemd's capitals
        "What changes in release 4 means",  # not gnulib's words
    ):
        assert entry_opening(title, False) is None, title


HOSTILE_HEADINGS = [
    "a (" + "1." * 100_000 + ") b;",
    "a (1) " + "b " * 100_000,
    "noteworthy " * 100_000,
    "2022-01-01 " + "a " * 100_000,
    "changes with " + "1." * 100_000,
]


@pytest.mark.parametrize(
    "heading", HOSTILE_HEADINGS, ids=["debian", "distributions", "gnu", "dated", "systemd"]
)
def test_reading_a_declared_entry_s_heading_is_linear_in_its_size(heading):
    def seconds(size: int) -> float:
        stored = chunk(heading[:size])
        return fastest_seconds(lambda: (lists_names(stored, {"x"}), declared_versions(stored)))

    assert grows_linearly(seconds, len(heading) // 8, len(heading), 24)  # quadratic would be 64


@pytest.mark.parametrize(
    ("title", "is_list"),
    [
        ("Gin ChangeLog > Gin v1.3.0", True),  # a project's name before a changelog's title
        ("Django 4.2 release notes > Bugfixes", True),
        ("Changes > 2.0", True),
        ("CREATE INDEX > Parameters", False),  # a manual's command: no list of names
        ("A brief history of the project", False),
        ("Keep a Changelog > Why", False),  # a guide: more than a project's name before it
        ("Generating the changelog", False),
        ("Rollup 4.0 changelog > Features", True),
    ],
)
def test_a_title_that_ends_with_a_changelog_s_title_declares_a_list(title, is_list):
    assert lists_names(chunk(title, "docs/page.md"), {"binding", "form"}) is is_list
    assert not lists_names(chunk(title, "docs/page.md"), {"what", "changed", "binding"})
