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
#: A line's code holding a macro and nothing else: a word in capitals, with arguments or not
#: (``FMT_BEGIN_NAMESPACE``, ``JSON_HEDLEY_NON_NULL(1)``).
_ALONE = re.compile(rf"[ \t]*(?P<macro>{_MACRO_NAME}(?P<arguments>[ \t]*\([^;{{}}]*\))?)[ \t]*")
#: The start of a line that goes on with the line before: an operator, a closing bracket, a
#: separator, a constructor's initializers (``: base(s)``), not a comment.
_CONTINUING = re.compile(r"[ \t]*(?:<<|>>|[)\],:.?=+\-%&|^;]|/(?![/*])|\*(?!/))")
#: A word in capitals that opens a block, as ``try`` does (``SPDLOG_TRY {``).
_BEFORE_BLOCK = re.compile(rf"[ \t]*(?P<macro>{_MACRO_NAME})[ \t]*\{{[ \t]*(?://.*)?")
#: A line that opens with a function's name and its ``(``: the line after a return type written on
#: a line of its own (GNU's ``static VALUE`` / ``rb_ary_push (...)``).
_NAME_CALLED = re.compile(r"[ \t]*~?(?=[\w:]*[a-z])[A-Za-z_][\w:]*[ \t]*\(")  # a macro's name is capitals
#: A word in capitals after a closing parenthesis (``void swap(logger &other) SPDLOG_NOEXCEPT {``).
_AFTER_PARAMETERS = re.compile(
    rf"\)[ \t]*(?:const[ \t]+)?(?P<macro>{_MACRO_NAME})[ \t]*(?=[{{;:]|->|override\b|final\b|$)"
)
#: A declaration's head on one line: words (``template <...>`` and ``vector<int>`` each one), the
#: name declared, and what follows a name (a parameter list, an initializer, a body, a base, an end).
_HEAD = re.compile(
    r"[ \t]*(?P<head>(?:[A-Za-z_][\w:]*(?:[ \t]*<[^;{}()<>]*>)?[ \t*&]+)+)"
    r"(?P<name>~?[A-Za-z_][\w:]*(?:~[A-Za-z_]\w*)?)?[ \t]*(?P<end>[(;={:\[])"
)
#: A word of a head, the template arguments after it aside.
_HEAD_WORD = re.compile(r"(?P<word>[A-Za-z_][\w:]*)(?:[ \t]*<[^;{}()<>]*>)?")
#: A name in parentheses, as a declarator keeps a function-like macro from expanding it
#: (``int (lua_gettop) (lua_State *L)``).
_PARENTHESIZED = re.compile(r"[ \t]*[A-Za-z_]\w*[ \t]*\)")
#: A class or struct being named (``class SPDLOG_API logger``): its constructors need no type.
_CLASS = re.compile(rf"\b(?:class|struct)[ \t]+(?:{_MACRO_NAME}[ \t]+)?(?P<name>[A-Za-z_]\w*)")
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
    declaration's head where another word gives the type or none is needed (:func:`_macros_of_head`),
    one after a parameter list, one that opens a block as ``try`` does, and one alone on its line
    (``FMT_BEGIN_NAMESPACE``, ``Q_OBJECT``, ``JSON_HEDLEY_NON_NULL(1)`` above a declaration) unless
    the next line goes on with it (:func:`_alone_begins`). A type written in capitals (``DWORD
    count;``, ``YY_BUFFER_STATE yy_create_buffer (...)``), the words of template arguments and those
    after a cast (``(int) MAX_VALUE``) stay. A line that held only a macro holds an empty comment
    instead, so that a declaration's comment above it stays the declaration's. The preprocessor's
    own lines stay as written, and every line keeps its number."""
    cut = list(lines)
    classes = {found["name"] for line in lines for found in _CLASS.finditer(line)}
    continued = False  # the line before was a directive ending in ``\\``: this one goes on with it
    for number, line in enumerate(lines):
        if continued or _DIRECTIVE.match(line):
            continued = line.endswith("\\")
            continue
        code = _code_of(line)
        alone = _ALONE.fullmatch(code) if code is not None else None
        if alone is not None:
            if not _alone_begins(bool(alone["arguments"]), _next_written(lines, number)):
                cut[number] = line[: alone.start("macro")] + "//" + line[alone.end("macro") :]
            continue
        block = _BEFORE_BLOCK.fullmatch(line)
        spans = [block.span("macro")] if block else _after_parameters(line) + _head_macros(line, classes)
        if spans:
            cut[number] = _cut(line, spans)
    return cut


def _code_of(line: str) -> str | None:
    """``line`` without a comment at its end, or None where a block comment opens on it and goes on."""
    starts = [place for place in (line.find("//"), line.find("/*")) if place >= 0]
    if not starts:
        return line
    if line.startswith("/*", min(starts)) and not line.rstrip().endswith("*/"):
        return None
    return line[: min(starts)]


def _alone_begins(arguments: bool, follows: str) -> bool:
    """Whether a word in capitals alone on its line begins what the line after it, ``follows``,
    goes on with, and is no macro to leave out: a call continued (``ASSERT_TRUE(...)`` / ``<< x``),
    a constructor's head (``URI(const std::string& s)`` / ``: base(s) {``), a function-like macro
    defining a function (``TEST(suite, name)`` / ``{``), a return type (``VALUE`` / ``f(...)``)."""
    if _CONTINUING.match(follows):
        return True
    if arguments:
        return follows.lstrip().startswith("{")
    return _NAME_CALLED.match(follows) is not None


def _after_parameters(line: str) -> list[tuple[int, int]]:
    """The spans of the words in capitals after a parameter list on ``line``; not after a cast or
    a statement's condition (``x = (int) MAX;``, ``if (x) FAIL;``), whose ``(`` follows no name."""
    found = list(_AFTER_PARAMETERS.finditer(line))
    if not found:
        return []
    opened = _openings(line)
    spans = []
    for after in found:
        opening = opened.get(after.start())
        if opening is None or _is_declared_name(_last_word(line[:opening].rstrip())):
            spans.append(after.span("macro"))
    return spans


def _openings(line: str) -> dict[int, int]:
    """The place of the ``(`` each ``)`` of ``line`` closes, by the ``)``'s place."""
    opened: list[int] = []
    closes: dict[int, int] = {}
    for place, char in enumerate(line):
        if char == "(":
            opened.append(place)
        elif char == ")" and opened:
            closes[place] = opened.pop()
    return closes


def _last_word(text: str) -> str:
    """The identifier ``text`` ends with, or "": read from the end, so linear in a long line."""
    start = len(text)
    while start and (text[start - 1].isalnum() or text[start - 1] == "_"):
        start -= 1
    return text[start:]


def _is_declared_name(word: str) -> bool:
    return bool(word) and not word[0].isdigit() and word not in _STATEMENTS


def _head_macros(line: str, classes: set[str]) -> list[tuple[int, int]]:
    """The spans of the macros in the head of a declaration on ``line`` (:data:`_HEAD`), if any."""
    head = _HEAD.match(line)
    if head is None:
        return []
    words = [found for found in _HEAD_WORD.finditer(line, head.start("head"), head.end("head"))]
    declarator = head["end"] == "(" and _PARENTHESIZED.match(line, head.end())
    pointer = head["head"].rstrip().endswith(("*", "&"))
    if head["name"] is None and not (pointer or declarator):
        words.pop()  # ``f (x)``: the name, its ``(`` after a blank
    macros = _macros_of_head([word["word"] for word in words], head["name"] or "", head["end"], classes)
    return [word.span("word") for word in words if word["word"] in macros]


def _macros_of_head(words: list[str], name: str, end: str, classes: set[str]) -> set[str]:
    """The words of a declaration's head (those before the ``name`` it declares; ``end``: what
    follows the name) that are macros: those in capitals where another word gives the type (a
    keyword, a tag's name, a word not in capitals) or none is needed (a constructor or destructor:
    ``explicit``, or a name of one of ``classes``, ``logger::logger``, ``~logger``), else all but the
    first, which is the type (``BOOL WINAPI DllMain(...)``). A tag keyword's next word is the tag,
    unless a class is being defined (``class SPDLOG_API logger {``, ``: base``). Words reserved to
    the compiler (``__stdcall``, ``_Atomic``) give no type."""
    if not words or not _STATEMENTS.isdisjoint(words):
        return set()
    tags = set()
    if end not in "{:":
        tags = {words[place + 1] for place in range(len(words) - 1) if words[place] in _TAG_KEYWORDS}
    capitals = [word for word in words if _MACRO.fullmatch(word) and word not in tags]
    parts = name.replace("~", "").split("::")
    typed = "explicit" in words or parts[-1] in classes or (len(parts) > 1 and parts[-1] == parts[-2])
    typed = typed or any(
        word in _TYPE_KEYWORDS or word in tags or not (_gives_no_type(word) or _MACRO.fullmatch(word))
        for word in words
    )
    return set(capitals if typed else capitals[1:])


def _gives_no_type(word: str) -> bool:
    return word in _SPECIFIERS or word.startswith("__") or (word[:1] == "_" and word[1:2].isupper())


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
