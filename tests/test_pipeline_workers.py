"""Files read and chunked by worker processes: the same index as read in the build's process, in
walk order; a reader's failure or a worker's death is one file's failure; a stopped build leaves no
worker behind."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import snapshot, write
from helpers import KILLS_ITS_READER, HashBackend, count_words_or_die, write_corpus

from indexer import Index
from indexer.pipeline.workers import FEW_FILES, default_workers

pytestmark = pytest.mark.heavy  # worker processes

WORKER = Path(__file__).parent / "support" / "build_worker.py"


def build(index_path: Path, folder: Path, backend: HashBackend, **options):
    with Index.open(index_path) as index:
        return index.build(folder, backend=backend, warn=lambda message: None, **options)


def mixed_folder(folder: Path) -> Path:
    """Files of very different sizes (a worker finishes the small ones first), and a damaged one,
    an empty one and a binary one."""
    write_corpus(folder, 24, paragraphs=5)
    big = "\n\n".join(f"Paragraph {n}: " + " ".join(f"big{n}x{w}" for w in range(50)) for n in range(400))
    write(folder / "doc00-big.md", f"# Big\n\n{big}\n")
    (folder / "broken.pdf").write_bytes(b"%PDF-1.4 not really")
    write(folder / "empty.md", "  \n")
    (folder / "blob.txt").write_bytes(b"\x00\x01\x02binary" * 100)
    return folder


def files_in_commit_order(index_path: Path) -> list[tuple]:
    with Index.open(index_path, create=False) as index:
        return [tuple(row) for row in index.store.query("SELECT path, status FROM files ORDER BY id")]


def test_files_read_by_workers_give_the_index_read_in_process_gives_in_walk_order(tmp_path):
    folder = mixed_folder(tmp_path / "docs")
    alone = build(tmp_path / "alone.db", folder, HashBackend(), workers=0)
    pooled = build(tmp_path / "pooled.db", folder, HashBackend(), workers=2)
    assert alone.files_added == pooled.files_added == 25
    assert pooled.chunks_embedded == alone.chunks_embedded > 400
    assert [failure.path for failure in pooled.failures] == ["broken.pdf"]
    assert pooled.failures == alone.failures
    assert pooled.skipped_by_kind() == alone.skipped_by_kind() == {"empty": 1, "binary": 1}
    assert pooled.stage_seconds["parse"] > 0 and pooled.stage_seconds["chunk"] > 0
    pooled_index, alone_index = snapshot(tmp_path / "pooled.db"), snapshot(tmp_path / "alone.db")
    for part in ("files", "chunks", "vectors", "keywords"):  # meta holds each index's own random id
        assert pooled_index[part] == alone_index[part]
    assert files_in_commit_order(tmp_path / "pooled.db") == files_in_commit_order(tmp_path / "alone.db")


def test_a_rerun_with_workers_reads_only_what_changed(tmp_path):
    folder = write_corpus(tmp_path / "docs", 12)
    build(tmp_path / "index.db", folder, HashBackend(), workers=2)
    write(folder / "doc03.md", "# Changed\n\nA new text about otters.\n")
    backend = HashBackend()
    again = build(tmp_path / "index.db", folder, backend, workers=2)
    assert (again.files_changed, again.files_unchanged) == (1, 11)
    assert again.chunks_embedded == backend.calls == 1
    assert "otters" in backend.embedded[0]


class KillingBackend(HashBackend):
    """Counts tokens with :func:`count_words_or_die`: a worker reading a file holding the word dies."""

    def token_counter(self):
        return count_words_or_die


def test_a_worker_killed_under_a_file_fails_that_file_alone_and_the_build_goes_on(tmp_path):
    folder = write_corpus(tmp_path / "docs", 20)
    write(folder / "doc07.md", f"# Poison\n\nThis text holds {KILLS_ITS_READER} in it.\n")
    report = build(tmp_path / "index.db", folder, KillingBackend(), workers=2)
    assert [failure.path for failure in report.failures] == ["doc07.md"]
    assert "worker process reading it died" in report.failures[0].reason
    assert report.files_added == 19
    assert report.exit_code == 1
    indexed = {path for path, status in files_in_commit_order(tmp_path / "index.db") if status == "indexed"}
    assert indexed == {f"doc{number:02}.md" for number in range(20)} - {"doc07.md"}
    write(folder / "doc07.md", "# Mended\n\nA harmless text.\n")
    mended = build(tmp_path / "index.db", folder, KillingBackend(), workers=2)
    assert (mended.files_added, mended.failures) == (1, [])


def descendants(pid: int) -> set[int]:
    """The processes under ``pid`` (its children, theirs...), from /proc."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                parent = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            children.setdefault(parent, []).append(int(entry.name))
    found, stack = set(), [pid]
    while stack:
        for child in children.get(stack.pop(), []):
            found.add(child)
            stack.append(child)
    return found


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def test_a_build_stopped_by_sigterm_leaves_no_worker_behind_and_keeps_what_it_committed(tmp_path):
    folder = write_corpus(tmp_path / "docs", 200, paragraphs=8)
    command = [sys.executable, str(WORKER), str(tmp_path / "index.db"), str(folder), "--delay", "0.05"]
    command += ["--commit-seconds", "0.2", "--tell-embedded", "--workers", "2"]
    build_process = subprocess.Popen(command, stdout=subprocess.PIPE, text=True)
    assert build_process.stdout.readline().strip() == "started"
    embedded = 0
    while embedded < 100:
        embedded = int(build_process.stdout.readline().split()[1])
    workers = descendants(build_process.pid)
    assert len(workers) >= 2  # the worker processes (and the fork server that starts them)
    build_process.send_signal(signal.SIGTERM)
    assert build_process.wait(timeout=60) == -signal.SIGTERM
    deadline = time.monotonic() + 10
    while any(alive(pid) for pid in workers) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not [pid for pid in workers if alive(pid)]
    with Index.open(tmp_path / "index.db", create=False) as index:
        record = index.status()["builds"][0]
        kept = index.store.counts()
    assert record["outcome"] == "interrupted"
    assert 0 < record["files_added"] == kept["files"] < 200


def test_workers_by_default_only_for_a_backend_on_servers_with_cores_and_files_to_spare():
    assert default_workers(cores=4, embeds_remotely=True, files_to_read=FEW_FILES) == 3
    assert default_workers(cores=2, embeds_remotely=True, files_to_read=10 * FEW_FILES) == 1
    assert default_workers(cores=1, embeds_remotely=True, files_to_read=10 * FEW_FILES) == 0
    assert default_workers(cores=8, embeds_remotely=True, files_to_read=FEW_FILES - 1) == 0
    assert default_workers(cores=8, embeds_remotely=False, files_to_read=10 * FEW_FILES) == 0
