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
* Every server is held to one model, told by the vector it gives a short probe text
  (:data:`PROBE_TEXT`): two vectors of it with a cosine under :data:`SAME_MODEL_COSINE` come from two
  models. The reference is the index's own (the probe it recorded, :class:`ModelProbe`), else the
  first listed server's that answers. No answer of a server is used before its probe matched: at its
  first answer, and again at its first answer after a connection to it failed, broke or timed out
  (the server may be another process now). Before the pipeline stores vectors it calls
  :meth:`ServerPool.confirm`, which probes again each server that answered since its last probe: a
  server whose model changed while it kept answering is caught there, before anything it gave since
  is stored (a model does not change back by itself, so a probe that matches vouches for every
  answer the server gave before it). A server that disagrees is named in a
  :class:`BackendUnreachableError`: like a server without the model, it stops the build (exit 4).
  When no server serves the index's model any more (the model behind its name changed), that is a
  :class:`SettingsChangedError`, as another dimension is: the index must be rebuilt. A server that
  cannot be probed again at :meth:`~ServerPool.confirm` (gone since it answered) is probed before
  its next answer is used. A lone server is probed only once a build holds the pool to a model
  (:meth:`ServerPool.hold_to`): a question asked of it costs no second request.
* Several servers are also held to the length of the vectors they gave: one that answers with
  another length (its model swapped underneath the build) is named and stops the build at its first
  such answer.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from indexer.backends.base import ModelProbe
from indexer.backends.http import HttpClient, HttpSettings, ServerFailure
from indexer.errors import BackendError, BackendUnreachableError, SettingsChangedError

#: Embeds texts on one server: the backend's request and the reading of its answer.
EmbedOn = Callable[[HttpClient, list[str]], Any]

#: How alike two servers' vectors of one text must be to count as the same model: two different models
#: (or one with other options) are far below it, the same weights on other hardware far above.
SAME_MODEL_COSINE = 0.999
#: Where the reference comes from when the index recorded it (else from a server, named by its URL).
INDEX = "the index"
#: The text every server embeds to show which model it serves: a few tokens each check.
PROBE_TEXT = "Which model answers? One sentence that every server of one model embeds alike."


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
    #: Its probe matched the reference since it was last (re)connected: its answers may be used.
    checked: bool = False
    #: It gave vectors since its last probe: :meth:`ServerPool.confirm` probes it again.
    answered: bool = False
    #: Its probe matched the reference once in this build: a later mismatch is a switch of models.
    served: bool = False
    #: Held while this server is being probed, so that it is probed once at a time.
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
        self.probe_text = PROBE_TEXT
        #: The probe's vector every server must give; from the index, else the first listed server.
        self.reference: np.ndarray | None = None
        #: Who gave the reference, for messages: :data:`INDEX` or a server's URL.
        self.reference_from = ""
        #: Whether some server gave the reference's vector in this build.
        self.reference_served = False
        #: Held to a model by a build (:meth:`hold_to`): a lone server is probed too, not only
        #: several servers against each other (a lone server answering questions is not).
        self.holding = False
        self._referencing = threading.Lock()

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
                self._check_width(server, vectors, len(texts))
                if _usable(vectors, len(texts)):  # else the pipeline's vector check refuses it
                    self._check_model(server, embed_on)
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
                server.answered = True
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
            if not failure.answered:  # it may come back as another process: probed again first
                server.checked = False
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

    # -- one model, the index's ----------------------------------------------------------------

    def hold_to(self, probe: ModelProbe | None) -> None:
        """Hold every server to the model that gave ``probe`` (the index's); None: to the first
        listed server's. Each server is probed again before its next answer is used."""
        with self._changed:
            self.probe_text = probe.text if probe is not None else PROBE_TEXT
            self.reference = None if probe is None else np.frombuffer(probe.vector, "<f4").astype(np.float64)
            self.reference_from = INDEX if probe is not None else ""
            self.reference_served = False
            self.holding = True
            for server in self.servers:
                server.checked = server.answered = server.served = False

    def model_probe(self) -> ModelProbe | None:
        """The probe every server is held to, as the index records it (None before any answered)."""
        reference = self.reference
        if reference is None:
            return None
        return ModelProbe(self.probe_text, reference.astype("<f4").tobytes())

    def confirm(self, embed_on: EmbedOn) -> None:
        """Probe again each server that gave vectors since its last probe: raise if one now serves
        another model, so that nothing it gave since is stored."""
        with self._changed:
            due = [server for server in self.servers if server.answered]
            for server in due:
                server.answered = False
        for server in due:
            with server.checking:
                try:
                    mine = self._probe(server, embed_on)
                except ServerFailure:
                    continue  # gone since it answered (so unchecked): probed before its next answer
                self._judge(server, mine, embed_on)

    def _check_model(self, server: Server, embed_on: EmbedOn) -> None:
        """Return once ``server``'s probe matched the reference since it was last (re)connected."""
        if server.checked or (len(self.servers) == 1 and not self.holding):  # flags: read without the lock
            return
        with server.checking:
            if server.checked:
                return
            mine = self._probe(server, embed_on)
            self._set_reference(server, mine, embed_on)
            self._judge(server, mine, embed_on)
            with self._changed:
                server.checked = True
                server.failures = 0
                self._changed.notify_all()

    def _probe(self, server: Server, embed_on: EmbedOn) -> np.ndarray:
        """The probe's vector from ``server``, asked again (after the server's backoff or the wait it
        asks for) up to ``max_attempts`` times after failures that waiting may cure."""
        attempts = self.settings.max_attempts
        for attempt in range(1, attempts + 1):
            sent = time.monotonic()
            try:
                answer = embed_on(server.client, [self.probe_text])
            except ServerFailure as failure:
                self._failed(server, sent, failure, in_flight=False)
                if attempt == attempts:
                    raise
                wait = failure.wait if failure.wait is not None else server.client.backoff(attempt)
                time.sleep(min(wait, self.settings.retry_max_delay))
                continue
            vector = _first_vector(answer, 1)
            if vector is None:
                raise server.client.error(BackendError, "answered the model check without a usable vector")
            return vector
        raise AssertionError("unreachable: the last attempt returns or raises")

    def _set_reference(self, server: Server, mine: np.ndarray, embed_on: EmbedOn) -> None:
        """When no reference is set yet: the probe of the first listed server that answers it (a
        server listed before ``server``, else ``server`` itself)."""
        with self._referencing:
            if self.reference is not None:
                return
            for judge in self._listed_before(server):
                theirs = self._probe_once(judge, embed_on)
                if theirs is not None:
                    self.reference, self.reference_from = theirs, judge.client.base_url
                    return
            self.reference, self.reference_from = mine, server.client.base_url

    def _judge(self, server: Server, mine: np.ndarray, embed_on: EmbedOn) -> None:
        """Return when ``mine`` is the reference's vector of the probe; raise naming ``server`` when
        not, or, when no server serves the index's model any more, say that the model changed."""
        reference, source = self.reference, self.reference_from
        assert reference is not None  # set before any server is judged
        if _alike(mine, reference):
            with self._changed:
                server.served = self.reference_served = True
            return
        what = _difference(mine, reference, source)
        if source == INDEX and not self.reference_served and not server.served:
            if not any(_alike(theirs, reference) for theirs in self._others_probes(server, embed_on)):
                raise SettingsChangedError(
                    f"the backend no longer serves the index's model: {what}",
                    _setting_changed(mine, reference),
                )
        if server.served:
            said = f"switched models during the build: {what}"
        elif source == INDEX:
            said = f"serves another model than the index was built with: {what}"
        else:
            said = f"serves another model than the other servers: {what}"
        raise server.client.error(
            BackendUnreachableError, f"{said}; every server of a backend must serve the same model"
        )

    def _others_probes(self, server: Server, embed_on: EmbedOn) -> list[np.ndarray]:
        """The probes of the other servers that answer one (when ``server`` disagrees with the
        index: if another agrees, ``server`` is the odd one, not the index's model gone)."""
        with self._changed:
            now = time.monotonic()
            others = [other for other in self.servers if other is not server and other.benched_until <= now]
        probes = [self._probe_once(other, embed_on) for other in others]
        return [probe for probe in probes if probe is not None]

    def _probe_once(self, server: Server, embed_on: EmbedOn) -> np.ndarray | None:
        """The probe's vector from ``server`` in one attempt; None (and the server benched) when it fails."""
        sent = time.monotonic()
        try:
            return _first_vector(embed_on(server.client, [self.probe_text]), 1)
        except ServerFailure as failure:
            self._failed(server, sent, failure, in_flight=False)
            return None

    def _listed_before(self, server: Server) -> list[Server]:
        with self._changed:
            now = time.monotonic()
            return [
                other for other in self.servers if other.order < server.order and other.benched_until <= now
            ]

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


