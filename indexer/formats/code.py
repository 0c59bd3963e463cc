"""Source code, cut at its definitions as the language's tree-sitter grammar finds them.

A file's outline is what a reader of code looks for: the module (the file's own path), the classes,
namespaces and ``impl`` blocks in it, and the functions and methods in those. Each becomes a heading,
nested as the code nests them (``src/render.py > Renderer > draw``), so a chunk of code carries the
name of what it belongs to, and the names a file defines are its :attr:`Document.definitions`, the
way a Sphinx object directive declares one. What the grammar says, and nothing else:

- a definition's heading starts at the comments and attributes written just above it (same
  indentation; one blank line between where nothing else is, but not the file's banner), and at
  the signatures of its overloads written above it (TypeScript's), so its doc comment, decorators
  and docstring stay with it;
- functions defined inside a function (closures, local classes) are statements of that function,
  not headings: an outline lists what a module or class offers; but a function declared by name as
  a statement of a function's body (``function getPath()`` in ``function enablePatches()``, a
  ``def`` in a ``def``) is headed under it, since that function's code calls it by that name, as a
  module's code calls its own functions;
- every statement starts a block, at any depth (the named children of a block, a class body, a
  ``case``), so a definition too large for one chunk is cut between statements; a statement of
  several lines with none nested in it is ``literal``, so a blank line inside it (a docstring, a
  long literal) does not cut it;
- a function written as several clauses or equations (Elixir's ``def get(nil)`` then ``def
  get(id)``, Haskell's) is one definition, headed once from its doc, so the next function heads
  its own lines;
- code after a definition at the level of its container (module code after a function, a class
  attribute after a method) resumes the container's heading, so it is not taken for the last
  definition's.

Tests are what the language or its standard test tool declares one, never a guess from a folder's
name (:class:`TestRule`): Go's ``_test.go`` files, pytest's ``test_*.py`` and ``conftest.py``, a
``unittest.TestCase``, Rust's ``#[test]`` and ``#[cfg(test)]``, a test module's ``tests.rs`` and Cargo's
``tests/``, JUnit's ``@Test``, xUnit's ``[Fact]``,
Jest's and Vitest's ``*.test.ts``, a ``test/`` folder where Node's test runner and AVA look,
RSpec's ``*_spec.rb``, minitest's ``it "..." do`` and ``Minitest::Test``, PHPUnit's ``*Test.php``,
GoogleTest's ``TEST(Suite, Name) {`` and Catch2's ``TEST_CASE("name") {`` in C and C++'s
``test_*.cpp`` and ``tests/``, XCTest's ``XCTestCase``, swift-testing's ``@Test`` and ``@Suite``,
SwiftPM's ``Tests/``, MUnit's and ScalaTest's suites (``extends munit.FunSuite``, ``AnyFlatSpec``),
their ``test("name") { }``, ``describe`` and ``it``, and sbt's ``src/test/``, busted's
``*_spec.lua``, ``spec/``, ``describe`` and ``it``, ExUnit's ``*_test.exs``, Mix's ``test/``, a
module that uses ``ExUnit.Case`` and its ``describe`` and ``test "name" do``, package:test's ``test``,
``group`` and flutter_test's ``testWidgets`` in a file's ``main``, ``*_test.dart`` and Dart's ``test/``,
Zig's ``test "name" { }``, hspec's ``*Spec.hs``, ``describe`` and ``it``, tasty's ``testGroup`` and
``testCase``, Cabal's ``test/``, OCaml's ``let%test`` and ``let%expect_test``, Alcotest's
``test_case`` and dune's ``test/``.
A class holding a test is a test class, as JUnit defines one. Their lines are the document's
:attr:`Document.tests`. A test or a group of tests that a call declares with a title (RSpec's ``describe
Parser do`` and ``it 'parses' do``, busted's ``describe("join", function()``, MUnit's ``test("parses")
{``) heads its block by that title, as a class and its methods do, and declares no name.

A file of a language this module has no grammar for is not routed here; a file its grammar cannot
read (more than :data:`MAX_ERROR_SHARE` of its lines inside syntax errors, or a grammar older than
the bindings) keeps the plain line reading of :func:`indexer.formats.text.read_plain`, under its
path's heading, but for the statements at its top that parse whole (:func:`_salvaged`). C and C++
are read as a compiler would where tree-sitter cannot read them as written
(:mod:`indexer.formats.preprocessor`): in one configuration of their conditional groups, without
the macros of their declarations, a ``.h`` header as C++ too; a reading replaces the one before
only where it has no more errors and finds no fewer definitions, so the reading as written, which
keeps every branch's definitions, stays where it is as good (:func:`_readable_outline`). Each grammar
is imported when the first file of its language is read, so ``index query`` never loads one.
"""

from __future__ import annotations

import bisect
import importlib
import itertools
import re
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from fnmatch import fnmatchcase
from functools import cache, cached_property
from typing import TYPE_CHECKING

from indexer.formats import SHEBANG
from indexer.formats.document import Document, Heading, split_lines
from indexer.formats.preprocessor import one_configuration, without_macros

if TYPE_CHECKING:
    from tree_sitter import Node, Parser

__all__ = ["CODE_EXTENSIONS", "language_of", "read_code"]

#: Files that describe code written elsewhere (Python stubs, TypeScript declaration files): their
#: outline heads their chunks, but they define nothing, so a one-name question finds the definition
#: in the source, not its signature here.
DECLARATION_FILES = (".pyi", ".d.ts", ".d.mts", ".d.cts")
#: A file with more of its non-blank lines than this inside syntax errors is read as plain lines:
#: tree-sitter recovers from an error locally, so a few errors leave the rest of the outline true,
#: but a file mostly in error (another dialect, a template, a grammar that lags the language) has
#: no outline worth trusting.
MAX_ERROR_SHARE = 0.25
#: Files larger than this are read as plain lines: generated code (bundles, amalgamations, tables)
#: whose outline helps nobody, and whose syntax tree would cost more than the rest of its build.
MAX_PARSED_BYTES = 4 * 1024 * 1024


@dataclass(frozen=True)
class TestRule:
    """What a language, or the test tool every project of it runs, declares a test.

    ``files``: patterns of the names of files that hold only tests and what they share (the go
    tool's ``*_test.go``, pytest's ``test_*.py``); ``folders``: folders whose every file is a test
    (Jest's ``__tests__``); ``markers``: attributes or annotations that make a definition a test, by
    their last name (``#[test]``, ``#[tokio::test]``, ``@Test``, ``[Fact]``) or as written
    without spaces (``cfg(test)``); ``bases``: suffixes of the base class names that make a class a
    test (``unittest.TestCase``); ``calls``: methods whose call with a string and a block declares
    a test, whatever its file is called (minitest/spec's and RSpec's ``it "parses" do``), and
    ``groups``: those whose call with an argument and a block declares a group of tests, with their
    setup and helpers (``describe Parser do``: a spec class); ``macros``: function-like macros whose
    invocation at a file's or namespace's top, followed by a block, declares a test (GoogleTest's
    ``TEST(Suite, Name) {``, Catch2's ``TEST_CASE("name") {``): C and C++ frameworks declare their
    tests so, and the grammar sees a call or a function named after the macro. ``runner``: the
    function in whose body such calls declare tests too (package:test runs a test file's ``main``);
    ``kinds``: definitions that are tests by their kind (Zig's ``test "name" { }``), which make
    nothing around them a test class and declare no name."""

    files: tuple[str, ...] = ()
    folders: tuple[str, ...] = ()
    markers: frozenset[str] = frozenset()
    bases: tuple[str, ...] = ()
    calls: frozenset[str] = frozenset()
    groups: frozenset[str] = frozenset()
    macros: frozenset[str] = frozenset()
    runner: str = ""
    kinds: frozenset[str] = frozenset()

    def holds_only_tests(self, path: str) -> bool:
        """Whether the file at ``path`` is a test file, by its name or a folder it is in."""
        *folders, name = path.split("/")
        return any(fnmatchcase(name, pattern) for pattern in self.files) or any(
            folder in self.folders for folder in folders
        )


_JUNIT = TestRule(markers=frozenset("Test ParameterizedTest RepeatedTest TestFactory TestTemplate".split()))
#: Jest's and Vitest's test files and folder, and the folders where Node's own test runner and AVA
#: look for tests when a project names none (``test/``, AVA's ``tests/`` too; mocha's ``./test``),
#: their helpers and fixtures among them: code written for the tests, not what they test.
_JAVASCRIPT_TESTS = TestRule(files=("*.test.*", "*.spec.*"), folders=("__tests__", "test", "tests"))
#: NUnit's, xUnit's and MSTest's.
_XUNIT = TestRule(
    markers=frozenset("Test TestCase TestCaseSource Fact Theory TestMethod DataTestMethod".split())
)
#: GoogleTest's macros, which name a test by its suite and its own name (``TEST(Parser, Skips)``),
#: as gtest reports it: ``Parser.Skips``.
_SUITE_MACROS = frozenset("TEST TEST_F TEST_P TYPED_TEST TYPED_TEST_P".split())
#: The test files the C and C++ frameworks' own examples and CMake projects name so (GoogleTest's and
#: Chromium's ``*_unittest.cc``, Catch2's and Boost's ``test_*.cpp``), the ``test/`` and ``tests/``
#: folders as in JavaScript, and the macros that declare a test in GoogleTest, Catch2, doctest and
#: Boost.Test.
_C_TESTS = TestRule(
    files=tuple(
        f"{stem}.{extension}"
        for stem in ("test_*", "*_test", "*_tests", "*_unittest")
        for extension in ("c", "cc", "cpp", "cxx")
    ),
    folders=("test", "tests"),
    macros=_SUITE_MACROS
    | frozenset("TEST_CASE TEST_CASE_METHOD SCENARIO TEMPLATE_TEST_CASE".split())  # Catch2's, doctest's
    | frozenset("BOOST_AUTO_TEST_CASE BOOST_FIXTURE_TEST_CASE".split()),
)


@dataclass(frozen=True)
class Grammar:
    """What one language's grammar calls its definitions and its lists of statements.

    ``definitions``: node types that define a name (a heading); ``containers``: those whose members
    are definitions too (classes, namespaces, ``impl`` blocks); ``wrappers``: nodes that carry a
    definition with something before it (``decorated_definition``, ``export_statement``,
    ``template_declaration``), whose start is the definition's; ``lists``: node types whose named
    children are statements or members; ``attached``: node types that stay with the definition
    under them, as comments do (Rust's ``#[derive]``); ``tests``: what declares a test there.

    ``members``: node types of a container's members that are no heading (properties, fields,
    constants, enum cases: a class of thirty properties is not thirty sections), but declare their
    names qualified by their container (``ValidatorOptions.Global``, ``Logger::API``), alone only
    where the name is compound (``MaxHedgedAttempts``, :func:`_known_alone`): a member is known by
    its owner, as a setting's dotted key is, and a bare ``Name`` or ``Count`` would make every
    class define it. ``namespaces``: containers that declare no name, since every
    file putting something in a namespace opens it again, and a question naming the namespace would
    find each file's opening lines; they still head their code and qualify the names in them.
    Ruby's ``module`` is none: it is as often a mixin or a holder of module functions, looked up by
    its name, and its grammar tells no namespace from a mixin. ``names``: node types that declare
    their ``name`` alone wherever they are, and head nothing: C's macros (``#define NAME``, in any
    branch of a conditional group), which have no scope to qualify them but the file that
    includes them; a module's values at the file's top (Kotlin's and Swift's properties in a file
    that runs no statements, Rust's constants and statics, Ruby's constants), and
    a Lua module's fields, by its table (``lapp.show_usage_error``), whatever their value.
    ``defining``: for a grammar that reads every construct as a call (Elixir's),
    the names of the calls that define what they name (``def``, ``defmodule``), and ``opening``
    those of them whose block holds definitions, as a class's body does (``defmodule``).
    ``reread``: another reading of a
    file's lines, line for line, that the grammar reads with fewer errors where it fails on a way
    of writing the language allows (:func:`_readable_outline`). ``bodies``: node types that hold a
    function's body beside its signature, as the signature's next sibling (Dart's grammar), so the
    definition ends, and its closures lie, where the body does. ``inner_doc``: how a comment starts
    that documents what it lies in, not what follows it (Zig's ``//!``). ``floating``: how a doc
    comment starts that documents an item only with no blank line between them, as the language's
    compiler reads it (OCaml's ``(**``): one a blank line sets apart from the item below is text of
    the module or signature around it (odoc's ``{2 Positional arguments}``), not that item's doc.
    ``continues``: whether a statement
    goes on with the definition above it rather than being code after it (a Haskell function's
    later equations, an Elixir function's later clauses, an OCaml doc comment written under what it
    documents): it is no definition of its own, is not attached to the next, and is headed, and
    marked a test, with the one above.
    ``module``: the name of the module a file is (Haskell's ``module Data.Map where``, OCaml's
    from its file's name), given its path and syntax tree, which qualifies the file's names
    (``Data.Map.insert``) but heads nothing: the path already says it. ``types`` and
    ``constructors``: definitions of data types, and the nodes naming the constructors and record
    fields they declare, which Haskell and OCaml name by the module, not by the type: declared as
    members are, qualified by the containers around the type. ``container_of``: the node a
    definition holds its members by, where a definition is a container by its value (Zig's ``const
    Point = struct { ... }``, a function that returns a type), or None. ``directives``: what a
    comment writes to declare a method of the container it lies in, its name in group ``name``, as
    the language's documentation tool reads it (YARD's ``# @!method get(url)`` and ``# @!attribute
    [r] status``, for methods that metaprogramming defines): declared as the container's methods are.
    ``overloads``: signatures that declare an overload of the function implemented under them, of
    the same name (TypeScript's ``function parse(x: string): A;`` before ``function parse(x) {``):
    the function's heading starts at the first of them, with the doc comment above it.
    """

    package: str
    definitions: frozenset[str]
    containers: frozenset[str]
    lists: frozenset[str]
    wrappers: frozenset[str] = frozenset()
    attached: frozenset[str] = frozenset()
    function: str = "language"
    tests: TestRule = TestRule()
    preprocessor: bool = False  # C's: its conditional groups read as one configuration
    separator: str = "."  # between a container's name and its member's, as the language writes it
    members: frozenset[str] = frozenset()
    namespaces: frozenset[str] = frozenset()
    names: frozenset[str] = frozenset()
    defining: frozenset[str] = frozenset()
    opening: frozenset[str] = frozenset()
    reread: Callable[[list[str]], list[str]] | None = None
    bodies: frozenset[str] = frozenset()
    inner_doc: str = ""
    floating: re.Pattern[str] | None = None
    continues: Callable[[Node], bool] | None = None
    module: Callable[[str, Node], str] | None = None
    types: frozenset[str] = frozenset()
    constructors: frozenset[str] = frozenset()
    container_of: Callable[[Node], Node | None] | None = None
    directives: re.Pattern[str] | None = None
    overloads: frozenset[str] = frozenset()


def _types(text: str) -> frozenset[str]:
    return frozenset(text.split())


#: A Kotlin class's header line, and a line that starts its primary constructor with modifiers or
#: annotations (``internal constructor(``): tree-sitter-kotlin cannot read the two apart in a class
#: nested in another, and reads the rest of the file as an error.
_KOTLIN_CLASS_HEADER = re.compile(r"\s*(?:[\w@]+\s+)*(?:class|object)\s+\w.*")
_KOTLIN_CONSTRUCTOR = re.compile(r"\s*(?:(?:@[\w.]+(?:\([^()]*\))?|[a-z]+)\s+)+constructor\s*\(")


def _kotlin_constructors_joined(lines: list[str]) -> list[str]:
    """``lines`` with each class header whose primary constructor starts on the next line joined to
    it by a comment that spans the line break (``class Builder /*`` then ``*/ internal constructor(``),
    so every line keeps its number and the grammar reads one header."""
    joined = list(lines)
    for number in range(1, len(lines)):
        header, constructor = lines[number - 1], lines[number]
        if _KOTLIN_CONSTRUCTOR.match(constructor) and _KOTLIN_CLASS_HEADER.fullmatch(header):
            if "//" not in header and not header.rstrip().endswith(("{", "}")):
                joined[number - 1] = header + " /*"
                joined[number] = "*/" + constructor
    return joined


#: YARD's directives that declare a method metaprogramming defines, in a comment's line (``# @!method
#: get(url = nil)``, ``# @!attribute [rw] status``), also in code a ``# @!parse`` directive shows.
_YARD_DIRECTIVES = re.compile(
    r"^[ \t]*#[# \t]*@!(?:method|attribute)(?:[ \t]*\[\w*\])?[ \t]+(?P<name>[A-Za-z_]\w*[?!=]?)"
)
#: C's macro definitions, object-like and function-like.
_C_MACROS = frozenset(("preproc_def", "preproc_function_def"))
_C_LISTS = "translation_unit compound_statement field_declaration_list enumerator_list case_statement"
_C_DEFINITIONS = "function_definition struct_specifier union_specifier enum_specifier type_definition"
_JS_DEFINITIONS = (
    "function_declaration generator_function_declaration class_declaration method_definition "
    "variable_declarator class"
)
_JS_LISTS = "program statement_block class_body switch_body switch_case switch_default"
_TS_DEFINITIONS = (
    _JS_DEFINITIONS + " abstract_class_declaration interface_declaration type_alias_declaration "
    "enum_declaration internal_module module"
)
_TS_CONTAINERS = (
    "class_declaration abstract_class_declaration class interface_declaration enum_declaration "
    "internal_module module"
)
_TS_WRAPPERS = (
    "export_statement lexical_declaration variable_declaration ambient_declaration expression_statement"
)
_TS_LISTS = _JS_LISTS + " interface_body enum_body object_type"

_TYPESCRIPT = Grammar(
    "tree_sitter_typescript",
    _types(_TS_DEFINITIONS),
    _types(_TS_CONTAINERS),
    _types(_TS_LISTS),
    wrappers=_types(_TS_WRAPPERS),
    function="language_typescript",
    tests=_JAVASCRIPT_TESTS,
    # a class's fields and parameter properties, an interface's (and an overload's) signatures, an
    # enum's members, bare or with a value
    members=_types(
        "required_parameter optional_parameter public_field_definition property_signature "
        "method_signature abstract_method_signature enum_body"
    ),
    # those a module exports (:func:`_exported_names`); options (:func:`_called_option_names`)
    names=_types("variable_declarator call_expression"),
    overloads=_types("function_signature method_signature"),
)
#: Dart's constructors' signatures: ``Point(this.x)``, ``Point.origin()``, ``const Point.zero()``,
#: ``factory Point.parse(...)``, ``factory Point.from(...) = Other``.
_DART_CONSTRUCTORS = (
    "constructor_signature constant_constructor_signature factory_constructor_signature "
    "redirecting_factory_constructor_signature"
).split()
#: Haskell's declarations of a value: its type signature, then the equations that define it.
_HASKELL_BINDINGS = _types("signature function bind")
#: Where Haskell declares what a module, class or instance offers; a binding elsewhere (``where``,
#: ``let``, a ``do`` block's ``x <- action``) is a step of a function's body.
_HASKELL_DECLARATIONS = _types("declarations class_declarations instance_declarations")


