"""Compressed files (``README.md.gz``, ``NEWS.gz``) read as the files they hold: the walk takes
them by that file's name, its reader reads what they expand to, and a hit shows and cites it."""

from __future__ import annotations

import bz2
import gzip
import io
import lzma
import tarfile

import pytest
from conftest import write
from helpers import HashBackend

from indexer import Index, corpus
from indexer.formats import UnreadableFile, read_document
from indexer.formats.compressed import MAX_EXPANDED_BYTES, uncompressed_name
from indexer.ignore import is_secret_name
from indexer.records import StoredChunk
from indexer.search.name_rules import page_names
from indexer.snippets import readable_text

GUIDE = (
    "# Zstandard\n\nFast **lossless** compression.\n\n## Testing\n\nRun `make check` for the smoke tests.\n"
)
COMPRESS = {".gz": gzip.compress, ".bz2": bz2.compress, ".xz": lzma.compress}


@pytest.mark.parametrize("suffix", list(COMPRESS))
def test_a_compressed_file_is_read_as_the_file_it_holds(suffix):
    plain = read_document("README.md", GUIDE.encode())
    compressed = read_document("zstd/README.md" + suffix, COMPRESS[suffix](GUIDE.encode()))
    assert compressed.lines == plain.lines
    assert [heading.title for heading in compressed.headings] == ["Zstandard", "Testing"]
    assert compressed.headings == plain.headings


def test_a_compressed_file_s_name_is_the_name_of_the_file_it_holds():
    assert uncompressed_name("doc/gzip/NEWS.gz") == "doc/gzip/NEWS"
    assert uncompressed_name("a/README.md.GZ") == "a/README.md"
    assert uncompressed_name("notes.txt.xz") == "notes.txt"
    assert uncompressed_name(".gz") == ".gz"  # a hidden file named so holds no named file
    assert uncompressed_name("guide.md") == "guide.md"


@pytest.mark.parametrize(
    ("name", "data", "says"),
    [
        ("notes.txt.gz", gzip.compress(b"a note\n" * 1000, mtime=0)[:-40], ".gz"),  # cut off in the middle
        ("notes.txt.gz", b"\x1f\x8b\x08\x00garbage after a gzip header", ".gz"),
        ("notes.txt.gz", b"plain text named as if compressed", ".gz"),
        ("notes.txt.bz2", b"BZh9 not a bzip2 stream", ".bz2"),
        ("notes.txt.xz", b"\xfd7zXZ\x00 not an xz stream", ".xz"),
    ],
)
def test_a_damaged_compressed_file_is_that_file_s_failure_in_one_line(name, data, says):
    with pytest.raises(UnreadableFile, match=rf"cannot be expanded as \{says} \(") as failed:
        read_document(name, data)
    assert failed.value.status == "damaged"
    assert "\n" not in str(failed.value)


def test_a_compression_bomb_is_refused_before_it_fills_the_memory():
    bomb = gzip.compress(b"a" * (MAX_EXPANDED_BYTES + 1), compresslevel=1)
    assert len(bomb) < MAX_EXPANDED_BYTES // 100
    with pytest.raises(UnreadableFile, match=r"expands past 64 MiB") as refused:
        read_document("huge.txt.gz", bomb)
    assert refused.value.status == "too-large"


def test_an_archive_or_a_binary_file_compressed_is_not_read_as_text():
    archive = io.BytesIO()
    with tarfile.open(fileobj=archive, mode="w:gz") as tar:
        member = tarfile.TarInfo("README.md")
        member.size = len(GUIDE)
        tar.addfile(member, io.BytesIO(GUIDE.encode()))
    assert not corpus.is_text_name("release/docs.tar.gz")
    with pytest.raises(UnreadableFile, match="binary") as refused:  # named as a text file all the same
        read_document("docs.txt.gz", archive.getvalue())
    assert refused.value.status == "binary"


