"""Plain-text changelogs and NEWS files: the entries their formats declare, read as headings.

A plain-text file (``NEWS``, ``ChangeLog``, ``changelog.Debian.gz``) has no markup a reader knows,
but a changelog's format declares where each of its entries opens, and a search that knows the
entries can send a question naming a version to its entry (:mod:`indexer.search.name_rules`, which
knows these openings as a changelog's entries). Each rule reads a format's own entry syntax, never a
file's name:

- **Debian changelog** (``debian/changelog``, ``changelog.Debian``, ``NEWS.Debian``): an entry opens
  with ``package (version) distribution(s); urgency=...`` at column 0 and closes with its trailer,
  `` -- Name <email>  date`` (Debian Policy, section 4.4, as ``dpkg-parsechangelog`` reads it).
  Its openings are headings where the text holds such a trailer too: a README quoting one opening
  line is no changelog.
- **GNU ChangeLog**: an entry opens with its date at column 0, two spaces, its author and their
  address in angle brackets (``2022-09-02  Jim Meyering  <meyering@fb.com>``; older: ``Tue Sep  6
  12:00:00 1994  Name  <email>``), its items indented on the lines after it.
- **Emacs outline** (GNU NEWS: coreutils, grep, sed, findutils...): ``*`` at column 0 opens a
  section, ``**`` one inside it, and so on. Outline mode is a mode a file declares, not a way of
  writing lists: its ``*`` lines are headings only where the file says it is in outline mode (its
  first line's ``-*- outline -*-``, or ``mode: outline`` among the local variables at its end) or
  holds an entry in the words of gnulib's NEWS template (``* Noteworthy changes in release 3.8
  (2022-09-06) [stable]``; older, ``* Major changes in release 4.7.0``). A README's ``* item``
  list declares neither, and stays a list. A title stands on its line alone: a ``*`` line whose
  text runs on into the next, indented line, or that a ``*`` line of its own level follows at
  once, is an item of a list written at column 0 (coreutils' NEWS before 5.0), not a section;
  an entry in gnulib's words is one, even with no text of its own (releases listed together).
- **systemd's NEWS**: an entry opens with ``CHANGES WITH 252:`` at column 0.
- **Dated releases**: an entry opens with a line at column 0 (or a few spaces in, where the file's
  other entries are too, maybe after a page break: GNU recutils' ``^L Version 1.9 (16 April
  2022)``) that holds a version and its date,
  maybe after ``Version``, ``v`` or the project's name (``Version 4.9.2 - 2020-08-13``, ``4.9.2
  (2020-08-13)``, ``v1.2.0 - 2021-01-01``, ``1.0 - May 2, 2020``), or its date and then its
  version (``2023-01-08 (2.9.0dev.12)``), its items on the lines after it
  (``*``, ``-``, ``+`` or indented). The style is the file's where two such entries or more are in
  it: then a line written as they are but without its date (``Version 0.4.5``, the oldest
  releases') opens an entry too.

Each line is read once by a regular expression of bounded parts, from its start: linear in the
file's size whatever it holds.
"""

from __future__ import annotations

import re
from collections import Counter

from indexer.formats.document import Heading

__all__ = ["changelog_headings"]