def _equation_name(binding: Node) -> str:
    """The name a Haskell signature or equation is of, as a signature writes it: ``fact``, and an
    operator in brackets (``(<//>)`` of ``a <//> b = ...``); empty for a signature of several names
    (``x, y :: Int``) or a pattern binding (``(a, b) = ...``)."""
    name = binding.child_by_field_name("name")
    if name is not None:
        return _text(name)
    infix = next((child for child in binding.named_children if child.type == "infix"), None)
    operator = infix.child_by_field_name("operator") if infix is not None else None
    if operator is None:
        return ""
    return _text(operator).strip("`") if operator.type == "infix_id" else f"({_text(operator)})"


def _continues_equations(statement: Node) -> bool:
    """Whether a Haskell equation or pragma goes on with the definition above it, comments and
    pragmas between: its type signature's (``fact :: Int -> Int`` then ``fact 0 = 1``), or an
    earlier equation's (``fact n = ...`` after ``fact 0 = 1``), or a pragma naming it (``{-#
    INLINE fact #-}``). Together they define one function."""
    if statement.type not in ("function", "bind", "pragma"):
        return False
    above = _binding_above(statement)
    if above is None or above.type not in _HASKELL_BINDINGS:
        return False
    name = _equation_name(above)
    if statement.type == "pragma":
        return bool(name) and name in _text(statement).split()
    return bool(name) and _equation_name(statement) == name


#: How a Haddock comment starts that documents what is written above it (a declaration, its last
#: constructor or field), not what follows it: ``-- ^`` or ``{- ^``.
_HADDOCK_OF_ABOVE = re.compile(r"(?:--|\{-)\s*\^")


def _continues_haskell(statement: Node) -> bool:
    """Whether a Haskell statement goes on with the definition above it: a later equation or a
    pragma of its function (:func:`_continues_equations`), or a Haddock comment of what is above it
    (``-- ^ command reader`` under a type's last constructor), which documents no definition after it."""
    if statement.type == "haddock":
        return _HADDOCK_OF_ABOVE.match(_text(statement)) is not None
    return _continues_equations(statement)


def _binding_above(statement: Node) -> Node | None:
    """The statement above a Haskell one, past the comments and pragmas between, at most
    :data:`MOST_BETWEEN_EQUATIONS` of them: no function's equations stand further apart, and a
    generated run of thousands of pragmas is not walked again for each."""
    above = statement.prev_named_sibling
    for _ in range(MOST_BETWEEN_EQUATIONS):
        if above is None or above.type not in _BETWEEN_EQUATIONS:
            return above
        above = above.prev_named_sibling
    return None


#: What may stand between a Haskell function's equations and its signature, and how many of them.
_BETWEEN_EQUATIONS = _types("comment haddock pragma")
MOST_BETWEEN_EQUATIONS = 64


#: Elixir's definitions of functions, macros and guards, which a function's clauses repeat.
_ELIXIR_FUNCTIONS = _types("def defp defmacro defmacrop defguard defguardp")


def _continues_clauses(statement: Node) -> bool:
    """Whether an Elixir definition is a later clause of the function above it: the same
    definition's call and name (``def validate(opts, %Schema{})`` after ``def validate(opts,
    schema)``, a bodiless head with its defaults first), comments and attributes between, but not
    a ``@doc``, which documents a function of its own. Elixir groups a function's clauses, and
    together they are one function, documented once."""
    keyword = _call_keyword(statement)
    if keyword not in _ELIXIR_FUNCTIONS:
        return False
    above = statement.prev_named_sibling
    for _ in range(MOST_BETWEEN_EQUATIONS):
        if above is None or not (above.type == "comment" or _attribute_between_clauses(above)):
            break
        above = above.prev_named_sibling
    else:
        return False
    name = _defined_by_call(statement)
    return (
        above is not None
        and _call_keyword(above) == keyword
        and bool(name)
        and _defined_by_call(above) == name
    )


def _attribute_between_clauses(node: Node) -> bool:
    """Whether an Elixir node is a module attribute that may stand between a function's clauses
    (``@impl true``, ``@spec``), not ``@doc``, which starts a function of its own."""
    operand = node.child_by_field_name("operand") if node.type == "unary_operator" else None
    is_attribute = bool(node.children) and node.children[0].type == "@"
    return is_attribute and operand is not None and _call_keyword(operand) not in ("doc", "moduledoc")


def _haskell_module(path: str, root: Node) -> str:
    """The name a Haskell file's header gives its module (``Data.Map.Strict``); empty without one
    (a ``Main``)."""
    header = next((child for child in root.named_children if child.type == "header"), None)
    name = header.child_by_field_name("module") if header is not None else None
    return _text(name) if name is not None else ""


def _documents_above(comment: Node) -> bool:
    """Whether an OCaml doc comment documents the item above it, as odoc reads one written on the
    line under that item with a blank line or nothing after it (``val bind : ...`` then ``(**
    [bind p f] ... *)``), past a comment at the end of that item's last line (``| Complete : ... ->
    'a complete (** *)``); one with the next item right under it documents that item."""
    text = _text(comment)
    if comment.type != "comment" or not text.startswith("(**") or text.startswith("(***"):
        return False
    above, below = comment.prev_named_sibling, comment.next_named_sibling
    row, column = comment.start_point
    for _ in range(MOST_TRAILING_COMMENTS):  # past the comments that end the line above, right of it
        if above is None or above.type != "comment" or above.start_point[0] + 1 != row:
            break
        if above.start_point[1] <= column:
            break  # at the doc comment's indentation or left of it: a line of its own
        before = above.prev_named_sibling  # tree-sitter walks the siblings for it: once a step
        if before is None or before.end_point[0] != above.start_point[0]:
            break  # a comment on a line of its own, not after code
        above = before
    if above is None or above.type == "comment" or above.end_point[0] + 1 != comment.start_point[0]:
        return False
    return below is None or below.start_point[0] > comment.end_point[0] + 1


#: How many comments an item's last line may end in before a doc comment under it: no line holds
#: more, and a line of thousands of them is not walked for each.
MOST_TRAILING_COMMENTS = 4


def _ocaml_module(path: str, root: Node) -> str:
    """The module an OCaml file is, named by its file as the compiler names it: ``Lwt_unix`` of
    ``src/unix/lwt_unix.ml``."""
    stem = path.rsplit("/", 1)[-1].split(".", 1)[0]
    return stem[:1].upper() + stem[1:]


#: Zig's constants and variables, a definition where they are bound to a type's declaration.
_ZIG_CONSTANTS = _types("variable_declaration")
#: Zig's declarations of types with members.
_ZIG_TYPES = _types("struct_declaration enum_declaration union_declaration opaque_declaration")


def _named_children(node: Node) -> Iterator[Node]:
    """A node's named children one at a time, none listed before it is asked for."""
    cursor = node.walk()
    if not cursor.goto_first_child():
        return
    while True:
        if cursor.node is not None and cursor.node.is_named:
            yield cursor.node
        if not cursor.goto_next_sibling():
            return


def _last_named_child(node: Node) -> Node | None:
    """A node's last named child, found without listing the others (a block of thousands)."""
    return node.named_child(node.named_child_count - 1) if node.named_child_count else None


def _zig_container(definition: Node) -> Node | None:
    """The type declaration a Zig definition holds members by: a constant's value (``const Point =
    struct { ... }``), or what a function that makes a type returns last (``fn ArrayList(comptime
    T: type) type { return struct { ... }; }``, whose members Zig's documentation lists as
    ``ArrayList.append``); else None."""
    if definition.type in _ZIG_CONSTANTS:
        value = _last_named_child(definition)
        return value if value is not None and value.type in _ZIG_TYPES else None
    body = definition.child_by_field_name("body")
    last = _last_named_child(body) if body is not None else None
    statement = last.named_children if last is not None and last.type == "expression_statement" else []
    returned = statement[0] if statement else None
    if returned is None or returned.type != "return_expression" or not returned.named_children:
        return None
    value = returned.named_children[0]
    return value if value.type in _ZIG_TYPES else None


_OCAML = Grammar(
    "tree_sitter_ocaml",
    _types(
        "let_binding external value_specification type_binding module_binding module_type_definition "
        "class_binding class_type_binding method_definition method_specification"
    ),
    _types("module_binding module_type_definition class_binding class_type_binding"),
    # a ``[%%template ...]`` extension's payload holds a module's items as its top does
    _types("compilation_unit structure signature object_expression class_body_type attribute_payload"),
    wrappers=_types(
        "value_definition type_definition module_definition class_definition class_type_definition"
    ),
    function="language_ocaml",
    tests=TestRule(
        folders=("test", "tests"),  # dune projects' test stanzas
        markers=frozenset(
            "test test_unit expect_test test_module".split()
        ),  # ppx_inline_test's, ppx_expect's
        calls=frozenset(("test_case",)),  # Alcotest's
    ),
    floating=re.compile(r"\(\*\*(?!\*)"),  # (** but not (*** , which is no doc comment
    continues=_documents_above,
    module=_ocaml_module,
    types=_types("type_binding"),
    constructors=_types("constructor_name field_name"),
)
GRAMMARS: dict[str, Grammar] = {
    "python": Grammar(
        "tree_sitter_python",
        _types("function_definition class_definition"),
        _types("class_definition"),
        _types("module block"),
        wrappers=_types("decorated_definition"),
        tests=TestRule(files=("test_*.py", "*_test.py", "conftest.py"), bases=("TestCase",)),
        members=_types("expression_statement"),  # a class's attributes (:func:`_assigned_name`)
        # a module's constants and type aliases; a command-line option a parser's call declares
        names=_types("expression_statement call"),
    ),
    "javascript": Grammar(
        "tree_sitter_javascript",
        _types(_JS_DEFINITIONS),
        _types("class_declaration class"),
        _types(_JS_LISTS),
        wrappers=_types("export_statement lexical_declaration variable_declaration"),
        tests=_JAVASCRIPT_TESTS,
        # those a module exports (:func:`_exported_names`); a command-line option commander or
        # yargs declares (:func:`_called_option_names`)
        names=_types("variable_declarator call_expression"),
    ),
    "typescript": _TYPESCRIPT,
    "tsx": replace(_TYPESCRIPT, function="language_tsx"),  # the same grammar package, with JSX
    "go": Grammar(
        "tree_sitter_go",
        # a function, a method, a type; a package's constant or variable, alone or in a group
        # (``const ( ... )``), each spec with the comment above it, as godoc lists them
        _types("function_declaration method_declaration type_spec type_alias const_spec var_spec"),
        frozenset(),
        _types(
            "source_file block statement_list expression_case type_case default_case communication_case "
            "field_declaration_list interface_type const_declaration var_declaration var_spec_list"
        ),
        wrappers=_types("type_declaration const_declaration var_declaration"),
        tests=TestRule(files=("*_test.go",)),
        names=_types("call_expression"),  # a command-line option (:func:`_called_option_names`)
    ),
    "rust": Grammar(
        "tree_sitter_rust",
        _types(
            "function_item function_signature_item struct_item enum_item union_item trait_item impl_item "
            "mod_item macro_definition type_item"
        ),
        _types("trait_item impl_item mod_item"),
        _types("source_file declaration_list block match_block field_declaration_list enum_variant_list"),
        attached=_types("attribute_item"),
        # a constant or static, at a crate's or module's top (alone) or in an ``impl``, a trait or a
        # ``mod`` (qualified: ``Json::MAX_DEPTH``), as rustdoc lists them
        members=_types("const_item static_item"),
        # and a command-line option clap declares (:func:`_called_option_names`, :func:`_clap_field_option`)
        names=_types("const_item static_item call_expression field_declaration"),
        tests=TestRule(
            # the file of a ``#[cfg(test)] mod tests;``, as Rust names it (a ``test.rs`` is as often
            # a ``test`` command's)
            files=("tests.rs",),
            folders=("tests",),  # Cargo's integration tests, each file a crate of tests; benches/ are none
            markers=frozenset(("test", "cfg(test)")),
        ),
        separator="::",
    ),
    "java": Grammar(
        "tree_sitter_java",
        _types(
            "class_declaration interface_declaration enum_declaration record_declaration "
            "annotation_type_declaration method_declaration constructor_declaration"
        ),
        _types(
            "class_declaration interface_declaration enum_declaration record_declaration "
            "annotation_type_declaration"
        ),
        _types(
            "program class_body interface_body enum_body enum_body_declarations block constructor_body "
            "switch_block switch_block_statement_group annotation_type_body"
        ),
        tests=_JUNIT,
        members=_types("field_declaration constant_declaration enum_constant"),
    ),
    "kotlin": Grammar(
        "tree_sitter_kotlin",
        _types("class_declaration object_declaration function_declaration type_alias"),
        _types("class_declaration object_declaration companion_object"),
        _types("source_file class_body enum_class_body block statements when_entry"),
        tests=_JUNIT,
        members=_types("property_declaration enum_entry class_parameter"),
        names=_types("property_declaration"),  # at the file's top: a package's values
        reread=_kotlin_constructors_joined,
    ),
    "c": Grammar(
        "tree_sitter_c",
        _types(_C_DEFINITIONS),
        frozenset(),
        _types(_C_LISTS),
        tests=_C_TESTS,
        preprocessor=True,
        names=_C_MACROS,
    ),
    "cpp": Grammar(
        "tree_sitter_cpp",
        _types(_C_DEFINITIONS + " class_specifier namespace_definition"),
        _types("class_specifier struct_specifier union_specifier namespace_definition"),
        _types(_C_LISTS + " declaration_list"),
        wrappers=_types("template_declaration"),
        tests=_C_TESTS,
        preprocessor=True,
        separator="::",
        namespaces=_types("namespace_definition"),
        names=_C_MACROS,
    ),
    "csharp": Grammar(
        "tree_sitter_c_sharp",
        _types(
            "namespace_declaration class_declaration struct_declaration interface_declaration "
            "enum_declaration record_declaration method_declaration constructor_declaration"
        ),
        _types(
            "namespace_declaration class_declaration struct_declaration interface_declaration "
            "enum_declaration record_declaration"
        ),
        _types(
            "compilation_unit declaration_list block switch_body switch_section enum_member_declaration_list"
        ),
        tests=_XUNIT,
        members=_types(
            "property_declaration field_declaration event_declaration event_field_declaration "
            "enum_member_declaration parameter"
        ),
        namespaces=_types("namespace_declaration"),
    ),
    "ruby": Grammar(
        "tree_sitter_ruby",
        _types("class module method singleton_method singleton_class"),
        _types("class module singleton_class"),
        _types("program body_statement then else do_block block_body begin when"),
        tests=TestRule(
            files=("*_spec.rb", "*_test.rb"),
            bases=("Test", "TestCase", "Spec"),  # Minitest::Test, ActiveSupport::TestCase, Minitest::Spec
            calls=frozenset(("it", "specify", "example", "test")),
            groups=frozenset("describe context shared_examples shared_examples_for shared_context".split()),
        ),
        separator="::",
        members=_types("assignment"),  # of a constant: ``TIMEOUT = 5`` in a class or module
        names=_types("assignment"),  # of a constant at the file's top
        directives=_YARD_DIRECTIVES,
    ),
    "php": Grammar(
        "tree_sitter_php",
        _types(
            "namespace_definition class_declaration interface_declaration trait_declaration "
            "enum_declaration function_definition method_declaration"
        ),
        _types(
            "namespace_definition class_declaration interface_declaration trait_declaration enum_declaration"
        ),
        _types(
            "program declaration_list enum_declaration_list compound_statement switch_block case_statement "
            "default_statement"
        ),
        function="language_php",
        tests=TestRule(files=("*Test.php",), markers=frozenset(("Test",)), bases=("TestCase",)),
        separator="::",
        members=_types("const_declaration property_declaration enum_case property_promotion_parameter"),
        namespaces=_types("namespace_definition"),
    ),
    "swift": Grammar(
        "tree_sitter_swift",
        _types(
            "class_declaration protocol_declaration function_declaration protocol_function_declaration "
            "init_declaration typealias_declaration"
        ),
        _types("class_declaration protocol_declaration"),
        _types(
            "source_file class_body enum_class_body protocol_body statements computed_property "
            "switch_statement"
        ),
        tests=TestRule(
            folders=("Tests",),  # SwiftPM's: every test target's sources lie under Tests/
            markers=frozenset(("Test", "Suite")),  # swift-testing's
            bases=("TestCase",),  # XCTest's XCTestCase, and a project's own base of it
        ),
        members=_types(
            "property_declaration protocol_property_declaration enum_entry associatedtype_declaration"
        ),
        names=_types("property_declaration"),  # at the top of a file of declarations: a module's globals
    ),
    "scala": Grammar(
        "tree_sitter_scala",
        _types(
            "class_definition object_definition trait_definition enum_definition function_definition "
            "function_declaration type_definition given_definition"
        ),
        _types("class_definition object_definition trait_definition enum_definition"),
        _types(
            "compilation_unit template_body enum_body enum_case_definitions block indented_block case_block"
        ),
        tests=TestRule(
            folders=("test",),  # sbt's and Maven's src/test/, Mill's test/src/
            markers=frozenset(("Test",)),  # JUnit's, which MUnit runs on
            bases=("Suite", "Spec", "SpecDefault", "Specification"),  # MUnit, ScalaTest, ZIO, specs2
            # MUnit's, ScalaTest's FunSuite and FunSpec, verify's and utest's ``test("name") { ... }``
            calls=frozenset(("test", "it")),
            groups=frozenset(("describe",)),  # ScalaTest's FunSpec
        ),
        members=_types(
            "val_definition var_definition val_declaration var_declaration class_parameter simple_enum_case "
            "full_enum_case"
        ),
    ),
    "lua": Grammar(
        "tree_sitter_lua",
        # a function's declaration (``function M.parse(text)``, ``local function helper()``), a
        # function assigned to a name (``M.parse = function(text)``), and a module table's fields
        # that hold functions (``local M = { parse = function(text) ... end }``)
        _types("function_declaration assignment_statement field"),
        frozenset(),
        _types("chunk block"),
        wrappers=_types("variable_declaration"),  # ``local``
        tests=TestRule(
            files=("*_spec.lua",),  # busted's
            folders=("spec",),  # where busted looks for specs
            calls=frozenset(("it", "spec", "test")),
            groups=frozenset(("describe", "context", "insulate", "expose")),
        ),
        names=_types("assignment_statement"),  # of a field of the module's table: ``M.debug = false``
    ),
    "elixir": Grammar(
        "tree_sitter_elixir",
        _types("call"),  # of the calls in ``defining``
        frozenset(),
        _types("source do_block body else_block after_block rescue_block catch_block"),
        attached=_types("unary_operator"),  # a module attribute above a function: ``@doc``, ``@spec``
        tests=TestRule(
            files=("*_test.exs",),  # ExUnit's
            folders=("test",),  # Mix's test paths
            bases=("Case",),  # a module that ``use``s ``ExUnit.Case``, or a project's ``ConnCase``
            calls=frozenset(("test",)),  # ExUnit's ``test "parses" do``
            groups=frozenset(("describe",)),
        ),
        members=_types("call"),  # of ``defstruct`` and ``defexception``: the struct's fields
        defining=_types(
            "defmodule defprotocol defimpl def defp defmacro defmacrop defguard defguardp defdelegate"
        ),
        opening=_types("defmodule defprotocol defimpl"),
        continues=_continues_clauses,  # a function's later clauses: ``def get(nil)``, ``def get(id)``
    ),
    "dart": Grammar(
        "tree_sitter_dart",
        _types(
            "class_definition mixin_declaration extension_declaration extension_type_declaration "
            "enum_declaration type_alias function_signature getter_signature setter_signature "
            + " ".join(_DART_CONSTRUCTORS)
            + " operator_signature"
        ),
        _types(
            "class_definition mixin_declaration extension_declaration extension_type_declaration "
            "enum_declaration"
        ),
        _types("program class_body extension_body enum_body block switch_block"),
        # a method's signature, and a member declared without a body (abstract, external, a
        # constructor that redirects or initializes only), carry the signature; a field's list of
        # names carries them to their class
        wrappers=_types(
            "method_signature declaration initialized_identifier_list static_final_declaration_list"
        ),
        attached=_types("annotation"),
        tests=TestRule(
            files=("*_test.dart",),  # package:test's and flutter_test's
            folders=("test", "integration_test", "test_driver"),  # pub's, and Flutter's driven tests
            calls=frozenset(("test", "testWidgets")),
            groups=frozenset(("group",)),
            runner="main",
        ),
        members=_types(
            "initialized_identifier static_final_declaration enum_constant representation_declaration"
        ),
        names=_types("initialized_identifier static_final_declaration"),  # at the file's top
        bodies=_types("function_body"),
    ),
    "zig": Grammar(
        "tree_sitter_zig",
        # a function; a constant bound to a struct, enum, union or opaque type; a test
        _types("function_declaration variable_declaration test_declaration"),
        frozenset(),  # which of them hold members: container_of
        _types("source_file block struct_declaration enum_declaration union_declaration opaque_declaration"),
        # what lies between a function that returns a type and that type's members
        wrappers=_types("expression_statement return_expression"),
        tests=TestRule(kinds=_types("test_declaration")),
        members=_types("container_field variable_declaration"),
        names=_types("variable_declaration"),  # at the file's top, an import or alias aside
        inner_doc="//!",
        container_of=_zig_container,
    ),
    "haskell": Grammar(
        "tree_sitter_haskell",
        # a function's type signature heads it, its equations continuing it (:func:`_continues_equations`)
        _types(
            "signature function bind data_type newtype type_synonym type_family data_family class instance "
            "foreign_import"
        ),
        _types("class instance"),
        _types("declarations class_declarations instance_declarations local_binds do alternatives"),
        attached=_types("haddock pragma"),
        tests=TestRule(
            files=("*Spec.hs", "*Test.hs"),  # hspec-discover's, and tasty-discover's
            folders=("test", "tests"),  # Cabal's and Stack's test suites' hs-source-dirs
            calls=frozenset("it specify prop testCase testProperty".split()),  # hspec's, tasty's
            groups=frozenset("describe context testGroup".split()),
        ),
        continues=_continues_haskell,
        module=_haskell_module,
        types=_types("data_type newtype"),
        constructors=_types("constructor field_name"),
    ),
    "ocaml": _OCAML,
    "ocaml_interface": replace(_OCAML, function="language_ocaml_interface"),  # .mli: signatures
    "bash": Grammar(
        "tree_sitter_bash",
        _types("function_definition"),
        frozenset(),
        _types("program compound_statement do_group if_statement elif_clause else_clause case_item subshell"),
    ),
}

