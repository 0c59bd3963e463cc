"""Every build setting is recorded and re-used (chunk_tokens for the index, the walk's rules for each
root), a different value given is refused unless rebuilt, and an emptied folder removes nothing.

The behaviour tests run on both stores: ``index_path`` is a SQLite file or a fresh PostgreSQL URL."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import rows, snapshot, write
from helpers import FaultyBackend, HashBackend
from loopback import OllamaServer
from repositories import INDEXED, write_repository
from runs import cli

from indexer import ConfigError, Index
from indexer.sizes import DEFAULT_MAX_FILE_SIZE


@pytest.fixture
def index_path(any_index: Path | str) -> Path | str:
    return any_index


def build(index_path, folder: Path, backend, **options):
    with Index.open(index_path) as index:
        return index.build(folder, backend=backend, warn=lambda message: None, **options)


def indexed(index_path) -> list[str]:
    with Index.open(index_path, create=False) as index:
        found = rows(index.store, "SELECT path FROM files WHERE status = 'indexed' ORDER BY path")
    return [row[0] for row in found]


def longest_chunk(index_path) -> int:
    with Index.open(index_path, create=False) as index:
        return max(len(row[0].split()) for row in rows(index.store, "SELECT text FROM chunks"))


def long_file(folder: Path) -> Path:
    words = " ".join(f"word{number}" for number in range(300))
    return write(folder / "long.md", f"# Long\n\n{words}\n")


def test_a_plain_build_reuses_the_recorded_chunk_tokens(tmp_path, index_path):
    folder = tmp_path / "docs"
    long_file(folder)
    backend = HashBackend(max_tokens=64)
    build(index_path, folder, backend, chunk_tokens=24)
    assert longest_chunk(index_path) <= 24
    write(folder / "more.md", "# More\n\n" + " ".join(f"more{number}" for number in range(100)) + "\n")
    report = build(index_path, folder, backend)  # no chunk_tokens: the recorded 24
    assert report.exit_code == 0
    assert report.files_added == 1
    assert report.files_unchanged == 1
    assert longest_chunk(index_path) <= 24
    with pytest.raises(ConfigError, match="chunking.max_tokens: 24 -> 32"):
        build(index_path, folder, backend, chunk_tokens=32)


@pytest.mark.heavy
def test_walk_rules_are_recorded_per_root_and_reused(tmp_path, index_path):
    repo = write_repository(tmp_path / "repo")
    notes = tmp_path / "notes"
    write(notes / "a.md", "# A\n\nAbout herons.\n")
    write(notes / "drafts" / "b.md", "# B\n\nAbout kingfishers.\n")
    backend = HashBackend()
    build(index_path, repo, backend, include=["*.md"], exclude=["docs/env/"])
    build(index_path, notes, backend, exclude="drafts/")
    expected = ["README.md", "docs/important.tmp.md", "a.md"]
    assert indexed(index_path) == sorted(expected)
    write(repo / "docs" / "new.md", "# New\n\nA new page.\n")
    write(notes / "drafts" / "c.md", "# C\n\nStill a draft.\n")
    for folder in (repo, notes):
        assert build(index_path, folder, backend).exit_code == 0  # no rules given: each root's own
    assert indexed(index_path) == sorted([*expected, "docs/new.md"])
    with Index.open(index_path, create=False) as index:
        recorded = index.status()["walk_rules"]
    assert recorded[str(notes.resolve())]["exclude"] == ["drafts/"]
    assert recorded[str(repo.resolve())] == {
        "ignore_files": True,
        "include": ["*.md"],
        "exclude": ["docs/env/"],
        "allow_secrets": [],
        "max_file_size": DEFAULT_MAX_FILE_SIZE,
    }


@pytest.mark.heavy
def test_a_different_rule_is_refused_then_applied_in_place_by_a_rebuild(tmp_path, index_path):
    repo = write_repository(tmp_path / "repo")
    backend = HashBackend()
    build(index_path, repo, backend, exclude=["docs/"])
    before = snapshot(index_path)
    with pytest.raises(ConfigError, match=r"walk.exclude: \['docs/'\] -> \[\]; rebuild"):
        build(index_path, repo, backend, exclude=[])
    with pytest.raises(ConfigError, match="walk.ignore_files: True -> False"):
        build(index_path, repo, backend, ignore_files=False)
    assert snapshot(index_path) == before
    embedded = len(backend.embedded)
    report = build(index_path, repo, backend, exclude=[], rebuild=True)
    assert report.files_added == 3
    assert report.files_unchanged == len(INDEXED) - 3
    assert indexed(index_path) == INDEXED
    assert len(backend.embedded) - embedded == report.chunks_embedded  # only the new files' chunks
    assert build(index_path, repo, backend).files_unchanged == len(INDEXED)  # the new rules are kept


def test_the_size_cap_is_recorded_for_the_folder_and_a_new_one_applied_by_a_rebuild(tmp_path, index_path):
    folder = tmp_path / "docs"
    write(folder / "a.md", "# A\n\nAbout herons.\n")
    write(folder / "log.txt", "A line of a long log.\n" * 100)  # 2.2 kB
    backend = HashBackend()
    assert build(index_path, folder, backend, max_file_size="2k").skipped_by_kind() == {"too-large": 1}
    again = build(index_path, folder, backend)  # no cap given: the recorded 2 kB
    assert again.skipped_by_kind() == {"too-large": 1}
    assert indexed(index_path) == ["a.md"]
    with pytest.raises(ConfigError, match="walk.max_file_size: 2048 -> 4096"):
        build(index_path, folder, backend, max_file_size=4096)
    report = build(index_path, folder, backend, max_file_size=4096, rebuild=True)
    assert report.files_changed == 1
    assert indexed(index_path) == ["a.md", "log.txt"]
    with pytest.raises(ConfigError, match="max_file_size must be a positive number of bytes, not 0"):
        build(index_path, folder, backend, max_file_size=0)


@pytest.mark.heavy
def test_no_ignore_is_recorded_and_reused(tmp_path, index_path):
    repo = write_repository(tmp_path / "repo")
    backend = HashBackend()
    build(index_path, repo, backend, ignore_files=False)
    assert {"build/guide.md", "scratch.md", "generated/api.md"} <= set(indexed(index_path))
    report = build(index_path, repo, backend)
    assert report.files_removed == 0
    assert report.files_ignored == 0
    assert ".env" not in indexed(index_path)


def test_a_rebuild_for_new_settings_walks_each_root_with_its_own_rules(tmp_path):
    index_path = tmp_path / "index.db"  # a rebuild beside the index is the SQLite store's
    notes = tmp_path / "notes"
    write(notes / "a.md", "# A\n\nAbout herons.\n")
    write(notes / "drafts" / "b.md", "# B\n\nAbout kingfishers.\n")
    other = tmp_path / "other"
    long_file(other)
    backend = HashBackend()
    build(index_path, notes, backend, exclude=["drafts/"])
    build(index_path, other, backend)
    report = build(index_path, other, backend, chunk_tokens=24, rebuild=True)
    assert report.exit_code == 0
    assert indexed(index_path) == ["a.md", "long.md"]
    assert longest_chunk(index_path) <= 24
    assert build(index_path, notes, backend).files_unchanged == 1  # its rules and chunk_tokens kept


def test_an_emptied_folder_removes_nothing_unless_allowed(tmp_path, index_path):
    folder = tmp_path / "share"
    write(folder / "a.md", "# A\n\nAbout herons.\n")
    write(folder / "sub" / "b.md", "# B\n\nAbout kingfishers.\n")
    backend = HashBackend()
    build(index_path, folder, backend)
    before = snapshot(index_path)
    for path in (folder / "a.md", folder / "sub" / "b.md"):
        path.unlink()
    write(folder / "photo.png", "not text")  # files of no type we read are no files to index either
    with pytest.raises(ConfigError, match="has no files to index, but the index holds 2 from it"):
        build(index_path, folder, backend)
    assert snapshot(index_path) == before
    report = build(index_path, folder, backend, allow_empty=True)
    assert report.files_removed == 2
    assert indexed(index_path) == []


@pytest.mark.parametrize("fate", ["moved", "emptied"])
def test_a_rebuild_refuses_to_drop_another_folder_that_is_missing_or_emptied(tmp_path, fate):
    index_path = tmp_path / "index.db"  # a rebuild beside the index is the SQLite store's
    notes, share = tmp_path / "notes", tmp_path / "share"
    write(notes / "a.md", "# A\n\nAbout herons.\n")
    write(share / "b.md", "# B\n\nAbout kingfishers.\n")
    write(share / "sub" / "c.md", "# C\n\nAbout egrets.\n")
    backend = HashBackend()
    build(index_path, notes, backend)
    build(index_path, share, backend)
    before = snapshot(index_path)
    if fate == "moved":  # or unmounted
        share.rename(tmp_path / "elsewhere")
    else:
        for path in (share / "b.md", share / "sub" / "c.md"):
            path.unlink()
    refusal = "is missing" if fate == "moved" else "has no files to index"
    with pytest.raises(ConfigError, match=f"folder {share} {refusal}, but the index holds 2 ") as refused:
        build(index_path, notes, backend, chunk_tokens=24, rebuild=True)
    assert refused.value.exit_code == 2
    assert str(refused.value).endswith(
        "with allow_empty to drop it" if fate == "moved" else "with allow_empty to remove them"
    )
    assert snapshot(index_path) == before
    assert not Path(f"{index_path}.rebuild").exists()
    report = build(index_path, notes, backend, chunk_tokens=24, rebuild=True, allow_empty=True)
    assert report.exit_code == 0
    assert indexed(index_path) == ["a.md"]


def test_a_rebuild_of_an_emptied_folder_removes_nothing_unless_allowed(tmp_path):
    index_path = tmp_path / "index.db"
    folder = tmp_path / "share"
    write(folder / "a.md", "# A\n\nAbout herons.\n")
    backend = HashBackend()
    build(index_path, folder, backend)
    before = snapshot(index_path)
    (folder / "a.md").unlink()
    with pytest.raises(ConfigError, match="has no files to index, but the index holds 1 from it"):
        build(index_path, folder, backend, chunk_tokens=24, rebuild=True)
    assert snapshot(index_path) == before


def test_a_new_root_with_no_files_is_no_error(tmp_path, index_path):
    folder = tmp_path / "empty"
    folder.mkdir()
    report = build(index_path, folder, HashBackend())
    assert report.exit_code == 0
    assert report.files_seen == 0


@pytest.mark.heavy
def test_the_report_counts_what_was_left_out_and_why(tmp_path, index_path):
    repo = write_repository(tmp_path / "repo")
    write(repo / "empty.md", "")
    report = build(index_path, repo, HashBackend())
    assert report.files_ignored == 9
    assert report.skipped_by_kind() == {"secret": 2, ".png": 1, ".xlsx": 1, "empty": 1}
    assert report.files_skipped == 5
    assert "; 5 skipped: 2 secret, 1 .png, 1 .xlsx, 1 empty; 9 ignored;" in report.summary()
    rerun = build(index_path, repo, HashBackend())  # an empty file recorded as such is still counted
    assert rerun.skipped_by_kind() == report.skipped_by_kind()


def test_a_removed_folder_starts_afresh_with_the_rules_given(tmp_path, index_path):
    notes = tmp_path / "notes"
    write(notes / "a.md", "# A\n\nAbout herons.\n")
    write(notes / "drafts" / "b.md", "# B\n\nAbout kingfishers.\n")
    backend = HashBackend()
    build(index_path, notes, backend, exclude=["drafts/"])
    with Index.open(index_path) as index:
        index.remove_root(notes)
    report = build(index_path, notes, backend, include=["drafts/"])  # no "settings differ"
    assert report.exit_code == 0
    assert indexed(index_path) == ["drafts/b.md"]


def test_a_first_batch_of_a_wrong_dimension_that_stores_nothing_fixes_nothing(tmp_path):
    folder = write(tmp_path / "docs" / "one.md", "# One\n\n" + "alpha beta gamma\n\n" * 40).parent
    index_path = tmp_path / "index.db"

    # batch 1 comes back in 33 dimensions; batch 2 of the same file fails: the file is not stored
    class Misbehaving(FaultyBackend):
        def embed(self, texts):
            if self.calls == 1:
                self.calls += 1
                raise RuntimeError("the server fell over")
            return super().embed(texts)

    report = build(index_path, folder, Misbehaving("wrong_dimension", fail_on=1), batch_size=1, concurrency=1)
    assert report.files_failed == 1
    assert report.files_added == 0
    with Index.open(index_path, create=False) as index:
        assert index.store.dimension is None
        assert index.store.get_meta("fingerprint") is None
    assert build(index_path, folder, HashBackend(model_name="another")).exit_code == 0


@pytest.mark.heavy
def test_a_first_build_that_stored_nothing_pins_no_settings(tmp_path, docs):
    index_path = str(tmp_path / "index.db")
    with OllamaServer(models=["nomic-embed-text"]) as server:
        ollama = ["--backend", "ollama", "--base-url", server.url]
        failed = cli("build", str(docs), "--db", index_path, *ollama, "--model", "nomic-embed-txet")
        assert failed.exit_code == 4
        assert "ollama pull nomic-embed-txet" in failed.stderr
        fixed = cli("build", str(docs), "--db", index_path, *ollama, "--model", "nomic-embed-text")
        assert fixed.exit_code == 0, fixed.output
