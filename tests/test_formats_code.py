"""Source code read by its grammar (real tree-sitter grammars): the outline as headings, the names a
file defines, chunks cut at definitions and statements, and edits that stay cheap."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from conftest import write
from helpers import HashBackend, fastest_seconds, grows_linearly

from indexer import Index
from indexer.chunking import ChunkSettings, chunk_document
from indexer.formats import is_source_code, parse_text
from indexer.formats.code import CODE_EXTENSIONS, GRAMMARS
from indexer.formats.document import Heading
from indexer.formats.preprocessor import one_configuration, without_macros
from indexer.records import HEADING_SEPARATOR


def count_words(texts: list[str]) -> list[int]:
    return [len(text.split()) for text in texts]


def heading_paths(path: str, source: str) -> dict[str, str]:
    """The heading path each declared name's line lies under, as the chunker would give it."""
    document = parse_text(path, textwrap.dedent(source))
    trail: list[tuple[int, str]] = []
    under: dict[int, tuple[str, ...]] = {}
    headings = sorted(document.headings, key=lambda heading: (heading.line, heading.level))
    at = 0
    for number in range(1, len(document.lines) + 1):
        while at < len(headings) and headings[at].line == number:
            trail = [(level, title) for level, title in trail if level < headings[at].level]
            trail.append((headings[at].level, headings[at].title))
            at += 1
        under[number] = tuple(title for _, title in trail)
    return {
        name: HEADING_SEPARATOR.join(under[line])
        for line, names in document.definitions.items()
        for name in names
    }


#: One small file per language: a container holding a method, and a function after it.
SAMPLES = {
    "geo/shapes.py": (
        """
        class Renderer:
            def draw(self, x):
                return x

        def helper():
            return 1
        """,
        {"Renderer": "Renderer", "draw": "Renderer > draw", "helper": "helper"},
    ),
    "web/app.js": (
        """
        export class Renderer {
          draw(ctx) {
            return ctx;
          }
        }
        export const helper = (a) => {
          return a + 1;
        };
        """,
        {"Renderer": "Renderer", "draw": "Renderer > draw", "helper": "helper"},
    ),
    "web/app.ts": (
        """
        namespace Geo {
          export function area(): number { return 0; }
        }
        interface Shape {
          area(): number;
        }
        """,
        {"Geo": "Geo", "area": "Geo > area", "Shape": "Shape"},
    ),
    "web/button.tsx": (
        """
        export function Button(props: { label: string }) {
          return <button>{props.label}</button>;
        }
        """,
        {"Button": "Button"},
    ),
    "render/render.go": (
        """
        package render

        type Renderer struct {
            width int
        }

        func (r *Renderer) Draw(x int) int {
            return x
        }

        func helper() int {
            return 1
        }
        """,
        {"Renderer": "Renderer", "Draw": "Renderer > Draw", "helper": "helper"},
    ),
    "src/render.rs": (
        """
        pub struct Renderer {
            width: u32,
        }

        impl Renderer {
            pub fn draw(&self, x: u32) -> u32 {
                x
            }
        }

        fn helper() -> u32 {
            1
        }
        """,
        {"Renderer": "Renderer", "draw": "Renderer > draw", "helper": "helper"},
    ),
    "src/Renderer.java": (
        """
        package geo;

        public class Renderer {
            public int draw(int x) {
                return x;
            }
        }
        """,
        {"Renderer": "Renderer", "draw": "Renderer > draw"},
    ),
    "src/Renderer.kt": (
        """
        class Renderer(val width: Int) {
            fun draw(x: Int): Int {
                return x
            }
        }

        fun helper(): Int {
            return 1
        }
        """,
        {"Renderer": "Renderer", "draw": "Renderer > draw", "helper": "helper"},
    ),
    "src/render.c": (
        """
        struct renderer {
            int width;
        };

        static int *draw(int x) {
            return 0;
        }
        """,
        {"renderer": "renderer", "draw": "draw"},
    ),
    "src/render.cpp": (
        """
        namespace geo {
        class Renderer {
         public:
          int draw(int x) { return x; }
        };
        int Renderer::paint() { return 0; }
        }
        """,
        {
            "Renderer": "geo > Renderer",
            "draw": "geo > Renderer > draw",
            "paint": "geo > Renderer::paint",
        },
    ),
    "src/Renderer.cs": (
        """
        namespace Geo {
            public class Renderer {
                public int Draw(int x) { return x; }
            }
        }
        """,
        {"Renderer": "Geo > Renderer", "Draw": "Geo > Renderer > Draw"},
    ),
    "lib/geo.rb": (
        """
        module Geo
          class Renderer
            def draw(x)
              x
            end
          end
        end
        """,
        {"Geo": "Geo", "Renderer": "Geo > Renderer", "draw": "Geo > Renderer > draw"},
    ),
    "src/Renderer.php": (
        """
        <?php
        class Renderer {
            public function draw($x) { return $x; }
        }
        function helper() { return 1; }
        """,
        {"Renderer": "Renderer", "draw": "Renderer > draw", "helper": "helper"},
    ),
    "Sources/Geo/Renderer.swift": (
        """
        struct Renderer {
            func draw(x: Int) -> Int {
                return x
            }
        }

        extension Canvas {
            func fill() {}
        }

        func helper() -> Int {
            return 1
        }
        """,
        {"Renderer": "Renderer", "draw": "Renderer > draw", "fill": "Canvas > fill", "helper": "helper"},
    ),
    "src/main/scala/geo/Renderer.scala": (
        """
        package geo

        class Renderer(width: Int) {
          def draw(x: Int): Int = {
            x
          }
        }

        object Renderer {
          def apply(): Renderer = new Renderer(1)
        }
        """,
        {"Renderer": "Renderer", "draw": "Renderer > draw", "apply": "Renderer > apply"},
    ),
    "bin/greet.sh": (
        """
        greet() {
          echo "hello $1"
        }
        greet world
        """,
        {"greet": "greet"},
    ),
}


@pytest.mark.parametrize("path", sorted(SAMPLES))
def test_each_language_gives_its_definitions_under_module_class_and_function(path):
    source, expected = SAMPLES[path]
    found = heading_paths(path, source)
    assert {name: found.get(name) for name in expected} == {
        name: f"{path} > {under}" for name, under in expected.items()
    }


def test_every_language_named_has_a_grammar_and_an_extension():
    languages = set(CODE_EXTENSIONS.values())
    assert languages == set(GRAMMARS)
    assert {"python", "javascript", "typescript", "tsx", "go", "rust", "java", "kotlin"} <= languages
    assert {
        "c",
        "cpp",
        "csharp",
        "ruby",
        "php",
        "swift",
        "scala",
        "lua",
        "elixir",
        "dart",
        "zig",
        "bash",
    } <= languages
    assert {"haskell", "ocaml", "ocaml_interface"} <= languages


PYTHON = '''\
"""A module."""

import os

# The tool's own name.
NAME = "tool"


# Finds a name in a path.
# Two lines of comment.
@cache
def find_name(path):
    """The name in ``path``."""

    parts = path.split("/")

    return parts[-1]


def outer():
    def inner():
        return 1

    return inner


if __name__ == "__main__":
    print(find_name(os.getcwd()))
'''


def chunks_of(path: str, text: str, limit: int = 200):
    return chunk_document(parse_text(path, text), count_words, ChunkSettings.for_limit(limit))


def test_comments_decorators_and_docstring_stay_with_their_definition():
    document = parse_text("pkg/utils.py", PYTHON)
    headings = {heading.title: heading.line for heading in document.headings if heading.level == 2}
    assert headings["find_name"] == PYTHON.split("\n").index("# Finds a name in a path.") + 1
    assert document.definitions[PYTHON.split("\n").index("def find_name(path):") + 1] == ("find_name",)
    # the blank lines inside the function are inside literal statements or between its statements
    chunks = chunks_of("pkg/utils.py", PYTHON, limit=30)
    holding = [chunk for chunk in chunks if "def find_name" in chunk.text]
    assert len(holding) == 1
    assert holding[0].text.lstrip().startswith("# Finds a name in a path.")
    assert "return parts[-1]" in holding[0].text
    assert holding[0].heading == "pkg/utils.py > find_name"


@pytest.mark.parametrize("path", ["pkg/utils.pyi", "types/index.d.ts"])
def test_a_stub_or_declaration_file_is_outlined_but_defines_nothing(path):
    source = (
        "def find_name(path: str) -> str: ...\n"
        if path.endswith(".pyi")
        else "export interface find_name {\n  (path: string): string;\n}\n"
    )
    document = parse_text(path, source)
    assert [heading.title for heading in document.headings] == [path, "find_name"]
    assert document.definitions == {}


def test_an_attribute_of_several_lines_above_a_definition_starts_its_chunk_under_its_heading():
    fields = "\n".join(
        f"    /// The option number {number}.\n    pub option_{number}: bool," for number in range(30)
    )
    attributes = '#[derive(Parser)]\n#[command(\n    name = "tool",\n    version,\n)]\n'
    source = f"{attributes}pub struct Opts {{\n{fields}\n}}\n"
    chunks = chunks_of("src/cli.rs", source, limit=60)
    assert chunks[0].text.startswith("#[derive(Parser)]")
    assert len(chunks) >= 3
    assert all(chunk.heading == "src/cli.rs > Opts" for chunk in chunks)


@pytest.mark.parametrize(
    ("path", "source", "title", "first"),
    [
        (  # rack's class docs: one blank line under them
            "lib/rack/mock_request.rb",
            "# frozen_string_literal: true\n\nrequire 'uri'\n\nmodule Rack\n"
            "  # Rack::MockRequest helps testing your Rack application without\n  # actually using HTTP.\n\n"
            "  class MockRequest\n    def get(uri)\n    end\n  end\nend\n",
            "MockRequest",
            "  # Rack::MockRequest helps testing your Rack application without",
        ),
        (  # two blank lines: a note of its own
            "lib/rack/lock.rb",
            "require 'thread'\n\n# Mutexes for the apps below.\n\n\nclass Lock\nend\n",
            "Lock",
            "class Lock",
        ),
        (  # the file's banner is no class's doc
            "lib/rack/version.rb",
            "# frozen_string_literal: true\n\n# Copyright (C) 2007 Leah Neukirchen\n\nmodule Rack\nend\n",
            "Rack",
            "module Rack",
        ),
        (
            "lib/rack/lint.rb",
            "# frozen_string_literal: true\n\nclass Lint\nend\n",
            "Lint",
            "class Lint",
        ),
        (
            "src/walk.go",
            "// Copyright The Walkers.\n\npackage walk\n\n// Walk visits every node under root.\n\n"
            "func Walk(root string) {\n}\n",
            "Walk",
            "// Walk visits every node under root.",
        ),
    ],
)
def test_a_doc_comment_one_blank_line_above_a_definition_starts_its_heading(path, source, title, first):
    lines = source.split("\n")
    headings = parse_text(path, source).headings
    assert (title, lines.index(first) + 1) in [(heading.title, heading.line) for heading in headings]


def test_a_rust_doc_comment_starts_the_heading_of_the_item_it_documents():
    # tree-sitter ends a `///` comment at the first column of the line after it, the item's own
    source = textwrap.dedent(
        """\
        /// A thing that holds.
        ///
        /// More about it.
        #[derive(Debug)]
        pub struct Arg {
            name: String,
        }

        impl Arg {
            /// Reads the value from an environment variable.
            ///
            /// # Examples
            pub fn env(self) -> Self {
                self
            }
        }
        """
    )
    lines = source.split("\n")
    starts = [(heading.title, heading.line) for heading in parse_text("src/arg.rs", source).headings]
    assert ("Arg", lines.index("/// A thing that holds.") + 1) in starts
    assert ("env", lines.index("    /// Reads the value from an environment variable.") + 1) in starts
    inner = parse_text("src/lib.rs", "//! The crate's docs, not its first item's.\npub fn first() {}\n")
    assert [(heading.title, heading.line) for heading in inner.headings] == [("src/lib.rs", 1), ("first", 2)]
    first = chunks_of("src/arg.rs", source, limit=40)[0]
    assert first.text.startswith("/// A thing that holds.") and "pub struct Arg" in first.text
    assert first.heading == "src/arg.rs > Arg"


@pytest.mark.parametrize("path", ["src/schemas.ts", "src/schemas.js"])
def test_a_value_a_call_builds_around_a_function_defines_its_name(path):
    source = textwrap.dedent(
        """\
        export const $ZodDefault = /*@__PURE__*/ core.$constructor("$ZodDefault", (inst, def) => {
          inst.parse = (payload) => payload;
        });

        export const Button = memo(forwardRef((props, ref) => {
          return null;
        }));

        const router = express.Router();
        const config = defineConfig({ plugins: [] });

        function total(items) {
          const doubled = items.map((item) => item * 2);
          return doubled.length;
        }

        describe("refine", () => {
          const checked = schema.refine((value) => value > 0);
        });
        """
    )
    document = parse_text(path, source)
    declared = {name for names in document.definitions.values() for name in names}
    assert declared == {"$ZodDefault", "Button", "total"}, "a value built in a body is no definition"
    titles = [heading.title for heading in document.headings if heading.level == 2]
    assert titles == ["$ZodDefault", "Button", "total"]


@pytest.mark.parametrize("path", ["src/contentType.ts", "src/contentType.js"])
def test_the_methods_of_a_module_s_object_are_known_by_its_name(path):
    source = """
        const jsonContentTypeHandler = {
          name: "json",
          isMatch(req) {
            return true;
          },
          async parse(opts) {
            return opts;
          },
        };

        const limits = { max: 10 };

        function handle(req) {
          const local = { parse(text) { return text; } };
          return local;
        }
        """
    paths = heading_paths(path, source)
    assert paths["jsonContentTypeHandler.parse"] == f"{path} > jsonContentTypeHandler > parse"
    assert paths["jsonContentTypeHandler.isMatch"] == f"{path} > jsonContentTypeHandler > isMatch"
    assert paths["jsonContentTypeHandler"] == f"{path} > jsonContentTypeHandler"
    assert "limits" not in paths and "local" not in paths and "local.parse" not in paths
    nested = "const outer = {\n  inner: {\n    deep() {\n      return 1;\n    },\n  },\n  run() {},\n};\n"
    nested_paths = heading_paths(path, nested)
    assert "outer.deep" not in nested_paths and "outer.run" in nested_paths  # deep is outer.inner.deep
    titles = [heading.title for heading in parse_text(path, textwrap.dedent(source)).headings]
    assert titles.count("parse") == 1  # a function's own object is a step of its body


@pytest.mark.parametrize(
    "path, source",
    [
        (
            "src/plugins/patches.ts",
            """
            export function enablePatches() {
              function getPath(state: ImmerState, path: PatchPath = []): PatchPath | null {
                return path;
              }

              /** The patches of one change. */
              function generatePatches_(state: ImmerState, basePath: PatchPath): void {
                return;
              }

              loadPlugin("Patches", { generatePatches_ });
              items.forEach(function visit(item) {
                return item;
              });
              if (debug) {
                function trace() {}
              }
            }
            """,
        ),
        (
            "pkg/utils.py",
            """
            def enable_patches():
                def get_path(state):
                    return state

                # The patches of one change.
                @cache
                def generate_patches_(state):
                    return None

                load_plugin("Patches", generate_patches_)
                if debug:
                    def trace():
                        pass
            """,
        ),
        (
            "src/plugin.rs",
            """
            pub fn enable_patches() {
                fn get_path(state: &State) -> Vec<u32> {
                    vec![]
                }

                /// The patches of one change.
                fn generate_patches_(state: &State) {}

                load_plugin("Patches");
                items.iter().for_each(|item| { fn visit() {} visit() });
                if debug {
                    fn trace() {}
                }
            }
            """,
        ),
    ],
)
def test_a_function_declared_in_a_function_s_body_is_headed_under_it_a_closure_is_not(path, source):
    found = heading_paths(path, source)
    outer, *inner = sorted(
        name for name in found if name.lower().replace("_", "") == "enablepatches"
    ) + sorted(name for name in found if name != "enablePatches" and name != "enable_patches")
    assert found[outer] == f"{path} > {outer}"
    assert {name: found[name] for name in inner} == {name: f"{path} > {outer} > {name}" for name in inner}
    assert {name.lower().replace("_", "") for name in inner} == {"getpath", "generatepatches"}
    lines = textwrap.dedent(source).split("\n")
    document = parse_text(path, textwrap.dedent(source))
    doc_line = next(number for number, line in enumerate(lines, 1) if "The patches of one change." in line)
    assert Heading(doc_line, 3, inner[0] if "generate" in inner[0] else inner[1]) in document.headings
    after = next(
        number for number, line in enumerate(lines, 1) if "load_plugin" in line or "loadPlugin" in line
    )
    assert Heading(after, 2, outer) in document.headings  # the outer function's code goes on under it