#: The language of each file extension read here.
CODE_EXTENSIONS: dict[str, str] = {
    **dict.fromkeys(("py", "pyi"), "python"),
    **dict.fromkeys(("js", "jsx", "mjs", "cjs"), "javascript"),
    "ts": "typescript",
    "mts": "typescript",
    "cts": "typescript",
    "tsx": "tsx",
    "go": "go",
    "rs": "rust",
    "java": "java",
    **dict.fromkeys(("kt", "kts"), "kotlin"),
    **dict.fromkeys(("c", "h"), "c"),
    **dict.fromkeys(("cc", "cpp", "cxx", "hpp", "hh", "hxx"), "cpp"),
    "cs": "csharp",
    "rb": "ruby",
    "php": "php",
    "scala": "scala",
    "swift": "swift",
    "lua": "lua",
    **dict.fromkeys(("ex", "exs"), "elixir"),
    "dart": "dart",
    "zig": "zig",
    "hs": "haskell",
    "ml": "ocaml",
    "mli": "ocaml_interface",
    **dict.fromkeys(("sh", "bash", "zsh"), "bash"),
}
#: The language of each interpreter a script's ``#!`` line names (a version's digits aside:
#: ``python3.12``), for a script named without an extension (``bin/deploy``).
INTERPRETERS: dict[str, str] = {
    **dict.fromkeys(("sh", "bash", "dash", "ksh", "zsh"), "bash"),
    **dict.fromkeys(("node", "nodejs"), "javascript"),
    **{language: language for language in "python ruby php lua elixir swift scala".split()},
}
#: How much of a script's first line is read for its interpreter: as much as a kernel reads of it.
MAX_SHEBANG_CHARS = 256

#: A name that a qualified name can hold: identifiers, joined as the language joins a member's; a
#: PHP property with its ``$`` (``Logger::$name``, as PHP and its doc comments' ``@see`` write it);
#: a name that ends in ``?`` or ``!``, as Ruby's and Elixir's may (``Ecto.Changeset.change!``).
_QUALIFIABLE = re.compile(r"[~$]?[A-Za-z_]\w*[?!]?(?:(?:::|\.)[~$]?[A-Za-z_]\w*[?!]?)*")
#: A method's name that ends in ``=`` (a Ruby setter: ``proxy=``) or is an operator (Ruby's ``==``,
#: ``[]``, ``<=>``, ``-@``; Scala's and Swift's ``+``), qualified as any other method's:
#: ``Connection::proxy=``.
_OPERATOR_OR_SETTER = re.compile(r"[A-Za-z_]\w*=|\[\]=?|[-+*/%<>=!~^&|]{1,3}@?")
#: Between the trait and the type in the title of a Rust trait impl (``Display for Path``).
_TRAIT_FOR = " for "
#: Name nodes a C or C++ declarator ends in.
_DECLARATOR_NAMES = _types(
    "identifier field_identifier qualified_identifier destructor_name operator_name type_identifier"
)


def language_of(extension: str) -> str | None:
    """The language of a lower-case file extension read by :func:`read_code`, or None."""
    return CODE_EXTENSIONS.get(extension)


def script_language(text: str) -> str | None:
    """The language of a script that names its interpreter on its ``#!`` line (:data:`INTERPRETERS`;
    through ``env`` too, past its options: ``#!/usr/bin/env -S node --no-warnings``), or None."""
    if not text.startswith(SHEBANG):
        return None
    end = text.find("\n", 0, MAX_SHEBANG_CHARS)
    words = text[len(SHEBANG) : end if end >= 0 else MAX_SHEBANG_CHARS].split()
    programs = [word.rsplit("/", 1)[-1] for word in words[:1]]
    if programs == ["env"]:
        programs = [word.rsplit("/", 1)[-1] for word in words[1:] if not word.startswith("-")][:1]
    return INTERPRETERS.get(programs[0].rstrip("0123456789.").lower()) if programs else None


def read_code(path: str, text: str, encoding: str, language: str) -> Document:
    """The document of a source file in ``language`` (a key of :data:`GRAMMARS`), headed by ``path``
    (the module), its definitions nested under it; plain lines when its grammar cannot read it."""
    lines = split_lines(text)
    data = text.encode("utf-8", "surrogatepass")
    grammar = GRAMMARS[language]
    whole = [(1, len(lines))] if lines and grammar.tests.holds_only_tests(path) else []
    outline = _readable_outline(path, lines, data, language) if len(data) <= MAX_PARSED_BYTES else None
    if outline is None:  # plain lines, still headed by the module
        return Document(
            lines=lines, headings=[Heading(1, 1, path)] if lines else [], encoding=encoding, tests=whole
        )
    return Document(
        lines=lines,
        headings=[Heading(1, 1, path), *sorted(outline.headings, key=_heading_order)],
        literal=_without_headings(outline.literal(), outline.headings),
        block_starts=sorted(outline.block_starts),
        encoding=encoding,
        definitions={} if path.endswith(DECLARATION_FILES) else outline.declared(),
        tests=whole or _merged(outline.tests),
    )


#: Header files that C and C++ name alike: a ``.h`` that C cannot read is read as C++ (fmt's,
#: most C++ libraries' headers).
SHARED_HEADERS = (".h",)


def _readable_outline(path: str, lines: list[str], data: bytes, language: str) -> _Outline | None:
    """The outline of the first reading of the file whose syntax errors stay under the limit
    (:func:`_most_errors`): as written; C and C++ then in one configuration (:func:`one_configuration`), a
    language its grammar reads again so (:attr:`Grammar.reread`); a shared header (:data:`SHARED_HEADERS`)
    then as C++ too. Where that reading has errors, each later reading replaces it where it reads the file
    better (:func:`_better`): a C++ header that C reads with few errors and few definitions is read as
    C++. In C and C++, each reading of a language that can read the file (of any, where none can) is then
    read without its declarations' macros (:func:`without_macros`), and replaces the one chosen so far in
    the same way. None when no reading can be trusted, or the language's grammar cannot be loaded."""
    tongues = [language, "cpp"] if language == "c" and path.lower().endswith(SHARED_HEADERS) else [language]
    readings = [
        (tongue, read, source)
        for tongue in tongues
        if _reader(tongue) is not None
        for read, source in _readings(lines, data, tongue)
    ]
    chosen: _Outline | None = None
    readable: set[str] = set()  # the languages that read the file as written or configured
    for tongue, read, source in readings:
        outline = _readable(path, _outline(tongue, read, source), read)
        if outline is None:
            continue
        if chosen is None and not outline.error_lines():
            return outline
        chosen = _better(chosen, outline)
        readable.add(tongue)
    for tongue, read, _ in readings:
        if GRAMMARS[tongue].preprocessor and tongue in (readable or set(tongues)):
            outline = _readable_without_macros(path, tongue, read)
            if outline is not None:
                chosen = _better(chosen, outline)
    if chosen is None and readings:
        tongue, read, source = readings[0]
        return _salvaged(path, _outline(tongue, read, source))
    return chosen


def _salvaged(path: str, outline: _Outline | None) -> _Outline | None:
    """The outline of the statements at the top of the file at ``path`` that its grammar parses
    whole, where too much of it lies in syntax errors to read the rest (:func:`_readable`): one
    construct a grammar cannot parse (a TypeScript interface whose call signatures it cannot tell
    apart) can wrap a whole file in one error, around the statements it did parse. What lies in
    the errors around them is read as plain lines, under the module's heading; None where no
    statement defines a name, or the grammar gave up on the file."""
    if outline is None:
        return None
    outline.salvaging = True
    outline.read(path)
    return outline if outline.definitions else None


def _readable_without_macros(path: str, language: str, lines: list[str]) -> _Outline | None:
    """The outline of ``lines`` without their declarations' macros (:func:`without_macros`), read
    where it can be trusted; None where it cannot, or the lines hold no such macro."""
    without = without_macros(lines)
    if without == lines:
        return None
    return _readable(path, _outline(language, without, _source_of(without)), without)


def _outline(language: str, lines: list[str], source: bytes) -> _Outline | None:
    """What ``language``'s grammar finds in ``source`` (the bytes of ``lines``), not yet read; None
    where its parser gives up (:func:`_parsed`)."""
    reader = _reader(language)
    assert reader is not None  # the readings are of grammars that load
    parser, wanted = reader
    root = _parsed(parser, source)
    return None if root is None else _Outline(GRAMMARS[language], lines, _found(root, wanted), root)


#: How many times, at most, a parser may report its progress for each byte it parses: tree-sitter
#: reports about every hundred steps, and real code, in every grammar here, takes under a sixth of
#: this (tests, dense with calls, the most), while in some runs of punctuation a grammar's error
#: recovery tries again at every token, in time that grows with the square of their length (64 KB of
#: ``<!--`` in C took minutes). A parse past it is given up, and the file read as lines.
PROGRESS_REPORTS_PER_BYTE = 0.2
#: The reports any parse may make, however small its file.
LEAST_PROGRESS_REPORTS = 1_000
#: The seconds any parse may take, and the seconds it may take more for each megabyte: real code
#: parses at several megabytes a second, while some grammars' scanners look ahead to a file's end
#: from each of a run of brackets (Dart's), in time that grows with the square of the run but takes
#: few steps. A parse past them is given up too.
PARSE_SECONDS = 0.5
PARSE_SECONDS_PER_MEGABYTE = 1.0
#: How many bytes of a file the parser is handed at a time.
PARSE_SLICE_BYTES = 1 << 16


def _parsed(parser: Parser, source: bytes) -> Node | None:
    """The root of ``source``'s syntax tree, or None where the parser takes more steps than
    :data:`PROGRESS_REPORTS_PER_BYTE` allows for its size, or more time than
    :data:`PARSE_SECONDS` does (then reset, so that the next parse starts anew rather than
    resuming this one). Handed in slices, as tree-sitter reports its progress only on a source it
    reads by a callback, then parsed again from its bytes (in a millisecond: every node reused)."""
    most_reports = LEAST_PROGRESS_REPORTS + PROGRESS_REPORTS_PER_BYTE * len(source)
    deadline = time.monotonic() + PARSE_SECONDS + PARSE_SECONDS_PER_MEGABYTE * len(source) / 1e6
    reports = 0

    def gives_up(offset: int, has_error: bool) -> bool:
        nonlocal reports
        reports += 1
        return reports > most_reports or time.monotonic() > deadline

    try:
        tree = parser.parse(
            lambda offset, point: source[offset : offset + PARSE_SLICE_BYTES], progress_callback=gives_up
        )
    except ValueError:  # "Parsing failed": the parse was given up
        parser.reset()
        return None
    # parsed again from the bytes, reusing every node: a tree parsed from a callback asks it for
    # each node's text, a slice of the file copied each time
    return parser.parse(source, old_tree=tree).root_node


def _found(root: Node, wanted: dict[str, tuple[str, ...]]) -> dict[str, list[Node]]:
    """The nodes under ``root`` (itself included) of each type ``wanted`` names, under each name it
    gives that type (:func:`_reader`), in the order of the source: one walk of the tree with its
    cursor, each node visited once. Not a tree-sitter query, whose cursor steps, at each node,
    over the node's earlier siblings: an error of tens of thousands of tokens side by side (a file
    of ``((((``) took minutes to query, where the walk takes milliseconds."""
    found: dict[str, list[Node]] = {}
    cursor = root.walk()
    while True:
        node = cursor.node
        if node is not None and (node.is_named or node.is_error):
            for name in wanted.get(node.type, ()):
                found.setdefault(name, []).append(node)
        if cursor.goto_first_child():
            continue
        while not cursor.goto_next_sibling():
            if not cursor.goto_parent():
                return found


def _readable(path: str, outline: _Outline | None, lines: list[str]) -> _Outline | None:
    """``outline`` read as the file at ``path``'s, where its syntax errors stay under the limit
    for ``lines`` (:func:`_most_errors`); else None, unread (and where there is no outline)."""
    if outline is None or outline.error_lines() > _most_errors(lines):
        return None
    outline.read(path)
    return outline


def _source_of(lines: list[str]) -> bytes:
    """The bytes a parser reads for ``lines`` of a reading made here (one line to a row)."""
    return "\n".join(lines).encode("utf-8", "surrogatepass")


def _better(outline: _Outline | None, other: _Outline) -> _Outline:
    """``other`` (another reading of the file) where there is no ``outline`` yet, or where it has no
    more errors than ``outline`` and finds no fewer definitions, and is better in one; else
    ``outline``. tree-sitter recovers from errors in ways that can swallow many definitions into an
    expression, so fewer errors alone is not enough, and a reading that finds fewer definitions may
    have lost a branch's."""
    if outline is None:
        return other
    errors, found = outline.error_lines(), len(outline.definitions)
    fewer, more = other.error_lines(), len(other.definitions)
    return other if fewer <= errors and more >= found and (fewer, more) != (errors, found) else outline


def _readings(lines: list[str], data: bytes, language: str) -> Iterator[tuple[list[str], bytes]]:
    """The lines a parser of ``language`` reads and their bytes: as written, then, for a language
    with C's preprocessor, in one configuration, and for one its grammar reads again
    (:attr:`Grammar.reread`), so read, where that differs."""
    yield lines, data
    grammar = GRAMMARS[language]
    if grammar.preprocessor:
        configured = one_configuration(lines, language)
        if configured != lines:
            yield configured, _source_of(configured)
    if grammar.reread is not None:
        reread = grammar.reread(lines)
        if reread != lines:
            yield reread, _source_of(reread)


def _most_errors(lines: list[str]) -> float:
    """How many of ``lines`` (those parsed) may lie inside syntax errors (:data:`MAX_ERROR_SHARE`)."""
    return MAX_ERROR_SHARE * sum(1 for line in lines if line.strip())


