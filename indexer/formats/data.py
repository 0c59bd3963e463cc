"""Configuration and data files (YAML, TOML, INI, ``.conf``, JSON, CSV and TSV): their lines, headed
by the file's path and by the keys, tables and blocks that open their parts, or the columns a
table's first row names.

These formats declare where each part of a file begins and what it is called, as a heading does
in prose: a workflow's ``jobs:`` and ``build:``, a compose file's ``services:`` and ``web:``, a
``pyproject.toml``'s ``[tool.ruff.lint]``, an INI file's ``[server]``, a ``.conf`` file's block
that a brace opens after its name (nginx's ``location /api {``), a ``package.json``'s
``"scripts": {``. A chunk of such a file is headed by its path (as source code is: a setting is
read where it lies in a project) and the keys above its first line, so that the model reads what a
value belongs to, and a hit says where in the file it lies. A key heads a part only where it opens
one (a key with its value on its line, ``image: nginx``, is a line of content), and only down to
:data:`MAX_DEPTH` keys: deeper parts are too many and too small to head a chunk of their own.

A CSV or TSV file declares its columns in its first row: every chunk of it is headed by the path
and that row (``expenses.csv > date, payee, category, amount``), so that a chunk of rows far down
the file is read with what its values are. A first row of values heads it the same way: nothing
in the file tells the two apart, and a row of values says as much of the rest as the path does.

Keys are not declared names: a name typed alone asks for where it is defined or described, and a
project's data holds the same keys many times over (every ``version`` of a list of packages).

Each reader is one pass over the lines, a bounded pattern per line: linear in the file's size.
"""

from __future__ import annotations

import csv
import re
from collections.abc import Callable, Iterator
from functools import partial

from indexer.formats.document import Document, Heading, split_lines

#: How many levels of keys head parts of a file, below its path.
MAX_DEPTH = 3
#: The longest key read as a heading's title: longer ones are values, not names of parts.
MAX_KEY_CHARS = 120

#: A YAML mapping key at the start of its line (its indentation aside) with nothing after its
#: colon but maybe an anchor or a comment: it opens a nested part. A list's item (``- name:``) is
#: content, not a part.
_YAML_OPENING_KEY = re.compile(
    rf"(\"[^\"\\]{{1,{MAX_KEY_CHARS}}}\"|'[^']{{1,{MAX_KEY_CHARS}}}'"
    rf"|[^\s#'\"\-?:,\[\]{{}}&*!|>%@`][^:#]{{0,{MAX_KEY_CHARS - 1}}}?)"
    r" *:(?: +&[^\s#]{1,120})? *(?:#.*)?"
)
#: A YAML key whose value is a block scalar (``script: |``, ``description: >-``, ``run: &steps |``),
#: its indentation aside: the more indented lines after it are its text, never keys.
_YAML_BLOCK_SCALAR = re.compile(
    r"(?:- +)?[^\s#][^#]{0,240}?: +(?:[&!][^\s#]{0,120} +){0,2}[|>][-+0-9]{0,3} *(?:#.*)?"
)
_YAML_DOCUMENT_MARK = re.compile(r"(?:---|\.\.\.)(?: .*)?")

#: A TOML table's header at the start of its line: ``[tool.ruff]``, ``[[bin]]``, ``[a."b.c"]``.
_TOML_KEY = (
    rf"(?:[A-Za-z0-9_-]{{1,{MAX_KEY_CHARS}}}|\"[^\"\\]{{1,{MAX_KEY_CHARS}}}\"|'[^']{{1,{MAX_KEY_CHARS}}}')"
)
_TOML_TABLE = re.compile(rf"\[\[? *({_TOML_KEY}(?: *\. *{_TOML_KEY}){{0,15}}) *\]\]? *(?:#.*)?")
_TOML_MULTILINE_STRING = re.compile(r'"""|' r"'''")

