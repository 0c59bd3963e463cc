"""Stage 1: find the text files under a folder and read them.

Walking only looks at names and ``stat``; contents are read later, and only for files whose size or
modification time changed, so an unchanged re-index reads no file contents at all.
"""

from __future__ import annotations

import errno
import os
import posixpath
import re
import stat
import sys
from collections import deque
from collections.abc import Callable, Collection, Iterator
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import NamedTuple

from indexer.errors import UnreadableFile
from indexer.formats import (
    BUILD_FILE_NAMES,
    SHEBANG,
    UNPARSED_CODE_EXTENSIONS,
    example_name,
    read_extensions,
    written_name,
)
from indexer.formats.compressed import uncompressed_name
from indexer.formats.data import DECLARATION_CHARS, declared_format
from indexer.formats.info import is_info_name
from indexer.formats.roff import is_man_page_name
from indexer.ignore import (
    IGNORE_FILE_NAMES,
    IgnoreChain,
    PathRules,
    WalkRules,
    is_secret_name,
    is_virtual_env,
)
from indexer.names import stored_name
from indexer.sizes import format_size

#: Extensions of text files read as plain lines, beside those a reader of :mod:`indexer.formats`
#: reads by their format (:func:`~indexer.formats.read_extensions`; both: :func:`text_extensions`).
PLAIN_TEXT_EXTENSIONS = UNPARSED_CODE_EXTENSIONS | frozenset("rc jsonl env pod config".split())
#: Extensions of images, archives, media, fonts and binaries: a well-known name with one of them
#: (``README.png``, ``install.tar``) is no document.
NOT_TEXT_EXTENSIONS = frozenset(
    """png jpg jpeg gif ico bmp webp tif tiff zip tar tgz 7z rar zst deb rpm exe dll so o a jar class
    pyc whl mp3 mp4 ogg wav woff woff2 ttf otf""".split()
)
#: Names of text files without an extension (any case): a project's build files, and the documents
#: the GNU Coding Standards name and Debian ships beside them, also with a suffix of their own
#: (``README.Debian``, ``changelog.Debian``, ``NEWS.old``). A name in capitals alone is a document
#: too (``INTRO``, ``POSIX``, ``COMPAT``): projects name their top documents so.
TEXT_FILENAMES = BUILD_FILE_NAMES | frozenset(
    """readme license licence copying changelog authors notice contributing
    news todo install thanks bugs hacking faq copyright""".split()
)
#: Files a tool writes for machines from a project's own files, by the names the tools give them,
#: left out as a build's output is: a package manager's lock file (every dependency's resolved
#: version and checksum: thousands of entries sharing every word, each a chunk that outranks the
#: project's own pages on a package's name; the ``.lock`` ones were never read) and a minified script
#: or style (a project's code again, on lines no one reads). The manifest a project writes beside a
#: lock file (``package.json``, ``Cargo.toml``, ``pyproject.toml``) is read: it says what is asked for.
LOCK_FILE_NAMES = frozenset(
    """package-lock.json npm-shrinkwrap.json yarn.lock pnpm-lock.yaml bun.lock bun.lockb deno.lock
    cargo.lock poetry.lock uv.lock pipfile.lock pdm.lock composer.lock gemfile.lock go.sum go.work.sum
    flake.lock mix.lock pubspec.lock podfile.lock package.resolved packages.lock.json gradle.lockfile
    renv.lock conan.lock cartfile.resolved""".split()
)
MINIFIED_SUFFIXES = (".min.js", ".min.mjs", ".min.cjs", ".min.css")
NOT_READ_REASON = "not a file type indexer reads"
#: Why a file of a type a reader takes is left out, by its kind (:func:`machine_written_kind`).
LEFT_OUT_REASONS = {
    "lock file": "a package manager's lock file, written for machines",
    "minified": "a minified script or style, written for machines",
}
#: Folders that hold documentation, as the GNU Coding Standards name a package's (``doc``) and the
#: FHS the system's (``/usr/share/doc/PACKAGE``; ``docs`` as projects write it): a file named without
#: an extension there is a document (``HOWTO-Customize-LogWatch``, ``examples/README-ssl``).
DOCUMENTATION_FOLDERS = frozenset({"doc", "docs"})
#: Hidden folders that hold a project's own documents, as the code host or CI service that reads
#: them names them: its workflows, contributing guide, security policy and issue templates
#: (``.github/workflows/ci.yml``, ``.github/CONTRIBUTING.md``). Every other hidden folder is a
#: tool's (``.git``, ``.venv``, ``.idea``) and is never walked.
HOSTED_FOLDERS = frozenset({".github", ".gitlab", ".gitea", ".forgejo", ".circleci"})
#: Folders never walked, whatever the ignore files say: dependencies, caches, build metadata (hidden
#: folders too, but :data:`HOSTED_FOLDERS`). Virtual environments are known by what they are
#: (:func:`indexer.ignore.is_virtual_env`).
SKIPPED_FOLDERS = frozenset(
    """node_modules __pycache__ site-packages dist-packages .tox .nox .mypy_cache .pytest_cache
    .ruff_cache""".split()
)


