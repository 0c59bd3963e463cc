"""C's preprocessor, as far as reading a C or C++ file's outline needs it.

tree-sitter parses a file as written, but a C compiler reads what the preprocessor makes of it. Two
things the preprocessor does break a syntax tree of the text as written, and each has a reading here
that a parser understands, lines kept where they are so that headings keep their line numbers:

- conditional groups: every branch is read as code, so a definition whose first line differs by
  platform reads as two openings and one end (:func:`one_configuration` keeps one branch of each);
- macros in declarations: libraries export, inline and annotate their declarations through macros
  the preprocessor expands to attributes or to nothing (``FMT_API void vformat(...)``, ``class
  SPDLOG_API logger``, ``uLong ZEXPORT adler32(...)``, ``LUA_API int (lua_gettop) (...)``, a line
  ``G_BEGIN_DECLS``), so a parser takes the macro for the type and the rest for an error
  (:func:`without_macros` leaves them out).
"""

from __future__ import annotations

import re

#: A line of the C preprocessor that opens, goes on with or closes a conditional group.
_CONDITIONAL = re.compile(
    r"[ \t]*#[ \t]*(?P<directive>if|ifdef|ifndef|elif|elifdef|elifndef|else|endif)\b(?P<test>.*)"
)
#: The words and negations of a group's test.
_TEST_WORDS = re.compile(r"\b[A-Za-z_]\w*|!")
#: The name a C++ compiler defines and a C compiler does not.
CPLUSPLUS = "__cplusplus"


def one_configuration(lines: list[str], language: str) -> list[str]:
    """``lines`` as a compiler of ``language`` reads them in one configuration: of each conditional
    group, the branch it takes, the others' lines and the group's own lines (with the lines a ``\\``
    continues them on) blank, so that lines keep their numbers. tree-sitter reads every branch as
    code, so a definition whose first line differs by platform (``#ifdef WIN32 int umain(...) {
    #else int main(...) { #endif``) reads as two openings and one end, and the whole file as an
    error. The branch taken is the first, as most configurations take it (a header's ``#ifndef``
    guard, a feature's ``#ifdef``), but for what every compiler knows: ``#if 0`` is never taken,
    ``#if 1`` always, ``__cplusplus`` is defined in C++ and not in C (``extern "C" {`` is no C)."""
    configured: list[str] = []
    groups: list[tuple[bool, bool]] = []  # of each open group: whether this branch is read, whether one was
    unread = 0  # how many open groups are in a branch not read: the line is read when none is
    continued = False  # the line before was a group's line ending in ``\\``: this one goes on with it
    for line in lines:
        found = None if continued else _CONDITIONAL.match(line)
        if found is None:
            configured.append("" if unread or continued else line)
            continued = continued and line.endswith("\\")
            continue
        configured.append("")
        continued = line.endswith("\\")
        directive, test = found["directive"], found["test"]
        if directive in ("if", "ifdef", "ifndef"):
            taken = _taken(directive, test, language)
            groups.append((taken, taken))
            unread += not taken
        elif groups and directive == "endif":
            read, _ = groups.pop()
            unread -= not read
        elif groups:
            read, one_taken = groups[-1]
            opened = directive.replace("el", "", 1)  # ``elifdef``: ``ifdef`` where none was taken
            taken = not one_taken and (directive == "else" or _taken(opened, test, language))
            groups[-1] = (taken, one_taken or taken)
            unread += read - taken
    return list(lines) if groups else configured  # a group never closed: a ``#if`` in a comment


def _taken(directive: str, test: str, language: str) -> bool:
    """Whether a compiler of ``language`` takes a group's branch opened by ``directive`` (``if``,
    ``ifdef``, ``ifndef``) on ``test``: see :func:`one_configuration`. A test without ``||`` is
    false where one of its names is ``__cplusplus``, tested as defined (or compared) in C or as not
    defined in C++; any other is taken, as a first branch is."""
    written = test.split("//", 1)[0].split("/*", 1)[0].strip()
    if directive == "if" and written in ("0", "1"):
        return written == "1"
    words = _TEST_WORDS.findall(written)
    if CPLUSPLUS not in words or "||" in written:
        return True
    for place, word in enumerate(words):
        if word != CPLUSPLUS:
            continue
        before = words[max(place - 2, 0) : place]
        negated = before[-1:] == ["!"] or before == ["!", "defined"]
        if (negated != (directive == "ifndef")) == (language == "cpp"):
            return False
    return True


