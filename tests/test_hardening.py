"""The outside attack, kept in the suite: faults and bad input, each asserting the exit code, the
message, and the index's state (integrity, nothing of a refused step stored, foreign files unchanged).

Each test names the item of the hardening issue it reproduces. They talk to real SQLite files, real
loopback HTTP servers and real subprocesses (resource limits, SIGKILL, another user for read-only
folders).
"""

from __future__ import annotations

import base64
import json
import os
import resource
import shutil
import signal
import sqlite3
import stat
import subprocess
import sys
import threading
import time
from pathlib import Path

import apsw
import pytest
from click.testing import CliRunner
from conftest import snapshot, write
from helpers import FaultyBackend, HashBackend, index_command, write_corpus
from loopback import OllamaServer, OpenAIServer

from indexer import ConfigError, Index, IndexLockedError, corpus
from indexer.cli import main
from indexer.errors import BackendUnreachableError
from indexer.store.sqlite import REBUILD_SUFFIX

TESTS = Path(__file__).resolve().parent
SECRET = "sk-attack-7f3a9c"


def cli(*args: str, env: dict[str, str] | None = None):
    return CliRunner().invoke(main, list(args), env=env)


def run_python(code: str, *args: str, limit: tuple[int, int] | None = None, **options):
    """Python code in a subprocess with the tests' helpers importable, optionally under an rlimit."""

    def apply_limit() -> None:
        if limit is not None:
            resource.setrlimit(limit[0], (limit[1], limit[1]))

    return subprocess.run(
        [sys.executable, "-c", f"import sys; sys.path.insert(0, {str(TESTS)!r})\n{code}", *args],
        capture_output=True,
        text=True,
        preexec_fn=apply_limit,
        timeout=120,
        **options,
    )


def build(index_path, folder, backend=None, **options):
    with Index.open(index_path) as index:
        return index.build(folder, backend=backend or HashBackend(), warn=lambda message: None, **options)


def integrity(index_path) -> list[str]:
    with Index.open(index_path, create=False) as index:
        return index.store.integrity_problems()


# -- 1. file names that are not UTF-8 ---------------------------------------------------------------


def test_file_names_that_are_not_utf8_are_indexed_under_an_escaped_name(tmp_path, docs):
    latin1 = docs / os.fsdecode(b"caf\xe9.md")
    latin1.write_text("# Caf\u00e9\n\nCr\u00e8me br\u00fbl\u00e9e and espresso.\n")
    (docs / os.fsdecode(b"bad\xffname.md")).write_text("# Odd\n\nA name no codec reads.\n")
    index_path = tmp_path / "index.db"
    result = cli("build", str(docs), "--db", str(index_path), "--json")
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["files_added"] == 5 and report["files_failed"] == 0
    hits = json.loads(cli("query", "espresso", "--mode", "keyword", "--db", str(index_path), "--json").stdout)
    assert hits[0]["path"] == "caf\\xe9.md"
    with Index.open(index_path, create=False) as index:
        assert index.status()["builds"][0]["files_added"] == 5
    latin1.unlink()
    again = json.loads(cli("build", str(docs), "--db", str(index_path), "--json").stdout)
    assert (again["files_removed"], again["files_unchanged"]) == (1, 4)
    assert integrity(index_path) == []


# -- 2. a long-lived Index after another process rebuilt the index with another model -----------------


def test_a_long_lived_index_follows_a_rebuild_with_another_model(tmp_path, docs):
    index_path = str(tmp_path / "index.db")
    with OllamaServer() as server:
        ollama = ["--backend", "ollama", "--base-url", server.url]
        assert cli("build", str(docs), "--db", index_path, *ollama, "--model", "model-a").exit_code == 0
        with Index.open(index_path, create=False) as reader:
            reader.search("rivers and lakes", min_score=0)
            assert server.requests[-1].body["model"] == "model-a"
            rebuilt = cli("build", str(docs), "--db", index_path, *ollama, "--model", "model-b", "--rebuild")
            assert rebuilt.exit_code == 0, rebuilt.output
            reader.search("rivers and lakes", min_score=0)
            assert server.requests[-1].body["model"] == "model-b"


