"""Real documentation on this machine, as folders to index and as "exact name -> defining page" pairs.

Three doc sets, each read from where a Debian package or rustup put it (nothing of them is copied into
the repository; `prepare` makes the folder to index under bench/.cache/docsets/):

- **cmake**: CMake's reStructuredText manual, /usr/share/cmake-3.25/Help (Debian cmake-data 3.25.1),
  indexed as it is. A page's title (its first, underlined line) is the name it defines:
  ``command/add_library.rst`` defines ``add_library``; the same for policies, environment variables,
  variables and properties. Titles with a placeholder (``CMAKE_<LANG>_FLAGS``) are left out, and so
  are modules, whose pages only point at the module's source (``.. cmake-module::``).
- **man**: the Linux man-pages project 6.03 (Debian manpages-dev: section 2, manpages: section 7),
  rendered to plain text by ``man`` (no hyphenation or justification, 80 columns). A page defines its
  own name (``epoll_ctl.2`` defines ``epoll_ctl``), and each alias that Debian installs as a link to
  it (``epoll_create1.2`` -> ``epoll_create.2``) when the page's text mentions that alias.
- **rust**: the Rust standard library's HTML documentation from rustup's stable toolchain (modules
  cell, fs, io, net, path, process, rc, thread, time, and the top-level macros), without rustdoc's
  redirect pages. ``fs/struct.OpenOptions.html`` defines ``std::fs::OpenOptions``, asked for by its
  path, and by its bare name ``OpenOptions`` (names of three letters or fewer are left out). A bare name
  expects every page that defines it, in any case: ``Repeat`` expects both ``struct.Repeat`` and
  ``fn.repeat``, since a search that ignores case cannot tell them apart.

A name defined by several pages (``CMAKE_PREFIX_PATH``: a variable and an environment variable;
``socket``: sections 2 and 7) expects any of them. The samples are drawn with a fixed seed, so the
same documents give the same pairs. `bench/make_ranking_data.py` writes them to bench/data/.
"""

from __future__ import annotations

import glob
import json
import os
import random
import re
import shutil
import subprocess
import sys
from collections import defaultdict
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

CACHE = Path(__file__).resolve().parent.parent / ".cache" / "docsets"
CMAKE_HELP = Path("/usr/share/cmake-3.25/Help")
MAN_ROOT = Path("/usr/share/man")
MAN_PACKAGES = {"man2": "manpages-dev", "man7": "manpages"}
RUST_DOCS = "/root/.rustup/toolchains/stable-*/share/doc/rust/html/std"
#: Not env: the indexer skips folders named like a virtual environment (env, venv).
RUST_MODULES = ("cell", "fs", "io", "net", "path", "process", "rc", "thread", "time")
RUST_ITEM = re.compile(r"^(struct|enum|trait|fn|macro|constant|type|static)\.(\w+)\.html$")
SEED = 14
#: Most names drawn per category of a set, so that no category swamps the others.
PER_CATEGORY = 100
#: Names also asked as plain words (`add library`), per set.
WORDS_SAMPLE = 60


@dataclass(frozen=True)
class Name:
    """One defined name: the query, the pages that define it, and how it was found."""

    query: str
    expected: tuple[str, ...]
    category: str
    source: str


@dataclass(frozen=True)
class DocSet:
    name: str
    description: str
    available: Callable[[], bool]
    prepare: Callable[[], Path]
    names: Callable[[Path], list[Name]]


# -- CMake -------------------------------------------------------------------------------------

CMAKE_CATEGORIES = {
    "command": "command",
    "policy": "policy",
    "envvar": "environment variable",
    "variable": "variable",
    **{f"prop_{kind}": "property" for kind in ("tgt", "dir", "gbl", "sf", "test", "cache", "inst")},
}


def cmake_prepare() -> Path:
    return CMAKE_HELP


def rst_title(path: Path) -> str | None:
    """The first line of a page when the next line underlines it, as every CMake reference page does."""
    lines = path.read_text(encoding="utf-8").splitlines()
    if len(lines) >= 2 and lines[0].strip() and re.fullmatch(r"([-=~^*#])\1{2,}", lines[1].strip()):
        return lines[0].strip()
    return None


