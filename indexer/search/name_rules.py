"""The rules that read a question against the names documents declare: a question that is one name
(:func:`asked_names`) puts first the pages known by it (:func:`page_names`, :func:`named_first`); a
question most of whose words a section declares as definitions puts that section first
(:func:`defining_first`); a page that lists names (:func:`lists_names`: an index, a changelog, a
contents list) goes after the others unless the question asks for such a list, and then a question
naming a version puts first the entries its changelog declares for that version
(:func:`version_entries_first`).

Apart from the evidence and its scores: what a document declares does not fade with the question's
length, nor depend on how often other pages use a word. The names a document's markup declares are
found when it is read (:mod:`indexer.formats.definitions`) and stored with its chunks; this module
reads them back at query time, without reading any chunk's text again.
"""

from __future__ import annotations

import re
from collections.abc import Sequence, Set
from typing import NamedTuple

from indexer.formats.compressed import uncompressed_name
from indexer.formats.definitions import NEGATION
from indexer.records import HEADING_SEPARATOR, StoredChunk
from indexer.search.query import STOPWORDS

#: A query that is one name as developers type it: an identifier, maybe with its namespace or a call's
#: parentheses (``Path``, ``std::io::Stdout``, ``os.path.join``, ``add_library``, ``open()``), or an
#: instance method as Ruby's, Java's and JavaScript's docs write it (``Base#call``), maybe of words
#: joined by hyphens (``prettier-ignore``, ``max-width``), maybe a command's option (``--write``,
#: ``-v``), as a manual's markup declares them (``.. option:: --write``), or a PHP property as PHP
#: writes a static one (``Logger::$name``), or a setting's key after its scope (``xfer:clobber``,
#: ``cache:size``); maybe with the ``=`` a manual writes after an option or a
#: setting that takes a value (``--type=``, systemd's ``ExecStart=``), which its name goes without; or
#: after the sigil a directive or an annotation is typed with (JBang's ``//DEPS``, ``@Grab``), as a
#: title declares them (:func:`indexer.formats.definitions.title_names`); maybe ending in the ``?``
#: or ``!`` with which Ruby, Elixir and Scheme name a predicate or a method that raises or changes
#: its receiver (``empty?``, ``validate!``), as their code declares it.
_NAME_PART = r"\$?[^\W\d]\w*(?:-\w+)*[?!]?"
_NAME_SEPARATOR = re.compile(r"::|:|\.|->|/|#")
_NAME_QUERY = re.compile(
    rf"(?:--?|//|@)?{_NAME_PART}(?:(?:{_NAME_SEPARATOR.pattern}){_NAME_PART})*(?:\(\)|=)?"
)
#: Lower-case words joined by hyphens, as a long option spells them without its dashes.
_HYPHENATED_WORDS = re.compile(r"[a-z][a-z0-9]*(?:-[a-z0-9]+)+")
#: The fewest distinct words of a question that :func:`defining_first` reads as asking for the things
#: a chunk defines: one word is a name, for :func:`named_first`.
MIN_DEFINED_WORDS = 2
#: Words by which a question asks for a list of names (a changelog, release notes, an index, a
#: glossary) rather than for the page a name is about: a list ranks above that page only then.
LIST_WORDS = frozenset(
    """added changed changelog changes deprecated glossary history index new news notes release
    released releases removed version versions""".split()
)
#: The words by which a question asks for a contents list (:attr:`StoredChunk.is_contents`): each
#: set, all of its words. Not ``contents`` alone, nor among the list words: it is as often a file's
#: or a buffer's.
CONTENTS_WORDS = (frozenset({"table", "contents"}), frozenset({"toc"}))
#: Words that ask what was fixed: with a version named, they ask for its entry, as Keep a Changelog's
#: other kinds of change (``added``, ``changed``, ``removed``: :data:`LIST_WORDS`) do. Not list words
#: alone: ``fixed`` is as often an adjective (``a fixed list of values``).
FIX_WORDS = frozenset({"fixed", "fixes"})
#: The titles of pages that list names, as their documents declare them (a generated index, a
#: changelog, release notes, a glossary), compared in lower case without punctuation.
LIST_TITLES = (
    "index",
    "changelog",
    "change log",
    "changes",
    "release notes",
    "history",
    "news",
    "what s new",
    "glossary",
)
#: The list titles a page's title may also end with after its project's name, one word, and maybe
#: its version (``Gin ChangeLog``, ``Django 4.2 release notes``): those a manual's or an essay's
#: title does not end with after one word, as ``CREATE INDEX`` and ``A brief history`` do. A guide's
#: ``Keep a Changelog`` or ``Generating the changelog`` puts more words before it.
LIST_TITLE_ENDINGS = ("changelog", "change log", "release notes")
#: A pre-release after a version's numbers (``22.1b1``, ``8.0.0rc1``, ``2.0.0-beta.1``): its kind
#: (group 2) and its number (group 3), as PEP 440 and semantic versioning spell them.
_PRE_RELEASE = r"(?:[-.]?(alpha|beta|preview|pre|rc|a|b|c)\.?(\d{1,9})?(?![a-z]))?"
#: Each kind of pre-release as a number below any of a release's (``22.1b1`` is ``22.1.-2.1``), so
#: that a pre-release is never its release (:func:`same_version`), but one of its entries when the
#: question asks for the release (:func:`same_release`). PEP 440's kinds: a, b, rc.
_PRE_RELEASE_RANKS = {"a": -3, "alpha": -3, "b": -2, "beta": -2, "c": -1, "rc": -1, "pre": -1, "preview": -1}
_PRE_RELEASE_KINDS = {-3: "a", -2: "b", -1: "rc"}
#: A Debian revision (the ``-4`` of ``8.32-4``) after an upstream version's numbers, as a mark and
#: the revision's number (``8.32-4`` is ``8.32.-4.4``), spelled as Debian writes it: an entry of the
#: package's revision is one of the upstream version's entries when the question asks for that
#: (:func:`same_release`), never its release (:func:`same_version`), which is the upstream NEWS's.
_DEBIAN_REVISION = -4
_SUFFIX_SPELLINGS = {**_PRE_RELEASE_KINDS, _DEBIAN_REVISION: "-"}
#: What may follow a version that heads a changelog's entry: a series' wildcard (``v1.20.x``), then
#: nothing, or its date or codename after a bracket, a colon, a slash, a comma or a dash, or its
#: date after a space (``1.2.3 2024-01-31``, ``9.5.3 January 4, 2024``). Not other words:
#: ``20.8. Error Reporting and Logging`` and ``2.3 Rule Syntax`` are a manual's numbered sections,
#: as DocBook and Texinfo number them.
_AFTER_VERSION = (
    r"(?:\.[x*])*\]?(?=[ \t]*(?:$|[(\[:/,\u2013\u2014-])"
    r"|[ \t]+(?:\d{4}-\d{1,2}-\d{1,2}|(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\.?[ \t]+\d))"
)
#: A version at the start of a heading, whatever follows it: on a page whose title declares a
#: changelog, each version heads an entry (``Version 2.0 beta``, ``0.9.0 "Tabby Cat"``). Dotted
#: numbers, or one number after ``version`` or ``release`` (PostgreSQL's ``Release 15``): alone, a
#: number is a section's or a step's.
_OPENING_VERSION = (
    r"\[?(?:v|version |release )?(?:(?<=version )|(?<=release )|(?=\d{1,9}\.\d))(\d{1,9}(?:\.\d{1,9})*)"
    + _PRE_RELEASE
)
#: A heading that opens a changelog's entry: a version, maybe after ``v``, ``version`` or ``release``,
#: maybe followed by its date (``0.47.3 (August 24, 2025)``, ``[1.2.0] - 2024-01-31``, ``v2.0``);
#: each number of up to nine digits, so that reading one as an integer is bounded too.
_VERSION_HEADING = re.compile(_OPENING_VERSION + _AFTER_VERSION, re.IGNORECASE)
_CHANGELOG_VERSION_HEADING = re.compile(_OPENING_VERSION, re.IGNORECASE)
#: On a page whose title declares a changelog (:data:`LIST_TITLES`), an entry's heading may open with
#: the project's name (``pluggy 1.5.0 (2024-04-19)``, towncrier's default); the version then ends the
#: heading or its date follows, so that ``Python 3.12 support`` or ``Django 4.2 release notes`` is no
#: entry, and nor is a guide's ``Ubuntu 22.04`` on a page that is not a changelog.
_NAMED_VERSION_HEADING = re.compile(
    r"[A-Za-z][\w.-]{0,99} (?:v|version )?(\d{1,9}(?:\.\d{1,9})+)" + _PRE_RELEASE + _AFTER_VERSION,
    re.IGNORECASE,
)
#: The openings of a changelog's entries that plain-text changelog formats declare
#: (:mod:`indexer.formats.changes`), each with its version, read on any page: they say they are
#: entries whatever page holds them, so each is read as its format spells it and no looser (a
#: guide's ``Python (3.10) support; notes`` or ``Changes with 3 new options`` is no entry). A Debian
#: changelog's ``coreutils (9.1-1) unstable; urgency=low`` (an epoch, ``1:``, aside; ``~`` before a
#: pre-release, as Debian spells one; its revision read apart, :data:`_DEBIAN_REVISION`; the
#: ``urgency`` field Debian Policy requires), GNU NEWS's ``Noteworthy changes in release 9.1
#: (2022-04-15) [stable]`` (gnulib's template; older, ``Major changes in release 4.7.0``), and
#: systemd's ``CHANGES WITH 252:``, in capitals.
_DEBIAN_ENTRY = re.compile(
    r"[a-z0-9][a-z0-9+.-]{0,99} \((?:\d{1,9}:)?(\d{1,9}(?:\.\d{1,9})*)"
    + _PRE_RELEASE.replace("[-.]?", "[-.~]?")
    + r"[^()\s]{0,200}\)(?:[ \t]+[a-z0-9+./-]{1,100}){1,20};[ \t]*urgency=",
    re.IGNORECASE,
)
_DECLARED_ENTRIES = (
    _DEBIAN_ENTRY,
    re.compile(
        r"(?:(?:noteworthy|major|user-visible|significant) )?changes in release (\d{1,9}(?:\.\d{1,9})*)"
        + _PRE_RELEASE,
        re.IGNORECASE,
    ),
    re.compile(r"CHANGES WITH (\d{1,9}(?:\.\d{1,9})*)" + _PRE_RELEASE.replace("[-.]?", "[-.~]?")),
)
#: The opening of a GNU ChangeLog's entry, which names no version: its date (ISO, or as older
#: Emacs wrote it), its author and an address in angle brackets.
_DATED_ENTRY = re.compile(
    r"(?:\d{4}-\d{2}-\d{2}|[a-z]{3} [a-z]{3} {1,2}\d{1,2} \d{2}:\d{2}(?::\d{2})?(?: [a-z]{1,5})? \d{4})"
    r"[ \t]+[^<>]{1,200}<[^<>\s]{1,200}>",
    re.IGNORECASE,
)
#: A Debian package's version as a question spells it: an upstream version's dotted numbers and
#: its Debian revision (``8.32-4``, ``5.2.15-2``).
_DEBIAN_VERSION = re.compile(r"(\d{1,9}(?:\.\d{1,9})+)-(\d{1,9})")
#: A manual's number before a section's title: ``23.5.``, ``E.10.``, ``5.``, and Texinfo's ``2.3``.
_SECTION_NUMBER = re.compile(r"(?:[A-Z]|\d{1,9})(?:(?:\.\d{1,9})+\.?|\.)\s+")
#: A token of a title that is a word, as a query's words are (:class:`indexer.search.query.Query`):
#: ``&`` and ``—`` between a title's words are not typed.
_HAS_WORD = re.compile(r"\w")
#: A version as a question spells it: dotted numbers, maybe after ``v`` (``3.0``, ``v2.3.1``), maybe a
#: pre-release (``22.1b1``).
_DOTTED_VERSION = re.compile(r"v?(\d{1,9}(?:\.\d{1,9})+)" + _PRE_RELEASE, re.IGNORECASE)
#: Words after which a bare number is a version (``version 11``, ``release 3``).
_VERSION_WORDS = frozenset({"version", "release", "v"})
#: What may surround a version in a question (``(3.0)``, ``3.0?``, ``"2.3",``).
AROUND_VERSION = "()[]{}\"'`,;:!?"
_TITLE_PUNCTUATION = re.compile(r"[^\w]+")


