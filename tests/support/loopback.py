"""Real HTTP embedding servers on 127.0.0.1 for the tests: Ollama's ``/api/embed`` and ``/v1/embeddings``.

Each server runs a stdlib ``ThreadingHTTPServer`` on a free port in a background thread, speaks
HTTP/1.1 with keep-alive (so connection reuse can be observed), and embeds deterministically: the
vector of a text depends on the text alone (:func:`fake_vector`), never on the batch around it.

Every request is recorded (:class:`Recorded`). Faults are queued with :meth:`LoopbackServer.fail_next`
and each one applies to the next N requests, in order::

    with OllamaServer() as server:
        server.fail_next(2, "rate_limit", retry_after_ms=50)
        backend = OllamaBackend("nomic-embed-text", host=server.url)

Faults: ``rate_limit`` (429 with ``Retry-After`` and/or ``retry-after-ms``), ``unavailable`` (503),
``reset`` (headers sent, then the socket closed mid-body), ``slow`` (no answer for ``delay`` seconds),
``malformed`` (invalid JSON), ``too_few`` (one vector short), ``empty_vector``, ``nan`` (a NaN in the
first vector), ``wrong_dimension``, ``shuffled`` and ``duplicate_index`` (OpenAI only), ``forbidden``
(403), ``bad_request`` (400), ``insufficient_quota`` (429 that no wait cures), ``status`` (any
``status`` with a ``body``).

Standing behaviour is set on the constructor: ``token_budget`` refuses any input of more words than
that in the server's ``dialect``; ``api_key`` answers 401 to any other bearer token; ``models``
answers 404 to other models; ``latency`` and ``parallel`` make every request take that long with at
most that many served at once, like a real server for throughput benchmarks; ``variant`` makes it serve
another model under the same name (every text gets another vector), as a misconfigured server would;
``switch_after=N`` makes it switch to the model ``switch_to`` (of the same dimension) after its N-th
request, decided once a request, as a server whose model is replaced under a running build;
``shed_every=N`` answers 503 to every N-th request that no queued fault takes, as an overloaded server
sheds load.
"""

from __future__ import annotations

import base64
import hashlib
import json
import random
import socket
import threading
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import urlsplit

import numpy as np

DIALECTS = ("ollama", "openai", "tei", "llamacpp", "mistralrs")


def fake_vector(text: str, dimension: int = 64) -> np.ndarray:
    """A unit float32 vector that depends only on ``text`` and ``dimension``."""
    seed = int.from_bytes(hashlib.sha256(text.encode("utf-8")).digest()[:8], "little")
    vector = np.random.default_rng(seed).standard_normal(dimension).astype(np.float32)
    return vector / np.linalg.norm(vector)


def word_count(text: str) -> int:
    """The loopback servers' token count: whitespace-separated words."""
    return len(text.split())


@dataclass(frozen=True)
class Recorded:
    """One request as the server saw it."""

    path: str
    headers: dict[str, str]
    body: Any
    client: tuple[str, int]
    batch_size: int


@dataclass
class _Fault:
    name: str
    remaining: int
    options: dict[str, Any] = field(default_factory=dict)