def test_a_test_s_own_helper_is_headed_under_it_and_declares_nothing():
    source = "def test_rollout():\n    def run(step):\n        return step\n\n    assert run(1) == 1\n"
    document = parse_text("tests/test_rollout.py", source)  # a test file, by pytest's name for one
    assert Heading(2, 3, "run") in document.headings
    assert "run" not in {name for names in document.definitions.values() for name in names}
    case = (
        "class RolloutTest(unittest.TestCase):\n    def test_run(self):\n"
        "        def run(step):\n            return step\n"
    )
    assert "run" not in {
        name for names in parse_text("src/checks.py", case).definitions.values() for name in names
    }
    library = parse_text("src/rollout.py", source.replace("test_rollout", "rollout"))
    assert "run" in {name for names in library.definitions.values() for name in names}


def test_module_code_after_a_definition_goes_back_under_the_module():
    document = parse_text("pkg/utils.py", PYTHON)
    main_line = PYTHON.split("\n").index('if __name__ == "__main__":') + 1
    assert any(
        heading.line == main_line and heading.level == 1 and heading.title == "pkg/utils.py"
        for heading in document.headings
    )
    last = chunks_of("pkg/utils.py", PYTHON, limit=20)[-1]
    assert "__main__" in last.text and last.heading == "pkg/utils.py"


@pytest.mark.parametrize(
    "path, source, after",
    [
        (  # a definition last in a try block: the module's code after the block
            "pkg/compat.py",
            "try:\n    import fast\nexcept ImportError:\n"
            "    def fast():\n        return 1\n\nLIMIT = fast()\n",
            "LIMIT = fast()",
        ),
        (  # RSpec: a method defined in a block, the examples after it in the describe block
            "spec/client_spec.rb",
            'describe "Client" do\n  before do\n    @klass = Class.new do\n      def self.name\n'
            '        "Parent"\n      end\n    end\n    @child = Class.new(@klass)\n  end\n\n'
            '  it "inherits options" do\n    expect(@child.options).to eq({})\n  end\nend\n',
            "@child = Class.new(@klass)",
        ),
        (  # Java: an enum constant's body, the next constant's comment after it
            "src/Policy.java",
            "enum Policy {\n  IDENTITY() {\n    @Override\n    String name(String f) {\n      return f;\n"
            "    }\n  },\n\n  /** Upper case: the first letter capitalised. */\n  UPPER() {\n"
            "    @Override\n    String name(String f) {\n      return f.toUpperCase();\n    }\n  };\n}\n",
            "/** Upper case: the first letter capitalised. */",
        ),
    ],
)
def test_code_after_a_block_a_definition_ends_goes_back_under_the_container(path, source, after):
    document = parse_text(path, source)
    line = source.split("\n").index(next(row for row in source.split("\n") if row.strip() == after)) + 1
    above = [heading for heading in document.headings if heading.line <= line][-1]
    assert above.title != "name" and above.title != "fast", (above, document.headings)
    assert above.title in (path, "Policy", "Client"), document.headings


DOCUMENTED_MEMBERS = {
    "src/HedgingStrategyOptions.cs": (
        """
        public class HedgingStrategyOptions {
            /// <summary>
            /// Gets or sets the delay to wait before a hedged action is started.
            /// </summary>
            /// <remarks>A zero delay starts every hedged action at once.</remarks>
            public TimeSpan Delay { get; set; } = TimeSpan.FromSeconds(2);

            /// <summary>
            /// Gets or sets the most hedged actions the strategy starts.
            /// </summary>
            /// <value>The default value is one.</value>
            public int MaxHedgedAttempts { get; set; } = 1;
        }
        """,
        {3: 7, 9: 13},  # the first line of each doc comment: its member's line
        50,  # words a chunk holds: a member and its comment, not two
    ),
    "src/SamplingHandler.php": (
        """
        <?php
        class SamplingHandler {
            /**
             * The handler the sampled records go to, or a factory
             * that makes it when the first record comes.
             */
            protected $handler;

            /**
             * One record in this many is handled.
             */
            protected int $factor;
        }
        """,
        {4: 8, 10: 13},
        40,
    ),
}


@pytest.mark.parametrize("path", sorted(DOCUMENTED_MEMBERS))
def test_a_member_s_doc_comment_is_never_cut_from_the_member(path):
    source, members, limit = DOCUMENTED_MEMBERS[path]
    document = parse_text(path, textwrap.dedent(source))
    chunks = chunk_document(document, count_words, ChunkSettings.for_limit(limit))
    assert len(chunks) > 1
    for comment, member in members.items():
        assert any(chunk.start_line <= comment and chunk.end_line >= member for chunk in chunks), (
            comment,
            [(chunk.start_line, chunk.end_line) for chunk in chunks],
        )


def test_a_definition_larger_than_a_chunk_is_cut_between_statements_each_part_headed_by_it():
    statements = "\n".join(f"        total = total + compute(item, {number}, scale)" for number in range(60))
    source = "class Ledger:\n    def balance(self, item):\n"
    source += f"        total = 0\n{statements}\n        return total\n"
    document = parse_text("books/ledger.py", source)
    chunks = chunk_document(document, count_words, ChunkSettings.for_limit(60))
    parts = [chunk for chunk in chunks if chunk.heading == "books/ledger.py > Ledger > balance"]
    assert len(parts) >= 3
    assert all(chunk.heading == "books/ledger.py > Ledger > balance" for chunk in chunks[1:])
    for chunk in parts:  # every part starts at a statement of the function, never inside one
        assert chunk.start_line in document.block_starts or chunk.start_line == 2


def test_a_statement_of_several_lines_is_one_literal_block():
    source = 'def usage():\n    text = """\n    first\n\n    second\n    """\n    return text\n'
    document = parse_text("cli.py", source)
    assert (2, 6) in document.literal
    assert 3 not in document.block_starts and 5 not in document.block_starts


@pytest.mark.parametrize(
    "path, text, headings",
    [
        ("broken.py", "def (((:\n  ]]] ))) class\n" * 20, ["broken.py"]),  # still headed by its path
        ("notes.m", "int main(void) {\n  return 1;\n}\n", ["notes.m"]),  # no grammar: headed by its path
        ("web/Dockerfile.dev", "FROM python:3.11\nRUN pip install .\n", ["web/Dockerfile.dev"]),
        ("Makefile", "all:\n\techo built\n", ["Makefile"]),
        # a script named without an extension, in a language without a grammar: headed by its path
        ("scripts/services/sshd", "#!/usr/bin/perl\nmy $detail = 5;\n", ["scripts/services/sshd"]),
    ],
)
def test_a_file_its_grammar_cannot_read_or_a_language_without_one_keeps_plain_lines(path, text, headings):
    document = parse_text(path, text)
    assert [heading.title for heading in document.headings] == headings and document.definitions == {}
    assert document.lines == text.split("\n")[:-1]
    assert {chunk.heading for chunk in chunks_of(path, text)} == {headings[0] if headings else ""}


@pytest.mark.parametrize(
    "path, source, headings, line, names",
    [
        (
            "Rakefile",
            'desc "Run tests"\ntask :test do\n  ruby "test/all.rb"\nend\n\ndef gem_version\n  "1.0"\nend\n',
            ["Rakefile", "gem_version"],
            6,
            ("gem_version",),
        ),
        (
            "ios/Podfile",
            "platform :ios, '13.0'\n\nclass Pods\n  SWIFT_VERSION = '5.0'\nend\n",
            ["ios/Podfile", "Pods"],
            4,
            ("Pods::SWIFT_VERSION", "SWIFT_VERSION"),
        ),
    ],
)
def test_a_build_file_named_as_a_ruby_dsl_is_read_as_ruby(path, source, headings, line, names):
    """Bundler, Rake, Vagrant, CocoaPods and the like read a file of that exact name as Ruby: its
    definitions head and declare as a ``.rb`` file's do."""
    document = parse_text(path, source)
    assert [heading.title for heading in document.headings] == headings
    assert document.definitions[line] == names
    assert is_source_code(path)


def test_what_a_ruby_dsl_s_tool_writes_beside_it_stays_plain_lines_under_its_path():
    source = "GEM\n  remote: https://rubygems.org/\n  specs:\n    rake (13.0.6)\n\nPLATFORMS\n  ruby\n"
    document = parse_text("Gemfile.lock", source)
    assert [heading.title for heading in document.headings] == ["Gemfile.lock"]
    assert document.definitions == {} and not is_source_code("Podfile.lock")


#: Type aliases that parse, then an interface whose generic call signatures follow one another with
#: no ``;``, which tree-sitter-typescript reads as type arguments, wrapping the file in one error.
UNPARSED_INTERFACE = """\
import { Nothing } from "../internal"

/** A draft of a value, writable where the value is read-only. */
export type WritableDraft<T> = {
	-readonly [K in keyof T]: Draft<T[K]>
}

export type Draft<T> = T extends object ? WritableDraft<T> : T

/** One change to a value, as JSON Patch writes it. */
export interface Patch {
	op: "replace" | "remove" | "add"
	path: (string | number)[]
}

export interface IProduce {
	/** Curried producer that infers the recipe from the curried output type. */
	<Curried>(
		recipe: InferRecipeFromCurried<Curried>,
		initialState?: InferInitialStateFromCurried<Curried>
	): Curried

	/** Curried producer that infers curried from the recipe. */
	<Recipe extends AnyFunc>(
		recipe: Recipe
	): InferCurriedFromRecipe<Recipe, false>

	/** Normal producer. */
	<Base, D = Draft<Base>>(
		base: Base,
		recipe: (draft: D) => ValidRecipeReturnType<D>
	): Base
}
"""


TYPESCRIPT_MEMBERS = """\
enum Lifecycle {
  Transient,
  /** One instance for the whole container. */
  Singleton = 1,
  ResolutionScoped = "resolution",
}

export interface DependencyContainer {
  /** Resolves a token into an instance. */
  resolve<T>(token: InjectionToken<T>): T;
  readonly parent?: DependencyContainer;
}

export type RegistrationOptions = { lifecycle: Lifecycle };

export class InternalDependencyContainer implements DependencyContainer {
  private disposed = false;

  public resolve<T>(token: InjectionToken<T>): T {
    const options = { lifecycle: Lifecycle.Transient };
    return this.construct(token, options);
  }
}
"""


def test_a_typescript_enum_s_members_an_interface_s_signatures_and_a_class_s_fields_are_declared():
    """What a TypeScript type declares as its members is looked up by its type's name, as a Java
    enum's constants and a Kotlin class's properties are: an enum's members, bare or with a value
    (``Lifecycle.ResolutionScoped``), an interface's methods and properties, a class's fields; a
    type literal's properties and an object literal's keys are no type's members."""
    document = parse_text("src/container.ts", TYPESCRIPT_MEMBERS)
    line_of = {line.strip(): number for number, line in enumerate(TYPESCRIPT_MEMBERS.split("\n"), 1)}
    assert document.definitions[line_of["Transient,"]] == ("Lifecycle.Transient",)
    assert document.definitions[line_of["Singleton = 1,"]] == ("Lifecycle.Singleton",)
    assert document.definitions[line_of['ResolutionScoped = "resolution",']] == (
        "Lifecycle.ResolutionScoped",
        "ResolutionScoped",
    )
    assert document.definitions[line_of["resolve<T>(token: InjectionToken<T>): T;"]] == (
        "DependencyContainer.resolve",
    )
    assert document.definitions[line_of["readonly parent?: DependencyContainer;"]] == (
        "DependencyContainer.parent",
    )
    assert document.definitions[line_of["private disposed = false;"]] == (
        "InternalDependencyContainer.disposed",
    )
    assert line_of["const options = { lifecycle: Lifecycle.Transient };"] not in document.definitions
    assert document.definitions[line_of["export type RegistrationOptions = { lifecycle: Lifecycle };"]] == (
        "RegistrationOptions",
    )
    assert heading_paths("src/container.ts", TYPESCRIPT_MEMBERS)["Lifecycle.Singleton"] == (
        "src/container.ts > Lifecycle"
    )


TYPESCRIPT_OVERLOADS = """\
import { Provider } from "./providers";

/** Parses a token. */
export function parse(token: string): Token;
export function parse(token: symbol): Token;
export function parse(token: string | symbol): Token {
  return new Token(token);
}

export class Container {
  constructor(private parent?: Container) {}

  /**
   * Register a dependency provider.
   */
  public register<T>(token: string, provider: Provider<T>): Container;
  // a class registers itself
  public register<T>(token: Constructor<T>): Container;
  public register<T>(token: string | Constructor<T>, provider?: Provider<T>): Container {
    return this;
  }
}
"""


def test_a_typescript_function_s_overloads_and_their_doc_comment_lie_under_its_heading():
    """TypeScript writes a function's overloads as signatures above its implementation, and its
    doc comment above the first of them: the function's heading starts there, so its doc and its
    signatures are read under its name, not under the module's or the class's."""
    line_of = {line.strip(): number for number, line in enumerate(TYPESCRIPT_OVERLOADS.split("\n"), 1)}
    headings = {
        heading.title: heading.line for heading in parse_text("src/c.ts", TYPESCRIPT_OVERLOADS).headings
    }
    assert headings["parse"] == line_of["/** Parses a token. */"]
    assert headings["register"] == line_of["/**"]
    paths = heading_paths("src/c.ts", TYPESCRIPT_OVERLOADS)
    assert paths["Container.register"] == "src/c.ts > Container > register"
    assert paths["Container.parent"] == "src/c.ts > Container > constructor"


def test_the_statements_that_parse_keep_their_outline_where_one_the_grammar_cannot_read_fails_the_file():
    lines = UNPARSED_INTERFACE.split("\n")
    document = parse_text("src/types/types-external.ts", UNPARSED_INTERFACE)
    assert document.definitions == {
        lines.index("export type WritableDraft<T> = {") + 1: ("WritableDraft",),
        lines.index("export type Draft<T> = T extends object ? WritableDraft<T> : T") + 1: ("Draft",),
        lines.index("export interface Patch {") + 1: ("Patch",),
        lines.index('\top: "replace" | "remove" | "add"') + 1: ("Patch.op",),
        lines.index("\tpath: (string | number)[]") + 1: ("Patch.path",),
    }
    chunks = chunks_of("src/types/types-external.ts", UNPARSED_INTERFACE, limit=30)
    headings = {chunk.heading for chunk in chunks}
    assert "src/types/types-external.ts > WritableDraft" in headings
    broken = [chunk for chunk in chunks if chunk.end_line >= lines.index("\t/** Normal producer. */")]
    assert {chunk.heading for chunk in broken} == {"src/types/types-external.ts"}  # plain lines, headed


def test_a_few_syntax_errors_leave_the_rest_of_the_outline():
    source = "def good():\n    return 1\n\n" * 10 + "x = = 1\n" + "def after():\n    return 2\n"
    titles = {heading.title for heading in parse_text("mostly_fine.py", source).headings}
    assert {"good", "after"} <= titles


#: A C file whose definitions open differently by platform, and a header's C++ linkage.
PLATFORM_C = """\
#ifndef TOOL_H
#define TOOL_H
#ifdef __cplusplus
extern "C" {
#endif

#ifdef WIN32
int umain(int argc, char *argv[]) {
#else
int main(int argc, char *argv[]) {
#endif
  return run_tool(argc, argv);
}

#if 0
static int broken(
#else
static int run_tool(int argc, char *argv[]) {
  return argc > 1;
}
#endif

#ifdef __cplusplus
}
#endif
#endif
"""