def lists_names(chunk: StoredChunk, words: set[str]) -> bool:
    """Whether ``chunk`` belongs to a list of names that a question with ``words`` does not ask for:
    its page's title declares an index, a changelog, release notes, a history or a glossary
    (:data:`LIST_TITLES`), one of its headings opens a changelog's dated or numbered entry
    (:func:`opens_listed_entry`), or its lines are a contents list (:attr:`StoredChunk.is_contents`).
    A declared list is asked for when the question holds a word of :data:`LIST_WORDS`, not of the
    list's title: that names its subject too (``Hatch history`` above hatch's entries), which
    ordinary questions name; a contents list, whose title is its document's, when it holds one
    of :data:`CONTENTS_WORDS`."""
    headings = chunk.heading.split(HEADING_SEPARATOR)
    if declares_list(chunk.title) or any(opens_listed_entry(part.strip()) for part in headings):
        return not asks_for_list(words)
    return chunk.is_contents and not any(asked <= words for asked in CONTENTS_WORDS)


def declares_list(title: str) -> bool:
    """Whether a page's ``title`` declares a list of names (:data:`LIST_TITLES`, or ends with one of
    :data:`LIST_TITLE_ENDINGS`)."""
    words = [word.strip(AROUND_VERSION) for word in title.lower().split()]
    title = _TITLE_PUNCTUATION.sub(" ", title.lower()).strip()
    return any(title == name or title.startswith(name + " ") for name in LIST_TITLES) or any(
        _after_project_name(words, ending.split()) for ending in LIST_TITLE_ENDINGS
    )