#: An INI section's header at the start of its line: ``[server]``, ``[remote "origin"]``.
_INI_SECTION = re.compile(rf"\[([^\[\]]{{1,{MAX_KEY_CHARS}}})\] *(?:[;#].*)?")
#: An INI section's header that declares a file's format where its name declares none: a name that
#: starts with a letter, without a comma (a JSON array's ``[1.5, 2]``, ``["x"]`` or ``[true, 1]`` on
#: one line is none).
_DECLARED_SECTION = re.compile(rf"\[[A-Za-z][^\[\],]{{0,{MAX_KEY_CHARS}}}\] *(?:[;#].*)?")
#: What of a ``.conf`` line may hold a brace that opens no block: a quoted string (what no quote
#: closes, to the line's end), or a comment to the line's end. Each is matched once: one pass.
_CONF_NOT_WORDS = re.compile(r"\"(?:[^\"\\]|\\.)*(?:\"|\\?$)|'[^']*(?:'|$)|#.*")
#: A block's opening line in a ``.conf`` file, its strings and comment gone: its name and
#: arguments, then the brace that opens it (nginx's ``location /api {``, BIND's ``zone "a.org" {``).
_CONF_BLOCK = re.compile(rf"\s*([^\s{{}};](?:[^{{}};]{{0,{MAX_KEY_CHARS - 2}}}[^\s{{}};])?)\s*\{{\s*")

#: A JSON object's member at the start of its line whose value opens an object or an array.
_JSON_OPENING_MEMBER = re.compile(rf"\s*\"((?:[^\"\\]|\\.){{1,{MAX_KEY_CHARS}}})\"\s*:\s*[\[{{]")
#: A JSON string, or what is left of the line after a quote that no quote closes: each quote is
#: matched once, so a line of a thousand unclosed quotes is read in one pass.
_JSON_STRING = re.compile(r"\"(?:[^\"\\]|\\.)*(?:\"|\\?$)")
#: What a line that only closes objects and arrays holds: it still ends the part it closes.
_CLOSING = " \t,]}"


#: Folders whose every file Ansible reads as YAML variables, whatever it is named: ``group_vars/all``,
#: ``host_vars/web1``, or a file in a group's or host's own folder (``group_vars/webservers/main``).
#: Its documentation lays them out so, a file named without an extension or with ``.yml``.
VARIABLE_FOLDERS = frozenset({"group_vars", "host_vars"})
#: A shell variable's assignment starting a line (``RUNDIR=/run/opendkim``, ``export LANG=C.UTF-8``):
#: what Debian's ``/etc/default`` files, Red Hat's ``/etc/sysconfig`` files, ``os-release`` and
#: ``/etc/environment`` hold, line after line (:data:`SETTINGS_FOLDERS`, :data:`SETTINGS_NAMES`). A
#: value follows, not starting with ``=`` or a blank: base64's padding ends a line of a key file so
#: (``c2VjcmV0=``, ``Zm9v==``).
_DECLARED_ASSIGNMENT = re.compile(r"(?:export[ \t]+)?[A-Za-z_][A-Za-z0-9_]{0,127}=[^=\s]")
#: The folders whose files the system reads as a service's settings in shell variables (Debian's
#: ``/etc/default``, Red Hat's ``/etc/sysconfig``), and the files so read by name (a role's
#: ``files/default``, copied there). Elsewhere a file
#: of assignments named without an extension is as often a dotenv under another name (``secrets``,
#: ``env``, ``deploy/prod``), credentials a build must not read.
SETTINGS_FOLDERS = frozenset({"default", "sysconfig"})
SETTINGS_NAMES = frozenset({"os-release", "lsb-release", "environment", "default"})
#: How an Ansible Vault file starts: what follows is ciphertext, no variables to read.
_VAULT_HEADER = "$ANSIBLE_VAULT;"
#: How far into a file its first line of content is looked for, to find the format it declares.
DECLARATION_CHARS = 4096


