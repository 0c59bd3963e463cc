"""The names a document's markup declares it defines, found once by its reader
(:attr:`indexer.formats.document.Document.definitions`) and stored with the chunk that holds them.

A page's title names what it documents, and the search puts the page named as a one-name question
asks first (:func:`indexer.search.name_rules.named_first`). Many manuals define several names on one
page, in markup made for that purpose, which their own tools index:

- **Sphinx and docutils**: the object directives of every domain (``.. confval:: name``,
  ``.. rst:directive:: toctree``, ``.. py:function:: join(a, *p)``, ``.. option:: -v, --verbose``...)
  and autodoc's (``.. autofunction:: pytest.approx``, ``.. automodule:: werkzeug.routing``),
  which Sphinx puts in its index unless marked ``:no-index:``. An example of one in a literal block
  (after ``::`` or in a ``code-block``) defines nothing.
- **man pages**: the NAME section (``clock_getres, clock_gettime, clock_settime - clock and time
  functions``), which is what ``mandb`` indexes for ``whatis`` and ``apropos``.
- **AsciiDoc**: a description list's term that is names (``core.editor::``, ``-m <msg>,
  --message=<msg>::``, ``--[no-]verify::``), as manual pages list their options and settings
  (known by the whole of a dotted key only).
- **Markdown**: a heading whose title is code alone (``## `--write` ``, ``### `prettier.format(source,
  options)` ``, ``## `--config` and `--no-config` ``): docs sites title the section that documents
  an option, a function or a setting so, and their generators put it in the page's outline; and a
  table row whose first cell is options in code (``| `--all`, `-a` | bool | Show all |``), as a
  command's reference tabulates them, or a name in code that the page anchors there (an element
  with an id, ``<a id="opt-acme-email">`acme.email`</a>``), as a generated options table keys its rows.

A dotted or ``::`` name that a directive, a man page or a call declares is also known by its last
part, as a question's name is (:func:`indexer.search.name_rules.asked_names`); a setting's dotted key
(an AsciiDoc term, a Markdown title, a Sphinx signature in HTML) is known by the whole of it only.

Every rule reads a line at a time, with patterns that cannot backtrack far, so reading a document's
definitions is linear in its size whatever its text: this runs over every indexed file.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable, Sequence

#: The object directives, with or without their domain (``py:``, ``c:``, ``cpp:``, ``js:``, ``rst:``,
#: ``std:``...), that take the name of what they define as their argument. Not a directive's options
#: (``rst:directive:option:: caption``): Sphinx indexes those under their directive's name, and alone
#: they are common words (``class``, ``lines``).
OBJECT_DIRECTIVES = (
    "confval", "directive", "role", "option", "cmdoption", "envvar",
    "function", "class", "method", "classmethod", "staticmethod", "attribute", "property", "data",
    "exception", "module", "decorator", "macro", "member", "type", "var", "struct", "union", "enum",
    "enumerator", "concept", "event", "describe", "object", "setting",
)  # fmt: skip
#: What autodoc's directives put before the object directive they write from the source code
#: (``autofunction``, ``autoclass``, ``automodule``...): each defines the object it names.
AUTODOC_PREFIX = "auto"
_DIRECTIVE_LINE = re.compile(r"\.\.[ \t]+(?P<directive>[\w:-]+)::[ \t]+(?P<argument>\S.*)")
_UNINDEXED = re.compile(r":(?:no-index|noindex):")
#: The dash between a man page's names and its summary (``\-`` as troff writes it, or a Unicode dash).
_MAN_DASH = re.compile(r"[ \t](?:\\-|--|-|\u2010|\u2013|\u2014)(?:[ \t]|$)")
#: The most lines a man page's NAME entry runs to: ``whatis`` entries are a line or two.
MAX_MAN_NAME_LINES = 8
_NAME_END = re.compile(r"[(<=\[\s]")
#: A directive named as it is written (``.. rst:directive:: .. code-block:: [language]``).
_WRITTEN_DIRECTIVE = re.compile(r"\.\.[ \t]+(?P<name>[\w:-]+)::")
_LAST_PART = re.compile(r"::|\.|->")
#: A description list term's name: an option's dashes, then a letter, then a word that may hold dots,
#: hyphens and colons (a setting's scope before its key: ``xfer:clobber``, ``cache:size``).
_TERM_NAME = re.compile(r"-{0,2}[^\W\d_][\w.:-]*")
#: How code spells a name and prose does not: an option's leading dash, words joined by ``.`` or
#: ``_``, or a capital inside a word that starts in lower case (``mergeOptions``; not ``JavaScript``).
_SPELT_AS_CODE = re.compile(r"^-|\w[._]\w|^[a-z][a-z0-9]*[A-Z]")
#: A call as a heading titles it: its name, then its parameters (``prettier.format(source, options)``).
_CALL = re.compile(r"(?P<name>\.?[^\W\d][\w.:>-]*)\(.*\)")
#: A type in brackets after a heading's code (``collectCoverage [boolean]``), bounded, not nested.
_BRACKETED_TYPE = re.compile(r"\[[^\[\]]{0,200}\]")
#: A name a title with no code in it declares: an identifier's parts joined by dots or underscores,
#: starting in lower case, as a config reference titles its keys (``server.strictPort``,
#: ``output.clean``, ``max_connections``); not a product's or a file's name (``Node.js``, ``macOS``,
#: ``README.md``), nor a version (``v2.0.1rc1``, ``v1.x``), which begins with a ``v`` and a digit.
_PLAIN_TITLE_NAME = re.compile(r"(?![vV]\d)[a-z_][\w$]*(?:[._][\w$]+)+")
#: A title with no code in it that is one token no prose word is, typed as written as code is: one
#: that starts with a sigil (a script's directive ``//DEPS``, an annotation ``@Grab``, an option
#: ``--verbose``, a variable ``$HOME``) or is capitals joined by underscores (``JBANG_CACHE_DIR``).
_TOKEN_TITLE = re.compile(r"(?://|--?|[@$#])[A-Za-z][\w.:-]*|[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+")
#: A call at the start of a table cell: a name, then its parameters' parenthesis.
_CELL_CALL = re.compile(r"\s*(?P<name>[^\W\d]\w*(?:(?:\.|::)[^\W\d]\w*)*) ?\(")
#: What may follow a term's name: its value (``=<msg>``, ``[=<n>]``, `` <msg>``, ``{auto,never}``).
_VALUE_STARTS = "=[<{"
#: What a value that takes a list writes after its comma (``--sort=FIELD,...``, as help2man copies
#: a GNU tool's ``--help``): more of the same value, no name of its own.
_MORE_OF_THE_VALUE = frozenset({"...", "\u2026"})
#: An option's value as argparse and many manuals name it, in capitals (``--config CONFIG``).
_PLACEHOLDER = re.compile(r"[A-Z][A-Z0-9_-]{0,64}")
#: The type of a setting's value in parentheses after its name, in a few words (``(boolean)``,
#: ``(time interval)``), as a manual lists settings: what it takes, not a phrase the name starts.
_VALUE_TYPE = re.compile(r"\([^\W\d_][\w-]{0,30}(?: [\w-]{1,30}){0,3}\)")
#: An option's short forms in parentheses after its name (``--help (-h)``, ``--verbose (-v|vv)``).
_SHORT_FORMS = re.compile(r"\((-[\w-]{1,64})(?:\|[\w-]{1,64}){0,8}\)")
#: What a long option's name starts with when it turns off the option named without it.
NEGATION = "no-"
#: How a manual writes an option that its ``--no-`` form turns off (``--[no-]verify``).
NEGATABLE = f"--[{NEGATION}]"
#: What may follow a title's one code span and leave it declaring its names (:func:`code_title_names`):
#: a remark in parentheses (`` `Sinks.list(...)` (capture all items)``), or the kind of thing it is
#: (`` `EXISTS` Operator``, `` `hz-cluster-admin` script``), as references title an entry.
_REMARK = re.compile(
    r"\s{0,8}(?:\([^()\n]{0,200}\)"
    r"|(?i:attribute|class|command|component|directive|element|endpoint|event|field|flag|function|hook"
    r"|keyword|macro|method|module|operator|option|parameter|property|script|setting|statement|type"
    r"|variable)s?)\s{0,8}"
)
#: The words that may join the code spans of a title that declares names (:func:`code_title_names`).
TITLE_JOINING_WORDS = frozenset({"and", "or"})


def directive_definitions(
    lines: list[str], literal: set[int], unseen: Collection[int] = ()
) -> dict[int, tuple[str, ...]]:
    """The names each line's Sphinx object directive defines (1-based line numbers), leaving out the
    lines of ``literal`` (examples shown as written) and directives marked ``:no-index:``. A Python
    object's name is qualified as Sphinx qualifies it (:class:`_PythonScope`): by the module a
    ``currentmodule`` among the ``unseen`` lines (markup the page does not show) sets too."""
    found: dict[int, tuple[str, ...]] = {}
    scope = _PythonScope()
    for number, line in enumerate(lines, 1):
        if number in literal or not line.strip():
            continue
        stripped = line.lstrip()
        indent = len(line) - len(stripped)
        scope.leave(indent)
        definition = _DIRECTIVE_LINE.fullmatch(stripped) if ".." in line else None
        if definition is None:
            continue
        directive, argument = definition["directive"], definition["argument"]
        scope.set_module(directive, argument)
        if number in unseen:
            continue
        if is_object_directive(directive):  # an unindexed class still holds its members
            written = [name for signature in _signatures(lines, number) for name in argument_names(signature)]
            names = known_names(scope.qualified(directive, list(dict.fromkeys(written)), indent))
            if names and not _unindexed(lines, number, indent):
                found[number] = names
    return found


def _signatures(lines: list[str], number: int) -> list[str]:
    """The signatures of the object directive on line ``number``: its argument, then each line
    indented under it before a blank line or its options, as Sphinx reads several signatures
    (``.. data:: WLAN.PM_PERFORMANCE`` with ``WLAN.PM_POWERSAVE`` on the line under it)."""
    first = lines[number - 1]
    signatures = [first.split("::", 1)[1].strip()]
    indent = len(first) - len(first.lstrip())
    for index in range(number, len(lines)):  # not a copy of the rest of the page per directive
        line = lines[index]
        stripped = line.strip()
        if not stripped or stripped.startswith(":") or len(line) - len(line.lstrip()) <= indent:
            break
        if "(" not in stripped and len(stripped.split()) > 1:
            break  # a description written under it with no blank line, not a signature
        signatures.append(stripped)
    return signatures


#: The Python domain's object directives, with or without their domain, whose body holds members
#: (a method in a class's body is the class's), and those that set the module the objects after
#: them lie in (``currentmodule`` defining nothing, ``module`` the module).
_PYTHON_CONTAINERS = frozenset(("class", "exception"))
_PYTHON_MODULES = frozenset(("currentmodule", "module"))
_PYTHON_DOMAINS = ("", "py")


class _PythonScope:
    """Where a Python object directive lies, as Sphinx's Python domain reads it: in the module
    the last ``currentmodule`` or ``module`` names, and in the body of the classes it is indented
    under. An object is declared by its full name, by its name in its module and, as any dotted
    name is (:func:`known_names`), by its last part (``aiohttp.ClientSession.get``,
    ``ClientSession.get``, ``get``), as a source reader declares a member: a question names it
    either way."""

    def __init__(self) -> None:
        self.module = ""
        self.classes: list[tuple[int, str]] = []  # each open class's indent and name in its module

    def leave(self, indent: int) -> None:
        """Close the classes whose bodies end at a line indented ``indent``."""
        while self.classes and indent <= self.classes[-1][0]:
            self.classes.pop()

    def set_module(self, directive: str, argument: str) -> None:
        domain, _, name = directive.rpartition(":")
        if domain in _PYTHON_DOMAINS and name in _PYTHON_MODULES:
            module = argument.split()[0] if argument.split() else ""
            self.module = "" if module == "None" else module

    def qualified(self, directive: str, names: list[str], indent: int) -> list[str]:
        """``names`` as a Python object directive at ``indent`` defines them, each with its shorter
        forms, and the class it opens entered; another domain's as written."""
        domain, _, kind = directive.rpartition(":")
        if domain not in _PYTHON_DOMAINS or kind in _PYTHON_MODULES or kind.startswith(AUTODOC_PREFIX):
            return names
        owner = self.classes[-1][1] if self.classes else ""
        qualified = [
            f"{owner}.{name}" if owner and not name.startswith(owner + ".") else name for name in names
        ]
        if kind in _PYTHON_CONTAINERS and len(qualified) == 1:
            self.classes.append((indent, qualified[0]))
        # a name written with its module already (``.. data:: machine.IDLE``) is not given it again
        moduled = [
            f"{self.module}.{name}" if self.module and not name.startswith(f"{self.module}.") else ""
            for name in qualified
        ]
        return [form for name, full in zip(qualified, moduled, strict=True) for form in (full, name) if form]