@pytest.mark.parametrize("path", ["src/main.c", "src/main.cpp"])
def test_c_whose_conditional_groups_differ_by_platform_is_read_in_one_configuration(path):
    document = parse_text(path, PLATFORM_C)
    assert document.lines == PLATFORM_C.split("\n")[:-1]  # every branch's lines, as written
    titles = [heading.title for heading in document.headings]
    assert titles == [path, "umain", "run_tool"]  # the first branch; #if 0's never
    assert document.definitions[_source_line(PLATFORM_C, "static int run_tool(")] == ("run_tool",)


def test_c_that_reads_as_written_keeps_every_branch_s_definitions():
    source = (
        "#ifdef ASMINF\nvoid inflate_fast_asm(int bits);\n#else\n"
        "void inflate_fast(int bits) {\n  return;\n}\n#endif\n"
    )
    titles = [heading.title for heading in parse_text("src/inffast.c", source).headings]
    assert titles == ["src/inffast.c", "inflate_fast"]  # the second branch's, which no configuration drops


#: A C++ library's header, named as C's are.
CPP_HEADER = """\
#pragma once
#include <string>

namespace fmt {
template <typename Char> class basic_string_view {
 public:
  constexpr basic_string_view(const Char* s, size_t n) noexcept : data_(s), size_(n) {}
  constexpr auto size() const noexcept -> size_t { return size_; }

 private:
  const Char* data_;
  size_t size_;
};

template <typename... T> auto format(const char* fmt, T&&... args) -> std::string {
  return vformat(fmt, make_format_args(args...));
}
}  // namespace fmt
"""


@pytest.mark.parametrize("path", ["include/fmt/base.h", "include/fmt/BASE.H"])
def test_a_header_that_c_cannot_read_is_read_as_cpp(path):
    document = parse_text(path, CPP_HEADER)
    titles = [heading.title for heading in document.headings]
    assert {"basic_string_view", "size", "format"} <= set(titles), titles
    declared = {name for names in document.definitions.values() for name in names}
    assert {"basic_string_view", "format"} <= declared


CPP_CLASS_HEADER = """\
// A wrapper that caches the key of the iterator it wraps.
#ifndef ITERATOR_WRAPPER_H_
#define ITERATOR_WRAPPER_H_

#include "iterator.h"

namespace store {

// Caches valid() and key() of the iterator it wraps.
class IteratorWrapper {
 public:
  IteratorWrapper() : iter_(nullptr), valid_(false) {}
  explicit IteratorWrapper(Iterator* iter) : iter_(nullptr) { Set(iter); }
  ~IteratorWrapper() { delete iter_; }
  Iterator* iter() const { return iter_; }

  // Takes ownership of "iter".
  void Set(Iterator* iter) {
    delete iter_;
    iter_ = iter;
    if (iter_ == nullptr) {
      valid_ = false;
    } else {
      Update();
    }
  }

  bool Valid() const { return valid_; }
  Slice key() const {
    assert(Valid());
    return key_;
  }

  void Next() {
    assert(iter_);
    iter_->Next();
    Update();
  }

 private:
  void Update() {
    valid_ = iter_->Valid();
    if (valid_) {
      key_ = iter_->key();
    }
  }

  Iterator* iter_;
  bool valid_;
  Slice key_;
};

}  // namespace store

#endif  // ITERATOR_WRAPPER_H_
"""


def test_a_cpp_header_that_c_reads_with_few_errors_is_read_as_cpp_where_that_finds_more():
    """C reads a class's lines as a few errors, under the limit, and finds the namespace alone."""
    document = parse_text("src/iterator_wrapper.h", CPP_CLASS_HEADER)
    titles = [heading.title for heading in document.headings]
    assert {"IteratorWrapper", "~IteratorWrapper", "Set", "Next", "Update"} <= set(titles), titles
    assert (
        "store::IteratorWrapper::Set" in document.definitions[_source_line(CPP_CLASS_HEADER, "  void Set(")]
    )


def _source_line(source: str, start: str) -> int:
    return next(number for number, line in enumerate(source.split("\n"), 1) if line.startswith(start))


@pytest.mark.parametrize(
    ("language", "kept"),
    [("c", ["guarded", "c only", "neither", "both"]), ("cpp", ["guarded", "linkage", "neither", "both"])],
)
def test_one_configuration_takes_what_every_compiler_of_the_language_takes(language, kept):
    lines = [
        "#ifndef GUARD_H", "guarded", "#if defined(__cplusplus)", "linkage", "#elif !defined __cplusplus",
        "c only", "#else", "never", "#endif", "#if 0 /* off */", "off", "#elifdef X", "neither",
        "#else", "never", "#endif", "#if defined(A) && \\", "    defined(B)", "both", "#endif", "#endif",
        "#endif",
    ]  # fmt: skip
    configured = one_configuration(lines, language)
    assert len(configured) == len(lines)
    assert [line for line in configured if line] == kept


@pytest.mark.parametrize(
    ("test", "in_c", "in_cpp"),
    [
        ("#if __cplusplus >= 201103L", False, True),  # a number's suffix is no name
        ("#if defined(__cplusplus) && !defined(NO_LINKAGE)", False, True),
        ("#if !defined(__cplusplus) && defined(STRICT)", True, False),
        ("#if defined(__cplusplus) || defined(LINKAGE)", True, True),  # either way: the first branch
    ],
)
def test_a_test_of_cplusplus_is_taken_as_the_language_s_compiler_takes_it(test, in_c, in_cpp):
    lines = [test, "taken", "#else", "not taken", "#endif"]
    for language, taken in (("c", in_c), ("cpp", in_cpp)):
        assert [line for line in one_configuration(lines, language) if line] == [
            "taken" if taken else "not taken"
        ]


def test_a_group_left_open_leaves_every_line_as_written():
    lines = ["/* an example:", "#if 0", "*/", "int kept(void) { return 1; }"]
    assert one_configuration(lines, "c") == lines


@pytest.mark.slow
def test_reading_one_configuration_is_linear_in_the_nesting(tmp_path):
    def seconds(depth: int) -> float:
        lines = ["#if 0"] * depth + ["int x;"] * depth + ["#endif"] * depth
        return fastest_seconds(lambda: one_configuration(lines, "c"), repeats=3)

    assert grows_linearly(seconds, 20_000, 160_000, 24)  # quadratic would be 64


@pytest.mark.parametrize(
    ("path", "source", "line", "declared"),
    [
        ("render.py", "class Renderer:\n    def draw(self):\n        pass\n", 2, ("Renderer.draw", "draw")),
        ("lib/base.rb", "module Sinatra\n  class Base\n  end\nend\n", 2, ("Base", "Sinatra::Base")),
        ("src/lib.rs", "impl Path {\n    fn new() {}\n}\n", 2, ("Path::new", "new")),
        ("src/fmt.rs", "impl Display for Path {\n    fn fmt() {}\n}\n", 2, ("Path::fmt", "fmt")),
        (  # the type's member, as rustdoc lists it, not the trait's
            "src/json.rs",
            "impl<T, S> FromRequest<S> for Json<T> {\n    async fn from_request() {}\n}\n",
            2,
            ("Json::from_request", "from_request"),
        ),
        ("src/path.rs", "impl<'a> Display for &'a Path {\n    fn fmt() {}\n}\n", 2, ("fmt",)),  # no name
        ("src/vec.rs", "impl<T> Vec<T> {\n    fn push() {}\n}\n", 2, ("Vec::push", "push")),
    ],
)
def test_a_member_is_declared_by_its_name_qualified_by_what_holds_it(path, source, line, declared):
    assert parse_text(path, source).definitions[line] == declared


MEMBERS = {
    "src/ValidatorOptions.cs": (
        """
        namespace FluentValidation;

        public class ValidatorConfiguration {
            /// <summary>Separates the names of a property chain.</summary>
            public string PropertyChainSeparator { get; set; } = ".";
            private int _count, _limit;
            public event EventHandler Changed;
            public const string Default = "en";
        }

        public enum Severity { Error, Warning }
        """,
        {
            6: ("PropertyChainSeparator", "ValidatorConfiguration.PropertyChainSeparator"),
            7: ("ValidatorConfiguration._count", "ValidatorConfiguration._limit"),
            8: ("ValidatorConfiguration.Changed",),
            9: ("ValidatorConfiguration.Default",),
            12: ("Severity", "Severity.Error", "Severity.Warning"),
        },
        ["ValidatorConfiguration", "Severity"],
    ),
    "src/ClassName.kt": (
        """
        class ClassName(val simpleName: String) {
          public val packageName: String = ""

          companion object {
            const val DEFAULT = "kotlin"
          }

          fun reflect(): String {
            val local = packageName
            return local
          }
        }

        enum class KModifier {
          PUBLIC,
          PRIVATE,
        }
        """,
        {
            3: ("ClassName.packageName", "packageName"),
            6: ("ClassName.DEFAULT",),  # a word in capitals: many enums and objects define it
            16: ("KModifier.PUBLIC",),
            17: ("KModifier.PRIVATE",),
        },
        ["ClassName", "reflect", "KModifier"],
    ),
    "src/Logger.php": (
        """
        <?php
        namespace Monolog;

        class Logger {
            public const API = 3, DEBUG = 100;
            protected string $name;
        }

        enum Level: int {
            case Debug = 100;
        }
        """,
        {
            6: ("Logger::API", "Logger::DEBUG"),
            7: ("Logger::$name",),  # as PHP and a doc comment's @see write a property
            11: ("Level::Debug",),
        },
        ["Logger", "Level"],
    ),
    "src/Color.java": (
        """
        public class Palette {
            public static final int MAX = 8, MIN = 0;

            enum Color { RED, DARK_BLUE, GREEN }
        }
        """,
        {
            3: ("Palette.MAX", "Palette.MIN"),
            5: (
                "Color",
                "Color.DARK_BLUE",
                "Color.GREEN",
                "Color.RED",
                "DARK_BLUE",
                "Palette.Color",
                "Palette.Color.DARK_BLUE",
                "Palette.Color.GREEN",
                "Palette.Color.RED",
            ),
        },
        ["Palette", "Color"],
    ),
}


@pytest.mark.parametrize("path", sorted(MEMBERS))
def test_members_declare_their_names_qualified_by_their_container_and_head_nothing(path):
    source, declared, titles = MEMBERS[path]
    document = parse_text(path, textwrap.dedent(source))
    assert {line: document.definitions.get(line) for line in declared} == declared
    assert [heading.title for heading in document.headings] == [path, *titles]


@pytest.mark.parametrize("path", ["include/spdlog/common.h", "src/levels.c"])
def test_a_c_macro_declares_its_name_in_each_branch_and_heads_nothing(path):
    source = """\
        #ifndef SPDLOG_COMMON_H
        #define SPDLOG_COMMON_H
        #ifndef SPDLOG_ACTIVE_LEVEL
        #define SPDLOG_ACTIVE_LEVEL SPDLOG_LEVEL_INFO
        #endif
        #if defined(SPDLOG_TRACE_ON)
        #define SPDLOG_TRACE(logger, ...) log(logger, __VA_ARGS__)
        #else
        #define SPDLOG_TRACE(logger, ...) (void)0
        #endif
        int level(void) { return SPDLOG_ACTIVE_LEVEL; }
        #endif
        """
    document = parse_text(path, textwrap.dedent(source))
    assert document.definitions == {  # the include guard is no name a reader looks for
        4: ("SPDLOG_ACTIVE_LEVEL",),
        7: ("SPDLOG_TRACE",),
        9: ("SPDLOG_TRACE",),
        11: ("level",),
    }
    assert [heading.title for heading in document.headings] == [path, "level"]


@pytest.mark.parametrize(
    ("source", "declared"),
    [
        ("#ifndef _STDIO_H\n#define _STDIO_H 1\nint puts(const char *s);\n#endif\n", {}),
        ("#if !defined(FOO_H)\n#define FOO_H\nint puts(const char *s);\n#endif\n", {}),
        ("#if !defined FOO_H\n/* guard */\n#define FOO_H 1\nint puts(const char *s);\n#endif\n", {}),
        (  # alone in its group with a value: a setting's default, which a question names
            "#ifndef CJSON_NESTING_LIMIT\n#define CJSON_NESTING_LIMIT 1000\n#endif\n",
            {2: ("CJSON_NESTING_LIMIT",)},
        ),
        (  # a default whose value is code, and more defaults after it
            "#ifndef FMT_BEGIN_NAMESPACE\n"
            "#define FMT_BEGIN_NAMESPACE namespace fmt {\n"
            "#define FMT_END_NAMESPACE }\n"
            "#endif\n",
            {2: ("FMT_BEGIN_NAMESPACE",), 3: ("FMT_END_NAMESPACE",)},
        ),
        (  # a choice between two values, no guard
            "#if !defined(LEVEL)\n#define LEVEL 1\n#else\n#define LEVEL 2\n#endif\n",
            {2: ("LEVEL",), 4: ("LEVEL",)},
        ),
        ("#ifndef FOO_H\nint puts(const char *s);\n#define FOO_H 1\n#endif\n", {3: ("FOO_H",)}),  # not first
    ],
)
def test_an_include_guard_declares_no_name_whatever_its_value_or_test(source, declared):
    assert parse_text("include/foo.h", source).definitions == declared


@pytest.mark.parametrize(
    ("path", "source", "line", "declared"),
    [
        (
            "src/Polly.Core/Hedging/HedgingStrategyOptions.cs",
            "public class HedgingStrategyOptions {\n    public int MaxHedgedAttempts { get; set; } = 1;\n}\n",
            2,
            ("HedgingStrategyOptions.MaxHedgedAttempts", "MaxHedgedAttempts"),
        ),
        (
            "src/Polly.Core/Hedging/HedgingStrategyOptions.cs",
            "public class HedgingStrategyOptions {\n    public TimeSpan Delay { get; set; }\n}\n",
            2,
            ("HedgingStrategyOptions.Delay",),  # a plain word: every class could define it
        ),
        (
            "src/Polly.Core/Hedging/HedgingStrategyOptions.cs",
            "public class HedgingStrategyOptions {\n    public string HTTP, UTF8;\n}\n",
            2,
            ("HedgingStrategyOptions.HTTP", "HedgingStrategyOptions.UTF8"),  # an abbreviation alone
        ),
        (
            "moshi-kotlin-codegen/src/main/java/Options.kt",
            'object Options {\n  const val OPTION_GENERATE_PROGUARD_RULES = "moshi.proguard"\n}\n',
            2,
            ("OPTION_GENERATE_PROGUARD_RULES", "Options.OPTION_GENERATE_PROGUARD_RULES"),
        ),
        (
            "src/Monolog/Handler/SamplingHandler.php",
            "<?php\nclass SamplingHandler {\n    protected int $samplingFactor;\n    protected $name;\n}\n",
            3,
            ("SamplingHandler::$samplingFactor", "samplingFactor"),
        ),
    ],
)
def test_a_member_with_a_compound_name_is_declared_alone_too(path, source, line, declared):
    assert parse_text(path, source).definitions[line] == declared


GO_SETTINGS = """\
package zerolog

import "time"

const (
	// TimestampFieldName is the field name used for the timestamp field.
	TimestampFieldName = "time"

	// LevelFieldName is the field name used for the level field.
	LevelFieldName = "level"
	minLevel, maxLevel = -1, 5
)

// DefaultLevel is the level a new logger logs at.
const DefaultLevel Level = InfoLevel

var (
	// ErrorStackMarshaler extracts the stack from err if any.
	ErrorStackMarshaler func(err error) interface{}

	_ = time.Now
)

func New() Logger {
	const depth = 2
	var level = DefaultLevel
	return Logger{level: level}
}
"""


