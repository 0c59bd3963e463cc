"""A non-editable install carries the migrations, the tokenizer and the search page's files, and
opens an index with them."""

from __future__ import annotations

import ast
import importlib.metadata
import inspect
import os
import re
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from conftest import REPO
from helpers import index_command
from packaging.requirements import Requirement

import indexer
from indexer.store.migrations import all_migrations

if sys.version_info >= (3, 11):
    import tomllib
else:
    import tomli as tomllib


@pytest.mark.heavy
def test_wheel_ships_migrations_tokenizer_and_search_page_and_works_outside_the_checkout(tmp_path):
    built = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", str(REPO), "--no-deps", "-q", "-w", str(tmp_path / "wheels")],
        capture_output=True,
        text=True,
    )
    assert built.returncode == 0, built.stderr
    wheel = next((tmp_path / "wheels").glob("indexer_search-*.whl"))
    names = set(zipfile.ZipFile(wheel).namelist())
    assert "indexer/migrations/sqlite/0001_initial.sql" in names
    assert "indexer/migrations/postgres/0001_initial.sql" in names
    assert "indexer/models/all-MiniLM-L6-v2/tokenizer.json" in names
    page = {f"indexer/serving/static/{name}" for name in os.listdir(REPO / "indexer/serving/static")}
    assert {"indexer/serving/static/index.html", "indexer/serving/static/app.js"} <= page <= names
    target = tmp_path / "site"
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "--no-deps", "-q", "--target", str(target), str(wheel)],
        check=True,
    )
    script = (
        "import sys; sys.path.insert(0, sys.argv[1]); from indexer.store import migrations, sqlite; "
        "store = sqlite.SQLiteStore.open(sys.argv[2], writable=True, create=True); "
        "print(migrations.migrations_folder('sqlite')); print(store.applied_migrations()); "
        "from indexer.serving import web; print(web.STATIC)"
    )
    opened = subprocess.run(
        [sys.executable, "-c", script, str(target), str(tmp_path / "index.db")],
        capture_output=True,
        text=True,
        cwd=tmp_path,
    )
    assert opened.returncode == 0, opened.stderr
    folder, migrations, static = opened.stdout.splitlines()
    assert Path(folder).is_relative_to(target)
    assert Path(static).is_relative_to(target)
    assert (Path(static) / "index.html").is_file()
    assert migrations == str([migration.name for migration in all_migrations("sqlite")])


@pytest.mark.heavy
def test_the_distribution_installs_under_its_own_name_and_imports_without_posix_only_modules():
    """The name on PyPI is indexer-search ("indexer" is another, older project); the package must
    import on Windows, where neither fcntl nor resource exists."""
    assert importlib.metadata.version("indexer-search")
    script = (
        "import sys; sys.modules['fcntl'] = None; sys.modules['resource'] = None\n"
        "import indexer, indexer.cli, indexer.store.sqlite, indexer.store.locks, indexer.pipeline.build\n"
        "print('imported')"
    )
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert result.returncode == 0 and result.stdout.strip() == "imported", result.stderr


@pytest.mark.heavy
def test_the_version_is_the_installed_distributions_in_python_and_on_the_command_line():
    installed = importlib.metadata.version("indexer-search")
    assert indexer.__version__ == installed
    result = subprocess.run([*index_command(), "--version"], capture_output=True, text=True)
    assert result.returncode == 0
    assert result.stdout.strip() == f"index, version {installed}"


#: The parts of the package that run only with an extra installed, and the extras they may import.
EXTRA_PARTS = {
    "indexer/serving/": "serve",
    "indexer/integrations/langchain.py": "langchain",
    "indexer/integrations/llama_index.py": "llamaindex",
    "indexer/store/postgres.py": "postgres",
}


#: The standard library's modules, with those it gained after the oldest Python the package takes,
#: which the package imports only where they exist (tomllib, with tomli before it)
STANDARD_LIBRARY = set(sys.stdlib_module_names) | {"tomllib"}


def imported_modules(path: Path) -> set[str]:
    """The top-level names of the modules a source file imports, at any depth of its code."""
    imported: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            imported.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            imported.add(node.module.split(".")[0])
    return imported


def declared_requirements() -> dict[str, set[str]]:
    """The distributions pyproject.toml asks for: '' for the core, else by extra, names normalised."""
    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    groups = {"": project["dependencies"], **project["optional-dependencies"]}
    return {group: {canonical(Requirement(line).name) for line in lines} for group, lines in groups.items()}


def module_owners() -> dict[str, set[str]]:
    """The distributions that install each top-level module, read from their file lists as Python
    3.11's ``packages_distributions`` reads them: 3.10's reads only ``top_level.txt``, which wheels
    built by newer tools (llama-index-core's) do not have."""
    owners: dict[str, set[str]] = {}
    for distribution in importlib.metadata.distributions():
        top_level = (distribution.read_text("top_level.txt") or "").split()
        for file in distribution.files or ():
            name = file.parts[0] if len(file.parts) > 1 else inspect.getmodulename(file.name)
            if name and "." not in name:
                top_level.append(name)
        for name in top_level:
            owners.setdefault(name, set()).add(canonical(distribution.metadata["Name"]))
    return owners


def canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def test_every_module_the_package_imports_is_a_dependency_it_declares():
    """A module that arrives only through another package's dependencies (filelock through
    tokenizers') is gone the day that package stops needing it: every import is declared, in the core
    dependencies, or in the extra of the part that imports it (serve, postgres, the retrievers)."""
    owners_of = module_owners()
    declared = declared_requirements()
    undeclared = []
    for path in sorted((REPO / "indexer").rglob("*.py")):
        relative = path.relative_to(REPO).as_posix()
        extra = next((extra for part, extra in EXTRA_PARTS.items() if relative.startswith(part)), "")
        allowed = declared[""] | declared.get(extra, set())
        for module in sorted(imported_modules(path) - STANDARD_LIBRARY - {"indexer"}):
            owners = owners_of.get(module, {canonical(module)})
            if not owners & allowed:
                undeclared.append(f"{relative}: {module} ({', '.join(sorted(owners))})")
    assert undeclared == []
