"""Words match in every script: Chinese, Japanese and Korean notes found by keyword and hybrid search
on both stores, one-, two- and many-character words, questions written without spaces, mixed
scripts and names in code; Latin, Greek and Cyrillic text indexed and scored as before; an index
made before gains it when a build opens it."""

from __future__ import annotations

from pathlib import Path

import apsw
import psycopg
import pytest
from conftest import STORES, new_database, undo_migration, write
from helpers import HashBackend

from indexer import Index
from indexer.search.query import Query, keyword_words
from indexer.store import keywords
from indexer.store.postgres import PostgresStore
from indexer.store.sqlite import HEADING_WEIGHT, SQLiteStore, fts_phrase

NOTES = {
    "zh/backup.md": "# 数据库备份\n\n每天凌晨用 pg_dump 备份数据库，再把备份文件复制到另一台服务器。\n",
    "zh/cache.md": "# 缓存\n\n用 Redis 缓存热点数据，缓存的过期时间是十分钟。\n",
    "zh/cat.md": "# 宠物\n\n我家的小猫很可爱，每天要睡十六个小时。\n",
    "zh/code.md": "# 接口\n\n```python\ndef get_用户名(user_id):\n    return 查询(user_id).名字\n```\n",
    "ja/curry.md": "# カレーの作り方\n\n玉ねぎを炒めて、ルーを入れて二十分煮込みます。\n",
    "ja/sushi.md": "# 寿司\n\n酢飯を握って、新鮮な魚をのせます。\n",
    "ko/backup.md": "# 백업\n\n데이터베이스를 매일 백업하는 방법을 설명합니다.\n",
    "ko/network.md": "# 네트워크\n\n라우터에 접속해서 네트워크 설정을 바꾸세요.\n",
    "en/backup.md": "# Backups\n\nBack up the database every night with pg_dump.\n",
    "ru/backup.md": "# Резервные копии\n\nРезервное копирование базы данных каждую ночь.\n",
    "el/backup.md": "# Αντίγραφα\n\nΤο αντίγραφο ασφαλείας της βάσης δεδομένων κάθε βράδυ.\n",
}
#: (query, the note that answers it): one character (the second of a pair, and inside a run), two,
#: many, a question written without spaces, mixed scripts, a name in code, and the scripts with spaces.
FOUND_FIRST = [
    ("猫", "zh/cat.md"),
    ("魚", "ja/sushi.md"),
    ("缓存", "zh/cache.md"),
    ("寿司", "ja/sushi.md"),
    ("백업", "ko/backup.md"),
    ("数据库", "zh/backup.md"),
    ("备份数据库", "zh/backup.md"),
    ("カレー", "ja/curry.md"),
    ("데이터베이스", "ko/backup.md"),
    ("如何备份数据库？", "zh/backup.md"),
    ("カレーの作り方を教えて", "ja/curry.md"),
    ("네트워크 설정", "ko/network.md"),
    ("Redis 缓存", "zh/cache.md"),
    ("pg_dump 备份", "zh/backup.md"),
    ("get_用户名", "zh/code.md"),
    ("用户名", "zh/code.md"),
    ("database", "en/backup.md"),
    ("копирование", "ru/backup.md"),
    ("δεδομένων", "el/backup.md"),
]
LATIN_QUERIES = [["database"], ["pg_dump"], ["копирование", "базы"], ["δεδομένων"], ["back", "night"]]


def write_notes(folder: Path) -> Path:
    for path, text in NOTES.items():
        write(folder / path, text)
    return folder


@pytest.fixture(scope="module", params=STORES)
def notes(request, tmp_path_factory):
    """The notes indexed with the embedded model, on each store."""
    folder = write_notes(tmp_path_factory.mktemp("notes") / "notes")
    if request.param == "postgres":
        location = new_database(request.getfixturevalue("postgres_server"))
    else:
        location = folder.parent / "index.db"
    with Index.open(location) as index:
        assert index.build(folder, warn=lambda message: None).exit_code == 0
        yield index


def paths_of(hits) -> list[str]:
    return [hit.path for hit in hits]


