"""Storage failing under a build: a file size limit, too few file descriptors, a read-only folder, a
killed build or rebuild. Each is one line and a documented exit code, and the index holds exactly
what was committed (real SQLite files, real subprocesses under resource limits, SIGKILL)."""

from __future__ import annotations

import os
import resource
import shutil
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import write
from helpers import HashBackend, index_command, write_corpus
from runs import SUPPORT, build, integrity, run_python

from indexer import ConfigError, Index
from indexer.errors import StorageError
from indexer.store.sqlite import REBUILD_SUFFIX, SQLiteStore

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


@pytest.mark.heavy
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
    assert limited.stderr.count("\n") == 1
    assert "ulimit -f" in limited.stderr
    assert integrity(index_path) == []
    files, builds = committed(index_path)
    assert builds[0]["outcome"] == "error"
    assert 20 <= files < 80
    assert builds[0]["files_added"] == files - 20
    assert run_python(BUILD_SCRIPT, str(index_path), str(docs)).returncode == 0
    assert committed(index_path)[0] == 80


@pytest.mark.heavy
@pytest.mark.parametrize("descriptors", [7, 9, 12])
def test_too_few_file_descriptors_is_one_line_never_a_traceback(tmp_path, docs, descriptors):
    index_path = tmp_path / "index.db"
    script = f"import runpy; sys.argv = ['index', 'build', {str(docs)!r}, '--db', {str(index_path)!r}]\n"
    script += "from indexer.cli import main\nmain()"
    result = run_python(script, limit=(resource.RLIMIT_NOFILE, descriptors))
    assert "Traceback" not in result.stderr, result.stderr
    assert result.returncode in (0, 1, 5)
    assert result.stderr.count("error:") <= 20


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


@pytest.mark.heavy
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
        script = f"import sys; sys.path.insert(0, {str(SUPPORT)!r})\n{BUILD_SCRIPT}"
        command = as_another_user([sys.executable, "-c", script, str(index_path), str(folder / "docs")])
        refused = subprocess.run(command, capture_output=True, text=True, timeout=60)
        assert refused.returncode == 5, refused.stderr
        assert refused.stderr.count("\n") == 1
        assert "Traceback" not in refused.stderr
    finally:
        for path in [folder, *folder.rglob("*")]:
            path.chmod(stat.S_IRWXU | stat.S_IRGRP | stat.S_IXGRP | stat.S_IROTH | stat.S_IXOTH)
        shutil.rmtree(folder)


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


def committed_files(index_path) -> int:
    try:
        return committed(index_path)[0]
    except ConfigError:
        return 0


@pytest.mark.heavy
def test_a_killed_build_records_what_it_had_committed(tmp_path):
    docs = write_corpus(tmp_path / "docs", 300, paragraphs=1)  # groups of 64 files commit one by one
    index_path = tmp_path / "index.db"
    worker = subprocess.Popen(
        [
            sys.executable,
            str(SUPPORT / "build_worker.py"),
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
    assert builds[0]["files_added"] == files
    assert builds[0]["chunks_embedded"] > 0


@pytest.mark.parametrize("table", ["builds", "files", "meta", "vector_log"])
def test_an_index_missing_a_table_is_one_line_naming_it_never_a_traceback(tmp_path, table):
    """A table dropped by hand or by a tool: the build and the searches that need it stop at a
    storage error (exit code 5) naming the index and the table, not at SQLite's own exception."""
    docs = write_corpus(tmp_path / "docs", 3, paragraphs=2)
    index_path = tmp_path / "index.db"
    with Index.open(index_path, backend=HashBackend()) as index:
        assert index.build(docs).exit_code == 0
    with SQLiteStore.open(index_path, writable=True) as store, store.transaction():
        store.db.execute(f"DROP TABLE {table}")
    write_corpus(docs, 4, paragraphs=2, version="v2")
    attempts = [
        lambda index: index.build(docs),
        lambda index: index.search("paragraph", min_score=0),
        lambda index: index.status(),
    ]
    refused = 0
    for attempt in attempts:
        with Index.open(index_path, backend=HashBackend()) as index:
            try:
                attempt(index)
            except StorageError as error:
                assert error.exit_code == 5
                assert f"index {index_path}: the file is damaged" in str(error)
                assert f"no such table: {table}" in str(error) or f"no such table: main.{table}" in str(error)
                refused += 1
    assert refused  # a build needs every table