def test_a_long_lived_index_with_its_own_backend_refuses_to_mix_models(tmp_path, docs):
    index_path = tmp_path / "index.db"
    build(index_path, docs, HashBackend(model_name="hash-a"))
    with Index.open(index_path, backend=HashBackend(model_name="hash-a")) as reader:
        assert reader.search("rivers", mode="vector", min_score=0)
        build(index_path, docs, HashBackend(model_name="hash-b"), rebuild=True)
        with pytest.raises(ConfigError, match="other settings than this backend's.*'hash-b' -> 'hash-a'"):
            reader.search("rivers", mode="vector", min_score=0)
        assert reader.search("rivers", mode="keyword", min_score=0)  # no model involved


# -- 3 and 14. the dimension and the settings are fixed by the first commit, not the first batch ----


def test_a_first_batch_of_a_wrong_dimension_that_stores_nothing_fixes_nothing(tmp_path):
    folder = write(tmp_path / "docs" / "one.md", "# One\n\n" + "alpha beta gamma\n\n" * 40).parent
    index_path = tmp_path / "index.db"

    # batch 1 comes back in 33 dimensions; batch 2 of the same file fails: the file is not stored
    class Misbehaving(FaultyBackend):
        def embed(self, texts):
            if self.calls == 1:
                self.calls += 1
                raise RuntimeError("the server fell over")
            return super().embed(texts)

    report = build(index_path, folder, Misbehaving("wrong_dimension", fail_on=1), batch_size=1, concurrency=1)
    assert report.files_failed == 1 and report.files_added == 0
    with Index.open(index_path, create=False) as index:
        assert index.store.dimension is None and index.store.get_meta("fingerprint") is None
    assert build(index_path, folder, HashBackend(model_name="another")).exit_code == 0


def test_a_first_build_that_stored_nothing_pins_no_settings(tmp_path, docs):
    index_path = str(tmp_path / "index.db")
    with OllamaServer(models=["nomic-embed-text"]) as server:
        ollama = ["--backend", "ollama", "--base-url", server.url]
        failed = cli("build", str(docs), "--db", index_path, *ollama, "--model", "nomic-embed-txet")
        assert failed.exit_code == 4 and "ollama pull nomic-embed-txet" in failed.stderr
        fixed = cli("build", str(docs), "--db", index_path, *ollama, "--model", "nomic-embed-text")
        assert fixed.exit_code == 0, fixed.output


# -- 4. a database that is not an index is never touched ----------------------------------------------


@pytest.mark.parametrize("tables", ["CREATE TABLE notes (body TEXT)", "CREATE TABLE files (name TEXT)"])
def test_a_database_of_another_tool_is_refused_and_left_byte_for_byte(tmp_path, docs, tables):
    foreign = tmp_path / "other.db"
    with sqlite3.connect(foreign) as connection:
        connection.execute(tables)
        connection.execute("INSERT INTO " + tables.split()[2] + " VALUES ('keep me')")
    before = foreign.read_bytes()
    for args in (["query", "anything"], ["status"], ["build", str(docs)]):
        result = cli(*args, "--db", str(foreign))
        assert result.exit_code == 2, (args, result.output)
        assert result.stderr.count("\n") == 1 and "is not an index" in result.stderr
        assert foreign.read_bytes() == before
    assert sorted(path.name for path in tmp_path.iterdir()) == ["docs", "other.db"]


def test_a_file_that_is_not_a_database_is_refused_and_left_as_it_was(tmp_path, docs):
    notes = write(tmp_path / "notes.txt", "not a database\n" * 100)
    before = notes.read_bytes()
    for args in (["query", "anything"], ["status"], ["build", str(docs)]):
        result = cli(*args, "--db", str(notes))
        assert result.exit_code == 2 and "not a SQLite database" in result.stderr, result.output
    assert notes.read_bytes() == before