def is_object_directive(directive: str) -> bool:
    """Whether the directive named ``directive`` (with or without its domain, ``py:function``)
    defines what its argument names: one that describes an object (:func:`describes_object`), not a
    directive's option (``rst:directive:option``, see :data:`OBJECT_DIRECTIVES`)."""
    return directive.count(":") < 2 and describes_object(directive)


def describes_object(directive: str) -> bool:
    """Whether the directive named ``directive`` (with or without its domain) describes what its
    argument names, whose signature a page shows as code: an object directive, a directive's option
    too, or autodoc's form of one (``autofunction:: pytest.approx``, which Sphinx indexes as the
    function it documents)."""
    return directive.rsplit(":", 1)[-1].removeprefix(AUTODOC_PREFIX) in OBJECT_DIRECTIVES


def man_page_names(lines: list[str]) -> dict[int, tuple[str, ...]]:
    """The names of a rendered man page's NAME section, on the line where they start: the indented
    lines after a line ``NAME``, up to the dash before the summary."""
    found: dict[int, tuple[str, ...]] = {}
    for number, line in enumerate(lines, 1):
        if line.rstrip() != "NAME":
            continue
        entry = []
        for following in lines[number : number + MAX_MAN_NAME_LINES]:
            if not following[:1].isspace() or not following.strip():
                break
            entry.append(following)
            if _MAN_DASH.search(following):
                if names := man_entry_names(" ".join(entry)):
                    found[number + 1] = names
                break
    return found


