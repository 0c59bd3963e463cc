"""Several servers behind one backend: which one a batch goes to, which are benched, and that they all
serve the same model.

The pipeline keeps batches in flight and knows nothing of servers: an HTTP backend hands each batch to
its :class:`ServerPool`, which sends it to the server with the fewest batches in flight (ties go to the
one listed first, so a lone question goes to the first server that answers). One server is a pool of
one, and the same rules then give the retries a single server always had.

* An attempt that fails in a way waiting may cure (:class:`ServerFailure`) benches its server: while
  another server is open, nothing is sent there until a backoff doubled with each round of failures
  (with jitter) is over, and nothing at all before the wait the server asked for (``Retry-After``).
  The batch is tried again at once on another server. When every server is benched, it is tried again
  after its own backoff (doubled with each of its attempts) on the first server back, without
  waiting out a bench longer than that: a bench ends for a batch at a time, so waiting for benches
  would let one batch through per round, and a window of batches on a server that refuses
  connections took minutes to give up instead of seconds. A batch is tried again for as long as
  ``retry_seconds`` allows from its first attempt, so that a server shedding half its load (429, 503
  to every other request) slows a build without failing it; but after ``max_attempts`` attempts in
  a row that reached no server (connection refused, unknown host) it gives up, wherever they went:
  no server is there to wait for.
* While another server is healthy, a server back from the bench gets one batch at a time until one
  succeeds: a server that hangs costs one batch's timeout per bench, not a window's.
* No answer of a server is used before it is known to serve the same model as the others: the first
  text of its first batch is embedded again by a server already checked, and the two vectors must have
  a cosine of at least :data:`SAME_MODEL_COSINE`. The first server to answer is the reference (the
  first listed, unless it is down). A server that disagrees is named in a
  :class:`BackendUnreachableError`: like a server without the model, it stops the build (exit 4).
  A server checked once is then held to the length of the vectors the servers gave: one that answers
  with another length later (its model swapped underneath the build) is named and stops the build
  the same way, at its first such answer.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from indexer.backends.http import HttpClient, HttpSettings, ServerFailure
from indexer.errors import BackendError, BackendUnreachableError

#: Embeds texts on one server: the backend's request and the reading of its answer.
EmbedOn = Callable[[HttpClient, list[str]], Any]

#: How alike two servers' vectors of one text must be to count as the same model: two different models
#: (or one with other options) are far below it, the same weights on other hardware far above.
SAME_MODEL_COSINE = 0.999


@dataclass(eq=False)
class Server:
    """One server and what the pool knows of it; changed only under the pool's lock."""

    client: HttpClient
    order: int
    in_flight: int = 0
    #: Rounds of failures since its last success; a round is what failed of the requests sent
    #: before the bench that the round's first failure started.
    failures: int = 0
    benched_since: float = -math.inf
    benched_until: float = -math.inf
    #: Until when the server asked to be left alone (``Retry-After``): no batch goes there before.
    asked_until: float = -math.inf
    #: Known to serve the same model as the reference (the first server that answered).
    checked: bool = False
    #: Held while this server is being checked, so that it is checked once.
    checking: threading.Lock = field(default_factory=threading.Lock)