def test_a_query_on_a_missing_index_creates_nothing(tmp_path):
    for args in (["query", "anything"], ["status"]):
        result = cli(*args, "--db", str(tmp_path / "missing.db"))
        assert result.exit_code == 2 and "no index at" in result.stderr
    assert list(tmp_path.iterdir()) == []


# -- 5 and 6. credentials never shown, never stored; URLs built with a URL library --------------------


def build_on_server(docs, index_path, backend: str, model: str, url: str):
    """`index build` of ``docs`` into ``index_path`` with an HTTP backend at ``url``."""
    return cli(
        "build", str(docs), "--db", str(index_path), "--backend", backend, "--model", model, "--base-url", url
    )


def test_basic_auth_credentials_echoed_by_a_server_are_masked(tmp_path, docs):
    with OpenAIServer(api_key="the-right-key") as server:
        url = server.base_url.replace("http://", f"http://someone:{SECRET}@")
        result = build_on_server(docs, tmp_path / "i.db", "openai", "m", url)
    encoded = base64.b64encode(f"someone:{SECRET}".encode()).decode()
    assert result.exit_code == 4 and "credentials refused" in result.stderr
    assert SECRET not in result.output and encoded not in result.output
    assert "Basic ***" in result.stderr


def test_a_key_in_the_query_string_is_sent_but_never_stored(tmp_path, docs):
    index_path = tmp_path / "i.db"
    with OpenAIServer() as server:
        url = f"{server.base_url}?api-version=2024-06-01&api_key={SECRET}"
        result = build_on_server(docs, index_path, "openai", "m", url)
        assert result.exit_code == 0, result.output
        assert server.requests[0].path == f"/v1/embeddings?api-version=2024-06-01&api_key={SECRET}"
    status = cli("status", "--db", str(index_path), "--json").stdout
    assert json.loads(status)["backend"]["base_url"] == f"{server.base_url}?api-version=2024-06-01"
    stored = b"".join(path.read_bytes() for path in tmp_path.glob("i.db*"))
    assert SECRET.encode() not in stored and SECRET not in status


def test_an_ollama_url_with_a_user_and_password_sends_them_as_basic_auth(tmp_path, docs):
    with OllamaServer() as server:
        url = server.url.replace("http://", f"http://someone:{SECRET}@")
        result = build_on_server(docs, tmp_path / "i.db", "ollama", "nomic-embed-text", url)
        assert result.exit_code == 0, result.output
        expected = "Basic " + base64.b64encode(f"someone:{SECRET}".encode()).decode()
        assert server.requests[0].headers["authorization"] == expected
    recorded = json.loads(cli("status", "--db", str(tmp_path / "i.db"), "--json").stdout)["backend"]
    assert recorded["host"] == server.url


# -- 7. one writer per index file, however it is named -------------------------------------------------