def test_a_go_package_s_constants_and_variables_declare_their_names_alone_or_in_a_group():
    lines = GO_SETTINGS.split("\n")
    document = parse_text("globals.go", GO_SETTINGS)
    declared = {name: line for line, names in document.definitions.items() for name in names}
    assert declared == {
        "TimestampFieldName": lines.index('\tTimestampFieldName = "time"') + 1,
        "LevelFieldName": lines.index('\tLevelFieldName = "level"') + 1,
        "minLevel": lines.index("\tminLevel, maxLevel = -1, 5") + 1,
        "maxLevel": lines.index("\tminLevel, maxLevel = -1, 5") + 1,
        "DefaultLevel": lines.index("const DefaultLevel Level = InfoLevel") + 1,
        "ErrorStackMarshaler": lines.index("\tErrorStackMarshaler func(err error) interface{}") + 1,
        "New": lines.index("func New() Logger {") + 1,
    }, "a function's own constants and variables, and the blank identifier, declare nothing"
    starts = {(heading.title, heading.line) for heading in document.headings}
    for name, doc in [
        ("TimestampFieldName", "\t// TimestampFieldName is the field name used for the timestamp field."),
        ("DefaultLevel", "// DefaultLevel is the level a new logger logs at."),
        ("ErrorStackMarshaler", "\t// ErrorStackMarshaler extracts the stack from err if any."),
    ]:
        assert (name, lines.index(doc) + 1) in starts, "the comment above a spec is its doc"
    assert ("minLevel, maxLevel", lines.index("\tminLevel, maxLevel = -1, 5") + 1) in starts
    headed = {chunk.heading: chunk.names for chunk in chunks_of("globals.go", GO_SETTINGS, limit=20)}
    assert headed["globals.go > TimestampFieldName"] == ("TimestampFieldName",)


@pytest.mark.parametrize("path", ["src/immer.ts", "src/immer.js"])
def test_what_a_module_exports_declares_its_name_whatever_its_value(path):
    source = textwrap.dedent(
        """\
        import { Immer } from "./core/immerClass"

        const immer = new Immer()

        /** Creates the next state by applying a recipe to a draft of the base state. */
        export const produce = immer.produce

        export const NOTHING = Symbol.for("immer-nothing"), DRAFTABLE = Symbol.for("immer-draftable")

        export let autoFreeze

        export const { createDraft, finishDraft: finish, options = {}, ...rest } = immer

        export const [first, , third = 3] = immer.stages
        """
    )
    document = parse_text(path, source)
    lines = source.split("\n")
    declared = {name for names in document.definitions.values() for name in names}
    assert declared == {
        "produce",
        "NOTHING",
        "DRAFTABLE",
        "autoFreeze",
        "createDraft",
        "finish",
        "options",
        "rest",
        "first",
        "third",
    }, "a module's own constant, the keys it reads and the defaults it gives declare nothing"
    doc = lines.index("/** Creates the next state by applying a recipe to a draft of the base state. */") + 1
    assert Heading(doc, 2, "produce") in document.headings
    assert heading_paths(path, source)["finish"] == f"{path} > createDraft, finish, options, rest"


def test_an_exported_value_that_holds_definitions_keeps_them_as_its_outline():
    source = textwrap.dedent(
        """\
        export const useCounterStore = defineStore("counter", {
          state: () => ({ count: 0 }),
          actions: {
            /** Adds one to the count. */
            increment() {
              this.count++
            },
          },
        })
        """
    )
    document = parse_text("src/stores/counter.ts", source)
    assert "useCounterStore" in document.definitions[1]
    assert heading_paths("src/stores/counter.ts", source)["increment"] == "src/stores/counter.ts > increment"


def test_a_local_variable_is_no_member():
    source, _, _ = MEMBERS["src/ClassName.kt"]
    document = parse_text("src/ClassName.kt", textwrap.dedent(source))
    assert 10 not in document.definitions  # val local, in a function's body


def test_a_kotlin_type_alias_is_a_definition():
    source = "package p\n\npublic typealias Names = Map<String, String>\n\nfun f() = 1\n"
    assert heading_paths("src/Names.kt", source)["Names"] == "src/Names.kt > Names"


def test_a_kotlin_extension_function_is_headed_and_declared_under_its_receiver():
    source = """
    public fun Class<*>.asClassName(): ClassName = ClassName(name)

    public fun KClass<*>.asClassName(): ClassName = ClassName(qualifiedName)

    fun Map.Entry<String, Int>?.key(): String = this!!.key

    class CodeWriter {
      fun Map<String, String>.generateImports() = keys
    }

    fun <T> T.alsoLog(): T = this
    """
    document = parse_text("src/ClassNames.kt", textwrap.dedent(source))
    assert document.definitions[12] == ("alsoLog",)  # on its own type parameter: on any type
    assert document.definitions[2] == ("Class.asClassName", "asClassName")
    assert document.definitions[4] == ("KClass.asClassName", "asClassName")
    assert document.definitions[6] == ("Map.Entry.key", "key")
    assert document.definitions[9] == ("CodeWriter.generateImports", "generateImports")  # a member
    assert heading_paths("src/ClassNames.kt", source)["KClass.asClassName"] == (
        "src/ClassNames.kt > KClass > asClassName"  # as a Go method under its receiver's type
    )


SWIFT = """\
import Foundation

/// Splits a command line into its arguments.
public struct SplitArguments {
    /// The arguments, in order.
    public var elements: [String]
    let first = 0, last = 1

    /// An empty list.
    public init() {
        elements = []
    }

    enum Kind {
        case option, value
    }
}

extension SplitArguments: CustomStringConvertible {
    /// The arguments as typed.
    public var description: String {
        elements.joined(separator: " ")
    }

    func contains(_ name: String) -> Bool {
        elements.contains(name)
    }
}
"""


def test_a_swift_extension_s_members_are_headed_and_declared_under_the_type_it_extends():
    """An extension adds to a type declared elsewhere, as a Rust ``impl`` block does: its methods and
    properties are the type's, headed and qualified by it, and it declares no name of its own."""
    document = parse_text("Sources/ArgumentParser/SplitArguments.swift", SWIFT)
    line_of = {line.strip(): number for number, line in enumerate(SWIFT.split("\n"), 1)}
    assert document.definitions[line_of["public struct SplitArguments {"]] == ("SplitArguments",)
    assert document.definitions[line_of["public var elements: [String]"]] == ("SplitArguments.elements",)
    assert document.definitions[line_of["let first = 0, last = 1"]] == (
        "SplitArguments.first",
        "SplitArguments.last",
    )
    assert document.definitions[line_of["public init() {"]] == ("SplitArguments.init", "init")
    assert document.definitions[line_of["case option, value"]] == (
        "Kind.option",
        "Kind.value",
        "SplitArguments.Kind.option",
        "SplitArguments.Kind.value",
    )
    extension = line_of["extension SplitArguments: CustomStringConvertible {"]
    assert extension not in document.definitions
    assert document.definitions[line_of["public var description: String {"]] == (
        "SplitArguments.description",
    )
    assert document.definitions[line_of["func contains(_ name: String) -> Bool {"]] == (
        "SplitArguments.contains",
        "contains",
    )
    paths = heading_paths("Sources/ArgumentParser/SplitArguments.swift", SWIFT)
    assert (
        paths["SplitArguments.contains"]
        == "Sources/ArgumentParser/SplitArguments.swift > SplitArguments > contains"
    )


def test_a_swift_doc_comment_starts_the_heading_of_what_it_documents_and_stays_with_a_member():
    document = parse_text("Sources/ArgumentParser/SplitArguments.swift", SWIFT)
    line_of = {line.strip(): number for number, line in enumerate(SWIFT.split("\n"), 1)}
    headings = {(heading.title, heading.line) for heading in document.headings}
    assert ("SplitArguments", line_of["/// Splits a command line into its arguments."]) in headings
    assert ("init", line_of["/// An empty list."]) in headings
    chunks = chunk_document(document, count_words, ChunkSettings.for_limit(12))
    member, comment = line_of["public var description: String {"], line_of["/// The arguments as typed."]
    assert any(chunk.start_line <= comment and chunk.end_line >= member for chunk in chunks)


def test_scala_vals_in_a_template_and_a_case_class_s_parameters_are_members():
    source = """\
    package munit

    /** Where a test's code lies. */
    final class Location(val path: String, line: Int) {
      val filename: String = path.split("/").last
      var first, last = 0
      def render: String = s"$path:$line"
    }

    case class Tag(value: String)

    enum Color:
      case Red, Green
    """
    document = parse_text("munit/shared/src/main/scala/munit/Location.scala", textwrap.dedent(source))
    assert document.definitions[4] == ("Location", "Location.path")  # `line` is no member: no val
    assert document.definitions[5] == ("Location.filename",)
    assert document.definitions[6] == ("Location.first", "Location.last")
    assert document.definitions[7] == ("Location.render", "render")
    assert document.definitions[10] == ("Tag", "Tag.value")  # a case class's parameters are vals
    assert document.definitions[13] == ("Color.Green", "Color.Red")
    assert (3, "Location") in [(heading.line, heading.title) for heading in document.headings]  # its doc


LUA = """\
--- Paths, joined and split.
local Path = {}

--- A path from its parts.
---@param parts string[]
---@return Path
function Path.new(parts)
  return setmetatable({ parts = parts }, Path)
end

function Path:absolute()
  return "/" .. table.concat(self.parts, "/")
end

local function trim(text)
  return text
end

Path.join = function(a, b)
  return a .. "/" .. b
end

local util = {
  split = function(text)
    return vim.split(text, "/")
  end,
  sep = "/",
}

return Path
"""


def test_a_lua_module_s_functions_are_headed_and_declared_as_written():
    """``function Path.new``, ``function Path:absolute``, ``local function trim``, ``Path.join =
    function`` and a module table's function fields are a Lua module's definitions, headed as
    written and declared so and by their last name; a LuaDoc comment stays with its function."""
    document = parse_text("lua/paths/path.lua", LUA)
    line_of = {line.strip(): number for number, line in enumerate(LUA.split("\n"), 1)}
    assert document.definitions[line_of["function Path.new(parts)"]] == ("Path.new", "new")
    assert document.definitions[line_of["function Path:absolute()"]] == ("Path:absolute", "absolute")
    assert document.definitions[line_of["local function trim(text)"]] == ("trim",)
    assert document.definitions[line_of["Path.join = function(a, b)"]] == ("Path.join", "join")
    assert document.definitions[line_of["split = function(text)"]] == ("split", "util.split")
    assert line_of['sep = "/",'] not in document.definitions
    headings = {(heading.title, heading.line) for heading in document.headings}
    assert ("Path.new", line_of["--- A path from its parts."]) in headings
    paths = heading_paths("lua/paths/path.lua", LUA)
    assert paths["Path:absolute"] == "lua/paths/path.lua > Path:absolute"
    assert paths["util.split"] == "lua/paths/path.lua > util > split"


ELIXIR = '''\
defmodule MyApp.Repo do
  @moduledoc """
  Where the rows are.
  """

  defstruct [:name, pool_size: 10]

  @doc """
  Gets a row by its id.
  """
  @spec get(term) :: term
  def get(id) when is_integer(id) do
    fetch!(id)
  end

  def all, do: []

  defp fetch!(id), do: id

  defmodule Query do
    defmacro from(source), do: source
  end
end
'''


def test_an_elixir_module_s_functions_are_headed_and_declared_under_the_module():
    """Elixir's grammar reads every construct as a call: ``defmodule`` holds definitions as a class
    does, ``def``, ``defp`` and ``defmacro`` define functions declared qualified by the module
    (``MyApp.Repo.get``) and alone, ``defstruct`` declares the struct's fields, and a function's
    ``@doc`` and ``@spec`` start its heading, but not the module's ``@moduledoc``."""
    document = parse_text("lib/my_app/repo.ex", ELIXIR)
    line_of = {line.strip(): number for number, line in enumerate(ELIXIR.split("\n"), 1)}
    assert document.definitions[line_of["defmodule MyApp.Repo do"]] == ("MyApp.Repo", "Repo")
    assert document.definitions[line_of["defstruct [:name, pool_size: 10]"]] == (
        "MyApp.Repo.name",
        "MyApp.Repo.pool_size",
        "pool_size",
    )
    assert document.definitions[line_of["def get(id) when is_integer(id) do"]] == ("MyApp.Repo.get", "get")
    assert document.definitions[line_of["def all, do: []"]] == ("MyApp.Repo.all", "all")
    assert document.definitions[line_of["defp fetch!(id), do: id"]] == ("MyApp.Repo.fetch!", "fetch!")
    assert document.definitions[line_of["defmacro from(source), do: source"]] == (
        "MyApp.Repo.Query.from",
        "Query.from",
        "from",
    )
    headings = {(heading.title, heading.line) for heading in document.headings}
    assert ("get", line_of['@doc """']) in headings
    assert ("all", line_of["def all, do: []"]) in headings
    paths = heading_paths("lib/my_app/repo.ex", ELIXIR)
    assert paths["MyApp.Repo.get"] == "lib/my_app/repo.ex > MyApp.Repo > get"
    assert paths["Query.from"] == "lib/my_app/repo.ex > MyApp.Repo > Query > from"


ELIXIR_CLAUSES = """\
defmodule MyApp.Options do
  @doc "Validates the options against the schema."
  @spec validate(keyword(), schema()) :: {:ok, keyword()} | {:error, term()}
  def validate(options, %MyApp.Schema{} = schema) do
    check(options, schema)
  end

  def validate(options, schema) when is_list(schema) do
    validate(options, MyApp.Schema.new!(schema))
  end

  @doc "Validates the options, raising on an error."
  def validate!(options, schema), do: elem(validate(options, schema), 1)

  @impl true
  def handle_call(:get, _from, state), do: {:reply, state, state}

  @impl true
  def handle_call({:put, value}, _from, _state), do: {:reply, :ok, value}

  @doc "Splits a path."
  def split(path), do: split(path, "/")

  @doc "Splits a path at a separator."
  def split(path, separator), do: String.split(path, separator)

  defp check(options, _schema), do: {:ok, options}
end
"""


def test_an_elixir_function_s_clauses_are_one_definition_headed_from_its_doc():
    """Elixir groups a function's clauses, and together they are one function: its later clauses,
    past attributes such as ``@impl``, go on under its heading and declare nothing again, so the
    next function (``validate!``) heads its own lines; a ``@doc`` starts a function of its own."""
    document = parse_text("lib/my_app/options.ex", ELIXIR_CLAUSES)
    line_of = {line.strip(): number for number, line in enumerate(ELIXIR_CLAUSES.split("\n"), 1)}
    titles = [heading.title for heading in document.headings]
    assert titles.count("validate") == 1
    assert titles.count("handle_call") == 1
    assert titles.count("split") == 2  # split/1 and split/2, each documented
    headings = {(heading.line, heading.title) for heading in document.headings}
    assert (line_of['@doc "Validates the options against the schema."'], "validate") in headings
    assert (line_of['@doc "Validates the options, raising on an error."'], "validate!") in headings
    second = line_of["def validate(options, schema) when is_list(schema) do"]
    assert second not in document.definitions
    assert document.definitions[
        line_of["def validate!(options, schema), do: elem(validate(options, schema), 1)"]
    ] == (
        "MyApp.Options.validate!",
        "validate!",
    )
    paths = heading_paths("lib/my_app/options.ex", ELIXIR_CLAUSES)
    assert paths["MyApp.Options.validate!"] == "lib/my_app/options.ex > MyApp.Options > validate!"
    assert paths["MyApp.Options.check"] == "lib/my_app/options.ex > MyApp.Options > check"


HASKELL = """\
-- | Paths, joined and split.
module Data.Path
  ( Path (..)
  , join
  ) where

-- | A path, its parts in order.
data Path = Path
  { pathParts :: [String]
  , absolute :: Bool
  }

data Shape = Circle Double | Square

-- | Joins two paths.
join :: Path -> Path -> Path
join (Path [] _) b = b
{-# INLINE join #-}
join a b = a { pathParts = pathParts a ++ pathParts b }
  where
    helper = id

-- | Splits a path at its slashes.
--
-- > split "a/b" == ["a", "b"]

-- See Note: why not a regex.
split :: String -> [String]
split = words

class Pathlike a where
  -- | To a path.
  toPath :: a -> Path

instance Show Path where
  show = unwords . pathParts
"""


