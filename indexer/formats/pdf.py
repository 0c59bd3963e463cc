"""PDF: the text layer, page by page, through pypdfium2 (PDFium, the PDF engine of Chromium).

Why pypdfium2 rather than pypdf: on two real manuals found on this machine (libtasn1's, 36 pages, and
the shared-mime-info spec, 17 pages) both gave the same text, line for line, but pypdf took 1.12 s
and 0.32 s where PDFium took 0.06 s and 0.03 s: at pypdf's speed a folder of PDFs would make the
build's reading stage the slowest part of it. pypdfium2 ships PDFium inside its wheels (no system
library, no compiler).

Each page is a :class:`Part`, so a hit is cited as ``manual.pdf:page 3``. Headings come from the
PDF's outline (bookmarks) when it has one: each entry starts a section at the line of its page that
carries its title, else at the top of its page. A PDF without any text (a scan with no OCR layer) is
skipped with a message saying so.

PDFium runs in a worker process (:mod:`indexer.formats.pdf_worker`) with its memory capped at
:data:`MEMORY_LIMIT`, the text it gives capped as every document's is (``MAX_TEXT_CHARS``,
``MAX_LINES``) and a time budget of
:data:`READ_SECONDS` per file: a PDF that inflates without bound, loops or crashes PDFium fails that
one file, and the build's own memory stays what its other files need. One worker serves every PDF of
a process, started by the first one.
"""

from __future__ import annotations

import atexit
import importlib.util
import json
import os
import re
import selectors
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from typing import IO

from indexer.formats import pdf_worker
from indexer.formats.document import MAX_LINES, MAX_TEXT_CHARS, Document, Heading, Part, UnreadableFile
from indexer.sizes import format_size

TITLE_SLACK = 12  # a line may carry this many characters beyond an outline title (numbers, dots)
#: The address space the PDF worker may take: PDFium with a large document open, and the text of it.
MEMORY_LIMIT = 512 * 1024 * 1024
#: How long one PDF may take to read: a manual of thousands of pages takes seconds.
READ_SECONDS = 300.0
#: How PDFium reports a hyphen it takes for a soft one (a word broken across lines), by version.
SOFT_HYPHENS = "\ufffe\u0002\u00ad"
#: Characters no reader sees: the replacement character, noncharacters, C0 and C1 controls but tab
#: and newline.
UNSEEN = dict.fromkeys(
    [
        0xFFFD,
        *range(0xFDD0, 0xFDF0),
        *(plane + end for plane in range(0, 0x110000, 0x10000) for end in (0xFFFE, 0xFFFF)),
    ]
    + [code for code in [*range(0x20), *range(0x7F, 0xA0)] if chr(code) not in "\t\n"]
)
_SOFT_BREAK = re.compile("[" + SOFT_HYPHENS + "][ \t]*\n[ \t]*")
#: A running header or footer is a line at the top or bottom of this share of the pages, or more.
RUNNING_SHARE = 0.5
RUNNING_DEPTH = 2  # lines from the top and from the bottom of a page where they are looked for
_DIGITS = re.compile(r"\d+")


def read_pdf(data: bytes) -> Document:
    """The text of every page with a text layer, each page a part, headings from the outline."""
    answer = _WORKER.read(data)
    if "error" in answer:
        raise UnreadableFile(answer["error"], status=answer["status"])
    pages = without_running_lines([_cleaned(page) for page in answer["pages"]])
    outline = [(level, title, index) for level, title, index in answer["outline"]]
    lines: list[str] = []
    parts: list[Part] = []
    for number, page in enumerate(pages, 1):
        if any(line.strip() for line in page):
            parts.append(Part("page", number, len(lines) + 1, len(lines) + len(page)))
            lines.extend(page)
    if not lines:
        raise UnreadableFile("no text layer (a scanned PDF without OCR?)", status="no-text")
    return Document(lines=lines, headings=_outline_headings(outline, parts, lines), parts=parts)


def _cleaned(page: list[str]) -> list[str]:
    """A page's lines as the worker read them, cleaned as :func:`clean_page_text` says."""
    return [line.rstrip() for line in clean_page_text("\n".join(page)).split("\n")]


def clean_page_text(text: str) -> str:
    """A page's text as a reader sees it: one kind of line break, a word broken by a soft hyphen at
    a line's end joined into one word on one line, other soft hyphens and every character no reader
    sees removed."""
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    text = _SOFT_BREAK.sub("", text)
    return text.translate({**UNSEEN, **dict.fromkeys(map(ord, SOFT_HYPHENS))})


def without_running_lines(pages: list[list[str]]) -> list[list[str]]:
    """Pages without their running headers and footers: a line among the first or last
    RUNNING_DEPTH non-blank lines of at least RUNNING_SHARE of the pages (digits ignored, so
    'Page 3 of 40' is one line), on documents of three pages or more."""
    if len(pages) < 3:
        return pages
    counts: Counter[str] = Counter()
    for page in pages:
        counts.update({_running_key(line) for line in _edges(page)})
    running = {key for key, count in counts.items() if key and count >= RUNNING_SHARE * len(pages)}
    if not running:
        return pages
    return [
        ["" if line in edges and _running_key(line) in running else line for line in page]
        for page, edges in ((page, set(_edges(page))) for page in pages)
    ]


def _edges(page: list[str]) -> list[str]:
    """The first and last RUNNING_DEPTH lines of a page with text, on a page with a body between them
    (else its first and last line)."""
    filled = [line for line in page if line.strip()]
    depth = RUNNING_DEPTH if len(filled) > 3 * RUNNING_DEPTH else 1
    return filled[:depth] + filled[-depth:]