def _after_project_name(words: list[str], ending: list[str]) -> bool:
    """Whether a title's ``words`` are ``ending`` after one word, maybe then a version (``gin
    changelog``, ``django 4.2 release notes``)."""
    before = words[: -len(ending)]
    if words[-len(ending) :] != ending or not 1 <= len(before) <= 2:
        return False
    return len(before) == 1 or bool(_word_version(before[1]))


Version = tuple[int, ...]


def asked_versions(text: str) -> set[Version]:
    """The versions a question names: each word that is dotted numbers (``3.0``, ``v2.3.1``, a
    trailing full stop aside) or a Debian package's version (``8.32-4``, :data:`_DEBIAN_REVISION`),
    and a bare number after ``version`` or ``release`` (``version 11``)."""
    versions: set[Version] = set()
    before = ""
    for token in text.split():
        word = token.strip(AROUND_VERSION).removesuffix(".")
        version = _word_version(word)
        if version:
            versions.add(version)
        elif word.isdecimal() and len(word) <= 9 and before in _VERSION_WORDS:
            versions.add((int(word),))
        before = word.lower()
    return versions


def version_owners(text: str) -> set[str]:
    """The words a question puts right before a version it names, as the name of whose version it is
    (``numpy`` of ``what changed in numpy 2.0``, ``flask`` of ``flask 2.3``), in lower case: not a
    stop word (``in 2.0``), nor a word that says it is a version (``version 11``)."""
    owners: set[str] = set()
    before = ""
    for token in text.split():
        word = token.strip(AROUND_VERSION).removesuffix(".")
        if _word_version(word) and before.isalpha():
            if before not in _VERSION_WORDS and before not in STOPWORDS:
                owners.add(before)
        before = word.lower()
    return owners