@pytest.mark.heavy
@pytest.mark.parametrize("mode", ["keyword", "hybrid"])
@pytest.mark.parametrize(("query", "expected"), FOUND_FIRST, ids=[query for query, _ in FOUND_FIRST])
def test_each_note_is_found_first_by_its_words_in_any_script(notes, query, expected, mode):
    assert paths_of(notes.search(query, k=3, mode=mode, min_score=0))[0] == expected


@pytest.mark.heavy
def test_a_word_is_found_wherever_its_characters_stand_together_and_nowhere_else(notes):
    def found(query: str) -> set[str]:
        return set(paths_of(notes.search(query, k=20, mode="keyword", min_score=0)))

    assert found("数据") == {"zh/backup.md", "zh/cache.md"}  # 数据库 and 热点数据
    assert found("猫") == {"zh/cat.md"}  # the second character of 小猫
    assert found("小时") == {"zh/cat.md"}  # at the end of a run
    assert found("玉ねぎ") == {"ja/curry.md"}  # at its start
    assert found("新鮮") == {"ja/sushi.md"}
    assert found("데이터베이스") == {"ko/backup.md"}  # with its particle attached: 데이터베이스를
    assert found("据数") == set()  # the same characters in another order


@pytest.mark.heavy
def test_the_best_cjk_match_scores_as_a_rare_latin_word_does(notes):
    """On the keyword scale a pair of characters is a word: the one note holding a rare word scores
    about 1 whether the word is Chinese, Korean or English (BM25 still weighs it by the note's
    length: the Chinese note is the longest)."""
    evidence = {
        query: notes.search(query, k=1, mode="keyword", min_score=0)[0].keyword_score
        for query in ("凌晨", "데이터베이스", "night")
    }
    assert all(0.5 < score < 2 for score in evidence.values()), evidence


@pytest.mark.heavy
@pytest.mark.parametrize("mode", ["keyword", "hybrid", "vector"])
def test_a_quoted_cjk_phrase_keeps_only_chunks_that_hold_it(notes, mode):
    def found(query: str) -> set[str]:
        return set(paths_of(notes.search(query, k=20, mode=mode, min_score=0)))

    assert found('"备份数据库"') == {"zh/backup.md"}
    assert found('"数据"') == {"zh/backup.md", "zh/cache.md"}
    assert found('"猫"') == {"zh/cat.md"}
    assert found('"カレー"') == {"ja/curry.md"}


@pytest.mark.heavy
def test_a_minus_word_leaves_out_chunks_that_hold_it_in_any_script(notes):
    without = notes.search("数据 -数据库", k=10, mode="keyword", min_score=0)
    assert paths_of(without) == ["zh/cache.md"]
    assert paths_of(notes.search("猫 -可爱", k=10, mode="keyword", min_score=0)) == []


def test_a_query_run_is_searched_as_its_pairs_each_counted_as_a_word():
    assert keyword_words("备份数据库") == ["备份", "份数", "数据", "据库"]
    assert keyword_words("猫") == ["猫"]
    assert keyword_words("Redis 缓存") == ["redis", "缓存"]
    assert keyword_words("get_用户名") == ["get_", "用户", "户名"]
    assert Query.parse("如何备份数据库？").keyword_count() == 6
    assert keyword_words("Ελληνικά и русский") == ["ελληνικά", "и", "русский"]


def test_a_run_is_indexed_as_the_pair_that_starts_at_each_position():
    assert keywords.index_text("备份数据库") == " 备份 份数 数据 据库 库 "
    assert keywords.index_text("用Redis缓存，每天") == " 用 Redis 缓存 存 ， 每天 天 "
    assert keywords.index_text("Ελληνικά и русский, Latin") == "Ελληνικά и русский, Latin"
    assert keywords.query_text("数据库") == "数据 据库"  # the start of a longer run matches too
    assert keywords.query_text("猫") == "猫*"  # a pair it starts, or the last position alone
    assert keywords.query_text("数据库abc") == "数据 据库 库 abc"  # a run the term goes on after
    assert keywords.query_text("config*") == "config*"
    assert fts_phrase("a猫") == '"a 猫"*'


