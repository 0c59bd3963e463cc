"""Which paths a walk passes over: ignore files as git and ripgrep read them, the build's own
include and exclude patterns, and files that hold credentials by convention.

Patterns are matched by pathspec's ``GitIgnoreSpec`` (git's own wildmatch rules, negations, and "a
file under an excluded folder cannot be re-included"), not by our own matching. Precedence follows
ripgrep: ``.ignore`` files over ``.gitignore`` files over ``.git/info/exclude``, and among files of
one kind, the deepest folder's first; within one file the last matching line decides.
"""

from __future__ import annotations

import fnmatch
import os
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple

from pathspec import GitIgnoreSpec

from indexer.errors import ConfigError
from indexer.formats import written_name
from indexer.formats.compressed import uncompressed_name
from indexer.sizes import DEFAULT_MAX_FILE_SIZE

#: Ignore files read in every folder, most decisive first (ripgrep's order).
IGNORE_FILE_NAMES = (".ignore", ".gitignore")
_EXCLUDE_RANK = len(IGNORE_FILE_NAMES)  # .git/info/exclude decides last

#: Names of files that hold credentials by convention: never read unless a build allows them by name.
SECRET_NAMES = """.env .env.* *.env .envrc *.pem *.key *.p12 *.pfx *.jks *.keystore *.kdbx id_rsa* id_dsa*
    id_ecdsa* id_ed25519* .netrc _netrc .npmrc .pypirc .pgpass .htpasswd .git-credentials .dockercfg
    credentials credentials.* secrets.* *.tfstate *.tfstate.* *.tfvars nuget.config
    .s3cfg .boto .my.cnf""".split()
#: ...except prose about them: ``credentials.md`` explains credentials, it does not hold them.
PROSE_EXTENSIONS = frozenset(
    """md markdown mdx rst rest txt text html htm xhtml adoc asciidoc asc org tex docbook dbk pdf docx
    ipynb""".split()
)
_SECRET_NAME = re.compile("|".join(fnmatch.translate(pattern) for pattern in SECRET_NAMES))
_PROSE_EXEMPT = ("credentials.", "secrets.")

Problem = Callable[[str, str], None]  # (path, reason) of an ignore file that could not be read


@dataclass(frozen=True)
class WalkRules:
    """What a build of one root walks, recorded with the index for that root and re-used by later
    builds and ``index watch``.

    ``ignore_files``: honour ``.gitignore``, ``.ignore`` and ``.git/info/exclude``. ``include``: when
    given, only files matching one of these patterns. ``exclude``: never files or folders matching
    one of these. ``allow_secrets``: files matching these are read as they are: even though their
    name says they hold credentials, and without their secrets redacted. All patterns are gitignore
    patterns relative to the root (``*.md``, ``docs/``, ``/build``, ``**/generated/**``).
    ``max_file_size``: files larger than this many bytes are left out, unread.
    """

    ignore_files: bool = True
    include: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()
    allow_secrets: tuple[str, ...] = ()
    max_file_size: int = DEFAULT_MAX_FILE_SIZE

    def __post_init__(self) -> None:
        for name in ("include", "exclude", "allow_secrets"):
            compile_patterns(getattr(self, name), name)
        size = self.max_file_size
        if isinstance(size, bool) or not isinstance(size, int) or size < 1:
            raise ConfigError(f"max_file_size must be a positive number of bytes, not {size!r}")

    def describe(self) -> dict[str, Any]:
        """The record kept in the index (JSON-safe)."""
        return {
            "ignore_files": self.ignore_files,
            "include": list(self.include),
            "exclude": list(self.exclude),
            "allow_secrets": list(self.allow_secrets),
            "max_file_size": self.max_file_size,
        }

    @classmethod
    def from_record(cls, record: dict[str, Any]) -> WalkRules:
        return cls(
            ignore_files=bool(record.get("ignore_files", True)),
            include=tuple(record.get("include", ())),
            exclude=tuple(record.get("exclude", ())),
            allow_secrets=tuple(record.get("allow_secrets", ())),
            max_file_size=int(record.get("max_file_size", DEFAULT_MAX_FILE_SIZE)),
        )


