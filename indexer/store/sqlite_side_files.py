"""The files the vector search keeps beside a SQLite index (the graph, its float32 rows): written
without following links, recognised by what the index records of them, read without being mapped.

Anyone who can write in the index's folder can plant a link, truncate a file or rewrite its bytes,
and the graph library parses a graph file without checking it: damaged bytes crash the process that
reads them. So nothing here trusts a name or a file that someone else could have changed.

- **Writing** (:func:`replacing`): a scratch file made fresh beside the final name (``O_CREAT |
  O_EXCL | O_NOFOLLOW``: whatever is planted under the scratch name is removed, never written
  through), written through its own descriptor, synced, then renamed over the final name (a link
  there is replaced, not followed). A write that fails removes the scratch file and leaves the final
  name as it was.
- **Recognising**: the index records each file's identity (size, modification and change times,
  inode, device), and for the graph its SHA-256. No process can set a file's change time (only the
  clock does, on every write, truncation, rename or ``utime``), so a file whose identity is the
  recorded one holds the bytes it held when recorded. The one gap, a write within the clock tick of
  the change the index recorded, is closed by :func:`settle`: it records a file only once that tick
  has passed and its bytes are checked again. A file whose identity differs (copied, restored from
  a backup, touched, rewritten in place) is checked against its SHA-256 in full. Where the change
  time is the creation time (Windows), every file is checked in full. Bytes changed beneath the
  file system (a failing disk), which no write stamps, are beyond what an identity can see.
- **Reading** (:func:`read_recorded`): opened without following a link or waiting on a FIFO,
  checked to be a regular file of the recorded size, and read into this process's own memory, never
  mapped: a mapped file truncated or rewritten under the process that maps it faults it (SIGBUS,
  SIGSEGV), and a private copy is immune to whatever happens to the file afterwards.
"""

from __future__ import annotations

import errno
import hashlib
import json
import os
import stat
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import asdict, dataclass, fields
from typing import BinaryIO, TypeVar

import numpy as np

#: (size, modification time ns, change time ns, inode, device) of a file.
Identity = tuple[int, int, int, int, int]
#: Longer than a tick of the clock that stamps file times (1 to 10 ms on Linux): a write this long
#: after a file's last change gets a later change time.
TICK_NS = 20_000_000
#: Where the change time is one no process can set (on Windows, ``st_ctime`` is the creation time).
CHANGE_TIME_KEPT = os.name == "posix"
SCRATCH_SUFFIX = ".tmp"
READ_BLOCK = 16 << 20
_NO_FOLLOW = getattr(os, "O_NOFOLLOW", 0)
_NON_BLOCKING = getattr(os, "O_NONBLOCK", 0)  # a FIFO planted under the name must not hang a search
_BINARY = getattr(os, "O_BINARY", 0)
_CLOSE_ON_EXEC = getattr(os, "O_CLOEXEC", 0)

Record = TypeVar("Record", bound="SideFileRecord")


class DamagedFile(Exception):
    """A file beside the index that is missing, is not a regular file, or is not the one the index
    recorded; ``reason`` says which, after the file's path."""

    def __init__(self, path: str, reason: str) -> None:
        super().__init__(f"{path} {reason}")
        self.path = path
        self.reason = reason


@dataclass(frozen=True)
class SideFileRecord:
    """What the index says of a file kept beside it (the graph, the rows), in its meta as JSON: the
    slot it is in, the log position it reflects, how many vectors it holds, its identity when it was
    recorded, its SHA-256 (empty when not kept) and when its bytes were last checked (ns): a record
    of another version of this code lacks fields, and names no file that matches it."""

    slot: str
    position: int
    vectors: int
    file: tuple[int, ...]
    sha256: str = ""
    checked_ns: int = 0

    @classmethod
    def from_json(cls: type[Record], text: str | None) -> Record | None:
        if text is None:
            return None
        values = json.loads(text)
        known = {field.name for field in fields(cls)}
        return cls(**{**{k: v for k, v in values.items() if k in known}, "file": tuple(values["file"])})

    def to_json(self) -> str:
        return json.dumps(asdict(self), sort_keys=True)

    def unchanged(self, info: os.stat_result) -> bool:
        """Whether the file ``info`` describes is, by its identity alone, the one recorded with the
        bytes it held then (see the module's docstring; ``settle`` makes records for which it is)."""
        return CHANGE_TIME_KEPT and identity(info) == self.file and self.file[2] + TICK_NS <= self.checked_ns


def identity(info: os.stat_result) -> Identity:
    return info.st_size, info.st_mtime_ns, info.st_ctime_ns, info.st_ino, info.st_dev


def open_regular(path: str) -> int:
    """A read-only descriptor of the regular file at ``path``, opened without following a link.

    Raises:
        DamagedFile: there is none, or something else is there (a link, a FIFO, a folder).
    """
    try:
        descriptor = os.open(path, os.O_RDONLY | _NO_FOLLOW | _NON_BLOCKING | _BINARY | _CLOSE_ON_EXEC)
    except FileNotFoundError:
        raise DamagedFile(path, "is missing") from None
    except OSError as error:  # ELOOP: a symbolic link
        raise DamagedFile(path, f"cannot be opened as a plain file ({error.strerror})") from None
    if not stat.S_ISREG(os.fstat(descriptor).st_mode):
        os.close(descriptor)
        raise DamagedFile(path, "is not a regular file")
    return descriptor


def current_identity(path: str) -> Identity | None:
    """The identity of the regular file at ``path`` (a link is not followed); None when there is none."""
    try:
        descriptor = open_regular(path)
    except DamagedFile:
        return None
    try:
        return identity(os.fstat(descriptor))
    finally:
        os.close(descriptor)