def man_entry_names(entry: str) -> tuple[str, ...]:
    """The names of a NAME entry (``clock_getres, clock_gettime - clock and time functions``): those
    before the dash, with their last parts; none when it has no dash."""
    dash = _MAN_DASH.search(entry)
    return known_names(part.strip() for part in entry[: dash.start()].split(",")) if dash else ()


def code_title_names(pieces: Sequence[tuple[bool, str]]) -> tuple[str, ...]:
    """The names a heading declares whose title is code alone: ``pieces`` are its texts, each marked
    whether it is a code span. Between the spans only commas, slashes, ``and``, ``or`` and a type in
    brackets may stand (``## `--config` and `--no-config` ``, ``### `collectCoverage` [boolean]``);
    each span is a call (the word before its parameters: ``format`` of
    ``prettier.format(source, options)``, also known by its last part) or names as
    :func:`item_names` reads them (``--output <dir>``). One span may be followed by a remark
    (:data:`_REMARK`). A title with prose in it, or a span of several words (``## `npm install
    prettier` ``, a command shown), declares nothing."""
    spans = [text.strip() for is_code, text in pieces if is_code]
    after = pieces[-1][1] if pieces and not pieces[-1][0] and len(spans) == 1 else ""
    remark = _REMARK.fullmatch(after)
    if remark:  # ``Sinks.list(...)` (capture all items)``, ```EXISTS` operator``
        pieces = pieces[:-1]
    between = _BRACKETED_TYPE.sub(" ", " ".join(text for is_code, text in pieces if not is_code))
    joining = between.replace(",", " ").replace("/", " ").replace("(", " ").replace(")", " ").split()
    if not spans or any(word not in TITLE_JOINING_WORDS for word in joining):
        return ()
    names: list[str] = []
    for span in spans:
        called = _CALL.fullmatch(span)
        found = known_names([called["name"]]) if called else item_names(span, code=True)
        if not found:
            return ()
        names.extend(found)
    return tuple(dict.fromkeys(names))


