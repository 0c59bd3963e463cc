"""What only the PostgreSQL store has: builders of different roots at once, its errors, its SQL filters.

The behaviour both stores share is tested on both in test_pipeline, test_search and test_concurrency.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import apsw
import psycopg
import pytest
from click.testing import CliRunner
from conftest import SAMPLE_CORPUS, new_database, rows, write
from helpers import HashBackend, write_corpus
from test_concurrency import start_worker, wait_until_started

from indexer import ConfigError, Index
from indexer.cli import main
from indexer.errors import DatabaseUnreachableError
from indexer.pipeline.options import MIN_CHUNK_TOKENS
from indexer.request import MAX_K
from indexer.search.copies import shown_places
from indexer.store.migrations import all_migrations
from indexer.store.postgres import filter_sql, glob_to_regex, printable_url
from indexer.store.records import ChunkFilter

QUERY_WORKER = Path(__file__).parent / "support" / "query_worker.py"


def index_contents(location: str) -> dict[str, object]:
    """Everything that should not depend on the order builds ran in (ids and timings aside)."""
    with Index.open(location, create=False) as index:
        store = index.store
        chunks = rows(
            store,
            "SELECT f.root, f.path, c.seq, c.start_line, c.end_line, c.heading, c.text, c.text_hash "
            "FROM chunks c JOIN files f ON f.id = c.file_id ORDER BY f.root, f.path, c.seq",
        )
        return {
            "files": rows(
                store, "SELECT root, path, size, content_hash, status FROM files ORDER BY root, path"
            ),
            "chunks": chunks,
            "vectors": store.vectors_for_hashes(chunk[-1] for chunk in chunks),
            "counts": store.counts(),
            "problems": store.integrity_problems(),
            "outcomes": sorted(build["outcome"] for build in store.recent_builds(10)),
        }


def own_evidence(hit) -> tuple[float, float]:  # noqa: ANN001 (a Hit)
    """What a hit scores by itself, best first when sorted: its cosine, then its keyword evidence."""
    return (-round(hit.vector_score or 0.0, 5), -round(hit.keyword_score or 0.0, 5))


def answers(location: str) -> list[list[tuple[float, str, str, int]]]:
    """Each query's hits, ties put in a fixed order: chunks of equal cosine (the same text in two
    files) come back from the graph in no set order. Hits tied with the last one are dropped, since
    which of them make the cut depends on that order too. Where the vector search takes part, only
    the hits above the fifth are kept: pgvector's HNSW graph is approximate and its shape follows
    the order rows were inserted in, so the last places of a list can differ between two indexes
    of equal rows (which :func:`index_contents` compares exactly). The same text in two files is
    one hit shown under whichever of them ranks first, which follows that order too: a hit is named
    by the first of the places it shows."""
    queries = ["paragraph of file 3", "Document 12", "alpha paragraph 4 of file 7"]
    found = []
    with Index.open(location, create=False, backend=HashBackend()) as index:
        for query in queries:
            for mode in ("vector", "keyword", "hybrid"):
                hits = index.search(query, k=10, mode=mode, min_score=0)
                # each hit's own evidence: its shown score can be lifted by a hit ranked below it,
                # which of two tied hits that is follows the builders' commit order
                ranked = sorted(
                    (
                        own_evidence(hit),
                        *min((Path(at.root).name, at.path, at.start_line) for at in shown_places(hit)),
                    )
                    for hit in hits
                )
                if mode != "keyword" and ranked:
                    ranked = [hit for hit in ranked if hit[0] < ranked[min(4, len(ranked) - 1)][0]]
                elif len(hits) == 10:
                    ranked = [hit for hit in ranked if hit[0] < ranked[-1][0]]
                found.append(ranked)
    return found


def two_roots(tmp_path: Path) -> tuple[Path, Path]:
    """Two roots of fewer chunks together than a search reads candidates (CANDIDATE_DEPTH), so no
    keyword list is cut among chunks of equal score: which of them a cut keeps would follow the
    order the builders committed them in."""
    alpha = write_corpus(tmp_path / "alpha", files=12, version="alpha")
    beta = write_corpus(tmp_path / "beta", files=12, version="beta")
    write(beta / "shared.md", (alpha / "doc03.md").read_text())  # one chunk's vector re-used across roots
    return alpha, beta


@pytest.mark.heavy
def test_two_builders_on_different_roots_run_at_once_and_equal_one_after_the_other(postgres_server, tmp_path):
    alpha, beta = two_roots(tmp_path)
    one_after_the_other = new_database(postgres_server)
    for folder in (alpha, beta):
        with Index.open(one_after_the_other) as index:
            assert index.build(folder, backend=HashBackend(), batch_size=4, warn=print).exit_code == 0

    at_once = new_database(postgres_server)
    Index.open(at_once).close()  # the schema exists before the query processes open it
    stop = tmp_path / "stop"
    queriers = [
        subprocess.Popen(
            [sys.executable, str(QUERY_WORKER), at_once, str(stop)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(3)
    ]
    builders = [start_worker(at_once, folder, delay=0.03) for folder in (alpha, beta)]
    try:
        for builder in builders:
            wait_until_started(builder)  # both hold their root's lock at the same time
        assert all(builder.poll() is None for builder in builders)
        for builder in builders:
            assert builder.wait(timeout=120) == 0, builder.stderr.read()
    finally:
        stop.touch()
        for process in builders + queriers:
            process.wait(timeout=60)
    for querier in queriers:
        assert querier.returncode == 0, querier.stderr.read()
        assert json.loads(querier.stdout.read())["answered"] > 3

    assert index_contents(at_once) == index_contents(one_after_the_other)
    expected = answers(one_after_the_other)
    assert sum(map(len, expected)) > 20  # the comparison below compares hits, not empty lists
    assert answers(at_once) == expected


@pytest.mark.heavy
def test_the_same_root_is_refused_while_another_root_is_built(postgres_url, tmp_path):
    alpha, beta = two_roots(tmp_path)
    holder = start_worker(postgres_url, alpha, delay=0.2)
    try:
        wait_until_started(holder)
        second = start_worker(postgres_url, alpha)
        assert second.wait(timeout=60) == 3
        assert f"root {alpha.resolve()} of index" in second.stderr.read()
        with Index.open(postgres_url) as index:
            report = index.build(beta, backend=HashBackend(), warn=lambda message: None)
        assert report.exit_code == 0
        assert report.files_added == len(list(beta.glob("*.md")))  # its 12 documents and shared.md
    finally:
        holder.kill()
        holder.wait()


@pytest.mark.heavy
def test_cli_builds_queries_and_reports_status_on_postgres(postgres_server, tmp_path):
    url = new_database(postgres_server).replace("postgres@", "postgres:pw-7f3kq@")  # trust ignores it
    folder = tmp_path / "docs"
    for topic in ("bicycle-repair", "cooking"):
        for source in (SAMPLE_CORPUS / topic).iterdir():
            write(folder / topic / source.name, source.read_text(encoding="utf-8"))
    runner = CliRunner()
    built = runner.invoke(main, ["build", str(folder), "--db", url])
    assert built.exit_code == 0, built.output
    queried = runner.invoke(
        main, ["query", "how do I fix a puncture", "--json", "-k", "3"], env={"INDEX_DB": url}
    )
    assert queried.exit_code == 0, queried.output
    hits = json.loads(queried.stdout)
    assert hits[0]["path"] == "bicycle-repair/fixing-a-flat-tyre.md"
    # no cooking page answers so vague a question: the default threshold would leave nothing to filter
    vague = ["query", "how do I fix it", "--db", url, "--json", "--min-score", "0"]
    filtered = runner.invoke(main, [*vague, "--path", "cooking/*"])
    assert {hit["path"].split("/")[0] for hit in json.loads(filtered.stdout)} == {"cooking"}
    status = runner.invoke(main, ["status", "--db", url, "--json"])
    info = json.loads(status.stdout)
    assert info["index"] == url.replace(":pw-7f3kq@", ":***@")
    assert info["migrations"] == [migration.name for migration in all_migrations("postgres")]
    assert info["dimension"] == 384
    assert info["files"] == sum(path.is_file() for path in folder.rglob("*"))
    assert "pw-7f3kq" not in status.stdout  # a password no other word contains ("allow_secrets" does)
    with Index.open(url, create=False) as index:  # made once, at the end of the first build
        definitions = rows(index.store, "SELECT indexdef FROM pg_indexes WHERE tablename = 'chunks'")
    assert any("USING hnsw (embedding vector_cosine_ops)" in row[0] for row in definitions)
    assert any("USING gin (search_text)" in row[0] for row in definitions)


def test_an_unreachable_database_is_exit_4_in_one_line(tmp_path):
    url = f"postgresql://indexer@/wiki?host={tmp_path}"  # no server listens on a socket in this folder
    result = CliRunner().invoke(main, ["query", "anything", "--db", url])
    assert result.exit_code == 4
    assert result.stderr.startswith(f"error: cannot reach database {url}: ")
    assert len(result.stderr.strip().splitlines()) == 1
    with pytest.raises(DatabaseUnreachableError):
        Index.open(url)


@pytest.mark.heavy
def test_a_database_without_pgvector_names_the_sql_that_creates_it(postgres_server, postgres_url):
    with psycopg.connect(postgres_url, autocommit=True) as admin:
        admin.execute("DROP ROLE IF EXISTS plain_user")
        admin.execute("CREATE ROLE plain_user LOGIN")
    plain_url = postgres_url.replace("postgres@", "plain_user@")
    with pytest.raises(
        ConfigError, match=r"lacks the pgvector extension.*`CREATE EXTENSION vector;`.*superuser"
    ):
        Index.open(plain_url)


@pytest.mark.heavy
def test_opening_without_create_refuses_an_empty_database(postgres_url):
    with pytest.raises(ConfigError, match="no index at postgresql://.*build one first"):
        Index.open(postgres_url, create=False)


@pytest.mark.heavy
@pytest.mark.parametrize(
    "glob", ["*.md", "docs/*", "a?c.txt", "[ab]*", "[^a]*", "*[0-9].md", "x.y", "*.MD", "a+b(c)*", "*/*/*"]
)
def test_path_globs_match_what_sqlite_glob_matches(postgres_url, glob):
    paths = [
        "abc.txt",
        "a.md",
        "b.MD",
        "docs/x.md",
        "docs/sub/y.md",
        "x.y",
        "xzy",
        "c9.md",
        "a+b(c).txt",
        "a/b/c",
    ]
    sqlite = apsw.Connection(":memory:")
    expected = {path for path in paths if sqlite.execute("SELECT ? GLOB ?", (path, glob)).fetchall()[0][0]}
    with psycopg.connect(postgres_url) as connection:
        found = {
            path
            for path in paths
            if connection.execute("SELECT %s ~ %s", (path, glob_to_regex(glob))).fetchone()[0]
        }
    assert found == expected


def test_a_filter_is_one_sql_condition_per_kind_whatever_the_number_of_values():
    where, params = filter_sql(ChunkFilter(("docs/*",), ("*.md", "*.txt.gz")))
    assert where == "f.path ~ ANY(%s) AND lower(f.path) ~ ANY(%s)"
    assert params == [["^docs/.*$", "^docs/.*/.*$"], ["^.*\\.md$", "^.*\\.txt\\.gz$"]]  # a folder too
    many, _ = filter_sql(ChunkFilter(tuple(f"d{n}/*" for n in range(1000)), roots=("/a", "/b")))
    assert many == "f.path ~ ANY(%s) AND f.root = ANY(%s)"


@pytest.mark.heavy
def test_every_k_up_to_max_k_is_answered_past_what_the_hnsw_graph_returns(postgres_url, tmp_path):
    """pgvector's graph search keeps at most 1,000 candidates (``hnsw.ef_search``): more neighbours
    (vector k 1001), or a hybrid search's pool of 4 k (k 251), read every vector instead."""
    folder = tmp_path / "notes"
    for part in range(4):
        sections = (f"## Section {part}.{n}\n\nNote {n} of part {part}, topic {n % 17}." for n in range(300))
        write(folder / f"part{part}.md", "\n\n".join(sections))
    asked = [("vector", 1001), ("hybrid", 251), ("vector", MAX_K), ("hybrid", MAX_K), ("keyword", MAX_K)]
    found = {}
    for location in (postgres_url, tmp_path / "index.db"):
        with Index.open(location, backend=HashBackend()) as index:
            assert index.build(folder, chunk_tokens=MIN_CHUNK_TOKENS, warn=print).exit_code == 0
            chunks = index.store.counts()["chunks"]
            found[location] = {
                (mode, k): index.search("a note on topic 3", k, mode, min_score=0) for mode, k in asked
            }
    on_postgres, on_sqlite = found[postgres_url], found[tmp_path / "index.db"]
    assert chunks > 1001
    assert [len(on_postgres[mode, k]) for mode, k in asked[:4]] == [1001, 251, chunks, chunks]
    assert len(on_postgres["keyword", MAX_K]) >= 1200  # each section's note (the stores read "3" apart)
    # both exact: the same neighbours, in the same order but for ties (the hash model makes many)
    for k in (1001, MAX_K):
        scores = [[hit.score for hit in hits[("vector", k)]] for hits in (on_postgres, on_sqlite)]
        assert scores[0] == pytest.approx(scores[1], abs=1e-3)
    assert {(hit.path, hit.start_line) for hit in on_postgres["vector", MAX_K]} == {
        (hit.path, hit.start_line) for hit in on_sqlite["vector", MAX_K]
    }


