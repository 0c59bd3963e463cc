"""A backend another package installs under the `indexer.backends` entry point group, used through
the command line as a user would: named by `index build --backend`, found again from the index's
record by `index query` and `index status`; keyword search needs no backend at all."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import SAMPLE_CORPUS
from serving import install_backend, plugin_env, plugin_folder, run_index

#: every test installs a backend and runs `index` as a process (make test-fast leaves them out)
pytestmark = pytest.mark.heavy


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    plugins = plugin_folder(tmp_path_factory.mktemp("plugins"))
    db = tmp_path_factory.mktemp("plugin-index") / "index.db"
    env = plugin_env(plugins)
    result = run_index(
        "build", str(SAMPLE_CORPUS), "--db", str(db), "--backend", "hash-plugin", "--model", "p1", env=env
    )
    assert result.returncode == 0, result.stderr
    return db, env


def test_build_names_an_installed_backend_and_the_index_records_it(built):
    db, env = built
    status = json.loads(run_index("status", "--db", str(db), "--json", env=env).stdout)
    assert status["backend"] == {"backend": "hash-plugin", "model": "p1"}
    assert status["model"] == "p1"
    assert status["dimension"] == 32


def test_query_finds_the_backend_again_from_the_record(built):
    db, env = built
    result = run_index("query", "flat tyre", "--db", str(db), "--mode", "vector", "--json", env=env)
    assert result.returncode == 0, result.stderr
    assert len(json.loads(result.stdout)) == 5


def test_keyword_search_needs_no_backend(built):
    db, _ = built
    without_plugin = plugin_env(None)
    keyword = run_index(
        "query", "puncture", "--db", str(db), "--mode", "keyword", "--json", env=without_plugin
    )
    assert keyword.returncode == 0, keyword.stderr
    assert all("puncture" in hit["text"].lower() for hit in json.loads(keyword.stdout))
    vector = run_index("query", "puncture", "--db", str(db), "--mode", "vector", env=without_plugin)
    assert vector.returncode == 2
    assert "unknown backend 'hash-plugin'" in vector.stderr
    assert "indexer.backends" in vector.stderr


def build_with(kind: str, db: Path, env: dict[str, str]):
    """``index build`` of the sample corpus into ``db`` with ``--backend KIND``, in a process of its own."""
    return run_index("build", str(SAMPLE_CORPUS), "--db", str(db), "--backend", kind, "--model", "m", env=env)


def test_an_unknown_backend_name_lists_the_installed_ones(built, tmp_path):
    _, env = built
    result = build_with("nope", tmp_path / "x.db", env)
    assert result.returncode == 2
    assert "hash-plugin" in result.stderr
    assert "embedded" in result.stderr


def test_a_registered_class_that_is_not_a_backend_is_refused_naming_it(tmp_path):
    plugins = install_backend(
        plugin_folder(tmp_path / "plugins"), "not-a-backend", "decoder", "json:JSONDecoder"
    )

    result = build_with("decoder", tmp_path / "x.db", plugin_env(plugins))

    assert result.returncode == 2
    assert "'decoder' (json:JSONDecoder) is not a subclass of EmbeddingBackend" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "x.db").exists()
