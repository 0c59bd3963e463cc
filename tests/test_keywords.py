"""Names in source code are words of the keyword index with their parts: a part finds the name it is
part of, the whole name still ranks first for its own spelling, a quoted phrase finds words in their
places; a name in prose is not (its text is indexed as it is); both stores write the same words, and
an index made before gains the parts at its next build."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from conftest import built_before, undo_migration, write
from helpers import HashBackend
from test_scripts import old_matches

from indexer import Index, chunking, formats
from indexer.store import keywords
from indexer.store.postgres import PostgresStore

FILES = {
    "completion/bash.go": "package completion\n\nfunc bash_completionsV2(out io.Writer) error {\n"
    "\treturn writeScript(out)\n}\n",
    "accounts/profile.py": "def getUserName(account):\n    return account.display\n",
    "io/files.rs": "pub fn load(path: &Path) -> String {\n    std::fs::read_to_string(path).unwrap()\n}\n",
    "http/server.py": "class HTTPServer:\n    def serve_forever(self):\n        pass\n",
    "bank/sync.ts": "export function fetchRemoteLedger(account: string) {\n  return account;\n}\n",
    # the parts as plain words, more often than the files above hold them
    "notes/reading.md": "# Reading\n\nRead a file to a string: read to string, then the string is read.\n"
    "A user name is the name a user gets; get the name.\n",
    "notes/shells.md": "# Shells\n\nShell completions for bash: bash completions are scripts.\n",
    # prose that mentions a name of the code, none of its parts as words of its own
    "notes/accounts.md": "# Accounts\n\nCall `fetchRemoteLedger` for an account's balance.\n",
}
#: (question, the file that answers it first): a part of a snake_case, a camelCase or a
#: letters-and-digits name, or two parts in words (no file's path holds them), and the whole
#: name as code spells it, which still ranks the file that spells it first.
FOUND_FIRST = [
    ("v2", "completion/bash.go"),
    ("remote ledger", "bank/sync.ts"),
    ("serve forever", "http/server.py"),
    ("read_to_string", "io/files.rs"),
    ("getUserName", "accounts/profile.py"),
    ("bash_completionsV2", "completion/bash.go"),
    ("HTTPServer", "http/server.py"),
]


def paths_of(hits) -> list[str]:
    return [hit.path for hit in hits]


def write_files(folder: Path) -> Path:
    for path, text in FILES.items():
        write(folder / path, text)
    return folder


def test_source_code_is_told_by_the_reader_its_extension_chooses():
    assert [formats.is_source_code(path) for path in FILES] == [True] * 5 + [False] * 3
    assert not formats.is_source_code("notes.txt")
    assert not formats.is_source_code("Makefile")


def test_a_code_text_is_followed_by_the_parts_of_its_names_once_a_name():
    def code(text: str) -> str:
        return keywords.index_text(text, code=True)

    assert (
        code("read_to_string(a) or read_to_string(b)")
        == "read_to_string(a) or read_to_string(b) read to string"
    )
    assert code("getUserName HTTPServer") == "getUserName HTTPServer get user name http server"
    assert code("bash_completionsV2") == "bash_completionsV2 bash completions v2"
    assert code("sha256Sum x86_64 APIsOf") == "sha256Sum x86_64 APIsOf sha256 sha 256 sum x86 86 64 apis of"
    assert code("__init__ and plain words") == "__init__ and plain words init"
    assert code("plain words, 42 and x.") == "plain words, 42 and x."
    assert code("naïve_bayes") == "naïve_bayes"  # another alphabet's letter: left whole
    assert code("用get_name缓存") == " 用 get_name 缓存 存  get name"


def test_prose_text_is_indexed_as_it_is():
    for text in NAMES:
        if text.isascii():
            assert keywords.index_text(text) == text


def test_a_part_of_a_name_in_code_finds_it_and_the_whole_name_still_ranks_first(code_index):
    for question, expected in FOUND_FIRST:
        hits = code_index.search(question, k=5, mode="keyword", min_score=0)
        assert paths_of(hits)[:1] == [expected], question
    found = paths_of(code_index.search("user name", k=10, mode="keyword", min_score=0))
    assert {"accounts/profile.py", "notes/reading.md"} <= set(found)  # prose's words as before


def test_a_name_in_prose_is_found_whole_not_by_its_parts(code_index):
    found = paths_of(code_index.search("remote ledger", k=10, mode="keyword", min_score=0))
    assert found == ["bank/sync.ts"]  # the code that defines it, not the page that mentions it
    found = paths_of(code_index.search("fetchRemoteLedger", k=10, mode="keyword", min_score=0))
    assert set(found) == {"bank/sync.ts", "notes/accounts.md"}


def test_a_quoted_phrase_finds_the_words_in_their_places_and_a_name_s_parts_together(code_index):
    hits = code_index.search('"std::fs::read_to_string(path)"', k=5, mode="keyword", min_score=0)
    assert paths_of(hits) == ["io/files.rs"]
    hits = code_index.search('"def getUserName account"', k=5, mode="keyword", min_score=0)
    assert paths_of(hits) == ["accounts/profile.py"]
    hits = code_index.search('"completions v2"', k=5, mode="keyword", min_score=0)
    assert paths_of(hits) == ["completion/bash.go"]  # the parts of one name stand together


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.heavy)])
def code_index(request, tmp_path):
    location = tmp_path / "index.db"
    if request.param == "postgres":
        location = request.getfixturevalue("postgres_url")
    with Index.open(location, backend=HashBackend()) as index:
        index.build(write_files(tmp_path / "code"), warn=lambda message: None)
        yield index


def make_pre_0011(location: Path | str) -> None:
    """What an index made before migration 0011 held: no chunk marked as code, the keyword index of
    each chunk its text."""
    sqlite = [
        "INSERT INTO chunks_fts (chunks_fts) VALUES ('delete-all')",
        "INSERT INTO chunks_fts (rowid, heading, text) SELECT id, heading, text FROM chunks",
        "ALTER TABLE chunks DROP COLUMN is_code",
    ]
    postgres = [
        "DROP TRIGGER chunk_keywords ON chunks",
        "CREATE OR REPLACE FUNCTION chunk_keywords() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN "
        "NEW.search_text := to_tsvector('english', keyword_text(NEW.heading || ' ' || NEW.text)); "
        "RETURN NEW; END $$",
        "CREATE TRIGGER chunk_keywords BEFORE INSERT OR UPDATE OF heading, text ON chunks "
        "FOR EACH ROW EXECUTE FUNCTION chunk_keywords()",
        "UPDATE chunks SET text = text",
        "ALTER TABLE chunks DROP COLUMN is_code",
        "DROP FUNCTION name_words(text)",
        "DROP FUNCTION name_parts(text)",
    ]
    undo_migration(location, 11, sqlite, postgres)


def test_an_index_made_before_gains_the_parts_in_code_at_its_next_build(any_index, tmp_path, monkeypatch):
    folder = write_files(tmp_path / "code")
    built_before(any_index, folder, monkeypatch, make_pre_0011)
    assert old_matches(any_index, "v2") == []  # only a part of bash_completionsV2
    assert old_matches(any_index, "completions")  # a word of its own in notes/shells.md
    with Index.open(any_index, backend=HashBackend()) as index:
        report = index.build(folder, warn=lambda message: None)
        assert (report.files_added, report.chunks_embedded) == (0, 0)
        assert "0011_parts_of_names_in_code.sql" in index.store.applied_migrations()
        assert paths_of(index.search("v2", k=10, mode="keyword", min_score=0)) == ["completion/bash.go"]
        assert "accounts/profile.py" in paths_of(index.search("user name", k=10, mode="keyword", min_score=0))
        assert paths_of(index.search("remote ledger", k=10, mode="keyword", min_score=0)) == ["bank/sync.ts"]
        assert paths_of(index.search("read_to_string", k=1, mode="keyword", min_score=0)) == ["io/files.rs"]
        assert (
            json.loads(index.store.get_meta("fingerprint") or "{}")["chunking"]["version"]
            == chunking.CHUNKER_VERSION
        )
        assert not index.store.integrity_problems()


#: Names of every shape, among prose, punctuation, other alphabets and CJK runs.
NAMES = [
    "read_to_string(path)",
    "getUserName HTTPServer getHTTPResponse base64Encode HTTP2Server IPv6 ABCdef A1b",
    "bash_completionsV2.go sha256Sum x86_64 __init__ _private a_ a_b 1990s 12_34 foo_foo_Foo URLs APIsOf",
    "ALGOL60 IBM7090 A1b 18th M31 e9a06d",
    "naïve_bayes café_au_lait «snake_case» “camelCase” x_y—z_w",
    "用get_name缓存 get_用户名() Redis缓存",
    "plain words, and no names at all.",
    "",
    "aA" * 50,
]


@pytest.mark.heavy
def test_postgres_writes_the_words_python_writes(postgres_url):
    with PostgresStore.open(postgres_url, writable=True, create=True) as store:
        for text in NAMES:
            written = store.query("SELECT name_words(keyword_text(%s))", (text,))[0][0]
            assert written.split() == keywords.index_text(text, code=True).split(), text


def test_the_parts_are_linear_in_the_name():
    """A megabyte of one name of alternating case has a part every two letters: rewriting it ten
    times as long takes about ten times as long, with no backtracking to blow up."""
    small = _seconds("aB" * 50_000)
    large = _seconds("aB" * 500_000)
    assert large < 30 * max(small, 0.005), (small, large)
    assert keywords.index_text("aB" * 500_000, code=True) == "aB" * 500_000 + " ba"


def _seconds(text: str, turns: int = 3) -> float:
    """The least of a few runs: on a shared machine one run can stall."""
    times = []
    for _ in range(turns):
        started = time.perf_counter()
        keywords.index_text(text, code=True)
        times.append(time.perf_counter() - started)
    return min(times)
