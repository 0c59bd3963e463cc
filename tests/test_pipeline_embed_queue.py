"""The embed queue on its own: each text embedded once, full batches, a bounded window in flight."""

from __future__ import annotations

import threading
import time
from concurrent.futures import ThreadPoolExecutor

from indexer.pipeline.embed_queue import EmbedQueue


class Recorder:
    """An embed function that records its batches and how many ran at once."""

    def __init__(self, seconds: float = 0.0) -> None:
        self.seconds = seconds
        self.batches: list[list[str]] = []
        self.running = 0
        self.most_at_once = 0
        self.lock = threading.Lock()

    def __call__(self, texts: list[str]) -> list[bytes]:
        with self.lock:
            self.batches.append(texts)
            self.running += 1
            self.most_at_once = max(self.most_at_once, self.running)
        time.sleep(self.seconds)
        with self.lock:
            self.running -= 1
        return [text.encode() for text in texts]


def drain(queue: EmbedQueue) -> None:
    """Send everything (a last short batch included), accepting answers as they come."""
    while queue.waiting or queue.in_flight:
        while queue.has_room() and (batch := queue.next_batch(final=True)):
            queue.send(batch)
        for batch, future in queue.finished(block=True):
            queue.accept(batch, future.result())


def test_a_text_wanted_by_several_files_is_embedded_once_in_full_batches():
    embed = Recorder()
    with ThreadPoolExecutor(2) as pool:
        queue = EmbedQueue(pool, embed, batch_size=4, concurrency=2)
        hashes = [f"h{n}" for n in range(10)]
        queue.want(hashes, [f"text {n}" for n in range(10)])
        queue.want(hashes[:5], [f"text {n}" for n in range(5)])  # a second file with the same texts
        assert queue.waiting == 10
        assert queue.next_batch() is not None
        assert queue.waiting == 6
        drain_from = queue.next_batch()
        assert drain_from is not None
        assert queue.waiting == 2
        assert queue.next_batch() is None  # two left: not a full batch until the end
        queue.send(drain_from)
        drain(queue)
    assert sorted(text for batch in embed.batches for text in batch) == sorted(
        f"text {n}" for n in range(4, 10)
    )
    assert queue.vector("h9") == b"text 9"
    assert queue.unknown(hashes) == hashes[:4]


def test_never_more_batches_in_flight_than_the_window():
    embed = Recorder(seconds=0.05)
    with ThreadPoolExecutor(8) as pool:
        queue = EmbedQueue(pool, embed, batch_size=2, concurrency=3)
        queue.want([f"h{n}" for n in range(40)], [f"t{n}" for n in range(40)])
        drain(queue)
    assert embed.most_at_once == 3
    assert len(embed.batches) == 20


def test_a_vector_counts_as_embedded_for_its_first_file_only():
    with ThreadPoolExecutor(1) as pool:
        queue = EmbedQueue(pool, Recorder(), batch_size=2, concurrency=1)
        queue.remember({"stored": b"from the index"})
        queue.want(["stored", "new"], ["s", "n"])
        drain(queue)
    assert (queue.claim("new"), queue.claim("new"), queue.claim("stored")) == (True, False, False)


def test_refused_texts_fail_their_files_and_are_tried_again_when_wanted_again():
    with ThreadPoolExecutor(1) as pool:
        queue = EmbedQueue(pool, Recorder(), batch_size=2, concurrency=1)
        queue.want(["a", "b"], ["A", "B"])
        batch = queue.next_batch()
        queue.send(batch)
        [(finished, _)] = queue.finished(block=True)
        queue.refuse(finished.hashes, "batch 1 refused: bad answer")
        assert queue.failure("a") == "batch 1 refused: bad answer"
        assert queue.vector("a") is None
        queue.want(["a"], ["A"])
        assert queue.failure("a") is None
        assert queue.waiting == 1


def test_a_stop_fails_what_waits_and_forget_keeps_only_what_files_need():
    with ThreadPoolExecutor(1) as pool:
        queue = EmbedQueue(pool, Recorder(), batch_size=2, concurrency=1)
        queue.want(["a", "b", "c"], ["A", "B", "C"])
        queue.send(queue.next_batch())
        drain_first = queue.finished(block=True)
        for batch, future in drain_first:
            queue.accept(batch, future.result())
        queue.stop("backend unreachable")
        assert queue.waiting == 0
        assert queue.failure("c") == "backend unreachable"
        queue.forget({"a"})
    assert queue.vector("a") == b"A"
    assert queue.vector("b") is None
