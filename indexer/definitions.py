"""The names a chunk's text declares it defines, by the markup its document is written in.

A page's title names what it documents, and the search puts the page named as a one-name question
asks first (:func:`indexer.search.named_first`). Many manuals define several names on one page, in
markup made for that purpose, which their own tools index:

- **Sphinx and docutils**: the object directives of every domain (``.. confval:: name``,
  ``.. rst:directive:: toctree``, ``.. py:function:: join(a, *p)``, ``.. option:: -v, --verbose``...),
  which Sphinx puts in its index unless marked ``:no-index:``. An example of one in a literal block
  (after ``::`` or in a ``code-block``) defines nothing.
- **man pages**: the NAME section (``clock_getres, clock_gettime, clock_settime - clock and time
  functions``), which is what ``mandb`` indexes for ``whatis`` and ``apropos``.

A dotted or ``::`` name is also known by its last part, as a question's name is
(:func:`indexer.search.asked_name`).
"""

from __future__ import annotations

import re

#: The object directives, with or without their domain (``py:``, ``c:``, ``cpp:``, ``js:``, ``rst:``,
#: ``std:``...), that take the name of what they define as their argument. Not a directive's options
#: (``rst:directive:option:: caption``): Sphinx indexes those under their directive's name, and alone
#: they are common words (``class``, ``lines``).
_DEFINITION = re.compile(
    r"\.\.[ \t]+(?:[a-z]+:)?(?:confval|directive|role|option|cmdoption|envvar|"
    r"function|class|method|classmethod|staticmethod|attribute|property|data|exception|"
    r"module|decorator|macro|member|type|var|struct|union|enum|enumerator|concept|event|describe|"
    r"object|setting)::[ \t]+(?P<argument>\S.*)"
)
#: Directives whose content is shown as it is written, as a paragraph ending in ``::`` is.
_LITERAL_DIRECTIVE = re.compile(r"\.\.[ \t]+(?:code-block|code|sourcecode|parsed-literal)::")
_UNINDEXED = re.compile(r":(?:no-index|noindex):")
#: A rendered man page's NAME section: its names, comma-separated, up to the dash before the summary.
_MAN_NAMES = re.compile(
    r"^NAME[ \t]*\n[ \t]+(?P<names>[^\n]*?(?:\n[ \t]+[^\n]*?)*?)[ \t]+(?:\\-|-|\u2010|\u2013|\u2014)[ \t]",
    re.MULTILINE,
)
_NAME_END = re.compile(r"[(<=\[\s]")
#: A directive named as it is written (``.. rst:directive:: .. code-block:: [language]``).
_WRITTEN_DIRECTIVE = re.compile(r"\.\.[ \t]+(?P<name>[\w:-]+)::.*")
_LAST_PART = re.compile(r"::|\.|->")


def declared_names(text: str) -> set[str]:
    """The names ``text`` declares it defines (see the module's docstring), with their last parts."""
    names = set(_directive_names(text.split("\n")))
    found = _MAN_NAMES.search(text)
    if found:
        names.update(part.strip() for part in found["names"].split(","))
    return {known for name in names if name for known in (name, _LAST_PART.split(name)[-1]) if known}


def _directive_names(lines: list[str]) -> list[str]:
    names: list[str] = []
    literal_indent: int | None = None  # the indentation a literal block's lines are deeper than
    for place, line in enumerate(lines):
        stripped = line.lstrip()
        indent = len(line) - len(stripped)
        if literal_indent is not None:
            if not stripped or indent > literal_indent:
                continue
            literal_indent = None
        definition = _DEFINITION.fullmatch(stripped)
        if definition and not _unindexed(lines[place + 1 :], indent):
            names += argument_names(definition["argument"])
        elif starts_literal_block(stripped):
            literal_indent = indent
    return names


def starts_literal_block(line: str) -> bool:
    """Whether the lines indented under ``line`` are shown as written: after a paragraph ending in
    ``::`` (not a directive's own ``::``) or under a code directive."""
    return bool(_LITERAL_DIRECTIVE.match(line)) or (line.endswith("::") and not line.startswith(".."))


def _unindexed(following: list[str], indent: int) -> bool:
    """Whether the options right under a definition (``:no-index:``) keep it out of the index."""
    for line in following:
        stripped = line.lstrip()
        if not stripped.startswith(":") or len(line) - len(stripped) <= indent:
            return False
        if _UNINDEXED.match(stripped):
            return True
    return False


def argument_names(argument: str) -> list[str]:
    """The names a definition's argument gives: a callable's, the word before its parameters
    (``join`` of ``join(a, *p)``, ``PyType_Ready`` of ``int PyType_Ready(PyTypeObject *type)``); else
    a directive written as it is used, its name (``code-block`` of ``.. code-block:: [language]``);
    each of a comma-separated list (``-v, --verbose``) without a value (``--jobs=N``, ``-o <dir>``)
    or a trailing colon."""
    written = _WRITTEN_DIRECTIVE.fullmatch(argument)
    if written:
        return [written["name"]]
    parameters = argument.find("(")
    if parameters >= 0:
        words = argument[:parameters].split()
        return [words[-1].lstrip("*&")] if words else []
    names = []
    for item in argument.split(","):
        name = _NAME_END.split(item.strip(), maxsplit=1)[0].rstrip(":")
        if name and not name.startswith(".."):
            names.append(name)
    return names
