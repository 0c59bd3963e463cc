"""The HTTP plumbing shared by the backends that talk to an embedding server.

One :class:`HttpClient` per server keeps a pool of connections and turns every failure into one of the
library's errors, with a one-line message that names the backend, the URL and what happened. Deciding
what a failure means lives here, in one place, so the Ollama and the OpenAI-compatible backends (and
every server that imitates them) are judged by the same rules:

* a connection that breaks, a timeout, 408, 429 and 5xx raise :class:`ServerFailure`: worth another
  attempt, after the wait the server asks for (``Retry-After`` or ``retry-after-ms``) or a backoff with
  jitter, on this server or another (:mod:`indexer.backends.servers` decides which and when), for as
  long as ``retry_seconds`` allows; a server that cannot be reached at all gets ``max_attempts``;
* an input or batch the server calls too long raises :class:`InputTooLongError` at once, because only
  a smaller request can succeed;
* bad credentials, an unknown model, an exhausted quota and a server that never answers raise
  :class:`BackendUnreachableError`: the build cannot go on;
* anything else raises :class:`BackendError` for the one batch.
"""

from __future__ import annotations

import base64
import email.utils
import functools
import json
import random
import re
import ssl
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass, field, fields
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

import httpx
import orjson

from indexer.errors import BackendError, BackendUnreachableError, ConfigError, InputTooLongError

#: Statuses that mean "try again later"; 501 and 505 are 5xx but permanent.
_PERMANENT_5XX = frozenset({501, 505})

#: Error codes or types (OpenAI style) that mean the request is too big to be embedded at once.
_TOO_LONG_CODES = frozenset({"max_tokens_per_request", "context_length_exceeded"})

#: How servers say an input (or the whole batch) is too long; matched in the lowercased message.
_TOO_LONG_PHRASES = (
    "exceeds the context length",  # Ollama: "the input length exceeds the context length"
    "exceeds maximum context length",  # Ollama: "input exceeds maximum context length ..."
    "longer than the context length",  # Ollama with truncation off, SGLang
    "maximum context length",  # OpenAI (classic wording), vLLM
    "maximum input length",  # OpenAI: "Invalid 'input[0]': maximum input length is 8192 tokens."
    "tokens per request",  # OpenAI: "Requested N tokens, max 300000 tokens per request"
    "request too large",  # OpenAI 429: a single request bigger than the tokens-per-minute limit
    "must have less than",  # TEI: "Input validation error: `inputs` must have less than 512 tokens"
    "too large to process",  # llama.cpp: "input is too large to process. increase the physical batch size"
    "larger than the max context size",  # llama.cpp
    "exceeds the available context size",  # llama.cpp
    "prompt sequence length is greater than",  # mistral.rs
    "longer than the maximum model length",  # vLLM
    "exceeds the context window",  # OpenAI (newer wording)
    "input is too long",
)

#: Codes or types that mean the account has no quota left: waiting does not help.
_QUOTA_CODES = frozenset({"insufficient_quota"})

_JSON_HEADERS = {"Content-Type": "application/json"}

#: How much of a server's error text goes into a message.
_MAX_SERVER_TEXT = 300


@dataclass(frozen=True)
class ErrorResponse:
    """A non-2xx answer, reduced to what deciding and reporting need."""

    status: int
    #: The server's own explanation, on one line, secrets removed.
    message: str
    #: Error codes and types the body carried (lowercased), e.g. ``{"insufficient_quota"}``.
    codes: frozenset[str]