def declared_versions(chunk: StoredChunk, inner_titles: Sequence[str] = ()) -> list[Version]:
    """The versions whose list entries ``chunk`` holds: the first part of its heading path that
    opens a changelog's entry with a version (:func:`entry_opening`), and each heading inside it
    that does (``inner_titles``: short entries are packed into one chunk, filed under the first's
    heading); else the one version its page's title names where that title declares a list
    (``Index of new symbols in 1.16``)."""
    changelog = declares_list(chunk.title)
    parts = [part.strip() for part in chunk.heading.split(HEADING_SEPARATOR)]
    first = next((found for part in parts if (found := entry_opening(part, changelog))), None)
    opened = [found for title in inner_titles if (found := entry_opening(title.strip(), changelog))]
    versions = [_version(found) for found in ([first] if first else []) + opened]
    if versions:
        return list(dict.fromkeys(versions))
    named = asked_versions(chunk.title) if changelog else set()
    return list(named) if len(named) == 1 else []


def opens_listed_entry(title: str) -> bool:
    """Whether a heading's ``title`` opens the entry of a changelog that lists names, as an index
    does, on any page: a version's heading (:func:`heading_opening`), or a GNU ChangeLog's dated
    entry (:data:`_DATED_ENTRY`), which names each file and function a change touched. Not the
    entries a Debian changelog, GNU NEWS or systemd's NEWS declare (:data:`_DECLARED_ENTRIES`):
    notes written for a package's users, the only place a Debian revision's fix or a release's
    notice is told, which a question about that fix asks for in its own words, without naming a
    version or a list. They rank by their words, as a page does, and come first for a question
    that names their version (:func:`entry_opening`)."""
    return heading_opening(title, False) is not None or _DATED_ENTRY.match(title) is not None


