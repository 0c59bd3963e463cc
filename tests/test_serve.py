"""`index serve` as a real process on a free loopback port, called over HTTP; and `index query`
answered by it. The index is built by a backend installed through an entry point (tests/serving.py),
so the server finds it again from the index's record, as it would a real package's."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import pytest
from conftest import SAMPLE_CORPUS
from serving import ServerProcess, build_sample, plugin_env, plugin_folder, run_index

from indexer import Index
from indexer.serving.discovery import ServerAddress

HIT_FIELDS = ("path", "start_line", "end_line", "heading", "text", "root", "mode", "locator")


@pytest.fixture(scope="module")
def plugins(tmp_path_factory) -> Path:
    return plugin_folder(tmp_path_factory.mktemp("plugins"))


@pytest.fixture
def env(plugins) -> dict[str, str]:
    return plugin_env(plugins)


@pytest.fixture
def sample_db(tmp_path, env) -> Path:
    db = tmp_path / "index.db"
    return build_sample(db, env)


@pytest.fixture
def server(sample_db, env, tmp_path):
    with ServerProcess(sample_db, env=env, log=tmp_path / "serve.log") as running:
        yield running


def same_hits(served: list[dict], local: list[dict]) -> None:
    """The same hits in the same order; scores equal but for the in-memory search's rounding."""
    assert [[hit[field] for field in HIT_FIELDS] for hit in served] == [
        [hit[field] for field in HIT_FIELDS] for hit in local
    ]
    assert [hit["score"] for hit in served] == pytest.approx([hit["score"] for hit in local], abs=1e-3)


def test_search_answers_the_hits_index_query_json_prints(server, sample_db, env):
    served = server.get("/search", params={"q": "flat tyre puncture", "k": 4, "mode": "hybrid"})
    assert served.status_code == 200
    local = run_index(
        "query", "flat tyre puncture", "--db", str(sample_db), "-k", "4", "--json", "--no-server", env=env
    )
    assert local.returncode == 0, local.stderr
    same_hits(served.json(), json.loads(local.stdout))
    assert len(served.json()) == 4


def test_search_filters_by_path_type_root_and_min_score(server):
    hits = server.get("/search", params={"q": "tyre", "path": "cooking/*", "k": 3}).json()
    assert hits and all(hit["path"].startswith("cooking/") for hit in hits)
    hits = server.get("/search", params={"q": "python", "type": ["txt", "rst"], "k": 5}).json()
    assert hits and all(hit["path"].endswith((".txt", ".rst")) for hit in hits)
    root = str(SAMPLE_CORPUS.resolve())
    assert server.get("/search", params={"q": "tyre", "root": root}).json()
    assert server.get("/search", params={"q": "tyre", "root": "/elsewhere"}).json() == []
    keyword = server.get("/search", params={"q": "tyre", "mode": "keyword", "min_score": 1e9}).json()
    assert keyword == []


def test_a_hit_citation_reads_back_its_text_and_the_whole_file(server):
    hit = server.get("/search", params={"q": "finding the cause of a puncture", "k": 1}).json()[0]
    citation = f"{hit['path']}:{hit['start_line']}-{hit['end_line']}"
    passage = server.get(f"/chunks/{citation}")
    assert passage.status_code == 200
    assert passage.json()["text"] == hit["text"]
    whole = server.get(f"/chunks/{hit['path']}").json()
    source = (SAMPLE_CORPUS / hit["path"]).read_text(encoding="utf-8").rstrip("\n")
    assert whole["text"] == "\n".join(line if line.strip() else "" for line in source.split("\n"))
    assert whole["start_line"] == 1 and whole["end_line"] == len(source.split("\n"))


def test_status_health_and_openapi(server, sample_db):
    assert server.get("/health").json() == {"status": "ok"}
    status = server.get("/status").json()
    assert status["model"] == "plugin-v1" and status["chunks"] > 0
    assert status["index"] == str(sample_db)
    described = server.get("/openapi.json").json()
    assert {"/search", "/chunks/{citation}", "/status", "/health"} <= set(described["paths"])
    assert server.get("/docs").status_code == 200


