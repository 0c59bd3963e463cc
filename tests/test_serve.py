"""`index serve` as a real process on a free loopback port, called over HTTP; and `index query`
answered by it. The index is built by a backend installed through an entry point (tests/support/serving.py),
so the server finds it again from the index's record, as it would a real package's."""

from __future__ import annotations

import json
import os
import resource
import signal
import socket
import stat
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from urllib.parse import quote

import httpx
import pytest
from conftest import SAMPLE_CORPUS
from hostile import FILES, holds_raw, make_hostile_folder
from serving import (
    Impostor,
    ServerProcess,
    build_sample,
    plant_address_file,
    plugin_env,
    plugin_folder,
    run_index,
)

from indexer import Index
from indexer.request import MAX_QUESTION_CHARS
from indexer.serving.limits import ServeLimits

#: every test starts `index serve` as a process (make test-fast leaves them out)
pytestmark = pytest.mark.heavy

SUPPORT = Path(__file__).resolve().parent / "support"
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


@pytest.fixture(scope="module")
def reading_server(plugins, tmp_path_factory):
    """One sample index and its server for the tests that only ask it questions, good and bad: a
    build and a server's start for each of them would be most of their time. A test that stops the
    server, or changes the index under it, takes its own (``server``)."""
    folder = tmp_path_factory.mktemp("reading")
    env = plugin_env(plugins)
    db = build_sample(folder / "index.db", env)
    with ServerProcess(db, env=env, log=folder / "serve.log") as running:
        yield running


def same_hits(served: list[dict], local: list[dict]) -> None:
    """The same hits in the same order; scores equal but for the in-memory search's rounding."""
    assert [[hit[field] for field in HIT_FIELDS] for hit in served] == [
        [hit[field] for field in HIT_FIELDS] for hit in local
    ]
    assert [hit["score"] for hit in served] == pytest.approx([hit["score"] for hit in local], abs=1e-3)


def test_search_answers_the_hits_index_query_json_prints(reading_server):
    served = reading_server.get("/search", params={"q": "flat tyre puncture", "k": 4, "mode": "hybrid"})
    assert served.status_code == 200
    local = run_index(
        "query",
        "flat tyre puncture",
        "--db",
        str(reading_server.db),
        "-k",
        "4",
        "--json",
        "--no-server",
        env=reading_server.env,
    )
    assert local.returncode == 0, local.stderr
    same_hits(served.json(), json.loads(local.stdout))
    assert len(served.json()) == 4


def test_search_filters_by_path_type_root_and_min_score(reading_server):
    hits = reading_server.get("/search", params={"q": "tyre", "path": "cooking/*", "k": 3}).json()
    assert hits
    assert all(hit["path"].startswith("cooking/") for hit in hits)
    hits = reading_server.get("/search", params={"q": "python", "type": ["txt", "rst"], "k": 5}).json()
    assert hits
    assert all(hit["path"].endswith((".txt", ".rst")) for hit in hits)
    root = str(SAMPLE_CORPUS.resolve())
    assert reading_server.get("/search", params={"q": "tyre", "root": root}).json()
    elsewhere = reading_server.get("/search", params={"q": "tyre", "root": "/elsewhere"})
    assert elsewhere.status_code == 404
    assert elsewhere.json()["error"].endswith(f"holds no folder /elsewhere (its folders: {root})")
    keyword = reading_server.get("/search", params={"q": "tyre", "mode": "keyword", "min_score": 1e9}).json()
    assert keyword == []


def test_search_takes_plural_filter_names_and_the_documented_singular_ones(reading_server):
    for name in ("paths", "path"):
        hits = reading_server.get(
            "/search", params={"q": "tyre", name: ["cooking/*", "gardening/*"], "k": 5}
        ).json()
        assert hits and all(hit["path"].startswith(("cooking/", "gardening/")) for hit in hits), name
    both = reading_server.get(
        "/search",
        params={"q": "sky", "mode": "keyword", "min_score": 0, "types": "txt", "type": "rst", "k": 10},
    ).json()
    assert {hit["path"].rsplit(".", 1)[-1] for hit in both} == {"txt", "rst"}


