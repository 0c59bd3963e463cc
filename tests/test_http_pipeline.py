"""Indexing through embedding servers: the build and the `index` command against real loopback Ollama and
OpenAI-compatible servers, healthy and faulty.

The fault matrix goes through the Python API, with backends built here so retries wait a millisecond; the
command line is exercised on the happy paths and on the failures that answer at once (401, 400, usage).
"""

from __future__ import annotations

import json
import math
import os
import re
import shutil
import subprocess
import threading
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result
from conftest import REPO, SAMPLE_CORPUS, snapshot, write
from helpers import index_command
from loopback import OllamaServer, OpenAIServer, closed_port, fake_vector

from indexer import BuildReport, ConfigError, Index
from indexer.backends.http import HttpSettings
from indexer.backends.ollama import OllamaBackend
from indexer.backends.openai import OpenAIBackend
from indexer.backends.servers import PROBE_TEXT
from indexer.cli import main
from indexer.formats import parse_text
from indexer.records import Chunk


#: Backoff small enough that retries cost nothing in test time.
def fast(**settings: Any) -> dict[str, HttpSettings]:
    """Timeouts and retries for tests: backoff in milliseconds, and what the test sets."""
    return {"http": HttpSettings(**{"retry_base_delay": 0.001, "retry_max_delay": 0.005, **settings})}


SECRET = "sk-test-9f8e7d6c5b4a39281706"
QUESTION = "how do I fix a flat tyre"
OLLAMA_NOMIC = ("--backend", "ollama", "--model", "nomic-embed-text")
OPENAI_SMALL = ("--backend", "openai", "--model", "text-embedding-3-small")


@pytest.fixture(autouse=True)
def clean_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("OLLAMA_HOST", "OPENAI_BASE_URL", "OPENAI_API_KEY", "INDEX_DB"):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def bikes(tmp_path: Path) -> Path:
    """The six bicycle-repair guides of the sample corpus: some fifty chunks."""
    folder = tmp_path / "bikes"
    shutil.copytree(SAMPLE_CORPUS / "bicycle-repair", folder)
    return folder


@pytest.fixture(params=["ollama", "openai"])
def server(request: pytest.FixtureRequest):
    """Each test that takes it runs once against each kind of server."""
    running = OllamaServer() if request.param == "ollama" else OpenAIServer()
    with running:
        yield running


def backend_for(server: OllamaServer | OpenAIServer, **options: Any) -> OllamaBackend | OpenAIBackend:
    """nomic-embed-text on Ollama (so document prefixes are in play), text-embedding-3-small on OpenAI."""
    options = {**fast(), **options}
    if isinstance(server, OpenAIServer):
        return OpenAIBackend("text-embedding-3-small", base_url=server.base_url, **options)
    return OllamaBackend("nomic-embed-text", host=server.url, **options)


def build(index_path: Path, folder: Path, backend: Any, **options: Any) -> tuple[BuildReport, list[str]]:
    """Build with ``backend`` and return the report and the warnings the build gave."""
    warnings: list[str] = []
    with Index.open(index_path) as index:
        report = index.build(folder, backend=backend, warn=warnings.append, **options)
    return report, warnings


def json_lines(text: str) -> list[dict[str, Any]]:
    """The JSON objects of a --json command's output, one per line."""
    return [json.loads(line) for line in text.splitlines()]


def edit_every_file(folder: Path) -> None:
    for path in sorted(folder.iterdir()):
        path.write_text(path.read_text() + "\nA line added to every guide to change its last chunk.\n")


def stored_chunks(index_path: Path) -> dict[tuple[str, int], tuple[Chunk, bytes]]:
    """Every stored chunk by (path, seq), with its vector as stored."""
    with Index.open(index_path, create=False) as index:
        db = index.store.db
        vectors = dict(db.execute("SELECT rowid, embedding FROM chunk_vectors"))
        rows = db.execute(
            "SELECT f.path, c.seq, c.id, c.start_line, c.end_line, c.heading, c.text "
            "FROM chunks c JOIN files f ON f.id = c.file_id"
        )
        return {(path, seq): (Chunk(*fields), vectors[chunk_id]) for path, seq, chunk_id, *fields in rows}


def read_by_the_model(path: str, chunk: Chunk) -> str:
    """What the model read of a stored chunk: its heading path and its text without the lines of
    markup alone (code fences, a table's delimiter row), which no reader reads (README, Chunking)."""
    markup = parse_text(path, chunk.text).markup
    lines = [line for number, line in enumerate(chunk.text.split("\n"), 1) if number not in markup]
    return replace(chunk, model_text="\n".join(lines)).embed_text


def assert_every_vector_is_its_chunks(index_path: Path, document_prefix: str) -> None:
    """Each stored vector is the one the server computes for its own chunk's text: none is misplaced."""
    chunks = stored_chunks(index_path)
    assert chunks
    for (path, seq), (chunk, blob) in chunks.items():
        expected = fake_vector(document_prefix + read_by_the_model(path, chunk)).tobytes()
        assert blob == expected, f"{path} chunk {seq} holds another chunk's vector"


def words_by_path(index_path: Path) -> dict[str, set[str]]:
    found: dict[str, set[str]] = {}
    for (path, _), (chunk, _) in stored_chunks(index_path).items():
        found.setdefault(path, set()).update(chunk.heading.split() + chunk.text.split())
    return found


def batches(server: OllamaServer | OpenAIServer) -> list[Any]:
    """The requests that embedded chunks or questions: not the probes of the server's model."""
    return [request for request in server.requests if request.body.get("input") != [PROBE_TEXT]]


def probes(server: OllamaServer | OpenAIServer) -> int:
    """How many times the server was asked the probe text (which model it serves)."""
    return len(server.requests) - len(batches(server))


def inputs(server: OllamaServer | OpenAIServer) -> list[str]:
    """The texts the server embedded, in order (the probes of its model aside)."""
    return [text for request in batches(server) for text in request.body.get("input", [])]