def test_the_rewriting_is_linear_in_the_text():
    """One pass of one character class: a long run, or a long text of many short runs, is rewritten
    into three characters per letter at most, with no backtracking to blow up."""
    long_run = "数" * 200_000
    assert len(keywords.index_text(long_run)) == 3 * len(long_run)
    scattered = "a数" * 100_000
    assert keywords.index_text(scattered).count("数") == 100_000
    assert keywords.query_text(long_run).count(" ") == len(long_run) - 2


def test_latin_text_is_indexed_as_before_so_its_scores_do_not_move(tmp_path):
    """The keyword index of text without CJK letters holds what FTS5 made of the text itself: every
    BM25 score equals that of an index over the stored text with the tokenizer of the first schema."""
    folder = tmp_path / "docs"
    for path, text in NOTES.items():
        if path.startswith(("en/", "ru/", "el/")):
            write(folder / path, text)
    write(folder / "guide.md", "# Guide\n\nBack up nightly; the database keeps thirty nights.\n")
    with Index.open(tmp_path / "index.db", backend=HashBackend()) as index:
        index.build(folder, warn=lambda message: None)
    with SQLiteStore.open(tmp_path / "index.db", writable=True) as store:
        store.db.execute(
            "CREATE VIRTUAL TABLE plain USING fts5 (heading, text, content = 'chunks', content_rowid = 'id', "
            "tokenize = \"porter unicode61 remove_diacritics 2 tokenchars '_'\")"
        )
        store.db.execute("INSERT INTO plain (plain) VALUES ('rebuild')")
        for words in LATIN_QUERIES:
            expected = store.db.execute(
                "SELECT rowid, bm25(plain, ?, 1.0) AS rank FROM plain WHERE plain MATCH ? ORDER BY rank",
                (HEADING_WEIGHT, " OR ".join(fts_phrase(word) for word in words)),
            ).fetchall()
            assert expected
            assert store.keyword_matches(words, 100) == expected


@pytest.mark.heavy
def test_latin_text_keeps_its_tsvector_on_postgres(postgres_url, tmp_path):
    folder = write_notes(tmp_path / "notes")
    with Index.open(postgres_url, backend=HashBackend()) as index:
        index.build(folder, warn=lambda message: None)
    with PostgresStore.open(postgres_url) as store:
        kept = store.query(
            "SELECT f.path, c.search_text = to_tsvector('english', c.heading || ' ' || c.text) "
            "FROM chunks c JOIN files f ON f.id = c.file_id"
        )
    assert {path: same for path, same in kept if path.startswith(("en/", "ru/", "el/"))} == {
        "en/backup.md": True,
        "ru/backup.md": True,
        "el/backup.md": True,
    }
    assert not any(same for path, same in kept if path.startswith(("zh/", "ja/", "ko/")))


#: Text at the edges of every range of letters the index writes as pairs, and the characters just
#: outside them, among Latin words and punctuation.
EDGES = [
    "x" + "".join(chr(code) for code in codes if not 0xD800 <= code <= 0xDFFF) + "y"  # no surrogates
    for first, last in keywords.UNSPACED_LETTERS
    for codes in ((first - 1, first, first + 1), (last - 1, last, last + 1))
]
EDGES += [
    "备份数据库的方法",
    "用Redis缓存，每天。",
    "カレー・ライス",
    "데이터베이스를 백업",
    "get_用户名()",
    "plain",
]


@pytest.mark.heavy
def test_postgres_writes_the_pairs_python_writes(postgres_url):
    with PostgresStore.open(postgres_url, writable=True, create=True) as store:
        for text in EDGES:
            written = store.query("SELECT keyword_text(%s)", (text,))[0][0]
            assert written.split() == keywords.index_text(text).split(), text