#: How much of a documentation output's stamped file, at each end, is read for the generator's name.
STAMP_BYTES = 8192
#: The same for a generator's configuration, which a person writes and names a setting anywhere in
#: (Sphinx's ``conf.py``): all of one of any ordinary size.
SOURCE_STAMP_BYTES = 1 << 16


@dataclass(frozen=True)
class DocsBuild:
    """A documentation generator's HTML output (or its sources, where they hold what it copies
    into the output as it is), known by files it always writes at its top
    (``markers``, all of them) and by its name in one of them (``stamp``: a file and a pattern of
    what it holds within its first or last ``stamp_bytes``, case aside), and what it writes there for its
    own use rather than for readers: files and folders named in ``top``, beside the markers, and
    files whose names end in one of ``endings`` anywhere below the top (:class:`BuildsAt`). The
    stamp keeps a project that happens to hold the markers (a website's ``sitemap.xml`` and its
    ``.gz``) from losing its own scripts."""

    markers: tuple[str, ...]
    stamp: tuple[str, re.Pattern[bytes]]
    top: frozenset[str]
    endings: tuple[str, ...] = ()
    stamp_bytes: int = STAMP_BYTES  # how much of the stamped file, at each end, is read

    def made_in(self, names: Collection[str], folder: Path) -> bool:
        """Whether ``folder``, holding ``names``, is this generator's output's top."""
        if not all(marker in names for marker in self.markers):
            return False
        file, stamp = self.stamp
        return stamp.search(_ends_of(folder / file, self.stamp_bytes).lower()) is not None


@dataclass(frozen=True)
class BuildsAt:
    """The documentation outputs a folder is the top of (``top``) or lies in (``inside``): what the
    walk carries down, so that telling a generator's own data costs no look at the disk."""

    top: tuple[DocsBuild, ...] = ()
    inside: tuple[DocsBuild, ...] = ()

    def below(self, names: Collection[str], folder: Path) -> BuildsAt:
        """The outputs a subfolder ``folder`` holding ``names`` is the top of or lies in."""
        present = frozenset(names)
        top = tuple(build for build in DOCS_BUILDS if build.made_in(present, folder))
        return BuildsAt(top, tuple(dict.fromkeys(self.inside + top)))

    def owns(self, name: str, folder: bool) -> bool:
        """Whether the file or folder ``name`` in this folder is a generator's own data."""
        if any(name in build.top for build in self.top):
            return True
        return not folder and any(build.endings and name.endswith(build.endings) for build in self.inside)


def _generator_meta(name: bytes) -> re.Pattern[bytes]:
    """A page's ``<meta name="generator">`` naming ``name`` and a version after it (lower case,
    quotes as a minifier leaves them): not a template's placeholder, nor an author's name."""
    return re.compile(rb'<meta name="?generator"? content="?' + re.escape(name) + rb"\d")