def assert_one_line_naming_file_and_batch(report: BuildReport, batch: int = 1) -> None:
    assert report.failures
    for failure in report.failures:
        assert "\n" not in failure.reason
        assert f"batch {batch}" in failure.reason, failure.reason
        assert failure.path.endswith(".md")


def index_bytes(index_path: Path) -> bytes:
    """The index file and everything beside it (write-ahead log, shared memory, lock)."""
    return b"".join(path.read_bytes() for path in index_path.parent.glob(index_path.name + "*"))


def cli(*args: str, env: dict[str, str | None] | None = None) -> Result:
    return CliRunner().invoke(main, list(args), env=env, catch_exceptions=False)


def run_index(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    base = {key: value for key, value in os.environ.items() if key not in ("OLLAMA_HOST", "OPENAI_BASE_URL")}
    base["PYTHONPATH"] = str(REPO)
    return subprocess.run(
        [*index_command(), *args], env={**base, **env}, capture_output=True, text=True, timeout=60, cwd=REPO
    )


# The command line, happy paths: build against a server, then query with no backend flags at all.


@pytest.mark.heavy
def test_cli_builds_with_ollama_and_a_bare_query_reaches_the_same_server(bikes, index_path, ollama_server):
    db = str(index_path)
    built = cli("build", str(bikes), *OLLAMA_NOMIC, "--base-url", ollama_server.url, "--db", db, "--json")
    assert built.exit_code == 0, built.output
    report = json.loads(built.stdout)
    assert report["files_added"] == 6
    assert report["exit_code"] == 0
    assert len(batches(ollama_server)) == math.ceil(report["chunks_embedded"] / 32)
    assert report["requests"] == len(ollama_server.requests) == len(batches(ollama_server)) + 2
    assert probes(ollama_server) == 2  # at its first answer, and before the vectors were stored
    assert report["tokens"] == sum(
        len(text.split()) for r in ollama_server.requests for text in r.body["input"]
    )

    answered = cli("query", QUESTION, "--db", db, "--json")
    assert answered.exit_code == 0, answered.output
    assert "fixing-a-flat-tyre.md" in {hit["path"] for hit in json.loads(answered.stdout)}
    assert ollama_server.requests[-1].body["input"] == [f"search_query: {QUESTION}"]


@pytest.mark.heavy
def test_cli_builds_with_openai_from_the_environment_and_queries_with_the_key_from_it(bikes, index_path):
    with OpenAIServer(api_key=SECRET) as server:
        env = {"OPENAI_BASE_URL": server.base_url, "OPENAI_API_KEY": SECRET}
        options = ["--dimensions", "48", "--db", str(index_path), "--json"]
        built = cli("build", str(bikes), *OPENAI_SMALL, *options, env=env)
        assert built.exit_code == 0, built.output
        report = json.loads(built.stdout)
        assert report["files_added"] == 6
        answered = cli("query", QUESTION, "--db", str(index_path), "--json", env={"OPENAI_API_KEY": SECRET})
        assert answered.exit_code == 0, answered.output
        assert json.loads(answered.stdout)
        status = cli("status", "--db", str(index_path), "--json")
    recorded = json.loads(status.stdout)
    assert recorded["dimension"] == 48
    assert recorded["backend"]["base_url"] == server.base_url
    assert recorded["backend"]["api_key_env"] == "OPENAI_API_KEY"
    assert all(request.body["dimensions"] == 48 for request in server.requests)
    assert server.requests[-1].body["input"] == [QUESTION]
    assert all(request.headers["authorization"] == f"Bearer {SECRET}" for request in server.requests)
    for output in (built.output, answered.output, status.output):
        assert SECRET not in output
    assert SECRET.encode() not in index_bytes(index_path)


@pytest.mark.heavy
def test_cli_records_explicit_prefixes_and_uses_them_on_chunks_and_queries(bikes, index_path, ollama_server):
    backend = ["--backend", "ollama", "--model", "all-minilm", "--base-url", ollama_server.url]
    prefixes = ["--document-prefix", "doc: ", "--query-prefix", "q: "]
    built = cli("build", str(bikes), *backend, *prefixes, "--db", str(index_path), "--quiet")
    assert built.exit_code == 0, built.output
    assert built.output == ""
    assert cli("query", QUESTION, "--db", str(index_path)).exit_code == 0
    *documents, query = inputs(ollama_server)
    assert all(text.startswith("doc: ") for text in documents)
    assert query == f"q: {QUESTION}"


@pytest.mark.heavy
def test_index_command_in_a_real_process_follows_ollama_host_at_build_and_remembers_it(bikes, index_path):
    with OllamaServer() as server:
        # OLLAMA_HOST as Ollama users write it: no scheme, the server's own port.
        host = {"OLLAMA_HOST": f"127.0.0.1:{server.port}"}
        built = run_index("build", str(bikes), *OLLAMA_NOMIC, "--db", str(index_path), env=host)
        assert built.returncode == 0, built.stderr
        assert "6 files indexed (6 new" in built.stdout
        answered = run_index("query", QUESTION, "--db", str(index_path), "--json", env={})
        assert answered.returncode == 0, answered.stderr
    assert "fixing-a-flat-tyre.md" in {hit["path"] for hit in json.loads(answered.stdout)}
    assert server.requests[-1].body["input"] == [f"search_query: {QUESTION}"]


# The command line, failures: the documented exit code and one clear line.


@pytest.mark.heavy
def test_cli_wrong_api_key_stops_the_build_with_exit_4_and_never_shows_the_key(bikes, index_path):
    wrong = "sk-wrong-0123456789abcdef"
    with OpenAIServer(api_key=SECRET) as server:
        backend = [*OPENAI_SMALL, "--base-url", server.base_url, "--api-key", wrong]
        result = cli("build", str(bikes), *backend, "--db", str(index_path), "--json")
    assert result.exit_code == 4
    assert result.stderr == ""  # --json: every line on stdout
    *errors, report = json_lines(result.stdout)
    assert len(server.requests) == report["requests"] == report["batches"] <= 4  # those in flight, no retry
    assert report["files_added"] == 0
    assert "credentials refused (HTTP 401" in report["stopped"]
    assert errors[0]["level"] == "error"
    assert "credentials refused (HTTP 401" in errors[0]["message"]
    assert wrong not in result.output
    assert SECRET not in result.output
    assert wrong.encode() not in index_bytes(index_path)


@pytest.mark.heavy
def test_cli_query_without_the_key_the_index_was_built_with_exits_4(bikes, index_path):
    with OpenAIServer(api_key=SECRET) as server:
        backend = [*OPENAI_SMALL, "--base-url", server.base_url, "--api-key", SECRET]
        built = cli("build", str(bikes), *backend, "--db", str(index_path), "-q")
        assert built.exit_code == 0, built.output
        answered = cli("query", QUESTION, "--db", str(index_path))
    assert answered.exit_code == 4
    assert answered.stderr.count("\n") == 1
    assert "credentials refused (HTTP 401" in answered.stderr
    assert SECRET not in answered.output


@pytest.mark.heavy
def test_cli_a_batch_the_server_refuses_fails_its_files_with_exit_1(bikes, index_path, ollama_server):
    ollama_server.fail_next(1, "bad_request")
    backend = [*OLLAMA_NOMIC, "--base-url", ollama_server.url]
    # one batch in flight at a time, so the first request the server sees (and refuses) is batch 1
    options = ["--batch-size", "8", "--concurrency", "1", "--db", str(index_path), "--json"]
    result = cli("build", str(bikes), *backend, *options)
    assert result.exit_code == 1
    assert result.stderr == ""
    *errors, report = json_lines(result.stdout)
    assert len(batches(ollama_server)) == report["batches"] > 1  # no retry
    assert report["requests"] == len(ollama_server.requests)
    assert errors
    assert all(error["level"] == "error" for error in errors)
    assert all(re.fullmatch(r"batch 1 refused: ollama backend at .*HTTP 400.*", e["message"]) for e in errors)
    failed = [error["path"] for error in errors]
    assert failed == sorted(path.name for path in bikes.iterdir())[: len(failed)]  # the first batch's files
    assert report["files_added"] == 6 - len(failed) > 0


@pytest.mark.parametrize(
    ("args", "complaint"),
    [
        (["--backend", "ollama"], "--backend ollama needs --model"),
        (["--base-url", "http://127.0.0.1:9"], "need --backend"),
        (
            ["--backend", "openai", "--model", "m", "--base-url", "ftp://example.com"],
            "not an http:// or https://",
        ),
    ],
)
def test_cli_bad_backend_options_exit_2_without_touching_a_server(bikes, index_path, args, complaint):
    result = cli("build", str(bikes), "--db", str(index_path), *args)
    assert result.exit_code == 2
    assert complaint in result.output


# Batching, concurrency and order.


@pytest.mark.heavy
def test_ollama_gets_one_request_per_batch_and_two_at_a_time_by_default(bikes, index_path):
    """Ollama embeds one request at a time: the next must already wait there when one finishes."""
    with OllamaServer(latency=0.1) as ollama_server:
        report, _ = build(index_path, bikes, backend_for(ollama_server), batch_size=8)
    chunks = report.chunks_embedded
    assert report.exit_code == 0
    assert chunks == len(stored_chunks(index_path)) > 16
    assert len(batches(ollama_server)) == report.batches == math.ceil(chunks / 8)
    assert len(ollama_server.requests) == report.requests == report.batches + 2  # and two probes
    sizes = [request.batch_size for request in batches(ollama_server)]
    assert sizes == [8] * (chunks // 8) + ([chunks % 8] if chunks % 8 else [])
    assert ollama_server.max_in_flight == 2


@pytest.mark.heavy
@pytest.mark.parametrize("concurrency", [1, 3])
def test_concurrency_keeps_that_many_requests_in_flight(bikes, index_path, concurrency):
    with OpenAIServer(latency=0.15) as server:
        report, _ = build(index_path, bikes, backend_for(server), batch_size=4, concurrency=concurrency)
    assert report.exit_code == 0
    assert report.batches == math.ceil(report.chunks_embedded / 4)
    assert server.max_in_flight == concurrency


@pytest.mark.heavy
def test_openai_keeps_eight_requests_in_flight_by_default(bikes, index_path):
    with OpenAIServer(latency=0.25) as server:  # long enough to fill the window on a busy machine
        report, _ = build(index_path, bikes, backend_for(server), batch_size=1)  # packed chunks: ~20
    assert report.exit_code == 0
    assert report.batches > 8
    assert server.max_in_flight == 8


class StaggeredServer(OllamaServer):
    """Answers its first requests slowest, so later batches come back before earlier ones."""

    def __init__(self, delays: list[float]) -> None:
        super().__init__()
        self.delays = delays
        self.finished: list[int] = []  # request numbers, in the order their answers left
        self._arrived = 0
        self._order_lock = threading.Lock()

    def answer(self, body: Any, headers: dict[str, str], fault: Any) -> tuple[int, Any, dict[str, str]]:
        with self._order_lock:
            number, self._arrived = self._arrived, self._arrived + 1
        time.sleep(self.delays[number] if number < len(self.delays) else 0.0)
        answer = super().answer(body, headers, fault)
        with self._order_lock:
            self.finished.append(number)
        return answer


@pytest.mark.heavy
def test_vectors_land_on_their_own_chunks_whatever_order_batches_come_back(bikes, tmp_path):
    with OllamaServer() as server:
        build(tmp_path / "sequential.db", bikes, backend_for(server), batch_size=4, concurrency=1)
    with StaggeredServer(delays=[0.4, 0.3, 0.2, 0.1]) as staggered:
        report, _ = build(
            tmp_path / "concurrent.db", bikes, backend_for(staggered), batch_size=4, concurrency=4
        )
    assert report.exit_code == 0
    # The scenario happened: the fourth batch came back before the third, the third before the first.
    assert staggered.finished.index(3) < staggered.finished.index(2) < staggered.finished.index(0)
    assert stored_chunks(tmp_path / "concurrent.db") == stored_chunks(tmp_path / "sequential.db")
    assert_every_vector_is_its_chunks(tmp_path / "concurrent.db", "search_document: ")


@pytest.mark.heavy
def test_shuffled_answer_order_is_put_back_by_index(bikes, index_path, openai_server):
    openai_server.fail_next(100, "shuffled")
    report, _ = build(index_path, bikes, backend_for(openai_server), batch_size=8, concurrency=2)
    assert report.exit_code == 0
    assert report.chunks_embedded == len(stored_chunks(index_path))
    assert_every_vector_is_its_chunks(index_path, "")


# Prefixes.


@pytest.mark.heavy
def test_nomic_prefixes_are_recorded_and_the_server_sees_them(bikes, index_path, ollama_server):
    report, _ = build(index_path, bikes, backend_for(ollama_server))
    with Index.open(index_path, create=False) as index:
        recorded = index.status()["backend"]
        hits = index.search(QUESTION)
    assert (recorded["query_prefix"], recorded["document_prefix"]) == ("search_query: ", "search_document: ")
    *documents, query = inputs(ollama_server)
    assert len(documents) == report.chunks_embedded
    assert all(text.startswith("search_document: ") for text in documents)
    assert query == f"search_query: {QUESTION}"
    assert "fixing-a-flat-tyre.md" in {hit.path for hit in hits}


# The fault matrix. A pre-built index is edited, then rebuilt while the server misbehaves.


@pytest.fixture
def built_index(bikes, index_path, server) -> dict[str, object]:
    """An index of the guides built from ``server`` while it was healthy, then every guide edited."""
    report, _ = build(index_path, bikes, backend_for(server), batch_size=100)
    assert report.exit_code == 0
    before = snapshot(index_path)
    edit_every_file(bikes)
    server.requests.clear()
    return before


def prefix_of(server: OllamaServer | OpenAIServer) -> str:
    return "" if isinstance(server, OpenAIServer) else "search_document: "


@pytest.mark.heavy
@pytest.mark.parametrize(
    ("fault", "options", "backend_options"),
    [
        ("rate_limit", {"retry_after": 0}, {}),
        ("rate_limit", {"retry_after_ms": 20}, {}),
        ("unavailable", {}, {}),
        ("reset", {}, {}),
        ("slow", {"delay": 2.0}, fast(timeout=0.5)),
    ],
)
def test_passing_faults_are_retried_and_the_build_completes(
    bikes, index_path, server, built_index, fault, options, backend_options
):
    count = 1 if fault == "slow" else 2
    server.fail_next(count, fault, **options)
    report, _ = build(index_path, bikes, backend_for(server, **backend_options), batch_size=100)
    assert report.exit_code == 0
    assert report.failures == []
    assert report.files_changed == 6
    assert report.batches == 1
    assert len(batches(server)) == 1 + count
    assert len(server.requests) == report.requests == 1 + count + 2  # two probes: first answer, commit
    assert_every_vector_is_its_chunks(index_path, prefix_of(server))


@pytest.mark.heavy
def test_retry_after_in_whole_seconds_is_waited_for(bikes, index_path, openai_server):
    openai_server.fail_next(1, "rate_limit", retry_after=1)
    report, _ = build(index_path, bikes, backend_for(openai_server), batch_size=100)
    assert report.exit_code == 0
    assert len(batches(openai_server)) == 2
    assert report.seconds >= 1.0  # the backoff alone would have waited a few milliseconds


@pytest.mark.heavy
@pytest.mark.parametrize(
    ("fault", "options", "requests", "complaint"),
    [
        ("rate_limit", {"retry_after": 3600}, 1, r"HTTP 429: .*asks to wait 3600 s"),
        ("malformed", {}, 1, r"malformed JSON"),
        ("too_few", {}, 1, r"vectors for \d+ inputs|but the answer has missing index"),
        ("empty_vector", {}, 1, r"empty vector for input 0"),
        ("nan", {}, 1, r"NaN or infinity for input 0"),
        ("wrong_dimension", {}, 1, r"vectors of different lengths \[64, 65\]"),
        ("bad_request", {}, 1, r"request refused \(HTTP 400: '\$.input' is invalid.\)"),
    ],
)
def test_a_batch_the_server_spoils_fails_its_files_and_leaves_them_as_they_were(
    bikes, index_path, server, built_index, fault, options, requests, complaint
):
    server.fail_next(10, fault, **options)
    report, _ = build(index_path, bikes, backend_for(server), batch_size=100)
    assert report.exit_code == 1
    assert report.stopped is None
    assert len(server.requests) == requests
    assert report.files_failed == 6
    assert report.files_changed == 0
    assert_one_line_naming_file_and_batch(report)
    assert all(re.search(complaint, failure.reason) for failure in report.failures), report.failures[0].reason
    assert snapshot(index_path) == built_index


@pytest.mark.heavy
def test_a_batch_still_refused_when_the_retry_budget_is_spent_fails_its_files(
    bikes, index_path, server, built_index
):
    server.fail_next(100_000, "unavailable")
    report, _ = build(index_path, bikes, backend_for(server, **fast(retry_seconds=0.2)), batch_size=100)
    assert report.exit_code == 1
    assert report.stopped is None
    assert report.files_failed == 6
    assert report.files_changed == 0
    assert_one_line_naming_file_and_batch(report)
    attempts = len(server.requests)
    complaint = rf"HTTP 503: service unavailable; gave up after {attempts} attempts in (\d+\.\d) s"
    spent = [re.search(complaint, failure.reason) for failure in report.failures]
    assert all(spent), report.failures[0].reason
    # the budget, and the attempt under way when it ran out (a loaded machine's last one ends later)
    assert all(0.2 <= float(found[1]) < 2.0 for found in spent), report.failures[0].reason
    after = snapshot(index_path)  # the recorded backend follows its new retry_seconds; the rest stays
    assert {key: after[key] for key in after if key != "meta"} == {
        key: built_index[key] for key in built_index if key != "meta"
    }


@pytest.mark.heavy
def test_a_build_finishes_against_an_ollama_server_that_sheds_every_second_request(bikes, index_path):
    with OllamaServer(shed_every=2) as server:
        server.fail_next(12, "unavailable")  # and a burst first: more than two batches of five attempts
        report, _ = build(index_path, bikes, backend_for(server), batch_size=2)
    assert report.exit_code == 0
    assert report.failures == []
    assert report.files_added == 6
    assert report.requests == len(server.requests) >= 12 + 2 * report.batches - 1
    assert_every_vector_is_its_chunks(index_path, "search_document: ")


@pytest.mark.heavy
def test_duplicated_indexes_in_an_openai_answer_fail_the_batch(bikes, index_path, openai_server):
    report, _ = build(index_path, bikes, backend_for(openai_server), batch_size=100)
    before = snapshot(index_path)
    edit_every_file(bikes)
    openai_server.fail_next(1, "duplicate_index")
    report, _ = build(index_path, bikes, backend_for(openai_server), batch_size=100)
    assert report.exit_code == 1
    assert_one_line_naming_file_and_batch(report)
    reason = report.failures[0].reason
    assert re.search(r"\d+ inputs, but the answer has duplicated index 0, missing index \d+", reason)
    assert snapshot(index_path) == before


@pytest.mark.heavy
def test_a_server_now_giving_another_dimension_is_a_settings_change(bikes, index_path, ollama_server):
    build(index_path, bikes, backend_for(ollama_server), batch_size=100)
    before = snapshot(index_path)
    edit_every_file(bikes)
    ollama_server.dimension = 32  # the model behind the name changed
    with pytest.raises(ConfigError, match=r"differ from the index.s: dimension: 64 -> 32; rebuild the index"):
        build(index_path, bikes, backend_for(ollama_server), batch_size=2)
    assert snapshot(index_path) == before
    report, _ = build(index_path, bikes, backend_for(ollama_server), batch_size=2, rebuild=True)
    assert report.exit_code == 0
    with Index.open(index_path) as index:
        assert index.store.dimension == 32
        assert index.store.integrity_problems() == []


@pytest.mark.heavy
def test_a_failed_batch_fails_only_its_files(bikes, index_path, ollama_server):
    build(index_path, bikes, backend_for(ollama_server), batch_size=100)
    edit_every_file(bikes)
    ollama_server.fail_next(1, "nan")
    report, _ = build(index_path, bikes, backend_for(ollama_server), batch_size=1, concurrency=1)
    assert report.exit_code == 1
    assert [failure.path for failure in report.failures] == ["adjusting-rim-brakes.md"]
    assert report.files_changed == 5
    assert_every_vector_is_its_chunks(index_path, "search_document: ")
    stored = words_by_path(index_path)
    assert "added" not in stored["adjusting-rim-brakes.md"]
    assert all("added" in words for path, words in stored.items() if path != "adjusting-rim-brakes.md")


WRONG_KEY = "sk-not-the-right-one-42"


@pytest.mark.heavy
@pytest.mark.parametrize(
    ("cause", "complaint"),
    [
        ("wrong key", "credentials refused (HTTP 401"),
        ("model gone", "not found, check the model and URL (HTTP 404"),
        ("nothing listening", "cannot connect"),
    ],
)
def test_an_unusable_backend_stops_the_build_with_exit_4_and_changes_nothing(
    bikes, index_path, openai_server, cause, complaint
):
    build(index_path, bikes, backend_for(openai_server), batch_size=8)
    before = snapshot(index_path)
    edit_every_file(bikes)
    guarded = OpenAIServer(api_key=SECRET, models=["another-model"] if cause == "model gone" else None)
    with guarded:
        url = f"http://127.0.0.1:{closed_port()}/v1" if cause == "nothing listening" else guarded.base_url
        key = WRONG_KEY if cause == "wrong key" else SECRET
        backend = OpenAIBackend("text-embedding-3-small", base_url=url, api_key=key, **fast())
        report, _ = build(index_path, bikes, backend, batch_size=8, concurrency=1)
    assert report.exit_code == 4
    assert report.stopped is not None
    assert complaint in report.stopped
    assert report.files_failed == 6
    assert report.files_changed == 0
    assert all("\n" not in failure.reason for failure in report.failures)
    assert len(guarded.requests) == (0 if cause == "nothing listening" else 1)  # no retry could cure it
    assert SECRET not in report.stopped
    assert WRONG_KEY not in report.stopped
    assert snapshot(index_path) == before
    on_disk = index_bytes(index_path)
    assert WRONG_KEY.encode() not in on_disk
    assert SECRET.encode() not in on_disk


# Several servers of one model for one build.


@pytest.mark.heavy
def test_a_build_spreads_its_batches_over_every_server_each_keeping_its_window(bikes, index_path):
    with (
        OllamaServer(latency=0.1) as first,
        OllamaServer(latency=0.1) as second,
        OllamaServer(latency=0.1) as third,
    ):
        servers = (first, second, third)
        backend = OllamaBackend("nomic-embed-text", host=[server.url for server in servers], **fast())
        report, _ = build(index_path, bikes, backend, batch_size=1)  # packed chunks: ~20 batches
    assert report.exit_code == 0
    assert report.batches > 12
    # and the probes of each server's model: at its first answer, and before each commit of what it gave
    assert report.requests == report.batches + sum(probes(server) for server in servers)
    assert all(probes(server) >= 2 for server in servers)
    assert all(len(batches(server)) >= 4 for server in servers)
    assert [server.max_in_flight for server in servers[1:]] == [2, 2]  # Ollama's window on each: 6 in all
    assert_every_vector_is_its_chunks(index_path, "search_document: ")


@pytest.mark.heavy
def test_a_dead_server_is_benched_and_the_build_completes_on_the_others(bikes, index_path):
    dead = f"http://127.0.0.1:{closed_port()}"
    with OpenAIServer(latency=0.05) as first, OpenAIServer(latency=0.05) as second:
        urls = [dead, first.base_url, second.base_url]
        report, _ = build(
            index_path, bikes, OpenAIBackend("text-embedding-3-small", base_url=urls), batch_size=2
        )
    assert report.exit_code == 0
    assert report.files_failed == 0
    answered = len(first.requests) + len(second.requests)
    refused = report.requests - answered
    assert 1 <= refused <= 8  # at most its window before the first refusal, then benched (0.25 s or more)
    assert len(batches(first)) + len(batches(second)) == report.batches
    assert_every_vector_is_its_chunks(index_path, "")


@pytest.mark.heavy
def test_batches_a_failing_server_refuses_are_embedded_by_another(bikes, index_path):
    with OllamaServer(latency=0.05) as failing, OllamaServer(latency=0.05) as steady:
        failing.fail_next(4, "unavailable")
        failing.fail_next(2, "reset")
        backend = OllamaBackend("nomic-embed-text", host=[failing.url, steady.url], **fast(max_attempts=2))
        # small chunks, one a batch: enough batches that the failing server, once it answers again,
        # is sure to be handed some (of ~20 packed ones the steady server could take them all)
        report, _ = build(index_path, bikes, backend, batch_size=1, chunk_tokens=64)
    assert report.exit_code == 0
    assert report.files_failed == 0
    assert len(failing.requests) > 6  # its failures, then its share once it answers again
    assert_every_vector_is_its_chunks(index_path, "search_document: ")


@pytest.mark.heavy
def test_a_server_serving_another_model_stops_the_build_naming_it_and_none_of_its_vectors_is_kept(
    bikes, index_path
):
    with OllamaServer(latency=0.05) as good, OllamaServer(latency=0.05, variant="another model ") as odd:
        build(index_path, bikes, backend_for(good))
        edit_every_file(bikes)
        backend = OllamaBackend("nomic-embed-text", host=[good.url, odd.url], **fast())
        report, _ = build(index_path, bikes, backend, batch_size=2)
    assert report.exit_code == 4
    assert report.stopped is not None
    assert report.stopped.startswith(
        f"ollama backend at {odd.url}/: serves another model than the index was built with"
    )
    assert odd.requests
    assert report.files_failed > 0
    assert_every_vector_is_its_chunks(index_path, "search_document: ")  # the first server's, each of them


class SwappedServer(OllamaServer):
    """An Ollama server whose model is swapped after ``after`` requests: 32-dimension vectors from then on."""

    def __init__(self, after: int, **options: Any) -> None:
        super().__init__(**options)
        self.after = after
        self._request = threading.local()

    def answer(self, body: Any, headers: dict[str, str], fault: Any) -> tuple[int, Any, dict[str, str]]:
        # decided once a request: a model is swapped between requests, never within one (counted
        # per text, a request recorded meanwhile by another thread split one answer's dimensions)
        self._request.swapped = len(self.requests) > self.after
        return super().answer(body, headers, fault)

    def vector(self, text: str, dimension: int | None = None):
        return super().vector(text, 32 if self._request.swapped else dimension)


@pytest.mark.heavy
def test_a_server_switching_dimension_mid_build_stops_it_at_once_naming_that_server(bikes, index_path):
    with OllamaServer(latency=0.05) as steady, SwappedServer(after=3, latency=0.05) as swapped:
        backend = OllamaBackend("nomic-embed-text", host=[steady.url, swapped.url], **fast())
        report, _ = build(index_path, bikes, backend, batch_size=2)
    assert report.exit_code == 4
    assert report.stopped.startswith(f"ollama backend at {swapped.url}/: serves another model")
    assert "it now gives 32-dimension vectors, where they gave 64-dimension ones" in report.stopped
    assert len(batches(swapped)) <= 3 + 2  # its window when its first such answer came, and no more
    assert report.files_failed > 0
    # told by its width at an answer, or by its probe before the commit of what it gave
    named = f"ollama backend at {swapped.url}/: "
    assert all(failure.reason.startswith(named) for failure in report.failures), report.failures
    assert all("32-dimension vectors" in failure.reason for failure in report.failures), report.failures
    with Index.open(index_path, create=False) as index:
        assert index.store.dimension in (None, 64)  # what was committed before it was caught, if anything
    if report.files_added:
        assert_every_vector_is_its_chunks(index_path, "search_document: ")


# A server that switches to another model of the same dimension: held to the index's model by a probe
# text, at its first answer, after a lost connection, and before every commit of what it gave.


def reword_every_line(folder: Path) -> None:
    """Change every chunk of every guide: each needs a new vector."""
    for path in sorted(folder.iterdir()):
        path.write_text(path.read_text().replace(" the ", " the very "))


def server_of(kind: str, **options: Any) -> OllamaServer | OpenAIServer:
    return OllamaServer(**options) if kind == "ollama" else OpenAIServer(**options)


def backend_on(servers: list[OllamaServer | OpenAIServer], **options: Any) -> OllamaBackend | OpenAIBackend:
    """The backend of the servers' protocol on all of them."""
    if isinstance(servers[0], OpenAIServer):
        urls = [server.base_url for server in servers]
        return OpenAIBackend("text-embedding-3-small", base_url=urls, **{**fast(), **options})
    return OllamaBackend("nomic-embed-text", host=[server.url for server in servers], **{**fast(), **options})


def files_by_path(index_path: Path) -> dict[str, list[tuple]]:
    """Each file's stored chunks: (seq, text, vector)."""
    found: dict[str, list[tuple]] = {}
    for (path, seq), (chunk, vector) in sorted(stored_chunks(index_path).items()):
        found.setdefault(path, []).append((seq, chunk.text, vector))
    return found


@pytest.mark.heavy
@pytest.mark.parametrize("count", [1, 3])
@pytest.mark.parametrize("kind", ["ollama", "openai"])
def test_a_server_switching_models_mid_build_stops_it_with_exit_4_and_nothing_it_gave_since_is_stored(
    bikes, index_path, kind, count
):
    servers = [server_of(kind, latency=0.02) for _ in range(count)]
    switching = servers[count // 2]  # the only one, or the second of three
    for server in servers:
        server.start()
    try:
        report, _ = build(index_path, bikes, backend_on(servers), batch_size=4)
        assert report.exit_code == 0
        before = files_by_path(index_path)
        reword_every_line(bikes)
        switching.switch_after = len(switching.requests) + 4  # a few answers, then another model
        # two batches in flight in all, so that its first answers (and its probe) come before the switch
        options = {"batch_size": 1, "concurrency": 2, "commit_seconds": 0.05}
        report, _ = build(index_path, bikes, backend_on(servers), **options)
    finally:
        for server in servers:
            server.stop()
    assert report.exit_code == 4
    shown = switching.base_url if isinstance(switching, OpenAIServer) else switching.url + "/"
    assert report.stopped.startswith(f"{kind} backend at {shown}: switched models during the build: ")
    assert "for the same text, its vector and the one from the index have a cosine of" in report.stopped
    assert report.files_failed > 0
    assert any(report.stopped in failure.reason for failure in report.failures)
    assert_every_vector_is_its_chunks(index_path, prefix_of(switching))  # none of the other model's
    after = files_by_path(index_path)
    failed = {failure.path for failure in report.failures}
    assert all(after[path] == before[path] for path in failed)  # as they were
    assert all(" the very " in text for path in set(after) - failed for _, text, _ in after[path])
    assert len(switching.requests) > switching.switch_after  # it answered with the other model: caught
    with Index.open(index_path, create=False) as index:
        assert index.store.integrity_problems() == []


@pytest.mark.heavy
def test_cli_a_server_switching_models_mid_build_exits_4_with_one_line_naming_it(bikes, index_path):
    with OllamaServer(latency=0.02, switch_after=3) as server:
        backend = [*OLLAMA_NOMIC, "--base-url", server.url]
        result = cli("build", str(bikes), *backend, "--db", str(index_path), "--batch-size", "2")
    assert result.exit_code == 4
    summary = result.stdout.splitlines()[-1]
    assert "0 files indexed" in summary or "failed" in summary
    errors = [line for line in result.stderr.splitlines() if line.startswith("error: ")]
    assert errors
    assert f"ollama backend at {server.url}/: switched models during the build" in errors[0]


@pytest.mark.heavy
def test_the_index_records_its_model_and_a_server_serving_another_now_is_a_settings_change(
    bikes, index_path, server
):
    build(index_path, bikes, backend_for(server))
    with Index.open(index_path, create=False) as index:
        assert index.store.get_meta("model_probe") is not None
    before = snapshot(index_path)
    server.requests.clear()
    report, _ = build(index_path, bikes, backend_for(server))  # nothing changed: nothing asked
    assert report.exit_code == 0
    assert server.requests == []
    reword_every_line(bikes)
    server.variant = "a new model "  # the same name now serves another model of the same dimension
    with pytest.raises(
        ConfigError, match=r"differ from the index.s: model: the same name gives other vectors"
    ):
        build(index_path, bikes, backend_for(server))
    assert snapshot(index_path) == before
    report, _ = build(index_path, bikes, backend_for(server), rebuild=True)
    assert report.exit_code == 0
    assert_every_vector_is_its_chunks(index_path, "a new model " + prefix_of(server))


@pytest.mark.heavy
def test_several_servers_are_recorded_the_fingerprint_ignores_them_and_a_query_goes_to_the_first_that_answers(
    bikes, tmp_path
):
    with OllamaServer() as first, OllamaServer() as second:
        build(tmp_path / "one.db", bikes, backend_for(first))
        two = OllamaBackend("nomic-embed-text", host=[first.url, second.url], **fast())
        report, _ = build(tmp_path / "two.db", bikes, two)
        assert report.exit_code == 0
        with Index.open(tmp_path / "one.db") as index:
            assert index.status()["backend"]["host"] == first.url
            fingerprint = index.status()["fingerprint"]
        with Index.open(tmp_path / "two.db", create=False) as index:
            assert index.status()["backend"]["host"] == [first.url, second.url]
            assert index.status()["fingerprint"] == fingerprint
            asked = len(second.requests)
            index.search(QUESTION)
        assert batches(first)[-1].body["input"] == [f"search_query: {QUESTION}"]
        assert len(second.requests) == asked
        first.stop()
        with Index.open(tmp_path / "two.db", create=False) as index:
            index.search(QUESTION)
        assert batches(second)[-1].body["input"] == [f"search_query: {QUESTION}"]
        edit_every_file(bikes)
        report, _ = build(tmp_path / "two.db", bikes, backend_for(second))  # one server now: same settings
        assert report.exit_code == 0
        assert report.files_changed == 6


@pytest.mark.heavy
def test_cli_base_url_repeated_spreads_the_build_counts_each_servers_requests_and_a_query_tries_them_in_order(
    bikes, index_path
):
    db = ("--db", str(index_path))
    with OllamaServer(latency=0.05) as first, OllamaServer(latency=0.05) as second:
        urls = ("--base-url", first.url, "--base-url", second.url)
        built = cli("build", str(bikes), *OLLAMA_NOMIC, *urls, *db, "--batch-size", "4", "--json")
        assert built.exit_code == 0, built.output
        assert first.requests
        assert second.requests
        summary = json.loads(built.stdout.splitlines()[-1])
        assert summary["requests_by_server"] == {
            first.url: len(first.requests),
            second.url: len(second.requests),
        }
        assert sum(summary["requests_by_server"].values()) == summary["requests"]
        dead = f"http://127.0.0.1:{closed_port()}"
        answered = cli("query", QUESTION, *db, "--base-url", dead, "--base-url", second.url, "--json")
    assert answered.exit_code == 0, answered.output
    assert batches(second)[-1].body["input"] == [f"search_query: {QUESTION}"]


# Inputs over the server's token budget.


@pytest.mark.heavy
@pytest.mark.parametrize("kind", ["ollama", "openai"])
def test_chunks_over_the_token_budget_are_cut_with_a_warning_and_all_text_is_indexed(bikes, tmp_path, kind):
    with OllamaServer() as healthy:
        build(tmp_path / "reference.db", bikes, backend_for(healthy))
    kind_of_server = OllamaServer if kind == "ollama" else OpenAIServer
    prefix = "search_document: " if kind == "ollama" else ""
    words = [
        len((prefix + chunk.embed_text).split())
        for chunk, _ in stored_chunks(tmp_path / "reference.db").values()
    ]
    budget = max(words) * 2 // 3  # the server's own tokenizer counts more than the chunker estimated
    over_budget = sum(count > budget for count in words)
    assert over_budget >= 2
    with kind_of_server(token_budget=budget) as strict:
        report, warnings = build(tmp_path / "index.db", bikes, backend_for(strict), batch_size=8)
    assert report.exit_code == 0
    assert report.files_added == 6
    assert len(warnings) >= over_budget
    assert warnings == report.warnings
    cut = r"[\w-]+\.md:\d+-\d+: too long for the backend, cut into 2 smaller chunks"
    assert all(re.fullmatch(cut, warning) for warning in warnings)
    stored = [chunk.embed_text for chunk, _ in stored_chunks(tmp_path / "index.db").values()]
    assert max(len((prefix + text).split()) for text in stored) <= budget
    assert words_by_path(tmp_path / "index.db") == words_by_path(tmp_path / "reference.db")
    assert_every_vector_is_its_chunks(tmp_path / "index.db", prefix_of(strict))


@pytest.mark.heavy
def test_batches_over_the_per_request_budget_are_halved_without_cutting_chunks(bikes, index_path):
    with OpenAIServer(batch_token_budget=600) as server:
        report, warnings = build(index_path, bikes, backend_for(server), batch_size=32)
    assert report.exit_code == 0
    assert warnings == []
    sent = [request.body["input"] for request in batches(server)]
    accepted = [batch for batch in sent if sum(len(text.split()) for text in batch) <= 600]
    assert len(accepted) < len(sent)  # some batches were refused whole and sent again in halves
    assert sum(len(batch) for batch in accepted) == report.chunks_embedded == len(stored_chunks(index_path))
    assert_every_vector_is_its_chunks(index_path, "")


@pytest.mark.heavy
def test_a_chunk_too_long_even_cut_to_one_word_fails_its_file_with_a_clear_message(tmp_path):
    folder = tmp_path / "tiny"
    write(folder / "word.txt", "floccinaucinihilipilification\n")
    with OpenAIServer(token_budget=0) as server:
        report, _ = build(tmp_path / "index.db", folder, backend_for(server))
    assert report.exit_code == 1
    assert len(server.requests) == 1
    [failure] = report.failures
    assert failure.path == "word.txt"
    assert re.match(
        r"a chunk at lines 1-\d+ is too long for the backend and cannot be cut smaller: ", failure.reason
    )
    assert "HTTP 400" in failure.reason


# Where a query goes: the server recorded at build time.


@pytest.mark.heavy
def test_a_query_reaches_the_server_recorded_at_build_time_not_ollama_host(bikes, index_path, monkeypatch):
    with OllamaServer() as built_with, OllamaServer() as elsewhere:
        monkeypatch.setenv("OLLAMA_HOST", built_with.url)
        build(index_path, bikes, OllamaBackend("nomic-embed-text", **fast()))
        monkeypatch.setenv("OLLAMA_HOST", elsewhere.url)
        with Index.open(index_path, create=False) as index:
            index.search(QUESTION)
    assert built_with.requests[-1].body["input"] == [f"search_query: {QUESTION}"]
    assert elsewhere.requests == []


@pytest.mark.heavy
def test_a_build_against_a_new_server_address_sends_later_queries_there(bikes, index_path):
    with OllamaServer() as old:
        build(index_path, bikes, backend_for(old))
    edit_every_file(bikes)
    with OllamaServer() as new:
        report, _ = build(index_path, bikes, backend_for(new))
        assert report.exit_code == 0
        with Index.open(index_path, create=False) as index:
            index.search(QUESTION)
    assert new.requests[-1].body["input"] == [f"search_query: {QUESTION}"]


@pytest.mark.heavy
def test_files_unchanged_when_the_build_stops_are_not_reported_as_failed(bikes, index_path, openai_server):
    build(index_path, bikes, backend_for(openai_server))
    edited = sorted(bikes.iterdir())[:2]
    for path in edited:
        path.write_text(path.read_text() + "\nAn added line.\n")
    backend = OpenAIBackend(
        "text-embedding-3-small", base_url=f"http://127.0.0.1:{closed_port()}/v1", **fast()
    )
    report, _ = build(index_path, bikes, backend, batch_size=1, concurrency=1)
    assert report.exit_code == 4
    assert [failure.path for failure in report.failures] == [path.name for path in edited]
    assert report.files_unchanged == 4


@pytest.mark.heavy
def test_cli_query_with_base_url_reaches_the_recorded_model_at_a_new_address(bikes, index_path):
    with OllamaServer() as old:
        built = cli("build", str(bikes), *OLLAMA_NOMIC, "--base-url", old.url, "--db", str(index_path), "-q")
        assert built.exit_code == 0, built.output
    with OllamaServer() as new:
        answered = cli("query", QUESTION, "--db", str(index_path), "--base-url", new.url)
    assert answered.exit_code == 0, answered.output
    assert new.requests[-1].body == {"model": "nomic-embed-text", "input": [f"search_query: {QUESTION}"],
                                     "truncate": False}  # fmt: skip


@pytest.mark.heavy
def test_cli_query_with_api_key_uses_it_and_never_shows_it(bikes, index_path):
    with OpenAIServer(api_key=SECRET) as server:
        backend = [*OPENAI_SMALL, "--base-url", server.base_url, "--api-key", SECRET]
        assert cli("build", str(bikes), *backend, "--db", str(index_path), "-q").exit_code == 0
        answered = cli("query", QUESTION, "--db", str(index_path), "--api-key", SECRET, "--json")
    assert answered.exit_code == 0, answered.output
    assert SECRET not in answered.output