def test_a_haskell_function_s_signature_and_equations_are_one_definition_under_the_module():
    """A Haskell function's type signature and its equations are one definition, headed from its
    Haddock comment and declared on its signature, qualified by the module's name; a data type
    declares its constructors and record fields as the module's; a class heads its methods, an
    instance is headed as written and declares no name; a ``where`` binding is part of its function."""
    document = parse_text("src/Data/Path.hs", HASKELL)
    line_of = {line.strip(): number for number, line in enumerate(HASKELL.split("\n"), 1)}
    assert document.definitions[line_of["join :: Path -> Path -> Path"]] == ("Data.Path.join", "join")
    assert document.definitions[line_of["data Path = Path"]] == ("Data.Path.Path", "Path")
    assert document.definitions[line_of["{ pathParts :: [String]"]] == ("Data.Path.pathParts", "pathParts")
    assert document.definitions[line_of[", absolute :: Bool"]] == ("Data.Path.absolute",)
    assert "Data.Path.Circle" in document.definitions[line_of["data Shape = Circle Double | Square"]]
    assert document.definitions[line_of["show = unwords . pathParts"]] == ("show",)
    assert line_of["instance Show Path where"] not in document.definitions
    assert line_of["join a b = a { pathParts = pathParts a ++ pathParts b }"] not in document.definitions
    assert line_of["helper = id"] not in document.definitions
    headings = [(heading.line, heading.title) for heading in document.headings]
    assert headings.count((line_of["-- | Joins two paths."], "join")) == 1
    assert [title for _, title in headings].count("join") == 1  # not once more for its second equation
    # Haddock's comment documents the declaration after it, past a blank line and a plain comment
    assert (line_of["-- | Splits a path at its slashes."], "split") in headings
    paths = heading_paths("src/Data/Path.hs", HASKELL)
    assert paths["toPath"] == "src/Data/Path.hs > Pathlike > toPath"
    assert paths["show"] == "src/Data/Path.hs > instance Show Path > show"


def test_a_haddock_comment_of_what_is_above_it_stays_with_that_and_heads_nothing_after():
    """Haddock's ``-- ^`` documents what is written above it (a type's last constructor, a function):
    the definition after it starts at its own line or its own ``-- |`` comment, not at the ``-- ^``."""
    source = textwrap.dedent(
        """\
        module Options.Types where

        data OptReader a
          = OptReader [String]
          -- ^ option reader
          | CmdReader (Maybe String)
          -- ^ command reader

        instance Functor OptReader where
          fmap = undefined

        width :: Int
        width = 80
        -- ^ the help text's columns

        -- | The indentation.
        indent :: Int
        indent = 24
        """
    )
    document = parse_text("src/Options/Types.hs", source)
    line_of = {line.strip(): number for number, line in enumerate(source.split("\n"), 1)}
    headings = {(heading.title, heading.line) for heading in document.headings}
    assert ("instance Functor OptReader", line_of["instance Functor OptReader where"]) in headings
    assert ("indent", line_of["-- | The indentation."]) in headings
    assert not any(
        line in {line_of["-- ^ command reader"], line_of["-- ^ the help text's columns"]}
        for _, line in headings
    )


OCAML = """\
(** Paths, joined and split. *)

(** A path: its parts in order. *)
type t = { parts : string list; absolute : bool }

type shape = Circle of float | Square

(** Joins two paths. *)
let join a b =
  let parts = a.parts @ b.parts in
  { parts; absolute = a.absolute }

external unsafe_get : string -> int -> char = "%string_unsafe_get"

module Parser = struct
  let parse text = { parts = String.split_on_char '/' text; absolute = false }
end

module Make (X : sig val sep : string end) = struct
  let render path = String.concat X.sep path.parts
end
"""

OCAML_INTERFACE = """\
type t
(** A path. *)

val join : t -> t -> t
(** [join a b] is [b] under [a]. *)

val split : t -> string list
"""


def test_an_ocaml_module_s_values_are_headed_and_declared_qualified_by_the_file_s_module():
    """OCaml's let-bindings, externals, types, modules and functors are headed as the code nests
    them and declared qualified by the modules around them, the file's own first (``path.ml`` is
    ``Path``); a type declares its constructors and fields as its module's; a ``let ... in`` is a
    step of its function."""
    document = parse_text("src/path.ml", OCAML)
    line_of = {line.strip(): number for number, line in enumerate(OCAML.split("\n"), 1)}
    assert document.definitions[line_of["let join a b ="]] == ("Path.join", "join")
    assert document.definitions[
        line_of["let parse text = { parts = String.split_on_char '/' text; absolute = false }"]
    ] == (
        "Parser.parse",
        "Path.Parser.parse",
        "parse",
    )
    assert "Make.render" in document.definitions[line_of["let render path = String.concat X.sep path.parts"]]
    assert (
        "Path.unsafe_get"
        in document.definitions[line_of['external unsafe_get : string -> int -> char = "%string_unsafe_get"']]
    )
    assert {"Path.t", "Path.parts", "Path.absolute"} <= set(
        document.definitions[line_of["type t = { parts : string list; absolute : bool }"]]
    )
    assert "Path.Circle" in document.definitions[line_of["type shape = Circle of float | Square"]]
    assert line_of["let parts = a.parts @ b.parts in"] not in document.definitions
    headings = {(heading.title, heading.line) for heading in document.headings}
    assert ("join", line_of["(** Joins two paths. *)"]) in headings
    paths = heading_paths("src/path.ml", OCAML)
    assert paths["Make.render"] == "src/path.ml > Make > render"


def test_an_ocaml_interface_s_doc_comment_under_a_val_stays_with_it():
    """A ``.mli`` is read by the interface grammar: its ``val``s are headed and declared, and a doc
    comment written under one (odoc's way) stays with it, not with the ``val`` after."""
    document = parse_text("src/path.mli", OCAML_INTERFACE)
    line_of = {line.strip(): number for number, line in enumerate(OCAML_INTERFACE.split("\n"), 1)}
    assert document.definitions[line_of["val join : t -> t -> t"]] == ("Path.join", "join")
    headings = {(heading.title, heading.line) for heading in document.headings}
    assert ("join", line_of["val join : t -> t -> t"]) in headings
    assert ("split", line_of["val split : t -> string list"]) in headings
    assert ("t", line_of["type t"]) in headings


def test_an_ocaml_doc_comment_a_blank_line_sets_apart_is_the_signature_s_text_not_the_next_val_s():
    """OCaml attaches a doc comment to an item only with no blank line between them: odoc's section
    (``(** {2:posargs Positional arguments} ... *)``, then a blank line, then ``val pos``) is text of
    the signature it lies in, so ``pos`` is headed from its own line; a doc comment right above an
    item, and a plain comment a blank line above one, still head it."""
    interface = textwrap.dedent(
        """\
        module Arg : sig
          val flag : info -> bool t
          (** [flag i] is a flag. *)

          (** {2:posargs Positional arguments}

              Positional arguments indexing is zero-based. *)

          val pos : int -> 'a conv -> 'a -> info -> 'a t
          (** [pos n c v i] is the [n]th positional argument. *)

          (** The type for argument converters. *)
          type 'a conv

          (* Deprecated *)

          val converter : 'a conv -> string
        end
        """
    )
    document = parse_text("src/cmdliner.mli", interface)
    line_of = {line.strip(): number for number, line in enumerate(interface.split("\n"), 1)}
    headings = {(heading.title, heading.line) for heading in document.headings}
    assert ("pos", line_of["val pos : int -> 'a conv -> 'a -> info -> 'a t"]) in headings
    assert ("Arg", line_of["(** {2:posargs Positional arguments}"]) in headings
    assert ("conv", line_of["(** The type for argument converters. *)"]) in headings
    assert ("converter", line_of["(* Deprecated *)"]) in headings


def test_an_ocaml_doc_comment_under_a_type_whose_last_line_ends_in_a_comment_documents_that_type():
    """A doc comment right under an item documents it, also where the item's last line ends in a
    comment of its own (a constructor's ``(** *)``): the type's doc stays under the type, and the
    ``type`` after it starts its own heading."""
    interface = textwrap.dedent(
        """\
        type arg =
        | O of string list (* options *)
        | P of string list (** *)
        (** Unconverted argument data as found on the command line. *)

        type t
        """
    )
    document = parse_text("src/cline.mli", interface)
    line_of = {line.strip(): number for number, line in enumerate(interface.split("\n"), 1)}
    assert heading_paths("src/cline.mli", interface)["arg"] == "src/cline.mli > arg"
    under = [
        heading.title
        for heading in document.headings
        if heading.line <= line_of["(** Unconverted argument data as found on the command line. *)"]
    ]
    assert under[-1] == "arg"
    assert ("t", line_of["type t"]) in {(heading.title, heading.line) for heading in document.headings}


def test_an_ocaml_operator_s_val_and_external_are_headed_and_declared_by_their_brackets():
    """An operator's ``val`` in an interface, and its ``external``, name it in brackets as its ``let``
    does: each heads its own lines under its module and declares its name, so its doc comment is not
    read as the module's code after the ``val`` before it."""
    interface = textwrap.dedent(
        """\
        module Term : sig
          val map : ('a -> 'b) -> 'a t -> 'b t
          (** [map f t] maps [t]. *)

          val ( $ ) : ('a -> 'b) t -> 'a t -> 'b t
          (** [f $ v] applies [f] to [v]. *)

          module Syntax : sig
            val ( let+ ) : 'a t -> ('a -> 'b) -> 'b t
          end
        end

        external ( +! ) : int -> int -> int = "%addint"
        """
    )
    document = parse_text("src/cmdliner.mli", interface)
    line_of = {line.strip(): number for number, line in enumerate(interface.split("\n"), 1)}
    assert document.definitions[line_of["val ( $ ) : ('a -> 'b) t -> 'a t -> 'b t"]] == ("( $ )",)
    assert document.definitions[line_of['external ( +! ) : int -> int -> int = "%addint"']] == ("( +! )",)
    paths = heading_paths("src/cmdliner.mli", interface)
    assert paths["( $ )"] == "src/cmdliner.mli > Term > ( $ )"
    assert paths["( let+ )"] == "src/cmdliner.mli > Term > Syntax > ( let+ )"
    assert paths["( +! )"] == "src/cmdliner.mli > ( +! )"


def test_a_constructor_s_parameter_that_declares_a_property_is_its_class_s_member():
    """PHP's promoted parameters, Kotlin's ``val``/``var`` in a primary constructor, a C# record's
    positional parameters and TypeScript's parameter properties declare properties of the class,
    known by it; a plain parameter declares nothing."""
    php = "<?php\nclass Mailer {\n  public function __construct(private string $host, $plain = 1) {}\n}\n"
    declared = parse_text("src/Mailer.php", php).definitions[3]
    assert declared == ("Mailer::$host", "Mailer::__construct", "__construct")
    kotlin = "data class User(val name: String, var age: Int, plain: Int)\n"
    assert parse_text("src/User.kt", kotlin).definitions[1] == ("User", "User.age", "User.name")
    csharp = "public record Point(int X, int Y);\npublic class Box(int side) { void Grow(int by) {} }\n"
    assert parse_text("src/Point.cs", csharp).definitions == {
        1: ("Point", "Point.X", "Point.Y"),  # a record's positional parameters are its properties
        2: ("Box", "Box.Grow", "Grow"),  # a class's primary constructor only captures its own
    }
    typescript = "class Client {\n  constructor(private readonly host: string, port: number) {}\n}\n"
    assert parse_text("src/client.ts", typescript).definitions[2] == (
        "Client.constructor",
        "Client.host",
        "constructor",
    )


def test_a_namespace_heads_its_code_but_declares_no_name():
    file_scoped = (
        "namespace FluentValidation.Validators;\n\nusing System;\n\npublic class NotNullValidator {\n}\n"
    )
    document = parse_text("src/NotNullValidator.cs", file_scoped)
    assert [heading.title for heading in document.headings] == ["src/NotNullValidator.cs", "NotNullValidator"]
    assert document.definitions == {5: ("NotNullValidator",)}
    block = "namespace Polly.Retry {\n    public class RetryPolicy {\n    }\n}\n"
    assert heading_paths("src/RetryPolicy.cs", block) == {
        "RetryPolicy": "src/RetryPolicy.cs > Polly.Retry > RetryPolicy",
        "Polly.Retry.RetryPolicy": "src/RetryPolicy.cs > Polly.Retry > RetryPolicy",
    }
    cpp = parse_text("src/store.cpp", "namespace store {\nint size() { return 0; }\n}\n")
    assert cpp.definitions == {2: ("size", "store::size")}
    php = parse_text("src/Handler.php", "<?php\nnamespace Monolog\\Handler {\n    class Handler {}\n}\n")
    assert [names for names in php.definitions.values()] == [("Handler",)]


NESTED_BUILDER = """\
package com.squareup.kotlinpoet

public class TypeAliasSpec private constructor(builder: Builder) {
  public val name: String = builder.name

  public class Builder
  internal constructor(internal val name: String) {
    public fun build(): TypeAliasSpec = TypeAliasSpec(this)
  }
}
"""


def test_a_kotlin_class_whose_constructor_starts_on_the_next_line_is_read_by_its_grammar():
    document = parse_text("src/TypeAliasSpec.kt", NESTED_BUILDER)
    assert heading_paths("src/TypeAliasSpec.kt", NESTED_BUILDER)["TypeAliasSpec.Builder.build"] == (
        "src/TypeAliasSpec.kt > TypeAliasSpec > Builder > build"
    )
    assert document.lines == NESTED_BUILDER.splitlines()  # the file's own lines, every number kept
    reread = GRAMMARS["kotlin"].reread
    assert reread is not None
    assert reread(NESTED_BUILDER.splitlines())[5:7] == [
        "  public class Builder /*",
        "*/  internal constructor(internal val name: String) {",
    ]


@pytest.mark.parametrize(
    ("path", "make"),
    [
        ("lib/a.rb", lambda n: "class A\n" + "".join(f"  # @!method m{i}(x)\n" for i in range(n)) + "end\n"),
        (
            "lua/m.lua",
            lambda n: "local M = {}\n" + "".join(f"M.f{i} = {i}\n" for i in range(n)) + "return M\n",
        ),
        ("m.py", lambda n: "class A:\n" + "".join(f"    a{i}: int = {i}\n" for i in range(n))),
        ("e.ts", lambda n: "enum E {\n" + "".join(f"  V{i},\n" for i in range(n)) + "}\n"),
        ("chain.ts", lambda n: "x = " + "a.b" * n + ";\n"),  # a property in a chain n deep
        (
            "c.ts",
            lambda n: (
                "class C {\n" + "".join(f"  m(a: {i}): void;\n  m{i}() {{}}\n" for i in range(n)) + "}\n"
            ),
        ),
        (
            "m.ex",
            lambda n: (
                "defmodule M do\n"
                + "".join(f"  @impl true\n  def f(x{i}), do: {i}\n" for i in range(n))
                + "end\n"
            ),
        ),
    ],
)
def test_reading_a_class_s_directives_and_a_module_s_values_is_linear_in_their_number(path, make):
    def seconds(count: int) -> float:
        text = make(count)
        return fastest_seconds(lambda: parse_text(path, text), repeats=3)

    assert grows_linearly(seconds, 2_000, 16_000, 24)  # quadratic would be 64


@pytest.mark.slow
def test_reading_kotlin_constructors_again_is_linear_in_the_file_s_size():
    reread = GRAMMARS["kotlin"].reread
    assert reread is not None

    def seconds(count: int) -> float:
        lines = NESTED_BUILDER.splitlines() * count
        return fastest_seconds(lambda: reread(lines), repeats=3)

    assert grows_linearly(seconds, 2_000, 16_000, 24)


EXPORTED_HEADER = """\
#ifndef FMT_FORMAT_H_
#define FMT_FORMAT_H_
#define FMT_API __attribute__((visibility("default")))

FMT_BEGIN_NAMESPACE

/// An error reported by a formatting function.
class FMT_API format_error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

template <typename T, typename Allocator = std::allocator<T>>
class basic_memory_buffer : public buffer<T> {
 private:
  FMT_NO_UNIQUE_ADDRESS Allocator alloc_;

  FMT_CONSTEXPR20 void deallocate() {
    if (data_ != store_) alloc_.deallocate(data_, capacity_);
  }
};

/// Returns the number of characters `fmt` formats to.
FMT_NODISCARD FMT_INLINE auto formatted_size(string_view fmt) -> size_t {
  return count(fmt);
}

FMT_END_NAMESPACE
#endif
"""