def declared_format(path: str, head: str) -> str | None:
    """The data format (a key of :data:`DATA_READERS`) that a file whose name says none declares
    (named without an extension, or with one no reader takes: an inventory's ``hosts``,
    ``epel.repo``, ``backup.timer``), from ``path`` and the start of its text (``head``); None for
    a file that declares none. A file in an Ansible variables folder (:data:`VARIABLE_FOLDERS`) is
    YAML, but an encrypted one; any other declares its format on its first line of content, comments
    (``#``, ``;``) and blank lines aside: an INI section's header (:data:`_DECLARED_SECTION`:
    ``[webservers]``, ``[Unit]``: Ansible's inventories, systemd's units, yum's repositories and
    git's configuration are written so) with a line of content after it (a test's one-line
    ``[true]`` is JSON), YAML's document marker alone (``---``; a patch's ``--- a/file`` is none),
    or, in a file the system reads as settings (:func:`_holds_settings`), a shell variable's
    assignment (:data:`_DECLARED_ASSIGNMENT`: ``/etc/default/opendkim``), read as configuration is:
    headed by its path, each line a setting."""
    if head.startswith(_VAULT_HEADER):
        return None
    if VARIABLE_FOLDERS.intersection(path.split("/")[-3:-1]):
        return "yaml"
    stripped = (line.strip() for line in head[:DECLARATION_CHARS].split("\n"))
    content = (line for line in stripped if line and line[0] not in "#;")
    opening = next(content, None)
    if opening is not None and _DECLARED_SECTION.fullmatch(opening):
        return "ini" if next(content, None) is not None else None
    if opening is not None and _DECLARED_ASSIGNMENT.match(opening) and _holds_settings(path):
        return "conf"
    return "yaml" if opening == "---" else None


def _holds_settings(path: str) -> bool:
    """Whether the file at ``path`` is one the system reads as settings in shell variables: in a
    folder of :data:`SETTINGS_FOLDERS`, or named as one of :data:`SETTINGS_NAMES`."""
    parts = path.split("/")
    return bool(SETTINGS_FOLDERS.intersection(parts[-2:-1])) or parts[-1] in SETTINGS_NAMES


def read_data(path: str, text: str, encoding: str, extension: str) -> Document:
    """The document of a data file with ``extension`` (a key of :data:`DATA_READERS`), headed by
    ``path`` and the keys that open its parts; where a part ends and its parent's lines go on (a
    key and its value after a nested part, ``replicas: 2`` after ``logging:``'s lines), by the
    parent's path again, ``path`` alone at the top (a key's depth 0)."""
    lines = split_lines(text)
    if not lines:
        return Document(lines=lines, encoding=encoding)
    keys = DATA_READERS[extension](lines)
    headings = [Heading(number, depth + 1, title or path) for number, depth, title in keys]
    return Document(lines=lines, headings=[Heading(1, 1, path), *headings], encoding=encoding)


def yaml_keys(lines: list[str]) -> Iterator[tuple[int, int, str]]:
    """(1-based line, depth, key) of each YAML key that opens a part, down to :data:`MAX_DEPTH`,
    its depth counted by the indentation of the keys above it; and where a line comes back out of
    a part, (line, the parent's depth, its key; '' for the file). A list's items written at their
    key's indentation (``repos:`` then ``- repo: ...``) are in its part, as YAML reads them."""
    parts: list[tuple[int, str]] = []  # the open parts down to MAX_DEPTH: each key's indentation
    scalar_indent = -1  # inside a block scalar: the indentation its key had
    for number, line in enumerate(lines, 1):
        stripped = line.lstrip(" ")
        indent = len(line) - len(stripped)
        if scalar_indent >= 0:
            if not stripped or indent > scalar_indent:
                continue
            scalar_indent = -1
        if _YAML_DOCUMENT_MARK.fullmatch(line):
            if parts:
                yield number, 0, ""
            parts = []
            continue
        if not stripped or stripped.startswith("#"):
            continue
        item = stripped[:2] == "- " or stripped == "-"
        closed = False
        while parts and (parts[-1][0] > indent or (parts[-1][0] == indent and not item)):
            parts.pop()
            closed = True
        if _YAML_BLOCK_SCALAR.fullmatch(stripped):
            scalar_indent = indent
        elif len(parts) < MAX_DEPTH and (key := _YAML_OPENING_KEY.fullmatch(stripped)) is not None:
            parts.append((indent, _unquoted(key.group(1).strip())))
            yield number, len(parts), parts[-1][1]
            continue
        if closed:
            yield number, len(parts), parts[-1][1] if parts else ""


