"""Search over sample_corpus/ with the embedded model: right answers first, filters, modes.

Every test runs on both stores: SQLite, and PostgreSQL with pgvector (HNSW) and tsvector keywords."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from conftest import REPO, SAMPLE_CORPUS, STORES, new_database, write
from helpers import HashBackend

from indexer import ConfigError, Index, NotInIndexError
from indexer.errors import InvalidRequestError
from indexer.search import (
    CALIBRATED_MODEL,
    CALIBRATION,
    DEFAULT_MIN_SCORE,
    KEYWORD_DISCOUNT,
    MODES,
    VECTOR_WEIGHT,
    Query,
    asked_name,
    default_min_score,
    fuse,
    keyword_ceiling,
    keyword_terms,
    page_names,
    strengths,
)
from indexer.store.records import StoredChunk

QUERIES = json.loads((REPO / "tests" / "fixtures" / "sample_queries.json").read_text())
HYBRID = json.loads((REPO / "tests" / "fixtures" / "hybrid_queries.json").read_text())
EXACT_NAMES = HYBRID["keyword"] + HYBRID["keyword_only"]
#: Questions sample_corpus/ cannot answer (none of its folders is about sport, opera or gibberish).
#: The last two share a rare word with it (a mountain, miles): the blend of cosine and keyword
#: evidence scored them 0.64 and 0.75, over the threshold.
OFF_TOPIC = [
    "who won the 1998 football world cup",
    "plot summary of the opera La Traviata",
    "flibbertigibbet zorp wibble",
    "how tall is Mount Kilimanjaro",
    "how long is a marathon in miles",
]
#: Paraphrases that avoid their page's words: the blend scored their answers 0.09, 0.19 and 0.46.
PARAPHRASES_NEAR_THE_THRESHOLD = [
    "streetlamps in town drown out the heavens; where can I escape the glow?",
    "why does my laptop lose connection whenever the neighbours are streaming?",
    "How big a rainy-day cash cushion should I keep in case I lose my job?",
]


@pytest.fixture(scope="module", params=STORES)
def index(request, tmp_path_factory):
    folder = tmp_path_factory.mktemp("corpus") / "sample"
    shutil.copytree(SAMPLE_CORPUS, folder)
    if request.param == "postgres":
        location = new_database(request.getfixturevalue("postgres_server"))
    else:
        location = folder.parent / "index.db"
    with Index.open(location) as opened:
        report = opened.build(folder, warn=lambda message: None)
        assert report.exit_code == 0
        opened.folder = folder
        yield opened


@pytest.mark.parametrize("case", QUERIES, ids=[case["expected"] for case in QUERIES])
def test_expected_file_comes_first(index, case):
    hits = index.search(case["query"], k=3, mode="vector")
    assert hits[0].path == case["expected"], [hit.path for hit in hits]
    assert case["expected"] in [hit.path for hit in index.search(case["query"], k=3, mode="hybrid")]


@pytest.mark.parametrize("case", HYBRID["keyword"], ids=[case["query"] for case in HYBRID["keyword"]])
def test_keyword_search_finds_exact_rare_tokens(index, case):
    assert index.search(case["query"], k=1, mode="keyword")[0].path == case["expected"]
    assert case["expected"] in [hit.path for hit in index.search(case["query"], k=3, mode="hybrid")]


@pytest.mark.parametrize("case", HYBRID["vector"], ids=[case["expected"] for case in HYBRID["vector"]])
def test_vector_search_finds_paraphrases(index, case):
    assert index.search(case["query"], k=1, mode="vector")[0].path == case["expected"]
    assert case["expected"] in [hit.path for hit in index.search(case["query"], k=3, mode="hybrid")]


@pytest.mark.parametrize("case", EXACT_NAMES, ids=[case["query"] for case in EXACT_NAMES])
def test_an_exact_name_comes_first_in_hybrid_search_even_where_the_vector_search_misses_it(index, case):
    # QJ7XK4ZP9 is not in the vector list's top 50: min-max blending capped it at 0.3 and buried it
    assert index.search(case["query"], k=1)[0].path == case["expected"]


def test_a_name_is_found_with_or_without_its_separators(any_index, tmp_path):
    docs = tmp_path / "docs"
    write(docs / "settings.md", "# Settings\n\nSet `max_retry_budget` in the config file.\n")
    for number in range(8):  # the name's parts, common everywhere else
        write(docs / f"notes{number}.md", f"Note {number}: the max retry count and the budget for a retry.\n")
    with Index.open(any_index, backend=HashBackend()) as index:
        index.build(docs, warn=lambda message: None)
        for query in ("max_retry_budget", "max retry budget", "MaxRetryBudget"):
            assert index.search(query, k=1, mode="keyword")[0].path == "settings.md", query


@pytest.mark.parametrize("question", OFF_TOPIC)
def test_an_off_topic_question_returns_nothing_at_the_default_threshold(index, question):
    for mode in ("hybrid", "vector"):
        assert index.search(question, k=5, mode=mode, min_score=DEFAULT_MIN_SCORE) == [], mode
        assert index.search(question, k=5, mode=mode), mode  # hits exist, they only score low


def test_real_questions_keep_their_answer_at_the_default_threshold(index):
    for case in EXACT_NAMES:
        for mode in ("hybrid", "keyword"):
            hits = index.search(case["query"], k=1, mode=mode, min_score=DEFAULT_MIN_SCORE)
            assert [hit.path for hit in hits] == [case["expected"]], (mode, case["query"])
    # these paraphrases avoid their page's words on purpose; 14 of 15 keep their answer in the top 3
    # (the fifteenth, a child's nosebleed asked without the word, does not rank it first either)
    kept = []
    for case in QUERIES + HYBRID["vector"]:
        hits = index.search(case["query"], k=3, min_score=DEFAULT_MIN_SCORE)
        kept.append(case["expected"] in [hit.path for hit in hits])
    assert sum(kept) >= 14, kept


@pytest.mark.parametrize("question", PARAPHRASES_NEAR_THE_THRESHOLD)
def test_a_paraphrase_sharing_no_word_with_its_answer_keeps_it_at_the_default_threshold(index, question):
    expected = next(case["expected"] for case in QUERIES + HYBRID["vector"] if case["query"] == question)
    for mode in ("hybrid", "vector"):
        hits = index.search(question, k=1, mode=mode, min_score=DEFAULT_MIN_SCORE)
        assert [hit.path for hit in hits] == [expected], mode


def test_a_hit_is_as_strong_as_its_cosine_or_its_keyword_evidence_less_the_discount():
    cosines, keywords = {1: 0.62, 2: 0.30, 3: 0.28}, {2: 0.55, 3: 0.98, 4: 0.20}
    # a rare name (keyword evidence near 1) is strong; a few words in common barely count
    assert strengths("hybrid", [3, 2, 1], cosines, keywords) == pytest.approx(
        [0.98 - KEYWORD_DISCOUNT, 0.30, 0.62]
    )
    # a chunk only the keyword search found has the vector list's last cosine (as fuse gives it)
    assert strengths("hybrid", [4], cosines, keywords) == [pytest.approx(0.28)]
    assert strengths("vector", [1, 2], cosines, keywords) == [0.62, 0.30]
    assert strengths("keyword", [3, 2], cosines, keywords) == [0.98, 0.55]


def test_hybrid_and_vector_scores_mean_the_same(index):
    # the answer's cosine decides both scores when its keyword evidence is weak
    question = "why does my laptop lose connection whenever the neighbours are streaming?"
    vector, hybrid = index.search(question, k=1, mode="vector")[0], index.search(question, k=1)[0]
    assert (hybrid.path, hybrid.start_line) == (vector.path, vector.start_line)
    assert hybrid.keyword_score is None or hybrid.keyword_score - KEYWORD_DISCOUNT < hybrid.vector_score
    assert hybrid.score == pytest.approx(vector.score, abs=1e-3)
    assert CALIBRATION["hybrid"] == CALIBRATION["vector"]


def test_scores_run_from_0_to_1_in_every_mode_and_follow_each_hits_own_evidence(index):
    for mode in MODES:
        hits = index.search("how do I true a wobbly wheel", k=10, mode=mode)
        assert all(0 <= hit.score <= 1 for hit in hits)
        if mode != "hybrid":  # hybrid ranks by the blend, and scores each hit by its stronger evidence
            assert [hit.score for hit in hits] == sorted((hit.score for hit in hits), reverse=True)
    hits = index.search("how do I true a wobbly wheel", k=10)
    for hit in hits:
        keyword = (hit.keyword_score or 0.0) - KEYWORD_DISCOUNT
        if hit.vector_score is None:  # it stands at the vector list's last cosine, or its keyword evidence
            assert hit.score >= CALIBRATION["hybrid"](keyword) - 1e-9
        else:
            assert hit.score == pytest.approx(CALIBRATION["hybrid"](max(hit.vector_score, keyword)))
    hit = hits[0]
    assert hit.vector_score is not None and -1 <= hit.vector_score <= 1
    assert hit.keyword_score is not None and hit.keyword_score > 0


def test_a_threshold_drops_weak_hits_wherever_they_rank(index):
    hits = index.search("how do I true a wobbly wheel", k=50)
    kept = index.search("how do I true a wobbly wheel", k=50, min_score=DEFAULT_MIN_SCORE)
    strong = [hit for hit in hits if hit.score >= DEFAULT_MIN_SCORE]
    assert strong and kept[: len(strong)] == strong  # then any strong hits ranked beyond the 50th


def test_each_mode_finds_what_the_other_misses(index):
    keyword_case, vector_case = HYBRID["keyword_only"][0], HYBRID["vector"][0]
    assert index.search(keyword_case["query"], k=1, mode="keyword")[0].path == keyword_case["expected"]
    # the model cannot read an opaque token: its best chunk is not the one that holds it
    assert keyword_case["query"] not in index.search(keyword_case["query"], k=1, mode="vector")[0].text
    assert index.search(vector_case["query"], k=1, mode="vector")[0].path == vector_case["expected"]
    keyword_hits = index.search(vector_case["query"], k=1, mode="keyword")
    assert not keyword_hits or keyword_hits[0].path != vector_case["expected"]


def test_path_filter_returns_exactly_k_hits_inside_the_filter(index):
    for mode in ("vector", "keyword", "hybrid"):
        hits = index.search("how do I fix it", k=10, mode=mode, paths=["bicycle-repair/*"])
        assert len(hits) == 10, mode
        assert all(hit.path.startswith("bicycle-repair/") for hit in hits)


def test_type_filter_and_repeated_globs(index):
    hits = index.search("notes", k=50, mode="vector", types=["txt"])
    assert hits and all(hit.path.endswith(".txt") for hit in hits)
    both = index.search("recipe", k=50, mode="vector", paths=["cooking/*", "gardening/*"])
    assert {hit.path.split("/")[0] for hit in both} == {"cooking", "gardening"}


def test_min_score_drops_weak_hits(index):
    hits = index.search("how do I fix a puncture", k=20, mode="vector", min_score=0.45)
    assert hits and all(hit.score >= 0.45 for hit in hits)
    assert len(hits) < 20


def test_a_deleted_file_is_gone_from_both_indexes(index):
    target = index.folder / "networking" / "tls-certificates.md"
    token = HYBRID["keyword"][0]["query"]
    assert index.search(token, k=1, mode="keyword")[0].path == "networking/tls-certificates.md"
    target.unlink()
    report = index.build(index.folder, warn=lambda message: None)
    assert report.files_removed == 1
    assert index.search(token, k=5, mode="keyword") == []
    everything = index.search("TLS certificate expiry and renewal", k=100, mode="vector")
    assert all(hit.path != "networking/tls-certificates.md" for hit in everything)


def test_hits_are_typed_and_cite_their_source(index):
    hit = index.search("compost pile too wet and smelly", k=1)[0]
    lines = (index.folder / hit.path).read_text().split("\n")
    assert hit.citation == f"{hit.path}:{hit.start_line}-{hit.end_line}"
    assert hit.text.split("\n")[0] == lines[hit.start_line - 1]
    assert isinstance(hit.score, float) and hit.mode == "hybrid"
    assert Path(hit.root).name == "sample"


def test_joined_forms_of_neighbouring_words_are_searched_too():
    terms = keyword_terms("read to string")
    assert terms[:2] == ["read", "string"]  # the stopword is not looked for on its own
    assert {"read_to_string", "readtostring", "to_string"} <= set(terms)
    assert keyword_terms("CMAKE_BUILD_TYPE") == ["cmake_build_type"]


def test_keyword_evidence_is_scaled_by_the_index_not_by_the_other_hits():
    # a word found in one chunk of N scores log((N - 0.5) / 1.5) in BM25, near the ceiling's log(2N + 1)
    assert keyword_ceiling(1, 10_000) == pytest.approx(9.9035, abs=1e-4)
    assert keyword_ceiling(3, 10_000) == 3 * keyword_ceiling(1, 10_000)
    assert keyword_ceiling(0, 10) == keyword_ceiling(1, 10)


def test_a_chunk_only_the_keyword_search_found_gets_the_lowest_cosine_of_the_vector_list():
    fused = fuse({1: 0.8, 2: 0.5}, {2: 0.2, 3: 1.0})
    assert fused[3] == pytest.approx(VECTOR_WEIGHT * 0.5 + (1 - VECTOR_WEIGHT) * 1.0)
    assert fused[1] == pytest.approx(VECTOR_WEIGHT * 0.8)
    assert fused[3] > fused[1]  # an exact name outranks a chunk that is only near in meaning


def test_calibration_is_increasing_and_bounded():
    for calibration in CALIBRATION.values():
        scores = [calibration(evidence) for evidence in (-1.0, 0.0, 0.3, 0.6, 1.0, 3.0)]
        assert scores == sorted(scores) and all(0 <= score <= 1 for score in scores)


def test_the_default_threshold_applies_where_scores_are_calibrated():
    assert default_min_score("hybrid", CALIBRATED_MODEL) == DEFAULT_MIN_SCORE
    assert default_min_score("keyword", "nomic-embed-text") == DEFAULT_MIN_SCORE
    assert default_min_score("hybrid", "nomic-embed-text") is None


# -- query syntax and filters (issue 14) ----------------------------------------------------------


@pytest.fixture
def notes(any_index, tmp_path):
    """Two folders of one index, with words placed for phrases, exclusions and prefixes."""
    first, second = tmp_path / "first", tmp_path / "second"
    write(first / "policy" / "keys.md", "# Keys\n\nRotate the signing keys every ninety days.\n")
    write(first / "policy" / "passwords.md", "# Passwords\n\nKeys to the server room stay with the keeper.\n")
    write(first / "guide.md", "# Guide\n\nThe configuration file sets the signing algorithm.\n")
    write(second / "travel.md", "# Travel\n\nKeep the hotel keys and the rotate schedule for the bus.\n")
    with Index.open(any_index, backend=HashBackend()) as index:
        for folder in (first, second):
            assert index.build(folder, warn=lambda message: None).exit_code == 0
        index.folders = (first, second)
        yield index


def paths_of(hits) -> set[str]:
    return {hit.path for hit in hits}


@pytest.mark.parametrize("mode", ["keyword", "hybrid", "vector"])
def test_a_quoted_phrase_keeps_only_chunks_that_hold_it(notes, mode):
    hits = notes.search('"signing keys"', k=10, mode=mode)
    assert paths_of(hits) == {"policy/keys.md"}


@pytest.mark.parametrize("mode", ["keyword", "hybrid", "vector"])
def test_a_minus_word_leaves_out_chunks_that_hold_it(notes, mode):
    with_it = paths_of(notes.search("keys", k=10, mode=mode))
    without = paths_of(notes.search("keys -hotel", k=10, mode=mode))
    assert "travel.md" in with_it and "travel.md" not in without and without


def test_a_minus_before_a_number_or_one_letter_is_text_not_an_operator():
    claim = Query.parse("E2F-1, -2, -3 knockout cells")  # a SciFact claim: E2F-1, E2F-2 and E2F-3
    assert claim.excluded == () and claim.words == "E2F-1, -2, -3 knockout cells"
    option = Query.parse("ls -l output")
    assert option.excluded == () and "-l" in option.text
    assert Query.parse('keys -hotel -"check in"').excluded == ("hotel", "check in")


def test_a_prefix_finds_every_word_it_begins(notes):
    assert paths_of(notes.search("config*", k=10, mode="keyword")) == {"guide.md"}
    assert paths_of(notes.search("config", k=10, mode="keyword")) == set()  # the whole word is not there


def test_operators_alone_or_odd_quotes_are_not_an_error_of_the_store(notes):
    assert notes.search('keys "unclosed', k=5, mode="keyword") is not None
    with pytest.raises(ConfigError, match="nothing to search for"):
        notes.search("-keys", k=5)


def test_a_root_filter_searches_one_folder_of_the_index(notes):
    first, second = notes.folders
    hits = notes.search("keys", k=10, mode="keyword", roots=[second])
    assert {hit.root for hit in hits} == {str(second)} and paths_of(hits) == {"travel.md"}
    assert {hit.root for hit in notes.search("keys", k=10, mode="keyword", roots=str(first))} == {str(first)}


def test_a_path_filter_takes_a_folder_name_as_well_as_a_glob(notes):
    assert paths_of(notes.search("keys", k=10, mode="keyword", paths="policy")) == {
        "policy/keys.md",
        "policy/passwords.md",
    }
    assert paths_of(notes.search("keys", k=10, mode="keyword", paths="policy/k*")) == {"policy/keys.md"}


@pytest.mark.parametrize("mode", ["keyword", "hybrid", "vector"])
def test_a_thousand_filters_of_each_kind_search_as_the_ones_that_match(notes, mode):
    first, _ = notes.folders
    paths = [f"nowhere{number}/*" for number in range(999)] + ["policy"]
    types = [f"x{number}" for number in range(999)] + ["md"]
    hits = notes.search("keys", k=10, mode=mode, paths=paths, types=types, roots=[first])
    assert paths_of(hits) == {"policy/keys.md", "policy/passwords.md"}


def test_a_folder_the_index_does_not_hold_is_named_with_the_folders_it_holds(notes, tmp_path):
    first, second = notes.folders
    mistyped = tmp_path / "frist"
    listed = rf"holds no folder {mistyped} \(its folders: {first}, {second}\)$"
    with pytest.raises(NotInIndexError, match=listed):
        notes.search("keys", roots=[first, mistyped])
    assert notes.search("keys", mode="keyword", roots=[f"{first}/"])  # the same folder, written otherwise


@pytest.mark.parametrize("field", ["text", "paths", "types", "roots"])
def test_a_nul_byte_in_a_search_is_a_bad_request_naming_where_it_is(notes, field):
    asked = {"text": "keys", "paths": (), "types": (), "roots": (), field: "a\0b"}
    with pytest.raises(InvalidRequestError, match=r"'a\\x00b' holds a NUL byte"):
        notes.search(asked.pop("text"), **asked)


@pytest.fixture
def reference(any_index, tmp_path):
    """API pages named after their items, where the pages that use a name most are not its own."""
    docs = tmp_path / "api"
    write(
        docs / "struct.PathBuf.md",
        "# Struct PathBuf\n\nAn owned Path. Every Path method works on a PathBuf: "
        "borrow the Path with as_path, or turn a Path into a PathBuf. " + "Path, " * 40 + "\n",
    )
    write(
        docs / "struct.Path.md",
        "# Struct Path\n\n" + "A borrowed slice of a location on disk, unsized. " * 60 + "\n",
    )
    write(docs / "fn.read.md", "# Function read\n\nThe entire contents of a file as bytes.\n")
    write(docs / "io.md", "# Module io\n\nTraits to read and write: read, read, read into buffers.\n")
    write(docs / "man" / "open.2.txt", "Open and possibly create a file; open returns a descriptor.\n")
    write(docs / "man" / "openat.2.txt", "Like open, relative to a folder: open open open open.\n")
    for number, topic in enumerate(["threads", "sockets", "time", "processes", "memory", "signals", "users"]):
        write(
            docs / f"topic{number}.md",
            f"# Module {topic}\n\nHow {topic} work on this system, with examples.\n",
        )
    with Index.open(any_index, backend=HashBackend()) as index:
        assert index.build(docs, warn=lambda message: None).exit_code == 0
        yield index


@pytest.mark.parametrize("mode", ["hybrid", "keyword"])
def test_a_name_finds_the_page_named_after_it_first(reference, mode):
    path = reference.search("Path", k=50, mode=mode, min_score=0)
    assert path[0].path == "struct.Path.md"
    # the words alone favour PathBuf's page: the page's name is what put its own first
    buf = next(hit for hit in path if hit.path == "struct.PathBuf.md")
    assert buf.keyword_score > path[0].keyword_score
    assert reference.search("read", k=3, mode=mode, min_score=0)[0].path == "fn.read.md"
    assert reference.search("std::path::Path", k=3, mode=mode, min_score=0)[0].path == "struct.Path.md"
    assert reference.search("open()", k=3, mode=mode, min_score=0)[0].path == "man/open.2.txt"


def test_a_question_is_ranked_by_its_words_and_meaning_alone(reference):
    # not one name: no page is put first for its name (the words favour PathBuf's page)
    assert reference.search("Path Path", k=1, mode="keyword", min_score=0)[0].path == "struct.PathBuf.md"


def test_which_queries_are_one_name_and_which_names_a_page_goes_by():
    assert [
        asked_name(text) for text in ("Path", "std::io::Stdout", "os.path.join", "open()", "x->next")
    ] == [
        "Path",
        "Stdout",
        "join",
        "open",
        "next",
    ]
    assert [asked_name(text) for text in ("how do I read", "E2F-1", "2024", "")] == [None, None, None, None]
    page = StoredChunk(1, "/docs", "man2/open.2.txt", 1, 9, "open(2) > NAME", "text")
    assert page_names(page) == {"open"}
    rust = StoredChunk(2, "/docs", "path/struct.Path.html", 1, 9, "Struct Path > Examples", "text")
    assert page_names(rust) == {"Path", "struct"}
