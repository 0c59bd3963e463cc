"""The writer lock: one build per index file, a wait that ends, and the holder named."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time

import pytest
from helpers import write_corpus
from runs import SUPPORT, build

from indexer import IndexLockedError
from indexer.store.locks import FileWriterLock, is_locked_elsewhere, lock_path, wait_for


def test_a_second_writer_is_refused_naming_the_holder(tmp_path):
    index_path = str(tmp_path / "index.db")
    with FileWriterLock(index_path, lambda: "pid 1 on here") as first:
        first.acquire()
        second = FileWriterLock(index_path, lambda: "pid 1 on here")
        with pytest.raises(IndexLockedError, match=r"being built by pid 1 on here.*--wait SECONDS"):
            second.acquire()
    with FileWriterLock(index_path, lambda: "nobody") as third:
        third.acquire()  # released on leaving the block


def test_a_waiting_writer_gets_the_lock_when_the_holder_releases_it(tmp_path):
    index_path = str(tmp_path / "index.db")
    holder = FileWriterLock(index_path, lambda: "the holder")
    holder.acquire()
    threading.Timer(0.3, holder.release).start()
    started = time.monotonic()
    with FileWriterLock(index_path, lambda: "the holder") as waiter:
        waiter.acquire(wait_seconds=10)
        assert 0.25 <= time.monotonic() - started < 5


def test_the_wait_loop_gives_up_after_its_time_with_the_refusal():
    started = time.monotonic()
    with pytest.raises(IndexLockedError, match="still held"):
        wait_for(lambda: False, 0.3, lambda: IndexLockedError("still held"))
    assert time.monotonic() - started >= 0.3


def test_the_lock_belongs_to_the_real_file_whatever_its_name(tmp_path):
    real = tmp_path / "index.db"
    real.touch()
    (tmp_path / "alias.db").symlink_to(real)
    assert lock_path(str(tmp_path / "alias.db")) == lock_path(str(real)) == str(real) + ".lock"


def test_a_reader_can_tell_whether_a_build_holds_the_lock(tmp_path):
    index_path = str(tmp_path / "index.db")
    assert not is_locked_elsewhere(index_path)  # no lock file yet
    with FileWriterLock(index_path, lambda: "") as lock:
        lock.acquire()
        assert is_locked_elsewhere(index_path)
    assert not is_locked_elsewhere(index_path)


@pytest.mark.heavy
def test_the_writer_lock_holds_through_a_symlink_and_a_relative_path(tmp_path, docs):
    index_path = tmp_path / "index.db"
    build(index_path, docs)
    alias = tmp_path / "alias.db"
    alias.symlink_to(index_path)
    holder = subprocess.Popen(
        [
            sys.executable,
            str(SUPPORT / "build_worker.py"),
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