def entry_opening(title: str, changelog: bool) -> re.Match[str] | None:
    """The version a heading's ``title`` opens a changelog's entry with (:data:`_VERSION_HEADING`;
    on a ``changelog`` page whatever follows it, :data:`_CHANGELOG_VERSION_HEADING`, and also after
    the project's name, :data:`_NAMED_VERSION_HEADING`), else None. A manual numbers the sections
    of its release notes as any other (DocBook's ``E.1. Release 15.20``): the title is read after
    that number too, when it opens no entry as it stands (``9.5.3 January 4, 2024`` does). The
    openings plain-text changelog formats declare (:data:`_DECLARED_ENTRIES`: a Debian changelog's,
    GNU NEWS's, systemd's) open an entry on any page."""
    found = heading_opening(title, changelog)
    if found:
        return found
    return next((found for entry in _DECLARED_ENTRIES if (found := entry.match(title))), None)


def heading_opening(title: str, changelog: bool) -> re.Match[str] | None:
    """The version a heading's ``title`` opens a changelog's entry with as a Markdown, reST or
    HTML changelog's heading does: :func:`entry_opening` but for the openings of plain-text
    changelog formats."""
    for heading in dict.fromkeys((title, without_section_number(title))):
        if changelog:
            found = _CHANGELOG_VERSION_HEADING.match(heading) or _NAMED_VERSION_HEADING.match(heading)
        else:
            found = _VERSION_HEADING.match(heading)
        if found:
            return found
    return None


def _word_version(word: str) -> Version | None:
    """The version a question's word spells (:data:`_DOTTED_VERSION`, :data:`_DEBIAN_VERSION`), if any."""
    dotted = _DOTTED_VERSION.fullmatch(word)
    if dotted:
        return _version(dotted)
    debian = _DEBIAN_VERSION.fullmatch(word)
    if debian:
        return (
            *(int(number) for number in debian.group(1).split(".")),
            _DEBIAN_REVISION,
            int(debian.group(2)),
        )
    return None


def _version(found: re.Match[str]) -> Version:
    """The version a match of :data:`_VERSION_HEADING`, :data:`_NAMED_VERSION_HEADING`,
    :data:`_DECLARED_ENTRIES` or :data:`_DOTTED_VERSION` spells: its numbers, then a pre-release's
    rank and number, then a Debian entry's revision (:data:`_DEBIAN_REVISION`)."""
    numbers = tuple(int(number) for number in found.group(1).split("."))
    kind = found.group(2)
    if kind is not None:
        numbers = (*numbers, _PRE_RELEASE_RANKS[kind.lower()], int(found.group(3) or 0))
    if found.re is _DEBIAN_ENTRY:
        inside = found.group(0).split("(", 1)[1].split(")", 1)[0]
        revision = inside.rsplit("-", 1)[1] if "-" in inside else ""
        digits = len(revision) - len(revision.lstrip("0123456789"))
        if 0 < digits <= 9:
            numbers = (*numbers, _DEBIAN_REVISION, int(revision[:digits]))
    return numbers


def spelled_version(version: Version) -> str:
    """``version`` as a changelog writes it: ``3.0.1``, ``22.1b1``, ``8.32-4``."""
    if len(version) > 2 and version[-2] < 0:
        return ".".join(map(str, version[:-2])) + f"{_SUFFIX_SPELLINGS[version[-2]]}{version[-1]}"
    return ".".join(map(str, version))


def same_release(asked: Version, declared: Version) -> bool:
    """Whether an entry declaring ``declared`` is one of version ``asked``: the same numbers as far
    as the question gives them (``3.0`` asks for ``3.0.0`` and ``3.0.2``, not ``3.1.0``), a number
    the heading leaves out counting as 0 (``2.0.0`` asks for ``2.0``)."""
    if len(declared) >= len(asked):
        return declared[: len(asked)] == asked
    return asked == declared + (0,) * (len(asked) - len(declared))


def same_version(one: Version, other: Version) -> bool:
    """Whether two versions are one, a number one leaves out counting as 0 (``3.0`` is ``3.0.0``;
    ``23.3`` is not ``23.3.1``)."""
    width = max(len(one), len(other))
    return one + (0,) * (width - len(one)) == other + (0,) * (width - len(other))


