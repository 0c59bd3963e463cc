"""Tiny PDF, DOCX and notebook writers, so tests make the documents they read (no binary fixtures).

The PDF is as small as the format allows: one Helvetica font, each page a list of text lines, an
optional outline (bookmarks), and pages with no text at all (a scan without OCR). The DOCX holds the
four parts Word itself needs to open it, with "Title" and "heading N" styles.

Then the damaged and hostile ones an outside attack used: a DOCX with a flipped byte, an entry
flagged encrypted or compressed by method 99, a zip bomb, nesting thousands deep; a PDF whose page
tree holds itself, and one whose page inflates to hundreds of megabytes.
"""

from __future__ import annotations

import json
import struct
import zipfile
import zlib
from io import BytesIO
from xml.sax.saxutils import escape


def make_pdf(
    pages: list[list[str]], outline: list[tuple[str, int]] = (), reported: dict[str, int] | None = None
) -> bytes:
    """A PDF whose page ``n`` shows ``pages[n]`` line by line; ``outline``: (title, page index);
    ``reported``: characters whose text the font's ToUnicode map reports as another code point (as
    a badly made font reports a glyph as U+FFFD)."""
    objects: list[bytes] = []  # object n+1 is objects[n]

    def add(body: str | bytes) -> int:
        objects.append(body.encode("latin-1") if isinstance(body, str) else body)
        return len(objects)

    catalog = add("")  # filled in at the end, once the page tree and outline exist
    tree = add("")
    to_unicode = ""
    if reported:
        pairs = " ".join(f"<{ord(shown):02X}> <{code:04X}>" for shown, code in reported.items())
        cmap = (
            "/CIDInit /ProcSet findresource begin 12 dict begin begincmap /CIDSystemInfo << /Registry "
            "(Adobe) /Ordering (UCS) /Supplement 0 >> def /CMapName /Adobe-Identity-UCS def /CMapType 2 "
            f"def 1 begincodespacerange <00> <FF> endcodespacerange {len(reported)} beginbfchar {pairs} "
            "endbfchar endcmap CMapName currentdict /CMap defineresource pop end end"
        )
        stream = add(f"<< /Length {len(cmap)} >>\nstream\n{cmap}\nendstream")
        to_unicode = f" /ToUnicode {stream} 0 R"
    font = add(f"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica{to_unicode} >>")
    page_ids = []
    for lines in pages:
        text = "".join(f"({_pdf_string(line)}) Tj T* " for line in lines)
        stream = f"BT /F1 11 Tf 14 TL 72 720 Td {text}ET" if lines else "0 0 m 100 100 l S"
        content = add(f"<< /Length {len(stream)} >>\nstream\n{stream}\nendstream")
        page_ids.append(
            add(
                f"<< /Type /Page /Parent {tree} 0 R /MediaBox [0 0 612 792] "
                f"/Resources << /Font << /F1 {font} 0 R >> >> /Contents {content} 0 R >>"
            )
        )
    kids = " ".join(f"{page} 0 R" for page in page_ids)
    objects[tree - 1] = f"<< /Type /Pages /Kids [{kids}] /Count {len(page_ids)} >>".encode()
    outline_ref = ""
    if outline:
        root = add("")
        items = [len(objects) + 1 + number for number in range(len(outline))]
        for number, (title, page) in enumerate(outline):
            links = f"/Prev {items[number - 1]} 0 R " if number else ""
            links += f"/Next {items[number + 1]} 0 R " if number + 1 < len(items) else ""
            add(
                f"<< /Title ({_pdf_string(title)}) /Parent {root} 0 R {links}"
                f"/Dest [{page_ids[page]} 0 R /XYZ null null null] >>"
            )
        objects[root - 1] = (
            f"<< /Type /Outlines /First {items[0]} 0 R /Last {items[-1]} 0 R /Count {len(items)} >>"
        ).encode()
        outline_ref = f" /Outlines {root} 0 R"
    objects[catalog - 1] = f"<< /Type /Catalog /Pages {tree} 0 R{outline_ref} >>".encode()
    out = BytesIO()
    out.write(b"%PDF-1.4\n")
    offsets = []
    for number, body in enumerate(objects, 1):
        offsets.append(out.tell())
        out.write(f"{number} 0 obj\n".encode() + body + b"\nendobj\n")
    xref = out.tell()
    out.write(f"xref\n0 {len(objects) + 1}\n0000000000 65535 f \n".encode())
    out.write("".join(f"{offset:010d} 00000 n \n" for offset in offsets).encode())
    out.write(
        f"trailer\n<< /Size {len(objects) + 1} /Root {catalog} 0 R >>\nstartxref\n{xref}\n%%EOF\n".encode()
    )
    return out.getvalue()


