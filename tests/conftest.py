"""Shared fixtures. Test modules import helpers from this folder (pytest puts it on sys.path)."""

from __future__ import annotations

import itertools
import os
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Callable
from pathlib import Path

import pytest
from helpers import HashBackend
from loopback import OllamaServer, OpenAIServer
from postgres_server import LocalPostgres

from indexer import Index
from indexer.store.sqlite import vectors as sqlite_vectors

REPO = Path(__file__).resolve().parent.parent
#: Set by `make test-fast`: the tests marked heavy are left out, and any other test that does what
#: makes a test heavy fails, naming what it did, so the mark stays true.
FAST = os.environ.get("INDEX_FAST_TESTS") == "1"
SAMPLE_CORPUS = REPO / "sample_corpus"
#: the stores the shared behaviour tests run against (test_pipeline, test_search, test_concurrency)
STORES = ["sqlite", pytest.param("postgres", marks=pytest.mark.heavy)]
_database_numbers = itertools.count(1)


@pytest.fixture(scope="session", autouse=True)
def model_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The cache every test and every process it starts writes to, never the user's ~/.cache: the
    optimised copies of the models (``$XDG_CACHE_HOME/indexer/onnx``), made once for the session,
    and ``index eval``'s default folder."""
    cache_home = tmp_path_factory.mktemp("cache")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("XDG_CACHE_HOME", str(cache_home))
        yield cache_home


@pytest.fixture(scope="session")
def postgres_server() -> LocalPostgres:
    """One real PostgreSQL server with pgvector for the whole session (see postgres_server.py).

    Its folder is not under pytest's: any pytest run on the machine makes /tmp/pytest-of-USER private
    again, and as root the server runs as another user who must reach its folder."""
    folder = Path(tempfile.mkdtemp(prefix="indexer-postgres-"))
    try:
        with LocalPostgres(folder) as server:
            yield server
    finally:
        shutil.rmtree(folder)


def new_database(server: LocalPostgres) -> str:
    """A fresh, empty database on ``server``; its URL."""
    import psycopg

    name = f"index_{next(_database_numbers)}"
    with psycopg.connect(server.url(), autocommit=True) as admin:
        admin.execute(f"CREATE DATABASE {name}")
    return server.url(name)


@pytest.fixture
def postgres_url(postgres_server) -> str:
    """The URL of a fresh database on the session's PostgreSQL server."""
    return new_database(postgres_server)


@pytest.fixture(params=STORES)
def any_index(request, tmp_path: Path) -> Path | str:
    """Where a behaviour test's index lives: a SQLite file, or a fresh PostgreSQL database."""
    if request.param == "postgres":
        return new_database(request.getfixturevalue("postgres_server"))
    return tmp_path / "index.db"


@pytest.fixture
def new_index(request, tmp_path: Path, any_index: Path | str):
    """Makes more indexes on the same store as ``any_index``: ``new_index("name")`` is a SQLite file
    in the test's folder, or a fresh PostgreSQL database."""

    def make(name: str) -> Path | str:
        if isinstance(any_index, Path):
            return tmp_path / f"{name}.db"
        return new_database(request.getfixturevalue("postgres_server"))

    return make


def undo_migration(location: Path | str, version: int, sqlite: list[str], postgres: list[str]) -> None:
    """Turn the index at ``location`` back into what an index made before migration ``version``
    held: the store's statements (``sqlite`` or ``postgres``), then the migration marked as not
    applied, in one transaction (raw SQL: the stores migrate what they open)."""
    import apsw
    import psycopg

    statements = [*(sqlite if isinstance(location, Path) else postgres)]
    statements.append(f"DELETE FROM schema_migrations WHERE version = {version}")
    if isinstance(location, Path):
        connection = apsw.Connection(str(location))
        with connection:
            for statement in statements:
                connection.execute(statement)
        connection.close()
        return
    with psycopg.connect(location) as connection:  # one transaction, committed on leaving
        for statement in statements:
            connection.execute(statement)