#: A macro's name as C libraries write one: capitals, digits and underscores, two characters or more
#: (``T`` and ``N`` are template parameters).
_MACRO_NAME = r"[A-Z][A-Z0-9_]*[A-Z0-9]"
_MACRO = re.compile(_MACRO_NAME)
#: A line of the preprocessor's own (``#define``, ``#include``), whose words are its business.
_DIRECTIVE = re.compile(r"[ \t]*#")
#: A line holding a macro and nothing else but a comment: a word in capitals, with arguments or not
#: (``FMT_BEGIN_NAMESPACE``, ``JSON_HEDLEY_NON_NULL(1)``).
_ALONE = re.compile(
    rf"[ \t]*(?P<macro>{_MACRO_NAME}(?P<arguments>[ \t]*\([^;{{}}]*\))?)[ \t]*"
    r"(?://.*|/\*.*\*/[ \t]*)?"
)
#: A word in capitals that opens a block, as ``try`` does (``SPDLOG_TRY {``).
_BEFORE_BLOCK = re.compile(rf"[ \t]*(?P<macro>{_MACRO_NAME})[ \t]*\{{[ \t]*(?://.*)?")
#: A line that opens with a function's name and its ``(``: the line after a return type written on
#: a line of its own (GNU's ``static VALUE`` / ``rb_ary_push (...)``).
_NAME_CALLED = re.compile(r"[ \t]*~?(?=[\w:]*[a-z])[A-Za-z_][\w:]*[ \t]*\(")  # a macro's name is capitals
#: A word in capitals after a parameter list (``void swap(logger &other) SPDLOG_NOEXCEPT {``).
_AFTER_PARAMETERS = re.compile(
    rf"\)[ \t]*(?:const[ \t]+)?(?P<macro>{_MACRO_NAME})[ \t]*(?=[{{;:]|->|override\b|final\b|$)"
)
#: A declaration's head on one line: words (``template <...>`` and ``vector<int>`` each one), the
#: name declared, and what follows a name (a parameter list, an initializer, a body, a base, an end).
_HEAD = re.compile(
    r"[ \t]*(?P<head>(?:[A-Za-z_][\w:]*(?:[ \t]*<[^;{}()<>]*>)?[ \t*&]+)+)"
    r"(?P<name>~?[A-Za-z_][\w:]*(?:~[A-Za-z_]\w*)?)?[ \t]*(?P<end>[(;={:\[])"
)
_WORD = re.compile(r"[A-Za-z_][\w:]*")
#: Keywords that give a declaration its type (a tag keyword's next word is the type's name).
_TYPE_KEYWORDS = frozenset(
    "void char short int long float double signed unsigned bool auto wchar_t char8_t char16_t char32_t "
    "class struct union enum namespace".split()
)
_TAG_KEYWORDS = frozenset("class struct union enum".split())
#: Keywords a declaration may carry that give it no type.
_SPECIFIERS = frozenset(
    "const volatile static extern inline virtual explicit constexpr consteval constinit friend mutable "
    "register restrict thread_local typename template noexcept override final".split()
)
#: Keywords that make a line a statement, not a declaration.
_STATEMENTS = frozenset(
    "return if else case goto throw new delete sizeof using do while for switch co_return co_await "
    "co_yield break continue default typedef public private protected".split()
)


