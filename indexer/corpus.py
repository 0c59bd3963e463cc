"""Stage 1: find the text files under a folder and read them.

Walking only looks at names and ``stat``; contents are read later, and only for files whose size or
modification time changed, so an unchanged re-index reads no file contents at all.
"""

from __future__ import annotations

import codecs
import os
import re
import stat
from dataclasses import dataclass
from html import unescape
from pathlib import Path

TEXT_EXTENSIONS = frozenset(
    """md markdown mdx txt text rst adoc asciidoc org tex html htm xhtml
    py pyi js jsx mjs cjs ts tsx go rs c h cc cpp cxx hpp hh java kt kts scala swift m mm cs fs vb
    rb php pl pm lua r jl hs ml mli ex exs erl clj cljs dart zig nim sh bash zsh fish ps1 bat sql
    css scss sass less vue svelte json jsonl yaml yml toml ini cfg conf properties env xml csv tsv
    graphql proto tf hcl gradle cmake mk dockerfile ipynb""".split()
)
TEXT_FILENAMES = frozenset(
    """makefile dockerfile readme license licence copying changelog authors notice contributing
    gemfile rakefile procfile vagrantfile justfile""".split()
)
SKIPPED_FOLDERS = frozenset(
    """node_modules __pycache__ venv .venv env site-packages dist-packages .tox .nox .mypy_cache
    .pytest_cache .ruff_cache""".split()
)
MARKDOWN_EXTENSIONS = frozenset({"md", "markdown", "mdx"})
HTML_EXTENSIONS = frozenset({"html", "htm", "xhtml"})
BINARY_SNIFF_BYTES = 8192


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


class UnreadableFile(Exception):
    """A file that is binary or cannot be decoded; the message says which, for a one-line warning."""


def is_text_name(path: str) -> bool:
    """Whether a file name looks like text we index (by extension or well-known name)."""
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


def decode(data: bytes) -> str:
    """Decode a file's bytes as text or raise :class:`UnreadableFile` saying why.

    UTF-8 (with or without BOM) and UTF-16 with a BOM are accepted. A NUL byte means binary.
    """
    if data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        try:
            return data.decode("utf-16")
        except UnicodeDecodeError as error:
            raise UnreadableFile(f"cannot be decoded as UTF-16 (byte {error.start})") from error
    if b"\x00" in data[:BINARY_SNIFF_BYTES]:
        raise UnreadableFile("binary file (contains NUL bytes)")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        raise UnreadableFile(f"cannot be decoded as UTF-8 (invalid byte at offset {error.start})") from error


_SCRIPT_OR_STYLE = re.compile(r"<(script|style)\b.*?</\1\s*>", re.IGNORECASE | re.DOTALL)
_TAG = re.compile(r"<[^>]*>", re.DOTALL)
_HTML_HEADING = re.compile(r"<h([1-6])\b[^>]*>(.*?)</h\1\s*>", re.IGNORECASE | re.DOTALL)


def html_to_text(html: str) -> str:
    """Strip tags from HTML while keeping every line where it was, so line numbers still point
    into the source file. Headings become Markdown headings so the chunker sees the structure."""

    def blank_keeping_newlines(match: re.Match[str]) -> str:
        return "\n" * match.group(0).count("\n")

    def heading(match: re.Match[str]) -> str:
        inner = _TAG.sub(blank_keeping_newlines, match.group(2))
        return "#" * int(match.group(1)) + " " + inner

    text = _SCRIPT_OR_STYLE.sub(blank_keeping_newlines, html)
    text = _HTML_HEADING.sub(heading, text)
    text = _TAG.sub(blank_keeping_newlines, text)
    return unescape(text)


def text_of(source: SourceFile, data: bytes) -> str:
    """The text to chunk for a file: decoded, with HTML reduced to its words."""
    text = decode(data)
    if source.extension in HTML_EXTENSIONS:
        return html_to_text(text)
    return text


def has_headings(source: SourceFile) -> bool:
    """Whether ``#`` lines and underlined titles are headings in this file (Markdown, reStructuredText,
    HTML reduced to Markdown, plain text) rather than comments (code, configuration)."""
    return is_markdown(source.path) or source.extension in ("rst", "txt", "text")


def is_markdown(path: str) -> bool:
    name = path.rsplit("/", 1)[-1].lower()
    return "." in name and name.rsplit(".", 1)[-1] in MARKDOWN_EXTENSIONS | HTML_EXTENSIONS