def compile_patterns(patterns: Sequence[str], setting: str) -> GitIgnoreSpec | None:
    """The patterns of a setting as one spec (None when there are none); a bad one names the setting."""
    if not patterns:
        return None
    for pattern in patterns:
        if not isinstance(pattern, str) or not pattern.strip():
            raise ConfigError(f"{setting}: {pattern!r} is not a pattern")
        try:
            GitIgnoreSpec.from_lines([pattern])
        except ValueError as error:  # pathspec's pattern errors are ValueErrors
            raise ConfigError(f"{setting}: {pattern!r} is not a valid gitignore pattern: {error}") from error
    return GitIgnoreSpec.from_lines(patterns)


def is_secret_name(name: str) -> bool:
    """Whether a file name says the file holds credentials (``.env``, ``id_rsa``, ``*.pem``...), or a
    compressed file's, a template's or an example copy's that the file it holds, renders or stands
    for does (``server.pem.gz``, ``.netrc.j2``, ``.pgpass.sample``): a copy committed as an example
    often holds the real thing."""
    uncompressed = uncompressed_name(name.lower())
    lowered = written_name(uncompressed)
    if not _SECRET_NAME.match(lowered) and not _SECRET_NAME.match(uncompressed):
        return False
    extension = lowered.rsplit(".", 1)[-1]
    return not (lowered.startswith(_PROSE_EXEMPT) and extension in PROSE_EXTENSIONS)


def is_virtual_env(names: Iterable[str]) -> bool:
    """Whether a folder holding these names is a Python virtual environment or a conda environment,
    known by what it is rather than by its name (a docs folder may well be called ``env``)."""
    return any(name in ("pyvenv.cfg", "conda-meta") for name in names)


class RuleSet(NamedTuple):
    """One ignore file's patterns and where they apply: a root-relative path ``p`` is matched as
    ``prefix + p[strip:]`` (the file's folder below the root is stripped; for a file above the root,
    the root's path below that folder is put in front)."""

    rank: int
    strip: int
    prefix: str
    spec: GitIgnoreSpec


class IgnoreChain:
    """The ignore files in force in one folder, most decisive first; shared by its subfolders
    until one of them has ignore files of its own."""

    def __init__(self, rule_sets: tuple[RuleSet, ...] = ()) -> None:
        self.rule_sets = rule_sets

    def ignores(self, path: str) -> bool:
        """Whether ``path`` (relative to the root; a folder's with a trailing ``/``) is ignored."""
        for rule_set in self.rule_sets:
            decided = rule_set.spec.check_file(rule_set.prefix + path[rule_set.strip :]).include
            if decided is not None:
                return decided
        return False

    def below(self, own: list[RuleSet]) -> IgnoreChain:
        """The chain of a subfolder with ignore files ``own`` (deeper than every file in this chain)."""
        if not own:
            return self
        return IgnoreChain(tuple(sorted((*own, *self.rule_sets), key=lambda rule_set: rule_set.rank)))