def _heading_order(heading: Heading) -> tuple[int, int]:
    return heading.line, heading.level  # the module before a class starting on its first line


@cache
def _reader(language: str) -> tuple[Parser, dict[str, tuple[str, ...]]] | None:
    """A parser of ``language`` and the names under which :class:`_Outline` reads each node type
    (:func:`_found`), its grammar imported on first use; None for a grammar these bindings cannot
    load (built for another ABI)."""
    from tree_sitter import Language, Parser

    grammar = GRAMMARS[language]
    module = importlib.import_module(grammar.package)
    try:
        tongue = Language(getattr(module, grammar.function)())
    except ValueError:  # "Incompatible Language version": that grammar's files are read as plain lines
        return None
    # only the node types this version of the grammar names: another's is never found
    known = [kind for kind in range(tongue.node_kind_count) if tongue.node_kind_is_named(kind)]
    named = {tongue.node_kind_for_id(kind) for kind in known}
    comments = {kind for kind in named if kind and "comment" in kind}
    captures = {
        "list": grammar.lists,
        "definition": grammar.definitions,
        "member": grammar.members,
        "named": grammar.names,
        "attached": grammar.attached | comments,
        "error": {"ERROR"},
    }
    wanted: dict[str, tuple[str, ...]] = {}
    for name, kinds in captures.items():
        for kind in sorted(kinds & named | ({"ERROR"} & kinds)):
            wanted[kind] = (*wanted.get(kind, ()), name)
    return Parser(tongue), wanted


@dataclass
class _Outline:
    """What a syntax tree says of a file's outline: headings, definitions, statements, errors."""

    grammar: Grammar
    lines: list[str]
    found: dict[str, list[Node]]  # the nodes it reads, by the name they are read under (_found)
    root: Node
    headings: list[Heading] = field(default_factory=list)
    definitions: dict[int, tuple[str, ...]] = field(default_factory=dict)
    #: names declared apart from the definitions (:attr:`Grammar.names`), which do not tell one
    #: reading of the file from another (:func:`_better`): a configuration leaves out a branch's
    named: dict[int, tuple[str, ...]] = field(default_factory=dict)
    block_starts: set[int] = field(default_factory=set)
    statements: list[tuple[int, int]] = field(default_factory=list)  # (first, last) 1-based
    #: comments and attributes alone on their lines: (first row, column) by last row
    attached: dict[int, tuple[int, int]] = field(default_factory=dict)
    #: the rows a comment that documents the next declaration whatever lies between ends on, and
    #: the row it starts on (:data:`_DOCUMENTING`)
    documenting: dict[int, int] = field(default_factory=dict)
    tests: list[tuple[int, int]] = field(default_factory=list)  # (first, last) 1-based
    tested: set[int] = field(default_factory=set)  # node ids of the tests and test classes
    #: read from a tree mostly in error (:func:`_salvaged`): only the statements at the file's top
    #: that parse whole are read, and what lies in its errors around them is plain lines
    salvaging: bool = False
    #: the titles of the tests and groups of tests that calls declare, by node id, which head them
    #: (:meth:`_titled_test_calls`), and those of them that are groups
    titles: dict[int, str] = field(default_factory=dict)
    groups: set[int] = field(default_factory=set)

    def declared(self) -> dict[int, tuple[str, ...]]:
        """The names each line declares: its definitions' and members', and those named alone."""
        declared = dict(self.definitions)
        for line, names in self.named.items():
            declared[line] = tuple(sorted(set(names) | set(declared.get(line, ()))))
        return declared

    def error_lines(self) -> int:
        """How many lines lie inside syntax errors."""
        rows: set[int] = set()
        for error in self.found.get("error", []):
            rows.update(range(error.start_point[0], error.end_point[0] + 1))
        return len(rows)

    def read(self, module: str) -> None:
        """Headings and declared names of the definitions of the file at path ``module``, its
        statements' starts, and the rows its comments and attributes take alone."""
        for node in self.found.get("attached", []):
            self._attach(node)
        for node in self.found.get("list", []):
            self._statements(node.named_children)
        if self.salvaging:
            for error in self.file_level_errors.values():
                self._statements([child for child in error.named_children if self._whole(child, error)])
        named = self.grammar.module(module, self.root) if self.grammar.module is not None else ""
        top = (named,) if named else ()  # qualifies the file's names, heads nothing
        candidates = [node for node in self.found.get("definition", []) if self._is_definition(node)]
        known = {node.id for node in candidates}
        candidates += self._titled_test_calls()
        candidates.sort(key=lambda node: node.start_byte)  # containers before what they hold
        every = known | self.titles.keys()  # what may own a definition: a test group too
        # a headed definition's node id: (the level its members' headings take, its heading path)
        headed: dict[int, tuple[int, tuple[str, ...]]] = {}
        outers: dict[int, Node] = {}  # node ids of what carries each headed definition
        placed: list[tuple[Node, Node | None, int, tuple[str, ...]]] = []
        for node in candidates:
            outer = self._outer(node, every)
            owner = self._owner(outer, every)
            qualify = declares = True
            if node.id in self.titles:  # a test's or a group's title: it declares no name
                if owner is not None and not (owner.id in headed and self._holds_tests(owner)):
                    del self.titles[node.id]  # a library's own ``describe``: no test, no heading
                    every.discard(node.id)
                    continue
                qualify = declares = False
            elif owner is None:
                if self.salvaging and outer.has_error:
                    continue  # a statement of the file's that does not parse: plain lines
            elif owner.id in headed and self._is_container(owner) and _directly_in(outer, owner):
                # a test group's own helper (``def`` in ``describe``): known by no name of the group's
                qualify = declares = owner.id not in self.titles
            elif owner.id in headed and _declared_in_body(outer, node, owner, self.grammar):
                # a test's own helper is its statement's name: no lookup of the name is for it
                helper = self._within_test(owner) or self.grammar.tests.holds_only_tests(module)
                qualify, declares = False, not helper
            else:
                continue  # inside a function (a closure), or inside a syntax error
            level, path = headed[owner.id] if owner is not None else (2, (module,))
            owners = (top if qualify else ()) + path[1:]
            titles = self._head(outer, node, level, owners, qualify=qualify, declares=declares)
            headed[node.id] = (level + len(titles), path + titles)
            outers[outer.id] = outer
            placed.append((outer, owner, level, path))
            if qualify and self._is_test(outer, node):
                self._mark_test(outer, owner)
        ends = list(placed)
        if self.grammar.tests.macros:
            ends += self._macro_tests(module, known, headed, outers)
        for end, owner, level, path in ends:
            self._resume_after(end, owner, level, path, outers)
        if self.grammar.tests.calls:
            for node in self.found.get("list", []):
                self._test_calls(node.named_children, known)
        for member in self.found.get("member", []):
            holder = self._holder(member, known)
            if holder is not None and holder.id in headed:
                self._declare(_member_names(member), top + headed[holder.id][1][1:])
        alone = self.found.get("named", [])  # what declares its names alone (Grammar.names)
        # asked only of a file with a top-level property (Kotlin's, Swift's), the one kind it decides
        script = any(node.type == "property_declaration" for node in alone) and _is_script(module, self.root)
        by_line: dict[int, list[str]] = {}  # made tuples once: linear in the names on a line
        for node in alone:
            for name in _declared_names(node, script):
                by_line.setdefault(name.start_point[0] + 1, []).extend(_named_forms(name))
        self.named.update((line, tuple(names)) for line, names in by_line.items())
        if self.grammar.directives is not None:
            definitions = [node for node in candidates if node.id in known]  # in order, as placed
            self._declare_directives(self.grammar.directives, definitions, headed, top)
        namespaces = self.grammar.namespaces
        tops = [
            outer
            for outer, owner, _, _ in placed
            if (owner is None or owner.type in namespaces) and outer.type not in namespaces
        ]
        if (
            self.tested
            and all(self._within_test(outer) for outer in tops)
            and not all(map(self._beside, tops))
        ):
            # a file of tests alone: its imports, usings and package line serve only them; not
            # where tests lie beside the code they test, which the file's other lines may be
            self.tests = [(1, len(self.lines))]

    def _macro_tests(
        self,
        module: str,
        known: set[int],
        headed: dict[int, tuple[int, tuple[str, ...]]],
        outers: dict[int, Node],
    ) -> list[tuple[Node, Node | None, int, tuple[str, ...]]]:
        """Head and mark the tests that macros declare at the file's top or a namespace's
        (:attr:`TestRule.macros`), each as a test function: titled by its name, its lines from its
        comments to its block's end. Its name declares nothing: it describes the test (Catch2's are
        sentences) or repeats the name of what it tests, which a one-name question asks for. A
        namespace of no heading (the anonymous ``namespace { ... }`` GoogleTest's tests usually sit
        in) leaves its tests under the nearest headed one around it, or the file. Adds each to
        ``outers``; returns, for each, what the code after it follows (its block), its owner, and
        its heading's level and container path."""
        namespaces = self.grammar.namespaces
        found = []
        for holder in self.found.get("list", []):
            owner = holder.parent
            if owner is not None and owner.type not in namespaces:
                continue  # a function's or a class's body, not a file's or a namespace's top
            while owner is not None and owner.type in namespaces and owner.id not in headed:
                owner = self._owner(owner, known)
            if owner is not None and (owner.type not in namespaces or owner.id not in headed):
                continue  # inside a function, or inside a syntax error
            level, path = headed[owner.id] if owner is not None else (2, (module,))
            for statement in holder.named_children:
                test = _macro_test(statement, self.grammar.tests.macros)
                if test is None:
                    continue
                title, body = test
                first = self._first_row(statement)
                self.headings.append(Heading(first + 1, level, title))
                self.tests.append((first + 1, body.end_point[0] + 1))
                if body.start_point[0] > statement.start_point[0]:  # its brace on a line of its own
                    self.block_starts.discard(body.start_point[0] + 1)
                self.tested.add(statement.id)
                outers[statement.id] = statement
                found.append((body, owner, level, path))
        return found

    def _is_test(self, outer: Node, definition: Node) -> bool:
        """Whether a definition is a test as its language declares one: by an attribute or annotation
        on it (:attr:`TestRule.markers`), or a base class (:attr:`TestRule.bases`)."""
        rule = self.grammar.tests
        if definition.type in rule.kinds:
            return True
        if rule.markers and not rule.markers.isdisjoint(self._markers(outer, definition)):
            return True
        if definition.type in _HASKELL_BINDINGS or definition.type == "let_binding":
            return any(_calls_a_test(node, rule.calls | rule.groups) for node in self._group(outer))
        return bool(rule.bases) and any(base.endswith(rule.bases) for base in _base_names(definition))

    def _markers(self, outer: Node, definition: Node) -> set[str]:
        """The attributes and annotations on a definition, each by its last name and as written
        without spaces: those just above it (Rust's ``#[test]``) and those among its modifiers
        (``@Test``, ``[Fact]``)."""
        found: list[Node] = []
        above = outer.prev_named_sibling
        while above is not None and above.type in self.grammar.attached:
            found.extend(above.named_children)
            above = above.prev_named_sibling
        for child in definition.named_children:
            if child.type in _MODIFIER_LISTS:
                found.extend(_descendants(child, _MARKERS))
            elif child.type in _MARKERS:  # Scala's, written before the definition's keyword
                found.append(child)
        markers = {_text(child) for child in outer.named_children if child.type == "attribute_id"}  # let%test
        for marker in found:
            if marker.type in _MARKERS and marker.named_children:
                markers.add(_last_part(_text(marker.named_children[0])))
                markers.add("".join(_text(marker).split()))
        return markers

    def _mark_test(self, outer: Node, owner: Node | None) -> None:
        """A test's lines, from its comments and attributes on; a class holding a test is a test
        class (JUnit's definition), all of it."""
        self.tests.append((self._first_row(outer) + 1, self._group(outer)[-1].end_point[0] + 1))
        self.tested.add(outer.id)
        if self._beside(outer):
            return  # Zig's and OCaml's tests beside the code they test, in its container
        if owner is not None and self._is_container(owner) and owner.type not in self.grammar.namespaces:
            carrier = owner
            while carrier.parent is not None and carrier.parent.type in self.grammar.wrappers:
                carrier = carrier.parent
            self.tests.append((self._first_row(carrier) + 1, carrier.end_point[0] + 1))
            self.tested.add(carrier.id)

    def _beside(self, test: Node) -> bool:
        """Whether a test is written beside the code it tests, in that code's container or file
        (Zig's ``test "name" { }``, OCaml's ``let%test``), which it makes no test container."""
        return test.type in self.grammar.tests.kinds or _holds_inline_test(test)

    def _titled_test_calls(self) -> list[Node]:
        """The calls that declare a test or a group of tests and title it by their first argument, a
        string or a constant (RSpec's ``describe Parser do``, ``context 'when empty' do``, ``it
        'parses' do``, busted's ``describe("join", function() ... end)``, package:test's
        ``group('Parser', () { ... })``), recorded in :attr:`titles` and :attr:`groups`: each heads
        its block, as a class and its methods do, its tests and helpers under it."""
        rule = self.grammar.tests
        found = []
        for holder in self.found.get("list", []) if rule.calls or rule.groups else []:
            for call in holder.named_children:
                if not _declares_test(call, rule):
                    continue
                called, first = _test_call_parts(call)
                title = _test_call_title(first) if first is not None else ""
                if title:
                    self.titles[call.id] = title
                    if called in rule.groups:
                        self.groups.add(call.id)
                    found.append(call)
        return found

    def _holds_tests(self, owner: Node) -> bool:
        """Whether a call in ``owner`` that declares a test declares one: in a test group, a test
        class, or the function that runs a file's tests (:attr:`TestRule.runner`)."""
        runner = self.grammar.tests.runner
        in_runner = bool(runner) and owner.id not in self.titles and self._names(owner) == (runner,)
        return owner.id in self.titles or self._within_test(owner) or in_runner

    def _declare_directives(
        self,
        directives: re.Pattern[str],
        definitions: list[Node],
        headed: dict[int, tuple[int, tuple[str, ...]]],
        top: tuple[str, ...],
    ) -> None:
        """Declare the methods the comments' directives name (:attr:`Grammar.directives`) as
        methods of the container the comment lies in, on the comment's line; alone at a file's top.
        The definition each comment lies in is found by one sweep over ``definitions`` (in the
        order they start) beside the comments in theirs: asking each comment for its parent costs
        the time to find it among its siblings."""
        written = [
            (comment, found)
            for comment in self.found.get("attached", [])
            if b"@!" in (comment.text or b"") and (found := directives.match(_text(comment))) is not None
        ]
        written.sort(key=lambda pair: pair[0].start_byte)
        around: list[Node] = []  # the definitions the sweep is in, the innermost last
        following = iter(definitions)
        upcoming = next(following, None)
        for comment, found in written:
            while upcoming is not None and upcoming.start_byte <= comment.start_byte:
                while around and around[-1].end_byte <= upcoming.start_byte:
                    around.pop()
                around.append(upcoming)
                upcoming = next(following, None)
            while around and around[-1].end_byte <= comment.start_byte:
                around.pop()
            holder = around[-1] if around else None
            if holder is not None and not (holder.id in headed and self._is_container(holder)):
                continue  # in a method's body, or in a container of no heading
            names = (found["name"],)
            owners = top + (headed[holder.id][1][1:] if holder is not None else ())
            declared = _known_alone(names, member=False) | self._qualified(owners, names)
            line = comment.start_point[0] + 1
            self.definitions[line] = tuple(sorted(declared | set(self.definitions.get(line, ()))))

    def _test_calls(self, statements: list[Node], known: set[int]) -> None:
        """Mark the statements that declare a test or a group of tests by a call
        (:attr:`TestRule.calls`, :attr:`TestRule.groups`) as tests, as :meth:`_mark_test` does."""
        rule = self.grammar.tests
        for call in statements:
            owner = self._owner(call, known)
            in_runner = owner is not None and bool(rule.runner) and self._names(owner) == (rule.runner,)
            if _declares_test(call, rule) and (owner is None or owner.id in self.tested or in_runner):
                self._mark_test(call, owner)

    def _within_test(self, node: Node) -> bool:
        """Whether ``node`` is a test or lies in one (a helper method in a ``describe`` block)."""
        around: Node | None = node
        while around is not None and around.id not in self.tested:
            around = around.parent
        return around is not None

    def _is_definition(self, node: Node) -> bool:
        """Whether ``node`` defines a name: a function or class bound to a variable counts, and so
        does one a call builds around a function or class it is given (a component wrapped in
        ``memo(...)``, a store made by ``create((set) => ...)``, a type made by a factory), whose
        body that function is, and a module's object of methods (:meth:`_is_container`); a value
        does not. A struct counts where it has a body."""
        if not self._names(node) or not _has_body(node):
            return False
        if self.grammar.continues is not None and self.grammar.continues(node):
            return False  # a Haskell function's second equation: the first's definition goes on
        if node.type == "let_binding":  # OCaml's: a module's value or a class's, not a step of a body
            holder = node.parent.parent if node.parent is not None else None
            return holder is not None and holder.type in self.grammar.lists
        if node.type in _HASKELL_BINDINGS and (
            node.parent is None or node.parent.type not in _HASKELL_DECLARATIONS
        ):
            return False
        if _macro_test(node, self.grammar.tests.macros) is not None:
            return False  # GoogleTest's TEST(Suite, Name) { as C++ reads it: a test, not a function TEST
        if node.type in _LUA_ASSIGNMENTS:
            value = _assigned(node)
            return value is not None and (
                value.type == "function_definition" or (_at_lua_top(node) and _holds_functions(value))
            )
        if node.type in _ZIG_CONSTANTS and self.grammar.container_of is not None:
            return self.grammar.container_of(node) is not None
        if node.type == "variable_declarator":
            value = node.child_by_field_name("value")
            if _exported_from_module(node) and (value is None or _defines_nothing(value, self.grammar)):
                return True  # the module's declared surface, whatever its value, as ``export function``
            if value is None:
                return False
            built = _builds_from_function(value) or _holds_methods(value)
            return _is_function(value) or (_at_module_level(node) and built)
        return True

    def _is_container(self, definition: Node) -> bool:
        """Whether a definition's members are definitions too: a class, a namespace, an ``impl``, and
        a module's variable bound to an object of methods (``const jsonHandler = { parse(opts) {...}
        }``), which is what its methods are known by (``jsonHandler.parse``), as a class's are."""
        if definition.type in self.grammar.containers or _call_keyword(definition) in self.grammar.opening:
            return True
        if definition.id in self.groups:  # a test group, whose tests and helpers it heads
            return True
        if definition.type in _LUA_ASSIGNMENTS:  # a Lua module's table of functions
            table = _assigned(definition)
            return table is not None and _holds_functions(table)
        if self.grammar.container_of is not None:
            return self.grammar.container_of(definition) is not None
        value = definition.child_by_field_name("value") if definition.type == "variable_declarator" else None
        return value is not None and _holds_methods(value)

    def _outer(self, node: Node, known: set[int]) -> Node:
        """What carries a definition and starts where it does: a decorated definition, an export,
        ``const f = () => ...``, a template; not a wrapper holding several definitions."""
        outer = node
        while outer.parent is not None and outer.parent.type in self.grammar.wrappers:
            carried = (
                child
                for child in _named_children(outer.parent)
                if child.id in known or child.type in self.grammar.wrappers
            )
            if len(list(itertools.islice(carried, 2))) != 1:  # not past the second: a group of thousands
                break
            outer = outer.parent
        return outer

    def _owner(self, outer: Node, known: set[int]) -> Node | None:
        """The nearest definition around ``outer``, or None at the top; a syntax error around it
        is its owner too (and heads nothing)."""
        node = holder = outer.parent
        while node is not None:
            if node.type in self.grammar.bodies:  # a Dart function's body: the function owns it
                node = self._signature_of(node, known)
            if node.id in known:
                return node
            if node.type == "ERROR" and not (self.salvaging and self._whole(outer, holder)):
                return node
            node = node.parent
        return None

    @cached_property
    def file_level_errors(self) -> dict[int, Node]:
        """The syntax errors at the file's top, by node id: the whole file's, or one of its
        statements' (where tree-sitter could not tell where a statement ends). Found from the root
        down, once: asking each error for its parent costs a step over each of the parent's
        children, and an error of thousands of tokens side by side holds thousands of errors."""
        return {node.id: node for node in (self.root, *self.root.children) if node.type == "ERROR"}

    def _whole(self, statement: Node, holder: Node | None) -> bool:
        """Whether ``statement``, a child of ``holder``, is one of the file's top that parses whole,
        inside the syntax error that holds the file's top (:attr:`file_level_errors`): no error in
        it, its own lines."""
        return (
            holder is not None
            and holder.id in self.file_level_errors
            and statement.type != "ERROR"
            and not statement.has_error
            and self._starts_line(statement)
        )

    def _signature_of(self, body: Node, known: set[int]) -> Node:
        """The definition whose body ``body`` is, as its grammar sets them side by side
        (:attr:`Grammar.bodies`): the signature before it, or the one that signature carries."""
        signature = body.prev_named_sibling
        if signature is None:
            return body
        carried = [child for child in signature.named_children if child.id in known]
        return carried[0] if carried else signature

    def _names(self, node: Node) -> tuple[str, ...]:
        """The name a definition gives, as written (``Renderer``, ``Foo::bar``), or ()."""
        if node.id in self.titles:  # a test's or a group's title (:meth:`_titled_test_calls`)
            return (self.titles[node.id],)
        if node.type == "impl_item":  # Rust: impl Type, or impl Trait for Type
            kind, trait = node.child_by_field_name("type"), node.child_by_field_name("trait")
            if kind is None:
                return ()
            return (f"{_text(trait)}{_TRAIT_FOR}{_text(kind)}" if trait is not None else _text(kind),)
        if node.type in _KEYWORD_NAMED:  # Swift's init(...), named by its keyword
            return (_KEYWORD_NAMED[node.type],)
        if node.type == "call" and self.grammar.defining:
            defined = _defined_by_call(node) if _call_keyword(node) in self.grammar.defining else ""
            return (defined,) if defined else ()
        if node.type in _LUA_ASSIGNMENTS:
            return _lua_assigned_names(node)
        if node.type == "field":  # a Lua table's field, a definition where it holds a function
            return _lua_field_names(node)
        if node.type in _DART_CONSTRUCTORS or node.type == "operator_signature":
            return (_dart_function_name(node),)
        if node.type == "test_declaration":
            return (_zig_test_name(node),)
        if node.type in _HASKELL_BINDINGS:
            equation = _equation_name(node)
            return (equation,) if equation else ()
        if node.type == "instance":  # Haskell's, headed as written: ``instance Show (Tree a)``
            kinds = node.child_by_field_name("patterns")
            written = f"{_text(node.child_by_field_name('name') or node)} {_text(kinds) if kinds else ''}"
            return (f"instance {written.strip()}",)
        test = _inline_test(node)
        if test:
            return (test,)
        if node.type in _GO_SPECS:  # ``a, b = 1, 2`` binds both names, ``_`` none
            names = node.children_by_field_name("name")
            return tuple(_text(name) for name in names if name.type == "identifier" and _text(name) != "_")
        pattern = node.child_by_field_name("name") if node.type == "variable_declarator" else None
        if pattern is not None and pattern.type in _PATTERNS:  # ``export const { a, b } = x``
            return tuple(_text(name) for name in _bound_names(pattern))
        name = node.child_by_field_name("name")
        if name is None and node.type == "extension_declaration":  # Dart's ``extension on int``
            name = node.child_by_field_name("class")
        if name is None and node.type in _NAMED_FIRST:
            name = next(
                (child for child in node.named_children if child.type in _NAMED_FIRST[node.type]), None
            )
        if name is None and node.type == "type_alias":  # Kotlin's field for the alias's name
            name = node.child_by_field_name("type")
        if name is None:
            name = _declarator_name(node) or _ocaml_name(node)
        return (_text(name),) if name is not None and _text(name) else ()

    def _head(
        self,
        outer: Node,
        definition: Node,
        level: int,
        owners: tuple[str, ...],
        qualify: bool = True,
        declares: bool = True,
    ) -> tuple[str, ...]:
        """Record the heading(s) and, where it ``declares``, the names of a definition under the
        containers titled ``owners`` (by which its names are qualified where ``qualify``); its
        heading path's titles.
        A definition that binds several names (Go's ``a, b = 1, 2``, ``export const { a, b } = x``)
        is headed by them together. A function defined at a module's top on a type
        outside it (a Go method, a Kotlin extension function) is headed under that type, as a method
        under its class, so the overloads of one name on several types are told apart; inside a
        class, an extension is a member of the class, called only there, and known by it. A Rust
        ``impl`` block and a Swift ``extension`` head and qualify their members by their type's name
        (``Parser.description``), but declare no name: the type's own declaration does."""
        names = self._names(definition)
        kind = "" if owners else _receiver_type(definition)
        types = (kind,) if kind else ()
        titles = (*types, ", ".join(names))
        first = self._first_row(outer)
        for offset, title in enumerate(titles):
            self.headings.append(Heading(first + 1, level + offset, title))
        # an impl block or an extension defines no name of its own, a namespace is opened again by
        # every file, and a test's name describes it (a Zig test, an OCaml inline test)
        named = declares and not _adds_to_a_type(definition) and not _inline_test(definition)
        if named and definition.type not in self.grammar.namespaces | self.grammar.tests.kinds:
            name_node = _name_node(definition)
            line = name_node.start_point[0] + 1
            declared = _known_alone(names, member=False)
            if qualify:
                declared |= self._qualified(owners + types, names)
            self.definitions[line] = tuple(sorted(declared | set(self.definitions.get(line, ()))))
        if definition.type in self.grammar.types:
            self._declare(list(_descendants(definition, self.grammar.constructors)), owners)
        return titles

    def _holder(self, member: Node, known: set[int]) -> Node | None:
        """The container whose member ``member`` is (:attr:`Grammar.members`), through the lists
        and containers of no heading around it (Kotlin's companion object); None for a variable of
        a function's body or an initializer's. A constructor's parameter that declares a property
        (PHP's ``private string $name``, Kotlin's ``val name``, a C# record's positional
        parameter, TypeScript's ``private readonly host``) is its class's member."""
        grammar = self.grammar
        if member.type in _PARAMETER_MEMBERS:
            if not _declares_property(member):
                return None  # a plain parameter: a value the constructor takes, no member
            node = member.parent
            while node is not None and not (node.id in known and node.type in grammar.containers):
                node = node.parent
            return node
        node = member.parent
        while node is not None and node.id not in known:
            if node.type not in grammar.lists | grammar.containers | grammar.wrappers:
                return None
            node = node.parent
        return node if node is not None and self._is_container(node) else None

    def _declare(self, members: list[Node], owners: tuple[str, ...]) -> None:
        """Declare the names of members (their name nodes) qualified by the containers titled
        ``owners`` on their lines, and alone where no common word spells them (:func:`_known_alone`)."""
        for declared in members:
            line = declared.start_point[0] + 1
            names = (_member_text(declared),)
            qualified = self._qualified(owners, names)
            if qualified:
                names_of_line = qualified | _known_alone(names, member=True)
                self.definitions[line] = tuple(sorted(names_of_line | set(self.definitions.get(line, ()))))

    def _qualified(self, owners: tuple[str, ...], names: tuple[str, ...]) -> set[str]:
        """``names`` qualified by each run of the containers they lie in that ends at the nearest, in
        the language's notation (``Renderer.draw``, ``Sinatra::Base``, ``Polly.Retry.RetryPolicy``,
        ``Vec::push`` under ``impl<T> Vec<T>``): as a developer types a member's name, and as another
        file writes it (a test reopening ``class Sinatra::Base``). Only names a question can spell
        are qualified, by containers whose titles name one (:func:`_qualifier`): a specialization's
        arguments and ``impl Display for &Path`` end the run."""
        spelled = [
            name for name in names if _QUALIFIABLE.fullmatch(name) or _OPERATOR_OR_SETTER.fullmatch(name)
        ]
        qualified: set[str] = set()
        prefix = ""
        for title in reversed(owners):
            owner = _qualifier(title)
            if not _QUALIFIABLE.fullmatch(owner):
                break
            prefix = owner + self.grammar.separator + prefix
            qualified |= {prefix + name for name in spelled}
        return qualified

    def _resume_after(
        self, outer: Node, owner: Node | None, level: int, path: tuple[str, ...], outers: dict[int, Node]
    ) -> None:
        """Code after a definition, at its container's level, goes back under the container (the
        module, a class), unless it is the comment of the next definition. A definition that ends a
        block of no definition of its own (a ``try``, a Ruby ``describe ... do`` block, a test's
        callback) is followed by the code after that block, within its ``owner``."""
        node = self._group(outer)[-1]
        sibling = self._next_line_start(node)
        while sibling is None and node.parent is not None and (owner is None or node.parent.id != owner.id):
            node = node.parent
            sibling = self._next_line_start(node)
        if sibling is None or sibling.id in outers:
            return
        following = sibling.next_named_sibling
        while following is not None and following.id not in outers:
            following = following.next_named_sibling
        if following is not None and self._first_row(following) <= sibling.start_point[0]:
            return
        self.headings.append(Heading(sibling.start_point[0] + 1, level - 1, path[-1]))

    def _group(self, outer: Node) -> list[Node]:
        """The statements of the definition ``outer`` starts: itself and those after it that
        continue it (:attr:`Grammar.continues`), past the comments and attributes between them."""
        group, following = [outer], outer.next_named_sibling
        continues = self.grammar.continues
        while continues is not None and following is not None:
            if continues(following):
                group.append(following)
            elif following.type not in self.grammar.attached and "comment" not in following.type:
                break
            following = following.next_named_sibling
        return group

    def _next_line_start(self, node: Node) -> Node | None:
        """The first named sibling after ``node`` that starts a line, if any."""
        sibling = node.next_named_sibling
        while sibling is not None and (not self._starts_line(sibling) or sibling.type in self.grammar.bodies):
            sibling = sibling.next_named_sibling
        return sibling

    def _statements(self, children: list[Node]) -> None:
        """Each statement's lines, and where its block starts: at its first line, or at the first
        of the comments and attributes just above it where it is a definition or a member (its doc
        comment: ``///``, ``/** */``, KDoc, PHPDoc), so no cut falls between them."""
        documented = self.grammar.definitions | self.grammar.members | self.grammar.wrappers
        for child in children:
            row, column = child.start_point
            if self._starts_line(child):
                first = self._commented_from(row, column) if child.type in documented else row
                self.block_starts.difference_update(range(first + 2, row + 2))
                self.block_starts.add(first + 1)
            self.statements.append((row + 1, child.end_point[0] + 1))

    def _attach(self, node: Node) -> None:
        """Mark the rows of a comment or attribute that stands alone on its lines. A node that ends
        at the start of a row ends on the row before: Rust's doc comment (``///``) holds its line's
        end, so tree-sitter ends it at the first column of the item it documents."""
        if any(child.type == "inner_doc_comment_marker" for child in node.children):
            return  # Rust's `//!` documents the module or item it is in, not the item after it
        if self.grammar.inner_doc and _text(node).startswith(self.grammar.inner_doc):
            return
        if node.type == "unary_operator" and not _documents_next(node):
            return
        if self.grammar.continues is not None and self.grammar.continues(node):
            return  # an OCaml doc comment under the item it documents
        end, column = node.end_point
        if column == 0 and end > node.start_point[0]:
            end, column = end - 1, len(self.lines[end - 1].encode("utf-8", "surrogatepass"))
        if not self._starts_line(node) or end >= len(self.lines):
            return
        if self.lines[end].encode("utf-8", "surrogatepass")[column:].strip():
            return  # code follows on its last line
        self.attached[end] = node.start_point
        if node.type in _DOCUMENTING:
            self.documenting[end] = node.start_point[0]

    def _first_row(self, node: Node) -> int:
        """The row a definition's heading starts on: its own, or that of the comments and attributes
        just above it at the same indentation; where none is, those one blank line above, as YARD
        and a reader take a doc comment, unless they are the file's banner (:meth:`_in_banner`) or a
        doc comment the language floats there (:meth:`_floats`)."""
        row, column = self._first_overload(node).start_point
        above = self._commented_from(row, column)
        if above == row >= 2 and not self.lines[row - 1].strip():
            first = self._commented_from(row - 1, column)
            if first < row - 1 and not self._in_banner(first) and not self._floats(row - 2):
                return first
        return self._documented_from(above)

    def _floats(self, end: int) -> bool:
        """Whether the comment that ends on row ``end`` is a doc comment that a blank line under it
        sets apart from the item below (:attr:`Grammar.floating`)."""
        floating = self.grammar.floating
        start = self.attached[end][0] if end in self.attached else end
        return floating is not None and floating.match(self.lines[start].lstrip()) is not None

    def _first_overload(self, node: Node) -> Node:
        """The first of the overloads' signatures written just above a function's implementation
        (:attr:`Grammar.overloads`), comments between; ``node`` itself where none is."""
        name = self._overloaded_name(node, self.grammar.definitions)
        first, above = node, node.prev_named_sibling
        while name and above is not None:
            if self._overloaded_name(above, self.grammar.overloads) == name:
                first = above
            elif "comment" not in above.type:
                break
            above = above.prev_named_sibling
        return first

    def _overloaded_name(self, node: Node, kinds: frozenset[str]) -> str:
        """The name ``node`` (or the declaration a wrapper carries: ``export function ...``)
        declares if it is of one of ``kinds`` in a grammar that writes overloads, else empty."""
        if not self.grammar.overloads:
            return ""
        if node.type in self.grammar.wrappers:
            node = node.child_by_field_name("declaration") or node
        name = node.child_by_field_name("name") if node.type in kinds else None
        return _text(name) if name is not None else ""

    def _documented_from(self, row: int) -> int:
        """The first row of the Haddock comment (``-- |``) that documents what starts at ``row``,
        past the blank lines and plain comments between them, as Haddock reads it (a ``-- See
        Note`` under a function's documentation); ``row`` where none does."""
        above = row - 1
        while above >= 0 and (not self.lines[above].strip() or above in self.attached):
            if above in self.documenting:
                return self.documenting[above]
            above = self.attached[above][0] - 1 if above in self.attached else above - 1
        return row

    def _in_banner(self, row: int) -> bool:
        """Whether only comments and blank lines lie above ``row``: the file's banner (its licence,
        Ruby's ``# frozen_string_literal: true``), no definition's doc."""
        while row > 0:
            if not self.lines[row - 1].strip():
                row -= 1
            elif row - 1 in self.attached:
                row = self.attached[row - 1][0]
            else:
                return False
        return True

    def _commented_from(self, row: int, column: int) -> int:
        """The first row of the comments and attributes at ``column`` written just above ``row``
        (``row`` itself when there are none)."""
        while row - 1 in self.attached and self.attached[row - 1][1] == column:
            row = self.attached[row - 1][0]
        return row

    def _starts_line(self, node: Node) -> bool:
        row, column = node.start_point
        return row < len(self.lines) and column <= _indent(self.lines[row])

    def literal(self) -> list[tuple[int, int]]:
        """Statements of several lines with no statement starting inside them."""
        starts = sorted(self.block_starts)
        ranges = []
        for first, last in self.statements:
            if last > first and not any(first < start <= last for start in _between(starts, first, last)):
                ranges.append((first, last))
        return _merged(ranges)