class ServerPool:
    """Spreads batches over servers, benches those that fail, and checks they serve the same model.

    Args:
        clients: One client per server, in the order given: the first is tried first.
        settings: ``max_attempts`` (per batch, wherever they go) and ``max_retry_after``.
    """

    def __init__(self, clients: Sequence[HttpClient], settings: HttpSettings) -> None:
        self.servers = [Server(client, order) for order, client in enumerate(clients)]
        self.settings = settings
        self._changed = threading.Condition()
        #: The length of the vectors the servers give, from the first usable answer of several servers.
        self.width: int | None = None

    @property
    def clients(self) -> list[HttpClient]:
        return [server.client for server in self.servers]

    def embed(self, texts: list[str], embed_on: EmbedOn) -> Any:
        """The vectors of ``texts``, from the server that has most room when each attempt starts."""
        settings = self.settings
        deadline = time.monotonic() + settings.retry_seconds
        tried: set[Server] = set()
        avoid: Server | None = None
        retry_at = -math.inf  # when this batch's own backoff is over
        unreached = 0  # attempts in a row that reached no server
        attempt = 0
        while True:
            attempt += 1
            server = self._acquire(avoid=avoid, retry_at=retry_at)
            sent = time.monotonic()
            try:
                vectors = embed_on(server.client, texts)
                self._check_same_model(server, texts, vectors, embed_on)
                self._check_width(server, vectors, len(texts))
            except ServerFailure as failure:
                self._failed(server, sent, failure, in_flight=True)
                self._refuse_long_wait(server, failure)
                avoid = server
                tried.add(server)
                unreached = unreached + 1 if failure.unreachable else 0
                wait = failure.wait if failure.wait is not None else server.client.backoff(attempt)
                retry_at = time.monotonic() + wait
                if unreached >= settings.max_attempts or self._next_attempt_at(retry_at) > deadline:
                    raise self._gave_up(server, failure, attempt, len(tried), deadline) from None
                continue
            except BaseException:
                self._release(server, succeeded=False)
                raise
            self._release(server, succeeded=True)
            return vectors

    def _gave_up(
        self, server: Server, failure: ServerFailure, attempts: int, servers: int, deadline: float
    ) -> BackendError:
        """The error of a batch that is not tried again: unreachable when its last attempts reached no
        server, else a failure of that batch alone."""
        spread = f" on {servers} servers" if servers > 1 else ""
        if failure.unreachable:
            return server.client.error(
                BackendUnreachableError,
                f"{failure.what}; gave up after {attempts} attempts{spread}",
                failure.url,
            )
        spent = time.monotonic() - (deadline - self.settings.retry_seconds)
        gave_up = (
            f"{failure.what}; gave up after {attempts} attempts{spread} in {spent:.1f} s "
            f"(retry_seconds {self.settings.retry_seconds:g})"
        )
        return server.client.error(BackendError, gave_up, failure.url)

    # -- routing and benching ---------------------------------------------------------------------

    def _acquire(self, avoid: Server | None, retry_at: float) -> Server:
        """The server for the next attempt, counted in flight: an open one; when every server is
        benched, the first back once the batch's own backoff (``retry_at``) is over."""
        with self._changed:
            while True:
                now = time.monotonic()
                server = self._choose(now, avoid)
                if server is None and now >= retry_at:
                    server = self._first_back(now, avoid)
                if server is not None:
                    server.in_flight += 1
                    return server
                wakes = [s.benched_until for s in self.servers if s.benched_until > now]
                wakes += [s.asked_until for s in self.servers if s.asked_until > now]
                if retry_at > now:
                    wakes.append(retry_at)
                self._changed.wait(min(wakes) - now if wakes else None)

    def _next_attempt_at(self, retry_at: float) -> float:
        """When a batch that just failed is tried again: now when a server is open, else once its own
        backoff (``retry_at``) is over."""
        with self._changed:
            now = time.monotonic()
            return now if self._choose(now, None) is not None else retry_at

    def _choose(self, now: float, avoid: Server | None) -> Server | None:
        """The open server with the fewest batches in flight, preferring any to ``avoid`` (where the
        batch just failed); a server back from the bench is open for one batch while another is healthy."""
        ready = [server for server in self.servers if server.benched_until <= now]
        healthy = any(server.failures == 0 for server in ready)
        open_ = [server for server in ready if not healthy or server.failures == 0 or server.in_flight == 0]
        elsewhere = [server for server in open_ if server is not avoid]
        return min(elsewhere or open_, key=lambda server: (server.in_flight, server.order), default=None)

    def _first_back(self, now: float, avoid: Server | None) -> Server | None:
        """The benched server that will be back first, among those that asked for no longer wait;
        ``avoid`` (where the batch just failed) only if it is the only one."""
        allowed = [server for server in self.servers if server.asked_until <= now]
        elsewhere = [server for server in allowed if server is not avoid]
        return min(
            elsewhere or allowed, key=lambda server: (server.benched_until, server.order), default=None
        )

    def _release(self, server: Server, succeeded: bool) -> None:
        with self._changed:
            server.in_flight -= 1
            if succeeded:
                server.failures = 0
            self._changed.notify_all()

    def _failed(self, server: Server, sent: float, failure: ServerFailure, in_flight: bool) -> None:
        """Bench ``server`` after a failure of a request ``sent`` at that time. Failures of requests
        sent before the bench began belong to its round and do not lengthen it, unless the server
        asks for a longer wait."""
        with self._changed:
            if in_flight:
                server.in_flight -= 1
            now = time.monotonic()
            if sent >= server.benched_since:
                server.failures += 1
                server.benched_since = now
                wait = failure.wait if failure.wait is not None else server.client.backoff(server.failures)
                server.benched_until = now + wait
            elif failure.wait is not None:
                server.benched_until = max(server.benched_until, now + failure.wait)
            if failure.wait is not None:
                server.asked_until = max(server.asked_until, now + failure.wait)
            self._changed.notify_all()

    def _refuse_long_wait(self, server: Server, failure: ServerFailure) -> None:
        """A server that asks for a longer wait than ``max_retry_after`` stays benched that long; its
        batch fails at once unless another server will be back sooner."""
        limit = self.settings.max_retry_after
        if failure.wait is None or failure.wait <= limit:
            return
        with self._changed:
            now = time.monotonic()
            if any(other.benched_until - now <= limit for other in self.servers if other is not server):
                return
        raise server.client.error(
            BackendError,
            f"{failure.what}; the server asks to wait {failure.wait:g} s, longer than the {limit:g} s "
            "this client waits",
            failure.url,
        )

    # -- the same model everywhere ----------------------------------------------------------------

    def _check_same_model(self, server: Server, texts: list[str], vectors: Any, embed_on: EmbedOn) -> None:
        """Return once ``server`` is known to serve the reference's model; raise if it does not."""
        if server.checked or len(self.servers) == 1:  # a flag set once: read without the lock
            return
        mine = _first_vector(vectors, len(texts))
        if mine is None:
            return  # an answer the vector check refuses: the server is checked on a later batch
        with server.checking:
            if server.checked:
                return
            for judge in self._judges(server):
                sent = time.monotonic()
                try:
                    answer = embed_on(judge.client, texts[:1])
                except ServerFailure as failure:
                    self._failed(judge, sent, failure, in_flight=False)
                    continue
                self._check_width(judge, answer, 1)  # a judge whose model changed is named, not ``server``
                _compare(server.client, judge.client, mine, _first_vector(answer, 1))
                self._mark_checked(server, judge)
                return
            if not self._claim_reference(server):
                raise ServerFailure(
                    "cannot be checked against the servers already in use: none of them answers now",
                    server.client.base_url,
                )

    def _check_width(self, server: Server, vectors: Any, count: int) -> None:
        """Raise when ``server``, one of several, answers with vectors of another length than the
        servers gave so far: its model changed since it was checked."""
        if len(self.servers) == 1:
            return
        width = _width(vectors, count)
        if width is None:
            return  # an answer the vector check refuses
        with self._changed:
            if self.width is None:
                self.width = width
            expected = self.width
        if width != expected:
            raise server.client.error(
                BackendUnreachableError,
                f"serves another model than the other servers: it now gives {width}-dimension vectors, "
                f"where they gave {expected}-dimension ones; every server of a backend must serve the "
                "same model",
            )

    def _judges(self, server: Server) -> list[Server]:
        """Who may tell whether ``server`` serves the right model: the checked servers that are not
        benched; before any is checked, the servers listed before it (the first to answer decides)."""
        with self._changed:
            now = time.monotonic()
            ready = [other for other in self.servers if other is not server and other.benched_until <= now]
            if any(other.checked for other in self.servers):
                return [other for other in ready if other.checked]
            return [other for other in ready if other.order < server.order]

    def _claim_reference(self, server: Server) -> bool:
        """Make ``server`` the reference if no server is checked yet."""
        with self._changed:
            if any(other.checked for other in self.servers):
                return False
            server.checked = True
            return True

    def _mark_checked(self, *servers: Server) -> None:
        """Servers that just answered the same text alike: checked, and healthy."""
        with self._changed:
            for server in servers:
                server.checked = True
                server.failures = 0
            self._changed.notify_all()