def version_entries_first(
    order: list[int], declared: dict[int, list[Version]], asked: set[Version]
) -> tuple[list[int], frozenset[int]]:
    """``order`` with the chunks that are entries of an ``asked`` version (``declared``: the versions
    each chunk's entries declare, :func:`declared_versions`; :func:`same_release`) first: those
    holding the release as asked first (``3.0.0`` for ``3.0``), then its later patches, each in its
    own order; and those entries. A changelog or release notes declare each version in the heading
    of its entry; a question naming a version and asking for a list (``what changed in 0.28``) asks
    for that entry, which the words alone rank no higher than the entries beside it: they share
    every word but the version's numbers, which are common words of such a page."""
    releases = [
        chunk_id
        for chunk_id in order
        if any(same_version(one, version) for version in declared.get(chunk_id, ()) for one in asked)
    ]
    chosen = set(releases)
    patches = [c for c in order if c not in chosen and is_entry_of(declared.get(c, ()), asked)]
    chosen.update(patches)
    return releases + patches + [chunk_id for chunk_id in order if chunk_id not in chosen], frozenset(chosen)


def is_entry_of(declared: Sequence[Version], asked: set[Version]) -> bool:
    """Whether entries declaring ``declared`` versions hold one of an ``asked`` version's: its
    release as asked or a later patch (:func:`same_release`), as :func:`version_entries_first`
    puts first."""
    return any(same_release(one, version) for version in declared for one in asked)


def asks_for_list(words: set[str]) -> bool:
    """Whether a question with ``words`` asks for a list of names (:data:`LIST_WORDS`)."""
    return bool(words & LIST_WORDS)


def asks_for_entry(words: set[str]) -> bool:
    """Whether a question with ``words`` that names a version asks for its changelog entry: it asks
    for a list (:func:`asks_for_list`) or for what was fixed (:data:`FIX_WORDS`)."""
    return asks_for_list(words) or bool(words & FIX_WORDS)


class AskedName(NamedTuple):
    """A form in which a one-name question asks for a name (:func:`asked_names`), and whether only
    a declaration knows it: a form the question did not spell (``cache`` of ``--no-cache``) names
    the chunk that declares it, not any page whose title or file name holds the word. ``owner``:
    the part before the name in the qualified name typed (``BytesMut`` of ``BytesMut::freeze``,
    ``io`` of ``std::io::Result``), whose pages come first among those the name names."""

    name: str
    declared_only: bool = False
    owner: str = ""


#: What starts a TeX command's name as a manual writes it (``\\againframe``), which declares it bare;
#: a command's name is letters, two at least (``\\n`` and ``\\d`` are a string's or a pattern's escapes).
TEX_ESCAPE = "\\"
_TEX_COMMAND = re.compile(r"[A-Za-z@]{2,64}")


def asked_names(text: str) -> tuple[AskedName, ...]:
    """The names a query asks for when it is one name, the most exact first, else none: the name as
    typed (``os.path.join``, ``package.json``, ``open`` of ``open()``, ``ExecStart`` of
    ``ExecStart=``, ``againframe`` of TeX's ``\\againframe``), its last part (``join``, ``Stdout`` of
    ``std::io::Stdout``), both owned by the part before it (``io``); then, known by
    declarations only, the forms a manual may title a long option by: without its dashes
    (``legacy-peer-deps`` of ``--legacy-peer-deps``), and for a negated one the option it negates
    (``--cache``, then ``cache``, of ``--no-cache``), as command-line parsers derive ``--no-x`` from
    ``--x``; and lower-case words joined by hyphens as the long option they spell (``--rebase-merges``
    of ``rebase-merges``). :func:`named_first` puts first the pages known by the first of them that
    names any: the page titled ``package.json`` before one declaring a ``json`` setting."""
    text = text.strip()
    if text.startswith(TEX_ESCAPE) and _TEX_COMMAND.fullmatch(text, len(TEX_ESCAPE)):
        text = text[len(TEX_ESCAPE) :]
    if not _NAME_QUERY.fullmatch(text):
        return ()
    whole = text.removesuffix("()").removesuffix("=")
    parts = _NAME_SEPARATOR.split(whole)
    last = parts[-1]
    owner = parts[-2] if len(parts) > 1 else ""
    forms = [AskedName(whole, owner=owner), AskedName(last, owner=owner)]
    if last.startswith("--"):
        bare = last[2:]
        derived = [bare]
        if bare.startswith(NEGATION):
            derived += ["--" + bare[len(NEGATION) :], bare[len(NEGATION) :]]
        forms += [AskedName(form, declared_only=True) for form in derived]
    elif _HYPHENATED_WORDS.fullmatch(last):
        forms.append(AskedName("--" + last, declared_only=True))
    return tuple(dict.fromkeys(forms))