def _without_headings(ranges: list[tuple[int, int]], headings: list[Heading]) -> list[tuple[int, int]]:
    """The literal ranges with no heading inside (after their first line): the chunker takes no
    heading from inside a literal range, and a definition's heading is never to be lost."""
    lines = sorted(heading.line for heading in headings)
    return [(first, last) for first, last in ranges if not any(True for _ in _between(lines, first, last))]


def _between(starts: list[int], first: int, last: int) -> Iterator[int]:
    index = bisect.bisect_right(starts, first)
    while index < len(starts) and starts[index] <= last:
        yield starts[index]
        index += 1


def _merged(ranges: list[tuple[int, int]]) -> list[tuple[int, int]]:
    merged: list[tuple[int, int]] = []
    for first, last in sorted(set(ranges)):
        if merged and first <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], last))
        else:
            merged.append((first, last))
    return merged


#: Nodes that list a definition's attributes or annotations among its modifiers, and the attributes
#: and annotations in them (Java, Kotlin, C#, PHP; Rust's stand above the definition).
_MODIFIER_LISTS = _types("modifiers attribute_list attribute_group")
_MARKERS = _types("attribute marker_annotation annotation")


def _qualifier(title: str) -> str:
    """The name a container's heading title qualifies its members by, without type arguments:
    ``Vec`` of ``Vec<T>``; of a Rust trait impl, its type's (``Json`` of ``FromRequest<S> for
    Json<T>``), since rustdoc lists a trait's methods under each type that implements it, and the
    trait's own name is for the trait's declaration."""
    return title.rpartition(_TRAIT_FOR)[2].split("<", 1)[0].strip()