class ServerFailure(BackendError):
    """One attempt failed in a way that waiting may cure: a broken connection, a timeout, 408, 429, 5xx.

    Raised by :meth:`HttpClient.post` for the server pool to try again, on this server after a wait or
    at once on another; only the pool's last word (:class:`BackendError` or, when the server could not
    be reached, :class:`BackendUnreachableError`) leaves the backend.
    """

    def __init__(
        self,
        what: str,
        url: str,
        *,
        unreachable: bool = False,
        wait: float | None = None,
        answered: bool = False,
    ) -> None:
        super().__init__(what)
        #: What happened, without the URL (the pool's message adds it).
        self.what = what
        self.url = url
        #: No connection could be made, as opposed to a server that answered badly.
        self.unreachable = unreachable
        #: The wait the server asked for, if any (seconds).
        self.wait = wait
        #: The server answered (429, 5xx), as opposed to a connection that failed, broke or timed
        #: out: after which the server may be another process, perhaps serving another model.
        self.answered = answered


#: A backend's chance to explain an error response in its own terms before the generic rules apply:
#: return the error class and the text of what happened, or None to let the generic rules decide.
Explain = Callable[[ErrorResponse], tuple[type[BackendError], str] | None]


@dataclass(frozen=True)
class HttpSettings:
    """How an HTTP backend talks to its server: the knobs both HTTP backends share, recorded with the
    index under ``"http"``. ``metadata["help"]`` says what each one is, for docstrings and help."""

    timeout: float = field(default=60.0, metadata={"help": "seconds to wait for an answer"})
    connect_timeout: float = field(default=10.0, metadata={"help": "seconds to wait for a connection"})
    max_attempts: int = field(
        default=5,
        metadata={
            "help": "attempts per batch, the first included, when no server can be reached (connection "
            "refused, unknown host)"
        },
    )
    retry_seconds: float = field(
        default=300.0,
        metadata={
            "help": "how long a batch is tried again, from its first attempt, after failures that waiting "
            "may cure (429, 408, 5xx, broken connections, timeouts)"
        },
    )
    retry_base_delay: float = field(
        default=0.5, metadata={"help": "backoff before the second attempt, doubled each time (seconds)"}
    )
    retry_max_delay: float = field(default=30.0, metadata={"help": "the longest backoff (seconds)"})
    max_retry_after: float = field(
        default=60.0,
        metadata={
            "help": "the longest wait a server may ask for; asking more fails the batch, unless another "
            "server can take it"
        },
    )

    def __post_init__(self) -> None:
        if not isinstance(self.max_attempts, int) or self.max_attempts < 1:
            raise ConfigError(f"max_attempts must be at least 1, not {self.max_attempts!r}")
        for item in fields(self):
            value = getattr(self, item.name)
            if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0:
                raise ConfigError(f"{item.name} must be a number of seconds, not {value!r}")

    @classmethod
    def from_config(cls, config: dict[str, Any] | None, **defaults: Any) -> HttpSettings:
        """Settings from a recorded ``"http"`` dict (unknown keys refused), over ``defaults``."""
        names = {item.name for item in fields(cls)}
        unknown = sorted(set(config or {}) - names)
        if unknown:
            raise ConfigError(f"unknown HTTP settings {unknown} (known: {sorted(names)})")
        return cls(**{**defaults, **(config or {})})

    def config(self) -> dict[str, Any]:
        return asdict(self)