#: Each generator's HTML output, known by files it always writes at its top and its name in one of
#: them (as a virtual environment is known by its own), and what it writes there for its own use:
#: a source copy (saying what its page says in markup the page renders), a module's highlighted
#: source (holding the docstrings the API page renders), a search index or a navigation script
#: (holding every name at once), each of which outranks the page it serves.
#:
#: - Sphinx: each page's source (``_sources/``, ``fernet.rst.txt`` for ``fernet.html``), ``viewcode``'s
#:   module source (``_modules/``), the theme's scripts and styles (``_static/``), the search index.
#: - Doxygen: its search index (``search/``) and its scripts and styles, navigation data among them
#:   (``navtreeindex0.js``, a file's ``*_8h.js``), which sit beside the pages.
#: - javadoc (``element-list`` since JDK 10, ``package-list`` before; ``script.js`` beside it, in
#:   ``script-files/`` since JDK 23): its scripts (the search indexes, ``*-search-index.js``, among
#:   them), jQuery, its styles and fonts (``resource-files/`` since JDK 23), the licences of what it
#:   bundles (``legal/``) and the source rendered as pages (``src-html/``, with ``-linksource``).
#: - rustdoc (``settings.html`` with ``static.files/`` since Rust 1.67, whatever suffix its scripts
#:   carry, ``crates1.95.0.js`` in rustup's; ``crates.js`` before): the source rendered as pages
#:   (``src/``), its scripts and styles (``static.files/``, the search index, each crate's sidebar
#:   items), the data its pages load (``trait.impl/``, ``type.impl/``, ``implementors/`` before them,
#:   ``search.index/``, ``search.desc/``) and its own help and settings pages.
#: - MkDocs (``sitemap.xml`` with its ``.gz``, whatever the theme): the search index
#:   (``search/search_index.json``), the theme's scripts and styles, the sitemaps and the page a
#:   server shows for a missing one (``404.html``).
#: - mdBook (``.nojekyll`` with ``print.html``): ``print.html`` (the whole book again, on one page),
#:   ``toc.html`` (its contents, for readers without scripts), its search index, scripts and
#:   styles, and ``404.html``.
#: - Docusaurus (``assets/`` with ``404.html``; every page names it in a generator meta): its
#:   bundles (``assets/js/``, each page's text again as the script that renders it), styles, the
#:   sitemap, the blog's feeds (``rss.xml``, ``atom.xml``) and ``404.html``.
#: - Hugo (``index.xml`` with ``sitemap.xml``, both written by default; it names itself in the home
#:   page's generator meta): the RSS feed of each section (``index.xml``, its pages' text again),
#:   the sitemap, ``404.html``, the theme's scripts and styles.
#: - Sphinx's sources (``conf.py`` naming its ``html_static_path``, with ``_static/``): what it
#:   copies into the output as it is, the same scripts and styles (a theme's, a vendored jQuery) the
#:   output's ``_static/`` holds, and the page templates (``_templates/``) it renders around pages.
_SCRIPTS = (".js", ".css")
_JAVADOC_OWN = frozenset(
    {"jquery", "script-dir", "script-files", "resources", "resource-files", "legal", "src-html"}
)
_JAVADOC_STAMP = ("index.html", re.compile(rb"javadoc"))
_RUSTDOC_STAMP = ("settings.html", re.compile(rb'content="rustdoc"'))
_RUSTDOC_OWN = frozenset(
    """src static.files trait.impl type.impl implementors search.index search.desc help.html
    settings.html""".split()
)
DOCS_BUILDS = (
    DocsBuild(
        ("searchindex.js", "objects.inv"),
        ("searchindex.js", re.compile(rb"search\.setindex\(")),
        frozenset({"_sources", "_modules", "_static", "searchindex.js"}),
    ),
    DocsBuild(
        ("doxygen.css", "dynsections.js"),
        ("doxygen.css", re.compile(rb"css for doxygen")),
        frozenset({"search"}),
        _SCRIPTS,
    ),
    DocsBuild(("element-list", "script.js"), _JAVADOC_STAMP, _JAVADOC_OWN, _SCRIPTS),
    DocsBuild(("element-list", "script-files"), _JAVADOC_STAMP, _JAVADOC_OWN, _SCRIPTS),
    DocsBuild(("package-list", "script.js"), _JAVADOC_STAMP, _JAVADOC_OWN, _SCRIPTS),
    DocsBuild(("settings.html", "static.files"), _RUSTDOC_STAMP, _RUSTDOC_OWN, _SCRIPTS),
    DocsBuild(("crates.js", "settings.html"), _RUSTDOC_STAMP, _RUSTDOC_OWN, _SCRIPTS),
    DocsBuild(
        ("sitemap.xml", "sitemap.xml.gz"),
        ("index.html", re.compile(rb"mkdocs")),
        frozenset({"sitemap.xml", "sitemap.xml.gz", "404.html"}),
        (*_SCRIPTS, "search_index.json"),
    ),
    DocsBuild(
        (".nojekyll", "print.html"),
        ("print.html", re.compile(rb"generated using mdbook")),
        frozenset({"print.html", "toc.html", "404.html", "searchindex.json"}),
        _SCRIPTS,
    ),
    DocsBuild(
        ("assets", "404.html"),
        ("index.html", _generator_meta(rb"docusaurus v")),
        frozenset({"assets", "404.html", "sitemap.xml"}),
        (*_SCRIPTS, "rss.xml", "atom.xml"),
    ),
    DocsBuild(
        ("index.xml", "sitemap.xml"),
        ("index.html", _generator_meta(rb"hugo ")),
        frozenset({"sitemap.xml", "404.html"}),
        (*_SCRIPTS, "index.xml"),
    ),
    DocsBuild(
        ("conf.py", "_static"),
        ("conf.py", re.compile(rb"html_static_path")),
        frozenset({"_static", "_templates"}),
        stamp_bytes=SOURCE_STAMP_BYTES,
    ),
)
BUILD_MARKERS = frozenset(marker for build in DOCS_BUILDS for marker in build.markers)

SECRET_REASON = "its name says it holds credentials"
#: What the walk leaves out with a warning, and records (with the file's ``stat`` facts) so that the
#: warning is given once per new or changed file, not on every scheduled run.
RECORDED_KINDS = frozenset({"secret", "link", "too-large"})


