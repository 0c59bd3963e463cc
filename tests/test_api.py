"""The library API as programs use it: an `Index` kept open while other processes rebuild, shared by
threads, asked for absurd `k`, with no builds yet, or recording a backend it cannot make."""

from __future__ import annotations

import threading

import pytest
from conftest import snapshot
from helpers import HashBackend, write_corpus
from loopback import OllamaServer
from runs import build, cli

from indexer import ConfigError, Index
from indexer.errors import BackendUnreachableError


@pytest.mark.heavy
def test_a_long_lived_index_follows_a_rebuild_with_another_model(tmp_path, docs):
    index_path = str(tmp_path / "index.db")
    with OllamaServer() as server:
        ollama = ["--backend", "ollama", "--base-url", server.url]
        assert cli("build", str(docs), "--db", index_path, *ollama, "--model", "model-a").exit_code == 0
        with Index.open(index_path, create=False) as reader:
            reader.search("rivers and lakes", min_score=0)
            assert server.requests[-1].body["model"] == "model-a"
            rebuilt = cli("build", str(docs), "--db", index_path, *ollama, "--model", "model-b", "--rebuild")
            assert rebuilt.exit_code == 0, rebuilt.output
            reader.search("rivers and lakes", min_score=0)
            assert server.requests[-1].body["model"] == "model-b"


def test_a_long_lived_index_with_its_own_backend_refuses_to_mix_models(tmp_path, docs):
    index_path = tmp_path / "index.db"
    build(index_path, docs, HashBackend(model_name="hash-a"))
    with Index.open(index_path, backend=HashBackend(model_name="hash-a")) as reader:
        assert reader.search("rivers", mode="vector", min_score=0)
        build(index_path, docs, HashBackend(model_name="hash-b"), rebuild=True)
        with pytest.raises(ConfigError, match="other settings than this backend's.*'hash-b' -> 'hash-a'"):
            reader.search("rivers", mode="vector", min_score=0)
        assert reader.search("rivers", mode="keyword", min_score=0)  # no model involved


def test_large_k_works_and_absurd_k_is_a_usage_error(tmp_path, docs):
    index_path = tmp_path / "index.db"
    build(index_path, write_corpus(docs, 10, paragraphs=60), HashBackend())
    with Index.open(index_path, backend=HashBackend()) as index:
        for mode in ("hybrid", "vector", "keyword"):
            hits = index.search("word1x2x3", k=5000, mode=mode, min_score=0)
            assert 0 < len(hits) <= 5000
        with pytest.raises(ConfigError, match="k must be"):
            index.search("word", k=10**30, min_score=0)
    result = cli("query", "word", "--db", str(index_path), "-k", "99999999999999999999")
    assert result.exit_code == 2
    assert "Traceback" not in result.output


def test_status_of_an_index_with_no_builds(tmp_path):
    with Index.open(tmp_path / "index.db") as index:
        status = index.status()
    assert status["builds"] == []
    assert status["files"] == 0
    result = cli("status", "--db", str(tmp_path / "index.db"))
    assert result.exit_code == 0, result.output


@pytest.mark.slow
def test_one_index_shared_by_threads_answers_every_search(tmp_path, docs):
    index_path = tmp_path / "index.db"
    build(index_path, write_corpus(docs, 20, paragraphs=30))
    failures: list[BaseException] = []
    answers: list[list[str]] = []
    with Index.open(index_path, backend=HashBackend()) as index:
        expected = [hit.citation for hit in index.search("word3x4x5 word7x1x2", min_score=0)]

        def searcher() -> None:
            try:
                for _ in range(25):
                    answers.append([hit.citation for hit in index.search("word3x4x5 word7x1x2", min_score=0)])
            except BaseException as error:
                failures.append(error)

        threads = [threading.Thread(target=searcher) for _ in range(8)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    assert failures == []
    assert len(answers) == 200
    assert all(answer == expected for answer in answers)


def test_a_single_path_pattern_is_one_pattern_not_its_characters(tmp_path, docs):
    index_path = tmp_path / "index.db"
    build(index_path, docs)
    with Index.open(index_path, backend=HashBackend()) as index:
        hits = index.search("a file about rivers", k=10, paths="sub/*", min_score=0)
    assert hits
    assert {hit.path for hit in hits} == {"sub/deep.md"}


def test_an_unknown_backend_kind_in_an_index_is_one_line(tmp_path, docs):
    build(tmp_path / "index.db", docs)  # recorded backend "test-hash" is not one the CLI can make
    result = cli("query", "rivers", "--db", str(tmp_path / "index.db"))
    assert result.exit_code == 2
    assert "unknown backend 'test-hash'" in result.stderr


def test_a_backend_that_cannot_embed_stops_with_exit_4(tmp_path, docs):
    class Nothing(HashBackend):
        def embed(self, texts):
            raise NotImplementedError("no model here")

    report = build(tmp_path / "index.db", docs, Nothing())
    assert report.exit_code == BackendUnreachableError.exit_code
    assert snapshot(tmp_path / "index.db")["files"] == []