class HttpClient:
    """A pooled HTTP client to one server that posts JSON and counts requests and tokens.

    Args:
        backend: The backend kind, used in every message ("ollama", "openai").
        base_url: The server's URL; paths given to :meth:`post` are appended to it.
        settings: Timeouts, and the backoff between attempts (see :class:`HttpSettings`).
        headers: Extra headers for every request (for example ``Authorization``).
        secrets: Strings that must never appear in a message (API keys); they are replaced by ``***``.
        max_connections: Connections kept open at most; more threads than this wait for one.
        explain: A backend's hook to explain error responses (see :data:`Explain`).
    """

    def __init__(
        self,
        backend: str,
        base_url: str,
        settings: HttpSettings,
        *,
        headers: dict[str, str] | None = None,
        secrets: Iterable[str] = (),
        max_connections: int = 32,
        explain: Explain | None = None,
    ) -> None:
        self.backend = backend
        url, auth = _split_credentials(backend, base_url)
        self.url = url.copy_with(path=url.path.rstrip("/") or "/")
        #: The server's URL without credentials, for messages (its query string is never shown).
        self.base_url = display_url(str(self.url))
        self.settings = settings
        self._secrets = credential_forms(secrets, auth, url)
        self._explain = explain
        self._client = httpx.Client(
            auth=auth,
            headers=headers,
            verify=_ssl_context(),
            timeout=httpx.Timeout(settings.timeout, connect=settings.connect_timeout),
            limits=httpx.Limits(max_connections=max_connections, max_keepalive_connections=max_connections),
        )
        self._lock = threading.Lock()
        self._endpoints: dict[str, str] = {}
        self._requests = 0
        self._tokens = 0

    def post(self, path: str, payload: dict[str, Any]) -> Any:
        """POST ``payload`` as JSON to ``base_url + path``, once, and return the decoded JSON answer.

        A failure that waiting may cure (a broken connection, a timeout, 408, 429, 5xx) raises
        :class:`ServerFailure`, for the caller to try again here or on another server; the others
        raise :class:`InputTooLongError`, :class:`BackendUnreachableError` or :class:`BackendError`.
        """
        url = self.endpoint(path)
        self._count_request()
        try:
            response = self._client.post(url, content=orjson.dumps(payload), headers=_JSON_HEADERS)
        except httpx.ConnectError as exc:
            raise ServerFailure(
                f"cannot connect ({self._one_line(str(exc))})", url, unreachable=True
            ) from None
        except httpx.ConnectTimeout:
            raise ServerFailure("cannot connect (connect timeout)", url, unreachable=True) from None
        except httpx.TimeoutException:
            raise ServerFailure(f"no answer within {self.settings.timeout:g} s (timeout)", url) from None
        except (httpx.NetworkError, httpx.RemoteProtocolError) as exc:
            reason = self._one_line(str(exc)) or type(exc).__name__
            raise ServerFailure(f"connection broken ({reason})", url) from None
        except (httpx.UnsupportedProtocol, httpx.ProxyError) as exc:
            raise self.error(BackendUnreachableError, f"cannot send the request ({exc})", url) from None
        except httpx.HTTPError as exc:
            raise self.error(BackendError, f"request failed ({type(exc).__name__}: {exc})", url) from None
        if response.is_success:
            return self._decode(url, response)
        failure = self._read_failure(response)
        self._raise_if_final(url, failure)
        raise ServerFailure(
            f"HTTP {failure.status}: {failure.message}",
            url,
            wait=retry_after_seconds(response.headers),
            answered=True,
        )

    def backoff(self, failures: int) -> float:
        """How long the server is benched after its ``failures``-th round of failures in a row: the base
        delay doubled each round, up to the longest, with jitter (between half and all of it), so that
        clients that failed together do not all come back together, yet the bench lasts a while."""
        settings = self.settings
        doublings = min(failures - 1, 64)  # past the longest backoff long before: no float overflow
        delay = min(settings.retry_max_delay, settings.retry_base_delay * 2**doublings)
        return random.uniform(delay / 2, delay)

    def endpoint(self, path: str) -> str:
        """The URL of ``path`` under the server's URL; a query string in that URL is kept. Made once per
        path, as it is asked for twice a request (to send, and for messages)."""
        url = self._endpoints.get(path)
        if url is None:
            url = self._endpoints[path] = str(self.url.copy_with(path=self.url.path.rstrip("/") + path))
        return url

    def error(self, kind: type[BackendError], what: str, url: str | None = None) -> BackendError:
        """Build ``kind`` with the one-line message every backend error carries."""
        shown = display_url(url or self.base_url)
        return kind(self._one_line(f"{self.backend} backend at {shown}: {what}"))

    def add_tokens(self, count: int) -> None:
        """Add tokens the server reports having spent."""
        with self._lock:
            self._tokens += count

    def usage(self) -> dict[str, int]:
        """Requests (every HTTP attempt) and tokens spent so far."""
        with self._lock:
            return {"requests": self._requests, "tokens": self._tokens}

    def close(self) -> None:
        """Close the pooled connections."""
        self._client.close()

    def __repr__(self) -> str:
        return f"HttpClient({self.backend!r}, {display_url(self.base_url)!r})"

    def _count_request(self) -> None:
        with self._lock:
            self._requests += 1

    def _decode(self, url: str, response: httpx.Response) -> Any:
        """orjson reads an answer of a few thousand floats about ten times faster than ``json``, which
        matters when the answer of one request must be read while others are in flight. It refuses
        ``NaN`` and ``Infinity``, which some servers write: ``json`` reads those, so that the vector
        check can name what is wrong."""
        try:
            return orjson.loads(response.content)
        except orjson.JSONDecodeError:
            pass
        try:
            return json.loads(response.content)
        except ValueError:
            sample = self._one_line(response.text[:80])
            raise self.error(BackendError, f"answered with malformed JSON: {sample!r}", url) from None

    def _read_failure(self, response: httpx.Response) -> ErrorResponse:
        try:
            body = json.loads(response.content)
        except ValueError:
            body = None
        message, codes = _error_fields(body)
        if not message:
            message = response.text.strip() or response.reason_phrase
        return ErrorResponse(response.status_code, self._one_line(message)[:_MAX_SERVER_TEXT], codes)

    def _raise_if_final(self, url: str, failure: ErrorResponse) -> None:
        """Raise when ``failure`` cannot be cured by waiting; return when a retry may help."""
        status, said = failure.status, f"HTTP {failure.status}: {failure.message}"
        if is_input_too_long(failure):
            raise self.error(InputTooLongError, f"input too long ({said})", url)
        if self._explain is not None:
            explained = self._explain(failure)
            if explained is not None:
                kind, what = explained
                raise self.error(kind, what, url)
        if status in (401, 403):
            raise self.error(BackendUnreachableError, f"credentials refused ({said})", url)
        if status == 429 and failure.codes & _QUOTA_CODES:
            raise self.error(BackendUnreachableError, f"quota exhausted ({said})", url)
        if status == 404:
            raise self.error(BackendUnreachableError, f"not found, check the model and URL ({said})", url)
        if status in (408, 429) or (status >= 500 and status not in _PERMANENT_5XX):
            return
        raise self.error(BackendError, f"request refused ({said})", url)

    def _one_line(self, text: str) -> str:
        return " ".join(mask_credentials(text, self._secrets).split())