def page_names(chunk: StoredChunk) -> set[str]:
    """The names a chunk's page is known by: the last word of its title (its first heading, a manual
    section or ``()`` dropped: ``Struct Path``, ``add_library``, ``open(2)``) and the parts of its
    file name before the extension that start with a letter (``struct.Path.html``, ``open.2.txt``,
    ``CMAKE_BUILD_TYPE.rst``; a compressed file's, of the file it holds: ``open.2.gz``); and those
    the chunk declares it defines, as its reader found them (:attr:`StoredChunk.names`:
    ``.. confval:: intersphinx_mapping``, a man page's NAME line)."""
    names = set(without_title_suffix(chunk.title).split()[-1:])
    file_name = uncompressed_name(chunk.path).rsplit("/", 1)[-1]
    parts = file_name.split(".")[:-1] if "." in file_name else [file_name]
    return names | {part for part in parts if part[:1].isalpha()} | set(chunk.names)


def without_title_suffix(title: str) -> str:
    """``title`` without a manual section or an empty call at its end: ``open`` of ``open(2)``,
    ``getenv`` of ``getenv()``. Read from the end, not by a pattern searched from every position: a
    title is stored text, and that search is quadratic in a run of spaces."""
    opening = title.rfind("(")
    inside = title[opening + 1 : -1]
    if not title.endswith(")") or opening < 0:
        return title
    if inside and not (inside[0].isdecimal() and all(char.isalnum() or char == "_" for char in inside)):
        return title
    return title[:opening].rstrip()


def defining_first(order: list[int], k: int, chunks: dict[int, StoredChunk], words: set[str]) -> list[int]:
    """``order`` with those of its first ``k`` chunks whose section declares as definitions
    (:attr:`StoredChunk.names`, over the section's chunks among them) most of the
    question's words first, each side in its own order: ``note warning and tip boxes`` asks for three of the
    directives the section that declares ``.. note::``, ``.. tip::`` and ``.. warning::`` defines,
    whatever the words' counts say. What a document declares does not fade with the question's
    length, nor depend on how often other pages use a word. A definition that heads its own
    description (a directive's, a method's) is a part of the section it is declared in
    (:func:`_declaring_section`)."""
    window = [chunk_id for chunk_id in order[:k] if chunk_id in chunks]
    page_names: dict[str, set[str]] = {}
    for chunk_id in window:
        page_names.setdefault(chunks[chunk_id].path, set()).update(n.lower() for n in chunks[chunk_id].names)
    section = {
        chunk_id: (
            chunks[chunk_id].path,
            _declaring_section(chunks[chunk_id], page_names[chunks[chunk_id].path]),
        )
        for chunk_id in window
    }
    declared: dict[tuple[str, str], set[str]] = {}
    for chunk_id, place in section.items():
        names = {name.lower() for name in chunks[chunk_id].names}
        declared.setdefault(place, set()).update(names & words)
    defining = [chunk_id for chunk_id, place in section.items() if 2 * len(declared[place]) > len(words)]
    chosen = set(defining)
    return defining + [chunk_id for chunk_id in order if chunk_id not in chosen]


def _declaring_section(chunk: StoredChunk, names: set[str]) -> str:
    """The heading of ``chunk`` without the titles at its end that are names its page declares
    (``names``, in lower case): the section that declares ``.. note::`` and ``.. tip::``, each
    heading its own description, is the section their directives lie in. Code's headings are its
    definitions' own (``render.py > Renderer > draw``): each is a place of its own, as before a
    document's definitions headed their descriptions."""
    parts = chunk.heading.split(HEADING_SEPARATOR)
    if parts[0] == chunk.path:
        return chunk.heading
    while len(parts) > 1 and parts[-1].strip().lower() in names:
        parts.pop()
    return HEADING_SEPARATOR.join(parts)