def toml_keys(lines: list[str]) -> Iterator[tuple[int, int, str]]:
    """(1-based line, 1, table) of each TOML table's header: every table is named in full by its
    header (``[tool.ruff.lint]``), so each is a part of its own at the first depth."""
    in_string = False
    for number, line in enumerate(lines, 1):
        if len(_TOML_MULTILINE_STRING.findall(line)) % 2:
            in_string = not in_string
            continue
        if not in_string and (table := _TOML_TABLE.fullmatch(line.rstrip())) is not None:
            yield number, 1, table.group(1)


def ini_keys(lines: list[str]) -> Iterator[tuple[int, int, str]]:
    """(1-based line, 1, section) of each INI section's header."""
    for number, line in enumerate(lines, 1):
        if (section := _INI_SECTION.fullmatch(line.rstrip())) is not None:
            yield number, 1, section.group(1).strip()


def conf_keys(lines: list[str]) -> Iterator[tuple[int, int, str]]:
    """(1-based line, depth, title) of each INI section's header and of each block a line opens with
    a brace after its name and arguments (nginx's ``server {``, ``location /api {``; BIND's, a
    logstash pipeline's), down to :data:`MAX_DEPTH`, its depth how many braces are open before it
    (those in strings and comments aside); and where a line comes back out of a block, (line, the
    parent's depth, its title; '' for the file)."""
    parts: list[tuple[int, str]] = []  # the open blocks down to MAX_DEPTH: the depth inside each
    depth = 0
    closed = False  # a block closed, and no line since said more than its braces
    for number, line in enumerate(lines, 1):
        while parts and parts[-1][0] > depth:
            parts.pop()
            closed = True
        if (section := _INI_SECTION.fullmatch(line.rstrip())) is not None:
            parts, depth, closed = [], 0, False
            yield number, 1, section.group(1).strip()
            continue
        bare = _CONF_NOT_WORDS.sub(_as_no_braces, line)  # as long as the line: a block's name is read in it
        block = _CONF_BLOCK.fullmatch(bare)
        if block is not None and depth < MAX_DEPTH:
            parts.append((depth + 1, " ".join(line[block.start(1) : block.end(1)].split())))
            yield number, len(parts), parts[-1][1]
            closed = False
        elif closed and bare.strip(" \t};"):
            yield number, len(parts), parts[-1][1] if parts else ""
            closed = False
        depth = max(depth + bare.count("{") - bare.count("}"), 0)


def _as_no_braces(found: re.Match[str]) -> str:
    """A ``.conf`` line's string as as many quotes, its comment as nothing: neither opens a block."""
    text = found.group()
    return "" if text.startswith("#") else '"' * len(text)