@functools.cache
def _ssl_context() -> ssl.SSLContext:
    # Loading the CA bundle takes tens of milliseconds: once per process is enough for every client.
    return httpx.create_ssl_context()


def is_input_too_long(failure: ErrorResponse) -> bool:
    """Whether the server refused the request for its size, so a smaller one may succeed."""
    if failure.status == 413:
        return True
    if failure.status < 400:
        return False
    message = failure.message.lower()
    return bool(failure.codes & _TOO_LONG_CODES) or any(phrase in message for phrase in _TOO_LONG_PHRASES)


def retry_after_seconds(headers: httpx.Headers) -> float | None:
    """The wait a server asks for: ``retry-after-ms``, else ``Retry-After`` in seconds or as an HTTP date."""
    milliseconds = headers.get("retry-after-ms")
    if milliseconds is not None:
        try:
            return max(0.0, float(milliseconds) / 1000)
        except ValueError:
            pass
    value = headers.get("retry-after")
    if value is None:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        moment = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, moment.timestamp() - time.time())


def display_url(url: str) -> str:
    """``url`` without user name, password or query string, fit for a message."""
    parts = urlsplit(url)
    return urlunsplit((parts.scheme, parts.netloc.rpartition("@")[2], parts.path, "", ""))


def recorded_url(url: str) -> str:
    """``url`` as an index may record it: no user name or password, and no query parameter whose
    name says it holds a secret (``api_key``, ``token``, ``sig``...); others (``api-version``) stay."""
    parts = urlsplit(url)
    kept = [
        (name, value)
        for name, value in parse_qsl(parts.query, keep_blank_values=True)
        if not _is_secret(name)
    ]
    netloc = parts.netloc.rpartition("@")[2]
    return urlunsplit((parts.scheme, netloc, parts.path.rstrip("/"), urlencode(kept), ""))