#: A Debian changelog entry's first line, as ``dpkg-parsechangelog`` reads it: the package, its
#: version in parentheses, one or more distributions, then ``;`` and its ``key=value`` fields.
_DEBIAN_OPENING = re.compile(
    r"[a-z0-9][a-z0-9+.-]{0,99} \([^()\s]{1,200}\)(?:[ \t]+[a-z0-9+./-]{1,100}){1,20};[^\n]{0,500}",
    re.IGNORECASE,
)
#: A Debian changelog entry's trailer: `` -- Name <email>  date``, two spaces before the date.
_DEBIAN_TRAILER = re.compile(r" -- [^<>\n]{1,300}<[^<>\n]{1,300}>  \S")
#: A GNU ChangeLog entry's first line: its date (ISO, or as older Emacs wrote it), two spaces or a
#: tab, its author and an address in angle brackets.
_CHANGELOG_DATE = re.compile(
    r"(?:\d{4}-\d{2}-\d{2}|[a-z]{3} [a-z]{3} [ \d]?\d \d{2}:\d{2}(?::\d{2})?(?: [a-z]{1,5})? \d{4})"
    r"(?:  |\t)[ \t]*[^<>\s][^<>\n]{0,200}<[^<>\s]{1,200}>[ \t]*$",
    re.IGNORECASE,
)
#: An outline heading: stars at column 0, then its title.
_OUTLINE_HEADING = re.compile(r"(\*{1,8})[ \t]+(\S[^\n]*)")
#: An entry in the words of gnulib's NEWS template (``* Noteworthy changes in release ?.?
#: (????-??-??) [?]``) or its older ones (``* Major changes in release 4.7.0, 2019-08-29``).
_GNU_NEWS_ENTRY = re.compile(r"\* (?:[a-z-]{1,30} ){0,3}changes in release \d", re.IGNORECASE)
#: The part of a first line between ``-*-`` marks that sets Emacs's mode: ``outline``, or
#: ``mode: outline`` among other variables.
_MODE_MARK = "-*-"
#: How far from its end Emacs looks for a file's local variables.
_LOCAL_VARIABLES_CHARS = 3000
#: systemd's NEWS entry: ``CHANGES WITH 252:`` (``CHANGES WITH 252 🎃:`` too).
_SYSTEMD_ENTRY = re.compile(r"CHANGES WITH \d[^\n:]{0,100}:[ \t]*$")
_MONTH = r"(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]{0,6}\.?"
#: A release's date as changelogs write it: ISO (``2020-08-13``, ``2020/08/13``), or in words
#: (``May 2, 2020``, ``2 May 2020``).
_DATE = (
    r"(?:\d{4}[-/]\d{1,2}[-/]\d{1,2}"
    rf"|{_MONTH}[ \t]+\d{{1,2}}(?:st|nd|rd|th)?,?[ \t]+\d{{4}}"
    rf"|\d{{1,2}}[ \t]+{_MONTH}[ \t]+\d{{4}})"
)
#: A release's opening line: what comes before its version (``Version``, ``Release``, the project's
#: name, or nothing), its version (dotted numbers, maybe after ``v``, maybe a pre-release after
#: them), then maybe its date after a separator or in brackets, and a short remark (``[stable]``).
_RELEASE = re.compile(
    r"(?P<lead>(?:[a-z][\w.+-]{0,60}[ \t]+)?)"
    r"v?(?P<version>\d{1,9}(?:\.\d{1,9}){0,5})(?:[-.+~]?[a-z][\w.]{0,20})?"
    rf"(?:(?:[ \t]*[-\u2013\u2014:,/][ \t]*|[ \t]*[(\[][ \t]*|[ \t]+)(?P<date>{_DATE})[)\]]?"
    r"(?:[ \t]+\S[^\n]{0,100})?)?[ \t]*$",
    re.IGNORECASE,
)
#: A release's opening line that gives its date first and its version after it, in brackets or
#: after a separator (lynx's ``2023-01-08 (2.9.0dev.12)``, ``2021-01-01 - v1.2.0``).
_DATED_RELEASE = re.compile(
    rf"(?P<date>{_DATE})(?:[ \t]*[(\[][ \t]*|[ \t]*[-\u2013\u2014:,][ \t]*|[ \t]+)"
    r"(?P<lead>(?:version[ \t]+|release[ \t]+)?)"
    r"v?(?P<version>\d{1,9}(?:\.\d{1,9}){0,5})(?:[-.+~]?[a-z][\w.]{0,20})?[ \t]*[)\]]?"
    r"(?:[ \t]+\S[^\n]{0,100})?[ \t]*$",
    re.IGNORECASE,
)
#: A version after ``Version`` or ``Release`` may be one number; alone, a number is a list's item.
_VERSION_WORDS = ("version", "release")
#: The fewest dated entries that make a file's style: one may be a sentence that looks like it.
_MIN_DATED = 2
#: The most spaces a release's line is written in (GNU recutils' NEWS: one), where the file's other
#: releases are too: deeper, it is a list's item's text.
MAX_RELEASE_INDENT = 3
#: A form feed: a page break, as the GNU Coding Standards have a file's pages start (recutils' NEWS
#: opens each release's page with one); it is no text, and takes no column.
PAGE_BREAK = "\f"
#: How an item of a release's list starts: a bullet, or the indent of its text.
_ITEM = re.compile(r"[*+\u2022-][ \t]|[ \t]+\S")


def changelog_headings(lines: list[str]) -> tuple[list[Heading], dict[int, str]]:
    """The headings of the entries ``lines`` declare as one of the formats in this module's docstring,
    in order of their lines (none for a file that declares none), and the text a reader reads of a
    heading's line where its markup makes it differ from the line (an outline heading without its
    stars: :attr:`indexer.formats.document.Document.read_as`)."""
    headings: dict[int, Heading] = {}
    read_as: dict[int, str] = {}
    debian = any(_DEBIAN_TRAILER.match(line) for line in lines)
    outline = _declares_outline(lines)
    releases = _dated_releases(lines)
    for number, line in enumerate(lines, start=1):
        if not line[:1].strip() and number not in releases:
            continue  # every entry opens at column 0, but a file's releases written a few spaces in
        star = _OUTLINE_HEADING.match(line) if outline else None
        if star and (_GNU_NEWS_ENTRY.match(line) or _stands_alone(lines, number, star)):
            title = " ".join(star.group(2).split())
            headings[number] = Heading(number, len(star.group(1)), title)
            read_as[number] = title
        elif (debian and _DEBIAN_OPENING.match(line)) or _SYSTEMD_ENTRY.match(line):
            headings[number] = Heading(number, 1, " ".join(line.split()))
        elif _CHANGELOG_DATE.match(line) and _items_follow(lines, number):
            headings[number] = Heading(number, 1, " ".join(line.split()))
        elif number in releases:
            headings[number] = Heading(number, 1, " ".join(line.split()))
    return list(headings.values()), read_as