def test_search_applies_the_default_threshold_and_reranks_when_asked(reading_server):
    pizza = {"q": "best pizza in naples", "mode": "keyword"}
    assert reading_server.get("/search", params=pizza).json() == []
    assert reading_server.get("/search", params={**pizza, "min_score": 0}).json()
    # the re-ranker's threshold holds whatever model found the candidates
    reranked = {"q": "best pizza in naples", "rerank": "true", "rerank_top": 3}
    assert reading_server.get("/search", params=reranked).json() == []
    hits = reading_server.get(
        "/search", params={"q": "puncture", "k": 2, "rerank": "true", "rerank_top": 3}
    ).json()
    assert hits
    assert hits[0]["path"] == "bicycle-repair/fixing-a-flat-tyre.md"
    assert [hit["score"] for hit in hits] == sorted((hit["score"] for hit in hits), reverse=True)
    assert reading_server.get("/search", params={"q": "x", "rerank_top": 0}).status_code == 422


def test_a_hit_citation_reads_back_its_text_and_the_whole_file(reading_server):
    hit = reading_server.get("/search", params={"q": "finding the cause of a puncture", "k": 1}).json()[0]
    citation = f"{hit['path']}:{hit['start_line']}-{hit['end_line']}"
    passage = reading_server.get(f"/chunks/{citation}")
    assert passage.status_code == 200
    assert passage.json()["text"] == hit["text"]
    whole = reading_server.get(f"/chunks/{hit['path']}").json()
    source = (SAMPLE_CORPUS / hit["path"]).read_text(encoding="utf-8").rstrip("\n")
    assert whole["text"] == "\n".join(line if line.strip() else "" for line in source.split("\n"))
    assert whole["start_line"] == 1
    assert whole["end_line"] == len(source.split("\n"))


def test_status_health_and_openapi(reading_server):
    assert reading_server.get("/health").json() == {"status": "ok"}
    status = reading_server.get("/status").json()
    assert status["model"] == "plugin-v1"
    assert status["chunks"] > 0
    assert status["index"] == str(reading_server.db)
    described = reading_server.get("/openapi.json").json()
    assert {"/search", "/chunks/{citation}", "/status", "/health"} <= set(described["paths"])
    assert reading_server.get("/docs").status_code == 200


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
def test_bad_requests_get_a_json_error_never_a_traceback(reading_server, path, params, status):
    answer = reading_server.get(path, params=params)
    assert answer.status_code == status
    assert answer.headers["content-type"] == "application/json"
    assert isinstance(answer.json()["error"], str)
    assert answer.json()["error"]
    assert "Traceback" not in answer.text


def test_nul_bytes_and_backward_ranges_are_422_many_filters_and_any_k_are_answered(reading_server):
    guide = "bicycle-repair/fixing-a-flat-tyre.md"
    refused = [
        ("/search", {"q": "ty\0re"}, "the question 'ty\\x00re' holds a NUL byte"),
        ("/search", {"q": "tyre", "path": ["cooking/*", "a\0"]}, "path 'a\\x00' holds a NUL byte"),
        ("/search", {"q": "tyre", "type": "m\0d"}, "type 'm\\x00d' holds a NUL byte"),
        ("/search", {"q": "tyre", "root": "/a\0"}, "root '/a\\x00' holds a NUL byte"),
        (f"/chunks/{guide}%00:1-3", {}, "holds a NUL byte"),
        (f"/chunks/{guide}", {"root": "/x\0"}, "root '/x\\x00' holds a NUL byte"),
        (f"/chunks/{guide}:5-1", {}, f"{guide}:5-1 runs backwards: ask for {guide}:1-5"),
    ]
    for path, params, message in refused:
        answer = reading_server.get(path, params=params)
        assert (answer.status_code, answer.headers["content-type"]) == (422, "application/json"), path
        assert message in answer.json()["error"]
        assert "\n" not in answer.json()["error"]
    many = [f"nowhere{number}/*" for number in range(600)] + ["cooking/*"]
    filtered = reading_server.get("/search", params={"q": "tyre", "path": many, "k": 3})
    assert filtered.status_code == 200
    assert {hit["path"].split("/")[0] for hit in filtered.json()} == {"cooking"}
    everything = reading_server.get("/search", params={"q": "tyre", "k": 10_000, "mode": "vector"})
    assert everything.status_code == 200
    assert len(everything.json()) == reading_server.get("/status").json()["chunks"]


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
    assert refused.returncode == 2
    assert "no index at" in refused.stderr