@pytest.mark.parametrize(
    ("path", "params", "status"),
    [
        ("/search", {"q": "x", "k": 0}, 422),
        ("/search", {"q": "x", "k": "many"}, 422),
        ("/search", {"q": "x", "k": 10_001}, 422),
        ("/search", {"q": "x", "mode": "fuzzy"}, 422),
        ("/search", {"q": "x", "min_score": "high"}, 422),
        ("/search", {}, 422),
        ("/chunks/no/such/file.md", {}, 404),
        ("/chunks/bicycle-repair/fixing-a-flat-tyre.md:900-910", {}, 404),
        ("/nowhere", {}, 404),
    ],
)
def test_bad_requests_get_a_json_error_never_a_traceback(server, path, params, status):
    answer = server.get(path, params=params)
    assert answer.status_code == status
    assert answer.headers["content-type"] == "application/json"
    assert isinstance(answer.json()["error"], str) and answer.json()["error"]
    assert "Traceback" not in answer.text


def test_a_token_guards_every_request_and_is_never_shown(sample_db, env, tmp_path):
    token = "s3cret-token-never-logged"
    with ServerProcess(sample_db, "--token", token, env=env, log=tmp_path / "serve.log") as server:
        for path in ("/health", "/search?q=tyre", "/status", "/openapi.json"):
            assert server.get(path).status_code == 401
            assert server.get(path, headers={"Authorization": "Bearer wrong"}).status_code == 401
            assert server.get(path, headers={"Authorization": f"Bearer {token}"}).status_code == 200
        assert server.get("/health", headers={"Authorization": token}).status_code == 401
        assert server.address["token"] is True
        assert token not in server.serve_file.read_text()
        # `index query` sends the token from $INDEX_TOKEN, else searches locally
        with_token = run_index(
            "query", "tyre", "--db", str(sample_db), "--json", env={**env, "INDEX_TOKEN": token}
        )
        assert with_token.returncode == 0, with_token.stderr
    assert token not in server.output()


def test_serving_a_missing_index_is_a_usage_error(tmp_path, env):
    refused = run_index("serve", "--db", str(tmp_path / "none.db"), "--port", "0", env=env, timeout=60)
    assert refused.returncode == 2 and "no index at" in refused.stderr


def test_binding_beyond_loopback_needs_a_token(sample_db, env):
    refused = run_index(
        "serve", "--db", str(sample_db), "--host", "0.0.0.0", "--port", "0", env=env, timeout=60
    )
    assert refused.returncode == 2
    assert "token" in refused.stderr and "INDEX_TOKEN" in refused.stderr
    assert not Path(str(sample_db) + ".serve.json").exists()


def test_the_address_file_goes_when_the_server_stops(server, sample_db):
    assert server.serve_file.exists()
    with Index.open(sample_db, create=False) as index:  # a watcher ignores it, as the index's own
        assert str(server.serve_file) in index.store.own_files()
    assert server.address["pid"] == server.process.pid
    assert server.stop() == 128 + signal.SIGTERM  # stopped by SIGTERM, as a shell reports it
    assert not server.serve_file.exists()


def test_index_query_is_answered_by_the_running_server(server, sample_db, plugins):
    """Without the plugin installed, only the server (which has it) can embed the question."""
    bare = plugin_env(None)
    answered = run_index("query", "flat tyre", "--db", str(sample_db), "--mode", "vector", "--json", env=bare)
    assert answered.returncode == 0, answered.stderr
    local = run_index(
        "query",
        "flat tyre",
        "--db",
        str(sample_db),
        "--mode",
        "vector",
        "--json",
        "--no-server",
        env=plugin_env(plugins),
    )
    same_hits(json.loads(answered.stdout), json.loads(local.stdout))
    refused = run_index(
        "query", "flat tyre", "--db", str(sample_db), "--mode", "vector", "--no-server", env=bare
    )
    assert refused.returncode == 2 and "hash-plugin" in refused.stderr
    opted_out = run_index(
        "query", "flat tyre", "--db", str(sample_db), "--mode", "vector", env={**bare, "INDEX_NO_SERVER": "1"}
    )
    assert opted_out.returncode == 2
    text = run_index("query", "flat tyre", "--db", str(sample_db), env=bare)
    assert text.returncode == 0 and text.stdout.startswith("1. ")


def test_a_query_answered_by_the_server_imports_no_numpy(server, sample_db):
    probe = (
        "import sys\nfrom indexer.cli import main\n"
        f"try:\n    main(['query', 'tyre', '--db', {str(sample_db)!r}, '--json'])\n"
        "except SystemExit:\n    pass\n"
        "print('numpy' in sys.modules, 'onnxruntime' in sys.modules, file=sys.stderr)"
    )
    result = subprocess.run(
        [os.sys.executable, "-c", probe], env=plugin_env(None), capture_output=True, text=True
    )
    assert json.loads(result.stdout)
    assert result.stderr.strip() == "False False"