def without_macros(lines: list[str]) -> list[str]:
    """``lines`` without the macros of declarations, as a preprocessor expands most of them (to an
    export attribute, ``inline``, ``constexpr``, ``noexcept`` or nothing): a word in capitals in a
    declaration's head where another word gives the type (:func:`_macros_of_head`), one after a
    parameter list, one that opens a block as ``try`` does, and one standing alone on its line
    (``FMT_BEGIN_NAMESPACE``, ``Q_OBJECT``, an annotation above a declaration, with its arguments or
    not) unless the next line opens with a function's name, which makes a word its return type, or with
    ``{``, which makes a call a function's head (``TEST(suite, name)``). A type written in capitals
    (``DWORD count;``, ``YY_BUFFER_STATE yy_create_buffer (...)``) is the only type its declaration has,
    and stays. A line that held only a macro holds an empty comment instead, so that a declaration's
    comment above it stays the declaration's. The preprocessor's own lines stay as written, and every
    line keeps its number."""
    cut = list(lines)
    continued = False  # the line before was a directive ending in ``\\``: this one goes on with it
    for number, line in enumerate(lines):
        if continued or _DIRECTIVE.match(line):
            continued = line.endswith("\\")
            continue
        alone = _ALONE.fullmatch(line)
        if alone is not None:
            follows = _next_written(lines, number)
            opening = follows.lstrip().startswith("{") if alone["arguments"] else _NAME_CALLED.match(follows)
            if not opening:
                cut[number] = line[: alone.start("macro")] + "//" + line[alone.end("macro") :]
            continue
        block = _BEFORE_BLOCK.fullmatch(line)
        if block is not None:
            cut[number] = _cut(line, [block.span("macro")])
            continue
        spans = [found.span("macro") for found in _AFTER_PARAMETERS.finditer(line)]
        head = _HEAD.match(line)
        if head is not None:
            words = list(_WORD.finditer(line, head.start("head"), head.end("head")))
            pointer = head["head"].rstrip().endswith(("*", "&"))
            if head["name"] is None and not pointer and words[-1].group() not in _TYPE_KEYWORDS:
                words.pop()  # ``f (x)``: the name, its ``(`` after a blank; ``int (f) (x)``: a type
            macros = _macros_of_head([word.group() for word in words], head["name"] or "", head["end"])
            spans += [word.span() for word in words if word.group() in macros]
        if spans:
            cut[number] = _cut(line, spans)
    return cut


def _macros_of_head(words: list[str], name: str, end: str) -> set[str]:
    """The words of a declaration's head (those before the ``name`` it declares; ``end``: what
    follows the name) that are macros: those in capitals where another word gives the type (a
    keyword, a tag's name, a word not in capitals) or none is needed (a constructor or destructor
    defined outside its class, ``logger::logger``, ``logger::~logger``), else all but the first,
    which is the type (``BOOL WINAPI DllMain(...)``). A tag keyword's next word is the tag, unless a
    class is being defined (``class SPDLOG_API logger {``, ``: base``)."""
    if not words or not _STATEMENTS.isdisjoint(words):
        return set()
    tags = set()
    if end not in "{:":
        tags = {words[place + 1] for place in range(len(words) - 1) if words[place] in _TAG_KEYWORDS}
    capitals = [word for word in words if _MACRO.fullmatch(word) and word not in tags]
    parts = name.replace("~", "").split("::")
    typed = len(parts) > 1 and parts[-1] == parts[-2]
    typed = typed or any(
        word in _TYPE_KEYWORDS or word in tags or not (word in _SPECIFIERS or _MACRO.fullmatch(word))
        for word in words
    )
    return set(capitals if typed else capitals[1:])


def _next_written(lines: list[str], number: int) -> str:
    """The first line after line ``number`` (0-based) that is not blank, or ""."""
    for following in range(number + 1, len(lines)):
        if lines[following].strip():
            return lines[following]
    return ""


def _cut(line: str, spans: list[tuple[int, int]]) -> str:
    """``line`` without the words at ``spans`` and the blanks after each: what is left starts where
    the declaration does, so the comment above it, at the same indentation, stays its own."""
    pieces, kept_from = [], 0
    for start, end in sorted(spans):
        pieces.append(line[kept_from:start])
        kept_from = end
        while kept_from < len(line) and line[kept_from] in " \t":
            kept_from += 1
    return "".join(pieces) + line[kept_from:]