def read_private(descriptor: int, size: int, path: str, offset: int = 0) -> np.ndarray:
    """``size`` bytes of an open file from ``offset`` on, read into memory of this process alone."""
    buffer = np.empty(size, dtype=np.uint8)
    view = buffer.data
    done = 0
    with os.fdopen(descriptor, "rb", buffering=0, closefd=False) as file:
        file.seek(offset)
        while done < size:
            count = file.readinto(view[done : done + READ_BLOCK])
            if not count:
                raise DamagedFile(path, f"ends {size - done} bytes early: it was truncated")
            done += count
    return buffer


def read_recorded(path: str, record: SideFileRecord) -> np.ndarray:
    """The bytes of the file at ``path``, in private memory, once they are shown to be the ones
    ``record`` names: by the file's identity when it is the recorded one, else by their SHA-256.

    Raises:
        DamagedFile: the file is missing, not a regular file, of another size, or its bytes differ.
    """
    descriptor = open_regular(path)
    try:
        size = os.fstat(descriptor).st_size
        if size != record.file[0]:
            raise DamagedFile(path, other_size(size, record.file[0]))
        buffer = read_private(descriptor, size, path)
        after = os.fstat(descriptor)  # a write before this, even during the read, changed its identity
    finally:
        os.close(descriptor)
    if not record.unchanged(after) and hashlib.sha256(buffer.data).hexdigest() != record.sha256:
        raise DamagedFile(path, "does not hold the bytes the index recorded (its SHA-256 differs)")
    return buffer


def check_recorded(path: str, record: SideFileRecord) -> bool:
    """Whether the file at ``path`` holds the bytes ``record`` names, read a block at a time (for a
    build and ``index status``, which keep no copy): True when its identity says so, False when its
    identity differs but its SHA-256 is the recorded one (the file was moved, copied or touched).

    Raises:
        DamagedFile: as :func:`read_recorded`.
    """
    descriptor = open_regular(path)
    try:
        info = os.fstat(descriptor)
        if record.unchanged(info):
            return True
        if info.st_size != record.file[0]:
            raise DamagedFile(path, other_size(info.st_size, record.file[0]))
        digest = sha256_of(descriptor)
    finally:
        os.close(descriptor)
    if digest != record.sha256:
        raise DamagedFile(path, "does not hold the bytes the index recorded (its SHA-256 differs)")
    return False


def other_size(size: int, recorded: int) -> str:
    return f"holds {size} bytes, not the {recorded} the index recorded (truncated or replaced)"


def sha256_of(descriptor: int) -> str:
    """The SHA-256 of an open file's bytes, read a block at a time from its start."""
    digest = hashlib.sha256()
    with os.fdopen(descriptor, "rb", buffering=0, closefd=False) as file:
        file.seek(0)
        while block := file.read(READ_BLOCK):
            digest.update(block)
    return digest.hexdigest()


@contextmanager
def replacing(path: str) -> Iterator[BinaryIO]:
    """A file to write the new content of ``path`` into: a fresh scratch file beside it, synced and
    renamed over ``path`` when the block ends; removed, with ``path`` left as it was, when it raises."""
    scratch = path + SCRATCH_SUFFIX
    descriptor = create_fresh(scratch)
    try:
        with os.fdopen(descriptor, "wb") as out:
            yield out
            out.flush()
            os.fsync(out.fileno())
        os.replace(scratch, path)
    except BaseException:
        with suppress(OSError):
            os.remove(scratch)
        raise
    sync_folder(path)


def create_fresh(path: str, attempts: int = 3) -> int:
    """A new, empty file at ``path``, open for writing; whatever was under that name (a scratch file
    a killed build left, a planted link) is removed first, never written through."""
    for _ in range(attempts):
        try:
            return os.open(
                path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NO_FOLLOW | _BINARY | _CLOSE_ON_EXEC, 0o666
            )
        except FileExistsError:
            with suppress(FileNotFoundError):
                os.remove(path)
    raise FileExistsError(errno.EEXIST, "another process keeps creating it", path)


def sync_folder(path: str) -> None:
    """Make a rename into the folder of ``path`` durable (POSIX; elsewhere the rename is enough)."""
    if not hasattr(os, "O_DIRECTORY"):
        return
    folder = os.open(os.path.dirname(os.path.abspath(path)), os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(folder)
    finally:
        os.close(folder)


def settle(path: str, sha256: str) -> tuple[Identity, int]:
    """The identity of the file at ``path``, which should hold the bytes of ``sha256``, and when it
    was checked (ns): taken once the clock tick of the file's last change has passed, so that any
    later write gives it another identity, and recorded only if its bytes are still those and no
    write came while they were read.

    Raises:
        OSError: the file is not there, or another process changed it meanwhile.
    """
    try:
        descriptor = open_regular(path)
    except DamagedFile as damage:
        raise FileNotFoundError(errno.ENOENT, damage.reason, path) from None
    try:
        wait = os.fstat(descriptor).st_ctime_ns + TICK_NS - time.time_ns()
        if 0 < wait <= 2 * TICK_NS:  # a clock further off (a network file system's) just is not trusted
            time.sleep(wait / 1e9)
        checked = time.time_ns()
        before = identity(os.fstat(descriptor))
        digest = sha256_of(descriptor)
        after = identity(os.fstat(descriptor))
    finally:
        os.close(descriptor)
    if digest != sha256 or before != after:
        raise OSError(errno.EBUSY, "another process changed it while it was saved", path)
    return before, checked