def _descendants(node: Node, types: frozenset[str]) -> Iterator[Node]:
    """The nodes of ``types`` under ``node``, not looking inside one found."""
    for child in node.named_children:
        if child.type in types:
            yield child
        else:
            yield from _descendants(child, types)


def _base_names(definition: Node) -> list[str]:
    """The last names of a class's base classes (Python's ``(unittest.TestCase)``, PHP's
    ``extends TestCase``, Ruby's ``< Minitest::Test``)."""
    if _call_keyword(definition) == "defmodule":  # Elixir's: the modules it uses (``use ExUnit.Case``)
        return [_last_part(_text(used)) for used in _elixir_uses(definition)]
    specifiers = [child for child in definition.named_children if child.type == "inheritance_specifier"]
    if specifiers:  # Swift's: each base class or protocol apart (``: XCTestCase, Sendable``)
        return [_last_part(_text(specifier)) for specifier in specifiers]
    extended = definition.child_by_field_name("extend")
    if extended is not None:  # Scala's ``extends munit.FunSuite with Helpers``
        return [_last_part(_text(base)) for base in extended.children_by_field_name("type")]
    bases = definition.child_by_field_name("superclasses") or definition.child_by_field_name("superclass")
    if bases is None:
        bases = next((child for child in definition.named_children if child.type == "base_clause"), None)
    return [_last_part(_text(base)) for base in bases.named_children] if bases is not None else []


#: What holds a value and says something of it, the value first: a type assertion, brackets.
_VALUE_WRAPPERS = _types(
    "as_expression satisfies_expression non_null_expression parenthesized_expression await_expression"
)
#: Definitions that are one only with a body: ``struct point { ... }``, not ``struct point p;``.
_BODY_NEEDED = _types(
    "struct_specifier union_specifier enum_specifier class_specifier mod_item namespace_definition"
)


def _declares_test(call: Node, rule: TestRule) -> bool:
    """Whether a Ruby ``call`` node declares a test: ``it "parses" do`` (a string and a block), not
    ``it`` as a block's parameter; or a group of tests: ``RSpec.describe Parser do``. In Lua, busted's
    ``it("parses", function() ... end)`` and ``describe("Parser", function() ... end)``; in Scala,
    MUnit's ``test("parses") { ... }`` (each grammar names its own kind of call)."""
    if call.type == "function_call":
        return _declares_lua_test(call, rule)
    if call.type == "expression_statement":
        return _declares_dart_test(call, rule)
    if call.type == "call_expression":
        return _declares_scala_test(call, rule)
    if call.type == "call" and call.child_by_field_name("target") is not None:
        return _declares_elixir_test(call, rule)
    method = call.child_by_field_name("method") if call.type == "call" else None
    arguments = call.child_by_field_name("arguments")
    if method is None or arguments is None or not arguments.named_children:
        return False
    if call.child_by_field_name("block") is None:
        return False
    receiver = call.child_by_field_name("receiver")
    if receiver is not None and _text(receiver) != "RSpec":
        return False
    name = _text(method)
    return name in rule.groups or (name in rule.calls and arguments.named_children[0].type == "string")


def _declares_elixir_test(call: Node, rule: TestRule) -> bool:
    """Whether an Elixir call declares a test or a group of tests, as ExUnit's macros do: ``test
    "parses" do`` and ``test "parses", %{conn: conn} do`` (a title, a context, a block), ``describe
    "parse/1" do``; not ``test "pending"``, which has no block."""
    arguments = _call_arguments(call)
    if not arguments or arguments[0].type != "string":
        return False
    if not any(child.type == "do_block" for child in call.named_children):
        return False
    return _call_keyword(call) in rule.calls | rule.groups


def _test_call_parts(call: Node) -> tuple[str, Node | None]:
    """The name a call that declares a test is made by (``describe``, ``it``), and its first
    argument: Ruby's ``describe Parser do``, Lua's ``it("parses", function() ... end)``, Dart's
    ``test('parses', () { ... })``."""
    if call.type == "expression_statement":  # Dart's: the callee, then a selector of its arguments
        callee, *rest = call.named_children or [call]
        part = rest[0].named_children[0] if rest and rest[0].named_children else None
        lists = [child for child in part.named_children if child.type == "arguments"] if part else []
        first = lists[0].named_children[0] if lists and lists[0].named_children else None
        return _text(callee), first.named_children[0] if first is not None and first.named_children else None
    if call.type == "call" and call.child_by_field_name("target") is not None:  # Elixir's
        given = _call_arguments(call)
        return _call_keyword(call), given[0] if given else None
    if call.type == "call_expression":  # Scala's: the call of the name and its title, then a block
        call = call.child_by_field_name("function") or call
    called = call.child_by_field_name(
        {"call": "method", "call_expression": "function"}.get(call.type, "name")
    )
    arguments = call.child_by_field_name("arguments")
    first = arguments.named_children[0] if arguments is not None and arguments.named_children else None
    return (_text(called) if called is not None else ""), first


#: Arguments that title a test: a string's words, a constant or a class as written (``Faraday::Connection``).
_TEST_TITLE_STRINGS = _types("string string_literal")
_TEST_TITLE_NAMES = _types("constant scope_resolution")
#: The quotes around a string literal: Ruby's, Lua's long brackets (``[[...]]``), Dart's triple quotes.
_QUOTES = re.compile(r"^(?:\[=*\[|['\"`]+)|(?:\]=*\]|['\"`]+)$")


def _test_call_title(argument: Node) -> str:
    """The title a test's first argument gives it: a string's text without its quotes, or a
    constant as written; empty for another argument (a variable, a symbol, a call)."""
    if argument.type in _TEST_TITLE_STRINGS:
        return _QUOTES.sub("", _text(argument)).strip()
    return _text(argument) if argument.type in _TEST_TITLE_NAMES else ""


#: A function-like macro's invocation, as a test's head is written: its name, then its arguments.
_MACRO_INVOCATION = re.compile(r"(?P<macro>[A-Z][A-Z0-9_]*)\s*\((?P<arguments>.*)\)\s*;?", re.DOTALL)
#: A string literal among a macro's arguments, its content apart.
_STRING_ARGUMENT = re.compile(r'"(?P<content>(?:[^"\\\n]|\\.)*)"')
_IDENTIFIER = re.compile(r"[A-Za-z_]\w*")


def _macro_test(statement: Node, macros: frozenset[str]) -> tuple[str, Node] | None:
    """The title and block of the test that ``statement`` declares by one of ``macros``, or None.
    Grammars read ``TEST_CASE("name") { ... }`` as a call then a block beside it, or as a function
    whose name or type is the macro (``TEST(Suite, Name)`` in C++, ``BOOST_AUTO_TEST_CASE(name)``
    in C): the text before the block tells, whichever it is."""
    if not macros:
        return None
    if statement.type == "function_definition":
        body = statement.child_by_field_name("body")
        if body is None:
            return None
        head = (statement.text or b"")[: body.start_byte - statement.start_byte]
    elif statement.type == "expression_statement":
        body = statement.next_named_sibling
        if body is None or body.type != "compound_statement":
            return None
        head = statement.text or b""
    else:
        return None
    invocation = _MACRO_INVOCATION.fullmatch(head.decode("utf-8", "replace").strip())
    if invocation is None or invocation["macro"] not in macros:
        return None
    title = _test_title(invocation["macro"], invocation["arguments"])
    return (title, body) if title else None


def _test_title(macro: str, arguments: str) -> str:
    """A test's name as its macro's arguments give it: its first string (Catch2's and doctest's
    ``TEST_CASE("name", "[tag]")``, after the fixture of ``TEST_CASE_METHOD``), else its first
    identifier (Boost's ``BOOST_AUTO_TEST_CASE(name)``), a GoogleTest suite's joined to the test's
    name (:data:`_SUITE_MACROS`)."""
    string = _STRING_ARGUMENT.search(arguments)
    if string is not None:
        return " ".join(string["content"].split())
    names = []
    for argument in arguments.split(","):
        if not _IDENTIFIER.fullmatch(argument.strip()):
            break
        names.append(argument.strip())
    return ".".join(names[:2] if macro in _SUITE_MACROS else names[:1])


def _guards_include(definition: Node) -> bool:
    """Whether a macro's definition is a header's include guard, a name no reader looks for: the
    first thing (comments aside) in the ``#ifndef NAME`` or ``#if !defined(NAME)`` that tests the
    name it defines, with no value, or with glibc's ``1`` (``#define _STDIO_H 1``) and the header
    after it. Alone in its group, ``#ifndef CJSON_NESTING_LIMIT`` / ``#define CJSON_NESTING_LIMIT
    1000`` is a setting's default, and so is one whose value is code (fmt's ``FMT_BEGIN_NAMESPACE``,
    its group defining ``FMT_END_NAMESPACE`` after it): names a question asks for."""
    holder, name = definition.parent, definition.child_by_field_name("name")
    if holder is None or name is None or _guard_tested(holder) != _text(name):
        return False
    alternative = holder.child_by_field_name("alternative")
    group = [  # after the tested name or condition, up to any #else
        child
        for child in holder.named_children[1:]
        if child.type != "comment" and (alternative is None or child.id != alternative.id)
    ]
    if group[0].id != definition.id:
        return False
    value = definition.child_by_field_name("value")
    return value is None or (_text(value) == "1" and len(group) > 1)


#: The condition of an ``#if`` that holds only when one name is not defined.
_NOT_DEFINED = re.compile(r"!\s*defined\s*(?:\(\s*(?P<parenthesized>\w+)\s*\)|(?P<bare>\w+))")


def _guard_tested(group: Node) -> str | None:
    """The name a conditional group holds only without, as an include guard tests it: ``NAME`` of
    ``#ifndef NAME``, ``#if !defined(NAME)`` or ``#if !defined NAME``; else None."""
    if group.type == "preproc_ifdef" and group.children and group.children[0].type == "#ifndef":
        tested = group.child_by_field_name("name")
        return _text(tested) if tested is not None else None
    condition = group.child_by_field_name("condition") if group.type == "preproc_if" else None
    written = _NOT_DEFINED.fullmatch(_text(condition)) if condition is not None else None
    return (written["parenthesized"] or written["bare"]) if written is not None else None


def _is_function(node: Node) -> bool:
    return "function" in node.type or node.type == "class"


def _unwrapped(value: Node) -> Node:
    """``value`` without what wraps it and says something of it (:data:`_VALUE_WRAPPERS`)."""
    while value.type in _VALUE_WRAPPERS and value.named_children:
        value = value.named_children[0]
    return value


def _builds_from_function(value: Node) -> bool:
    """Whether ``value`` is a call given a function or class, directly or through the calls it is
    given (``memo(forwardRef((props, ref) => ...))``), the value's own type assertions aside."""
    waiting = [value]  # the value, and the arguments of the calls found so far
    while waiting:
        node = _unwrapped(waiting.pop())
        arguments = node.child_by_field_name("arguments") if node.type == "call_expression" else None
        for argument in arguments.named_children if arguments is not None else ():
            if _is_function(argument):
                return True
            waiting.append(argument)
    return False


def _directly_in(outer: Node, owner: Node) -> bool:
    """Whether ``outer`` is a member of ``owner`` itself: of a module's object of methods, a method of
    that object, not of an object nested in one of its values."""
    if owner.type != "variable_declarator":
        return True
    value = owner.child_by_field_name("value")
    value = _unwrapped(value) if value is not None else None
    return outer.parent is not None and value is not None and outer.parent.id == value.id


def _defines_nothing(value: Node, grammar: Grammar) -> bool:
    """Whether a variable's value holds no definition of its own: one that does (a store's actions
    in ``defineStore('cart', { actions: { add() {} } })``) keeps them as its outline, which a
    heading of the variable's would take in as a closure's statements."""
    return next(_descendants(value, grammar.definitions), None) is None


def _holds_methods(value: Node) -> bool:
    """Whether ``value`` is an object literal with methods (``{ isMatch(req) {...} }``), its own
    type assertions aside (``{ ... } satisfies Handler``)."""
    value = _unwrapped(value)
    return value.type == "object" and any(child.type == "method_definition" for child in value.named_children)


def _at_module_level(declarator: Node) -> bool:
    """Whether a variable is declared at a module's top (exported or not): a module's own names,
    where a value built around a function is one of its definitions. Inside a function or a test's
    callback, ``const doubled = items.map((x) => x * 2)`` is a step of its body."""
    declaration = declarator.parent
    holder = declaration.parent if declaration is not None else None
    if holder is not None and holder.type == "export_statement":
        holder = holder.parent
    return holder is not None and (holder.type == "program" or _at_file_level_error(holder))


def _exported_from_module(declarator: Node) -> bool:
    """Whether a variable is declared by an ``export`` at a module's top (``export const produce =
    immer.produce``, ``export let count: number``): the module's public surface, as a function it
    exports is. A module's own constants that it does not export are its helpers and aliases."""
    declaration = declarator.parent
    export = declaration.parent if declaration is not None else None
    return export is not None and export.type == "export_statement" and _at_module_level(declarator)


#: Patterns a JavaScript or TypeScript declaration takes apart, binding the names in them.
_PATTERNS = _types("object_pattern array_pattern")


def _bound_names(pattern: Node) -> list[Node]:
    """The names a destructuring pattern binds, in order: ``a`` and ``c`` of ``{ a, b: c }``, ``d``
    and ``rest`` of ``[d = 1, ...rest]``; not the keys it reads nor the defaults it gives."""
    if pattern.type in ("identifier", "shorthand_property_identifier_pattern"):
        return [pattern]
    if pattern.type == "pair_pattern":
        value = pattern.child_by_field_name("value")
        return _bound_names(value) if value is not None else []
    if pattern.type in ("object_assignment_pattern", "assignment_pattern"):
        left = pattern.child_by_field_name("left")
        return _bound_names(left) if left is not None else []
    return [name for child in pattern.named_children for name in _bound_names(child)]


#: Go's specs of a package's constants and variables (``const Name = "x"``, each of ``var ( ... )``).
_GO_SPECS = _types("const_spec var_spec")
#: Declarations of a named function, which bind its name in the scope they are a statement of.
_FUNCTION_DECLARATIONS = _types(
    "function_declaration generator_function_declaration function_definition function_item"
)


def _declared_in_body(outer: Node, definition: Node, owner: Node, grammar: Grammar) -> bool:
    """Whether ``definition`` declares a named function as a statement of the body of the function
    ``owner`` (a ``function getPath(...)`` in ``function enablePatches()``, a ``def`` in a ``def``, an
    ``fn`` in an ``fn``): a name that function's code calls it by, as a module's code calls its own
    functions. Not one in a closure passed to a call, nor one declared under an ``if``."""
    if definition.type not in _FUNCTION_DECLARATIONS or owner.type in grammar.containers:
        return False
    node = outer.parent
    while node is not None and node.id != owner.id:
        if node.type not in grammar.lists and not _is_function(node):
            return False
        node = node.parent
    return node is not None


def _at_file_level_error(node: Node) -> bool:
    """Whether ``node`` is a syntax error at a file's top: the whole file's, or one of its
    statements' (where tree-sitter could not tell where a statement ends)."""
    return node.type == "ERROR" and (node.parent is None or node.parent.parent is None)


def _has_body(node: Node) -> bool:
    if node.type == "type_definition":  # a typedef names a definition: typedef struct { ... } point;
        kind = node.child_by_field_name("type")
        return kind is not None and kind.child_by_field_name("body") is not None
    return node.type not in _BODY_NEEDED or node.child_by_field_name("body") is not None


#: Definitions named by their keyword, not by a name written after it: Swift's initializers.
_KEYWORD_NAMED = {"init_declaration": "init"}


def _name_node(definition: Node) -> Node:
    """The node whose line a definition's name is declared on: its name, its naming keyword
    (:data:`_KEYWORD_NAMED`), else the definition itself."""
    name = definition.child_by_field_name("name")
    if name is not None:
        return name
    keyword = _KEYWORD_NAMED.get(definition.type)
    return next((child for child in definition.children if child.type == keyword), definition)


def _adds_to_a_type(definition: Node) -> bool:
    """Whether a container adds members to a type declared elsewhere: a Rust ``impl`` block, a
    Swift ``extension`` (which its grammar reads as a class declaration of that kind), a Haskell
    ``instance``."""
    if definition.type in ("impl_item", "instance") or _call_keyword(definition) == "defimpl":
        return True
    if definition.type == "extension_declaration":  # Dart's: one without a name adds to its type
        return definition.child_by_field_name("name") is None
    kind = definition.child_by_field_name("declaration_kind")
    return kind is not None and kind.type == "extension"


def _text(node: Node) -> str:
    return " ".join((node.text or b"").decode("utf-8", "replace").split())


def _indent(line: str) -> int:
    """The width of a line's leading blanks, in bytes as tree-sitter counts columns."""
    return len(line) - len(line.lstrip(" \t\f"))


#: What makes a member's name compound, so that no common word spells it and alone it still names
#: one thing: a second case hump (``MaxHedgedAttempts``, ``failOnUnknown``), or words joined by an
#: underscore (``OPTION_GENERATE_PROGUARD_RULES``). A word in capitals is no compound: an enum's
#: ``DEFAULT`` or ``ERROR`` sits in many enums, and ``HTTP`` or ``UUID`` in many classes.
_COMPOUND = re.compile(r"[a-z0-9][A-Z]|[A-Za-z0-9]_[A-Za-z0-9]")


def _known_alone(names: tuple[str, ...], member: bool) -> set[str]:
    """The forms of ``names`` declared without their containers: a definition's always, as written
    and by its last part (``draw``, ``rotate_`` of ``rotating_file_sink<Mutex>::rotate_``); a
    member's (a property, a field, a constant, an enum case) only where its name is compound
    (:data:`_COMPOUND`), without PHP's ``$``: ``Name`` or ``Count`` alone would make every class
    define it, but a question naming ``MaxHedgedAttempts`` asks for the one property so named."""
    if member:
        bare = (name.lstrip("$") for name in names)
        return {name for name in bare if _COMPOUND.search(name)}
    return set(names) | {_last_part(name) for name in names}


def _last_part(name: str) -> str:
    for separator in ("::", ".", "->", ":"):  # Lua's method last: ``Path:new``
        name = name.rsplit(separator, 1)[-1]
    return name


def _declarator_name(node: Node) -> Node | None:
    """The name at the end of a C or C++ declarator chain (``int *(*name)(void)``), or None."""
    current = node.child_by_field_name("declarator")
    while current is not None and current.type not in _DECLARATOR_NAMES:
        current = current.child_by_field_name("declarator") or current.child_by_field_name("name")
    return current