def test_binding_beyond_loopback_needs_a_token(sample_db, env):
    refused = run_index(
        "serve", "--db", str(sample_db), "--host", "0.0.0.0", "--port", "0", env=env, timeout=60
    )
    assert refused.returncode == 2
    assert "token" in refused.stderr
    assert "INDEX_TOKEN" in refused.stderr
    assert not Path(str(sample_db) + ".serve.json").exists()


def test_the_address_file_goes_when_the_server_stops(server, sample_db):
    assert server.serve_file.exists()
    with Index.open(sample_db, create=False) as index:  # a watcher ignores it, as the index's own
        assert str(server.serve_file) in index.store.own_files()
    assert server.address["pid"] == server.process.pid
    assert stat.S_IMODE(server.serve_file.stat().st_mode) == 0o600  # it holds the run's secret
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
    assert refused.returncode == 2
    assert "hash-plugin" in refused.stderr
    opted_out = run_index(
        "query", "flat tyre", "--db", str(sample_db), "--mode", "vector", env={**bare, "INDEX_NO_SERVER": "1"}
    )
    assert opted_out.returncode == 2
    text = run_index("query", "flat tyre", "--db", str(sample_db), env=bare)
    assert text.returncode == 0
    assert text.stdout.startswith("1. ")


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


def test_a_gone_server_leaves_queries_local_and_says_nothing(sample_db, env):
    started = time.monotonic()
    plant_address_file(sample_db, pid=2**22 + 7, token=False)  # no such process
    local = run_index("query", "tyre", "--db", str(sample_db), "--json", env=env)
    assert local.returncode == 0
    assert json.loads(local.stdout)
    assert local.stderr == ""
    plant_address_file(sample_db, token=False)  # a live process, nothing listening on port 9
    local = run_index("query", "tyre", "--db", str(sample_db), "--json", env=env)
    assert local.returncode == 0
    assert json.loads(local.stdout)
    assert local.stderr == ""
    assert time.monotonic() - started < 60


def test_an_address_file_someone_else_could_have_written_gets_no_question_and_no_token(
    sample_db, env, tmp_path
):
    """Whoever can write beside the index can plant an address file: the query trusts only a file of
    its own user, closed to others, naming loopback, and then a server that proves it holds the
    file's secret. Anything else is said in one line, and the search runs here."""
    token = "t0ken-of-the-real-server"
    question = ["query", "flat tyre", "--db", str(sample_db), "--json"]
    local = json.loads(run_index(*question, "--no-server", env=env).stdout)
    with Impostor() as impostor:
        at_impostor = {"port": impostor.port}

        def linked() -> None:
            mine = plant_address_file(tmp_path / "elsewhere.db", **at_impostor)  # private, of this user
            plant_address_file(sample_db).unlink()
            Path(os.path.realpath(sample_db) + ".serve.json").symlink_to(mine)

        planted = [
            ("is open to group or others", lambda: plant_address_file(sample_db, 0o644, **at_impostor)),
            ("cannot be opened as a plain file", linked),
            ("is not this machine's loopback", lambda: plant_address_file(sample_db, host="192.0.2.1")),
            ("did not prove it is the one that wrote", lambda: plant_address_file(sample_db, **at_impostor)),
        ]
        if os.geteuid() == 0:
            planted.append(
                (
                    "belongs to another user (uid 65534)",
                    lambda: os.chown(plant_address_file(sample_db, **at_impostor), 65534, 65534),
                )
            )
        for reason, plant in planted:
            plant()
            answered = run_index(*question, env={**env, "INDEX_TOKEN": token})
            assert answered.returncode == 0, answered.stderr
            assert json.loads(answered.stdout) == local, reason
            assert reason in answered.stderr and len(answered.stderr.splitlines()) == 1, answered.stderr
    assert [path for path, _ in impostor.requests] == ["/health"]  # asked for its proof, once
    assert not any("Authorization" in headers for _, headers in impostor.requests)


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
    assert failures == []
    assert answers > 20
    # a word in 120 chunks is common here: every hit asked for, not only those over the threshold
    asked = {"q": "zanzibarite", "mode": "keyword", "k": 200, "min_score": 0}
    hits = server.get("/search", params=asked).json()
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
    assert before["model"] == "plugin-v1"
    assert after["model"] == "plugin-v2"
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
    assert {status["files"] for status in statuses()} == {files}
    assert files > 1
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