def test_a_gone_server_leaves_queries_local(sample_db, env, tmp_path):
    serve_file = Path(os.path.realpath(sample_db) + ".serve.json")
    gone = ServerAddress("127.0.0.1", 9, 2**22 + 7, "feedface", str(sample_db), False)  # no such process
    serve_file.write_text(json.dumps(gone.__dict__))
    started = time.monotonic()
    local = run_index("query", "tyre", "--db", str(sample_db), "--json", env=env)
    assert local.returncode == 0 and json.loads(local.stdout)
    alive_but_deaf = ServerAddress("127.0.0.1", 9, os.getpid(), "feedface", str(sample_db), False)
    serve_file.write_text(json.dumps(alive_but_deaf.__dict__))  # a live process, nothing listening
    local = run_index("query", "tyre", "--db", str(sample_db), "--json", env=env)
    assert local.returncode == 0 and json.loads(local.stdout)
    assert time.monotonic() - started < 60


def test_searches_go_on_while_a_build_writes_and_see_its_files(server, sample_db, env, tmp_path):
    docs = tmp_path / "more"
    docs.mkdir()
    for number in range(120):
        (docs / f"note{number:03}.md").write_text(f"# Note {number}\n\nzanzibarite mineral sample {number}\n")
    failures: list[str] = []
    answers = 0
    building = threading.Event()
    building.set()

    def search_until_built() -> None:
        nonlocal answers
        with httpx.Client(base_url=server.url, timeout=30) as client:
            while building.is_set():
                answer = client.get("/search", params={"q": "zanzibarite mineral", "k": 3})
                answers += 1
                if answer.status_code != 200:
                    failures.append(answer.text)

    searchers = [threading.Thread(target=search_until_built) for _ in range(4)]
    for searcher in searchers:
        searcher.start()
    slow = {**env, "PLUGIN_BACKEND_DELAY": "0.02"}
    built = run_index("build", str(docs), "--db", str(sample_db), "--batch-size", "4", "-q", env=slow)
    building.clear()
    for searcher in searchers:
        searcher.join()
    assert built.returncode == 0, built.stderr
    assert failures == [] and answers > 20
    hits = server.get("/search", params={"q": "zanzibarite", "mode": "keyword", "k": 200}).json()
    assert len(hits) == 120


def test_the_server_follows_a_rebuild_underneath_it(server, sample_db, env, tmp_path):
    before = server.get("/status").json()
    rebuilt = run_index(
        "build",
        str(SAMPLE_CORPUS),
        "--db",
        str(sample_db),
        "--backend",
        "hash-plugin",
        "--model",
        "plugin-v2",
        "--rebuild",
        "-q",
        env=env,
    )
    assert rebuilt.returncode == 0, rebuilt.stderr
    after = server.get("/status").json()
    assert before["model"] == "plugin-v1" and after["model"] == "plugin-v2"
    assert after["fingerprint"] != before["fingerprint"]
    served = server.get("/search", params={"q": "flat tyre", "k": 3, "mode": "vector"})
    assert served.status_code == 200
    local = run_index(
        "query",
        "flat tyre",
        "--db",
        str(sample_db),
        "-k",
        "3",
        "--mode",
        "vector",
        "--json",
        "--no-server",
        env=env,
    )
    same_hits(served.json(), json.loads(local.stdout))


def test_the_server_answers_from_an_index_deleted_and_built_anew_at_its_path(
    server, sample_db, env, tmp_path
):
    def statuses() -> list[dict]:  # at once, so that several of the server's threads answer
        with ThreadPoolExecutor(8) as pool:
            return list(pool.map(lambda _: server.get("/status").json(), range(24)))

    files = server.get("/status").json()["files"]
    assert {status["files"] for status in statuses()} == {files} and files > 1
    for suffix in ("", "-wal", "-shm"):  # `rm index.db*`, the advice for a damaged index
        Path(f"{sample_db}{suffix}").unlink(missing_ok=True)
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "quokka.md").write_text("# Quokkas\n\nA quokka lives on Rottnest Island.\n")
    built = run_index(
        "build",
        str(notes),
        "--db",
        str(sample_db),
        "--backend",
        "hash-plugin",
        "--model",
        "plugin-v1",
        "-q",
        env=env,
    )
    assert built.returncode == 0, built.stderr
    assert {(status["files"], status["roots"][0]["path"]) for status in statuses()} == {(1, str(notes))}
    hits = server.get("/search", params={"q": "quokka", "mode": "keyword"}).json()
    assert [hit["path"] for hit in hits] == ["quokka.md"]
    assert server.get("/search", params={"q": "flat tyre", "mode": "keyword"}).json() == []