#: A constructor's parameters that may declare properties of its class (:func:`_declares_property`).
_PARAMETER_MEMBERS = _types(
    "property_promotion_parameter class_parameter parameter required_parameter optional_parameter"
)
#: What makes a TypeScript constructor's parameter a property of its class.
_PARAMETER_PROPERTY_MARKS = _types("accessibility_modifier readonly override_modifier")


def _declares_property(parameter: Node) -> bool:
    """Whether a constructor's parameter declares a property of its class, as its language says: a
    PHP promoted parameter always, Kotlin's and Scala's with ``val`` or ``var``, every one of a Scala
    ``case class``, TypeScript's with an accessibility or ``readonly``, a C# record's positional
    parameter (not a class's primary constructor's, which only captures it)."""
    if parameter.type == "property_promotion_parameter":
        return True
    if parameter.type == "class_parameter":
        if any(child.type in ("val", "var") for child in parameter.children):
            return True
        holder = parameter.parent.parent if parameter.parent is not None else None
        return holder is not None and any(child.type == "case" for child in holder.children)
    if parameter.type == "parameter":
        holder = parameter.parent.parent if parameter.parent is not None else None
        return holder is not None and holder.type == "record_declaration"
    return any(child.type in _PARAMETER_PROPERTY_MARKS for child in parameter.children)


#: Nodes that list a member's declarators (``int a, b;``, PHP's ``const A = 1, B = 2;``, Kotlin's
#: ``val name: String``), each giving one name.
_MEMBER_DECLARATORS = _types("variable_declaration variable_declarator const_element property_element")
_MEMBER_NAMES = _types("identifier name")
#: Scala's definitions of values, which bind the names of their pattern.
_BINDINGS = _types("val_definition var_definition")


def _member_names(member: Node) -> list[Node]:
    """The name nodes a member declares: its ``name`` fields (Swift's ``case a, b`` and ``let a = 1,
    b = 2`` give several; a pattern its bound name, a tuple's none), else the names its Scala
    ``val`` binds (``val size``, ``var a, b``), else each of its declarators' names (the name field,
    else the first identifier among the declarator's own children)."""
    if member.type == "call":  # Elixir's, of which only a struct's declares members
        return _struct_fields(member)
    if member.type == "expression_statement":  # Python's, of an attribute: ``timeout: float = 5``
        return _assigned_name(member)
    if member.type == "assignment":  # Ruby's, of a constant: ``TIMEOUT = 5``, not ``Other::NAME = 5``
        return [name for name in _assigned_constant(member) if name.type == "constant"]
    if member.type == "enum_body":  # TypeScript's: its members, bare (``Transient,``) or with a value
        members = (child.child_by_field_name("name") or child for child in member.named_children)
        return [name for name in members if name.type == "property_identifier"]
    names = member.children_by_field_name("name")
    if names:
        bound = (
            name.child_by_field_name("bound_identifier") if name.type == "pattern" else name for name in names
        )
        return [name for name in bound if name is not None and _text(name) != _UNNAMED]
    if member.type in _BINDINGS:
        pattern = member.child_by_field_name("pattern")
        if pattern is None or pattern.type not in ("identifier", "identifiers"):
            return []  # a tuple or a case class taken apart: its names are no members' to look up
        return [pattern] if pattern.type == "identifier" else pattern.named_children
    declarators = [child for child in member.named_children if child.type in _MEMBER_DECLARATORS]
    if declarators:
        return [name for declarator in declarators for name in _member_names(declarator)]
    return [child for child in member.named_children if child.type in _MEMBER_NAMES][:1]


def _receiver_type(definition: Node) -> str:
    """The type a function is defined on outside it, without its type arguments: a Go method's
    receiver (``Terminal`` of ``(t *Terminal)``), a Kotlin extension function's (``KClass`` of
    ``fun KClass<*>.asClassName()``, ``Map.Entry`` of ``fun Map.Entry<K, V>.key()``; Kotlin's
    grammar alone writes a ``user_type`` before a function's name); else empty."""
    receiver = definition.child_by_field_name("receiver")
    if receiver is not None and definition.type == "method_declaration":
        return _go_receiver_type(receiver)
    name = definition.child_by_field_name("name")
    if definition.type != "function_declaration" or name is None:
        return ""
    for child in definition.named_children:
        if child.start_byte >= name.start_byte:
            break
        while child.type == "nullable_type" and child.named_children:
            child = child.named_children[0]
        if child.type == "user_type":  # Kotlin's: its parts, then each one's type arguments
            kind = ".".join(_text(part) for part in child.named_children if part.type == "identifier")
            return "" if kind in _type_parameters(definition) else kind
    return ""


def _type_parameters(definition: Node) -> set[str]:
    """The names of a function's own type parameters (``T`` of ``fun <T> T.also()``): an extension
    on one of them is on any type, and is known by its name alone."""
    return {
        _text(name)
        for parameters in definition.named_children
        if parameters.type == "type_parameters"
        for parameter in parameters.named_children
        for name in parameter.named_children[:1]
    }


def _go_receiver_type(receiver: Node) -> str:
    """``Terminal`` of a Go method's receiver ``(t *Terminal)`` or ``(t Tree[K])``."""
    for parameter in receiver.named_children:
        kind = parameter.child_by_field_name("type")
        while kind is not None and kind.type in ("pointer_type", "generic_type"):
            kind = kind.named_children[0] if kind.named_children else None
        if kind is not None:
            return _text(kind)
    return ""


#: Lua's assignments, which define a function where they bind one name to one (``M.parse =
#: function(text) ... end``).
_LUA_ASSIGNMENTS = _types("assignment_statement")


def _assigned(assignment: Node) -> Node | None:
    """The value of a Lua assignment of one value, or None."""
    values = [child for child in assignment.named_children if child.type == "expression_list"]
    found = values[0].children_by_field_name("value") if values else []
    return found[0] if len(found) == 1 else None


def _lua_assigned_names(assignment: Node) -> tuple[str, ...]:
    """The name a Lua assignment binds (``M.parse``, ``helper``) where it binds one."""
    variables = [child for child in assignment.named_children if child.type == "variable_list"]
    found = variables[0].children_by_field_name("name") if variables else []
    return (_text(found[0]),) if len(found) == 1 and _QUALIFIABLE.fullmatch(_text(found[0])) else ()


def _lua_field_names(field: Node) -> tuple[str, ...]:
    """The name of a Lua table's field that holds a function, where the table is a module's: the
    value of an assignment at the file's top (``local M = { parse = function() ... end }``) or what
    the file returns (``return { setup = function() ... end }``); else ()."""
    name, value = field.child_by_field_name("name"), field.child_by_field_name("value")
    if name is None or name.type != "identifier" or value is None or value.type != "function_definition":
        return ()
    table = field.parent
    holder = table.parent if table is not None else None
    if holder is None or holder.type != "expression_list" or holder.parent is None:
        return ()
    statement, top = holder.parent, holder.parent.parent
    if statement.type in _LUA_ASSIGNMENTS:
        of_module = _at_lua_top(statement)
    else:
        of_module = statement.type == "return_statement" and top is not None and top.type == "chunk"
    return (_text(name),) if of_module else ()


def _at_lua_top(assignment: Node) -> bool:
    """Whether a Lua assignment is a statement of the file's top, ``local`` or not."""
    holder = assignment.parent
    if holder is not None and holder.type == "variable_declaration":
        holder = holder.parent
    return holder is not None and holder.type == "chunk"


def _holds_functions(table: Node) -> bool:
    """Whether a Lua table constructor has a field that holds a function."""
    return table.type == "table_constructor" and any(
        _lua_field_names(child) for child in table.named_children if child.type == "field"
    )


def _declares_lua_test(call: Node, rule: TestRule) -> bool:
    """Whether a Lua function call declares a busted test (``it("parses", function() ... end)``) or
    group (``describe("Parser", function() ... end)``): a name of ``rule``'s, a function last."""
    name, arguments = call.child_by_field_name("name"), call.child_by_field_name("arguments")
    if name is None or name.type != "identifier" or arguments is None or len(arguments.named_children) < 2:
        return False
    if arguments.named_children[-1].type != "function_definition":
        return False
    first = arguments.named_children[0]
    return _text(name) in rule.groups or (_text(name) in rule.calls and first.type == "string")


def _declares_scala_test(call: Node, rule: TestRule) -> bool:
    """Whether a Scala call declares a test (MUnit's ``test("parses") { ... }``) or a group of
    tests (ScalaTest's ``describe("Parser") { ... }``): a name of ``rule``'s called with its title,
    then with a block."""
    head, block = call.child_by_field_name("function"), call.child_by_field_name("arguments")
    if head is None or head.type != "call_expression" or block is None or block.type != "block":
        return False
    name, arguments = head.child_by_field_name("function"), head.child_by_field_name("arguments")
    if name is None or name.type != "identifier" or arguments is None or not arguments.named_children:
        return False
    first = arguments.named_children[0]
    return _text(name) in rule.groups or (_text(name) in rule.calls and first.type == "string")


def _call_keyword(node: Node) -> str:
    """The name an Elixir call is made by (``def``, ``defmodule``, ``use``), if it is one."""
    target = node.child_by_field_name("target") if node.type == "call" else None
    return _text(target) if target is not None and target.type == "identifier" else ""


def _call_arguments(call: Node) -> list[Node]:
    found = next((child for child in call.named_children if child.type == "arguments"), None)
    return found.named_children if found is not None else []


#: Elixir's definitions of modules, named by the module's alias.
_ELIXIR_MODULES = _types("defmodule defprotocol defimpl")


def _defined_by_call(call: Node) -> str:
    """The name an Elixir definition's call gives: a module's (``MyApp.Repo`` of ``defmodule
    MyApp.Repo do``), a protocol implementation's as Elixir names its module (``Inspect.Version``
    of ``defimpl Inspect, for: Version``), a function's, macro's or guard's (``get`` of ``def
    get(id) when ... do``, ``def get, do: ...``); empty where the call computes it (``def
    unquote(name)(...)``) or defines an operator."""
    arguments = _call_arguments(call)
    if not arguments:
        return ""
    head = arguments[0]
    if _call_keyword(call) in _ELIXIR_MODULES:
        if head.type != "alias":
            return ""
        implemented = [
            pair.child_by_field_name("value")
            for keywords in arguments[1:]
            if keywords.type == "keywords"
            for pair in keywords.named_children
            if _text(pair.child_by_field_name("key") or pair).rstrip(": ") == "for"
        ]
        for_type = implemented[0] if implemented else None
        if for_type is not None and for_type.type == "alias":
            return f"{_text(head)}.{_text(for_type)}"
        return _text(head)
    operator = head.child_by_field_name("operator") if head.type == "binary_operator" else None
    if operator is not None and _text(operator) == "when":  # a guard: ``def get(id) when ... do``
        head = head.child_by_field_name("left") or head
    if head.type == "call":
        target = head.child_by_field_name("target")
        return _text(target) if target is not None and target.type == "identifier" else ""
    return _text(head) if head.type == "identifier" else ""


def _elixir_uses(module: Node) -> list[Node]:
    """The modules an Elixir module's block ``use``s, as written (``ExUnit.Case``)."""
    block = next((child for child in module.named_children if child.type == "do_block"), None)
    statements = block.named_children if block is not None else []
    return [
        arguments[0]
        for statement in statements
        if _call_keyword(statement) == "use"
        for arguments in [_call_arguments(statement)]
        if arguments and arguments[0].type == "alias"
    ]


def _documents_next(attribute: Node) -> bool:
    """Whether an Elixir unary operator is a module attribute that goes with the function under it
    (``@doc``, ``@spec``, ``@impl``), not ``@moduledoc``, which documents the module it lies in, nor
    an operator of an expression (``-1``, ``&handle/1``)."""
    operand = attribute.child_by_field_name("operand")
    is_attribute = bool(attribute.children) and attribute.children[0].type == "@"
    return is_attribute and operand is not None and _call_keyword(operand) != "moduledoc"


#: Elixir's calls that declare a struct's fields: ``defstruct [:name, age: 0]``.
_STRUCTS = _types("defstruct defexception")


def _struct_fields(call: Node) -> list[Node]:
    """The nodes naming the fields an Elixir ``defstruct`` declares: its list's atoms and its
    keywords' keys (``:name``, ``age:``); none for another call."""
    if _call_keyword(call) not in _STRUCTS:
        return []
    fields: list[Node] = []
    for argument in _call_arguments(call):
        entries = argument.named_children if argument.type == "list" else [argument]
        for entry in entries:
            if entry.type == "atom":
                fields.append(entry)
            elif entry.type == "keywords":
                keys = (pair.child_by_field_name("key") for pair in entry.named_children)
                fields.extend(key for key in keys if key is not None)
    return fields


def _member_text(name: Node) -> str:
    """A member's name as its node gives it, an Elixir struct's field without its colon (``name`` of
    ``:name`` and ``name:``)."""
    text = _text(name)
    return text.strip(":").strip() if name.type in ("atom", "keyword") else text


#: Definitions named by the first of their children of these types, having no field for it: a Dart
#: mixin's and ``typedef``'s name, a Zig constant's.
_NAMED_FIRST = {
    "mixin_declaration": ("identifier",),
    "type_alias": ("type_identifier",),
    "variable_declaration": ("identifier",),
}


def _dart_function_name(signature: Node) -> str:
    """A Dart constructor's name within its class, as Dart calls it (``origin`` of
    ``Point.origin(...)``; ``new`` of the unnamed ``Point(...)``, which Dart tears off as
    ``Point.new``), or an operator's (``operator ==``)."""
    head = []
    for child in signature.children:
        if child.type == "formal_parameter_list":
            break
        head.append(child)
    if signature.type == "operator_signature":
        written = " ".join(_text(child) for child in head)
        return "operator " + written.rpartition("operator")[2].strip()
    names = [child for child in head if child.type == "identifier"]
    return _text(names[-1]) if len(names) > 1 else "new"


def _declares_dart_test(statement: Node, rule: TestRule) -> bool:
    """Whether a Dart statement declares a test (``test('parses', () { ... })``, flutter_test's
    ``testWidgets``) or a group of them (``group('Parser', () { ... })``): a call of one of
    ``rule``'s names given a string, then a function."""
    callee, *rest = statement.named_children or [statement]
    if callee.type != "identifier" or _text(callee) not in rule.calls | rule.groups or len(rest) != 1:
        return False
    part = rest[0].named_children[0] if rest[0].type == "selector" and rest[0].named_children else None
    lists = [child for child in part.named_children if child.type == "arguments"] if part is not None else []
    values = [
        argument.named_children[0]
        for argument in (lists[0].named_children if lists else [])
        if argument.type == "argument" and argument.named_children
    ]
    return len(values) >= 2 and values[0].type == "string_literal" and values[1].type == "function_expression"


def _zig_test_name(test: Node) -> str:
    """A Zig test's title: its name (``"parses an empty list"``), the declaration it tests (``test
    parse``), or ``test``."""
    named = next((child for child in test.named_children if child.type in ("string", "identifier")), None)
    if named is None:
        return "test"
    return _text(named).strip('"') if named.type == "string" else _text(named)


#: Rust's constants and statics (``pub const MAX_RETRIES: u32 = 3;``, ``static mut COUNTER``).
_RUST_VALUES = _types("const_item static_item")
#: The file's top, where a variable of Dart or Zig declares its name, and what lists it there.
_FILE_TOPS = _types("program source_file")
_TOP_VARIABLE_LISTS = _types("initialized_identifier_list static_final_declaration_list")
#: What a Zig constant binds when it only names what another file defines: ``@import("std")``,
#: ``std.mem.Allocator``.
_ALIASED = _types("builtin_function field_expression identifier")


def _declared_names(node: Node, script: bool) -> list[Node]:
    """The names a node of :attr:`Grammar.names` declares alone: a C macro's, not an include
    guard's; a variable's at a Dart or Zig file's top (a library's or a file struct's own
    constants), not a Zig import or alias, which only repeats another file's name; those a
    JavaScript module exports (:func:`_exported_names`); a Rust constant or static at a file's top;
    a Kotlin or Swift property at the top of a file of declarations, not of a ``script``
    (:func:`_is_script`)."""
    if node.type in _C_MACROS:
        name = node.child_by_field_name("name")
        return [name] if name is not None and not _guards_include(node) else []
    if node.type == "variable_declarator":
        return _exported_names(node)
    if node.type == "assignment":  # Ruby's, of a constant at the file's top
        return _assigned_constant(node) if node.parent is not None and node.parent.type == "program" else []
    if node.type == "assignment_statement":
        return _module_field(node) or _file_constant(node)
    if node.type == "call":  # Python's: ``parser.add_argument("--name", "-n")``, ``@click.option(...)``
        return _option_spellings(node)
    if node.type == "call_expression":  # Go's, Rust's, JavaScript's: a parser's option
        return _called_option_names(node)
    if node.type == "field_declaration":  # Rust's: a field clap's derive makes an option
        return _clap_field_option(node)
    if node.type == "expression_statement":  # Python's, at the module's top
        return _module_constant(node) if node.parent is not None and node.parent.type == "module" else []
    at_top = node.parent is not None and node.parent.type == "source_file"
    if node.type in _RUST_VALUES:  # at the file's top; in a module, an impl or a trait they are members
        return _member_names(node) if at_top else []
    if node.type == "property_declaration":  # Kotlin's and Swift's, at the top of a file of declarations
        return _member_names(node) if at_top and not script else []
    holder = node.parent
    while holder is not None and holder.type in _TOP_VARIABLE_LISTS:
        holder = holder.parent
    if holder is None or holder.type not in _FILE_TOPS:
        return []
    name, *values = node.named_children or [node]
    if name.type != "identifier" or (node.type in _ZIG_CONSTANTS and values and values[-1].type in _ALIASED):
        return []
    return [name]


#: The name a declaration gives what it leaves unnamed (Rust's ``const _: () = ...``, a check run at
#: compile time): no name to look up.
_UNNAMED = "_"
#: What a Kotlin or Swift file's top holds besides its declarations (every ``*_declaration``) and
#: comments, without running anything: its package, imports, annotations, ``#!`` line, type
#: aliases, Swift's compiler directives (``#if``, ``#warning``) and freestanding macros that declare
#: (SwiftUI's ``#Preview { }``); and a syntax error, which the grammar could not read as a statement.
_TOP_DECLARING = _types(
    "package_header import file_annotation shebang shebang_line type_alias directive diagnostic"
    " macro_invocation ERROR"
)
#: Files that run as scripts whatever their top holds, as their tools define them: SwiftPM's manifest
#: and an executable's entry point (``let package = Package(...)`` is the manifest's working value),
#: and Kotlin's scripts (Gradle's ``settings.gradle.kts``).
_SCRIPT_NAMES = frozenset({"package.swift", "main.swift"})
_SCRIPT_SUFFIX = ".kts"