class LoopbackServer:
    """Base of the loopback servers: threading, recording, faults, latency; subclasses speak a protocol."""

    #: The path the subclass answers; anything else is a 404.
    path = ""

    def __init__(
        self,
        dimension: int = 64,
        *,
        dialect: str = "openai",
        token_budget: int | None = None,
        api_key: str | None = None,
        models: Iterable[str] | None = None,
        latency: float = 0.0,
        parallel: int | None = None,
        variant: str = "",
        shed_every: int | None = None,
        switch_after: int | None = None,
        switch_to: str = "another model ",
    ) -> None:
        if dialect not in DIALECTS:
            raise ValueError(f"unknown dialect {dialect!r}")
        self.dimension = dimension
        self.dialect = dialect
        self.token_budget = token_budget
        self.api_key = api_key
        self.models = set(models) if models is not None else None
        self.latency = latency
        self.variant = variant
        self.shed_every = shed_every
        self.switch_after = switch_after
        self.switch_to = switch_to
        self._request_model = threading.local()  # the variant a request is answered with
        self._unfaulted = 0  # requests no queued fault took, for shed_every
        self.requests: list[Recorded] = []
        self.max_in_flight = 0
        self._in_flight = 0
        self._slots = threading.Semaphore(parallel) if parallel else None
        self._faults: list[_Fault] = []
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._httpd = _Server(("127.0.0.1", 0), _handler_for(self))
        self._thread = threading.Thread(target=self._httpd.serve_forever, args=(0.01,), daemon=True)

    @property
    def port(self) -> int:
        return self._httpd.server_address[1]

    @property
    def url(self) -> str:
        """The URL to give the backend."""
        return f"http://127.0.0.1:{self.port}"

    @property
    def connections(self) -> set[tuple[str, int]]:
        """The distinct client sockets (address, port) requests came from."""
        with self._lock:
            return {request.client for request in self.requests}

    def fail_next(self, count: int, fault: str, **options: Any) -> None:
        """Apply ``fault`` to the next ``count`` requests (after the faults already queued)."""
        with self._lock:
            self._faults.append(_Fault(fault, count, options))

    def start(self) -> LoopbackServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stopping.set()
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(timeout=5)

    def __enter__(self) -> LoopbackServer:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    def vector(self, text: str, dimension: int | None = None) -> np.ndarray:
        variant = getattr(self._request_model, "variant", self.variant)
        return fake_vector(variant + text, dimension or self.dimension)

    # The protocol: subclasses turn a request body into (status, payload) or apply a fault.

    def answer(
        self, body: Any, headers: dict[str, str], fault: _Fault | None
    ) -> tuple[int, Any, dict[str, str]]:
        raise NotImplementedError

    def too_long(self, longest: int) -> tuple[int, Any]:
        """The dialect's answer to an input of ``longest`` words over the budget."""
        budget = self.token_budget
        if self.dialect == "ollama":
            return 400, {"error": "the input length exceeds the context length"}
        if self.dialect == "tei":
            message = (
                f"Input validation error: `inputs` must have less than {budget} tokens. Given: {longest}"
            )
            return 413, {"message": message, "code": 413, "type": "Validation"}
        if self.dialect == "llamacpp":
            message = (
                f"input ({longest} tokens) is too large to process. increase the physical batch size "
                f"(current batch size: {budget})"
            )
            return 500, {"error": {"code": 500, "message": message, "type": "server_error"}}
        if self.dialect == "mistralrs":
            message = (
                f"Prompt sequence length is greater than {budget}, "
                "perhaps consider using `truncate_sequence`?"
            )
            return 422, {"message": message}
        message = (
            f"This model's maximum context length is {budget} tokens, however you requested "
            f"{longest} tokens ({longest} in your prompt; 0 for the completion). "
            "Please reduce your prompt; or completion length."
        )
        return 400, {
            "error": {"message": message, "type": "invalid_request_error", "param": None, "code": None}
        }

    # Machinery shared by every protocol.

    def _next_fault(self) -> _Fault | None:
        with self._lock:
            while self._faults and self._faults[0].remaining <= 0:
                self._faults.pop(0)
            if not self._faults:
                self._unfaulted += 1
                if self.shed_every and self._unfaulted % self.shed_every == 0:
                    return _Fault("unavailable", 1)
                return None
            fault = self._faults[0]
            fault.remaining -= 1
            return _Fault(fault.name, 1, fault.options)

    def wait_out_latency(self, started: float) -> None:
        """Sleep what is left of ``latency`` since ``started``: the server's own work is part of it."""
        remaining = self.latency - (time.monotonic() - started)
        if remaining > 0:
            time.sleep(remaining)

    def _record(self, request: Recorded) -> None:
        with self._lock:
            self.requests.append(request)
            switched = self.switch_after is not None and len(self.requests) > self.switch_after
        self._request_model.variant = self.switch_to if switched else self.variant

    def _enter(self) -> None:
        if self._slots is not None:
            self._slots.acquire()
        with self._lock:
            self._in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self._in_flight)

    def _leave(self) -> None:
        with self._lock:
            self._in_flight -= 1
        if self._slots is not None:
            self._slots.release()


