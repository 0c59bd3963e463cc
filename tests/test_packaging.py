"""A non-editable install carries the migrations, the tokenizer and the search page's files, and
opens an index with them."""

from __future__ import annotations

import importlib.metadata
import os
import subprocess
import sys
import zipfile
from pathlib import Path

from conftest import REPO
from helpers import index_command

import indexer
from indexer.store.migrations import all_migrations


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


def test_the_version_is_the_installed_distributions_in_python_and_on_the_command_line():
    installed = importlib.metadata.version("indexer-search")
    assert indexer.__version__ == installed
    result = subprocess.run([*index_command(), "--version"], capture_output=True, text=True)
    assert result.returncode == 0
    assert result.stdout.strip() == f"index, version {installed}"
