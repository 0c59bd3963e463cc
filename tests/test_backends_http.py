"""The Ollama and OpenAI-compatible backends against real loopback HTTP servers."""

from __future__ import annotations

import base64
import email.utils
import json
import re
import threading
import time
from typing import Any

import httpx
import numpy as np
import pytest
from loopback import OllamaServer, OpenAIServer, closed_port, fake_vector
from runs import cli

from indexer.backends import make_backend
from indexer.backends.base import ModelProbe
from indexer.backends.http import ErrorResponse, HttpSettings, is_input_too_long, retry_after_seconds
from indexer.backends.ollama import OllamaBackend, ollama_base_url
from indexer.backends.openai import OpenAIBackend
from indexer.backends.prefixes import Prefixes, known_prefixes, model_base_name, resolve_prefixes
from indexer.backends.servers import PROBE_TEXT
from indexer.errors import (
    BackendError,
    BackendUnreachableError,
    ConfigError,
    InputTooLongError,
    SettingsChangedError,
    VectorCheckError,
)


#: Backoff small enough that retries cost nothing in test time.
def fast(**settings: Any) -> dict[str, HttpSettings]:
    """Timeouts and retries for tests: backoff in milliseconds, and what the test sets."""
    return {"http": HttpSettings(**{"retry_base_delay": 0.001, "retry_max_delay": 0.005, **settings})}


SECRET = "sk-test-0123456789abcdef"


@pytest.fixture(autouse=True)
def clean_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("OLLAMA_HOST", "OPENAI_BASE_URL", "OPENAI_API_KEY"):
        monkeypatch.delenv(name, raising=False)


def ollama_backend(server: OllamaServer, **options: Any) -> OllamaBackend:
    return OllamaBackend("nomic-embed-text", **{"host": server.url, **fast(), **options})


def openai_backend(server: OpenAIServer, **options: Any) -> OpenAIBackend:
    return OpenAIBackend("text-embedding-3-small", **{"base_url": server.base_url, **fast(), **options})


def as_float32(vectors: Any) -> np.ndarray:
    return np.asarray(vectors, dtype=np.float32)


def expected(texts: list[str], dimension: int = 64) -> np.ndarray:
    return np.stack([fake_vector(text, dimension) for text in texts])


TEXTS = [f"chunk number {i} about llamas" for i in range(50)]


# One request per batch, vectors decoded exactly.


@pytest.mark.heavy
def test_ollama_sends_a_whole_batch_of_50_in_one_request(ollama_server: OllamaServer) -> None:
    with ollama_backend(ollama_server) as backend:
        vectors = backend.embed(TEXTS)
    assert len(ollama_server.requests) == 1
    assert ollama_server.requests[0].batch_size == 50
    assert np.array_equal(as_float32(vectors), expected(TEXTS))


@pytest.mark.heavy
def test_ollama_request_carries_model_input_and_truncate_but_keep_alive_only_when_set(
    ollama_server: OllamaServer,
) -> None:
    with ollama_backend(ollama_server) as backend:
        backend.embed(["one"])
    with ollama_backend(ollama_server, keep_alive="10m", truncate=True) as backend:
        backend.embed(["two"])
    first, second = (request.body for request in ollama_server.requests)
    assert first == {"model": "nomic-embed-text", "input": ["one"], "truncate": False}
    assert second["keep_alive"] == "10m"
    assert second["truncate"] is True


@pytest.mark.heavy
def test_ollama_usage_counts_requests_and_prompt_eval_tokens(ollama_server: OllamaServer) -> None:
    with ollama_backend(ollama_server) as backend:
        backend.embed(["three words here", "two words"])
        ollama_server.fail_next(1, "unavailable")
        backend.embed(["one"])
        assert backend.usage() == {"requests": 3, "tokens": 6}


@pytest.mark.heavy
def test_an_empty_batch_sends_nothing(ollama_server: OllamaServer, openai_server: OpenAIServer) -> None:
    with ollama_backend(ollama_server) as ollama, openai_backend(openai_server) as openai:
        assert ollama.embed([]) == []
        assert openai.embed([]) == []
    assert ollama_server.requests == []
    assert openai_server.requests == []


@pytest.mark.heavy
@pytest.mark.parametrize("encoding_format", ["base64", "float"])
def test_openai_decodes_base64_and_float_to_the_same_exact_vectors(
    openai_server: OpenAIServer, encoding_format: str
) -> None:
    with openai_backend(openai_server, encoding_format=encoding_format) as backend:
        vectors = backend.embed(TEXTS[:7])
    assert openai_server.requests[0].body["encoding_format"] == encoding_format
    assert np.array_equal(as_float32(vectors), expected(TEXTS[:7]))


@pytest.mark.heavy
def test_openai_sends_dimensions_only_when_asked(openai_server: OpenAIServer) -> None:
    with openai_backend(openai_server) as plain, openai_backend(openai_server, dimensions=32) as short:
        plain.embed(["a"])
        vectors = short.embed(["a"])
        assert short.dimension == 32
        assert plain.dimension is None
    assert "dimensions" not in openai_server.requests[0].body
    assert openai_server.requests[1].body["dimensions"] == 32
    assert np.array_equal(as_float32(vectors), expected(["a"], 32))


@pytest.mark.heavy
def test_openai_sends_the_key_as_a_bearer_token_and_no_header_without_a_key(
    openai_server: OpenAIServer,
) -> None:
    with openai_backend(openai_server, api_key=SECRET) as keyed, openai_backend(openai_server) as keyless:
        keyed.embed(["a"])
        keyless.embed(["a"])
    assert openai_server.requests[0].headers["authorization"] == f"Bearer {SECRET}"
    assert "authorization" not in openai_server.requests[1].headers