def built_before(location: Path | str, folder: Path, monkeypatch, undo: Callable[[Path | str], None]) -> None:
    """``folder`` built into the index at ``location`` as the release before made it: by the chunker
    before this one (its version one less, this one's again once built, so the next build reads
    every file again), then the migration ``undo`` takes back undone."""
    from indexer import chunking

    version = chunking.CHUNKER_VERSION
    monkeypatch.setattr(chunking, "CHUNKER_VERSION", version - 1)
    with Index.open(location, backend=HashBackend()) as index:
        index.build(folder, warn=lambda message: None)
    monkeypatch.setattr(chunking, "CHUNKER_VERSION", version)
    undo(location)


def rows(store, sql: str) -> list[tuple]:
    """The rows of a plain SELECT (no parameters), on either store."""
    return [tuple(row) for row in store.query(sql)]


@pytest.fixture
def index_path(tmp_path: Path) -> Path:
    return tmp_path / "index.db"


@pytest.fixture
def backend() -> HashBackend:
    return HashBackend()


@pytest.fixture
def ollama_server():
    """A loopback server speaking Ollama's /api/embed."""
    with OllamaServer() as server:
        yield server


@pytest.fixture
def openai_server():
    """A loopback server speaking OpenAI's /v1/embeddings."""
    with OpenAIServer() as server:
        yield server


@pytest.fixture
def docs(tmp_path: Path) -> Path:
    """A small folder of Markdown and text files."""
    folder = tmp_path / "docs"
    write(
        folder / "guide.md",
        "# Guide\n\nInstall the tool with pip.\n\n## Usage\n\nRun the tool on a folder.\n",
    )
    write(folder / "notes.txt", "Plain notes about cats.\nAnd dogs.\n")
    write(folder / "sub" / "deep.md", "# Deep\n\nA file in a subfolder about rivers and lakes.\n")
    return folder


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def snapshot(index_path: Path | str) -> dict[str, object]:
    """Everything a build can change in an index, to compare before and after a failed step."""
    with Index.open(index_path, create=False) as index:
        store = index.store
        chunks = rows(
            store,
            "SELECT f.path, c.seq, c.start_line, c.end_line, c.heading, c.text, c.text_hash "
            "FROM chunks c JOIN files f ON f.id = c.file_id ORDER BY f.path, c.seq",
        )
        return {
            "files": rows(
                store,
                "SELECT root, path, size, mtime_ns, content_hash, status FROM files ORDER BY root, path",
            ),
            "chunks": chunks,
            "vectors": sorted(store.vectors_for_hashes(chunk[-1] for chunk in chunks).items()),
            "keywords": sorted(store.keyword_matches(["the", "a", "cats"], 10_000)),
            "meta": rows(store, "SELECT key, value FROM meta ORDER BY key"),
        }


def pytest_configure(config: pytest.Config) -> None:
    if FAST:
        _refuse_heavy_work()


def _refuse_heavy_work() -> None:
    """What the fast loop never does: load an ONNX model, start a process (a server, a browser, an
    emulator, a worker, PostgreSQL) or listen on a socket. Each fails the test that tries, so a test
    that needs one is marked ``heavy`` (``pytestmark`` for a whole module)."""
    import onnxruntime

    def refusing(what: str):
        def refuse(*args: object, **kwargs: object) -> None:
            pytest.fail(
                f"this test {what}: mark it heavy (make test-fast leaves such tests out)", pytrace=False
            )

        return refuse

    onnxruntime.InferenceSession.__init__ = refusing("loads an ONNX model")  # type: ignore[method-assign]
    subprocess.Popen.__init__ = refusing("starts a process")  # type: ignore[method-assign]
    os.fork = refusing("forks a process")  # type: ignore[assignment]
    socket.socket.listen = refusing("listens on a socket")  # type: ignore[method-assign]


@pytest.fixture
def graph_walked(monkeypatch):
    """The vector graph searched (scanned, or walked where a server's audit says so) whatever the
    index's size: below the size where scoring every row costs less, the store scores its float32
    copy instead, and a test of the graph needs the graph."""
    monkeypatch.setattr(sqlite_vectors, "WALK_ROW_COST", 0)