def _dated_releases(lines: list[str]) -> set[int]:
    """The lines (1-based) that open a release's entry (this module's docstring) where the file
    holds :data:`_MIN_DATED` or more as far in with a version, its date and items after it: those,
    and the lines written as they are (as far in, a version after the same word, ``Version``),
    dated or not, that text follows (``bugs fixed:``; an old release's one remark)."""
    # a release's line: how far in it is written and what its version is written after, lower-cased
    found_lines: dict[int, tuple[int, str]] = {}
    styles: set[tuple[int, str]] = set()
    dated = Counter[int]()  # how many are dated with items after them, by how far in they are
    for number, line in enumerate(lines, start=1):
        paged = line.lstrip(PAGE_BREAK)  # a page break shows nothing: the line starts after it
        text = paged.lstrip(" ")
        indent = len(paged) - len(text)
        opens = indent <= MAX_RELEASE_INDENT and text[:1].isalnum()
        found = (_RELEASE.match(text) or _DATED_RELEASE.match(text)) if opens else None
        if found is None:
            continue
        lead = " ".join(found["lead"].split()).lower()
        if "." not in found["version"] and lead not in _VERSION_WORDS:
            continue  # a number alone is a list's item or a section's
        found_lines[number] = (indent, lead)
        if found["date"] is not None and _items_follow_bullet(lines, number):
            dated[indent] += 1
            styles.add((indent, lead))
    return {
        number
        for number, (indent, lead) in found_lines.items()
        if dated[indent] >= _MIN_DATED and (indent, lead) in styles and _text_follows(lines, number)
    }


def _declares_outline(lines: list[str]) -> bool:
    """Whether ``lines`` declare Emacs's outline mode (its first line's mode mark, or the local
    variables at its end) or hold an entry in the words of gnulib's NEWS template."""
    if lines and lines[0].count(_MODE_MARK) >= 2:
        variables = lines[0].split(_MODE_MARK)[1].split(";")
        if any(variable.strip().lower() in ("outline", "mode: outline") for variable in variables):
            return True
    if any(_GNU_NEWS_ENTRY.match(line) for line in lines):
        return True
    return _local_mode_is_outline(lines)


def _local_mode_is_outline(lines: list[str]) -> bool:
    """Whether the local variables at the end of ``lines`` (a ``Local Variables:`` line within the
    last characters Emacs reads, then lines with the same prefix up to ``End:``) set outline mode."""
    tail: list[str] = []
    characters = 0
    for line in reversed(lines):
        characters += len(line) + 1
        if characters > _LOCAL_VARIABLES_CHARS:
            break
        tail.append(line)
    tail.reverse()
    prefix = None
    for line in tail:
        if prefix is None:
            if "Local Variables:" in line:
                prefix = line[: line.index("Local Variables:")]
            continue
        if not line.startswith(prefix):
            continue
        variable = "".join(line[len(prefix) :].split()).lower()
        if variable == "end:":
            break
        if variable == "mode:outline":
            return True
    return False


def _stands_alone(lines: list[str], number: int, star: re.Match[str]) -> bool:
    """Whether the outline heading ``star`` on line ``number`` (1-based) is a title alone on its
    line: the next line is not indented text (the item's text running on), nor a ``*`` line of
    its level or above (the next item)."""
    if number == len(lines) or not lines[number].strip():
        return True
    following = _OUTLINE_HEADING.match(lines[number])
    if following is not None:
        return len(following.group(1)) > len(star.group(1))
    return bool(lines[number][:1].strip())


def _items_follow_bullet(lines: list[str], number: int) -> bool:
    """Whether the first line with text after line ``number`` (1-based) is a list's item
    (:data:`_ITEM`), as a release's changes are."""
    for index in range(number, len(lines)):  # by index, as :func:`_items_follow`
        if lines[index].strip():
            return _ITEM.match(lines[index]) is not None
    return False


def _text_follows(lines: list[str], number: int) -> bool:
    """Whether a line with text comes after line ``number`` (1-based)."""
    return any(lines[index].strip() for index in range(number, len(lines)))


def _items_follow(lines: list[str], number: int) -> bool:
    """Whether the first line with text after line ``number`` (1-based) is indented, as a GNU
    ChangeLog entry's items are."""
    for index in range(number, len(lines)):  # by index: a slice would copy the rest at each entry
        if lines[index].strip():
            return not lines[index][:1].strip()
    return False
