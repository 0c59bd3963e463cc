"""Stage 1: find the text files under a folder and read them.

Walking only looks at names and ``stat``; contents are read later, and only for files whose size or
modification time changed, so an unchanged re-index reads no file contents at all.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from indexer.ignore import (
    IGNORE_FILE_NAMES,
    IgnoreChain,
    PathRules,
    WalkRules,
    is_secret_name,
    is_virtual_env,
)

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
#: Folders never walked, whatever the ignore files say: dependencies, caches, build metadata (hidden
#: folders too). Virtual environments are known by what they are (:func:`indexer.ignore.is_virtual_env`).
SKIPPED_FOLDERS = frozenset(
    """node_modules __pycache__ site-packages dist-packages .tox .nox .mypy_cache .pytest_cache
    .ruff_cache""".split()
)


SECRET_REASON = "its name says it holds credentials (allow it by name with allow_secrets)"


class UnreadableFile(Exception):
    """A file that cannot be read as a document; the message says why, for a one-line warning.

    ``status`` is what the file's record says instead of 'indexed', so that an unchanged file is not
    read again on the next build: 'binary', 'encoding', 'no-text' (a PDF without a text layer),
    'damaged' (a PDF, DOCX or notebook that its reader could not open) or 'too-large' (one that
    expands past the size a document may expand to while it is read).
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
class SkippedFile:
    """A file a build left out, and why. ``kind`` groups them in the build's summary: the extension of
    a type no reader takes (``.xlsx``, or ``no extension``), ``secret``, ``link``, ``unreadable``, or
    the status its record keeps (``binary``, ``empty``, ``no-text``, ``damaged``...)."""

    path: str
    kind: str
    reason: str


@dataclass(frozen=True)
class WalkResult:
    """What the walk found: the candidate text files, the files it left out with the reason, how many
    paths the ignore rules passed over (an ignored folder counts once: it is not even listed), the
    folders it could not list, and problems with ignore files (path, reason)."""

    files: list[SourceFile]
    skipped: list[SkippedFile]
    ignored: int
    unlistable: list[str]
    problems: list[tuple[str, str]]


def is_text_name(path: str) -> bool:
    """Whether a file name looks like something we index (by extension or well-known name): text,
    or a document format :mod:`indexer.formats` reads (PDF, DOCX)."""
    name = path.rsplit("/", 1)[-1].lower()
    if name in TEXT_FILENAMES:
        return True
    return "." in name and name.rsplit(".", 1)[-1] in TEXT_EXTENSIONS


def walk(root: Path, rules: WalkRules | None = None) -> WalkResult:
    """Every candidate text file under ``root``, in a stable (sorted, depth-first) order.

    ``rules`` say which ignore files and patterns apply (default: ``.gitignore``, ``.ignore`` and
    ``.git/info/exclude`` honoured, nothing else); files named like credentials are left out.
    Hidden folders, ``node_modules``, caches and virtual environments are skipped. Symbolic links are
    followed only when they resolve inside ``root``; each real folder is entered once (under its own
    name when it has one), so a link loop ends nothing but itself. The walk keeps its own stack of
    open folders, so folders nested thousands deep cost memory, not Python's recursion limit.
    """
    return _Walk(Path(root), rules or WalkRules()).run()


class _Walk:
    """One walk: the stack of open folders, each with the ignore files in force in it."""

    def __init__(self, root: Path, rules: WalkRules) -> None:
        self.root = root
        self.real_root = os.path.realpath(root)
        self.files: list[SourceFile] = []
        self.skipped: list[SkippedFile] = []
        self.ignored = 0
        self.unlistable: list[str] = []
        self.problems: list[tuple[str, str]] = []
        self.rules = PathRules(root, rules, lambda path, reason: self.problems.append((path, reason)))
        root_stat = os.stat(root)
        self.seen_folders = {(root_stat.st_dev, root_stat.st_ino)}

    def run(self) -> WalkResult:
        listing = self._entries("")
        chain = self.rules.enter(self.rules.root_chain(), "", [entry.name for _, entry in listing])
        stack: list[tuple[Iterator[tuple[str, os.DirEntry[str]]], IgnoreChain]] = [(iter(listing), chain)]
        while stack:
            entries, chain = stack[-1]
            item = next(entries, None)
            if item is None:
                stack.pop()
                continue
            relative, entry = item
            info = self._stat_inside(entry, relative)
            if info is None:
                continue
            if stat.S_ISDIR(info.st_mode):
                folder = self._enter(relative, entry.name, info, chain)
                if folder is not None:
                    stack.append(folder)
            elif stat.S_ISREG(info.st_mode):
                self._take(relative, info, chain)
        return WalkResult(self.files, self.skipped, self.ignored, self.unlistable, self.problems)

    def _enter(
        self, relative: str, name: str, info: os.stat_result, chain: IgnoreChain
    ) -> tuple[Iterator[tuple[str, os.DirEntry[str]]], IgnoreChain] | None:
        """The entries of a subfolder to walk, with its ignore files; None for a folder passed over."""
        key = (info.st_dev, info.st_ino)
        if is_skipped_folder(name) or key in self.seen_folders:
            return None
        if self.rules.ignores_folder(chain, relative):
            self.ignored += 1
            return None
        self.seen_folders.add(key)
        listing = self._entries(relative)
        names = [entry.name for _, entry in listing]
        if is_virtual_env(names):
            return None
        return iter(listing), self.rules.enter(chain, relative, names)

    def _take(self, relative: str, info: os.stat_result, chain: IgnoreChain) -> None:
        """Keep a file as a candidate, or count it as ignored, or say why it is left out."""
        name = stored_name(relative)
        if self.rules.ignores_file(chain, relative):
            self.ignored += 1
        elif name.endswith(IGNORE_FILE_NAMES) and name.rsplit("/", 1)[-1] in IGNORE_FILE_NAMES:
            pass  # read by the walk as rules, not a document left out
        elif (kind := left_out_as(self.rules, relative, name)) is not None:
            reason = SECRET_REASON if kind == "secret" else "not a file type indexer reads"
            self.skipped.append(SkippedFile(name, kind, reason))
        else:
            local = relative if name != relative else None
            self.files.append(SourceFile(self.root, name, info.st_size, info.st_mtime_ns, local))

    def _entries(self, prefix: str) -> list[tuple[str, os.DirEntry[str]]]:
        """A folder's entries with their paths relative to root: real entries before links (so a
        folder is found under its own name before any alias), each group by name."""
        try:
            entries = sorted(
                os.scandir(self.root / prefix if prefix else self.root),
                key=lambda entry: (entry.is_symlink(), entry.name),
            )
        except OSError as error:
            where = stored_name(prefix) or "."
            self.unlistable.append(where)
            self._skip(where, "unreadable", f"cannot list folder: {error.strerror}")
            return []
        return [(f"{prefix}/{entry.name}" if prefix else entry.name, entry) for entry in entries]

    def _stat_inside(self, entry: os.DirEntry[str], relative: str) -> os.stat_result | None:
        """The entry's ``stat`` (through a link that stays inside the root), or None with the reason."""
        try:
            if entry.is_symlink():
                target = os.path.realpath(entry.path)
                if not os.path.exists(target):
                    self._skip(relative, "link", "dangling symbolic link (its target does not exist)")
                    return None
                if not _inside(target, self.real_root):
                    self._skip(relative, "link", "symbolic link leading outside the folder")
                    return None
            return os.stat(entry.path)
        except OSError as error:
            self._skip(relative, "unreadable", f"cannot stat: {error.strerror or error}")
            return None

    def _skip(self, relative: str, kind: str, reason: str) -> None:
        self.skipped.append(SkippedFile(stored_name(relative), kind, reason))