def _usable(vectors: Any, count: int) -> bool:
    """One vector per text, all of one length, the first of finite numbers: an answer whose model
    is worth checking (the pipeline's vector check judges the rest)."""
    first = _first_vector(vectors, count)
    try:
        return first is not None and all(len(vector) == first.size for vector in vectors)
    except TypeError:
        return False


def _width(vectors: Any, count: int) -> int | None:
    """The length of the first of ``count`` vectors, or None when the answer is not one per text."""
    try:
        return len(vectors[0]) if count and len(vectors) == count else None
    except (TypeError, IndexError, KeyError):
        return None


def _alike(mine: np.ndarray, theirs: np.ndarray) -> bool:
    """Two vectors of one text from the same model: the same length and a cosine of at least
    :data:`SAME_MODEL_COSINE`."""
    return mine.shape == theirs.shape and _cosine(mine, theirs) >= SAME_MODEL_COSINE


def _difference(mine: np.ndarray, reference: np.ndarray, source: str) -> str:
    """How a server's vector of the probe differs from the one ``source`` gave, for a message."""
    if mine.shape != reference.shape:
        return f"it gives {mine.size}-dimension vectors, {source} {reference.size}-dimension ones"
    return (
        f"for the same text, its vector and the one from {source} have a cosine of "
        f"{_cosine(mine, reference):.4f} (at least {SAME_MODEL_COSINE} expected)"
    )


def _setting_changed(mine: np.ndarray, reference: np.ndarray) -> str:
    """What changed, as the settings-differ message lists it (``dimension: 384 -> 768``)."""
    if mine.shape != reference.shape:
        return f"dimension: {reference.size} -> {mine.size}"
    return f"model: the same name gives other vectors (a cosine of {_cosine(mine, reference):.4f})"


def _cosine(mine: np.ndarray, theirs: np.ndarray) -> float:
    return float(mine @ theirs / (np.linalg.norm(mine) * np.linalg.norm(theirs)))
