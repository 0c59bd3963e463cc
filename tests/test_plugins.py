"""A backend another package installs under the `indexer.backends` entry point group, used through
the command line as a user would: named by `index build --backend`, found again from the index's
record by `index query` and `index status`; keyword search needs no backend at all."""

from __future__ import annotations

import json

import pytest
from conftest import SAMPLE_CORPUS
from serving import plugin_env, plugin_folder, run_index


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


def test_an_unknown_backend_name_lists_the_installed_ones(built, tmp_path):
    _, env = built
    result = run_index(
        "build",
        str(SAMPLE_CORPUS),
        "--db",
        str(tmp_path / "x.db"),
        "--backend",
        "nope",
        "--model",
        "m",
        env=env,
    )
    assert result.returncode == 2
    assert "hash-plugin" in result.stderr
    assert "embedded" in result.stderr


def test_a_registered_class_that_is_not_a_backend_is_refused_naming_it(tmp_path):
    plugins = plugin_folder(tmp_path / "plugins")
    info = plugins / "not_a_backend-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: not-a-backend\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text("[indexer.backends]\ndecoder = json:JSONDecoder\n")

    result = run_index(
        "build",
        str(SAMPLE_CORPUS),
        "--db",
        str(tmp_path / "x.db"),
        "--backend",
        "decoder",
        "--model",
        "m",
        env=plugin_env(plugins),
    )

    assert result.returncode == 2
    assert "'decoder' (json:JSONDecoder) is not a subclass of EmbeddingBackend" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "x.db").exists()