def test_a_header_s_export_macros_are_read_as_the_preprocessor_expands_them():
    document = parse_text("include/fmt/format.h", EXPORTED_HEADER)
    titles = {heading.line: heading.title for heading in document.headings}
    # a class exported by a macro is the class, not its base; a doc comment opens its heading
    assert titles[_source_line(EXPORTED_HEADER, "/// An error")] == "format_error"
    assert "std::runtime_error" not in titles.values()
    assert titles[_source_line(EXPORTED_HEADER, "/// Returns")] == "formatted_size"
    assert document.definitions[_source_line(EXPORTED_HEADER, "class FMT_API")] == ("format_error",)
    assert "deallocate" in titles.values()


@pytest.mark.parametrize(
    ("written", "read"),
    [
        ("FMT_API void vprint(FILE* f);", "void vprint(FILE* f);"),
        ("  static FMT_CONSTEXPR20 void grow(size_t size) {", "  static void grow(size_t size) {"),
        ("class SPDLOG_API logger {", "class logger {"),
        ("uLong ZEXPORT adler32(uLong adler) {", "uLong adler32(uLong adler) {"),
        ("ZEXTERN int ZEXPORT deflate OF((z_streamp strm));", "int deflate OF((z_streamp strm));"),
        ("LUA_API int (lua_gettop) (lua_State *L);", "int (lua_gettop) (lua_State *L);"),
        ("BOOL WINAPI DllMain(HINSTANCE instance) {", "BOOL DllMain(HINSTANCE instance) {"),
        # a type in capitals is its declaration's only type
        (
            "YY_BUFFER_STATE yy_create_buffer (FILE *file) {",
            "YY_BUFFER_STATE yy_create_buffer (FILE *file) {",
        ),
        ("    DWORD count = 0;", "    DWORD count = 0;"),
        ("struct FOO_T *foo_new(void) {", "struct FOO_T *foo_new(void) {"),
        ("  const BUF_TYPE buffer[SIZE];", "  const BUF_TYPE buffer[SIZE];"),
        # statements and the preprocessor's lines are no declarations
        ("    return NULL;", "    return NULL;"),
        ("    case LUA_TNIL: break;", "    case LUA_TNIL: break;"),
        ("    FOO (x);", "    FOO (x);"),
        ("#define FMT_API FMT_VISIBILITY(default)", "#define FMT_API FMT_VISIBILITY(default)"),
        # a constructor needs no type; a pointer's parenthesized name; a macro after the parameters
        ("SPDLOG_INLINE logger::logger(std::string name)", "logger::logger(std::string name)"),
        ("SPDLOG_INLINE logger::~logger() {", "logger::~logger() {"),
        ("LUALIB_API lua_State *(luaL_newstate) (void) {", "lua_State *(luaL_newstate) (void) {"),
        ("  void swap(logger &other) SPDLOG_NOEXCEPT {", "  void swap(logger &other) {"),
        ("  auto size() const FMT_NOEXCEPT -> size_t {", "  auto size() const -> size_t {"),
        ("    SPDLOG_TRY {", "    {"),
        ("LUA_API lua_Number (lua_tonumberx) (lua_State *L);", "lua_Number (lua_tonumberx) (lua_State *L);"),
        (
            "  explicit FMT_CONSTEXPR basic_string_view(const Char* s)",
            "  explicit basic_string_view(const Char* s)",
        ),
        # template arguments, casts, conditions and words the compiler reserves are no macros' places
        ("std::map<KEY_T, VAL_T> table;", "std::map<KEY_T, VAL_T> table;"),
        ("template <typename T, size_t N = DEFAULT_N>", "template <typename T, size_t N = DEFAULT_N>"),
        ("  x = (int) MAX_VALUE;", "  x = (int) MAX_VALUE;"),
        ("  return c ? (size_t) SIZE_MAX : 0;", "  return c ? (size_t) SIZE_MAX : 0;"),
        ("  if (failed) FAIL;", "  if (failed) FAIL;"),
        ("BOOL __stdcall DllMain(HINSTANCE instance) {", "BOOL __stdcall DllMain(HINSTANCE instance) {"),
    ],
)
def test_a_macro_in_a_declaration_is_left_out_and_a_type_in_capitals_stays(written, read):
    assert without_macros([written]) == [read]


def test_a_macro_alone_on_its_line_is_left_out_unless_a_function_s_name_or_body_follows():
    lines = [
        "G_BEGIN_DECLS", "", "GLIB_AVAILABLE_IN_ALL", "GType g_object_get_type (void);", "static VALUE",
        "VALUE", "rb_ary_push (VALUE ary)", "#define GLIB_AVAILABLE_IN_ALL \\", "  EXTERN", "G_END_DECLS",
        "  JSON_HEDLEY_NON_NULL(1) // the pointer", "  static int parse(const char *s);",
        "TEST(Parser, Empty)", "{", "  ASSERT_TRUE(Matches(x))", "      << length;",
        "URI(const std::string& s)", "    : base(s) {}",
    ]  # fmt: skip
    # an empty comment in its place keeps a comment above it with the declaration below
    assert without_macros(lines) == [
        "//", "", "//", *lines[3:9], "//", "  // // the pointer", *lines[11:],
    ]  # fmt: skip


def test_a_macro_before_a_constructor_in_its_class_is_left_out():
    lines = ["class FMT_API text_style {", " public:", "  FMT_CONSTEXPR text_style(emphasis em) noexcept"]
    assert without_macros(lines)[2] == "  text_style(emphasis em) noexcept"


@pytest.mark.slow
@pytest.mark.parametrize(
    "lines_of",
    [
        lambda count: ["FMT_API " * count + "x;"],  # a macro after a macro, each left out
        lambda count: ["x<y> " * count + "z", "a " * count],  # heads with no end, backtracked
        lambda count: ["A_B"] * count,  # words alone
        lambda count: ["G_BEGIN_DECLS"] + [""] * count,  # a word alone, and blank lines to the next
        lambda count: ["FOO(" + "a) /* */x" * count],  # a call alone but for what follows its ``)``
    ],
)
def test_reading_without_macros_is_linear_in_the_lines(lines_of):
    def seconds(count: int) -> float:
        lines = lines_of(count)
        return fastest_seconds(lambda: without_macros(lines), repeats=3)

    assert grows_linearly(seconds, 10_000, 80_000, 24)  # quadratic would be 64