def titled_first(
    order: list[int], k: int, chunks: dict[int, StoredChunk], text: str
) -> tuple[list[int], frozenset[int]]:
    """``order`` with those of its first ``k`` chunks whose page is titled as ``text``
    is written (:func:`title_key`) first, each side in its own order, and those chunks: a query of
    several words that is a page's whole title (``CREATE USER MAPPING``, ``drop database``) asks for
    that page, as a name typed alone asks for the page named after it (:func:`named_first`), even
    where pages that use the title's words more often win on them (the information schema's view
    ``user_mappings``, a chapter on destroying a database)."""
    wanted = title_key(text)
    titled = [c for c in order[:k] if c in chunks and title_key(chunks[c].title) == wanted]
    chosen = frozenset(titled)
    return titled + [chunk_id for chunk_id in order if chunk_id not in chosen], chosen


def title_key(title: str) -> str:
    """``title`` as a query and a page's title are compared: its words in lower case, without a
    manual's section number before them (``23.5.``, ``E.10.``, ``2.3``), a manual section or empty
    call after them (:func:`without_title_suffix`), or a mark between them that holds no word
    (``Input & Output``, typed ``input output``)."""
    words = without_section_number(without_title_suffix(title.strip())).casefold().split()
    return " ".join(word for word in words if _HAS_WORD.search(word))


def without_section_number(title: str) -> str:
    """``title`` without a manual's number before it (:data:`_SECTION_NUMBER`: ``23.5.``,
    ``E.1.``, Texinfo's ``2.3``)."""
    numbered = _SECTION_NUMBER.match(title)
    return title[numbered.end() :] if numbered else title


def owned_by(owner: str, chunk: StoredChunk, known: set[str]) -> bool:
    """Whether ``chunk`` is of the page of ``owner`` (its page is known by it, :func:`page_names`:
    ``trait.Buf.html`` for ``Buf``), lies in a folder named so (``io/type.Result.html`` for
    ``io``) or under a heading of that name, its last part for a qualified one (code's ``base.rb >
    Sinatra > Base``, ``Polly.Retry``): where a qualified name's owner documents or holds its
    members. A name typed alone has no owner."""
    if not owner:
        return False
    titles = [title for title in chunk.heading.split(HEADING_SEPARATOR) if title != chunk.path]
    holders = {_NAME_SEPARATOR.split(title)[-1] for title in titles}
    return owner in known or owner in chunk.path.split("/")[:-1] or owner in holders


def named_first(
    order: list[int], chunks: dict[int, StoredChunk], names: Sequence[AskedName], lists: Set[int]
) -> tuple[list[int], frozenset[int]]:
    """``order`` with the chunks of the pages known by the first of ``names`` (case as typed) that
    names any page but a list of names (:func:`asked_names`; ``lists``, :func:`lists_names`) first,
    each side in its own order, and those chunks. Developers type the name of what they look for,
    and the page named after it is the answer even where pages that use the name more often win on
    the words: ``Path`` finds ``Struct Path`` before ``PathBuf``'s page, ``read`` the function
    ``read`` before module ``io``'s index (bench/RESULTS.md: Rust's std exact names, hybrid top-1).
    A qualified name's owner's pages come first among them (:func:`owned_by`):
    ``Buf::copy_to_bytes`` finds trait ``Buf``'s method before the copy of it under each type that
    implements ``Buf``; and lists after the pages they list: javadoc titles the uses of
    ``acme.Widget`` after it, and names that page ``Widget.html`` as it names the class's. Past a
    form that names lists alone, a looser one counts only where it names the owner's pages: the
    glossary's ``pool.resize()`` stays before ``cache.resize()``."""
    known = {chunk_id: page_names(chunks[chunk_id]) for chunk_id in order if chunk_id in chunks}
    only_lists: list[int] = []
    for name, declared_only, owner in names:
        named = [
            chunk_id
            for chunk_id in order
            if chunk_id in known and name in (chunks[chunk_id].names if declared_only else known[chunk_id])
        ]
        # the owner's own first (a trait's method before an implementor's copy of it), lists last
        named.sort(key=lambda c: (not owned_by(owner, chunks[c], known[c]), c in lists))
        pages = [chunk_id for chunk_id in named if chunk_id not in lists]
        if only_lists:  # past a form that named lists: only the owner's pages, not another thing's
            pages = [c for c in pages if owner and owned_by(owner, chunks[c], known[c])]
        if pages:
            return _first(named, order)
        only_lists = only_lists or named
    return _first(only_lists, order) if only_lists else (order, frozenset())


def _first(chosen: list[int], order: list[int]) -> tuple[list[int], frozenset[int]]:
    """``order`` with ``chosen`` first, as they are ordered, and those chunks."""
    taken = frozenset(chosen)
    return chosen + [chunk_id for chunk_id in order if chunk_id not in taken], taken