@pytest.mark.heavy
def test_openai_key_comes_from_the_environment_variable_named(
    openai_server: OpenAIServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MY_EMBEDDING_KEY", SECRET)
    with openai_backend(openai_server, api_key_env="MY_EMBEDDING_KEY") as backend:
        backend.embed(["a"])
        assert backend.config()["api_key_env"] == "MY_EMBEDDING_KEY"
    assert openai_server.requests[0].headers["authorization"] == f"Bearer {SECRET}"


@pytest.mark.heavy
def test_openai_base_url_comes_from_the_environment(
    openai_server: OpenAIServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_BASE_URL", openai_server.base_url + "/")
    with OpenAIBackend("text-embedding-3-small", **fast()) as backend:
        backend.embed(["a"])
        assert backend.base_urls == (openai_server.base_url,)
    monkeypatch.delenv("OPENAI_BASE_URL")
    assert OpenAIBackend("m").base_urls == ("https://api.openai.com/v1",)


@pytest.mark.heavy
def test_openai_puts_shuffled_items_back_in_input_order(openai_server: OpenAIServer) -> None:
    openai_server.fail_next(1, "shuffled")
    with openai_backend(openai_server) as backend:
        vectors = backend.embed(TEXTS[:10])
    assert np.array_equal(as_float32(vectors), expected(TEXTS[:10]))


@pytest.mark.heavy
@pytest.mark.parametrize(
    ("fault", "problem"),
    [("duplicate_index", "duplicated index 0, missing index 9"), ("too_few", "missing index 9")],
)
def test_openai_refuses_indexes_that_are_not_each_input_once(
    openai_server: OpenAIServer, fault: str, problem: str
) -> None:
    openai_server.fail_next(1, fault)
    with openai_backend(openai_server) as backend, pytest.raises(VectorCheckError) as caught:
        backend.embed(TEXTS[:10])
    assert problem in str(caught.value)
    assert len(openai_server.requests) == 1


@pytest.mark.heavy
def test_openai_counts_usage_prompt_tokens(openai_server: OpenAIServer) -> None:
    with openai_backend(openai_server) as backend:
        backend.embed(["four words right here", "one"])
        assert backend.usage() == {"requests": 1, "tokens": 5}


@pytest.mark.heavy
def test_a_text_alone_and_inside_a_batch_of_100_gets_the_same_vector_bit_for_bit(
    ollama_server: OllamaServer, openai_server: OpenAIServer
) -> None:
    batch = [f"neighbour {i}" for i in range(99)] + ["the text"]
    for backend in (ollama_backend(ollama_server), openai_backend(openai_server)):
        with backend:
            alone = as_float32(backend.embed(["the text"])[0])
            inside = as_float32(backend.embed(batch)[-1])
        assert alone.tobytes() == inside.tobytes()


# Vectors come back as the server sent them: checking them is the pipeline's job.


@pytest.mark.heavy
@pytest.mark.parametrize(
    ("fault", "check"),
    [
        ("too_few", lambda vectors: len(vectors) == 2),
        ("empty_vector", lambda vectors: len(vectors[0]) == 0),
        ("nan", lambda vectors: np.isnan(vectors[0][0])),
        ("wrong_dimension", lambda vectors: len(vectors[0]) == 65),
    ],
)
def test_damaged_vectors_are_returned_as_they_came_for_the_pipeline_to_check(
    ollama_server: OllamaServer, openai_server: OpenAIServer, fault: str, check
) -> None:
    ollama_server.fail_next(1, fault)
    with ollama_backend(ollama_server) as backend:
        assert check(backend.embed(["a", "b", "c"]))
    if fault != "too_few":  # OpenAI's answer carries indexes: one missing is refused above.
        openai_server.fail_next(1, fault)
        with openai_backend(openai_server) as backend:
            assert check(backend.embed(["a", "b", "c"]))


@pytest.mark.heavy
def test_ollama_answer_without_embeddings_is_a_backend_error(ollama_server: OllamaServer) -> None:
    ollama_server.fail_next(1, "status", status=200, body={"model": "x"})
    with ollama_backend(ollama_server) as backend, pytest.raises(BackendError, match="no `embeddings` list"):
        backend.embed(["a"])


@pytest.mark.heavy
def test_an_undecodable_base64_embedding_is_a_backend_error(openai_server: OpenAIServer) -> None:
    body = {"data": [{"index": 0, "embedding": "not base64!"}]}
    openai_server.fail_next(1, "status", status=200, body=body)
    with openai_backend(openai_server) as backend, pytest.raises(BackendError, match="undecodable"):
        backend.embed(["a"])


@pytest.mark.heavy
def test_malformed_json_is_a_backend_error_and_not_retried(
    ollama_server: OllamaServer, openai_server: OpenAIServer
) -> None:
    for server, backend in (
        (ollama_server, ollama_backend(ollama_server)),
        (openai_server, openai_backend(openai_server)),
    ):
        server.fail_next(1, "malformed")
        with backend, pytest.raises(BackendError, match="malformed JSON") as caught:
            backend.embed(["a"])
        assert type(caught.value) is BackendError
        assert len(server.requests) == 1


# Retries: what is retried, how often, and how long it waits.


@pytest.mark.heavy
def test_429_with_retry_after_ms_is_retried_after_waiting_at_least_that_long(
    openai_server: OpenAIServer,
) -> None:
    openai_server.fail_next(2, "rate_limit", retry_after_ms=60)
    with openai_backend(openai_server) as backend:
        started = time.monotonic()
        vectors = backend.embed(["a"])
        waited = time.monotonic() - started
    assert len(openai_server.requests) == 3
    assert waited >= 0.12
    assert np.array_equal(as_float32(vectors), expected(["a"]))


@pytest.mark.heavy
def test_429_with_retry_after_zero_seconds_is_retried_at_once(ollama_server: OllamaServer) -> None:
    ollama_server.fail_next(2, "rate_limit", retry_after=0)
    with ollama_backend(ollama_server, **fast(retry_base_delay=5, retry_max_delay=5)) as backend:
        started = time.monotonic()
        backend.embed(["a"])
        assert time.monotonic() - started < 2  # the server's "0" replaced the 5 s backoff
    assert len(ollama_server.requests) == 3


@pytest.mark.heavy
def test_retry_after_ms_wins_over_retry_after(openai_server: OpenAIServer) -> None:
    openai_server.fail_next(1, "rate_limit", retry_after=30, retry_after_ms=10)
    with openai_backend(openai_server) as backend:
        backend.embed(["a"])
    assert len(openai_server.requests) == 2


@pytest.mark.heavy
def test_a_server_asking_for_a_longer_wait_than_allowed_fails_at_once(openai_server: OpenAIServer) -> None:
    openai_server.fail_next(5, "rate_limit", retry_after=3600)
    with openai_backend(openai_server) as backend, pytest.raises(BackendError, match="asks to wait 3600 s"):
        backend.embed(["a"])
    assert len(openai_server.requests) == 1


def test_retry_after_reads_seconds_milliseconds_and_http_dates() -> None:
    in_ten_seconds = email.utils.formatdate(time.time() + 10, usegmt=True)
    assert retry_after_seconds(httpx.Headers({"retry-after": "2"})) == 2
    assert retry_after_seconds(httpx.Headers({"retry-after": "1.5"})) == 1.5
    assert retry_after_seconds(httpx.Headers({"retry-after-ms": "250", "retry-after": "9"})) == 0.25
    assert 8 <= retry_after_seconds(httpx.Headers({"retry-after": in_ten_seconds})) <= 10
    assert retry_after_seconds(httpx.Headers({"retry-after": "Mon, 01 Jan 2001 00:00:00 GMT"})) == 0
    assert retry_after_seconds(httpx.Headers({"retry-after": "soon"})) is None
    assert retry_after_seconds(httpx.Headers({})) is None


@pytest.mark.heavy
@pytest.mark.parametrize(
    ("fault", "options"), [("unavailable", {}), ("reset", {}), ("status", {"status": 408})]
)
def test_transient_failures_are_retried_until_the_server_answers(
    ollama_server: OllamaServer, fault: str, options: dict
) -> None:
    ollama_server.fail_next(2, fault, **options)
    with ollama_backend(ollama_server) as backend:
        vectors = backend.embed(["a", "b"])
    assert len(ollama_server.requests) == 3
    assert np.array_equal(as_float32(vectors), expected(["a", "b"]))


@pytest.mark.heavy
def test_503_forever_gives_up_once_the_retry_budget_is_spent_with_a_backend_error(
    ollama_server: OllamaServer,
) -> None:
    ollama_server.fail_next(100_000, "unavailable")
    with ollama_backend(ollama_server, **fast(retry_seconds=0.3)) as backend:
        started = time.monotonic()
        with pytest.raises(BackendError) as caught:
            backend.embed(["a"])
        assert 0.3 - 0.01 <= time.monotonic() - started < 2
    assert type(caught.value) is BackendError
    attempts = len(ollama_server.requests)
    assert attempts > 5  # not a fixed count: as many as the budget allows
    # the time spent, as the message gives it, is the budget's at least, and a last attempt more at
    # most (a loaded machine's last attempt can carry it past the next tenth of a second)
    said = re.search(
        r"HTTP 503: service unavailable; gave up after (\d+) attempts in ([\d.]+) s", str(caught.value)
    )
    assert said and int(said[1]) == attempts and 0.3 <= float(said[2]) < 2, str(caught.value)


@pytest.mark.heavy
def test_a_server_shedding_every_second_request_answers_every_batch(ollama_server: OllamaServer) -> None:
    ollama_server.fail_next(7, "unavailable")  # a burst longer than any fixed count of attempts
    ollama_server.shed_every = 2
    batches = [[f"text {n}"] for n in range(16)]
    with ollama_backend(ollama_server) as backend:
        results = embed_at_once(backend, batches)
    for batch, vectors in zip(batches, results, strict=True):
        assert np.array_equal(as_float32(vectors), expected(batch))
    assert len(ollama_server.requests) >= 7 + 2 * 16 - 1


@pytest.mark.heavy
def test_a_server_slower_than_the_timeout_fails_once_the_retry_budget_is_spent(
    ollama_server: OllamaServer,
) -> None:
    ollama_server.fail_next(5, "slow", delay=3)
    with ollama_backend(ollama_server, **fast(timeout=0.2, retry_seconds=0.5)) as backend:
        started = time.monotonic()
        with pytest.raises(BackendError, match="timeout") as caught:
            backend.embed(["a"])
        assert time.monotonic() - started < 2
    assert type(caught.value) is BackendError
    assert 2 <= len(ollama_server.requests) <= 4


def test_connection_refused_after_every_attempt_means_the_backend_is_unreachable_at_once() -> None:
    port = closed_port()
    with OllamaBackend("nomic-embed-text", host=f"127.0.0.1:{port}", **fast(max_attempts=3)) as backend:
        started = time.monotonic()
        with pytest.raises(BackendUnreachableError) as caught:
            backend.embed(["a"])
        assert time.monotonic() - started < 1  # the retry budget (300 s) is for servers that answer
        assert backend.usage()["requests"] == 3
    message = str(caught.value)
    assert f"http://127.0.0.1:{port}/api/embed" in message
    assert "gave up after 3 attempts" in message


# Refusals that waiting cannot cure are never retried.


@pytest.mark.heavy
def test_a_bad_key_is_unreachable_at_once_and_the_key_never_shows(openai_server: OpenAIServer) -> None:
    with OpenAIServer(api_key="the-right-key") as server:
        with (
            openai_backend(server, api_key=SECRET) as backend,
            pytest.raises(BackendUnreachableError) as caught,
        ):
            backend.embed(["a"])
        assert len(server.requests) == 1
    message = str(caught.value)
    assert "HTTP 401" in message
    assert "credentials refused" in message
    assert SECRET not in message
    assert "***" in message


@pytest.mark.heavy
@pytest.mark.parametrize(
    ("fault", "kind", "words"),
    [
        ("forbidden", BackendUnreachableError, "HTTP 403"),
        ("insufficient_quota", BackendUnreachableError, "quota exhausted"),
        ("bad_request", BackendError, "HTTP 400"),
        ("status", BackendError, "HTTP 422"),
    ],
)
def test_refusals_are_not_retried(openai_server: OpenAIServer, fault: str, kind: type, words: str) -> None:
    openai_server.fail_next(3, fault, status=422, body={"detail": "unprocessable"})
    with openai_backend(openai_server) as backend, pytest.raises(kind, match=words) as caught:
        backend.embed(["a"])
    assert type(caught.value) is kind
    assert len(openai_server.requests) == 1


@pytest.mark.heavy
def test_an_unknown_ollama_model_says_to_pull_it() -> None:
    with OllamaServer(models={"nomic-embed-text"}) as server:
        with OllamaBackend("mxbai-embed-large", host=server.url, **fast()) as backend:
            with pytest.raises(BackendUnreachableError) as caught:
                backend.embed(["a"])
        assert len(server.requests) == 1
    assert "'mxbai-embed-large'" in str(caught.value)
    assert "ollama pull mxbai-embed-large" in str(caught.value)


@pytest.mark.heavy
def test_an_unknown_openai_model_is_unreachable_at_once() -> None:
    with OpenAIServer(models={"text-embedding-3-small"}) as server:
        with OpenAIBackend("no-such-model", base_url=server.base_url, **fast()) as backend:
            with pytest.raises(BackendUnreachableError, match="HTTP 404"):
                backend.embed(["a"])
        assert len(server.requests) == 1


# Input too long, in each server's words.


@pytest.mark.heavy
@pytest.mark.parametrize("dialect", ["openai", "tei", "llamacpp", "mistralrs"])
def test_an_input_over_the_budget_is_input_too_long_in_every_dialect(dialect: str) -> None:
    with OpenAIServer(dialect=dialect, token_budget=8) as server:
        with OpenAIBackend("some-model", base_url=server.base_url, **fast()) as backend:
            assert len(backend.embed(["short one"])) == 1
            with pytest.raises(InputTooLongError):
                backend.embed(["short one", "this input has far too many words for the tiny budget"])
        assert len(server.requests) == 2  # never retried, not even llama.cpp's 500


@pytest.mark.heavy
def test_ollama_input_over_the_context_is_input_too_long() -> None:
    with OllamaServer(token_budget=8) as server:
        with OllamaBackend("nomic-embed-text", host=server.url, **fast()) as backend:
            with pytest.raises(InputTooLongError, match="exceeds the context length"):
                backend.embed(["this input has far too many words for the tiny budget"])
        assert len(server.requests) == 1


@pytest.mark.heavy
def test_openai_batch_over_max_tokens_per_request_is_input_too_long() -> None:
    with OpenAIServer(batch_token_budget=10) as server:
        with OpenAIBackend("text-embedding-3-small", base_url=server.base_url, **fast()) as backend:
            with pytest.raises(InputTooLongError, match="tokens per request"):
                backend.embed(["four words each here"] * 3)
            assert len(backend.embed(["four words each here"] * 2)) == 2


@pytest.mark.parametrize(
    ("status", "message", "codes"),
    [
        (400, "the input length exceeds the context length", set()),
        (400, "input exceeds maximum context length and cannot be truncated further", set()),
        (400, "Invalid 'input[0]': maximum input length is 8192 tokens.", set()),
        (400, "Requested 453357 tokens, max 300000 tokens per request", {"max_tokens_per_request"}),
        (413, "Input validation error: `inputs` must have less than 512 tokens. Given: 534", {"validation"}),
        (422, "Input validation error: `inputs` must have less than 512 tokens. Given: 534", set()),
        (500, "input (3926 tokens) is too large to process. increase the physical batch size", set()),
        (400, "request (9000 tokens) exceeds the available context size (8192 tokens)", set()),
        (
            422,
            "Prompt sequence length is greater than 512, perhaps consider using `truncate_sequence`?",
            set(),
        ),
        (413, "batch size 64 > maximum allowed batch size 32", {"validation"}),
    ],
)
def test_input_too_long_is_recognised_in_every_known_wording(status: int, message: str, codes: set) -> None:
    assert is_input_too_long(ErrorResponse(status, message, frozenset(codes)))


@pytest.mark.parametrize(
    ("status", "message"),
    [(400, "'$.input' is invalid."), (429, "Rate limit reached for requests"), (500, "out of memory")],
)
def test_other_errors_are_not_mistaken_for_input_too_long(status: int, message: str) -> None:
    assert not is_input_too_long(ErrorResponse(status, message, frozenset()))


# Messages: one line, the backend, the URL, never the key.


@pytest.mark.heavy
def test_the_key_appears_in_no_message_config_description_or_repr(openai_server: OpenAIServer) -> None:
    messages = []
    with openai_backend(openai_server, api_key=SECRET, **fast(retry_seconds=0)) as backend:
        for fault, options in (
            ("unavailable", {}),
            ("malformed", {}),
            ("status", {"status": 400, "body": {"error": {"message": f"bad header Bearer {SECRET}"}}}),
            ("status", {"status": 500, "body": {"error": f"upstream rejected {SECRET}"}}),
        ):
            openai_server.fail_next(2, fault, **options)
            with pytest.raises(BackendError) as caught:
                backend.embed(["a"])
            messages.append(str(caught.value))
        shown = [
            repr(backend),
            *map(repr, backend.pool.clients),
            str(backend.config()),
            str(backend.describe()),
            *messages,
        ]
    for text in shown:
        assert SECRET not in text
    for message in messages:
        assert "\n" not in message
        assert message.startswith(f"openai backend at {openai_server.base_url}/embeddings")


@pytest.mark.heavy
def test_credentials_in_the_url_are_kept_out_of_messages_and_config(openai_server: OpenAIServer) -> None:
    url = f"http://user:{SECRET}@127.0.0.1:{openai_server.port}/v1"
    openai_server.fail_next(1, "bad_request")
    with OpenAIBackend("m", base_url=url, **fast()) as backend, pytest.raises(BackendError) as caught:
        backend.embed(["a"])
    assert SECRET not in str(caught.value)
    assert "user" not in str(caught.value)
    assert SECRET not in str(backend.config())
    assert SECRET not in repr(backend)
    assert SECRET not in str(backend.base_urls)
    sent = base64.b64decode(openai_server.requests[0].headers["authorization"].removeprefix("Basic "))
    assert sent == f"user:{SECRET}".encode()


@pytest.mark.parametrize("url", ["ftp://example.com/v1", "not a url", "http://"])
def test_an_unusable_base_url_is_a_config_error(url: str) -> None:
    with pytest.raises(ConfigError):
        OpenAIBackend("m", base_url=url)


# OLLAMA_HOST, read as Ollama reads it.


@pytest.mark.parametrize(
    ("value", "url"),
    [
        (None, "http://127.0.0.1:11434"),
        ("", "http://127.0.0.1:11434"),
        ("  '1.2.3.4'  ", "http://1.2.3.4:11434"),
        ("1.2.3.4", "http://1.2.3.4:11434"),
        (":56789", "http://127.0.0.1:56789"),
        ("1.2.3.4:56789", "http://1.2.3.4:56789"),
        ("http://1.2.3.4", "http://1.2.3.4:80"),
        ("https://1.2.3.4", "https://1.2.3.4:443"),
        ("https://1.2.3.4:56789", "https://1.2.3.4:56789"),
        ("example.com", "http://example.com:11434"),
        ("example.com:56789/", "http://example.com:56789"),
        ("example.com/path/", "http://example.com:11434/path"),
        ("https://example.com:56789/path", "https://example.com:56789/path"),
        ("[::1]", "http://[::1]:11434"),
        ("[::1]:56789", "http://[::1]:56789"),
        ("::1", "http://[::1]:11434"),
        ("https://[::1]/path", "https://[::1]:443/path"),
        ("0.0.0.0", "http://127.0.0.1:11434"),
        ("0.0.0.0:8080", "http://127.0.0.1:8080"),
        ("[::]:8080", "http://[::1]:8080"),
        ("example.com:99999", "http://example.com:11434"),
        ("example.com:port", "http://example.com:11434"),
        ("ollama.com", "https://ollama.com:443"),
    ],
)
def test_ollama_host_is_parsed_as_ollama_parses_it(value: str | None, url: str) -> None:
    assert ollama_base_url(value) == url


@pytest.mark.heavy
def test_ollama_host_comes_from_the_environment_when_not_given(
    ollama_server: OllamaServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OLLAMA_HOST", f"127.0.0.1:{ollama_server.port}")
    with OllamaBackend("nomic-embed-text", **fast()) as backend:
        backend.embed(["a"])
        assert backend.hosts == (ollama_server.url,)
    assert len(ollama_server.requests) == 1
    monkeypatch.delenv("OLLAMA_HOST")
    assert OllamaBackend("m").hosts == ("http://127.0.0.1:11434",)


# Prefixes.


@pytest.mark.parametrize(
    ("model", "query", "document"),
    [
        ("nomic-embed-text", "search_query: ", "search_document: "),
        ("nomic-embed-text:latest", "search_query: ", "search_document: "),
        ("nomic-ai/nomic-embed-text-v1.5", "search_query: ", "search_document: "),
        ("embeddinggemma:300m", "task: search result | query: ", "title: none | text: "),
        ("google/embeddinggemma-300m", "task: search result | query: ", "title: none | text: "),
        ("intfloat/e5-small-v2", "query: ", "passage: "),
        ("intfloat/multilingual-e5-large", "query: ", "passage: "),
        ("mxbai-embed-large", "Represent this sentence for searching relevant passages: ", ""),
        (
            "mixedbread-ai/mxbai-embed-large-v1",
            "Represent this sentence for searching relevant passages: ",
            "",
        ),
        ("BAAI/bge-small-en-v1.5", "Represent this sentence for searching relevant passages: ", ""),
        (
            "hf.co/CompendiumLabs/bge-base-en-v1.5-gguf:Q8_0",
            "Represent this sentence for searching relevant passages: ",
            "",
        ),
        ("snowflake-arctic-embed2", "query: ", ""),
    ],
)
def test_known_models_get_their_prefixes(model: str, query: str, document: str) -> None:
    assert known_prefixes(model) == Prefixes(query, document)


@pytest.mark.parametrize(
    "model", ["text-embedding-3-small", "bge-m3", "all-minilm", "BAAI/bge-small-zh-v1.5"]
)
def test_other_models_get_no_prefixes(model: str) -> None:
    assert known_prefixes(model) is None
    assert resolve_prefixes(model, None, None) == Prefixes("", "")


def test_model_base_name_drops_owner_tag_and_packaging() -> None:
    assert model_base_name("hf.co/user/Bge-Small-EN-v1.5-GGUF:Q4_K_M") == "bge-small-en-v1.5"


@pytest.mark.heavy
def test_explicit_prefixes_win_and_an_empty_string_means_none(
    ollama_server: OllamaServer, openai_server: OpenAIServer
) -> None:
    with ollama_backend(ollama_server) as default:
        assert (default.query_prefix, default.document_prefix) == ("search_query: ", "search_document: ")
    with ollama_backend(ollama_server, query_prefix="", document_prefix="doc: ") as overridden:
        assert (overridden.query_prefix, overridden.document_prefix) == ("", "doc: ")
        assert overridden.describe()["document_prefix"] == "doc: "
        overridden.embed(["plain"])
    assert ollama_server.requests[0].body["input"] == ["plain"]  # the backend adds no prefix itself
    with OpenAIBackend("intfloat/e5-small-v2", base_url=openai_server.base_url, query_prefix="q: ") as e5:
        assert (e5.query_prefix, e5.document_prefix) == ("q: ", "passage: ")


# Config and description.


@pytest.mark.heavy
def test_config_recreates_each_backend_and_holds_no_secret(
    ollama_server: OllamaServer, openai_server: OpenAIServer
) -> None:
    originals = [
        OllamaBackend("nomic-embed-text", host=ollama_server.url, keep_alive="5m", **fast(timeout=30)),
        OpenAIBackend(
            "text-embedding-3-small", base_url=openai_server.base_url, api_key=SECRET, dimensions=32
        ),
    ]
    for original in originals:
        with original:
            config = original.config()
            with make_backend(config) as rebuilt:
                assert type(rebuilt) is type(original)
                assert rebuilt.config() == config
                assert rebuilt.describe() == original.describe()
                assert (
                    as_float32(rebuilt.embed(["same"])).tobytes()
                    == as_float32(original.embed(["same"])).tobytes()
                )
            assert SECRET not in str(config)
            assert config["backend"] == original.kind
            assert config["query_prefix"] == original.query_prefix


@pytest.mark.heavy
def test_describe_names_what_changes_vectors_but_not_the_address(
    ollama_server: OllamaServer, openai_server: OpenAIServer
) -> None:
    with ollama_backend(ollama_server) as ollama, openai_backend(openai_server, dimensions=32) as openai:
        assert ollama.describe() == {
            "backend": "ollama",
            "model": "nomic-embed-text",
            "query_prefix": "search_query: ",
            "document_prefix": "search_document: ",
            "truncate": False,
        }
        assert openai.describe() == {
            "backend": "openai",
            "model": "text-embedding-3-small",
            "dimensions": 32,
            "query_prefix": "",
            "document_prefix": "",
        }
        for described in (ollama.describe(), openai.describe()):
            assert str(ollama_server.port) not in str(described)
            assert str(openai_server.port) not in str(described)


def test_bad_openai_options_are_config_errors() -> None:
    with pytest.raises(ConfigError):
        OpenAIBackend("m", encoding_format="int8")
    with pytest.raises(ConfigError):
        OpenAIBackend("m", dimensions=0)


# Concurrency: many threads, one pool of reused connections.


@pytest.mark.heavy
def test_eight_threads_at_once_share_a_few_reused_connections() -> None:
    calls_per_thread = 5
    with OpenAIServer(latency=0.02, parallel=4) as server:
        with OpenAIBackend("text-embedding-3-small", base_url=server.base_url, **fast()) as backend:
            results: dict[int, list] = {}
            errors: list[BaseException] = []

            def work(thread: int) -> None:
                try:
                    for call in range(calls_per_thread):
                        texts = [f"thread {thread} call {call} text {i}" for i in range(4)]
                        results[thread * calls_per_thread + call] = (texts, backend.embed(texts))
                except BaseException as exc:
                    errors.append(exc)

            threads = [threading.Thread(target=work, args=(n,)) for n in range(8)]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join()
            assert backend.usage()["requests"] == 8 * calls_per_thread
        assert errors == []
        assert all(
            np.array_equal(as_float32(vectors), expected(texts)) for texts, vectors in results.values()
        )
        assert len(server.requests) == 8 * calls_per_thread
        assert len(server.connections) <= 8  # one per thread at most, not one per request
        assert 2 <= server.max_in_flight <= 4


# Several servers of one model behind one backend.


def inputs(server: OllamaServer | OpenAIServer) -> list[list[str]]:
    """The texts of each request a server was sent, in order."""
    return [request.body["input"] for request in server.requests]


def embed_at_once(backend: OllamaBackend | OpenAIBackend, batches: list[list[str]]) -> list[Any]:
    """Embed each batch on its own thread, all at once: what each returned or raised, in order."""
    results: list[Any] = [None] * len(batches)

    def embed(position: int) -> None:
        try:
            results[position] = backend.embed(batches[position])
        except BackendError as error:
            results[position] = error

    threads = [threading.Thread(target=embed, args=(position,)) for position in range(len(batches))]
    for thread in threads:
        thread.start()
        time.sleep(0.01)  # in this order
    for thread in threads:
        thread.join()
    return results


def test_each_server_adds_the_kinds_window_to_the_default_concurrency() -> None:
    urls = ["http://gpu1:11434", "http://gpu2:11434", "http://gpu3:11434"]
    assert OllamaBackend("m", host=urls).default_concurrency == 3 * 2
    assert OllamaBackend("m", host=urls[0]).default_concurrency == 2
    assert OpenAIBackend("m", base_url=[url + "/v1" for url in urls[:2]]).default_concurrency == 2 * 8


@pytest.mark.parametrize("hosts", [[], ["http://gpu1:11434", "gpu1"], ["http://gpu1:11434", 3]])
def test_an_empty_list_a_server_listed_twice_or_a_non_url_is_a_config_error(hosts: list) -> None:
    with pytest.raises(ConfigError):
        OllamaBackend("m", host=hosts)


@pytest.mark.heavy
def test_a_lone_question_goes_to_the_first_server(ollama_server: OllamaServer) -> None:
    with (
        OllamaServer() as second,
        ollama_backend(ollama_server, host=[ollama_server.url, second.url]) as backend,
    ):
        for _ in range(3):
            backend.embed(["one question"])
    assert inputs(ollama_server) == [["one question"], [PROBE_TEXT], ["one question"], ["one question"]]
    assert second.requests == []


@pytest.mark.heavy
def test_a_dead_first_server_is_passed_over_for_the_next_that_answers(ollama_server: OllamaServer) -> None:
    dead = f"http://127.0.0.1:{closed_port()}"
    with ollama_backend(
        ollama_server, host=[dead, ollama_server.url], **fast(retry_base_delay=2, retry_max_delay=2)
    ) as backend:
        vectors = [backend.embed([f"question {n}"]) for n in range(4)]
        requests = backend.usage()["requests"]
    assert all(np.array_equal(as_float32(got), expected([f"question {n}"])) for n, got in enumerate(vectors))
    assert len(ollama_server.requests) == 4 + 1  # and its model's probe
    assert requests == 6  # one refused connection, then the dead server is benched for a second or two


@pytest.mark.heavy
def test_a_server_that_asks_a_long_wait_is_benched_and_its_batch_goes_elsewhere() -> None:
    with OpenAIServer() as first, OpenAIServer() as second:
        first.fail_next(1, "rate_limit", retry_after=3600)
        with openai_backend(first, base_url=[first.base_url, second.base_url]) as backend:
            for n in range(5):
                assert np.array_equal(as_float32(backend.embed([f"text {n}"])), expected([f"text {n}"]))
    assert len(first.requests) == 1  # the refused one: an hour on the bench
    assert len(second.requests) == 5 + 1  # its probe: the first never answered, the second is the reference


def test_when_every_server_fails_the_batch_gives_up_after_max_attempts_on_all_of_them() -> None:
    dead = [f"http://127.0.0.1:{closed_port()}" for _ in range(2)]
    with OllamaBackend("m", host=dead, **fast(max_attempts=4)) as backend:
        with pytest.raises(BackendUnreachableError, match=r"gave up after 4 attempts on 2 servers$"):
            backend.embed(["a"])
        assert backend.usage()["requests"] == 4


def test_a_window_of_batches_on_a_server_that_refuses_gives_up_on_each_batchs_own_backoff() -> None:
    """Each batch retries on its own schedule: waiting for the server's bench let one batch through per
    round, so eight batches on a refusing server took 40 rounds of doubling backoff (3 minutes for
    `index build` at the default settings) instead of one batch's few seconds."""
    dead = f"http://127.0.0.1:{closed_port()}"
    settings = fast(max_attempts=4, retry_base_delay=0.1, retry_max_delay=1.6)
    with OllamaBackend("m", host=dead, **settings) as backend:
        started = time.monotonic()
        results = embed_at_once(backend, [[f"batch {n}"] for n in range(8)])
        elapsed = time.monotonic() - started
        requests = backend.usage()["requests"]
    assert all(isinstance(result, BackendUnreachableError) for result in results)
    assert requests == 8 * 4
    # one batch's backoff: at most 0.1 + 0.2 + 0.4 s; a round per attempt would take over 20 s
    assert elapsed < 2.0, elapsed


@pytest.mark.heavy
def test_a_server_back_from_the_bench_gets_one_batch_until_it_succeeds() -> None:
    """A server that may still be failing is tried with one batch while another server is healthy, so a
    server that hangs costs one batch's timeout, not a window of them."""
    with OllamaServer(latency=0.3) as back, OllamaServer(latency=0.3) as healthy:
        back.fail_next(1, "unavailable", retry_after=1.0)
        with ollama_backend(back, host=[back.url, healthy.url]) as backend:
            backend.embed(["first"])  # fails on the first server, then goes to the second
            time.sleep(0.8)  # the first server is back from the bench
            embed_at_once(backend, [[f"batch {n}"] for n in range(4)])
    assert inputs(back) == [["first"], ["batch 0"], [PROBE_TEXT]]
    assert back.max_in_flight == 1
    # "first", its probe (the reference: the first server was benched), the three other batches
    assert len(healthy.requests) == 1 + 1 + 3


@pytest.mark.heavy
def test_a_server_serving_another_model_is_refused_and_named() -> None:
    with OllamaServer(latency=0.2) as good, OllamaServer(latency=0.2, variant="another model ") as odd:
        with ollama_backend(good, host=[good.url, odd.url]) as backend:
            reference, refused = embed_at_once(backend, [["to the first server"], ["to the second"]])
    assert np.array_equal(as_float32(reference), expected(["to the first server"]))
    assert isinstance(refused, BackendUnreachableError)
    message = str(refused)
    assert message.startswith(f"ollama backend at {odd.url}/: serves another model than the other servers")
    assert f"for the same text, its vector and the one from {good.url}/ have a cosine of" in message
    assert inputs(odd) == [["to the second"], [PROBE_TEXT]]
    assert [PROBE_TEXT] in inputs(good)  # the reference: the first listed server's probe


@pytest.mark.heavy
def test_a_server_giving_another_dimension_is_refused_and_named() -> None:
    with OpenAIServer(latency=0.2) as good, OpenAIServer(dimension=32, latency=0.2) as odd:
        with openai_backend(good, base_url=[good.base_url, odd.base_url]) as backend:
            _, refused = embed_at_once(backend, [["a"], ["b"]])
    assert isinstance(refused, BackendUnreachableError)
    assert str(refused).startswith(f"openai backend at {odd.base_url}: serves another model")
    assert "it now gives 32-dimension vectors, where they gave 64-dimension ones" in str(refused)


@pytest.mark.heavy
def test_a_checked_server_that_switches_dimension_is_refused_at_its_first_such_answer_and_named() -> None:
    with OpenAIServer(latency=0.1) as steady, OpenAIServer(latency=0.1) as swapped:
        with openai_backend(steady, base_url=[steady.base_url, swapped.base_url]) as backend:
            embed_at_once(backend, [["a"], ["b"]])  # one batch on each: both checked, 64 dimensions
            swapped.dimension = 32  # its model is swapped underneath the build
            results = embed_at_once(backend, [["c"], ["d"]])
    refused = [result for result in results if isinstance(result, BackendError)]
    assert len(refused) == 1
    assert isinstance(refused[0], BackendUnreachableError)
    assert str(refused[0]).startswith(f"openai backend at {swapped.base_url}: serves another model")
    assert "it now gives 32-dimension vectors, where they gave 64-dimension ones" in str(refused[0])


@pytest.mark.heavy
def test_servers_of_the_same_model_are_checked_once_each() -> None:
    with (
        OllamaServer(latency=0.1) as first,
        OllamaServer(latency=0.1) as second,
        OllamaServer(latency=0.1) as third,
    ):
        with ollama_backend(first, host=[first.url, second.url, third.url]) as backend:
            for round_ in range(3):
                batches = [[f"{round_}.{n}"] for n in range(6)]
                for batch, vectors in zip(batches, embed_at_once(backend, batches), strict=True):
                    assert np.array_equal(as_float32(vectors), expected(batch))
            requests = backend.usage()["requests"]
    assert all(server.requests for server in (first, second, third))
    assert requests == 18 + 3  # every batch once, and one probe of each server's model


# One model, held to from the start of a build: a probe text embedded by each server, again before
# vectors are stored, and again after a lost connection.


@pytest.fixture(params=["ollama", "openai"])
def any_server(request: pytest.FixtureRequest):
    running = OllamaServer() if request.param == "ollama" else OpenAIServer()
    with running:
        yield running


def backend_of(server: OllamaServer | OpenAIServer, *servers: OllamaServer | OpenAIServer) -> Any:
    """The backend of the server's protocol, on ``server`` and any others given."""
    every = (server, *servers)
    if isinstance(server, OpenAIServer):
        return openai_backend(server, base_url=[each.base_url for each in every])
    return ollama_backend(server, host=[each.url for each in every])


def probe_of(variant: str, dimension: int = 64) -> ModelProbe:
    """The probe a model (a loopback server's variant) gives, as an index records it."""
    return ModelProbe(PROBE_TEXT, fake_vector(variant + PROBE_TEXT, dimension).astype("<f4").tobytes())


@pytest.mark.heavy
def test_a_lone_server_held_to_a_model_is_probed_at_its_first_answer_and_again_before_vectors_are_stored(
    any_server,
) -> None:
    with backend_of(any_server) as backend:
        backend.hold_to_model(None)
        backend.embed(["a"])
        backend.embed(["b"])
        assert inputs(any_server) == [["a"], [PROBE_TEXT], ["b"]]
        assert backend.confirm_model() == probe_of("")  # the probe, for the index to record
        assert inputs(any_server)[-1] == [PROBE_TEXT]
        backend.confirm_model()  # nothing answered since: nothing to ask
        assert len(any_server.requests) == 4


@pytest.mark.heavy
def test_a_lone_server_that_switches_models_is_caught_before_its_vectors_are_stored(any_server) -> None:
    with backend_of(any_server) as backend:
        backend.hold_to_model(None)
        backend.embed(["a"])
        any_server.variant = "another model "  # same name, same dimension, other vectors
        backend.embed(["b"])  # its answer cannot tell: the pipeline holds it until confirmed
        with pytest.raises(BackendUnreachableError) as refused:
            backend.confirm_model()
    message = str(refused.value)
    assert message.startswith(
        f"{backend.kind} backend at {display(any_server)}: switched models during the build"
    )
    assert "for the same text, its vector and the one from" in message


@pytest.mark.heavy
def test_a_server_back_from_a_lost_connection_is_probed_before_its_next_answer_is_used(any_server) -> None:
    with backend_of(any_server) as backend:
        backend.hold_to_model(None)
        backend.embed(["a"])
        any_server.fail_next(1, "reset")  # restarted...
        any_server.variant = "another model "  # ...with another model behind the same name
        with pytest.raises(BackendUnreachableError, match="switched models during the build"):
            backend.embed(["b"])
    assert inputs(any_server)[-2:] == [["b"], [PROBE_TEXT]]


@pytest.mark.heavy
def test_a_lone_server_no_longer_serving_the_index_s_model_is_a_settings_change(any_server) -> None:
    with backend_of(any_server) as backend:
        backend.hold_to_model(probe_of("the model the index was built with "))
        with pytest.raises(SettingsChangedError) as changed:
            backend.embed(["a"])
        assert changed.value.difference.startswith("model: the same name gives other vectors (a cosine of")
        backend.hold_to_model(probe_of("", dimension=32))
        with pytest.raises(SettingsChangedError) as changed:
            backend.embed(["a"])
        assert changed.value.difference == "dimension: 32 -> 64"
        backend.hold_to_model(probe_of(""))
        assert np.array_equal(as_float32(backend.embed(["a"])), expected(["a"]))


@pytest.mark.heavy
def test_one_of_three_servers_off_the_index_s_model_is_named_not_taken_for_a_settings_change() -> None:
    with OllamaServer() as first, OllamaServer(variant="another model ") as odd, OllamaServer() as third:
        with backend_of(odd, first, third) as backend:  # the odd one listed first: it answers first
            backend.hold_to_model(probe_of(""))
            with pytest.raises(BackendUnreachableError) as refused:
                backend.embed(["a"])
    assert str(refused.value).startswith(
        f"ollama backend at {odd.url}/: serves another model than the index was built with"
    )


@pytest.mark.heavy
def test_one_of_three_servers_switching_models_is_named_when_vectors_are_confirmed() -> None:
    with (
        OpenAIServer(latency=0.05) as first,
        OpenAIServer(latency=0.05) as second,
        OpenAIServer(latency=0.05) as third,
    ):
        with backend_of(first, second, third) as backend:
            backend.hold_to_model(None)
            embed_at_once(backend, [[f"{n}"] for n in range(6)])
            assert backend.confirm_model() == probe_of("")
            second.variant = "another model "
            results = embed_at_once(backend, [[f"again {n}"] for n in range(6)])
            assert not any(isinstance(result, BackendError) for result in results)  # nothing to tell yet
            with pytest.raises(BackendUnreachableError) as refused:
                backend.confirm_model()
    assert str(refused.value).startswith(
        f"openai backend at {second.base_url}: switched models during the build"
    )


@pytest.mark.heavy
def test_a_server_gone_since_it_answered_is_probed_before_its_next_answer_is_used(any_server) -> None:
    with backend_of(any_server) as backend:
        backend.hold_to_model(None)
        backend.embed(["a"])
        any_server.fail_next(5, "reset")  # every attempt of the confirming probe
        backend.confirm_model()  # cannot be confirmed: not refused, but no longer trusted
        backend.embed(["b"])
    assert inputs(any_server)[-2:] == [["b"], [PROBE_TEXT]]


def display(server: OllamaServer | OpenAIServer) -> str:
    """How messages name a loopback server."""
    return server.base_url if isinstance(server, OpenAIServer) else server.url + "/"


@pytest.mark.heavy
def test_several_servers_are_recorded_as_a_list_without_credentials_and_described_as_one() -> None:
    with OpenAIServer() as first, OpenAIServer() as second:
        urls = [f"http://user:{SECRET}@127.0.0.1:{first.port}/v1", f"{second.base_url}?api-key={SECRET}&x=1"]
        with OpenAIBackend("text-embedding-3-small", base_url=urls) as several:
            with openai_backend(first) as one:
                assert several.describe() == one.describe()
                assert one.config()["base_url"] == first.base_url
            config = several.config()
            assert config["base_url"] == [first.base_url, f"{second.base_url}?x=1"]
            assert SECRET not in str(config)
            assert SECRET not in repr(several)
            with make_backend(config) as rebuilt:
                assert rebuilt.config() == config
                assert rebuilt.default_concurrency == 16


@pytest.mark.heavy
def test_each_servers_credentials_are_sent_to_it_alone_and_masked_in_its_messages() -> None:
    keys = ["sk-first-0123456789abcdef", "sk-second-fedcba9876543210"]
    with OpenAIServer(latency=0.2) as first, OpenAIServer(latency=0.2) as second:
        urls = [f"http://user:{keys[0]}@127.0.0.1:{first.port}/v1", f"{second.base_url}?api-key={keys[1]}"]
        for server, key in ((first, keys[0]), (second, keys[1])):
            server.fail_next(1, "status", status=400, body={"error": {"message": f"key {key} not allowed"}})
        with OpenAIBackend("m", base_url=urls, **fast(max_attempts=1)) as backend:
            errors = embed_at_once(backend, [["a"], ["b"]])  # one batch on each server
    for error, server in zip(errors, (first, second), strict=True):
        assert isinstance(error, BackendError)
        assert str(error).startswith(f"openai backend at {server.base_url}/embeddings: request refused")
        assert keys[0] not in str(error)
        assert keys[1] not in str(error)
        assert "key *** not allowed" in str(error)
    basic = base64.b64decode(first.requests[0].headers["authorization"].removeprefix("Basic ")).decode()
    assert basic == f"user:{keys[0]}"
    assert "authorization" not in second.requests[0].headers
    assert second.requests[0].path.endswith(f"api-key={keys[1]}")
    assert "api-key" not in first.requests[0].path


SECRET = "sk-attack-7f3a9c"


def build_on_server(docs, index_path, backend: str, model: str, url: str):
    """`index build` of ``docs`` into ``index_path`` with an HTTP backend at ``url``."""
    return cli(
        "build", str(docs), "--db", str(index_path), "--backend", backend, "--model", model, "--base-url", url
    )


@pytest.mark.heavy
def test_basic_auth_credentials_echoed_by_a_server_are_masked(tmp_path, docs):
    with OpenAIServer(api_key="the-right-key") as server:
        url = server.base_url.replace("http://", f"http://someone:{SECRET}@")
        result = build_on_server(docs, tmp_path / "i.db", "openai", "m", url)
    encoded = base64.b64encode(f"someone:{SECRET}".encode()).decode()
    assert result.exit_code == 4
    assert "credentials refused" in result.stderr
    assert SECRET not in result.output
    assert encoded not in result.output
    assert "Basic ***" in result.stderr


@pytest.mark.heavy
def test_a_key_in_the_query_string_is_sent_but_never_stored(tmp_path, docs):
    index_path = tmp_path / "i.db"
    with OpenAIServer() as server:
        url = f"{server.base_url}?api-version=2024-06-01&api_key={SECRET}"
        result = build_on_server(docs, index_path, "openai", "m", url)
        assert result.exit_code == 0, result.output
        assert server.requests[0].path == f"/v1/embeddings?api-version=2024-06-01&api_key={SECRET}"
    status = cli("status", "--db", str(index_path), "--json").stdout
    assert json.loads(status)["backend"]["base_url"] == f"{server.base_url}?api-version=2024-06-01"
    stored = b"".join(path.read_bytes() for path in tmp_path.glob("i.db*"))
    assert SECRET.encode() not in stored
    assert SECRET not in status


@pytest.mark.heavy
def test_an_ollama_url_with_a_user_and_password_sends_them_as_basic_auth(tmp_path, docs):
    with OllamaServer() as server:
        url = server.url.replace("http://", f"http://someone:{SECRET}@")
        result = build_on_server(docs, tmp_path / "i.db", "ollama", "nomic-embed-text", url)
        assert result.exit_code == 0, result.output
        expected = "Basic " + base64.b64encode(f"someone:{SECRET}".encode()).decode()
        assert server.requests[0].headers["authorization"] == expected
    recorded = json.loads(cli("status", "--db", str(tmp_path / "i.db"), "--json").stdout)["backend"]
    assert recorded["host"] == server.url