class OllamaServer(LoopbackServer):
    """Ollama's ``POST /api/embed``: ``{"model", "input"}`` → ``{"embeddings", "prompt_eval_count"}``."""

    path = "/api/embed"

    def __init__(self, dimension: int = 64, **options: Any) -> None:
        options.setdefault("dialect", "ollama")
        super().__init__(dimension, **options)

    def answer(
        self, body: Any, headers: dict[str, str], fault: _Fault | None
    ) -> tuple[int, Any, dict[str, str]]:
        model = body.get("model", "")
        if self.models is not None and model not in self.models:
            return 404, {"error": f"model '{model}' not found"}, {}
        texts = _texts(body.get("input"))
        longest = max((word_count(text) for text in texts), default=0)
        if self.token_budget is not None and longest > self.token_budget:
            return (*self.too_long(longest), {})
        vectors = [self.vector(text).tolist() for text in texts]
        _spoil(vectors, fault, self.dimension)
        payload = {
            "model": model,
            "embeddings": vectors,
            "total_duration": 1000,
            "load_duration": 10,
            "prompt_eval_count": sum(word_count(text) for text in texts),
        }
        return 200, payload, {}


class OpenAIServer(LoopbackServer):
    """``POST /v1/embeddings`` as OpenAI answers it; other dialects err as TEI, llama.cpp, mistral.rs do.

    Give the backend ``server.url + "/v1"`` (or :attr:`base_url`). ``batch_token_budget`` refuses a
    request whose words add up to more, as OpenAI's ``max_tokens_per_request``.
    """

    path = "/v1/embeddings"

    def __init__(self, dimension: int = 64, *, batch_token_budget: int | None = None, **options: Any) -> None:
        super().__init__(dimension, **options)
        self.batch_token_budget = batch_token_budget

    @property
    def base_url(self) -> str:
        return self.url + "/v1"

    def answer(
        self, body: Any, headers: dict[str, str], fault: _Fault | None
    ) -> tuple[int, Any, dict[str, str]]:
        if self.api_key is not None and headers.get("authorization") != f"Bearer {self.api_key}":
            given = headers.get("authorization", "").removeprefix("Bearer ")
            # Echo the key back whole: a client must keep it out of its own messages anyway.
            message = f"Incorrect API key provided: {given}. You can find your API key in your account."
            return (
                401,
                {"error": {"message": message, "type": "invalid_request_error", "code": "invalid_api_key"}},
                {},
            )
        model = body.get("model", "")
        if self.models is not None and model not in self.models:
            message = f"The model `{model}` does not exist or you do not have access to it."
            return (
                404,
                {"error": {"message": message, "type": "invalid_request_error", "code": "model_not_found"}},
                {},
            )
        texts = _texts(body.get("input"))
        counts = [word_count(text) for text in texts]
        if self.token_budget is not None and max(counts, default=0) > self.token_budget:
            return (*self.too_long(max(counts)), {})
        if self.batch_token_budget is not None and sum(counts) > self.batch_token_budget:
            message = f"Requested {sum(counts)} tokens, max {self.batch_token_budget} tokens per request"
            error = {
                "message": message,
                "type": "max_tokens_per_request",
                "param": None,
                "code": "max_tokens_per_request",
            }
            return 400, {"error": error}, {}
        dimension = body.get("dimensions") or self.dimension
        vectors = [self.vector(text, dimension) for text in texts]
        rows: list[Any] = [vector.tolist() for vector in vectors]
        _spoil(rows, fault, dimension)
        as_base64 = body.get("encoding_format") == "base64"
        data = [
            {"object": "embedding", "index": index, "embedding": _base64(row) if as_base64 else row}
            for index, row in enumerate(rows)
        ]
        if fault is not None and fault.name == "shuffled":
            random.Random(len(data)).shuffle(data)
        if fault is not None and fault.name == "duplicate_index" and len(data) > 1:
            data[-1]["index"] = 0
        usage = {"prompt_tokens": sum(counts), "total_tokens": sum(counts)}
        return 200, {"object": "list", "data": data, "model": model, "usage": usage}, {}