# -- connection limits ----------------------------------------------------------------------------

HALF_SENT = b"GET /search?q=tyre HTTP/1.1\r\nHost: 127.0.0.1\r\n"  # the blank line that ends it never comes


def closed_by_server(sockets: list[socket.socket], within: float) -> list[socket.socket]:
    """The sockets the server has closed (EOF or reset) by ``within`` seconds from now."""
    deadline = time.monotonic() + within
    closed: list[socket.socket] = []
    while True:
        for sock in sockets:
            if sock in closed:
                continue
            sock.setblocking(False)
            try:
                if sock.recv(1) == b"":
                    closed.append(sock)
            except BlockingIOError:
                pass
            except ConnectionError:
                closed.append(sock)
        if len(closed) == len(sockets) or time.monotonic() > deadline:
            return closed
        time.sleep(0.05)


def test_an_overlong_question_or_request_is_refused_in_one_line_and_the_server_answers_on(reading_server):
    """A question past the cap gets the search's one-line error; a request line or headers past what
    the server reads get 414 or 431 (a megabyte of query syntax in a URL was a connection reset), and
    the next search is answered at once."""
    syntax = '"a b" -c d* '
    longest = syntax * (MAX_QUESTION_CHARS // len(syntax))
    assert reading_server.get("/search", params={"q": longest, "k": 3, "mode": "keyword"}).status_code == 200
    too_long = reading_server.get("/search", params={"q": longest + "x" * 20, "mode": "keyword"})
    assert too_long.status_code == 400
    assert f"a search takes at most {MAX_QUESTION_CHARS:,}" in too_long.json()["error"]
    for request, status in (
        (f"GET /search?q={syntax * 90_000} HTTP/1.1\r\nHost: x\r\n\r\n".encode(), 414),
        (b"GET /health HTTP/1.1\r\nHost: x\r\n" + b"X-Filler: " + b"y" * 200_000 + b"\r\n\r\n", 431),
    ):
        with socket.create_connection(("127.0.0.1", reading_server.address["port"]), timeout=10) as sock:
            sock.sendall(request)
            answer = b""
            while chunk := sock.recv(65536):
                answer += chunk
        head, _, body = answer.partition(b"\r\n\r\n")
        assert head.startswith(b"HTTP/1.1 %d " % status), head
        assert "shorten it" in json.loads(body)["error"]
    started = time.monotonic()
    assert reading_server.get("/search", params={"q": "flat tyre", "k": 1}).status_code == 200
    assert time.monotonic() - started < 10


def test_eleven_hundred_half_sent_requests_lock_no_client_out(sample_db, env, tmp_path):
    """The attack that locked every client out of a server limited to 1,024 open files, as a
    desktop's default is: the connections waiting longest for their request make room for new ones."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard < 1300:
        pytest.skip("this test holds 1,100 sockets open")
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, 1300), hard))
    half_sent: list[socket.socket] = []
    log = tmp_path / "serve.log"
    try:
        with ServerProcess(sample_db, env=env, log=log, open_files=1024) as server:
            for _ in range(1100):
                sock = socket.create_connection(("127.0.0.1", server.address["port"]), timeout=5)
                sock.sendall(HALF_SENT)
                half_sent.append(sock)
            started = time.monotonic()
            answer = httpx.get(server.url + "/search", params={"q": "flat tyre", "k": 1}, timeout=10)
            assert answer.status_code == 200
            assert answer.json()
            assert time.monotonic() - started < 5
            closed = closed_by_server(half_sent, within=2)
            assert len(closed) >= 1100 - ServeLimits.max_connections
            assert half_sent[0] in closed
            assert half_sent[-1] not in closed  # the oldest went first
    finally:
        for sock in half_sent:
            sock.close()
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))


def test_a_request_must_arrive_whole_in_time_even_a_byte_at_a_time(sample_db, env, tmp_path):
    worker = [sys.executable, str(SUPPORT / "serve_worker.py"), str(sample_db), "1.0", "1"]
    with ServerProcess(sample_db, env=env, log=tmp_path / "serve.log", command=worker) as server:
        port = server.address["port"]
        silent = socket.create_connection(("127.0.0.1", port))
        trickling = socket.create_connection(("127.0.0.1", port))
        idle = socket.create_connection(("127.0.0.1", port))
        idle.sendall(b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        assert idle.recv(4096).startswith(b"HTTP/1.1 200")  # answered, then kept alive, then idle
        started = time.monotonic()
        sent = 0
        try:
            for byte in HALF_SENT:  # a byte every 0.1 s: busy, but never done
                trickling.send(bytes([byte]))
                sent += 1
                time.sleep(0.1)
        except ConnectionError:  # closed underneath it
            pass
        assert sent < len(HALF_SENT)
        closed = closed_by_server([silent, trickling, idle], within=3)
        assert set(closed) == {silent, trickling, idle}
        assert time.monotonic() - started < 5
        assert server.get("/health").status_code == 200
        for sock in (silent, trickling, idle):
            sock.close()


@pytest.fixture
def hostile_server(tmp_path, env):
    folder = make_hostile_folder(tmp_path / "docs")
    db = tmp_path / "hostile.db"
    built = run_index(
        "build", str(folder), "--db", str(db), "--backend", "hash-plugin", "--model", "m", env=env
    )
    assert built.returncode == 0, built.stderr
    with ServerProcess(db, env=env, log=tmp_path / "serve.log") as running:
        yield running, folder


def test_hostile_names_are_read_back_by_citation_and_shown_with_no_raw_escape(hostile_server):
    server, folder = hostile_server
    searched = server.get("/search", params={"q": "espresso", "mode": "keyword", "min_score": "0", "k": 10})
    assert searched.status_code == 200
    assert holds_raw(searched.text) == []  # JSON escapes: a terminal can print the answer
    hits = {hit["path"]: hit for hit in searched.json()}
    assert len(hits) == len(FILES)
    assert "\x1b]0;pwned\x07" in hits["new\\x0aline.md"]["heading"]  # the data itself is exact
    assert hits["caf\\xe9.md"]["snippet"] == "… espresso beans roasted dark."
    for spelled in ("new\\x0aline.md:1-3", "new\nline.md:1-3", "caf\\xe9.md", "caf\\\\xe9.md"):
        passage = server.get("/chunks/" + quote(spelled))
        assert passage.status_code == 200, (spelled, passage.text)
    assert "descaling" in server.get("/chunks/" + quote("caf\\\\xe9.md")).json()["text"]
    for name, hit in hits.items():
        answer = server.get("/page/file", params={"root": hit["root"], "path": name}).json()
        assert answer["url"] is not None, name
    assert (
        server.get("/page/file", params={"root": hits["caf\\xe9.md"]["root"], "path": "caf\\xe9.md"}).json()[
            "url"
        ]
        == (folder / os.fsdecode(b"caf\xe9.md")).as_uri()
    )