def _first_vector(vectors: Any, count: int) -> np.ndarray | None:
    """The first of ``count`` vectors as float64, or None when the answer is not one vector per text
    of finite numbers (the pipeline's vector check says what is wrong with it)."""
    try:
        if len(vectors) != count:
            return None
        first = np.asarray(vectors[0], dtype=np.float64)
    except (TypeError, ValueError):
        return None
    if first.ndim != 1 or not first.size or not np.isfinite(first).all() or not first.any():
        return None
    return first


def _width(vectors: Any, count: int) -> int | None:
    """The length of the first of ``count`` vectors, or None when the answer is not one per text."""
    try:
        return len(vectors[0]) if count and len(vectors) == count else None
    except (TypeError, IndexError, KeyError):
        return None


def _compare(client: HttpClient, judge: HttpClient, mine: np.ndarray, theirs: np.ndarray | None) -> None:
    """Raise unless ``mine`` (from ``client``) and ``theirs`` (the same text from ``judge``) agree."""
    if theirs is None:
        raise judge.error(BackendError, "answered the same-model check without a usable vector")
    if mine.shape != theirs.shape:
        what = f"it gives {mine.size}-dimension vectors, {judge.base_url} {theirs.size}-dimension ones"
    else:
        cosine = float(mine @ theirs / (np.linalg.norm(mine) * np.linalg.norm(theirs)))
        if cosine >= SAME_MODEL_COSINE:
            return
        what = (
            f"for the same text, its vector and the one from {judge.base_url} have a cosine of {cosine:.4f} "
            f"(at least {SAME_MODEL_COSINE} expected)"
        )
    raise client.error(
        BackendUnreachableError,
        f"serves another model than the other servers: {what}; every server of a backend must serve "
        "the same model",
    )