@pytest.mark.heavy
def test_no_grammar_is_imported_until_a_file_of_its_language_is_read():
    probe = (
        "import sys\nfrom indexer.formats import parse_text\n"
        "parse_text('notes.md', '# Title\\n\\ntext\\n')\n"
        "before = sorted(m for m in sys.modules if m.startswith('tree_sitter') and '.' not in m)\n"
        "parse_text('tool.go', 'package main\\n\\nfunc main() {}\\n')\n"
        "after = sorted(m for m in sys.modules if m.startswith('tree_sitter') and '.' not in m)\n"
        "print(before, after)"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[] ['tree_sitter', 'tree_sitter_go']"


def code_file(path: Path, functions: int = 40) -> Path:
    """A Python module of ``functions`` functions of various lengths, each of a few statements."""
    parts = ['"""Helpers."""\n']
    for number in range(functions):
        body = "\n".join(
            f"    value_{step} = combine(value, {number}, {step}, weight_{number % 7})"
            for step in range(2 + (number * 5) % 9)
        )
        parts.append(f"\n# Helper number {number}.\ndef helper_{number}(value):\n{body}\n    return value\n")
    return write(path, "".join(parts))


def build(index_path: Path, folder: Path, backend: HashBackend):
    with Index.open(index_path) as index:
        return index.build(folder, backend=backend, warn=lambda message: None)


def test_one_line_edit_inside_a_function_reembeds_only_that_functions_chunks(tmp_path):
    folder = tmp_path / "repo"
    path = code_file(folder / "pkg" / "helpers.py")
    index_path = tmp_path / "index.db"
    first = build(index_path, folder, HashBackend())
    assert first.chunks_embedded >= 20
    lines = path.read_text().split("\n")
    edited = lines.index("def helper_21(value):") + 2
    lines[edited] = lines[edited].replace("combine", "merge_values")
    path.write_text("\n".join(lines))
    counting = HashBackend()
    report = build(index_path, folder, counting)
    assert 1 <= report.chunks_embedded <= 2
    assert all("def helper_21" in text or "merge_values" in text for text in counting.embedded)


def test_adding_a_function_reembeds_at_most_the_neighbours_it_joins(tmp_path):
    folder = tmp_path / "repo"
    path = code_file(folder / "pkg" / "helpers.py")
    index_path = tmp_path / "index.db"
    build(index_path, folder, HashBackend())
    text = path.read_text()
    marker = "\n# Helper number 18.\n"
    added = "\n# A new helper.\ndef added_helper(value):\n    return value * 2\n"
    path.write_text(text.replace(marker, added + marker))
    counting = HashBackend()
    report = build(index_path, folder, counting)
    assert 1 <= report.chunks_embedded <= 3
    assert any("added_helper" in text for text in counting.embedded)
    with Index.open(index_path) as index:
        hits = index.search("added_helper", k=1, mode="keyword", min_score=0)
    assert hits[0].heading.startswith("pkg/helpers.py")


def test_a_one_name_question_finds_the_definition_before_the_pages_and_tests_that_use_the_name(tmp_path):
    folder = tmp_path / "repo"
    module = "def other():\n    return 0\n\n\ndef find_name(path):\n    return path\n"
    write(folder / "pkg" / "names.py", module)
    uses = "\n".join(f"assert find_name('a/{number}') == 'a/{number}'" for number in range(12))
    write(folder / "tests" / "test_names.py", f"def test_it():\n{textwrap.indent(uses, '    ')}\n")
    write(folder / "docs" / "guide.md", "# Guide\n\nCall find_name, then find_name again: find_name.\n")
    build(tmp_path / "index.db", folder, HashBackend())
    with Index.open(tmp_path / "index.db") as index:
        hits = index.search("find_name", k=3, mode="keyword", min_score=0)
    assert [hit.path for hit in hits][:1] == ["pkg/names.py"]  # the test module uses the name 12 times


@pytest.mark.parametrize(
    ("path", "source", "titles"),
    [
        (
            "tests/test_file_logging.cpp",
            """
            TEST_CASE("simple_file_logger", "[simple_logger]") {
                REQUIRE(1 == 1);
            }

            TEST_CASE_METHOD(Fixture, "flush on error", "[flush]") {
                REQUIRE(1 == 1);
            }
            """,
            ["simple_file_logger", "flush on error"],
        ),
        (
            "test/parser_unittest.cc",
            """
            namespace parsing {
            TEST(Parser, SkipsBlanks) {
              EXPECT_EQ(1, 1);
            }

            TEST_F(ParserTest, ReadsNumbers) {
              EXPECT_EQ(1, 1);
            }
            }  // namespace parsing
            """,
            ["parsing", "Parser.SkipsBlanks", "ParserTest.ReadsNumbers"],
        ),
        (  # an anonymous namespace heads nothing: its tests go under the file, or the namespace around
            "test/parser_unittest.cc",
            """
            namespace {
            TEST_F(ParserTest, ReadsNumbers) {
              EXPECT_EQ(1, 1);
            }
            }  // namespace

            namespace parsing {
            namespace {
            TEST_P(ParserParamTest, Works) {
              EXPECT_TRUE(true);
            }
            }  // namespace
            }  // namespace parsing
            """,
            ["ParserTest.ReadsNumbers", "parsing", "ParserParamTest.Works"],
        ),
        ("tests/test_sum.c", "BOOST_AUTO_TEST_CASE(sums_two)\n{\n    BOOST_CHECK(1);\n}\n", ["sums_two"]),
    ],
)
def test_a_c_or_cplusplus_test_a_framework_s_macro_declares_is_headed_by_its_name(path, source, titles):
    document = parse_text(path, textwrap.dedent(source))
    assert [heading.title for heading in document.headings] == [path, *titles]
    assert not document.definitions  # a test's name describes it: no name a question asks for


def test_a_googletest_test_in_an_anonymous_namespace_is_a_test_in_a_file_not_named_as_tests():
    source = """
        static int helper() { return 1; }

        namespace {
        TEST(Parser, SkipsBlanks) {
          EXPECT_EQ(helper(), 1);
        }
        }  // namespace
        """
    assert parse_text("src/parser_checks.cc", textwrap.dedent(source)).tests == [(5, 7)]


def lines_stored_as_tests(path: str, source: str) -> set[int]:
    """The lines of the file at ``path`` that lie in chunks stored as tests."""
    chunks = chunk_document(
        parse_text(path, textwrap.dedent(source)), count_words, ChunkSettings.for_limit(14)
    )
    return {line for chunk in chunks if chunk.is_test for line in range(chunk.start_line, chunk.end_line + 1)}


@pytest.mark.parametrize(
    ("path", "source", "tests", "code"),
    [
        ("src/tokenizer_test.go", "package fzf\n\nfunc helper() int {\n\treturn 1\n}\n", {3, 4, 5}, set()),
        ("src/tokenizer.go", "package fzf\n\nfunc Tokenize() int {\n\treturn 1\n}\n", set(), {3, 4, 5}),
        ("tests/test_tokens.py", "def check(value):\n    return value\n", {1, 2}, set()),
        (
            "tests/helpers.py",
            "def check(value):\n    return value\n",
            set(),
            {1, 2},
        ),  # a folder's name says nothing
        ("test/retry.ts", "export const wait = (ms: number) => ms;\n", {1}, set()),  # Node's, mocha's, AVA's
        ("source/utils/retry.ts", "export const wait = (ms: number) => ms;\n", set(), {1}),
        ("contest/entry.js", "function enter() {\n  return 1;\n}\n", set(), {1, 2, 3}),
        # Cargo's integration tests, helpers and all; a #[cfg(test)] module's own file; a bench is none
        ("rayon-core/tests/scope_join.rs", "fn pseudo_join(a: u32) -> u32 {\n    a\n}\n", {1, 2, 3}, set()),
        ("src/commands/test.rs", "pub fn exec(args: &Args) {\n}\n", set(), {1, 2}),  # `cargo test`'s own
        ("src/iter/tests.rs", "fn seeded() -> u64 {\n    1\n}\n", {1, 2, 3}, set()),
        ("benches/sort.rs", "fn sort_big(v: &mut [u32]) {\n    v.sort();\n}\n", set(), {1, 2, 3}),
        (
            "pkg/checks.py",
            """
            import unittest

            def tokenize(text):
                return text.split()

            class TokenTests(unittest.TestCase):
                def test_split(self):
                    self.assertEqual(tokenize("a b"), ["a", "b"])
            """,
            {7, 8, 9},
            {4, 5},
        ),
        (
            "src/walk.rs",
            """
            pub fn walk(depth: usize) -> usize {
                depth + 1
            }

            #[cfg(test)]
            mod tests {
                use super::*;

                #[test]
                fn walks_one_level() {
                    assert_eq!(walk(0), 1);
                }
            }
            """,
            set(range(6, 15)),
            {2, 3, 4},
        ),
        (
            "src/Walker.java",
            """
            class Walker {
                int walk(int depth) {
                    return depth + 1;
                }
            }

            class WalkerTest {
                @Test
                void walksOneLevel() {
                    assertEquals(1, new Walker().walk(0));
                }
            }
            """,
            set(range(8, 14)),
            {2, 3, 4, 5, 6},
        ),
        (  # a file of tests alone: its usings serve only them
            "Tests/NotNullValidatorTests.cs",
            """
            using System;
            using Xunit;

            namespace FluentValidation.Tests;

            public class NotNullValidatorTests {
                [Fact]
                public void NullIsNotValid() {
                    Assert.False(new NotNullValidator().IsValid(null));
                }
            }
            """,
            set(range(1, 13)),
            set(),
        ),
        (
            "src/jvmTest/kotlin/FileSpecTest.kt",
            """
            package com.squareup.kotlinpoet

            import kotlin.test.Test

            class FileSpecTest {
              @Test fun emptyFile() {
                assertEquals("", FileSpec.builder("", "Empty").build().toString())
              }
            }
            """,
            set(range(1, 10)),
            set(),
        ),
        (  # a helper beside the test class is code: the file is not tests alone
            "Tests/ServiceCollectionTests.cs",
            """
            using Xunit;

            namespace FluentValidation.Tests {
                public class ServiceCollectionTests {
                    [Fact]
                    public void RegistersValidators() {
                        Assert.True(true);
                    }
                }

                public class PersonValidator {
                    public PersonValidator() { }
                }
            }
            """,
            set(range(5, 10)),
            {2, 12, 13, 14},
        ),
        (  # minitest/spec's blocks declare the tests whatever the file is called (rack's spec_*.rb)
            "test/spec_lock.rb",
            """
            require_relative 'helper'

            describe Rack::Lock do
              def lock_app(app)
                Rack::Lint.new(Rack::Lock.new(app))
              end

              it "unlocks if the app raises" do
                lock_app(nil).call({}).must_be_nil
              end
            end
            """,
            set(range(1, 13)),
            set(),
        ),
        (  # minitest's test class, a helper class beside it
            "test/task_checks.rb",
            """
            class FakeShell
              def run(command)
                command
              end
            end

            class TestTask < Minitest::Test
              def test_runs_the_command
                assert_equal "ls", FakeShell.new.run("ls")
              end
            end
            """,
            set(range(8, 13)),
            {2, 3, 4, 5, 6},
        ),
        (  # Catch2's test cases in a file not named as tests, a helper beside them
            "src/queue_checks.cpp",
            """
            #include "queue.h"

            static int helper() { return 1; }

            TEST_CASE("enqueue_nowait", "[mpmc]")
            {
                REQUIRE(helper() == 1);
            }
            """,
            set(range(6, 10)),
            {2, 4},
        ),
        ("tests/test_queue.cpp", "static int helper() { return 1; }\n", {1}, set()),  # by its name
        ("tests/utils.h", "int count_lines(const char *name);\n", {1}, set()),  # its folder, as JavaScript's
        ("src/queue.cpp", "int count_lines(const char *name) { return 0; }\n", set(), {1}),
        (  # XCTest's test class, in a file not named as tests, a helper beside it
            "Sources/Checks/ParserChecks.swift",
            """
            import XCTest

            struct Fixture {
                let name = "a"
            }

            final class ParserTests: XCTestCase {
                func testParsesAName() {
                    XCTAssertEqual(Fixture().name, "a")
                }
            }
            """,
            set(range(8, 13)),
            {4, 5, 6},
        ),
        (  # swift-testing's @Test, and the suite holding it
            "Sources/Checks/Parsing.swift",
            """
            func tokenize(_ line: String) -> [Substring] {
                line.split(separator: " ")
            }

            struct ParsingChecks {
                @Test("splits at spaces")
                func splits() {
                    #expect(tokenize("a b").count == 2)
                }
            }
            """,
            set(range(6, 12)),
            {2, 3, 4},
        ),
        ("Tests/ParserTests/Fixtures.swift", 'let names = ["a", "b"]\n', {1}, set()),  # SwiftPM's
        (  # busted's describe and it, in a file not named as specs, a helper beside them
            "lua/paths/checks.lua",
            """
            local function join(a, b)
              return a .. "/" .. b
            end

            describe("join", function()
              it("puts a slash between", function()
                assert.are.same("a/b", join("a", "b"))
              end)
            end)
            """,
            set(range(6, 11)),
            {2, 3, 4},
        ),
        ("lua/paths/path_spec.lua", "local eq = assert.are.same\n", {1}, set()),  # busted's
        (  # ExUnit's case, in a file not named as tests, a module beside it
            "lib/my_app/checks.ex",
            """
            defmodule MyApp.Join do
              def join(a, b), do: a <> "/" <> b
            end

            defmodule MyApp.JoinTest do
              use ExUnit.Case, async: true

              describe "join/2" do
                test "puts a slash between" do
                  assert MyApp.Join.join("a", "b") == "a/b"
                end
              end
            end
            """,
            set(range(6, 15)),
            {2, 3, 4},
        ),
        ("test/support/fixtures.ex", "defmodule Fixtures do\nend\n", {1, 2}, set()),  # Mix's test/
        (  # hspec's spec and tasty's tree, in a file not named as tests, a function beside them
            "src/Data/Checks.hs",
            """
            double :: Int -> Int
            double x = x * 2

            spec :: Spec
            spec = describe "double" $ do
              it "doubles" $ double 2 `shouldBe` 4

            tests :: TestTree
            tests = testGroup "double" [testCase "doubles" $ double 2 @?= 4]
            """,
            set(range(5, 11)),
            {2, 3},
        ),
        ("test/Data/PathSpec.hs", "module Data.PathSpec where\n", {1}, set()),  # hspec-discover's
        (  # ppx_inline_test's and ppx_expect's tests, Alcotest's cases, in a library's file
            "src/path.ml",
            """
            let double x = x * 2

            let%test "doubles" = double 2 = 4

            let%expect_test _ =
              print_int (double 2);
              [%expect {| 4 |}]

            let cases = [ Alcotest.test_case "doubles" `Quick check ]
            """,
            {4, 6, 7, 8, 10},
            {2},
        ),
        (  # an inline test in a module: beside the code it tests, which is no test for it
            "src/counter.ml",
            """
            module Counter = struct
              let incr x = x + 1

              let%test "incr" = incr 1 = 2
            end
            """,
            set(),  # the test shares the module's one chunk
            {2, 3, 6},
        ),
        (  # a Zig file's test block beside the code it tests: the file's re-exports are no tests
            "src/main.zig",
            """
            const std = @import("std");
            pub const Loop = @import("loop.zig").Loop;

            test {
                _ = Loop;
            }
            """,
            set(),
            {2, 3},
        ),
        ("tests/test_path.ml", "let check () = ()\n", {1}, set()),  # dune's test folder
        (  # MUnit's suite, in a file no folder marks, a helper beside it
            "tests/shared/src/main/scala/munit/Checks.scala",
            """
            package munit

            object Fixtures {
              val names = List("a", "b")
            }

            class NamesSuite extends munit.FunSuite {
              test("two names") {
                assertEquals(Fixtures.names.size, 2)
              }
            }
            """,
            set(range(8, 13)),
            {4, 5, 6},
        ),
        (  # JUnit's @Test on a Scala method, and the class holding it
            "core/src/main/scala/Walker.scala",
            """
            class Walker {
              def walk(depth: Int): Int = depth + 1
            }

            class WalkerChecks {
              @Test def walksOneLevel(): Unit = {
                assert(new Walker().walk(0) == 1)
              }
            }
            """,
            set(range(6, 11)),
            {2, 3, 4},
        ),
        (
            "core/src/test/scala/Fixtures.scala",
            "object Fixtures {\n  val names = List(1)\n}\n",
            {1, 2, 3},
            set(),
        ),
        (  # Ruby's `it` block parameter, and a method called test given no block
            "lib/runner.rb",
            """
            class Runner
              def run(tasks)
                tasks.each { it.call }
                test "Gemfile"
              end
            end
            """,
            set(),
            set(range(2, 8)),
        ),
        (  # a library's own `describe`: in a class, or called on a receiver, it declares no test
            "lib/api.rb",
            """
            class Api
              describe "list users" do
                get "/users"
              end

              def helper
                Schema.describe :user do
                  field :name
                end
              end
            end
            """,
            set(),
            set(range(2, 13)),
        ),
    ],
)
def test_tests_are_what_the_language_or_its_test_tool_declares(path, source, tests, code):
    found = lines_stored_as_tests(path, source)
    assert tests <= found, found
    assert not code & found, found


def test_a_worded_question_finds_the_function_before_the_test_that_calls_it(tmp_path):
    folder = tmp_path / "repo"
    write(
        folder / "src" / "tokenizer.go",
        "package fzf\n\n// Tokenize splits a line into fields by a delimiter.\n"
        "func Tokenize(line string, delimiter string) []string {\n"
        "\treturn strings.Split(line, delimiter)\n}\n",
    )
    cases = "\n".join(
        f'\tcheck(t, Tokenize("a{n} b", " "), "split the line into fields by the delimiter")'
        for n in range(8)
    )
    write(
        folder / "src" / "tokenizer_test.go",
        f"package fzf\n\nfunc TestTokenize(t *testing.T) {{\n{cases}\n}}\n",
    )
    build(tmp_path / "index.db", folder, HashBackend())
    with Index.open(tmp_path / "index.db") as index:
        asked = index.search("split a line into fields by a delimiter", k=2, mode="keyword", min_score=0)
        tests = index.search(
            "tests of splitting a line into fields by a delimiter", k=2, mode="keyword", min_score=0
        )
    assert [hit.path for hit in asked] == ["src/tokenizer.go", "src/tokenizer_test.go"]
    assert tests[0].path == "src/tokenizer_test.go"  # asked for tests, the evidence decides


DART = """\
import 'package:flutter/widgets.dart';

/// The most taps counted.
const int maxTaps = 10;

/// A counter shown on screen.
class Counter extends StatelessWidget {
  /// Creates a counter.
  const Counter({super.key, this.start = 0});

  /// A counter read from JSON.
  Counter.fromJson(Map<String, Object?> json) : start = json['start'] as int;

  final int start;

  int get doubled => start * 2;

  @override
  Widget build(BuildContext context) {
    int twice(int x) => x * 2;
    return Text('${twice(start)}');
  }
}

mixin Logging {
  void log(String message) => print(message);
}

extension on int {
  bool get isSmall => this < 10;
}

enum Mode { light, dark }
"""


def test_dart_members_are_headed_and_declared_under_their_class():
    """A Dart class's constructors (``Counter.fromJson``, the unnamed one as Dart tears it off:
    ``Counter.new``), getters, fields and methods are declared qualified by it; a method's body,
    which the grammar sets beside its signature, holds its local functions; a doc comment and an
    annotation start a member's heading; an extension without a name adds to the type it is on."""
    document = parse_text("lib/counter.dart", DART)
    line_of = {line.strip(): number for number, line in enumerate(DART.split("\n"), 1)}
    definitions = document.definitions
    assert definitions[line_of["const int maxTaps = 10;"]] == ("maxTaps",)
    assert definitions[line_of["const Counter({super.key, this.start = 0});"]] == ("Counter.new", "new")
    assert (
        "Counter.fromJson"
        in definitions[line_of["Counter.fromJson(Map<String, Object?> json) : start = json['start'] as int;"]]
    )
    assert definitions[line_of["final int start;"]] == ("Counter.start",)
    assert "Counter.doubled" in definitions[line_of["int get doubled => start * 2;"]]
    assert "Counter.build" in definitions[line_of["Widget build(BuildContext context) {"]]
    assert "Logging.log" in definitions[line_of["void log(String message) => print(message);"]]
    assert "int.isSmall" in definitions[line_of["bool get isSmall => this < 10;"]]
    assert "Mode.dark" in definitions[line_of["enum Mode { light, dark }"]]
    assert not any("twice" in names for names in definitions.values())
    headings = {(heading.title, heading.line) for heading in document.headings}
    assert ("build", line_of["@override"]) in headings
    assert ("fromJson", line_of["/// A counter read from JSON."]) in headings
    paths = heading_paths("lib/counter.dart", DART)
    assert paths["Counter.build"] == "lib/counter.dart > Counter > build"
    assert paths["Logging.log"] == "lib/counter.dart > Logging > log"


DART_TESTS = """\
import 'package:flutter_test/flutter_test.dart';

void main() {
  group('Counter', () {
    test('starts at zero', () {
      expect(Counter().value, 0);
    });
  });

  testWidgets('shows its value', (tester) async {
    await tester.pumpWidget(const Counter());
  });

  final helper = Helper();
}
"""


def test_dart_tests_are_the_calls_of_package_test_in_main_and_the_test_folder():
    """package:test's ``group`` and ``test`` and flutter_test's ``testWidgets`` in a file's ``main``
    are tests wherever the file is; under ``test/`` or named ``*_test.dart``, all of it is."""
    document = parse_text("tool/smoke.dart", DART_TESTS)
    assert document.tests == [(4, 8), (10, 12)]
    assert parse_text("test/counter.dart", DART_TESTS).tests == [(1, 15)]
    assert parse_text("lib/counter_test.dart", DART_TESTS).tests == [(1, 15)]


ZIG = """\
//! Lists that grow.

const std = @import("std");
const Allocator = std.mem.Allocator;

/// The most items a list holds.
pub const max_items = 1024;

/// A list of items of one type.
pub fn ArrayList(comptime T: type) type {
    return struct {
        items: []T,

        /// Adds an item at the end.
        pub fn append(self: *@This(), item: T) !void {
            _ = self;
            _ = item;
        }
    };
}

pub const Point = struct {
    x: i32 = 0,
    y: i32 = 0,

    pub fn len(self: Point) i32 {
        return self.x + self.y;
    }

    test "len adds" {
        try std.testing.expectEqual(3, (Point{ .x = 1, .y = 2 }).len());
    }
};

const Color = enum { red, green };

test "an empty list has no items" {
    try std.testing.expect(true);
}
"""


def test_zig_containers_qualify_their_members_and_tests_are_headed_by_their_names():
    """A constant bound to a struct or enum, and a function that returns a struct, hold members
    qualified by them (``ArrayList.append``, ``Point.x``); ``///`` stays with what it documents,
    ``//!`` with the file; a test is headed by its name, marked, and declares nothing; a top-level
    constant declares its name, an import or alias does not."""
    document = parse_text("src/list.zig", ZIG)
    line_of = {line.strip(): number for number, line in enumerate(ZIG.split("\n"), 1)}
    definitions = document.definitions
    assert definitions[line_of["pub const max_items = 1024;"]] == ("max_items",)
    assert line_of['const std = @import("std");'] not in definitions
    assert line_of["const Allocator = std.mem.Allocator;"] not in definitions
    assert "ArrayList.append" in definitions[line_of["pub fn append(self: *@This(), item: T) !void {"]]
    assert definitions[line_of["x: i32 = 0,"]] == ("Point.x",)
    assert "Point.len" in definitions[line_of["pub fn len(self: Point) i32 {"]]
    assert "Color.green" in definitions[line_of["const Color = enum { red, green };"]]
    assert not any("len adds" in names for names in definitions.values())
    headings = {(heading.title, heading.line) for heading in document.headings}
    assert ("append", line_of["/// Adds an item at the end."]) in headings
    assert ("an empty list has no items", line_of['test "an empty list has no items" {']) in headings
    assert all(heading.line > 1 for heading in document.headings[1:])
    paths = heading_paths("src/list.zig", ZIG)
    assert paths["ArrayList.append"] == "src/list.zig > ArrayList > append"
    test_line = line_of['test "len adds" {']
    assert (test_line, test_line + 2) in document.tests
    assert (
        line_of["pub const Point = struct {"],
        line_of["const Color = enum { red, green };"] - 2,
    ) not in document.tests


NAMED_VALUES = {
    "lib/faraday/rack_builder.rb": (
        """
        DEFAULT_TIMEOUT = 5

        module Faraday
          class RackBuilder
            # Used to detect missing arguments
            NO_ARGUMENT = Object.new
            MISSING_ADAPTER_ERROR = "An attempt to run a request without adapter"
            VERSION = "1.0"
            Other::PATCHED = true

            def build
              local = 1
              LATE = 2
            end
          end
        end
        """,
        {
            2: ("DEFAULT_TIMEOUT",),
            7: ("Faraday::RackBuilder::NO_ARGUMENT", "NO_ARGUMENT", "RackBuilder::NO_ARGUMENT"),
            8: (
                "Faraday::RackBuilder::MISSING_ADAPTER_ERROR",
                "MISSING_ADAPTER_ERROR",
                "RackBuilder::MISSING_ADAPTER_ERROR",
            ),
            9: ("Faraday::RackBuilder::VERSION", "RackBuilder::VERSION"),  # a word alone: only qualified
        },
        {10, 13, 14},  # another module's constant, a method's variable and constant
    ),
    "clikt/core/Context.kt": (
        """
        package com.github.ajalt.clikt.core

        const val MAX_SUGGESTIONS = 3
        private val DEFAULT_CORRECTION_SUGGESTOR: TypoSuggestor = { entered, possible -> possible }

        class Context {
            val terminalWidth: Int = 79
            fun helper() {
                val local = 1
            }
        }
        """,
        {
            4: ("MAX_SUGGESTIONS",),
            5: ("DEFAULT_CORRECTION_SUGGESTOR",),
            8: ("Context.terminalWidth", "terminalWidth"),
        },
        {10},
    ),
    "lua/pl/lapp.lua": (
        """
        local lapp = {}

        --- controls whether to dump usage on error.
        lapp.show_usage_error = true
        lapp.callback = nil
        lapp.options = { quiet = false }
        lapp.nested.value = 1
        package.path = package.path .. ";./?.lua"

        function lapp.quit(msg)
          lapp.inside = true
        end

        return lapp
        """,
        {
            5: ("lapp.show_usage_error", "show_usage_error"),
            6: ("lapp.callback",),
            7: ("lapp.options",),
            11: ("lapp.quit", "quit"),
        },
        {8, 9, 12},  # a nested table's field, a global's, a field set in a function
    ),
    "httpx/_config.py": (
        """
        DEFAULT_TIMEOUT = 5.0
        JSONValue = dict[str, "JSONValue"] | list["JSONValue"] | str
        logger = logging.getLogger(__name__)
        __all__ = ["Timeout"]
        obj.attribute, items[0] = 1, 2
        if TYPE_CHECKING:
            HIDDEN = 1

        @dataclass
        class Timeout:
            connect: float
            max_redirects: int = 20
            __slots__ = ("connect",)

            def merged(self):
                LOCAL = 5
                self.read = LOCAL
        """,
        {
            2: ("DEFAULT_TIMEOUT",),
            3: ("JSONValue",),
            11: ("Timeout",),
            12: ("Timeout.connect",),  # a word alone: only qualified
            13: ("Timeout.max_redirects", "max_redirects"),
            16: ("Timeout.merged", "merged"),
        },
        {4, 5, 6, 8, 14, 17, 18},  # a script's variable, Python's own names, targets of no name, a method's
    ),
}


@pytest.mark.parametrize("path", sorted(NAMED_VALUES))
def test_a_module_s_and_a_class_s_named_values_are_declared_qualified_like_its_methods(path):
    source, declared, undeclared = NAMED_VALUES[path]
    definitions = parse_text(path, textwrap.dedent(source)).definitions
    for line, names in declared.items():
        assert definitions.get(line) == names, (line, definitions)
    assert not undeclared & set(definitions), definitions


def test_a_swift_library_s_global_is_declared_alone_and_a_script_s_working_variable_is_not():
    library = textwrap.dedent(
        """\
        import Foundation

        public let swiftVersion: String = {
            return "5.9"
        }()

        #if os(macOS)
        var cacheRoot = "~/Library/Caches"
        #endif

        public class Script {
            let name = "main"
        }
        """
    )
    definitions = parse_text("Sources/Script/Script.swift", library).definitions
    assert definitions[3] == ("swiftVersion",)
    assert definitions[8] == ("cacheRoot",), "a global inside a compiler directive is the module's too"
    assert definitions[12] == ("Script.name",), "a member stays qualified"
    script = "import Foundation\n\nlet name = CommandLine.arguments[1]\nprint(name)\n"
    for path, source in [
        ("Sources/tool/main.swift", script),
        ("Examples/count.swift", "#!/usr/bin/swift sh\n" + script),
        ("Package.swift", 'import PackageDescription\nlet package = Package(name: "tool")\n'),
    ]:
        assert parse_text(path, source).definitions == {}, path
    preview = 'import SwiftUI\n\nlet accent = Color.blue\n\n#Preview {\n    Text("Hi")\n}\n'
    assert parse_text("Sources/App/Theme.swift", preview).definitions == {3: ("accent",)}, (
        "a macro that declares a preview runs nothing: the file is a library's"
    )


def test_a_rust_constant_or_static_is_declared_alone_at_the_top_and_qualified_in_an_impl():
    source = textwrap.dedent(
        """\
        pub const MAX_RETRIES: u32 = 3;
        pub(crate) static mut COUNTER: u32 = 0;

        impl Json {
            pub const MAX_DEPTH: usize = 128;
            const EMPTY: &str = "";

            fn parse() {
                const LOCAL: u8 = 1;
            }
        }
        """
    )
    definitions = parse_text("src/json.rs", source).definitions
    assert definitions[1] == ("MAX_RETRIES",)
    assert definitions[2] == ("COUNTER",)
    assert definitions[5] == ("Json::MAX_DEPTH", "MAX_DEPTH")
    assert definitions[6] == ("Json::EMPTY",), "a word alone is known by its type"
    assert 9 not in definitions, "a function's own constant declares nothing"
    checks = "const _: () = assert!(true);\nimpl Json {\n    const _: () = ();\n}\n"
    assert parse_text("src/checks.rs", checks).definitions == {}, "what `_` leaves unnamed is no name"


def test_a_kotlin_script_s_top_level_value_declares_nothing_but_a_kotlin_file_s_does():
    gradle = 'plugins { id("x") }\nval kotlinVersion = "2.0"\n'
    assert parse_text("build.gradle.kts", gradle).definitions == {}
    settings = "val springVersion: String by settings\n"  # a script of declarations alone: a script still
    assert parse_text("settings.gradle.kts", settings).definitions == {}
    assert parse_text("Versions.kt", 'val kotlinVersion = "2.0"\n').definitions == {1: ("kotlinVersion",)}


def test_a_lua_file_s_local_constant_is_declared_and_a_working_variable_or_a_required_module_is_not():
    source = (
        'local CHUNK_SIZE = 2^12\nlocal a, B = 1, 2\nlocal Date = require "pl.Date"\n'
        "local count = 0\nlocal function f()\n  local INNER = 1\nend\n"
    )
    assert parse_text("http/h2_connection.lua", source).definitions == {1: ("CHUNK_SIZE",), 5: ("f",)}


def test_a_python_command_s_options_are_declared_by_the_parser_calls_that_spell_them():
    source = textwrap.dedent(
        """\
        @click.command()
        @click.option("-f", "--overwrite-if-exists", is_flag=True, help="Overwrite the output.")
        @click.argument("template")
        def main(template, overwrite_if_exists):
            parser = argparse.ArgumentParser()
            parser.add_argument("--name", "-n", help="Who to greet.")
            parser.add_argument("path")
            config.option("--later", "not first")
            print("--not-an-option")
        """
    )
    definitions = parse_text("cookiecutter/cli.py", source).definitions
    assert definitions[2] == ("--overwrite-if-exists", "-f")
    assert definitions[6] == ("--name", "-n")
    assert not {3, 7, 9} & set(definitions)  # an argument, a positional, a string in a message
    assert definitions[8] == ("--later",)  # the spellings before its other arguments


def test_a_go_command_s_flags_are_declared_by_the_flag_and_pflag_calls_that_name_them():
    source = textwrap.dedent(
        """\
        package main

        func main() {
        \tout := flag.String("out", "<stdout>", "Where logs are written.")
        \tfs.DurationVar(&timeout, "read-timeout", time.Second, "How long to wait.")
        \tcmd.PersistentFlags().StringVarP(&cfgFile, "config", "c", "", "Config file.")
        \tcmd.Flags().BoolP(helpFlag, "h", false, "Help.")
        \tname := c.String("out")
        \tlog.Info(zap.String("key", "value"))
        \tb.WriteString("--not-a-flag")
        \tstatsd.Count("page.views", 1, nil, 1)
        \tt.String("email", 255, false)
        }
        """
    )
    definitions = parse_text("cmd/genlog/main.go", source).definitions
    assert definitions[4] == ("--out",)
    assert definitions[5] == ("--read-timeout",)
    assert definitions[6] == ("--config", "-c")
    assert definitions[7] == ("-h",)  # the name a constant gives is not written here
    # reading a flag's value, a log field, a string, a metric, a column: no usage string last
    assert not {9, 10, 11, 12, 13} & set(definitions)


def test_a_rust_command_s_options_are_declared_by_clap_s_builder_and_derive():
    source = textwrap.dedent(
        """\
        fn build() -> Command {
            Command::new("hyperfine").arg(
                Arg::new("parameter-list")
                    .long("parameter-list")
                    .short('L'),
            )
        }

        #[derive(Parser)]
        struct Cli {
            /// Number of warmup runs.
            #[arg(short, long)]
            warmup_runs: u64,
            #[arg(long = "export-json", value_name = "FILE")]
            json: Option<String>,
            #[arg(short)]
            verbose: bool,
            name: String,
        }
        """
    )
    definitions = parse_text("src/cli.rs", source).definitions
    assert definitions[4] == ("--parameter-list",)
    assert definitions[13] == ("--warmup-runs",)  # clap spells a field's name so
    assert definitions[14] == ("--export-json",)  # where the attribute names it
    assert not {17, 18} & set(definitions)  # a short option alone; a positional argument


def test_a_javascript_command_s_options_are_declared_by_commander_and_yargs():
    source = textwrap.dedent(
        """\
        program
          .option("-p, --port <number>", "port to listen on")
          .requiredOption("--db-url <url>", "database");
        yargs.option("verbose", { alias: "v", type: "boolean" });
        menu.option("Open", handler);
        grid.option("paging", { pageSize: 10 });
        """
    )
    definitions = parse_text("bin/server.js", source).definitions
    assert definitions[2] == ("--port", "-p")
    assert definitions[3] == ("--db-url",)
    assert definitions[4] == ("--verbose",)
    assert not {5, 6} & set(definitions)  # a name without yargs' settings after it is no option
    assert parse_text("bin/server.ts", source).definitions == definitions


def test_a_lua_file_that_returns_no_table_declares_no_field():
    source = "local M = {}\nM.debug = false\nlocal other = {}\nreturn other\n"
    assert not parse_text("lua/script.lua", source).definitions


SPEC_HEADINGS = {
    "spec/faraday/connection_spec.rb": (
        """
        # frozen_string_literal: true

        RSpec.describe Faraday::Connection do
          def helper_method(value)
            value
          end

          describe '#proxy=' do
            context 'with a string' do
              it 'parses it' do
                expect(conn.proxy).to eq(1)
              end
            end
          end

          shared_examples 'a request' do
            it { is_expected.to be_ok }
          end
        end
        """,
        {
            4: "Faraday::Connection",
            5: "Faraday::Connection > helper_method",
            9: "Faraday::Connection > #proxy=",
            10: "Faraday::Connection > #proxy= > with a string",
            11: "Faraday::Connection > #proxy= > with a string > parses it",
            17: "Faraday::Connection > a request",
        },
    ),
    "spec/pl/path_spec.lua": (
        """
        local path = require("pl.path")

        describe("pl.path", function()
          local function fixture(name)
            return "spec/" .. name
          end

          describe("relpath", function()
            it("walks up to the common parent", function()
              assert.equal("../b", path.relpath("a/b", "a/c"))
            end)
          end)
        end)
        """,
        {
            4: "pl.path",
            5: "pl.path > fixture",
            9: "pl.path > relpath",
            10: "pl.path > relpath > walks up to the common parent",
        },
    ),
    "test/my_app/path_test.exs": (
        """
        defmodule MyApp.PathTest do
          use ExUnit.Case, async: true

          describe "relpath/2" do
            test "walks up to the common parent" do
              assert MyApp.Path.relpath("a/b", "a/c") == "../b"
            end
          end

          test "joins with a slash", %{dir: dir} do
            assert MyApp.Path.join(dir, "b") == dir <> "/b"
          end
        end
        """,
        {
            2: "MyApp.PathTest",
            5: "MyApp.PathTest > relpath/2",
            6: "MyApp.PathTest > relpath/2 > walks up to the common parent",
            11: "MyApp.PathTest > joins with a slash",
        },
    ),
    "src/test/scala/scopt/ParserSuite.scala": (
        """
        class ParserSuite extends munit.FunSuite {
          test("int parser reads a hexadecimal value") {
            assertEquals(parse("--foo", "0x01"), Some(1))
          }

          test("an unknown option is an error") {
            assert(parse("--nope").isEmpty)
          }
        }
        """,
        {
            2: "ParserSuite",
            3: "ParserSuite > int parser reads a hexadecimal value",
            7: "ParserSuite > an unknown option is an error",
        },
    ),
    "src/test/scala/scopt/ParserSpec.scala": (
        """
        class ParserSpec extends AnyFunSpec {
          describe("a command") {
            it("makes its children's options available") {
              assert(parse("update", "--xyz").isDefined)
            }
          }
        }
        """,
        {
            3: "ParserSpec > a command",
            4: "ParserSpec > a command > makes its children's options available",
        },
    ),
}


@pytest.mark.parametrize("path", sorted(SPEC_HEADINGS))
def test_spec_groups_and_examples_head_their_blocks_by_their_titles(path):
    source, paths = SPEC_HEADINGS[path]
    document = parse_text(path, textwrap.dedent(source))
    headings = sorted(document.headings, key=lambda heading: (heading.line, heading.level))
    for line, heading in paths.items():
        trail: list[Heading] = []
        for above in (heading for heading in headings if heading.line <= line):
            trail = [*(outer for outer in trail if outer.level < above.level), above]
        assert HEADING_SEPARATOR.join(above.title for above in trail) == f"{path} > {heading}", line
    assert not document.definitions.keys() - {2}, document.definitions  # a group's helper: no name
    assert document.tests == [(1, len(document.lines))]


def test_a_library_s_own_describe_heads_nothing_and_leaves_its_class_s_methods_declared():
    source = 'class Api\n  describe "list users" do\n    get "/users"\n  end\n\n  def helper\n  end\nend\n'
    document = parse_text("lib/api.rb", source)
    assert "list users" not in {heading.title for heading in document.headings}
    assert document.definitions[6] == ("Api::helper", "helper")


def test_yard_directives_declare_the_methods_metaprogramming_defines():
    source = """
    module Faraday
      class Connection
        # @!method get(url = nil, params = nil, headers = nil)
        # Makes a GET HTTP request without a body.
        # @!scope class

        # @!attribute [r] status
        #   @return [Integer]
        METHODS.each do |method|
          class_eval "def #{method}; end"
        end
      end
    end
    """
    definitions = parse_text("lib/faraday/connection.rb", textwrap.dedent(source)).definitions
    assert definitions[4] == ("Connection::get", "Faraday::Connection::get", "get")
    assert definitions[8] == ("Connection::status", "Faraday::Connection::status", "status")


def test_ruby_setters_and_operators_are_qualified_as_other_methods_are():
    source = (
        "class Connection\n  def proxy=(value)\n  end\n\n  def ==(other)\n  end\n\n"
        "  def [](key)\n  end\nend\n"
    )
    definitions = parse_text("lib/connection.rb", source).definitions
    assert definitions[2] == ("Connection::proxy=", "proxy=")
    assert definitions[5] == ("==", "Connection::==")
    assert definitions[8] == ("Connection::[]", "[]")


@pytest.mark.slow
@pytest.mark.parametrize(
    ("path", "unit"),
    [
        ("garbled.c", "("),  # one error of thousands of tokens side by side
        ("garbled.c", "<x>a</x>"),  # thousands of errors at the file's top, salvaged
        ("garbled.cpp", "a("),
        ("garbled.cs", "&#"),
        ("garbled.c", "<!--"),  # the grammar's error recovery tries again at every token
        ("garbled.dart", ")"),  # the grammar's scanner looks ahead to the end from each bracket
    ],
)
def test_reading_a_file_of_thousands_of_syntax_errors_is_linear_in_its_size(path, unit):
    """A damaged or generated file of punctuation took minutes to read (8,000 tokens of ``<x>a</x>``:
    56 s): the tree-sitter query and each error's parent step over every sibling of the node asked,
    C's parser retries at each ``<!--``, Dart's scanner looks ahead from each ``)``. The file is read
    as lines, in time that grows with its size."""

    def seconds(size: int) -> float:
        text = "x\n" + unit * (size // len(unit)) + "\n"
        return fastest_seconds(lambda: parse_text(path, text), repeats=2)

    assert grows_linearly(seconds, 4_000, 32_000, 24)  # quadratic would be 64
    document = parse_text(path, "x\n" + unit * (32_000 // len(unit)) + "\n")
    assert len(document.lines) == 2, "the text is kept, line for line"