def cmake_names(folder: Path) -> list[Name]:
    pages: dict[str, list[str]] = defaultdict(list)
    categories: dict[str, str] = {}
    for directory, category in CMAKE_CATEGORIES.items():
        for page in sorted((folder / directory).glob("*.rst")):
            title = rst_title(page)
            if title and "<" not in title and " " not in title:
                pages[title].append(f"{directory}/{page.name}")
                categories.setdefault(title, category)
    names = [
        Name(title, tuple(paths), categories[title], f"title of {', '.join(paths)}")
        for title, paths in pages.items()
    ]
    return sample_per_category(names)


# -- man pages ---------------------------------------------------------------------------------


def man_available() -> bool:
    return shutil.which("man") is not None and all((MAN_ROOT / section).is_dir() for section in MAN_PACKAGES)


def package_files(package: str) -> list[Path]:
    listing = subprocess.run(["dpkg", "-L", package], capture_output=True, text=True, check=True).stdout
    return [Path(line) for line in listing.splitlines() if line.endswith(".gz")]


def man_pages() -> Iterator[tuple[str, Path]]:
    """(section folder, installed file) for every page and alias link of the two packages."""
    for section, package in MAN_PACKAGES.items():
        for path in package_files(package):
            if path.parent.name == section:
                yield section, path


def man_prepare() -> Path:
    """Each page rendered once to ``man2/epoll_ctl.2.txt``; links are left out (their target is there)."""
    folder = CACHE / "man-pages"
    for section, path in man_pages():
        target = folder / section / (path.name.removesuffix(".gz") + ".txt")
        if path.is_symlink() or target.exists():
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        rendered = subprocess.run(
            ["man", "--nh", "--nj", "-E", "UTF-8", "-P", "cat", "-l", str(path)],
            capture_output=True,
            text=True,
            env={**os.environ, "MANWIDTH": "80"},
            check=True,
        ).stdout
        target.write_text(rendered, encoding="utf-8")
    return folder


def man_names(folder: Path) -> list[Name]:
    pages: dict[str, list[str]] = defaultdict(list)
    categories: dict[str, str] = {}
    for section, path in man_pages():
        name = path.name.removesuffix(".gz").rsplit(".", 1)[0]
        page = path.resolve() if path.is_symlink() else path
        relative = f"{page.parent.name}/{page.name.removesuffix('.gz')}.txt"
        if not (folder / relative).exists() or not mentions(folder / relative, name):
            continue
        pages[name].append(relative)
        kind = "alias" if path.is_symlink() else "page"
        categories.setdefault(name, f"{section} {kind}")
    names = [
        Name(name, tuple(sorted(set(paths))), categories[name], f"{categories[name]}: {', '.join(paths)}")
        for name, paths in pages.items()
    ]
    return sample_per_category(names)


def mentions(page: Path, name: str) -> bool:
    """Whether the page's text holds the name as a word: some aliases Debian links to a page
    (``latin1`` -> ``iso_8859-1``, ``lock`` -> ``unimplemented``) appear nowhere in it."""
    pattern = rf"(?<![\w.-]){re.escape(name)}(?![\w-])"
    return re.search(pattern, page.read_text(encoding="utf-8"), re.IGNORECASE) is not None


# -- Rust --------------------------------------------------------------------------------------


def rust_docs() -> Path | None:
    found = sorted(glob.glob(RUST_DOCS))
    return Path(found[0]) if found else None


def is_redirect(path: Path) -> bool:
    """rustdoc's stub pages that only send the browser to an item's real page."""
    return path.stat().st_size < 2000 and "Redirecting to" in path.read_text(encoding="utf-8")


def rust_prepare() -> Path:
    """The chosen modules' pages and the top-level macros, copied with their paths inside ``std/``."""
    source, folder = rust_docs(), CACHE / "rust-std"
    assert source is not None
    chosen = [path for module in RUST_MODULES for path in (source / module).rglob("*.html")]
    chosen += list(source.glob("macro.*.html"))
    for path in chosen:
        target = folder / path.relative_to(source)
        if not target.exists() and not is_redirect(path):
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(path, target)
    return folder