def test_the_writer_lock_holds_through_a_symlink_and_a_relative_path(tmp_path, docs):
    index_path = tmp_path / "index.db"
    build(index_path, docs)
    alias = tmp_path / "alias.db"
    alias.symlink_to(index_path)
    holder = subprocess.Popen(
        [
            sys.executable,
            str(TESTS / "build_worker.py"),
            str(index_path),
            str(write_corpus(tmp_path / "big", 20, paragraphs=30)),
            "--delay",
            "0.5",
            "--batch-size",
            "4",
            "--model-name",
            "hash-v1",
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout.readline().strip() == "started"
        with pytest.raises(IndexLockedError, match=r"being built by pid \d+"):
            build(alias, docs)
        with pytest.raises(IndexLockedError):
            build(os.path.relpath(index_path), docs)
    finally:
        holder.kill()
        holder.wait()


# -- 8. a file replaced by a FIFO after the walk -------------------------------------------------------


def test_a_file_replaced_by_a_fifo_after_the_walk_is_skipped_without_hanging(tmp_path, docs, monkeypatch):
    found = corpus.walk(docs)
    fifo_name = found.files[0].path
    (docs / fifo_name).unlink()
    os.mkfifo(docs / fifo_name)
    monkeypatch.setattr(corpus, "walk", lambda root, rules: found)  # as the walk saw it, before the swap
    warnings: list[str] = []
    started = time.monotonic()
    with Index.open(tmp_path / "index.db") as index:
        report = index.build(docs, backend=HashBackend(), warn=warnings.append)
    assert time.monotonic() - started < 30
    assert report.exit_code == 0 and report.files_added == 2
    assert any(f"{fifo_name}: skipped, not a regular file" in warning for warning in warnings)


# -- 9, 10, 11, 16. API misuse: huge k, an index with no builds, threads, a lone path string ---------


def test_large_k_works_and_absurd_k_is_a_usage_error(tmp_path, docs):
    index_path = tmp_path / "index.db"
    build(index_path, write_corpus(docs, 10, paragraphs=60), HashBackend())
    with Index.open(index_path, backend=HashBackend()) as index:
        for mode in ("hybrid", "vector", "keyword"):
            hits = index.search("word1x2x3", k=5000, mode=mode, min_score=0)
            assert 0 < len(hits) <= 5000
        with pytest.raises(ConfigError, match="k must be"):
            index.search("word", k=10**30, min_score=0)
    result = cli("query", "word", "--db", str(index_path), "-k", "99999999999999999999")
    assert result.exit_code == 2 and "Traceback" not in result.output


def test_status_of_an_index_with_no_builds(tmp_path):
    with Index.open(tmp_path / "index.db") as index:
        status = index.status()
    assert status["builds"] == [] and status["files"] == 0
    result = cli("status", "--db", str(tmp_path / "index.db"))
    assert result.exit_code == 0, result.output


def test_one_index_shared_by_threads_answers_every_search(tmp_path, docs):
    index_path = tmp_path / "index.db"
    build(index_path, write_corpus(docs, 20, paragraphs=30))
    failures: list[BaseException] = []
    answers: list[list[str]] = []
    with Index.open(index_path, backend=HashBackend()) as index:
        expected = [hit.citation for hit in index.search("word3x4x5 word7x1x2", min_score=0)]

        def searcher() -> None:
            try:
                for _ in range(25):
                    answers.append([hit.citation for hit in index.search("word3x4x5 word7x1x2", min_score=0)])
            except BaseException as error:
                failures.append(error)

        threads = [threading.Thread(target=searcher) for _ in range(8)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    assert failures == []
    assert len(answers) == 200 and all(answer == expected for answer in answers)


def test_a_single_path_pattern_is_one_pattern_not_its_characters(tmp_path, docs):
    index_path = tmp_path / "index.db"
    build(index_path, docs)
    with Index.open(index_path, backend=HashBackend()) as index:
        hits = index.search("a file about rivers", k=10, paths="sub/*", min_score=0)
    assert hits and {hit.path for hit in hits} == {"sub/deep.md"}


# -- 12. folders nested a thousand deep ------------------------------------------------------------


def test_folders_a_thousand_deep_are_walked(tmp_path):
    folder = tmp_path / "deep"
    current = folder
    for _ in range(1000):  # os.makedirs would itself recurse too deep
        current = current / "d"
        current.mkdir(parents=current == folder / "d")
    write(current / "bottom.md", "# Bottom\n\nThe deepest file of all.\n")
    write(folder / "top.md", "# Top\n\nA file at the top.\n")
    try:
        report = build(tmp_path / "index.db", folder)
    finally:  # shutil.rmtree, as pytest cleans up, would recurse too deep
        (current / "bottom.md").unlink()
        while current != folder:
            current.rmdir()
            current = current.parent
    assert report.exit_code == 0 and report.files_added == 2


# -- 13. storage failures: file size limit, too few descriptors, read-only, damaged ------------------


BUILD_SCRIPT = """
from helpers import HashBackend
from indexer import Index, IndexerError
try:
    with Index.open(sys.argv[1]) as index:
        report = index.build(sys.argv[2], backend=HashBackend(dimension=384, max_tokens=200), batch_size=16,
                             warn=lambda message: None)
    print(report.summary())
except IndexerError as error:
    print(f"error: {error}", file=sys.stderr)
    sys.exit(error.exit_code)
"""


def committed(index_path) -> tuple[int, dict]:
    with Index.open(index_path, create=False) as index:
        return index.store.counts()["files"], index.status()["builds"]


def test_a_file_size_limit_mid_build_is_one_line_and_the_record_matches_what_was_committed(tmp_path):
    docs = write_corpus(tmp_path / "docs", 20, paragraphs=30)
    index_path = tmp_path / "index.db"
    assert run_python(BUILD_SCRIPT, str(index_path), str(docs)).returncode == 0
    write_corpus(tmp_path / "docs" / "more", 60, paragraphs=30)
    size = sum(path.stat().st_size for path in tmp_path.glob("index.db*"))
    limited = run_python(
        BUILD_SCRIPT, str(index_path), str(docs), limit=(resource.RLIMIT_FSIZE, size + 400_000)
    )
    assert limited.returncode == 5, limited.stderr
    assert limited.stderr.count("\n") == 1 and "ulimit -f" in limited.stderr
    assert integrity(index_path) == []
    files, builds = committed(index_path)
    assert builds[0]["outcome"] == "error"
    assert 20 <= files < 80 and builds[0]["files_added"] == files - 20
    assert run_python(BUILD_SCRIPT, str(index_path), str(docs)).returncode == 0
    assert committed(index_path)[0] == 80


@pytest.mark.parametrize("descriptors", [7, 9, 12])
def test_too_few_file_descriptors_is_one_line_never_a_traceback(tmp_path, docs, descriptors):
    index_path = tmp_path / "index.db"
    script = f"import runpy; sys.argv = ['index', 'build', {str(docs)!r}, '--db', {str(index_path)!r}]\n"
    script += "from indexer.cli import main\nmain()"
    result = run_python(script, limit=(resource.RLIMIT_NOFILE, descriptors))
    assert "Traceback" not in result.stderr, result.stderr
    assert result.returncode in (0, 1, 5) and result.stderr.count("error:") <= 20


def as_another_user(command: list[str]) -> list[str]:
    """Run as 'nobody' when the tests run as root (root ignores file permissions)."""
    if os.getuid() != 0:
        return command
    if shutil.which("setpriv") is None:
        pytest.skip("running as root without setpriv: cannot test permissions")
    return ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", *command]


def shared_folder(tmp_path: Path) -> Path:
    """A folder outside pytest's private temporary folder, readable by any user."""
    folder = Path(tempfile_dir()) / f"indexer-ro-{os.getpid()}-{tmp_path.name}"
    if folder.exists():
        shutil.rmtree(folder)
    folder.mkdir(mode=0o755)
    return folder


def tempfile_dir() -> str:
    import tempfile

    return tempfile.gettempdir()


def test_a_read_only_index_in_a_read_only_folder_is_searched_and_a_build_is_one_line(tmp_path, docs):
    folder = shared_folder(tmp_path)
    try:
        index_path = folder / "index.db"
        build(index_path, docs)
        shutil.copytree(docs, folder / "docs")
        os.chmod(folder / "docs", 0o755)
        for path in folder.iterdir():
            path.chmod(0o555 if path.is_dir() else 0o444)
        folder.chmod(0o555)
        query = as_another_user(
            [*index_command(), "query", "rivers", "--mode", "keyword", "--db", str(index_path)]
        )
        answered = subprocess.run(query, capture_output=True, text=True, timeout=60)
        assert answered.returncode == 0, answered.stderr
        assert "sub/deep.md" in answered.stdout
        script = f"import sys; sys.path.insert(0, {str(TESTS)!r})\n{BUILD_SCRIPT}"
        command = as_another_user([sys.executable, "-c", script, str(index_path), str(folder / "docs")])
        refused = subprocess.run(command, capture_output=True, text=True, timeout=60)
        assert refused.returncode == 5, refused.stderr
        assert refused.stderr.count("\n") == 1 and "Traceback" not in refused.stderr
    finally:
        for path in [folder, *folder.rglob("*")]:
            path.chmod(stat.S_IRWXU | stat.S_IRGRP | stat.S_IXGRP | stat.S_IROTH | stat.S_IXOTH)
        shutil.rmtree(folder)


def test_a_damaged_index_is_one_line_for_every_command(tmp_path, docs):
    index_path = tmp_path / "index.db"
    build(index_path, write_corpus(docs, 20, paragraphs=30))
    connection = apsw.Connection(str(index_path))
    connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    connection.close()
    with open(index_path, "r+b") as stream:
        size = os.path.getsize(index_path)
        for offset in range(3 * 4096, size, 4096):
            stream.seek(offset)
            stream.write(b"\xde\xad\xbe\xef" * 16)
    for args in (["query", "word1x1x1", "--mode", "keyword"], ["status"], ["build", str(docs)]):
        result = cli(*args, "--db", str(index_path))
        assert result.exit_code == 5, (args, result.output)
        assert result.stderr.count("\n") == 1 and "damaged" in result.stderr


# -- 17. the smaller ones ---------------------------------------------------------------------------


def test_a_dangling_symlink_is_reported_as_dangling(tmp_path, docs):
    (docs / "gone.md").symlink_to(tmp_path / "nowhere.md")
    warnings: list[str] = []
    with Index.open(tmp_path / "index.db") as index:
        index.build(docs, backend=HashBackend(), warn=warnings.append)
    assert any("gone.md: skipped, dangling symbolic link" in warning for warning in warnings)


def test_files_left_by_a_killed_rebuild_are_removed_by_the_next_build(tmp_path, docs):
    index_path = tmp_path / "index.db"
    build(index_path, docs)
    for suffix in ("", "-wal", "-shm"):
        write(Path(f"{index_path}{REBUILD_SUFFIX}{suffix}"), "left by a killed rebuild")
    build(index_path, docs)
    assert sorted(path.name for path in tmp_path.iterdir() if path.name.startswith("index.db")) == [
        "index.db",
        "index.db-shm",
        "index.db-wal",
        "index.db.lock",
    ]


def test_a_killed_build_records_what_it_had_committed(tmp_path):
    docs = write_corpus(tmp_path / "docs", 300, paragraphs=1)  # groups of 64 files commit one by one
    index_path = tmp_path / "index.db"
    worker = subprocess.Popen(
        [
            sys.executable,
            str(TESTS / "build_worker.py"),
            str(index_path),
            str(docs),
            "--delay",
            "0.05",
            "--batch-size",
            "4",
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert worker.stdout.readline().strip() == "started"
    deadline = time.monotonic() + 60
    while committed_files(index_path) < 64 and time.monotonic() < deadline:
        time.sleep(0.05)
    worker.send_signal(signal.SIGKILL)
    worker.wait()
    files, builds = committed(index_path)
    assert 64 <= files < 300
    assert builds[0]["files_added"] == files and builds[0]["chunks_embedded"] > 0


def committed_files(index_path) -> int:
    try:
        return committed(index_path)[0]
    except ConfigError:
        return 0


def test_an_unknown_backend_kind_in_an_index_is_one_line(tmp_path, docs):
    build(tmp_path / "index.db", docs)  # recorded backend "test-hash" is not one the CLI can make
    result = cli("query", "rivers", "--db", str(tmp_path / "index.db"))
    assert result.exit_code == 2 and "unknown backend 'test-hash'" in result.stderr


def test_a_backend_that_cannot_embed_stops_with_exit_4(tmp_path, docs):
    class Nothing(HashBackend):
        def embed(self, texts):
            raise NotImplementedError("no model here")

    report = build(tmp_path / "index.db", docs, Nothing())
    assert report.exit_code == BackendUnreachableError.exit_code
    assert snapshot(tmp_path / "index.db")["files"] == []