def test_the_walk_takes_compressed_documents_and_the_well_known_names_by_the_file_they_hold():
    taken = [
        "gzip/README.gz", "gzip/NEWS.gz", "gzip/TODO", "gzip/copyright", "gzip/changelog.Debian.gz",
        "gzip/README.Debian", "zstd/README.md.gz", "zstd/CONTRIBUTING.md.gz", "node/lldb_commands.py.gz",
        "manual/guide.pdf.gz", "INSTALL", "THANKS", "NEWS.old", "bash/INTRO.gz", "bash/RBASH", "PKG-INFO",
        "examples/manpage.example.pod", "examples/manpath.config",
    ]  # fmt: skip
    left = [
        "release/docs.tar.gz", "photo.png.gz", "data.bin.gz", "Cargo.lock.gz", "bin/rbash",
        "A", "INTRO.PNG", "3.10.0", "README.png", "copyright.jpg", "install.tar.gz",
    ]  # fmt: skip
    assert [name for name in taken if not corpus.is_text_name(name)] == []
    assert [name for name in left if corpus.is_text_name(name)] == []


def test_a_compressed_credentials_file_is_known_by_the_name_of_the_file_it_holds():
    assert is_secret_name("server.pem.gz")
    assert is_secret_name(".env.gz")
    assert is_secret_name("id_rsa.xz")
    assert is_secret_name("NuGet.Config")  # a package feed's password, as .npmrc holds one
    assert not is_secret_name("credentials.md.gz")  # prose about credentials, compressed
    assert not is_secret_name("README.gz")


def test_a_hit_in_a_compressed_file_is_shown_and_named_as_that_file():
    assert (
        readable_text("zstd/README.md.gz", "Fast **lossless** compression.") == "Fast lossless compression."
    )
    chunk = StoredChunk(1, "/doc", "man2/open.2.gz", 1, 3, "open(2)", "open a file")
    assert page_names(chunk) == {"open"}


@pytest.mark.heavy
def test_a_folder_of_compressed_documents_is_indexed_cited_and_kept_up_to_date(tmp_path):
    folder = tmp_path / "doc"
    (folder / "zstd").mkdir(parents=True)
    (folder / "zstd" / "README.md.gz").write_bytes(gzip.compress(GUIDE.encode()))
    (folder / "zstd" / "NEWS.gz").write_bytes(gzip.compress(b"v1.5.5\n  fix: a rare corruption bug\n"))
    (folder / "zstd" / "notes.txt.gz").write_bytes(b"\x1f\x8b\x08\x00 damaged")
    write(folder / "zstd" / "TESTING.md", "# Testing\n\nThe fuzzers run nightly.\n")
    index_path = tmp_path / "index.db"
    with Index.open(index_path, backend=HashBackend(max_tokens=512)) as index:
        report = index.build(folder, warn=lambda message: None)
        hits = index.search("smoke tests make check", k=1, mode="keyword", min_score=0)
        news = index.search("rare corruption bug", k=1, mode="keyword", min_score=0)
    assert report.files_added == 3
    assert report.files_failed == 1
    assert [(failure.path, failure.reason) for failure in report.failures] == [
        (
            "zstd/notes.txt.gz",
            "cannot be expanded as .gz (Compressed file ended before the end-of-stream marker was reached)",
        )
    ]
    assert hits[0].citation == "zstd/README.md.gz:1-7"  # the lines of the file it holds
    assert hits[0].heading == "Zstandard"
    assert hits[0].text == GUIDE.rstrip("\n")
    assert news[0].path == "zstd/NEWS.gz"

    (folder / "zstd" / "NEWS.gz").write_bytes(gzip.compress(b"v1.5.6\n  new: a faster decoder\n"))
    counting = HashBackend(max_tokens=512)
    with Index.open(index_path, backend=counting) as index:
        again = index.build(folder, warn=lambda message: None)
        faster = index.search("faster decoder", k=1, mode="keyword", min_score=0)
    assert again.files_changed == 1
    assert counting.embedded == ["v1.5.6\n  new: a faster decoder"]
    assert faster[0].path == "zstd/NEWS.gz"
