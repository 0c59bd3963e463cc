"""The files beside a SQLite index that anyone who can write in its folder can change: the vector
graph and its float32 rows (damaged, truncated, emptied, swapped for another index's, replaced by a
link or a FIFO, changed under a running process or server), the scratch names a save writes through
and the lock (links planted there). No process crashes, no link is followed, no score comes from
bytes the index did not record: searches go on exactly with sqlite-vec and say so once, `index
status` says so, and the next build mends it. Real files and real damage throughout; every search
over a damaged file runs in a process of its own, so that a crash fails the test instead of ending
it."""

from __future__ import annotations

import hashlib
import json
import os
import random
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from serving import ServerProcess, plugin_env, plugin_folder, run_index
from test_store_sqlite_vectors import clustered_vectors, queries_near, written

from indexer.store.sqlite import GRAPH_RECORD, SQLiteStore

pytestmark = pytest.mark.usefixtures("graph_walked")  # as small as these indexes are
TESTS = Path(__file__).resolve().parent
SUPPORT = TESTS / "support"

#: Opens the index given, searches it twice for each query given (a .npy file), and prints what it
#: found, what sqlite-vec's exact scan finds, whether the graph was used, what it warned and its
#: status. With a third argument, it first searches once, then changes the file named by that
#: argument (``truncate``, ``rewrite`` or ``swap`` as a fourth), and only then searches: the damage
#: happens under a process that holds the file open.
SEARCH = """
import json, logging, os, sys
import numpy as np
from test_store_side_files import damage_under
from indexer.store import sqlite_vectors
from indexer.store.sqlite import SQLiteStore

sqlite_vectors.WALK_ROW_COST = 0  # the graph walked, as small as the index is (graph_walked)
heard = []

class Heard(logging.Handler):
    def emit(self, record):
        heard.append(record.getMessage())

logging.getLogger("indexer.store").addHandler(Heard())
queries = np.load(sys.argv[2])
with SQLiteStore.open(sys.argv[1]) as store:
    if len(sys.argv) > 3:
        store.expect_many_searches()
        store.nearest(queries[0], 10)
        damage_under(sys.argv[3], sys.argv[4])
    found = [store.nearest(query, 10) for query in queries]
    again = [store.nearest(query, 10) for query in queries]
    graph = store._search is not None
    exact = [store._scan(query, 10, None) for query in queries]
    ids = np.array(sorted({chunk_id for hits in found for chunk_id, _ in hits}), dtype=np.int64)
    held, rows = store._vectors_of(ids)
    rows = rows / np.linalg.norm(rows, axis=1, keepdims=True)
    truth = [
        {int(i): 1 - float(r @ (q / np.linalg.norm(q))) for i, r in zip(held, rows)} for q in queries
    ]
    status = store.vector_search_status()
print(json.dumps({
    "found": found, "again": again, "exact": exact, "graph": graph, "heard": heard,
    "status": status, "truth": [{str(k): v for k, v in t.items()} for t in truth],
}))
"""


