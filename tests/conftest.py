"""Shared fixtures. Test modules import helpers from this folder (pytest puts it on sys.path)."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers import HashBackend
from loopback import OllamaServer, OpenAIServer

from indexer import Index

REPO = Path(__file__).resolve().parent.parent
SAMPLE_CORPUS = REPO / "sample_corpus"


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


def snapshot(index_path: Path) -> dict[str, object]:
    """Everything a build can change in an index, to compare before and after a failed step."""
    with Index.open(index_path, create=False) as index:
        db = index.store.db
        files = db.execute(
            "SELECT root, path, size, mtime_ns, content_hash, status FROM files ORDER BY root, path"
        )
        chunks = db.execute(
            "SELECT f.path, c.seq, c.start_line, c.end_line, c.heading, c.text, c.text_hash "
            "FROM chunks c JOIN files f ON f.id = c.file_id ORDER BY f.path, c.seq"
        )
        vectors = (
            db.execute("SELECT rowid, embedding FROM chunk_vectors ORDER BY rowid").fetchall()
            if index.store.has_vector_table()
            else []
        )
        fts = db.execute(
            "SELECT rowid FROM chunks_fts WHERE chunks_fts MATCH 'the OR a OR cats' ORDER BY rowid"
        )
        return {
            "files": files.fetchall(),
            "chunks": chunks.fetchall(),
            "vectors": vectors,
            "fts": fts.fetchall(),
            "meta": db.execute("SELECT key, value FROM meta ORDER BY key").fetchall(),
        }
