"""How far a long step has come, for whoever watches it: a bar on a terminal; in a log or a CI job,
one line at most every 30 seconds once the step has run that long; nothing when quiet.

Used by the build (chunks embedded, files done, time left) and by ``index eval`` (documents embedded,
queries scored). Warnings go through :meth:`Progress.write`, so they print above the bar rather than
into it.
"""

from __future__ import annotations

import posixpath
import sys
import time
from collections import Counter
from collections.abc import Iterable
from typing import IO, Any

#: A step that ends sooner says nothing; a longer one says where it is at most this often.
QUIET_SECONDS = 30.0


class Progress:
    """Reports one step at a time (:meth:`start`, :meth:`update`, :meth:`finish`).

    ``terminal`` (default: whether ``stream`` is a terminal) chooses the bar; otherwise lines.
    """

    def __init__(
        self, stream: IO[str] | None = None, terminal: bool | None = None, interval: float = QUIET_SECONDS
    ) -> None:
        self.stream = stream or sys.stderr
        self.terminal = self.stream.isatty() if terminal is None else terminal
        self.interval = interval
        self._bar: Any = None
        self._what = ""
        self._unit = ""
        self._started = time.monotonic()
        self._last_line = 0.0

    def start(self, what: str, unit: str) -> None:
        """A new step: ``what`` names it (``indexing``), ``unit`` counts it (``chunks``)."""
        self.finish()
        self._what, self._unit = what, unit
        self._started = self._last_line = time.monotonic()
        if self.terminal:
            from tqdm import tqdm

            self._bar = tqdm(total=None, unit=f" {unit}", file=self.stream, leave=False, desc=what)

    def update(self, done: int, total: int | None, detail: str = "") -> None:
        """``done`` of ``total`` (None: unknown yet) units, with ``detail`` (``120 of 480 files``)."""
        if self._bar is not None:
            if total is not None and total != self._bar.total:
                self._bar.total = total
            self._bar.n = done
            self._bar.set_postfix_str(detail, refresh=False)
            self._bar.refresh()
            return
        now = time.monotonic()
        if now - self._started >= self.interval and now - self._last_line >= self.interval:
            self._last_line = now
            print(self.line(done, total, detail, now - self._started), file=self.stream, flush=True)

    def line(self, done: int, total: int | None, detail: str, elapsed: float) -> str:
        """``indexing: 1,234 of ~5,000 chunks embedded, 120 of 480 files done, 2 min 10 s so far, about 3 min
        left``."""
        parts = [f"{done:,} of ~{total:,} {self._unit}" if total else f"{done:,} {self._unit}"]
        if detail:
            parts.append(detail)
        parts.append(f"{duration(elapsed)} so far")
        if total and 0 < done < total:
            parts.append(f"about {duration(elapsed * (total - done) / done)} left")
        return f"{self._what}: " + ", ".join(parts)

    def write(self, line: str) -> None:
        """A line for the reader (a warning), above the bar when there is one."""
        if self._bar is not None:
            self._bar.write(line, file=self.stream)
        else:
            print(line, file=self.stream, flush=True)

    def finish(self) -> None:
        if self._bar is not None:
            self._bar.close()
            self._bar = None


class ChunkEstimate:
    """How many chunks a build will embed, judged from the files it has read so far: for each kind of
    file (its extension), the chunks per byte of those read, times the bytes of that kind to read; a
    kind not read yet goes at the rate of every file read.

    Bytes rather than files, since files differ in size far more than in chunks per byte (counting
    files, a folder whose big files came last showed ~4,232 chunks of 12,708); kinds apart, since an
    HTML page's markup or a PDF's structure gives fewer chunks per byte than plain text does. Exact
    once every file is read.
    """

    def __init__(self, files: Iterable[tuple[str, int]]) -> None:
        """``files``: (path, size) of each file the build will read."""
        self.to_read: Counter[str] = Counter()
        for path, size in files:
            self.to_read[_kind(path)] += size
        self.bytes_read: Counter[str] = Counter()
        self.chunks: Counter[str] = Counter()

    def read(self, path: str, size: int, chunks: int) -> None:
        """A file was read: ``size`` bytes gave ``chunks`` to embed."""
        self.bytes_read[_kind(path)] += size
        self.chunks[_kind(path)] += chunks

    def total(self) -> int | None:
        """The chunks to embed in all, or None before any file is read."""
        read = sum(self.bytes_read.values())
        if not read:
            return None
        overall = sum(self.chunks.values()) / read
        return round(
            sum(
                size * (self.chunks[kind] / self.bytes_read[kind] if self.bytes_read[kind] else overall)
                for kind, size in self.to_read.items()
            )
        )


def _kind(path: str) -> str:
    return posixpath.splitext(path)[1].lower()


def duration(seconds: float) -> str:
    """``0.06 s``, ``3.3 s``, ``45 s``, ``3 min 20 s``, ``2 h 5 min``."""
    if seconds < 1:
        return f"{seconds:.2f} s"
    if seconds < 10:
        return f"{seconds:.1f} s"
    seconds = int(round(seconds))
    if seconds < 60:
        return f"{seconds} s"
    if seconds < 3600:
        return f"{seconds // 60} min {seconds % 60} s"
    return f"{seconds // 3600} h {seconds % 3600 // 60} min"
