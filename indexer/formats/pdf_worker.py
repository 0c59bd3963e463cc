"""The child process that runs PDFium for :mod:`indexer.formats.pdf`: one PDF at a time, under caps.

PDFium is native code reading files anyone may have written: a flate bomb (1 MB that inflates to
gigabytes) or a damaged page tree makes it allocate without bound, and when an allocation fails it
aborts the process, with no Python exception to catch. Here it can only take this process down: its
address space is capped (``RLIMIT_AS``), the text it gives is capped, and the parent gives up on it
after a time budget. The build then fails that one file and goes on with a new worker.

Run as a script, in Python's isolated mode, importing nothing of ``indexer`` (a build's folder is no
place to import modules from). It reads requests on stdin and answers on stdout, each an 8-byte
big-endian length then the bytes: a PDF in; out, JSON holding ``pages`` (each a list of lines) and
``outline`` (level, title, page index or null), or ``error`` and the ``status`` to record.
"""

from __future__ import annotations

import json
import struct
import sys

LENGTH = struct.Struct(">Q")


def main(memory_limit: int, max_text_chars: int, max_lines: int) -> None:
    if memory_limit > 0:
        try:
            import resource

            resource.setrlimit(resource.RLIMIT_AS, (memory_limit, memory_limit))
        except (ImportError, ValueError, OSError):
            pass  # no address-space limits on this system: the time budget still holds
    import pypdfium2

    requests, answers = sys.stdin.buffer, sys.stdout.buffer
    while True:
        header = requests.read(LENGTH.size)
        if len(header) < LENGTH.size:
            return  # the parent is done (or gone)
        data = requests.read(LENGTH.unpack(header)[0])
        answer = json.dumps(read(pypdfium2, data, max_text_chars, max_lines), ensure_ascii=False)
        encoded = answer.encode("utf-8", "surrogatepass")
        answers.write(LENGTH.pack(len(encoded)) + encoded)
        answers.flush()


def read(pypdfium2, data: bytes, max_text_chars: int, max_lines: int) -> dict:  # noqa: ANN001 (the module)
    """The pages' lines and the outline of one PDF, or why it cannot be read (past the caps on
    text, as soon as a page passes them)."""
    try:
        pdf = pypdfium2.PdfDocument(data)
    except pypdfium2.PdfiumError as error:
        if "password" in str(error).lower():
            return {"error": "encrypted (password-protected)", "status": "encrypted"}
        return {"error": f"cannot be opened as a PDF: {error}", "status": "damaged"}
    try:
        pages, chars, lines = [], 0, 0
        for index in range(len(pdf)):
            try:
                page = pdf[index]
            except pypdfium2.PdfiumError as error:
                return {"error": f"page {index + 1} cannot be loaded: {error}", "status": "damaged"}
            pages.append(page_lines(page))
            chars += sum(len(line) for line in pages[-1])
            lines += len(pages[-1])
            if chars > max_text_chars:
                cap = f"{max_text_chars >> 20} M characters"
                return {
                    "error": f"its text passes {cap} (the cap on a document's text)",
                    "status": "too-large",
                }
            if lines > max_lines:
                cap = f"{max_lines:,} lines"
                return {
                    "error": f"it has more than {cap} (the cap on a document's lines)",
                    "status": "too-large",
                }
        outline = [outline_entry(bookmark) for bookmark in pdf.get_toc()]
    finally:
        pdf.close()
    return {"pages": pages, "outline": outline}


def page_lines(page) -> list[str]:  # noqa: ANN001 (a pypdfium2 PdfPage)
    text_page = page.get_textpage()
    try:
        text = text_page.get_text_range()
    finally:
        text_page.close()
        page.close()
    return [line.rstrip() for line in text.replace("\r\n", "\n").replace("\r", "\n").split("\n")]


def outline_entry(bookmark) -> tuple[int, str, int | None]:  # noqa: ANN001 (a pypdfium2 PdfBookmark)
    """(level from 0, title, page index or None) of an outline entry."""
    destination = bookmark.get_dest()
    return bookmark.level, bookmark.get_title() or "", destination.get_index() if destination else None


if __name__ == "__main__":
    sys.path[:0] = sys.argv[4:]  # where pypdfium2 is installed, as the parent found it
    main(int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]))