def _is_script(path: str, root: Node) -> bool:
    """Whether the file at ``path`` is a script (:data:`_SCRIPT_NAMES`, :data:`_SCRIPT_SUFFIX`), or its
    top runs statements (a call, an assignment, a ``guard``, a ``do``), as only a script's may: a
    ``#!`` script. A variable there is the script's working value (``let name``, ``val debug``),
    not a module's global, which a library file, holding declarations alone, declares."""
    name = path.rsplit("/", 1)[-1].lower()
    return (
        name in _SCRIPT_NAMES
        or name.endswith(_SCRIPT_SUFFIX)
        or any(
            not child.type.endswith(("_declaration", "comment")) and child.type not in _TOP_DECLARING
            for child in root.named_children
        )
    )


def _assigned_name(statement: Node) -> list[Node]:
    """The name a Python statement assigns (``TIMEOUT`` of ``TIMEOUT = 5``, ``timeout`` of
    ``timeout: float = 5.0`` or of a dataclass's ``timeout: float``), as a list; none for a
    statement that assigns nothing, an attribute, an item, several targets, or a name Python gives
    a meaning of its own (``__all__``, ``__slots__``)."""
    assignment = statement.named_children[0] if statement.named_child_count == 1 else None
    if assignment is None or assignment.type != "assignment":
        return []
    left = assignment.child_by_field_name("left")
    if left is None or left.type != "identifier":
        return []
    name = _text(left)
    return [] if name.startswith("__") and name.endswith("__") else [left]


#: The calls that declare a command-line option by its spellings, as their first arguments: the
#: standard library's ``add_argument`` (argparse) and ``add_option`` (optparse), click's ``option``
#: and typer's ``Option``.
OPTION_CALLS = frozenset({"add_argument", "add_option", "option", "Option"})
#: An option as a command line spells it: a dash or two, then a letter or a digit.
_OPTION_SPELLING = re.compile(r"--?[A-Za-z0-9][\w-]{0,80}")


def _option_spellings(call: Node) -> list[Node]:
    """The spellings of the option a Python call declares (:data:`OPTION_CALLS`), each the text of
    one of its leading string arguments (``"-f"``, ``"--overwrite-if-exists"``): a command's options
    are what its users type, and what a question about its flags names."""
    function = call.child_by_field_name("function")
    called = (
        function.child_by_field_name("attribute")
        if function is not None and function.type == "attribute"
        else function
    )
    arguments = call.child_by_field_name("arguments")
    if (
        called is None
        or called.type != "identifier"
        or _text(called) not in OPTION_CALLS
        or arguments is None
    ):
        return []
    spellings: list[Node] = []
    for argument in arguments.named_children:
        contents = [part for part in argument.named_children if part.type == "string_content"]
        if (
            argument.type != "string"
            or len(contents) != 1
            or not _OPTION_SPELLING.fullmatch(_text(contents[0]))
        ):
            break  # the spellings come first, before any other argument
        spellings.append(contents[0])
    return spellings


#: A string literal's text without its quotes, in each grammar whose calls declare options.
_STRING_CONTENTS = _types("string_content string_fragment interpreted_string_literal_content")
#: The methods by which Go's ``flag`` package and ``pflag`` (cobra's) declare an option: the value's
#: type (``String``, ``Duration``, ``StringSlice``, ``Func``), then ``Var`` where the variable's
#: address comes before the name, then ``P`` where a one-letter shorthand follows it.
_GO_FLAG_METHOD = re.compile(
    r"(?:Bool|Duration|Float(?:32|64)|Int(?:8|16|32|64)?|Uint(?:8|16|32|64)?|String|Count|IP|IPMask|IPNet"
    r"|BytesHex|BytesBase64|Func|BoolFunc|Text)?(?:Slice|Array|ToString|ToInt(?:64)?)?(Var)?(P)?"
)
#: The fewest arguments a Go option's declaration takes: its name, its default and its usage (or the
#: variable and its name for ``Var``), the usage a string, last: a call that reads a value by its
#: option's name (``c.String("name")``) takes one, a metric's (``statsd.Count("hits", 1, nil, 1)``)
#: or a column's (``t.String("email", 255, false)``) ends with no usage.
_GO_FLAG_ARGUMENTS = 3
_GO_STRINGS = _types("interpreted_string_literal raw_string_literal")
#: The attributes by which clap's derive (and structopt before it) makes a field an option.
_CLAP_ATTRIBUTES = frozenset({"arg", "clap", "structopt"})
#: commander's and yargs' methods that declare an option by its spellings (``"-p, --port <n>"``) or
#: by its name before its settings (``"port", {alias: "p"}``).
_JS_OPTION_METHODS = frozenset({"option", "requiredOption"})
#: The settings yargs reads of an option (a widget's ``.option("paging", {pageSize: 10})`` has none).
_YARGS_SETTINGS = frozenset(
    """alias type describe desc description demandOption default choices nargs boolean string number
    array count requiresArg hidden group coerce conflicts implies""".split()
)


def _string_content(argument: Node) -> Node | None:
    """The text of a string literal ``argument`` as one node, without its quotes; None for any other
    argument, or a string with escapes or interpolations in it."""
    contents = [part for part in argument.named_children if part.type in _STRING_CONTENTS]
    return contents[0] if len(contents) == argument.named_child_count == 1 else None


def _called_option_names(call: Node) -> list[Node]:
    """The names of the command-line option a Go, Rust or JavaScript call declares, as its
    parser's API spells them: Go's ``flag.String("name", ...)`` and ``cmd.Flags().StringVarP(&v,
    "name", "n", ...)``; clap's ``.long("name")``; commander's ``.option("-p, --port <n>")`` and
    yargs' ``.option("port", {...})``. A command's options are what its users type, and what a
    question about its flags names (:func:`_named_forms` spells them as typed)."""
    function = call.child_by_field_name("function")
    arguments = call.child_by_field_name("arguments")
    if function is None or arguments is None:
        return []
    method = function.child_by_field_name("field") or function.child_by_field_name("property")
    given = arguments.named_children
    if method is None or not given:
        return []
    spelled_by = _OPTION_ARGUMENTS.get(function.type)
    spellings = spelled_by(_text(method), given) if spelled_by is not None else []
    return [
        spelling
        for spelling in map(_string_content, spellings)
        if spelling and _OPTION_TEXT.fullmatch(_text(spelling))
    ]


def _go_flag_arguments(method: str, given: list[Node]) -> list[Node]:
    """The arguments of a Go call of ``method`` that spell an option it declares (:data:`_GO_FLAG_METHOD`):
    its name, and its shorthand after it for a ``P`` method; after the variable for a ``Var`` one."""
    flag = _GO_FLAG_METHOD.fullmatch(method)
    if flag is None or not method or len(given) < _GO_FLAG_ARGUMENTS or given[-1].type not in _GO_STRINGS:
        return []
    first = 1 if flag.group(1) else 0
    return given[first : first + 1 + bool(flag.group(2))]


def _clap_arguments(method: str, given: list[Node]) -> list[Node]:
    """The argument of clap's ``.long("name")``."""
    return given[:1] if method == "long" and len(given) == 1 else []


def _js_option_arguments(method: str, given: list[Node]) -> list[Node]:
    """The first argument of commander's ``.option("-p, --port <n>")``, or of yargs'
    ``.option("port", {...})``, whose settings follow the name (:data:`_JS_OPTION_METHODS`)."""
    if method not in _JS_OPTION_METHODS:
        return []
    content = _string_content(given[0])
    dashed = content is not None and _text(content).startswith("-")
    return given[:1] if dashed or (len(given) > 1 and _yargs_settings(given[1])) else []


def _yargs_settings(argument: Node) -> bool:
    """Whether ``argument`` is an object of an option's settings as yargs reads them
    (:data:`_YARGS_SETTINGS`)."""
    if argument.type != "object":
        return False
    keys = (pair.child_by_field_name("key") for pair in argument.named_children if pair.type == "pair")
    return any(key is not None and _text(key) in _YARGS_SETTINGS for key in keys)


#: How each grammar's call spells its method, and which arguments of it spell the option it declares.
_OPTION_ARGUMENTS = {
    "selector_expression": _go_flag_arguments,
    "field_expression": _clap_arguments,
    "member_expression": _js_option_arguments,
}


#: What an option's declaration may spell: its name (``parameter-list``), its spellings with their
#: dashes, maybe several and a value's placeholder (commander's ``-p, --port <number>``).
_OPTION_TEXT = re.compile(
    r"-{0,2}[A-Za-z0-9][\w.-]{0,80}(?:[ ,|]+(?:--?[A-Za-z0-9][\w.-]{0,80}|[<\[][\w. -]{0,80}[>\]]))*"
)


def _clap_field_option(field: Node) -> list[Node]:
    """The long option clap's derive makes of a Rust struct's field: its name, as a list, where an
    attribute above it (``#[arg(long)]``, ``#[clap(long)]``, structopt's) says ``long``, which
    :func:`_named_forms` spells as clap does (``parameter_list`` is ``--parameter-list``); the
    name given, where it says ``long = "name"``."""
    above = field.prev_named_sibling
    while above is not None and (above.type == "attribute_item" or "comment" in above.type):
        attribute = (
            above.named_children[0] if above.type == "attribute_item" and above.named_children else None
        )
        words = attribute.named_children if attribute is not None else []
        if words and _text(words[0]) in _CLAP_ATTRIBUTES and len(words) > 1:
            parts = words[1].named_children
            for index, part in enumerate(parts):
                if part.type == "identifier" and _text(part) == "long":
                    given = parts[index + 1] if index + 1 < len(parts) else None
                    if given is not None and given.type == "string_literal":
                        content = _string_content(given)
                        return [content] if content is not None else []
                    name = field.child_by_field_name("name")
                    return [name] if name is not None else []
        above = above.prev_named_sibling
    return []


def _module_constant(statement: Node) -> list[Node]:
    """The name a Python module's statement assigns where PEP 8 spells it as a module's own value
    (a constant, ``DEFAULT_TIMEOUT``, or a type alias, ``JSONValue``: a capital in it), as a list;
    none for a name in lower case alone, which is as often a script's or a notebook's working
    variable (``df``, ``model``, ``args``) as a module's value, and would make every script that
    holds a ``model`` define it."""
    return [name for name in _assigned_name(statement) if not _text(name).islower()]


def _assigned_constant(assignment: Node) -> list[Node]:
    """The constant a Ruby assignment binds (``TIMEOUT`` of ``TIMEOUT = 5``, ``Errors::Timeout``),
    as a list; none for a variable, an attribute or several targets."""
    left = assignment.child_by_field_name("left")
    if left is None or left.type not in ("constant", "scope_resolution"):
        return []
    return [left] if _QUALIFIABLE.fullmatch(_text(left)) and _text(left)[:1].isupper() else []


def _module_field(assignment: Node) -> list[Node]:
    """The field of a Lua module's table that an assignment at the file's top binds (``M.debug`` of
    ``M.debug = false``, whatever its value), as a list: the module's table is what the file
    returns at its end (``return M``), the value ``require`` gives. Not a global's field
    (``package.path = ...``), nor one of a table nested in the module's."""
    holder = assignment.parent
    variables = next((child for child in assignment.named_children if child.type == "variable_list"), None)
    targets = variables.children_by_field_name("name") if variables is not None else []
    if holder is None or holder.type != "chunk" or len(targets) != 1:
        return []
    target = targets[0]
    table = target.child_by_field_name("table") if target.type == "dot_index_expression" else None
    if table is None or table.type != "identifier":
        return []
    last = _last_named_child(holder)
    returned = last.named_children[0] if last is not None and last.type == "return_statement" else None
    values = returned.named_children if returned is not None and returned.type == "expression_list" else []
    return [target] if len(values) == 1 and _text(values[0]) == _text(table) else []


def _file_constant(assignment: Node) -> list[Node]:
    """The constant a Lua file's ``local`` at its top binds, as a list: one name in capitals
    (``local CHUNK_SIZE = 2^12``), as Lua's style writes a constant; not a working variable, a
    module another file defines (``local Date = require "pl.Date"``), nor a one-letter table
    (``local M = {}``, a module's own, whose fields are its names)."""
    declaration = assignment.parent
    if declaration is None or declaration.type != "variable_declaration":
        return []
    if declaration.parent is None or declaration.parent.type != "chunk":
        return []
    variables = next((child for child in assignment.named_children if child.type == "variable_list"), None)
    targets = variables.children_by_field_name("name") if variables is not None else []
    if len(targets) != 1 or targets[0].type != "identifier":
        return []
    name = _text(targets[0])
    return [targets[0]] if len(name) > 1 and name.isupper() and name[:1].isalpha() else []


def _named_forms(name: Node) -> tuple[str, ...]:
    """The forms a name of :func:`_declared_names` is declared in: as written, and a Lua module's
    field alone too where it is compound, as a class's member is (:func:`_known_alone`)."""
    written = _text(name)
    if name.type in _STRING_CONTENTS:  # an option's declaration (:func:`_called_option_names`)
        return _option_forms(written)
    if name.type == "field_identifier":  # clap's field (:func:`_clap_field_option`)
        return ("--" + written.replace("_", "-"),)
    if name.type != "dot_index_expression":
        return (written,)
    return (written, *_known_alone((_last_part(written),), member=True))


def _option_forms(written: str) -> tuple[str, ...]:
    """The spellings an option's declaration gives, as a command line types them: each of those
    it writes with their dashes (``-p`` and ``--port`` of ``-p, --port <number>``), or its name with
    the dashes its parser puts before it (``--name``, ``-n``)."""
    if written.startswith("-"):
        return tuple(_OPTION_SPELLING.findall(written))
    return ("-" * (1 + (len(written) > 1)) + written,)


def _exported_names(declarator: Node) -> list[Node]:
    """The names a JavaScript or TypeScript variable an ``export`` declares at a module's top binds
    (``export const produce = immer.produce``; ``a`` and ``b`` of ``export const { a, b } = x``),
    whatever its value: the module's public surface, as a function it exports is. Declared alone,
    so a value that holds definitions keeps them as its outline (a store's actions in
    ``defineStore(...)``). A module's own constants that it does not export are its helpers."""
    if not _exported_from_module(declarator):
        return []
    name = declarator.child_by_field_name("name")
    if name is None:
        return []
    return _bound_names(name) if name.type in _PATTERNS else [name] if name.type == "identifier" else []


#: The children that name an OCaml definition, which gives them no ``name`` field: an operator's
#: ``val`` and ``external`` name it in brackets, as its ``let`` does (``val ( $ ) : ...``).
_OCAML_NAMES = _types(
    "value_name parenthesized_operator module_name module_type_name class_name class_type_name method_name"
)


def _ocaml_name(definition: Node) -> Node | None:
    """The node naming an OCaml definition: a let-binding's name (``parse`` of ``let parse text =``,
    ``( // )`` of ``let ( // ) a b =``; none for ``let () =`` or a tuple), a module's, a class's,
    a method's, a ``val``'s or an ``external``'s (``( $ )`` of ``val ( $ ) : ...``)."""
    if definition.type == "let_binding":
        pattern = definition.child_by_field_name("pattern")
        named = pattern is not None and pattern.type in ("value_name", "parenthesized_operator")
        return pattern if named else None
    return next((child for child in definition.named_children if child.type in _OCAML_NAMES), None)


#: ppx_inline_test's and ppx_expect's extension points on a let-binding: ``let%test``, ``let%expect_test``.
_INLINE_TESTS = frozenset("test test_unit expect_test test_module".split())


def _inline_test(binding: Node) -> str:
    """The title of the OCaml inline test a let-binding is: its string (``joins paths`` of
    ``let%test "joins paths" = ...``), else its extension's name (``expect_test`` of
    ``let%expect_test _ =``); empty for another binding. A test's title describes it, and
    declares no name."""
    holder = binding.parent if binding.type == "let_binding" else None
    extension = (
        next((child for child in holder.named_children if child.type == "attribute_id"), None)
        if holder
        else None
    )
    if extension is None or _text(extension) not in _INLINE_TESTS:
        return ""
    pattern = binding.child_by_field_name("pattern")
    content = (
        pattern.named_children[0]
        if pattern is not None and pattern.type == "string" and pattern.named_children
        else None
    )
    return _text(content) if content is not None else _text(extension)


#: Comments that document the declaration after them, past blank lines and other comments: Haskell's
#: Haddock comments (``-- |``, ``{- | -}``).
_DOCUMENTING = _types("haddock")


def _holds_inline_test(definition: Node) -> bool:
    """Whether an OCaml definition is an inline test (``let%test``, ``let%expect_test``): written
    beside the code it tests, in that code's module, which it makes no test module."""
    return any(_inline_test(child) for child in definition.named_children if child.type == "let_binding")


#: Haskell's and OCaml's applications of a function to its arguments.
_APPLICATIONS = _types("apply application_expression")


def _calls_a_test(node: Node, names: frozenset[str]) -> bool:
    """Whether a Haskell or OCaml definition calls one of ``names`` with a string first, as a
    test or a group of tests is declared: hspec's ``describe "parse" $ do`` and ``it "reads"``,
    tasty's ``testGroup "Rules" [...]``, Alcotest's ``Alcotest.test_case "joins" `Quick f``."""
    if not _test_call_written(names).search(node.text or b""):
        return False  # spares the walk of the many definitions that do not
    waiting = [node]
    while waiting:
        found = waiting.pop()
        function = found.child_by_field_name("function") if found.type in _APPLICATIONS else None
        if function is not None and function.type in ("variable", "value_path"):
            argument = found.child_by_field_name("argument")
            string = argument is not None and (argument.type == "string" or _text(argument).startswith('"'))
            if string and _last_part(_text(function)) in names:
                return True
        waiting.extend(found.named_children)
    return False


@cache
def _test_call_written(names: frozenset[str]) -> re.Pattern[bytes]:
    """A call of one of ``names`` to a string literal, as the source writes it."""
    alternatives = "|".join(re.escape(name) for name in sorted(names))
    return re.compile(rf"(?<![\w'])(?:{alternatives})\s+\"".encode())
