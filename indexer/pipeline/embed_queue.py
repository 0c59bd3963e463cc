"""The texts of a build on their way to vectors: which are known, waiting, in flight or failed.

One object owns every text hash's state, so the rules hold in one place: a text is embedded at most
once per build however many files hold it; a batch is sent only when full (or at the end); no more
than ``concurrency`` batches are in flight; a vector stays in memory only while a file waiting to be
written still needs it (once written, the index is where re-use finds it).
"""

from __future__ import annotations

import queue
from collections.abc import Callable, Iterable
from concurrent.futures import Executor, Future
from dataclasses import dataclass
from itertools import islice
from typing import Any


@dataclass(frozen=True)
class Batch:
    """Texts sent together to the backend; ``number`` names it in messages (halves keep it)."""

    number: int
    hashes: list[str]
    texts: list[str]

    def halves(self) -> list[Batch]:
        middle = len(self.texts) // 2
        return [
            Batch(self.number, self.hashes[:middle], self.texts[:middle]),
            Batch(self.number, self.hashes[middle:], self.texts[middle:]),
        ]


class EmbedQueue:
    """Text-hash state and the window of batches in flight on ``pool``.

    ``embed`` runs on the pool's threads with a batch's texts; what it returns (or raises) comes back
    from :meth:`finished` with the batch, for the caller to check and :meth:`accept` or :meth:`refuse`.
    """

    def __init__(
        self, pool: Executor, embed: Callable[[list[str]], Any], batch_size: int, concurrency: int
    ) -> None:
        self.pool = pool
        self.embed = embed
        self.batch_size = batch_size
        self.concurrency = concurrency
        self.batches_sent = 0
        self.texts_wanted = 0  # texts queued by this build, for progress
        self.texts_embedded = 0
        self._vectors: dict[str, bytes] = {}  # text hash -> float32 blob
        self._fresh: set[str] = set()  # embedded by this build, not yet claimed by a written file
        self._failed: dict[str, str] = {}  # text hash -> why its batch failed
        self._waiting: dict[str, str] = {}  # text hash -> text, not yet sent
        self._in_flight: dict[Future, Batch] = {}
        #: futures of the batches in flight, put here by the pool's thread as each one ends: the build
        #: takes the answers in without registering a waiter on every future in flight each time
        #: (None: a wake-up, see :meth:`wake`)
        self._done: queue.SimpleQueue[Future | None] = queue.SimpleQueue()
        self._sent: set[str] = set()  # hashes of the batches in flight

    # -- what a file asks -------------------------------------------------------------------------

    def unknown(self, hashes: Iterable[str]) -> list[str]:
        """The hashes that have no vector yet and are neither waiting nor in flight."""
        return [h for h in dict.fromkeys(hashes) if h not in self._vectors and not self._pending(h)]

    def remember(self, vectors: dict[str, bytes]) -> None:
        """Vectors found in the index: re-used, not embedded."""
        self._vectors.update(vectors)

    def want(self, hashes: Iterable[str], texts: Iterable[str]) -> None:
        """Queue the texts that have no vector and are not on their way (a failed text is tried again)."""
        for text_hash, text in zip(hashes, texts, strict=True):
            if text_hash not in self._vectors and not self._pending(text_hash):
                self._failed.pop(text_hash, None)
                self._waiting[text_hash] = text
                self.texts_wanted += 1

    def vector(self, text_hash: str) -> bytes | None:
        return self._vectors.get(text_hash)

    def failure(self, text_hash: str) -> str | None:
        return self._failed.get(text_hash)

    def claim(self, text_hash: str) -> bool:
        """True the first time a written file uses a vector this build embedded (it counts as
        embedded); False for a vector re-used from the index or from an earlier file."""
        if text_hash in self._fresh:
            self._fresh.discard(text_hash)
            return True
        return False

    def _pending(self, text_hash: str) -> bool:
        return text_hash in self._waiting or text_hash in self._sent

    # -- batches ----------------------------------------------------------------------------------

    @property
    def waiting(self) -> int:
        return len(self._waiting)

    @property
    def in_flight(self) -> int:
        return len(self._in_flight)

    def has_room(self) -> bool:
        return len(self._in_flight) < self.concurrency

    def next_batch(self, final: bool = False) -> Batch | None:
        """The next batch to send: ``batch_size`` waiting texts, or fewer when ``final``; None when
        there are not enough."""
        if not self._waiting or (not final and len(self._waiting) < self.batch_size):
            return None
        hashes = list(islice(self._waiting, self.batch_size))
        self.batches_sent += 1
        return Batch(self.batches_sent, hashes, [self._waiting.pop(h) for h in hashes])

    def send(self, batch: Batch) -> None:
        """Put a batch in flight (a new one, or the half of one the server found too long)."""
        self._sent.update(batch.hashes)
        future = self.pool.submit(self.embed, batch.texts)
        self._in_flight[future] = batch
        future.add_done_callback(self._done.put)

    def finished(self, block: bool, timeout: float | None = None) -> list[tuple[Batch, Future]]:
        """Batches whose answer is in (when ``block``, waiting for at least one, or ``timeout`` seconds)."""
        if not self._in_flight:
            return []
        try:
            done = [self._done.get(timeout=timeout) if block else self._done.get_nowait()]
        except queue.Empty:
            return []
        while not self._done.empty():
            done.append(self._done.get_nowait())
        batches = []
        for future in filter(None, done):
            batch = self._in_flight.pop(future)
            self._sent.difference_update(batch.hashes)
            batches.append((batch, future))
        return batches

    def wake(self) -> None:
        """Wake a :meth:`finished` that waits: something else the build waits for came in (a file
        read by a worker process). Safe from any thread."""
        self._done.put(None)

    def accept(self, batch: Batch, vectors: Iterable[bytes]) -> None:
        """Keep a checked batch's vectors."""
        for text_hash, vector in zip(batch.hashes, vectors, strict=True):
            self._vectors[text_hash] = vector
            self._fresh.add(text_hash)
        self.texts_embedded += len(batch.hashes)

    def refuse(self, hashes: Iterable[str], reason: str) -> None:
        """Mark texts as failed: the files holding them keep their previous version."""
        for text_hash in hashes:
            self._failed[text_hash] = reason

    def stop(self, reason: str) -> None:
        """Send nothing more: every waiting text fails with ``reason``."""
        self.refuse(self._waiting, reason)
        self._waiting.clear()

    def forget(self, keep: set[str]) -> None:
        """Drop the vectors no waiting file needs (written ones are in the index now)."""
        self._vectors = {h: blob for h, blob in self._vectors.items() if h in keep}