def title_names(pieces: Sequence[tuple[bool, str]]) -> tuple[str, ...]:
    """The names a heading declares (``pieces`` its texts, each marked whether it is code): those of
    a title of code alone (:func:`code_title_names`), or of a title with no code in it that is
    names as a config reference titles its keys (:data:`_PLAIN_TITLE_NAME`: ``## server.strictPort``,
    ``## server.host, server.port``). A word (``## base``), a phrase, a product's name (``## Node.js``)
    and a version (``## v2.0.1``) declare nothing: without code's font, only a key's dots say it is
    typed as written."""
    if any(is_code for is_code, _ in pieces):
        return code_title_names(pieces)
    title = " ".join("".join(text for _, text in pieces).split())
    if _TOKEN_TITLE.fullmatch(title):
        return (title,)
    names = item_names(title, code=False)
    return names if all(_PLAIN_TITLE_NAME.fullmatch(name) for name in names) else ()


def option_cell_names(pieces: Sequence[tuple[bool, str]]) -> tuple[str, ...]:
    """The options a table row's first cell declares when it is options in code alone, read as a
    title of code is (:func:`code_title_names`: ``| `--all`, `-a` | bool | Show all |``, also
    inside a link): a table keyed by options says what each does, as a manual's list of them does.
    Any other name in a first cell declares nothing: tables key their rows by values as often
    (`` `True` ``, `` `80` ``), or list names they only sum up (a lifecycle's hooks)."""
    if not pieces or not starts_option_cell(pieces[0]):
        return ()
    names = code_title_names(pieces)
    return names if all(name.startswith("-") for name in names) else ()