class PathRules:
    """What the walk asks of each path besides its type: is it ignored (by ignore files or the
    build's patterns), and is a file named like credentials let in by name. Reads each ignore file
    once, when its folder is entered."""

    def __init__(self, root: Path, rules: WalkRules, problem: Problem) -> None:
        self.root = root
        self.rules = rules
        self.problem = problem
        self.include = compile_patterns(rules.include, "include")
        self.exclude = compile_patterns(rules.exclude, "exclude")
        self.allowed = compile_patterns(rules.allow_secrets, "allow_secrets")

    def root_chain(self) -> IgnoreChain:
        """The ignore files above the root that apply to it: in a git repository, those of the folders
        from the repository's top down to the root's parent, and the repository's ``info/exclude``."""
        if not self.rules.ignore_files:
            return IgnoreChain()
        real_root = Path(os.path.realpath(self.root))
        top = next((folder for folder in (real_root, *real_root.parents) if (folder / ".git").exists()), None)
        if top is None or top == real_root:
            return IgnoreChain()
        own: list[RuleSet] = []
        below_top = real_root.relative_to(top).parts
        for depth in reversed(range(len(below_top))):  # deepest first: it decides first within a kind
            folder = top.joinpath(*below_top[:depth])
            prefix = "/".join(below_top[depth:]) + "/"
            own.extend(self._rule_sets(folder, 0, prefix, has_git=depth == 0))
        return IgnoreChain(tuple(sorted(own, key=lambda rule_set: rule_set.rank)))

    def enter(self, chain: IgnoreChain, relative: str, names: Iterable[str]) -> IgnoreChain:
        """The chain in force inside the folder ``relative`` (``""``: the root), whose entries are
        ``names``: its own ignore files, if any, on top of ``chain``."""
        if not self.rules.ignore_files:
            return chain
        present = set(names)
        if not present.intersection((*IGNORE_FILE_NAMES, ".git")):
            return chain
        strip = len(relative) + 1 if relative else 0
        own = self._rule_sets(self.root / relative, strip, "", has_git=".git" in present, present=present)
        return chain.below(own)

    def ignores_folder(self, chain: IgnoreChain, relative: str) -> bool:
        folder = relative + "/"
        return chain.ignores(folder) or (self.exclude is not None and self.exclude.match_file(folder))

    def ignores_file(self, chain: IgnoreChain, relative: str) -> bool:
        if self.include is not None and not self.include.match_file(relative):
            return True
        return chain.ignores(relative) or (self.exclude is not None and self.exclude.match_file(relative))

    def allows_secret(self, relative: str) -> bool:
        """Named like a credentials file, but let in by the build's ``allow_secrets``."""
        return self.allowed is not None and self.allowed.match_file(relative)

    def _rule_sets(
        self,
        folder: Path,
        strip: int,
        prefix: str,
        has_git: bool,
        present: set[str] | None = None,
    ) -> list[RuleSet]:
        """The rule sets of one folder's ignore files (and its repository's exclude file)."""
        sources = [(rank, folder / name) for rank, name in enumerate(IGNORE_FILE_NAMES)]
        if has_git:
            exclude = git_exclude_file(folder)
            if exclude is not None:
                sources.append((_EXCLUDE_RANK, exclude))
        found = []
        for rank, path in sources:
            if present is not None and rank < _EXCLUDE_RANK and path.name not in present:
                continue
            spec = self._read(path)
            if spec is not None:
                found.append(RuleSet(rank, strip, prefix, spec))
        if prefix:  # above the root: the root itself is never ignored, since it was asked for by name
            found = [rule_set._replace(spec=_not_matching(rule_set.spec, prefix)) for rule_set in found]
        return found

    def _read(self, path: Path) -> GitIgnoreSpec | None:
        try:
            data = path.read_bytes()
        except FileNotFoundError:
            return None
        except OSError as error:
            self.problem(str(path), f"ignore file not read: {error.strerror or error}")
            return None
        lines = data.decode("utf-8", "surrogateescape").splitlines()
        try:
            return GitIgnoreSpec.from_lines(lines)
        except ValueError:
            return GitIgnoreSpec.from_lines(self._valid_lines(path, lines))

    def _valid_lines(self, path: Path, lines: list[str]) -> list[str]:
        """The lines of an ignore file that git would use: a malformed pattern is reported, not fatal."""
        valid = []
        for number, line in enumerate(lines, start=1):
            try:
                GitIgnoreSpec.from_lines([line])
            except ValueError as error:  # pathspec's pattern errors are ValueErrors
                self.problem(f"{path}:{number}", f"ignore pattern not used: {error}")
                continue
            valid.append(line)
        return valid


def _not_matching(spec: GitIgnoreSpec, folder: str) -> GitIgnoreSpec:
    """``spec`` without the patterns that would ignore ``folder`` itself (and so all below it)."""
    kept = [pattern for pattern in spec.patterns if not (pattern.include and pattern.match_file(folder))]
    return spec if len(kept) == len(spec.patterns) else GitIgnoreSpec(kept)


def git_exclude_file(folder: Path) -> Path | None:
    """``info/exclude`` of the repository whose top is ``folder``: in ``.git/``, or for a worktree or
    submodule (a ``.git`` file saying ``gitdir: ...``) in the repository's common folder."""
    marker = folder / ".git"
    if marker.is_dir():
        return marker / "info" / "exclude"
    try:
        text = marker.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    if not text.startswith("gitdir:"):
        return None
    git_dir = folder / text[len("gitdir:") :].strip()
    common = git_dir / "commondir"
    if common.is_file():
        git_dir = git_dir / common.read_text(encoding="utf-8", errors="replace").strip()
    return git_dir / "info" / "exclude"