def _texts(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    return list(value or [])


def _base64(row: list[float]) -> str:
    return base64.b64encode(np.asarray(row, dtype="<f4").tobytes()).decode("ascii")


def _spoil(rows: list[Any], fault: _Fault | None, dimension: int) -> None:
    """Apply the faults that damage vectors, in place."""
    if fault is None or not rows:
        return
    if fault.name == "too_few":
        rows.pop()
    elif fault.name == "empty_vector":
        rows[0] = []
    elif fault.name == "nan":
        rows[0] = [float("nan")] + list(rows[0][1:])
    elif fault.name == "wrong_dimension":
        rows[0] = list(rows[0]) + [0.0]


_PLAIN_FAULTS = {
    "forbidden": (
        403,
        {"error": {"message": "You are not allowed to use this model.", "type": "permission_error"}},
    ),
    "bad_request": (400, {"error": {"message": "'$.input' is invalid.", "type": "invalid_request_error"}}),
    "insufficient_quota": (
        429,
        {
            "error": {
                "message": "You exceeded your current quota, please check your plan and billing details.",
                "type": "insufficient_quota",
                "param": None,
                "code": "insufficient_quota",
            }
        },
    ),
}


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 64

    def handle_error(self, request: Any, client_address: Any) -> None:
        # A client that gave up on a slow answer closes its socket; that is expected here.
        pass


def _handler_for(server: LoopbackServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        # Headers and body leave in one write, without Nagle's delay: a round trip takes microseconds.
        disable_nagle_algorithm = True
        wbufsize = 1 << 16

        def log_message(self, format: str, *args: Any) -> None:
            pass

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length)
            headers = {key.lower(): value for key, value in self.headers.items()}
            try:
                body = json.loads(raw)
            except ValueError:
                body = None
            if not isinstance(body, dict):
                body = {}
            batch_size = len(_texts(body.get("input")))
            server._record(Recorded(self.path, headers, body, self.client_address[:2], batch_size))
            if urlsplit(self.path).path != server.path:
                self._send(404, {"error": "404 page not found"})
                return
            fault = server._next_fault()
            server._enter()
            try:
                self._respond(body, headers, fault, time.monotonic())
            finally:
                server._leave()

        def _respond(self, body: Any, headers: dict[str, str], fault: _Fault | None, started: float) -> None:
            if fault is not None:
                server.wait_out_latency(started)
            name = fault.name if fault is not None else ""
            options = fault.options if fault is not None else {}
            if name == "slow":
                server._stopping.wait(options.get("delay", 5.0))
                self.close_connection = True
                return
            if name == "reset":
                self.wfile.write(
                    b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 4096\r\n\r\n"
                    b'{"embeddings": [[0.1, '
                )
                self.wfile.flush()
                self.close_connection = True
                self.connection.shutdown(socket.SHUT_RDWR)
                return
            if name == "rate_limit":
                extra = {}
                if "retry_after" in options:
                    extra["Retry-After"] = str(options["retry_after"])
                if "retry_after_ms" in options:
                    extra["retry-after-ms"] = str(options["retry_after_ms"])
                message = "Rate limit reached for requests. Please try again later."
                self._send(
                    429,
                    {"error": {"message": message, "type": "requests", "code": "rate_limit_exceeded"}},
                    extra,
                )
                return
            if name == "unavailable":
                extra = {"Retry-After": str(options["retry_after"])} if "retry_after" in options else {}
                self._send(503, {"error": "service unavailable"}, extra)
                return
            if name == "malformed":
                self._send_raw(200, b'{"embeddings": [[0.1, 0.2,')
                return
            if name in _PLAIN_FAULTS:
                self._send(*_PLAIN_FAULTS[name])
                return
            if name == "status":
                self._send(
                    options["status"], options.get("body", {"error": "injected"}), options.get("headers", {})
                )
                return
            status, payload, extra = server.answer(body, headers, fault)
            data = json.dumps(payload).encode("utf-8")
            server.wait_out_latency(started)
            self._send_raw(status, data, extra)

        def _send(self, status: int, payload: Any, extra: dict[str, str] | None = None) -> None:
            # Python's json writes NaN as the bare literal NaN, which is what a careless server sends.
            self._send_raw(status, json.dumps(payload).encode("utf-8"), extra)

        def _send_raw(self, status: int, data: bytes, extra: dict[str, str] | None = None) -> None:
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            for key, value in (extra or {}).items():
                self.send_header(key, value)
            self.end_headers()
            self.wfile.write(data)

    return Handler


def closed_port() -> int:
    """A port on 127.0.0.1 that nothing listens on (connections are refused)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]