def _pdf_string(text: str) -> str:
    return text.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")


_W = 'xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"'
_STYLES = (
    f'<?xml version="1.0" encoding="UTF-8" standalone="yes"?><w:styles {_W}>'
    '<w:style w:type="paragraph" w:default="1" w:styleId="Normal"><w:name w:val="Normal"/></w:style>'
    '<w:style w:type="paragraph" w:styleId="Title"><w:name w:val="Title"/></w:style>'
    + "".join(
        f'<w:style w:type="paragraph" w:styleId="Heading{n}"><w:name w:val="heading {n}"/>'
        f'<w:basedOn w:val="Normal"/><w:pPr><w:outlineLvl w:val="{n - 1}"/></w:pPr></w:style>'
        for n in range(1, 4)
    )
    + "</w:styles>"
)


def make_docx(
    paragraphs: list[tuple[str, str]], table: list[list[str]] = (), around: tuple[str, str] = ("", "")
) -> bytes:
    """A .docx of (style id, text) paragraphs ('' for the default style), then an optional table;
    ``around`` is markup put before and after them in the body (content controls, say)."""
    body = [around[0]]
    for style, text in paragraphs:
        properties = f'<w:pPr><w:pStyle w:val="{style}"/></w:pPr>' if style else ""
        body.append(f'<w:p>{properties}<w:r><w:t xml:space="preserve">{escape(text)}</w:t></w:r></w:p>')
    if table:
        rows = "".join(
            "<w:tr>"
            + "".join(f"<w:tc><w:p><w:r><w:t>{escape(cell)}</w:t></w:r></w:p></w:tc>" for cell in row)
            + "</w:tr>"
            for row in table
        )
        body.append(f"<w:tbl>{rows}</w:tbl>")
    body.append(around[1])
    document = (
        f'<?xml version="1.0" encoding="UTF-8" standalone="yes"?><w:document {_W}><w:body>'
        + "".join(body)
        + "</w:body></w:document>"
    )
    package = {
        "[Content_Types].xml": (
            '<?xml version="1.0" encoding="UTF-8"?>'
            '<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">'
            '<Default Extension="rels" '
            'ContentType="application/vnd.openxmlformats-package.relationships+xml"/>'
            '<Default Extension="xml" ContentType="application/xml"/>'
            '<Override PartName="/word/document.xml" ContentType="application/'
            'vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/>'
            '<Override PartName="/word/styles.xml" ContentType="application/'
            'vnd.openxmlformats-officedocument.wordprocessingml.styles+xml"/></Types>'
        ),
        "_rels/.rels": (
            '<?xml version="1.0" encoding="UTF-8"?>'
            '<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">'
            '<Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/'
            'relationships/officeDocument" Target="word/document.xml"/></Relationships>'
        ),
        "word/_rels/document.xml.rels": (
            '<?xml version="1.0" encoding="UTF-8"?>'
            '<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">'
            '<Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/'
            'relationships/styles" Target="styles.xml"/></Relationships>'
        ),
        "word/document.xml": document,
        "word/styles.xml": _STYLES,
    }
    return _zip({**package, "word/document.xml": document})


_DOCX_PARTS = ("[Content_Types].xml", "_rels/.rels", "word/_rels/document.xml.rels", "word/styles.xml")


def _zip(parts: dict[str, str | bytes]) -> bytes:
    out = BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, text in parts.items():
            archive.writestr(name, text)
    return out.getvalue()


def docx_bomb(paragraphs: int) -> bytes:
    """A .docx whose document.xml inflates to ``paragraphs`` one-word paragraphs (36 bytes each):
    a million make 36 MB out of about 100 kB."""
    with zipfile.ZipFile(BytesIO(make_docx([("", "x")]))) as archive:
        parts: dict[str, str | bytes] = {name: archive.read(name) for name in _DOCX_PARTS}
    body = b"<w:p><w:r><w:t>word</w:t></w:r></w:p>" * paragraphs
    parts["word/document.xml"] = f"<w:document {_W}><w:body>".encode() + body + b"</w:body></w:document>"
    return _zip(parts)


