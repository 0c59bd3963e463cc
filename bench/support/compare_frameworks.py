"""LangChain ``index()`` and ``llm embed-multi`` over the same folder with the same instant embeddings.

Runs inside bench/.cache/venv-compare (made by bench_pipeline.py), never in the project's venv, and
prints its figures as one JSON object on stdout. Two phases, so the caller can edit a file between them:

    compare_frameworks.py first FOLDER WORK   # fresh first runs (best of --repeats), then unchanged reruns
    compare_frameworks.py edit FOLDER WORK    # one more run over the databases kept in WORK

Each tool is set up the way its documentation shows: LangChain loads the files with DirectoryLoader,
splits them with MarkdownTextSplitter and indexes them with a SQLRecordManager (SQLite) into SQLiteVec;
llm runs its own ``embed-multi --files`` command (one embedding per file), in-process so that its
start-up, measured separately by the caller, is not counted twice. Each tool is imported inside its
own setup function, so one that cannot be imported here is reported as not run while the other still
runs; imports happen before the clocks start, as they do for `indexer`. Both tools keep their default
SQLite settings (LangChain's rollback journal waits for an fsync at each of its commits).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
import time
import warnings
from collections.abc import Callable
from pathlib import Path

from support.instant import instant_vectors

warnings.filterwarnings("ignore")  # langchain-community's sunset notice, on every import

#: One run of a tool over the folder, ``run(fresh=...)``: a fresh one starts from empty databases.
#: It returns the run's figures (seconds, chunks embedded...).
Run = Callable[..., dict]


# -- LangChain -------------------------------------------------------------------------------------


def langchain_tool(folder: Path, work: Path, chunk_chars: int) -> Run:
    from langchain_classic.indexes import SQLRecordManager
    from langchain_community.document_loaders import DirectoryLoader, TextLoader
    from langchain_community.vectorstores import SQLiteVec
    from langchain_core.embeddings import Embeddings
    from langchain_core.indexing import index
    from langchain_text_splitters import MarkdownTextSplitter

    class InstantEmbeddings(Embeddings):
        def __init__(self) -> None:
            self.embedded = 0

        def embed_documents(self, texts: list[str]) -> list[list[float]]:
            self.embedded += len(texts)
            return instant_vectors(texts).tolist()

        def embed_query(self, text: str) -> list[float]:
            return instant_vectors([text])[0].tolist()

    class DeletableSQLiteVec(SQLiteVec):
        """SQLiteVec has no ``delete``, which ``index(cleanup=...)`` requires: keep LangChain's document
        id in the metadata, indexed, and delete by it."""

        def add_texts(self, texts, metadatas=None, ids=None, **kwargs):
            texts = list(texts)
            metadatas = [dict(metadata) for metadata in metadatas] if metadatas else [{} for _ in texts]
            for metadata, id_ in zip(metadatas, ids or [], strict=False):
                metadata["_id"] = id_
            return super().add_texts(texts, metadatas)

        def create_table_if_not_exists(self) -> None:
            super().create_table_if_not_exists()
            self._connection.execute(
                f"CREATE INDEX IF NOT EXISTS {self._table}_by_id "
                f"ON {self._table} (json_extract(metadata, '$._id'))"
            )
            self._connection.commit()

        def delete(self, ids=None, **kwargs):
            rows = self._connection.execute(
                f"SELECT rowid FROM {self._table} WHERE json_extract(metadata, '$._id') IN "
                "(SELECT value FROM json_each(?))",
                (json.dumps(list(ids or [])),),
            ).fetchall()
            for (rowid,) in rows:
                self._connection.execute(f"DELETE FROM {self._table} WHERE rowid = ?", (rowid,))
                self._connection.execute(f"DELETE FROM {self._table}_vec WHERE rowid = ?", (rowid,))
            self._connection.commit()
            return True

    splitter = MarkdownTextSplitter(chunk_size=chunk_chars, chunk_overlap=chunk_chars // 10)
    records_db, vectors_db = work / "langchain-records.db", work / "langchain-vectors.db"

    def run(fresh: bool) -> dict:
        if fresh:
            for path in (records_db, vectors_db):
                path.unlink(missing_ok=True)
        embeddings = InstantEmbeddings()
        started = time.perf_counter()
        record_manager = SQLRecordManager("sqlitevec/bench", db_url=f"sqlite:///{records_db}")
        record_manager.create_schema()
        store = DeletableSQLiteVec(
            table="chunks", connection=None, embedding=embeddings, db_file=str(vectors_db)
        )
        loader = DirectoryLoader(
            str(folder), glob="**/*.md", loader_cls=TextLoader, loader_kwargs={"encoding": "utf-8"}
        )
        chunks = splitter.split_documents(loader.load())
        result = index(chunks, record_manager, store, cleanup="incremental", source_id_key="source")
        seconds = time.perf_counter() - started
        store._connection.close()
        return {
            "seconds": seconds,
            "chunks": len(chunks),
            "embedded": embeddings.embedded,
            "result": dict(result),
        }

    return run


# -- llm -------------------------------------------------------------------------------------------


def llm_tool(folder: Path, work: Path, chunk_chars: int) -> Run:
    os.environ["LLM_USER_PATH"] = str(work / "llm-user")
    import llm
    import sqlite_utils
    from llm.cli import cli

    class InstantEmbeddingModel(llm.EmbeddingModel):
        model_id = "bench-instant"
        batch_size = 100

        def __init__(self) -> None:
            self.embedded = 0

        def embed_batch(self, items, *, key=None):
            texts = list(items)
            self.embedded += len(texts)
            return instant_vectors(texts).tolist()

    model = InstantEmbeddingModel()

    class InstantPlugin:
        @llm.hookimpl
        def register_embedding_models(self, register):
            register(model)

    llm.plugins.pm.register(InstantPlugin(), name="bench-instant")
    database = work / "llm.db"
    command = [
        "embed-multi",
        "files",
        "--files",
        str(folder),
        "**/*.md",
        "-m",
        model.model_id,
        "-d",
        str(database),
    ]

    def run(fresh: bool) -> dict:
        if fresh:
            database.unlink(missing_ok=True)
        before = model.embedded
        started = time.perf_counter()
        cli.main(command, standalone_mode=False)
        seconds = time.perf_counter() - started
        entries = sqlite_utils.Database(database).execute("SELECT count(*) FROM embeddings").fetchone()[0]
        return {"seconds": seconds, "entries": entries, "embedded": model.embedded - before}

    return run


# -- phases ----------------------------------------------------------------------------------------


def first_phase(run: Run, repeats: int, rerun_repeats: int) -> dict:
    firsts = [run(fresh=True) for _ in range(repeats)]
    reruns = [run(fresh=False) for _ in range(rerun_repeats)]
    first, rerun = min(firsts, key=lambda r: r["seconds"]), min(reruns, key=lambda r: r["seconds"])
    figures = {
        "first_seconds": first["seconds"],
        "rerun_seconds": rerun["seconds"],
        "first_embedded": first["embedded"],
        "rerun_embedded": max(r["embedded"] for r in reruns),
    }
    figures.update({key: first[key] for key in ("chunks", "entries") if key in first})
    return figures


def edit_phase(run: Run, repeats: int, rerun_repeats: int) -> dict:
    edited = run(fresh=False)
    return {"rerun_seconds": edited["seconds"], "rerun_embedded": edited["embedded"]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("phase", choices=["first", "edit"])
    parser.add_argument("folder", type=Path)
    parser.add_argument("work", type=Path)
    parser.add_argument("--repeats", type=int, default=3, help="first runs per timing; the best is kept")
    parser.add_argument("--rerun-repeats", type=int, default=3, help="unchanged reruns per timing")
    parser.add_argument(
        "--langchain-repeats", type=int, default=2, help="first runs of LangChain (its reruns: 1)"
    )
    parser.add_argument("--chunk-chars", type=int, default=1000)
    args = parser.parse_args()
    phase = first_phase if args.phase == "first" else edit_phase
    figures: dict[str, dict] = {}
    # LangChain takes tens of seconds a run, where noise matters less and repeats cost most
    repeats = {"langchain": (args.langchain_repeats, 1), "llm": (args.repeats, args.rerun_repeats)}
    for name, tool in (("langchain", langchain_tool), ("llm", llm_tool)):
        try:
            with contextlib.redirect_stdout(sys.stderr):  # llm's progress bar must not mix with the JSON
                figures[name] = phase(tool(args.folder, args.work, args.chunk_chars), *repeats[name])
        except Exception as error:  # a tool that cannot run here is reported, not fatal
            figures[name] = {"error": f"{type(error).__name__}: {error}"}
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