def _running_key(line: str) -> str:
    return " ".join(_DIGITS.sub("#", line).split()).casefold()


class PdfWorker:
    """The worker process, started when first needed and again after one failed; one PDF at a time."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._process: subprocess.Popen[bytes] | None = None
        self._errors: IO[bytes] | None = None  # the worker's stderr, for the last words of one that died

    def read(self, data: bytes) -> dict:
        """The worker's answer for one PDF; a worker that dies or overruns is stopped, and the file
        refused as damaged."""
        with self._lock:
            process = self._process = self._process or self._start()
            try:
                return self._exchange(process, data)
            except _WorkerFailed as failure:
                self.stop()
                raise UnreadableFile(str(failure), status="damaged") from None

    def stop(self) -> None:
        process, self._process = self._process, None
        if process is not None:
            process.kill()
            process.wait()
            for stream in (process.stdin, process.stdout, self._errors):
                if stream is not None:
                    stream.close()

    def close(self) -> None:
        """End the worker as a process exits: its input closed, it ends by itself."""
        process, self._process = self._process, None
        if process is not None and process.stdin is not None:
            process.stdin.close()
            try:
                process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                process.kill()

    def _start(self) -> subprocess.Popen[bytes]:
        # isolated mode (-I): neither the working folder nor the user's environment can put modules
        # in its way; it is told where pypdfium2 is, as this process would import it
        paths = sorted({_package_folder(name) for name in ("pypdfium2", "pypdfium2_raw")} - {""})
        caps = [str(MEMORY_LIMIT), str(MAX_TEXT_CHARS), str(MAX_LINES)]
        command = [sys.executable, "-I", pdf_worker.__file__, *caps, *paths]
        # its stderr goes to a file, not the user's terminal or --json log: its last line says why
        # a worker died
        self._errors = tempfile.TemporaryFile()
        return subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self._errors)

    def _exchange(self, process: subprocess.Popen[bytes], data: bytes) -> dict:
        assert process.stdin is not None and process.stdout is not None
        try:
            process.stdin.write(pdf_worker.LENGTH.pack(len(data)))
            process.stdin.write(data)
            process.stdin.flush()
        except (BrokenPipeError, ConnectionResetError):
            raise _WorkerFailed(self._death(process)) from None
        deadline = time.monotonic() + READ_SECONDS
        header = self._read_exactly(process, pdf_worker.LENGTH.size, deadline)
        answer = self._read_exactly(process, pdf_worker.LENGTH.unpack(header)[0], deadline)
        return json.loads(answer.decode("utf-8", "surrogatepass"))

    def _death(self, process: subprocess.Popen[bytes]) -> str:
        """Why the worker stopped: the signal or exit code, and the last line it wrote, if any."""
        try:
            code = process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            code = None
        how = f"signal {-code}" if code is not None and code < 0 else f"exit code {code}"
        said = ""
        if self._errors is not None:
            self._errors.seek(0)
            lines = self._errors.read()[-2000:].decode("utf-8", "replace").strip().splitlines()
            said = f"; it said: {lines[-1].strip()[:200]}" if lines else ""
        return (
            f"the PDF reader stopped ({how}{said}): it ran out of its {format_size(MEMORY_LIMIT)} of "
            "memory (a PDF that inflates without bound) or crashed"
        )

    def _read_exactly(self, process: subprocess.Popen[bytes], size: int, deadline: float) -> bytes:
        """``size`` bytes of the worker's answer, waiting no later than ``deadline``."""
        assert process.stdout is not None
        descriptor = process.stdout.fileno()
        pieces: list[bytes] = []
        wanted = size
        with selectors.DefaultSelector() as selector:
            selector.register(descriptor, selectors.EVENT_READ)
            while wanted:
                left = deadline - time.monotonic()
                if left <= 0 or not selector.select(left):
                    budget = f"{READ_SECONDS:.0f} s"
                    raise _WorkerFailed(
                        f"reading it took longer than {budget} (the PDF reader's time budget)"
                    )
                piece = os.read(descriptor, min(wanted, 1 << 20))
                if not piece:
                    raise _WorkerFailed(self._death(process))
                pieces.append(piece)
                wanted -= len(piece)
        return b"".join(pieces)


class _WorkerFailed(Exception):
    """The worker died, or took longer than :data:`READ_SECONDS`."""


def _package_folder(name: str) -> str:
    """The folder holding package ``name`` on this process's path, found without importing it."""
    spec = importlib.util.find_spec(name)
    if spec is None or not spec.submodule_search_locations:
        return ""
    return os.path.dirname(os.path.abspath(next(iter(spec.submodule_search_locations))))


_WORKER = PdfWorker()
atexit.register(_WORKER.close)


def _outline_headings(
    outline: list[tuple[int, str, int | None]], parts: list[Part], lines: list[str]
) -> list[Heading]:
    """A heading for each outline entry that points at a page with text, in reading order."""
    by_page = {part.number: part for part in parts}
    headings: list[Heading] = []
    floor = 1
    for level, title, page_index in outline:
        part = by_page.get((page_index or 0) + 1) if page_index is not None else None
        title = " ".join(title.split())
        if part is None or not title or part.last_line < floor:
            continue
        line = _title_line(lines, title, max(floor, part.first_line), part.last_line) or max(
            floor, part.first_line
        )
        headings.append(Heading(line, level + 1, title))
        floor = line
    return headings


def _title_line(lines: list[str], title: str, first: int, last: int) -> int | None:
    wanted = "".join(title.lower().split())
    for number in range(first, last + 1):
        squeezed = "".join(lines[number - 1].lower().split())
        if wanted in squeezed and len(squeezed) <= len(wanted) + TITLE_SLACK:
            return number
    return None
