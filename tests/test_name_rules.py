"""The name rules' knowledge of the entries plain-text changelog formats declare: a Debian
changelog's, GNU NEWS's, systemd's and a GNU ChangeLog's openings are a changelog's entries on any page."""

from __future__ import annotations

import pytest
from helpers import fastest_seconds

from indexer.records import StoredChunk
from indexer.search.name_rules import declared_versions, entry_opening, lists_names, opens_entry


def chunk(heading: str, path: str = "NEWS") -> StoredChunk:
    return StoredChunk(id=1, root="r", path=path, start_line=1, end_line=2, heading=heading, text="")


@pytest.mark.parametrize(
    ("heading", "versions"),
    [
        ("coreutils (9.1-1) unstable; urgency=low", [(9, 1)]),
        ("openssh (1:9.2p1-2+deb12u2) bookworm-security; urgency=medium", [(9, 2)]),
        ("systemd (252.39-1~deb12u2) bookworm; urgency=medium", [(252, 39)]),
        ("tool (2.0~rc1-1) experimental; urgency=low", [(2, 0, -1, 1)]),
        ("Noteworthy changes in release 3.8 (2022-09-02) [stable] > Bug fixes", [(3, 8)]),
        ("Major changes in release 4.7.0, 2019-08-29 > Improvements", [(4, 7, 0)]),
        ("CHANGES WITH 252 \U0001f383:", [(252,)]),
    ],
)
def test_the_entries_plain_text_changelogs_declare_are_their_versions_entries(heading, versions):
    assert declared_versions(chunk(heading)) == versions
    assert lists_names(chunk(heading), {"cp", "copies"})  # a list a question that asks for none skips
    assert not lists_names(chunk(heading), {"what", "changed", "cp"})


def test_a_gnu_changelog_s_dated_entry_is_a_changelog_s_entry_without_a_version():
    for title in (
        "2022-04-15 Jane Doe <jane@example.org>",
        "Tue Sep 6 12:00:00 1994 Richard Roe <roe@example.org>",
    ):
        assert opens_entry(title) and entry_opening(title, False) is None
        assert lists_names(chunk(title, "ChangeLog"), {"tail", "pipe"})
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
    assert not opens_entry(heading.split(" > ")[-1])
    assert not lists_names(chunk(heading, "README.md"), {"install"})


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

    assert seconds(len(heading)) / seconds(len(heading) // 8) < 24  # quadratic would be 64