def _is_secret(name: str) -> bool:
    return bool(_SECRET_NAME.search(name))


#: Query parameters and headers whose value is a credential.
_SECRET_NAME = re.compile(r"key|token|secret|passw|sig|auth|credential|session", re.IGNORECASE)
#: Credentials as servers echo them: an ``Authorization`` value, or an ``api-key``-style header.
_CREDENTIAL = re.compile(
    r"\b(Basic|Bearer)(\s+)[A-Za-z0-9+/=._~-]{6,}|"
    r"\b((?:x-)?api[-_]?key|x-goog-api-key)(\"?\s*[:=]\s*\"?)[^\s\"',;]{4,}",
    re.IGNORECASE,
)


def credential_forms(secrets: Iterable[str], auth: tuple[str, str] | None, url: httpx.URL) -> tuple[str, ...]:
    """Every form in which this client's credentials could come back in a server's message: the
    keys, the basic-auth password and the base64 of ``user:password``, secrets in the URL's query."""
    forms = [*secrets]
    if auth is not None:
        user, password = auth
        pair = f"{user}:{password}"
        forms += [password, pair, base64.b64encode(pair.encode()).decode()]
    forms += [value for name, value in url.params.multi_items() if _is_secret(name)]
    return tuple(sorted({form for form in forms if len(form) >= 3}, key=len, reverse=True))


def mask_credentials(text: str, secrets: Iterable[str] = ()) -> str:
    """``text`` with every credential replaced by ``***``: the known ``secrets`` wherever they appear,
    and any ``Basic``/``Bearer`` value or ``api-key`` header value, known or not."""
    for secret in secrets:
        text = text.replace(secret, "***")
    return _CREDENTIAL.sub(lambda match: f"{match[1] or match[3]}{match[2] or match[4]}***", text)


def _split_credentials(backend: str, base_url: str) -> tuple[httpx.URL, tuple[str, str] | None]:
    """The URL without its user name and password, and those as basic-auth credentials, if any.

    Kept apart so that no URL this client holds, logs or shows carries a password.
    """
    try:
        url = httpx.URL(base_url.strip())
    except httpx.InvalidURL as exc:
        raise ConfigError(f"{backend} backend: invalid URL {display_url(base_url)!r} ({exc})") from None
    if url.scheme not in ("http", "https") or not url.host:
        raise ConfigError(f"{backend} backend: {display_url(base_url)!r} is not an http:// or https:// URL")
    if not (url.username or url.password):
        return url, None
    return url.copy_with(userinfo=b""), (url.username, url.password)


def _error_fields(body: Any) -> tuple[str, frozenset[str]]:
    """The message and codes of the error bodies servers send.

    OpenAI and llama.cpp send ``{"error": {"message", "type", "code"}}``, Ollama and TEI's own routes
    ``{"error": "...", "error_type"}``, TEI's OpenAI routes and mistral.rs ``{"message", "type", "code"}``,
    FastAPI servers ``{"detail": ...}``.
    """
    if not isinstance(body, dict):
        return "", frozenset()
    error = body.get("error")
    fields = error if isinstance(error, dict) else body
    message = fields.get("message")
    if isinstance(error, str):
        message = error
    if message is None and "detail" in body:
        message = body["detail"]
    codes = frozenset(
        fields[key].lower() for key in ("code", "type", "error_type") if isinstance(fields.get(key), str)
    )
    if message is None:
        return "", codes
    return (message if isinstance(message, str) else json.dumps(message)), codes
