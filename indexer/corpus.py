"""Stage 1: find the text files under a folder and read them.

Walking only looks at names and ``stat``; contents are read later, and only for files whose size or
modification time changed, so an unchanged re-index reads no file contents at all.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from pathlib import Path

TEXT_EXTENSIONS = frozenset(
    """md markdown mdx txt text rst rest adoc asciidoc org tex html htm xhtml
    py pyi js jsx mjs cjs ts tsx go rs c h cc cpp cxx hpp hh java kt kts scala swift m mm cs fs vb
    rb php pl pm lua r jl hs ml mli ex exs erl clj cljs dart zig nim sh bash zsh fish ps1 bat sql
    css scss sass less vue svelte json jsonl yaml yml toml ini cfg conf properties env xml csv tsv
    graphql proto tf hcl gradle cmake mk dockerfile ipynb pdf docx""".split()
)
TEXT_FILENAMES = frozenset(
    """makefile dockerfile readme license licence copying changelog authors notice contributing
    gemfile rakefile procfile vagrantfile justfile""".split()
)
SKIPPED_FOLDERS = frozenset(
    """node_modules __pycache__ venv .venv env site-packages dist-packages .tox .nox .mypy_cache
    .pytest_cache .ruff_cache""".split()
)


class UnreadableFile(Exception):
    """A file that cannot be read as a document; the message says why, for a one-line warning.

    ``status`` is what the file's record says instead of 'indexed', so that an unchanged file is not
    read again on the next build: 'binary', 'encoding', 'no-text' (a PDF without a text layer) or
    'damaged' (a PDF, DOCX or notebook that its reader could not open).
    """

    def __init__(self, message: str, status: str = "unreadable") -> None:
        super().__init__(message)
        self.status = status


@dataclass(frozen=True)
class SourceFile:
    """A file found under a root: where it is and the ``stat`` facts that decide whether it changed.

    ``path`` is the name the index stores and shows: relative to the root, with forward slashes,
    always valid UTF-8. A name that is not (``caf\xe9.md`` from a Latin-1 archive) is stored with its
    undecodable bytes escaped as ``\xe9``; ``local_path`` then keeps the name the file system knows.
    """

    root: Path
    path: str
    size: int
    mtime_ns: int
    local_path: str | None = None

    @property
    def absolute(self) -> Path:
        return self.root / (self.local_path or self.path)

    @property
    def extension(self) -> str:
        name = self.path.rsplit("/", 1)[-1].lower()
        return name.rsplit(".", 1)[-1] if "." in name else ""


@dataclass(frozen=True)
class WalkResult:
    """What the walk found: the candidate text files, and the files it passed over with the reason."""

    files: list[SourceFile]
    ignored: list[tuple[str, str]]  # (relative path, reason): links out of the folder, non-text types


def is_text_name(path: str) -> bool:
    """Whether a file name looks like something we index (by extension or well-known name): text,
    or a document format :mod:`indexer.formats` reads (PDF, DOCX)."""
    name = path.rsplit("/", 1)[-1].lower()
    if name in TEXT_FILENAMES:
        return True
    return "." in name and name.rsplit(".", 1)[-1] in TEXT_EXTENSIONS


def walk(root: Path) -> WalkResult:
    """Every candidate text file under ``root``, in a stable (sorted, depth-first) order.

    Hidden folders, ``.git``, ``node_modules`` and virtual environments are skipped. Symbolic links are
    followed only when they resolve inside ``root``; each real folder is entered once (under its own
    name when it has one), so a link loop ends nothing but itself. The walk keeps its own stack of
    open folders, so folders nested thousands deep cost memory, not Python's recursion limit.
    """
    root = Path(root)
    real_root = os.path.realpath(root)
    files: list[SourceFile] = []
    ignored: list[tuple[str, str]] = []
    root_stat = os.stat(root)
    seen_folders = {(root_stat.st_dev, root_stat.st_ino)}
    stack = [iter(_entries(root, "", ignored))]
    while stack:
        item = next(stack[-1], None)
        if item is None:
            stack.pop()
            continue
        relative, entry = item
        info = _stat_inside(entry, relative, real_root, ignored)
        if info is None:
            continue
        if stat.S_ISDIR(info.st_mode):
            if not is_skipped_folder(entry.name) and (info.st_dev, info.st_ino) not in seen_folders:
                seen_folders.add((info.st_dev, info.st_ino))
                stack.append(iter(_entries(root, relative, ignored)))
        elif stat.S_ISREG(info.st_mode):
            name = stored_name(relative)
            if not is_text_name(name):
                ignored.append((name, "not a text file type"))
                continue
            local = relative if name != relative else None
            files.append(SourceFile(root, name, info.st_size, info.st_mtime_ns, local))
    return WalkResult(files=files, ignored=ignored)


def _entries(root: Path, prefix: str, ignored: list[tuple[str, str]]) -> list[tuple[str, os.DirEntry[str]]]:
    """A folder's entries with their paths relative to root: real entries before links (so a folder
    is found under its own name before any alias), each group by name."""
    try:
        entries = sorted(
            os.scandir(root / prefix if prefix else root), key=lambda entry: (entry.is_symlink(), entry.name)
        )
    except OSError as error:
        ignored.append((stored_name(prefix) or ".", f"cannot list folder: {error.strerror}"))
        return []
    return [(f"{prefix}/{entry.name}" if prefix else entry.name, entry) for entry in entries]


def _stat_inside(
    entry: os.DirEntry[str], relative: str, real_root: str, ignored: list[tuple[str, str]]
) -> os.stat_result | None:
    """The entry's ``stat`` (through a link that stays inside the root), or None with the reason."""
    try:
        if entry.is_symlink():
            target = os.path.realpath(entry.path)
            if not os.path.exists(target):
                ignored.append((stored_name(relative), "dangling symbolic link (its target does not exist)"))
                return None
            if not _inside(target, real_root):
                ignored.append((stored_name(relative), "symbolic link leading outside the folder"))
                return None
        return os.stat(entry.path)
    except OSError as error:
        ignored.append((stored_name(relative), f"cannot stat: {error.strerror or error}"))
        return None


def stored_name(relative: str) -> str:
    """The name the index keeps for a file: itself when valid UTF-8, else its undecodable bytes
    escaped (``caf\xe9.md``), so every name can be stored, shown and found again."""
    try:
        relative.encode("utf-8")
    except UnicodeEncodeError:
        return os.fsencode(relative).decode("utf-8", "backslashreplace")
    return relative


def is_skipped_folder(name: str) -> bool:
    """Folders never walked: hidden ones, dependencies, virtual environments, caches, build metadata."""
    return name.startswith(".") or name in SKIPPED_FOLDERS or name.endswith(".egg-info")


def _inside(real_path: str, real_root: str) -> bool:
    return real_path == real_root or real_path.startswith(real_root.rstrip(os.sep) + os.sep)


def read_bytes(source: SourceFile) -> bytes:
    """The file's bytes (an ``OSError`` propagates: the caller reports the file and goes on).

    Opened without blocking and checked after opening: a file replaced since the walk by a FIFO or a
    device would otherwise hang the build (a FIFO's ``open`` waits for a writer) or read for ever.
    """
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0)
    flags |= getattr(os, "O_BINARY", 0)  # Windows: no newline translation
    descriptor = os.open(source.absolute, flags)
    with os.fdopen(descriptor, "rb") as stream:
        if not stat.S_ISREG(os.fstat(descriptor).st_mode):
            raise UnreadableFile("not a regular file any more (replaced by a FIFO, device or socket)")
        return stream.read()