class WalkFilter:
    """Whether a path is one a walk with ``rules`` may take, asked one path at a time (by ``index
    watch``, of each changed path). The ignore files of the folders asked about are read once and
    kept until an ignore file changes."""

    #: What is looked for in a folder to know its ignore files and whether it is a virtual environment.
    MARKERS = (*IGNORE_FILE_NAMES, ".git", "pyvenv.cfg", "conda-meta")

    def __init__(self, root: Path, rules: WalkRules) -> None:
        self.root = Path(root)
        self.rules = PathRules(self.root, rules, lambda path, reason: None)  # builds report them
        self._chains: dict[str, IgnoreChain | None] = {}

    def takes(self, relative: str) -> bool:
        """False for a path the walk passes over: in a skipped, ignored or virtual-environment folder,
        ignored itself, named like credentials, or a file of a type no reader takes."""
        parts = relative.split("/")
        if parts[-1] in IGNORE_FILE_NAMES or relative.endswith(".git/info/exclude"):
            self._chains.clear()  # the rules themselves changed
            return True
        chain: IgnoreChain | None = self._chain("", IgnoreChain())
        for depth in range(1, len(parts)):
            folder = "/".join(parts[:depth])
            if is_skipped_folder(parts[depth - 1]) or self.rules.ignores_folder(chain, folder):
                return False
            chain = self._chain(folder, chain)
            if chain is None:
                return False
        absolute = self.root / relative
        if absolute.is_dir():
            return not (is_skipped_folder(parts[-1]) or self.rules.ignores_folder(chain, relative))
        if not absolute.exists():  # gone: a file or a folder, so only what would pass over either
            return not self.rules.ignores_folder(chain, relative)
        ignored = self.rules.ignores_file(chain, relative)
        return not ignored and left_out_as(self.rules, relative, stored_name(relative)) is None

    def _chain(self, folder: str, parent: IgnoreChain) -> IgnoreChain | None:
        """The ignore files in force in ``folder`` (None: a virtual environment, never walked)."""
        if folder not in self._chains:
            base = self.root / folder
            names = [name for name in self.MARKERS if os.path.lexists(base / name)]
            if folder and is_virtual_env(names):
                self._chains[folder] = None
            else:
                start = self.rules.root_chain() if not folder else parent
                self._chains[folder] = self.rules.enter(start, folder, names)
        return self._chains[folder]


def left_out_as(rules: PathRules, relative: str, name: str) -> str | None:
    """Why a file that no rule ignores is left out: ``secret`` (named like a credentials file and not
    allowed by name), or its type (:func:`type_label`); None for a file to read. A secret allowed by
    name is read whatever its extension (``.env.example``): its reader still refuses a binary file."""
    if is_secret_name(name.rsplit("/", 1)[-1]):
        return None if rules.allows_secret(relative) else "secret"
    return None if is_text_name(name) else type_label(name)


def type_label(path: str) -> str:
    """How a file type no reader takes is counted in a build's summary: ``.xlsx``, or ``no extension``
    (also for a version number's digits: ``3.10.0`` has none)."""
    name = path.rsplit("/", 1)[-1].lower()
    extension = name.rsplit(".", 1)[-1] if "." in name.strip(".") else ""
    return "." + extension if any(character.isalpha() for character in extension) else "no extension"


def stored_name(relative: str) -> str:
    """The name the index keeps for a file: itself when valid UTF-8, else its undecodable bytes
    escaped (``caf\xe9.md``), so every name can be stored, shown and found again."""
    try:
        relative.encode("utf-8")
    except UnicodeEncodeError:
        return os.fsencode(relative).decode("utf-8", "backslashreplace")
    return relative


def is_skipped_folder(name: str) -> bool:
    """Folders never walked by name: hidden ones, dependencies, caches, build metadata."""
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