@dataclass(frozen=True)
class SourceFile:
    """A file found under a root: where it is and the ``stat`` facts that decide whether it changed.

    ``path`` is the name the index stores and shows: relative to the root, with forward slashes,
    spelled by :func:`indexer.names.stored_name` (printable, valid UTF-8, one spelling per name: a
    name with bytes that are not UTF-8, ``caf\xe9.md``, or with control characters is escaped);
    ``local_path`` then keeps the name the file system knows.
    ``through_link``: the walk found it as a symbolic link (to a file inside the root); any other
    file is opened without following a link, so one put in its place after the walk is refused.
    ``secrets_allowed``: the build's ``allow_secrets`` patterns name it (or its link's target): it is
    read as it is, credentials included.
    """

    root: Path
    path: str
    size: int
    mtime_ns: int
    local_path: str | None = None
    through_link: bool = False
    secrets_allowed: bool = False

    @property
    def absolute(self) -> Path:
        return self.root / (self.local_path or self.path)


@dataclass(frozen=True)
class SkippedFile:
    """A file a build left out, and why. ``kind`` groups them in the build's summary: the extension of
    a type no reader takes (``.xlsx``, or ``no extension``), ``secret``, ``link``, ``too-large``,
    ``unreadable``, or the status its record keeps (``binary``, ``empty``, ``no-text``...).
    ``size`` and ``mtime_ns`` are the ``stat`` facts of a file of :data:`RECORDED_KINDS` (of the link
    itself for a link), by which a later build knows it unchanged."""

    path: str
    kind: str
    reason: str
    size: int | None = field(default=None, compare=False)
    mtime_ns: int | None = field(default=None, compare=False)


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
    """Whether a file name looks like something we index (by extension or well-known name, of the
    file it holds for a compressed one: ``NEWS.gz``, ``README.md.gz``; named without an extension in
    a documentation folder, :data:`DOCUMENTATION_FOLDERS`): text, a man page
    (``ls.1.gz``), an Info manual (``find.info-1.gz``), or a document format :mod:`indexer.formats`
    reads (PDF, DOCX); a template (``README.md.jinja``, ``requirements.jinja``: text whatever it
    renders, but an image's or an archive's); a part written for inclusion named for its format
    (``create.rst.inc``); an example copy of a file that is one (``opendkim.conf.sample``, not
    ``app.bin.dist``)."""
    folder, _, file_name = path.rpartition("/")
    compressed = uncompressed_name(file_name)
    standing_for = example_name(compressed)
    if standing_for != compressed:  # an example copy: read where the file it stands for would be
        return is_text_name(f"{folder}/{standing_for}" if folder else standing_for)
    written = written_name(compressed)
    name = written.lower()
    if _well_known(name) or _in_capitals(written):
        return True
    if "." not in written and DOCUMENTATION_FOLDERS.intersection(path.split("/")[:-1]):
        return True  # a document in a documentation folder (``HOWTO-Customize-LogWatch.gz``)
    extension = name.rsplit(".", 1)[-1] if "." in name else ""
    if written != compressed:
        return extension not in NOT_TEXT_EXTENSIONS
    if extension in text_extensions() or extension in TEXT_FILENAMES:  # ``oauth2.py.README`` too
        return True
    return is_man_page_name(name) or is_info_name(name)


@cache
def text_extensions() -> frozenset[str]:
    """The extensions of the files a walk reads: those a reader reads by their format, and text read
    as plain lines (:data:`PLAIN_TEXT_EXTENSIONS`). Asked of the readers, so that a format they read
    is never one the walk leaves out."""
    return read_extensions() | PLAIN_TEXT_EXTENSIONS


def _well_known(name: str) -> bool:
    """Whether a file ``name`` (lower case) is one of :data:`TEXT_FILENAMES`, maybe with a suffix of
    its own (``readme.debian``) that is not another format's extension (``readme.png``)."""
    stem, _, suffix = name.partition(".")
    return stem in TEXT_FILENAMES and suffix.rsplit(".", 1)[-1] not in NOT_TEXT_EXTENSIONS


def _in_capitals(name: str) -> bool:
    """Whether a file name without an extension is written in capitals (``INTRO``, ``RBASH``,
    ``PKG-INFO``): two letters at least, none in lower case."""
    return "." not in name and sum(character.isalpha() for character in name) >= 2 and name == name.upper()


def walk(root: Path, rules: WalkRules | None = None) -> WalkResult:
    """Every candidate text file under ``root``, in a stable (sorted, depth-first) order.

    ``rules`` say which ignore files and patterns apply (default: ``.gitignore``, ``.ignore`` and
    ``.git/info/exclude`` honoured, nothing else); files named like credentials are left out, and so
    are links to them, and files larger than ``rules.max_file_size``.
    Hidden folders, ``node_modules``, caches, virtual environments and what a documentation
    generator writes for its own use beside its HTML pages (:data:`DOCS_BUILDS`) are skipped.
    Symbolic links are followed only when they resolve inside ``root``; each real folder is entered
    once, under its own name when the walk reaches it by one (links to folders are followed after
    every real folder), so a link loop ends nothing but itself. The walk
    keeps its own stack of open folders, so folders nested thousands deep cost memory, not
    Python's recursion limit.
    """
    return _Walk(Path(root), rules or WalkRules()).run()