def anchored_cell_names(pieces: Sequence[tuple[bool, str]]) -> tuple[str, ...]:
    """The names a table row's first cell declares when the page anchors the row there (an element
    with an id around the cell's text or before it, which links to the row point at) and the cell
    is one code span alone: ``<a id="opt-acme-email">`acme.email`</a>``, as a generated reference's
    options table keys each row. Read as a code span's names are (:func:`item_names`: a dotted key
    known by the whole of it); a cell of prose, or of more than one span, declares nothing."""
    spans = [text.strip() for is_code, text in pieces if is_code]
    if len(spans) != 1 or any(text.strip() for is_code, text in pieces if not is_code):
        return ()
    return item_names(spans[0], code=True)


def listed_term_names(pieces: Sequence[tuple[bool, str]]) -> tuple[str, ...]:
    """The names a described list item's term declares when it is code alone (:func:`code_title_names`)
    and each span is spelt as code (:data:`_SPELT_AS_CODE`: an environment variable
    ``TAURI_ENV_PLATFORM``, a key ``build.target``, ``maxRetries``, an option), as a reference lists
    what it documents: ``- `NAME` — what it does``. A plain word's term (``auto``, a value an option
    takes, listed under the option a question names) declares nothing."""
    spans = [text.strip() for is_code, text in pieces if is_code]
    if not all(spelt_as_code(span) for span in spans):
        return ()
    return code_title_names(pieces)


def starts_option_cell(piece: tuple[bool, str]) -> bool:
    """Whether a table cell whose first text is ``piece`` (marked whether it is code) may be options
    in code: most tables' rows are told apart at their first text, without reading the rest."""
    is_code, text = piece
    return is_code and text.lstrip().startswith("-")


def cell_call_names(text: str) -> tuple[str, ...]:
    """The function a table row's first cell declares when its text, which starts in code, starts
    with a call (PostgreSQL's ``btrim ( string text ... )``, ``len(s)``), with the last part of a
    dotted name: a table keyed by signatures lists the functions it defines."""
    called = _CELL_CALL.match(text)
    return known_names([called["name"]]) if called else ()


def spelt_as_code(name: str) -> bool:
    """Whether ``name`` is spelt as code spells a name and prose does not (:data:`_SPELT_AS_CODE`)."""
    return _SPELT_AS_CODE.search(name) is not None