def make_pre_0008(location: Path | str) -> None:
    """What an index made before migration 0008 held: the keyword index over the stored text, as 0001
    defined it."""
    sqlite = [
        "DROP TABLE chunks_fts",
        "CREATE VIRTUAL TABLE chunks_fts USING fts5 (heading, text, content = 'chunks', "
        "content_rowid = 'id', tokenize = \"porter unicode61 remove_diacritics 2 tokenchars '_'\")",
        "INSERT INTO chunks_fts (chunks_fts) VALUES ('rebuild')",
    ]
    postgres = [
        "ALTER TABLE chunks DROP COLUMN search_text",
        "ALTER TABLE chunks ADD COLUMN search_text tsvector "
        "GENERATED ALWAYS AS (to_tsvector('english', heading || ' ' || text)) STORED",
        "CREATE INDEX chunks_search_text ON chunks USING gin (search_text)",
        "DROP TRIGGER chunk_keywords ON chunks",
        "DROP FUNCTION chunk_keywords()",
        "DROP FUNCTION keyword_text(text)",
        "DROP FUNCTION unspaced_letters()",
    ]
    undo_migration(location, 8, sqlite, postgres)


def old_matches(location: Path | str, word: str) -> list[tuple]:
    """The chunks the keyword index made before 0008 finds for one word."""
    if isinstance(location, Path):
        connection = apsw.Connection(str(location), flags=apsw.SQLITE_OPEN_READONLY)
        found = connection.execute("SELECT rowid FROM chunks_fts WHERE chunks_fts MATCH ?", (f'"{word}"',))
        return found.fetchall()
    with psycopg.connect(location) as connection:
        return connection.execute(
            "SELECT id FROM chunks WHERE search_text @@ phraseto_tsquery('english', %s)", (word,)
        ).fetchall()


def test_an_index_made_before_gains_cjk_words_at_its_next_build(any_index, tmp_path):
    folder = write_notes(tmp_path / "notes")
    with Index.open(any_index, backend=HashBackend()) as index:
        index.build(folder, warn=lambda message: None)
        latin_before = [index.store.keyword_matches(words, 100) for words in LATIN_QUERIES]
    make_pre_0008(any_index)
    assert old_matches(any_index, "数据库") == []  # a run was one word: 数据库备份, 备份数据库
    assert old_matches(any_index, "database")
    with Index.open(any_index, backend=HashBackend()) as index:
        report = index.build(folder, warn=lambda message: None)
        assert (report.files_added, report.files_changed, report.chunks_embedded) == (0, 0, 0)
        assert "0008_words_of_every_script.sql" in index.store.applied_migrations()
        hits = index.search("数据库", k=5, mode="keyword", min_score=0)
        assert paths_of(hits)[0] == "zh/backup.md"
        assert [index.store.keyword_matches(words, 100) for words in LATIN_QUERIES] == latin_before
        assert not index.store.integrity_problems()


def test_a_changed_or_removed_note_leaves_no_pair_behind(any_index, tmp_path):
    folder = write_notes(tmp_path / "notes")
    with Index.open(any_index, backend=HashBackend()) as index:
        index.build(folder, warn=lambda message: None)
        write(folder / "zh/cache.md", "# 缓存\n\n缓存已经删除。\n")
        (folder / "zh" / "backup.md").unlink()
        index.build(folder, warn=lambda message: None)
        assert index.search("数据", k=10, mode="keyword", min_score=0) == []
        assert paths_of(index.search("删除", k=10, mode="keyword", min_score=0)) == ["zh/cache.md"]
        assert not index.store.integrity_problems()


@pytest.mark.heavy
def test_a_copy_of_the_notes_answers_alike_on_both_stores(tmp_path, postgres_url):
    """The same notes on SQLite and PostgreSQL: the same note first for every CJK query."""
    folder = write_notes(tmp_path / "notes")
    firsts = []
    for location in (tmp_path / "index.db", postgres_url):
        with Index.open(location, backend=HashBackend()) as index:
            index.build(folder, warn=lambda message: None)
            firsts.append(
                [paths_of(index.search(query, k=1, mode="keyword", min_score=0)) for query, _ in FOUND_FIRST]
            )
    assert firsts[0] == firsts[1]