#: A folder the walk is in: its entries still to see, the ignore files in force, and the
#: documentation outputs it lies in.
_OpenFolder = tuple[Iterator[tuple[str, os.DirEntry[str]]], IgnoreChain, BuildsAt]


class _LinkedFolder(NamedTuple):
    """A link to a folder met by the walk, with what :meth:`_Walk._enter` needs to walk it later."""

    relative: str
    name: str
    info: os.stat_result
    chain: IgnoreChain
    builds: BuildsAt


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
        self.max_file_size = rules.max_file_size
        root_stat = os.stat(root)
        self.seen_folders = {(root_stat.st_dev, root_stat.st_ino)}
        self.folder_links: deque[_LinkedFolder] = deque()

    def run(self) -> WalkResult:
        listing = self._entries("")
        names = [entry.name for _, entry in listing]
        chain = self.rules.enter(self.rules.root_chain(), "", names)
        stack: list[_OpenFolder] = [(iter(listing), chain, BuildsAt().below(names, self.root))]
        while stack:
            entries, chain, builds = stack[-1]
            item = next(entries, None)
            if item is None:
                stack.pop()
                if not stack and (folder := self._next_linked_folder()) is not None:
                    stack.append(folder)
                continue
            relative, entry = item
            found = self._stat_inside(entry, relative)
            if found is None:
                continue
            info, target = found
            if stat.S_ISDIR(info.st_mode) and target is not None:
                self.folder_links.append(_LinkedFolder(relative, entry.name, info, chain, builds))
            elif stat.S_ISDIR(info.st_mode):
                folder = self._enter(relative, entry.name, info, chain, builds)
                if folder is not None:
                    stack.append(folder)
            elif stat.S_ISREG(info.st_mode) and not builds.owns(entry.name, folder=False):
                self._take(relative, info, chain, target)
        return WalkResult(self.files, self.skipped, self.ignored, self.unlistable, self.problems)

    def _next_linked_folder(self) -> _OpenFolder | None:
        """The next folder reached only through a link, walked under the link's name once every
        real folder has been walked: a book's ``modules`` link to the shared ``../modules`` would
        otherwise be met first and name every module by the book, so that the folder's own paths, the
        ones its pages and their readers cite, were never stored."""
        while self.folder_links:
            folder = self._enter(*self.folder_links.popleft())
            if folder is not None:
                return folder
        return None

    def _enter(
        self, relative: str, name: str, info: os.stat_result, chain: IgnoreChain, builds: BuildsAt
    ) -> _OpenFolder | None:
        """The entries of a subfolder to walk, with its ignore files and the documentation outputs it
        lies in; None for a folder passed over."""
        key = (info.st_dev, info.st_ino)
        if is_skipped_folder(name) or key in self.seen_folders or builds.owns(name, folder=True):
            return None
        if self.rules.ignores_folder(chain, relative):
            self.ignored += 1
            return None
        self.seen_folders.add(key)
        listing = self._entries(relative)
        names = [entry.name for _, entry in listing]
        if is_virtual_env(names):
            return None
        builds = builds.below(names, self.root / relative)
        return iter(listing), self.rules.enter(chain, relative, names), builds

    def _take(self, relative: str, info: os.stat_result, chain: IgnoreChain, target: str | None) -> None:
        """Keep a file as a candidate, or count it as ignored, or say why it is left out. ``target``
        is where a link leads (relative to the root), None for a file that is no link."""
        name = stored_name(relative)
        if self.rules.ignores_file(chain, relative):
            self.ignored += 1
        elif name.endswith(IGNORE_FILE_NAMES) and name.rsplit("/", 1)[-1] in IGNORE_FILE_NAMES:
            pass  # read by the walk as rules, not a document left out
        elif (kind := left_out_as(self.rules, relative, name, self.root / relative)) is not None:
            if kind == "secret":
                self._skip_recorded(relative, "secret", SECRET_REASON)
            else:
                self.skipped.append(SkippedFile(name, kind, LEFT_OUT_REASONS.get(kind, NOT_READ_REASON)))
        elif target is not None and self._secret_target(relative, target):
            reason = f"a link to {stored_name(target)}, whose name says it holds credentials"
            self._skip_recorded(relative, "secret", reason)
        elif info.st_size > self.max_file_size:
            self._skip_recorded(relative, "too-large", too_large(info.st_size, self.max_file_size))
        else:
            local = relative if name != relative else None
            allowed = self._allows_secrets(relative, target)
            size, mtime = info.st_size, info.st_mtime_ns
            self.files.append(SourceFile(self.root, name, size, mtime, local, target is not None, allowed))

    def _secret_target(self, relative: str, target: str) -> bool:
        """A link whose target is named like credentials, and neither is let in by name."""
        return is_secret_name(target.rsplit("/", 1)[-1]) and not self._allows_secrets(relative, target)

    def _allows_secrets(self, relative: str, target: str | None) -> bool:
        return self.rules.allows_secret(relative) or (target is not None and self.rules.allows_secret(target))

    def _skip_recorded(self, relative: str, kind: str, reason: str) -> None:
        """Leave a file out with the ``stat`` facts that let a later build know it unchanged (those of
        the link itself for a link: a link re-pointed is a new link)."""
        try:
            info = os.lstat(self.root / relative)
        except OSError:
            self._skip(relative, kind, reason)
            return
        self.skipped.append(SkippedFile(stored_name(relative), kind, reason, info.st_size, info.st_mtime_ns))

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

    def _stat_inside(
        self, entry: os.DirEntry[str], relative: str
    ) -> tuple[os.stat_result, str | None] | None:
        """The entry's ``stat`` (through a link that stays inside the root) and, for a link, where it
        leads relative to the root; None with the reason for an entry left out. An entry that is no
        link is stat'ed without following one, so a link put in its place meanwhile is not followed."""
        try:
            if not entry.is_symlink():
                return entry.stat(follow_symlinks=False), None
            target = os.path.realpath(entry.path)
            if not os.path.exists(target):
                self._skip_recorded(relative, "link", "dangling symbolic link (its target does not exist)")
                return None
            if not _inside(target, self.real_root):
                self._skip_recorded(relative, "link", "symbolic link leading outside the folder")
                return None
            return os.stat(entry.path), os.path.relpath(target, self.real_root).replace(os.sep, "/")
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
        ignored itself, named like credentials, or a file of a type no reader takes. True for the
        files that change what the walk takes: ignore files, and a generator's marker beside the
        others of its generator (:func:`_pairs_markers`)."""
        parts = relative.split("/")
        if parts[-1] in IGNORE_FILE_NAMES or relative.endswith(".git/info/exclude"):
            self._chains.clear()  # the rules themselves changed
            return True
        chain = self._root_chain()
        builds = BuildsAt().below(_markers_in(self.root), self.root)  # carried down, as the walk does
        for depth in range(1, len(parts)):
            folder = "/".join(parts[:depth])
            if is_skipped_folder(parts[depth - 1]) or builds.owns(parts[depth - 1], folder=True):
                return False
            if self.rules.ignores_folder(chain, folder):
                return False
            inner = self._chain(folder, chain)
            if inner is None:
                return False
            chain = inner
            builds = builds.below(_markers_in(self.root / folder), self.root / folder)
        beside = _markers_in((self.root / relative).parent) if parts[-1] in BUILD_MARKERS else set()
        if _pairs_markers(parts[-1], beside):
            return True  # a generator's output made or unmade: what its folder holds is read again
        absolute = self.root / relative
        if absolute.is_dir():
            passed_over = is_skipped_folder(parts[-1]) or builds.owns(parts[-1], folder=True)
            return not (passed_over or self.rules.ignores_folder(chain, relative))
        if not absolute.exists():  # gone: a file or a folder, so only what would pass over either
            return not self.rules.ignores_folder(chain, relative)
        ignored = self.rules.ignores_file(chain, relative) or builds.owns(parts[-1], folder=False)
        return not ignored and left_out_as(self.rules, relative, stored_name(relative), absolute) is None

    def _root_chain(self) -> IgnoreChain:
        """The ignore files in force at the root, which is walked even when it is a virtual environment."""
        chain = self._chains.get("")
        if chain is None:
            chain = self.rules.enter(self.rules.root_chain(), "", self._markers(""))
            self._chains[""] = chain
        return chain

    def _chain(self, folder: str, parent: IgnoreChain) -> IgnoreChain | None:
        """The ignore files in force in ``folder``, under the root (None: a virtual environment, never
        walked)."""
        if folder not in self._chains:
            names = self._markers(folder)
            self._chains[folder] = None if is_virtual_env(names) else self.rules.enter(parent, folder, names)
        return self._chains[folder]

    def _markers(self, folder: str) -> list[str]:
        base = self.root / folder
        return [name for name in self.MARKERS if os.path.lexists(base / name)]


def left_out_as(rules: PathRules, relative: str, name: str, path: Path) -> str | None:
    """Why a file that no rule ignores is left out: ``secret`` (named like a credentials file and not
    allowed by name), or its type (:func:`type_label`); None for a file to read, by its name or by
    what its text declares it is (:func:`_declares_its_format`, at ``path``). A secret allowed by
    name is read whatever its extension (``.env.example``): its reader still refuses a binary file."""
    if is_secret_name(name.rsplit("/", 1)[-1]):
        return None if rules.allows_secret(relative) else "secret"
    written_for_machines = machine_written_kind(name)
    if written_for_machines:
        return written_for_machines
    if is_text_name(name):
        return None
    label = type_label(name)
    return None if _declares_its_format(label, name, path) else label


def machine_written_kind(path: str) -> str | None:
    """``lock file`` or ``minified`` for a file a tool writes for machines (:data:`LOCK_FILE_NAMES`,
    :data:`MINIFIED_SUFFIXES`), or an example copy of one, known by its name in any case; None for
    any other."""
    name = example_name(path.rsplit("/", 1)[-1].lower())
    if name in LOCK_FILE_NAMES:
        return "lock file"
    return "minified" if name.endswith(MINIFIED_SUFFIXES) else None


def _declares_its_format(label: str, name: str, path: Path) -> bool:
    """Whether a file named without an extension (its ``label``: :func:`type_label`) says in its
    text what it is, which its reader then reads: a script, whose first line says what runs it
    (``#!``: a project's ``bin/deploy``), or, not hidden, a data file
    (:func:`~indexer.formats.data.declared_format`: an Ansible inventory's ``hosts``,
    ``group_vars/all``, a Debian package's shell variables in ``/etc/default``). A file with an
    extension says what it is by that: an installer's ``.run`` holds a payload after its ``#!``
    line, and a hidden file is a tool's own settings (``.hgrc``, ``.gitconfig``), credentials as
    often as not."""
    if label != NO_EXTENSION:
        return False
    head = _ends_of(path, DECLARATION_CHARS, tail=False, follow_links=True)
    if head.startswith(SHEBANG.encode()):
        return True
    if b"\0" in head or name.rsplit("/", 1)[-1].startswith("."):
        return False
    return declared_format(name, head.decode("utf-8", errors="ignore").removeprefix("\ufeff")) is not None


#: How :func:`type_label` counts a file named without an extension.
NO_EXTENSION = "no extension"


def type_label(path: str) -> str:
    """How a file type no reader takes is counted in a build's summary: ``.xlsx``, or ``no extension``
    (also for a version number's digits: ``3.10.0`` has none)."""
    name = path.rsplit("/", 1)[-1].lower()
    extension = name.rsplit(".", 1)[-1] if "." in name.strip(".") else ""
    return "." + extension if any(character.isalpha() for character in extension) else NO_EXTENSION


def is_skipped_folder(name: str) -> bool:
    """Folders never walked by name: hidden ones (but a code host's, :data:`HOSTED_FOLDERS`),
    dependencies, caches, build metadata."""
    hidden = name.startswith(".") and name not in HOSTED_FOLDERS
    return hidden or name in SKIPPED_FOLDERS or name.endswith(".egg-info")


def _ends_of(path: Path, size: int, *, tail: bool = True, follow_links: bool = False) -> bytes:
    """The first and (``tail``) last ``size`` bytes of the regular file at ``path``, nothing where
    it cannot be read, is a link (unless ``follow_links``) or is no regular file (a FIFO's ``open``
    would wait for a writer and hang the walk): where generators write their name, in a page's head
    or a closing comment, and where a file says what it is (:func:`_declares_its_format`)."""
    try:
        descriptor = os.open(path, _open_flags(follow_links=follow_links))
    except OSError:
        return b""
    with os.fdopen(descriptor, "rb") as file:
        info = os.fstat(descriptor)
        if not stat.S_ISREG(info.st_mode):
            return b""
        try:
            head = file.read(size)
            if not tail:
                return head
            file.seek(max(info.st_size - size, len(head)))
            return head + file.read(size)
        except OSError:  # unreadable: nothing known of it here, so it is taken as any other file
            return b""


def _pairs_markers(marker: str, present: Collection[str]) -> bool:
    """Whether a change to ``marker`` may make or unmake an output: every other marker of some
    generator's it is one of is ``present`` beside it (a ``404.html`` changed alone is a page)."""
    return any(
        marker in build.markers and all(other in present for other in build.markers if other != marker)
        for build in DOCS_BUILDS
    )


def _markers_in(folder: Path) -> set[str]:
    """The generators' markers that ``folder`` holds (files, or a folder: rustdoc's ``static.files``)."""
    return {marker for marker in BUILD_MARKERS if os.path.lexists(folder / marker)}


def _inside(real_path: str, real_root: str) -> bool:
    return real_path == real_root or real_path.startswith(real_root.rstrip(os.sep) + os.sep)


#: How much of a file is looked at to tell a binary file from text, before the rest is read.
HEAD_BYTES = 8192


def read_bytes(source: SourceFile, max_size: int, is_binary: Callable[[bytes], bool] | None = None) -> bytes:
    """The file's bytes, at most ``max_size`` of them (an ``OSError`` propagates: the caller reports
    the file and goes on; :class:`UnreadableFile` says why the file is left out).

    A file whose first :data:`HEAD_BYTES` are binary by ``is_binary`` is returned as those bytes
    alone, for its reader to refuse: a binary file costs one block, whatever its size (a 3 GB disk
    image named ``.txt`` is not read into memory to be found binary).

    The file is opened without blocking and checked once open, since it may have changed since the
    walk: a FIFO or a device would hang the build (a FIFO's ``open`` waits for a writer) or read for
    ever; a symbolic link put in place of a file is not followed; and what the open file turns out to
    be must lie inside the root and, unless the build allows it, not be named like credentials (a
    link re-pointed at ``.env``).
    """
    try:
        descriptor = os.open(source.absolute, _open_flags(follow_links=source.through_link))
    except OSError as error:
        if not source.through_link and error.errno in (errno.ELOOP, errno.EMLINK):  # EMLINK: FreeBSD
            raise UnreadableFile("replaced by a symbolic link since the walk", status="link") from error
        raise
    with os.fdopen(descriptor, "rb") as stream:
        info = os.fstat(descriptor)
        if not stat.S_ISREG(info.st_mode):
            raise UnreadableFile("not a regular file any more (replaced by a FIFO, device or socket)")
        _check_opened(source, descriptor)
        if info.st_size > max_size:
            raise UnreadableFile(too_large(info.st_size, max_size), status="too-large")
        head = stream.peek(HEAD_BYTES)[:HEAD_BYTES]
        if is_binary is not None and is_binary(head):
            return head
        data = stream.read(info.st_size + 1)
        if len(data) > info.st_size:  # growing while read: on up to the cap, and no further
            data += stream.read(max_size + 1 - len(data))
    if len(data) > max_size:
        raise UnreadableFile(too_large(len(data), max_size), status="too-large")
    return data


@dataclass(frozen=True)
class RootFiles:
    """The files of a build's root as a reader reads them beside the file it reads
    (:class:`indexer.formats.document.Neighbours`), under the guards the walk's own files are read
    with (:func:`read_bytes`), and only where the walk itself would go: a name that leaves the root
    (``../../etc/passwd``, an absolute path) or a link that leads outside it is not read, nor a file
    in a folder the walk never enters (a hidden one, ``node_modules``: :func:`is_skipped_folder`),
    nor one named like credentials (whatever the reading file's own permission), nor one past
    ``max_size``."""

    root: Path
    max_size: int

    def read(self, name: str) -> bytes | None:
        """The bytes of the file ``name`` (relative to the root); None when it is not there, is not a
        regular file inside the root, or may not be read."""
        relative = _inside_name(name)
        if relative is None:
            return None
        *folders, file_name = relative.split("/")
        if is_secret_name(file_name) or any(map(is_skipped_folder, folders)):
            return None
        real_root = os.path.realpath(self.root)
        if not _inside(os.path.realpath(self.root / relative), real_root):
            return None  # checked again on the open file, where the system can say what it is
        try:
            return read_bytes(SourceFile(self.root, relative, 0, 0, through_link=True), self.max_size)
        except (OSError, UnreadableFile):
            return None


def _inside_name(name: str) -> str | None:
    """``name`` made plain (``a/./b/../c`` is ``a/c``), or None when it names a place outside the
    folder it is relative to (``..``, an absolute path, a drive) or no place a file system names (a
    NUL in it)."""
    plain = posixpath.normpath(name.replace("\\", "/"))
    if plain in (".", "..") or plain.startswith(("../", "/")) or ":" in plain or "\0" in plain:
        return None
    return plain


def _open_flags(follow_links: bool) -> int:
    """How the walk's files are opened for reading: without waiting (a FIFO's ``open`` waits for a
    writer), without making a terminal the process's own, without newline translation (Windows),
    and without following a symbolic link unless ``follow_links``."""
    flags = (
        os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0) | getattr(os, "O_BINARY", 0)
    )
    return flags if follow_links else flags | getattr(os, "O_NOFOLLOW", 0)


def too_large(size: int, cap: int) -> str:
    """Why a file over the size cap is left out."""
    return f"larger ({format_size(size)}) than the cap on file size, {format_size(cap)}"


def _check_opened(source: SourceFile, descriptor: int) -> None:
    """Refuse an open file that lies outside the root, or that is named like credentials when its
    walked name was not (a link re-pointed after the walk), unless the build allows its secrets."""
    opened = opened_path(descriptor)
    if opened is None:  # no way to ask on this system: O_NOFOLLOW and the walk's checks stand alone
        return
    real_root = os.path.realpath(source.root)
    if not _inside(opened, real_root):
        raise UnreadableFile("now resolves outside the folder (replaced by a link since the walk)", "link")
    name = opened.rsplit(os.sep, 1)[-1]
    walked = (source.local_path or source.path).rsplit("/", 1)[-1]
    if name != walked and is_secret_name(name) and not source.secrets_allowed:
        raise UnreadableFile(f"now resolves to {name}, whose name says it holds credentials", "secret")


def opened_path(descriptor: int) -> str | None:
    """The real path of an open file, as the kernel knows it (None where it cannot be asked)."""
    if sys.platform.startswith("linux"):
        try:
            return os.readlink(f"/proc/self/fd/{descriptor}")
        except OSError:
            return None
    if sys.platform == "darwin":
        import fcntl

        try:
            path = fcntl.fcntl(descriptor, 50, b"\0" * 1024)  # F_GETPATH
        except OSError:
            return None
        return os.fsdecode(path.rstrip(b"\0"))
    return None