def searched(index: Path, queries: np.ndarray, *under: str) -> dict:
    """What a process of its own finds in ``index`` (see ``SEARCH``); fails the test if it crashes."""
    np.save(index.parent / "queries.npy", queries)
    script = f"import sys; sys.path[:0] = [{str(TESTS)!r}, {str(SUPPORT)!r}]\n{SEARCH}"
    result = subprocess.run(
        [sys.executable, "-c", script, str(index), str(index.parent / "queries.npy"), *under],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, (
        f"the search process ended with {result.returncode}: {result.stderr[-2000:]}"
    )
    return json.loads(result.stdout)


def damage_under(path: str, how: str) -> None:
    """Change the file at ``path`` as another process would under a reader."""
    if how == "truncate":
        os.truncate(path, os.path.getsize(path) // 3)
    elif how == "rewrite":
        rewrite_bytes(Path(path), count=3000, seed=5, keep_times=False)
    elif how == "swap":
        other = path + ".other"
        shutil.copyfile(path, other)
        rewrite_bytes(Path(other), count=3000, seed=6, keep_times=False)
        os.replace(other, path)


def rewrite_bytes(path: Path, count: int, seed: int, keep_times: bool = True, start: int = 64) -> None:
    """``count`` bytes of the file changed in place; its size, inode and (``keep_times``) times kept
    as they were, as a careful attacker keeps them."""
    info = path.stat()
    data = bytearray(path.read_bytes())
    rng = random.Random(seed)
    for _ in range(count):
        place = rng.randrange(start, len(data))
        data[place] ^= rng.randrange(1, 256)
    with open(path, "r+b") as file:
        file.write(data)
    if keep_times:
        os.utime(path, ns=(info.st_atime_ns, info.st_mtime_ns))


def recorded_slot(index: Path, key: str = GRAPH_RECORD) -> str:
    with SQLiteStore.open(index) as store:
        return json.loads(store.get_meta(key))["slot"]


GRAPH_DAMAGE = [
    "bytes changed in place",
    "truncated",
    "empty",
    "a huge length in its header",
    "another index's graph",
    "a link to another file",
    "a FIFO",
    "missing",
]


def damage_graph(graph: Path, how: str, other: Path) -> None:
    info = graph.stat()
    if how == "bytes changed in place":  # 50 bytes: enough to send usearch out of its buffers
        rewrite_bytes(graph, count=50, seed=2, start=100)
    elif how == "truncated":
        os.truncate(graph, info.st_size // 2)
    elif how == "empty":
        os.truncate(graph, 0)
    elif how == "a huge length in its header":  # the count of vectors it says it holds
        with open(graph, "r+b") as file:
            file.write(b"\xff\xff\xff\x7f")
        os.utime(graph, ns=(info.st_atime_ns, info.st_mtime_ns))
    elif how == "another index's graph":  # same dimension, same count, same size
        assert other.stat().st_size == info.st_size
        os.replace(other, graph)
    elif how == "a link to another file":
        graph.unlink()
        graph.symlink_to(other)
    elif how == "a FIFO":
        graph.unlink()
        os.mkfifo(graph)
    else:
        graph.unlink()


@pytest.mark.heavy
@pytest.mark.parametrize("how", GRAPH_DAMAGE)
def test_a_damaged_graph_is_never_parsed_searches_stay_exact_say_so_once_and_a_build_mends_it(tmp_path, how):
    vectors = clustered_vectors(1500)
    index = tmp_path / "index.db"
    queries = queries_near(vectors, 8)
    with written(index, vectors):
        pass
    with written(tmp_path / "other.db", clustered_vectors(1500, seed=99)):
        pass
    damage_graph(tmp_path / "index.db.vectors-a", how, tmp_path / "other.db.vectors-a")

    seen = searched(index, queries)
    assert seen["graph"] is False
    assert seen["found"] == seen["exact"] == seen["again"]  # sqlite-vec's exact answers, every time
    assert len(seen["heard"]) == 1  # one warning for the process, not one per search
    assert "index.db.vectors-a" in seen["heard"][0] and "sqlite-vec" in seen["heard"][0]
    assert seen["status"]["structure"].startswith("none: its graph")
    assert len(seen["status"]["problems"]) == 1
    assert seen["status"]["problems"][0] in seen["status"]["structure"]

    with SQLiteStore.open(index, writable=True) as store:
        store.update_vector_graph()  # a build's end with nothing new: it saves the graph again
    assert recorded_slot(index) == "b"
    mended = searched(index, queries)
    assert mended["graph"] is True
    assert mended["heard"] == []
    assert mended["status"]["problems"] == []
    assert all(
        found[0][0] == exact[0][0] for found, exact in zip(mended["found"], mended["exact"], strict=True)
    )


@pytest.mark.heavy
def test_a_graph_restored_from_a_copy_is_checked_in_full_used_and_recorded_anew_not_rebuilt(tmp_path):
    """Its bytes are the recorded ones under another identity (a backup restored, a chmod): every
    process checks its SHA-256 and uses it, and the next build records the new identity."""
    vectors = clustered_vectors(1500)
    index = tmp_path / "index.db"
    queries = queries_near(vectors, 5)
    with written(index, vectors):
        pass
    graph = tmp_path / "index.db.vectors-a"
    before = searched(index, queries)
    shutil.copy2(graph, tmp_path / "backup")
    os.replace(tmp_path / "backup", graph)
    seen = searched(index, queries)
    assert seen["graph"] is True and seen["heard"] == [] and seen["found"] == before["found"]
    assert "checked in full" in seen["status"]["structure"] and seen["status"]["problems"] == []
    with SQLiteStore.open(index, writable=True) as store:
        store.update_vector_graph()
    assert recorded_slot(index) == "a"  # the same file, recorded again: no new graph was built
    recorded = searched(index, queries)
    assert recorded["status"]["structure"] == "hnsw graph (usearch, int8)"
    assert recorded["found"] == before["found"]


def test_a_saved_file_is_recorded_only_once_a_later_write_would_change_its_identity(tmp_path):
    from indexer.store import sqlite_side_files

    path = tmp_path / "saved"
    path.write_bytes(b"graph bytes")
    sha256 = hashlib.sha256(b"graph bytes").hexdigest()
    file, checked_ns = sqlite_side_files.settle(str(path), sha256)
    assert file[2] + sqlite_side_files.TICK_NS <= checked_ns  # its change time a tick in the past
    record = sqlite_side_files.SideFileRecord("a", 0, 0, file, sha256, checked_ns)
    assert record.unchanged(path.stat())
    path.write_bytes(b"graph bytez")  # the same size, written after: another change time
    assert not record.unchanged(path.stat())
    with pytest.raises(OSError):
        sqlite_side_files.settle(str(path), sha256)


@pytest.mark.heavy
@pytest.mark.parametrize("how", ["truncate", "rewrite", "swap"])
def test_a_graph_changed_under_a_process_that_searches_it_never_reaches_that_process(tmp_path, how):
    """It searches its own copy of the bytes it checked: a mapping of the file would fault it."""
    vectors = clustered_vectors(1500)
    index = tmp_path / "index.db"
    queries = queries_near(vectors, 8)
    with written(index, vectors):
        pass
    before = searched(index, queries)
    seen = searched(index, queries, str(tmp_path / "index.db.vectors-a"), how)
    assert seen["graph"] is True
    assert seen["found"] == before["found"] == seen["again"]
    assert seen["heard"] == []


ROWS_DAMAGE = ["3,000 bytes changed in place", "truncated", "another index's rows", "a FIFO"]


@pytest.mark.heavy
@pytest.mark.parametrize("how", ROWS_DAMAGE)
def test_a_damaged_float32_copy_gives_no_score_is_said_once_and_the_next_build_writes_it_again(tmp_path, how):
    vectors = clustered_vectors(1500)
    index = tmp_path / "index.db"
    queries = queries_near(vectors, 8)
    with written(index, vectors):
        pass
    rows = tmp_path / "index.db.vectors-a.f32"
    if how == "3,000 bytes changed in place":
        rewrite_bytes(rows, count=3000, seed=3)
    elif how == "truncated":
        os.truncate(rows, rows.stat().st_size - 64 * 4)
    elif how == "a FIFO":
        rows.unlink()
        os.mkfifo(rows)
    else:
        with written(tmp_path / "other.db", clustered_vectors(1500, seed=99)):
            pass
        os.replace(tmp_path / "other.db.vectors-a.f32", rows)
    seen = searched(index, queries)
    assert seen["graph"] is True  # the graph still serves; its candidates are scored on sqlite-vec's rows
    assert_exact_scores(seen)
    assert len(seen["heard"]) == 1 and "float32 copy" in seen["heard"][0]
    assert seen["status"]["rows_file_bytes"] == 0
    assert "float32 copy" in seen["status"]["problems"][0]

    with SQLiteStore.open(index, writable=True) as store:
        store.update_vector_graph()
    mended = searched(index, queries)
    assert mended["heard"] == [] and mended["status"]["problems"] == []
    assert mended["status"]["rows_file_bytes"] > 1500 * 64 * 4
    assert_exact_scores(mended)


@pytest.mark.heavy
@pytest.mark.parametrize("how", ["truncate", "rewrite", "swap"])
def test_a_float32_copy_changed_under_a_process_that_reads_it_gives_no_wrong_score_and_no_fault(
    tmp_path, how
):
    vectors = clustered_vectors(1500)
    index = tmp_path / "index.db"
    queries = queries_near(vectors, 8)
    with written(index, vectors):
        pass
    seen = searched(index, queries, str(tmp_path / "index.db.vectors-a.f32"), how)
    assert seen["graph"] is True
    assert_exact_scores(seen)
    # replaced by a move, the file it holds open is intact, but unlinked: that too changes its change
    # time, and it is dropped as well
    assert len(seen["heard"]) == 1 and "float32 copy" in seen["heard"][0]


def assert_exact_scores(seen: dict) -> None:
    """Every hit's distance is the one sqlite-vec's row of it gives, and the nearest is exact search's."""
    for found, truth, exact in zip(seen["found"], seen["truth"], seen["exact"], strict=True):
        assert [distance for _, distance in found] == pytest.approx(
            [truth[str(chunk_id)] for chunk_id, _ in found], abs=1e-6
        )
        assert found[0][0] == exact[0][0]


@pytest.mark.heavy
@pytest.mark.parametrize("slot_names", [("a", "b"), ("b",)])
def test_links_planted_where_a_save_writes_are_never_followed(tmp_path, slot_names):
    """Links at the scratch names a save writes through, and at the final names it renames onto, to a
    file of the user's: the file is untouched and the graph files are plain files."""
    vectors = clustered_vectors(1200)
    index = tmp_path / "index.db"
    thesis = tmp_path / "thesis.txt"
    thesis.write_text("three years of work\n")
    planted = [f"index.db.vectors-{slot}{suffix}" for slot in slot_names for suffix in (".tmp", ".f32.tmp")]
    if slot_names == ("b",):  # the names the next save renames onto
        planted += ["index.db.vectors-b", "index.db.vectors-b.f32"]
    with written(index, vectors, graph=False) as store:
        for name in planted:
            (tmp_path / name).symlink_to(thesis)
        store.update_vector_graph(min_changes=1)
        store.update_vector_graph(min_changes=0)  # and again, into the other slot
    assert thesis.read_text() == "three years of work\n"
    for name in (
        "index.db.vectors-a",
        "index.db.vectors-b",
        "index.db.vectors-a.f32",
        "index.db.vectors-b.f32",
    ):
        assert stat.S_ISREG((tmp_path / name).lstat().st_mode), name
    assert not [path.name for path in tmp_path.iterdir() if path.name.endswith(".tmp")]
    seen = searched(index, queries_near(vectors, 5))
    assert seen["graph"] is True and seen["heard"] == []
    assert_exact_scores(seen)


@pytest.mark.parametrize("name", ["index.db.lock", "index.db-wal", "index.db-shm"])
def test_a_link_planted_at_the_lock_or_sqlite_files_is_never_followed(tmp_path, name):
    """The build is refused in one line (exit code 5), or SQLite removes the link and makes its
    file anew (a WAL no database names); the file the link points to is untouched either way."""
    from helpers import HashBackend, write_corpus

    from indexer import Index, IndexerError

    docs = write_corpus(tmp_path / "docs", 3)
    thesis = tmp_path / "thesis.txt"
    thesis.write_text("three years of work\n")
    (tmp_path / name).symlink_to(thesis)
    try:
        with Index.open(tmp_path / "index.db") as index:
            index.build(docs, backend=HashBackend(), warn=lambda message: None)
    except IndexerError as refused:
        assert refused.exit_code == 5 and "\n" not in str(refused)
    else:
        assert stat.S_ISREG((tmp_path / name).lstat().st_mode)
    assert thesis.read_text() == "three years of work\n"
    if name == "index.db.lock":  # ours: always refused, and said so
        with pytest.raises(IndexerError, match="symbolic link"), Index.open(tmp_path / "index.db") as index:
            index.build(docs, backend=HashBackend(), warn=lambda message: None)


@pytest.mark.heavy
def test_a_folder_planted_at_a_scratch_name_is_one_line_exit_5_and_the_index_as_it_was(tmp_path):
    from indexer import StorageError

    vectors = clustered_vectors(1200)
    index = tmp_path / "index.db"
    with written(index, vectors) as store:
        (tmp_path / "index.db.vectors-b.f32.tmp").mkdir()
        (tmp_path / "index.db.vectors-b.f32.tmp" / "kept").write_text("x")
        with pytest.raises(StorageError) as refused:
            store.update_vector_graph(min_changes=0)
    assert refused.value.exit_code == 5 and "\n" not in str(refused.value)
    assert "saving its vector graph failed" in str(refused.value)
    assert (tmp_path / "index.db.vectors-b.f32.tmp" / "kept").read_text() == "x"
    assert recorded_slot(index) == "a"
    seen = searched(index, queries_near(vectors, 5))
    assert seen["graph"] is True and seen["heard"] == []


# -- the command line and a running server ------------------------------------------------------


@pytest.fixture(scope="module")
def plugins(tmp_path_factory) -> Path:
    return plugin_folder(tmp_path_factory.mktemp("plugins"))


@pytest.fixture(scope="module")
def walked(tmp_path_factory) -> Path:
    """A folder whose ``sitecustomize`` walks the graph in every process started with it on
    ``PYTHONPATH``, as ``graph_walked`` does in this one: these indexes are small enough to be
    searched exactly, and the files under test are the graph's."""
    folder = tmp_path_factory.mktemp("walked")
    (folder / "sitecustomize.py").write_text(
        "from indexer.store import sqlite_vectors\n\nsqlite_vectors.WALK_ROW_COST = 0\n"
    )
    return folder


@pytest.fixture
def env(plugins, walked) -> dict[str, str]:
    env = plugin_env(plugins)
    env["PYTHONPATH"] = os.pathsep.join([str(walked), env["PYTHONPATH"]])
    return env


def corpus_with_a_graph(folder: Path) -> Path:
    """Markdown files of more chunks than a build folds into a graph at its end."""
    from helpers import write_corpus

    return write_corpus(folder, files=150, paragraphs=12)


def vector_hits(index: Path, env: dict[str, str], question: str = "word3x2x4") -> tuple[list, str]:
    asked = run_index("query", question, "--db", str(index), "--mode", "vector", "--format", "json", env=env)
    assert asked.returncode == 0, asked.stderr
    return [(hit["path"], hit["start_line"]) for hit in json.loads(asked.stdout)], asked.stderr


def vector_status(index: Path, env: dict[str, str]) -> dict:
    shown = run_index("status", "--db", str(index), "--json", env=env)
    assert shown.returncode == 0, shown.stderr
    return json.loads(shown.stdout)["vector_search"]


@pytest.mark.heavy
@pytest.mark.parametrize("mend", ["plain build", "build after an edit", "--rebuild"])
def test_index_query_status_and_build_with_a_graph_changed_in_place(tmp_path, env, mend):
    docs = corpus_with_a_graph(tmp_path / "docs")
    index = tmp_path / "index.db"
    built = run_index("build", str(docs), "--db", str(index), "--backend", "hash-plugin", "-q", env=env)
    assert built.returncode == 0, built.stderr
    expected, quiet = vector_hits(index, env)
    assert quiet == ""
    slot = recorded_slot(index)
    rewrite_bytes(tmp_path / f"index.db.vectors-{slot}", count=50, seed=2, start=100)

    hits, said = vector_hits(index, env)
    assert hits == expected
    assert said.count("\n") == 1 and said.startswith("warning: index") and "SHA-256 differs" in said
    status = vector_status(index, env)
    assert status["structure"].startswith("none: its graph") and status["problems"]

    if mend == "build after an edit":
        (docs / "doc00.md").write_text("# Document 0\n\nA page about glaciers.\n", encoding="utf-8")
    extra = ["--rebuild"] if mend == "--rebuild" else []
    rebuilt = run_index("build", str(docs), "--db", str(index), *extra, "-q", env=env)
    assert rebuilt.returncode == 0, rebuilt.stderr
    status = vector_status(index, env)
    assert status["structure"] == "hnsw graph (usearch, int8)" and status["problems"] == []
    hits, said = vector_hits(index, env)
    assert said == ""
    assert hits[0] == expected[0]


@pytest.mark.heavy
def test_a_server_outlives_its_graph_and_rows_truncated_rewritten_and_swapped_under_it(tmp_path, env):
    docs = corpus_with_a_graph(tmp_path / "docs")
    index = tmp_path / "index.db"
    built = run_index("build", str(docs), "--db", str(index), "--backend", "hash-plugin", "-q", env=env)
    assert built.returncode == 0, built.stderr
    graph = tmp_path / f"index.db.vectors-{recorded_slot(index)}"
    rows = Path(f"{graph}.f32")
    params = {"q": "word3x2x4", "mode": "vector", "k": 10}
    with ServerProcess(index, env=env, log=tmp_path / "serve.log") as server:
        expected = server.get("/search", params=params).json()
        for path, how in (
            (graph, "rewrite"),
            (graph, "truncate"),
            (graph, "swap"),
            (rows, "rewrite"),
            (rows, "truncate"),
        ):
            if how == "swap":
                shutil.copyfile(graph, tmp_path / "copy")
                rewrite_bytes(tmp_path / "copy", count=50, seed=9, start=100)
                os.replace(tmp_path / "copy", graph)
            else:
                damage_under(str(path), how)
            answer = server.get("/search", params=params)
            assert answer.status_code == 200, (path.name, how, server.output())
            assert [(hit["path"], hit["start_line"]) for hit in answer.json()] == [
                (hit["path"], hit["start_line"]) for hit in expected
            ]
            assert [hit["score"] for hit in answer.json()] == pytest.approx(
                [hit["score"] for hit in expected], abs=1e-6
            )
        assert server.process.poll() is None
    assert server.output().count("float32 copy") == 1


# -- write errors -------------------------------------------------------------------------------

#: A build that meets a full disk or the file size limit (HOW) at a STAGE: its first commit of files
#: (``database``), or the moment the scratch file of its new graph, or of its rows, is made:
#: ``python -c FAILING INDEX FOLDER STAGE HOW``, the CLI in this process (progress and warnings
#: shown), printing the exit code and what went to stderr as JSON.
FAILING = """
import contextlib, io, json, os, resource, sys
from indexer.store import sqlite_side_files
from indexer.store.sqlite import SQLiteStore
from indexer.cli import main

index, folder, stage, how = sys.argv[1:5]

def fail_from_now_on(folder_of):
    if how == "file size limit":
        resource.setrlimit(resource.RLIMIT_FSIZE, (4096, resource.RLIM_INFINITY))
    else:  # the disk full but for a few blocks
        room = os.statvfs(folder_of)
        filler = os.open(os.path.join(folder_of, "filler"), os.O_WRONLY | os.O_CREAT, 0o600)
        os.posix_fallocate(filler, 0, room.f_bavail * room.f_frsize - 8 * room.f_frsize)
        os.close(filler)

if stage == "database":  # the first group of files the writer commits
    write_files = SQLiteStore.write_files

    def failing_commit(store, files):
        if not os.path.exists(os.path.join(os.path.dirname(index), "filler")):
            fail_from_now_on(os.path.dirname(index))
        return write_files(store, files)

    SQLiteStore.write_files = failing_commit
else:  # the moment the scratch file of the graph, or of its rows, is made
    suffix = {"graph": ".vectors-b.tmp", "rows": ".vectors-b.f32.tmp"}[stage]
    made = sqlite_side_files.create_fresh

    def failing(path, *args):
        descriptor = made(path, *args)
        if path.endswith(suffix):
            fail_from_now_on(os.path.dirname(path))
        return descriptor

    sqlite_side_files.create_fresh = failing
said = io.StringIO()
sys.argv = ["index", "build", folder, "--db", index]
with contextlib.redirect_stderr(said):
    try:
        main()
        code = 0
    except SystemExit as ended:
        code = ended.code
print(json.dumps({"code": code, "said": said.getvalue()}))
"""


def small_file_system(folder: Path) -> list[str] | None:
    """The command prefix that runs a process with a tmpfs of a few MB mounted at ``folder`` (in a
    mount namespace of its own), or None where this system does not allow it."""
    if shutil.which("unshare") is None:
        return None
    prefix = [
        "unshare",
        "--mount",
        "--map-root-user",
        "sh",
        "-c",
        'mount -t tmpfs -o size=24m tmpfs "$0" && exec "$@"',
        str(folder),
    ]
    probe = subprocess.run([*prefix, "true"], capture_output=True, timeout=30)
    return prefix if probe.returncode == 0 else None


#: Inside the small file system: a first build (its graph in slot a), then a second root whose
#: chunks the build's end folds into a new graph in slot b, failing; then what the index holds, the
#: filler removed, and a third build.
SCENARIO = """
import json, os, subprocess, sys
folder, first, second, stage, how = sys.argv[1:6]
index = os.path.join(folder, "index.db")
command = [sys.executable, "-c", "from indexer.cli import main; main()"]

def run(*args):
    return subprocess.run([*command, *args], capture_output=True, text=True, timeout=300)

def state():
    status = json.loads(run("status", "--db", index, "--json").stdout)
    hits = json.loads(run("query", "word3x2x4", "--db", index, "--mode", "vector", "--format", "json").stdout)
    return {"files": status["files"], "vectors": status["vector_search"], "hits": [h["path"] for h in hits],
            "names": sorted(os.listdir(folder)), "outcome": status["builds"][0]["outcome"]}

built = run("build", first, "--db", index, "--backend", "hash-plugin", "-q")
assert built.returncode == 0, built.stderr
before = state()
failing = [sys.executable, "-c", sys.argv[6], index, second, stage, how]
failed = subprocess.run(failing, capture_output=True, text=True, timeout=300)
after = state()
if os.path.exists(os.path.join(folder, "filler")):
    os.remove(os.path.join(folder, "filler"))
again = run("build", second, "--db", index, "-q")
print(json.dumps({
    "before": before, "failed": json.loads(failed.stdout or "{}"), "failed_stderr": failed.stderr[-3000:],
    "after": after, "again": again.returncode, "again_stderr": again.stderr, "mended": state(),
}))
"""


@pytest.mark.heavy
@pytest.mark.parametrize(
    ("how", "stage"),
    [("full disk", "database"), ("full disk", "graph"), ("full disk", "rows"),
     ("file size limit", "graph"), ("file size limit", "rows")],
)  # fmt: skip
def test_a_write_error_at_any_stage_of_a_build_is_exit_5_in_one_line_and_the_index_as_it_was(
    tmp_path, env, how, stage
):
    folder = tmp_path / "index"
    folder.mkdir()
    first = corpus_with_a_graph(tmp_path / "first")
    from helpers import write_corpus

    second = write_corpus(tmp_path / "second", files=150, paragraphs=12, version="v2")
    prefix: list[str] = []
    if how == "full disk":
        prefix = small_file_system(folder) or []
        if not prefix:
            pytest.skip("no mount namespace here for a small file system")
    ran = subprocess.run(
        [*prefix, sys.executable, "-c", SCENARIO, str(folder), str(first), str(second), stage, how, FAILING],
        capture_output=True,
        text=True,
        timeout=900,
        env=env,
    )
    assert ran.returncode == 0, ran.stderr[-3000:]
    report = json.loads(ran.stdout)
    failed = report["failed"]
    assert failed, report["failed_stderr"]
    assert failed["code"] == 5, failed
    said = failed["said"].splitlines()[-1]  # after the progress bar's lines, the one line it says
    assert [line for line in failed["said"].splitlines() if line.startswith(("error", "warning"))] == [said]
    assert "Traceback" not in failed["said"] and said.startswith("error: index")
    if how == "full disk":
        assert "No space left on device" in said or "the disk is full" in said
    else:
        assert "File too large" in said
    before, after, mended = report["before"], report["after"], report["mended"]
    # its record says it failed (where even that could be written: past the file size limit, it
    # cannot, and the record of a build that is not running reads as interrupted)
    assert after["outcome"] == ("error" if how == "full disk" else "interrupted")
    assert after["vectors"]["file"] == before["vectors"]["file"]  # the graph it had
    assert after["vectors"]["problems"] == []
    assert not [name for name in after["names"] if name.endswith(".tmp")]
    if stage == "database":  # nothing of the second folder committed
        assert after["files"] == 150 and after["hits"] == before["hits"]
    else:  # what the build committed before its end stays, scored beside the graph
        assert "saving its vector graph failed" in said
        assert after["files"] == 300
        assert after["vectors"]["pending_changes"] > 1000
    assert report["again"] == 0, report["again_stderr"]
    assert mended["vectors"]["problems"] == []
    assert mended["vectors"]["structure"] == "hnsw graph (usearch, int8)"
    assert mended["vectors"]["file"] != before["vectors"]["file"]
    assert mended["vectors"]["pending_changes"] == 0
    assert mended["files"] == 300