def test_printable_url_hides_only_the_password():
    assert (
        printable_url("postgresql://bob:pw@db.internal:5433/wiki")
        == "postgresql://bob:***@db.internal:5433/wiki"
    )
    assert printable_url("postgresql://bob@db.internal/wiki") == "postgresql://bob@db.internal/wiki"


@pytest.mark.heavy
def test_index_eval_scores_the_same_on_postgres(postgres_url, tmp_path):
    from test_evaluation import tiny_collection

    folder = tiny_collection(tmp_path / "tiny")
    args = ["eval", str(folder), "--cache", str(tmp_path / "cache"), "--json"]
    runner = CliRunner()
    on_sqlite = runner.invoke(main, args)
    on_postgres = runner.invoke(main, [*args, "--db", postgres_url])
    assert on_postgres.exit_code == 0, on_postgres.output
    sqlite_scores, postgres_scores = json.loads(on_sqlite.stdout), json.loads(on_postgres.stdout)
    for mode in ("vector", "keyword", "hybrid"):
        for metric in ("ndcg@10", "recall@100", "mrr@10"):
            assert postgres_scores[mode][metric] == pytest.approx(sqlite_scores[mode][metric], abs=1e-4)
    with Index.open(postgres_url, create=False) as index:
        assert index.store.counts()["files"] == 4


@pytest.mark.heavy
def test_processes_opening_a_new_database_at_once_take_turns(postgres_url, tmp_path):
    script = "import sys; from indexer import Index; Index.open(sys.argv[1]).close()"
    openers = [
        subprocess.Popen([sys.executable, "-c", script, postgres_url], stderr=subprocess.PIPE, text=True)
        for _ in range(4)
    ]
    for opener in openers:
        assert opener.wait(timeout=60) == 0, opener.stderr.read()
    with Index.open(postgres_url, create=False) as index:
        assert index.store.applied_migrations() == [m.name for m in all_migrations("postgres")]


@pytest.mark.heavy
def test_a_store_that_read_vectors_before_the_dimension_was_fixed_still_reads_them(postgres_url):
    """psycopg prepares a statement run five times; typing the vector column must not break one
    prepared by another builder's connection before (found with two builders of a fresh index)."""
    with Index.open(postgres_url) as early, Index.open(postgres_url) as first:
        for _ in range(6):
            assert early.store.vectors_for_hashes(["nothing"]) == {}
        with first.store.transaction():
            first.store.create_vector_table(8)
        assert early.store.vectors_for_hashes(["nothing"]) == {}