def with_document_entry_patched(docx: bytes, flags: int = 0, method: int | None = None) -> bytes:
    """``docx`` with word/document.xml's entry (its local and central headers) flagged ``flags``
    (1: encrypted) or said to be compressed by ``method`` (99: WinZip AES)."""
    data = bytearray(docx)
    name = b"word/document.xml"
    for signature, flag_at, method_at, name_length_at, name_at in (
        (b"PK\x03\x04", 6, 8, 26, 30),
        (b"PK\x01\x02", 8, 10, 28, 46),
    ):
        at = data.find(signature)
        while (
            data[at + name_at : at + name_at + struct.unpack_from("<H", data, at + name_length_at)[0]] != name
        ):
            at = data.find(signature, at + 4)
        data[at + flag_at] |= flags
        if method is not None:
            struct.pack_into("<H", data, at + method_at, method)
    return bytes(data)


def with_a_flipped_byte(docx: bytes) -> bytes:
    """``docx`` with one byte of word/document.xml's compressed data flipped."""
    data = bytearray(docx)
    at = data.find(b"word/document.xml") + len("word/document.xml") + 5
    data[at] ^= 0xFF
    return bytes(data)


def pdf_with_a_page_tree_loop() -> bytes:
    """A PDF whose page tree lists itself as its one kid: PDFium cannot load its page."""
    pdf = make_pdf([["A page nobody can reach."]])
    return pdf.replace(b"/Kids [5 0 R] /Count 1", b"/Kids [2 0 R] /Count 1")


def pdf_flate_bomb(megabytes: int) -> bytes:
    """A PDF of one page whose content stream inflates to ``megabytes`` MB of spaces, in about 1 kB
    per MB. The stream is one compressed MB repeated (a full flush makes each the same bytes), so it
    is made in milliseconds; its checksum is left wrong, which no reader gets to."""
    compressor = zlib.compressobj(9)
    head = compressor.compress(b"BT /F1 11 Tf 72 720 Td (Hello bomb) Tj ET\n") + compressor.flush(
        zlib.Z_FULL_FLUSH
    )
    megabyte = compressor.compress(b" " * (1 << 20)) + compressor.flush(zlib.Z_FULL_FLUSH)
    stream = head + megabyte * megabytes + compressor.flush()
    pdf = make_pdf([["placeholder"]])
    start = pdf.index(b"4 0 obj\n") + len(b"4 0 obj\n")
    end = pdf.index(b"endobj", start)
    content = b"<< /Length %d /Filter /FlateDecode >>\nstream\n" % len(stream) + stream + b"\nendstream\n"
    return _with_xref(pdf[:start] + content + pdf[end:])


def _with_xref(pdf: bytes) -> bytes:
    """``pdf`` (objects numbered from 1, in order) with its cross-reference table made anew."""
    body = pdf[: pdf.index(b"xref\n")]
    offsets = []
    at = body.find(b" 0 obj\n")
    while at >= 0:
        offsets.append(body.rfind(b"\n", 0, at) + 1)
        at = body.find(b" 0 obj\n", at + 1)
    trailer = pdf[pdf.index(b"trailer") :]
    trailer = trailer[: trailer.index(b"startxref")]
    table = b"xref\n0 %d\n0000000000 65535 f \n" % (len(offsets) + 1)
    table += b"".join(b"%010d 00000 n \n" % offset for offset in offsets)
    return body + table + trailer + b"startxref\n%d\n%%%%EOF\n" % len(body)


def make_notebook(
    cells: list[tuple[str, str]], image_output: bool = True, metadata: dict | None = None
) -> str:
    """An nbformat 4 notebook of (cell type, source) cells, with the notebook's ``metadata`` (its
    kernel's language); code cells get a PNG image output."""
    png = "iVBORw0KGgo" + "A" * 2000  # what an image output looks like: a long base64 string
    notebook_cells = []
    for kind, source in cells:
        cell: dict = {"cell_type": kind, "metadata": {}, "source": source.splitlines(keepends=True)}
        if kind == "code":
            cell["execution_count"] = 1
            cell["outputs"] = (
                [{"output_type": "display_data", "data": {"image/png": png}, "metadata": {}}]
                if image_output
                else []
            )
        notebook_cells.append(cell)
    notebook = {"cells": notebook_cells, "metadata": metadata or {}, "nbformat": 4, "nbformat_minor": 5}
    return json.dumps(notebook, indent=1)