def rust_names(folder: Path) -> list[Name]:
    items: list[tuple[str, str, str]] = []  # (std path, bare name, page)
    for page in sorted(folder.rglob("*.html")):
        relative = page.relative_to(folder).as_posix()
        match = RUST_ITEM.match(page.name)
        if match:
            module = "::".join(["std", *relative.split("/")[:-1]])
            items.append((f"{module}::{match.group(2)}", match.group(2), relative))
    by_bare = defaultdict(list)
    for _, bare, page in items:
        by_bare[bare.lower()].append(page)
    names = [Name(path, (page,), "path", f"page {page}") for path, _, page in items]
    names += [
        Name(bare, tuple(by_bare[bare.lower()]), "bare name", f"pages {', '.join(by_bare[bare.lower()])}")
        for bare in sorted({bare for _, bare, _ in items})
        if len(bare) > 3
    ]
    return sample_per_category(names)


# -- shared ------------------------------------------------------------------------------------


def sample_per_category(names: list[Name]) -> list[Name]:
    """At most PER_CATEGORY names of each category, drawn with a fixed seed, in a stable order."""
    by_category: dict[str, list[Name]] = defaultdict(list)
    for name in sorted(names, key=lambda name: name.query):
        by_category[name.category].append(name)
    rng = random.Random(SEED)
    drawn = []
    for category in sorted(by_category):
        group = by_category[category]
        drawn += rng.sample(group, PER_CATEGORY) if len(group) > PER_CATEGORY else group
    return drawn


def words_of(name: str) -> str:
    """A name as someone who does not remember its spelling types it: ``add_library`` -> ``add library``,
    ``std::fs::OpenOptions`` -> ``std fs open options``."""
    spaced = re.sub(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])", " ", name)
    return " ".join(re.split(r"[\W_]+", spaced)).strip().lower()


DOCSETS = {
    "cmake": DocSet(
        "cmake",
        "CMake 3.25 manual (reStructuredText)",
        CMAKE_HELP.is_dir,
        cmake_prepare,
        cmake_names,
    ),
    "man": DocSet(
        "man",
        "Linux man-pages 6.03, sections 2 and 7 (rendered text)",
        man_available,
        man_prepare,
        man_names,
    ),
    "rust": DocSet(
        "rust",
        "Rust standard library docs, 9 modules and the macros (HTML)",
        lambda: rust_docs() is not None,
        rust_prepare,
        rust_names,
    ),
}


def records(docset: DocSet, folder: Path) -> list[dict[str, object]]:
    """The set's JSON lines: each drawn name as written, and a sample of them as plain words."""
    names = docset.names(folder)
    rows = [
        {
            "query": name.query,
            "expected": list(name.expected),
            "kind": "identifier",
            "category": name.category,
            "set": docset.name,
            "source": name.source,
        }
        for name in names
    ]
    spelled = [name for name in names if words_of(name.query) not in (name.query.lower(), "")]
    for name in random.Random(SEED).sample(spelled, min(WORDS_SAMPLE, len(spelled))):
        rows.append(
            {
                "query": words_of(name.query),
                "expected": list(name.expected),
                "kind": "name-words",
                "category": name.category,
                "set": docset.name,
                "source": f"{name.query} as plain words",
            }
        )
    return rows


def main() -> int:
    """Write bench/data/<set>-names.jsonl for every doc set found on this machine."""
    data = Path(__file__).resolve().parent.parent / "data"
    data.mkdir(exist_ok=True)
    for docset in DOCSETS.values():
        if not docset.available():
            print(f"{docset.name}: not on this machine, skipped")
            continue
        rows = records(docset, docset.prepare())
        with open(data / f"{docset.name}-names.jsonl", "w", encoding="utf-8") as out:
            out.writelines(json.dumps(row, ensure_ascii=False) + "\n" for row in rows)
        print(f"{docset.name}: {len(rows)} queries")
    return 0


if __name__ == "__main__":
    sys.exit(main())