def item_names(text: str, code: bool) -> tuple[str, ...]:
    """The names ``text`` lists as a manual titles what it defines: each of its comma-separated items
    (commas inside a value's brackets aside; options apart by a slash too, ``-o/--output``) a name or an
    option, maybe followed by its value (``-m <msg>``, ``--message=<msg>``,
    ``--stat[=<width>[,<count>]]``, ``-L<start>,<end>``, ``--sort=FIELD,...``, an option's ``--config
    CONFIG``) or its short forms (``--help (-h)``), or a setting's scope and key and its value's type
    (``xfer:clobber (boolean)``, in code); an option written ``--[no-]verify`` is both ``--verify``
    and ``--no-verify``. Text with words after a name (``Step one``, ``Read the manual``) is a phrase,
    and lists nothing; nor does a key with a placeholder in it (``branch.<name>.merge``), which no one
    types as it is written.
    Unless the markup says the ``text`` is ``code`` (a code span), a plain word lists nothing either
    (``commit`` among a tool's subcommands, ``CPU`` or ``read-only`` in a glossary): a word typed alone
    asks for the page about it (``git-commit``), not every list that defines it in passing. A dotted name
    is a setting's key, known by the whole of it (``core.editor``): its last part (``editor``, ``branch``
    of ``color.branch``) is a word many keys end with."""
    names: list[str] = []
    valued = False  # whether the item before has a value (``--sort=FIELD``), which ``...`` repeats
    for item in _outside_brackets(text):
        item = item.strip()
        if item[:1] in _VALUE_STARTS or (valued and item in _MORE_OF_THE_VALUE):
            continue  # the rest of the value before it (``-L<start>,<end>``, ``--sort=FIELD,...``)
        negatable = item.startswith(NEGATABLE)
        if negatable:
            item = "--" + item.removeprefix(NEGATABLE)
        found = _TERM_NAME.match(item)
        name = found.group() if found else ""
        rest = item[len(name) :].lstrip(" _*")
        option = name[:1] == "-"
        follows_name = (
            not rest
            or (rest[0] in _VALUE_STARTS and (option or rest[0] != "{"))
            or (option and (_SHORT_FORMS.fullmatch(rest) or _PLACEHOLDER.fullmatch(rest)))
            or (code and _VALUE_TYPE.fullmatch(rest))
        )
        if not name or name[-1] in ".:-" or not follows_name:
            return ()  # not a name; or one with a placeholder inside (``branch.<name>.merge``)
        if not code and not spelt_as_code(name):
            return ()  # a word as prose has it
        names.extend([name, "--" + NEGATION + name[2:]] if negatable else [name])
        valued = bool(rest)
        if option and (short := _SHORT_FORMS.fullmatch(rest)):
            names.append(short.group(1))
    return tuple(dict.fromkeys(names))


def _outside_brackets(text: str) -> list[str]:
    """``text`` split at each comma outside ``[]``, ``<>`` and ``{}``, and at each slash there before
    an option (``-o/--output``, ``--color / --no-color``), in one pass."""
    items, depth, start = [], 0, 0
    for place, char in enumerate(text):
        if char in "[<{":
            depth += 1
        elif char in "]>}":
            depth = max(depth - 1, 0)
        elif depth == 0 and (char == "," or (char == "/" and _between_options(text, start, place))):
            items.append(text[start:place])
            start = place + 1
    return [*items, text[start:]]


def _between_options(text: str, start: int, place: int) -> bool:
    """Whether the slash at ``place`` in ``text`` sets two options apart: the item from ``start``
    is one, and another starts just after the slash, a blank apart at most (``-o/--output``)."""
    return text[start:place].lstrip()[:1] == "-" and text[place + 1 : place + 3].lstrip()[:1] == "-"


def known_names(names: Iterable[str]) -> tuple[str, ...]:
    """``names`` with the last part of each dotted or ``::`` name, each once, in order."""
    known = (known for name in names if name for known in (name, _LAST_PART.split(name)[-1]) if known)
    return tuple(dict.fromkeys(known))


def _unindexed(lines: list[str], number: int, indent: int) -> bool:
    """Whether the options right under the definition on line ``number`` (``:no-index:``) keep it
    out of the index."""
    for index in range(number, len(lines)):  # not a copy of the rest of the page per directive
        line = lines[index]
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
    written = _WRITTEN_DIRECTIVE.match(argument)
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