def json_keys(lines: list[str]) -> Iterator[tuple[int, int, str]]:
    """(1-based line, depth, key) of each member that starts its line and opens an object or an
    array, down to :data:`MAX_DEPTH`, its depth how many objects and arrays are open before it (a
    string holds no line break in JSON, so each line's brackets are counted without its strings);
    and where a line comes back out of a part, (line, the parent's depth, its key; '' for the
    file)."""
    parts: list[tuple[int, str]] = []  # the open parts down to MAX_DEPTH: each member's depth
    depth = 0
    closed = False  # a part closed, and no line since said more than its brackets
    in_comment = False  # inside a ``/* ... */`` comment (JSON with comments: tsconfig, settings)
    for number, line in enumerate(lines, 1):
        while parts and parts[-1][0] >= depth:
            parts.pop()
            closed = True
        commented = in_comment
        bare, in_comment = _without_comments(_JSON_STRING.sub('""', line), in_comment)
        member = None if commented else _JSON_OPENING_MEMBER.match(line)
        if member is not None and 1 <= depth <= MAX_DEPTH:
            parts.append((depth, member.group(1)))
            yield number, depth, member.group(1)
            closed = False
        elif closed and bare.strip(_CLOSING):
            yield number, len(parts), parts[-1][1] if parts else ""
            closed = False
        depth += bare.count("{") + bare.count("[") - bare.count("}") - bare.count("]")


def _without_comments(bare: str, in_comment: bool) -> tuple[str, bool]:
    """A JSON line with its strings emptied (``bare``) without its comments, as JSON with comments
    writes them (``// ...``, ``/* ... */``, over several lines too), and whether a comment is still
    open at its end; ``in_comment``: whether one was at its start."""
    kept: list[str] = []
    place = 0
    while place < len(bare):
        if in_comment:
            end = bare.find("*/", place)
            if end < 0:
                return "".join(kept), True
            in_comment, place = False, end + 2
            continue
        starts = [found for found in (bare.find("//", place), bare.find("/*", place)) if found >= 0]
        if not starts:
            kept.append(bare[place:])
            break
        start = min(starts)
        kept.append(bare[place:start])
        if bare.startswith("//", start):
            break
        in_comment, place = True, start + 2
    return "".join(kept), in_comment


def table_keys(lines: list[str], separator: str) -> Iterator[tuple[int, int, str]]:
    """(1, 1, the columns) of a table whose first row names them, its cells apart by ``separator``
    (:func:`columns`)."""
    if title := columns(lines[0], separator):
        yield 1, 1, title


def columns(row: str, separator: str) -> str:
    """A table's first ``row`` as a heading's title: its cells, comma-separated, as many as fit in
    :data:`MAX_KEY_CHARS` (then ``…``: the first columns say what a row is, as a heading's first
    words do); '' for a row of no text."""
    read = row[: 2 * MAX_KEY_CHARS]  # no more than a title shows: a row of any length costs the same
    cells = [" ".join(cell.split()) for cell in next(csv.reader([read], delimiter=separator), [])]
    if len(read) < len(row):
        cells[-1:] = ["…"] if len(cells) > 1 else []  # the cell the cut fell in; one that long is no name
    title = ""
    for cell in (cell for cell in cells if cell):
        joined = f"{title}, {cell}" if title else cell
        if len(joined) > MAX_KEY_CHARS:
            return f"{title}, …" if title else cell[: MAX_KEY_CHARS - 1] + "…"
        title = joined
    return title


def _unquoted(key: str) -> str:
    return key[1:-1] if len(key) >= 2 and key[0] == key[-1] and key[0] in "\"'" else key


#: Each data format, by extension: its name, as a reader's failure names it, and the reader of its
#: keys.
DATA_FORMATS: dict[str, tuple[str, Callable[[list[str]], Iterator[tuple[int, int, str]]]]] = {
    **dict.fromkeys(("yaml", "yml"), ("YAML", yaml_keys)),
    "toml": ("TOML", toml_keys),
    # and the files whose formats are INI by definition: yum's repositories, systemd's units, a
    # desktop entry
    **dict.fromkeys(
        "ini cfg repo service socket timer mount automount target desktop".split(), ("INI", ini_keys)
    ),
    "conf": ("configuration", conf_keys),
    "json": ("JSON", json_keys),
    "csv": ("CSV", partial(table_keys, separator=",")),
    "tsv": ("TSV", partial(table_keys, separator="\t")),
}
#: The reader of each data format's keys, by extension.
DATA_READERS = {extension: reader for extension, (_, reader) in DATA_FORMATS.items()}
