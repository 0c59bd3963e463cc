"""Walking a folder: what is taken, what is skipped, links, odd names."""

from __future__ import annotations

import os
from pathlib import Path

from conftest import write

from indexer import corpus


def paths(folder: Path) -> list[str]:
    return [source.path for source in corpus.walk(folder).files]


def test_text_files_are_taken_and_hidden_vendor_and_venv_folders_skipped(tmp_path):
    write(tmp_path / "a.md", "x")
    write(tmp_path / "src" / "main.py", "x")
    write(tmp_path / "conf" / "app.yaml", "x")
    write(tmp_path / "Makefile", "x")
    write(tmp_path / "page.html", "x")
    write(tmp_path / ".git" / "config.md", "x")
    write(tmp_path / ".hidden" / "n.md", "x")
    write(tmp_path / "node_modules" / "pkg" / "readme.md", "x")
    write(tmp_path / ".venv" / "lib" / "x.py", "x")
    write(tmp_path / "venv" / "pyvenv.cfg", "home = /usr/bin")
    write(tmp_path / "venv" / "lib" / "x.py", "x")
    (tmp_path / "image.png").write_bytes(b"\x89PNG\x00")
    result = corpus.walk(tmp_path)
    assert [s.path for s in result.files] == ["Makefile", "a.md", "conf/app.yaml", "page.html", "src/main.py"]
    assert result.skipped == [corpus.SkippedFile("image.png", ".png", "not a file type indexer reads")]


def test_odd_file_names_work(tmp_path):
    for name in ["with space.md", "new\nline.md", "crème brûlée.md", "日本語.txt"]:
        write(tmp_path / name, "text")
    assert sorted(paths(tmp_path)) == sorted(
        ["with space.md", "new\nline.md", "crème brûlée.md", "日本語.txt"]
    )


def test_links_out_of_the_folder_are_not_followed(tmp_path):
    root = tmp_path / "root"
    outside = tmp_path / "outside"
    write(outside / "secret.md", "secret")
    write(root / "inside.md", "fine")
    os.symlink(outside, root / "link-to-outside")
    os.symlink(outside / "secret.md", root / "secret-link.md")
    os.symlink("/etc", root / "etc")
    result = corpus.walk(root)
    assert [s.path for s in result.files] == ["inside.md"]
    links = {(skipped.path, skipped.kind) for skipped in result.skipped}
    assert links >= {("link-to-outside", "link"), ("secret-link.md", "link")}
    assert "etc" in {s.path for s in result.skipped}


def test_links_inside_the_folder_are_followed_and_a_loop_ends_only_itself(tmp_path):
    write(tmp_path / "real" / "doc.md", "x")
    os.symlink(tmp_path / "real", tmp_path / "alias")
    os.symlink(tmp_path, tmp_path / "real" / "loop")
    os.symlink(tmp_path / "real" / "doc.md", tmp_path / "doc-link.md")
    write(tmp_path / "zzz.md", "after the loop")
    found = paths(tmp_path)
    assert "real/doc.md" in found and "doc-link.md" in found and "zzz.md" in found
    assert len(found) == len(set(found))
    assert not any(path.startswith("real/loop/") for path in found)


def test_a_type_no_reader_takes_is_counted_by_its_extension():
    names = ["a/b.XLSX", "logo.png", "LICENSE-x", "3.10.0", "x.7z", ".bashrc"]
    labels = [corpus.type_label(name) for name in names]
    assert labels == [".xlsx", ".png", "no extension", "no extension", ".7z", "no extension"]
