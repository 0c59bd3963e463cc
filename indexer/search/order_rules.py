"""The rules that reorder the fused list by what chunks are, not by their evidence: the best keyword
match kept among the first hits (:func:`with_keyword_best`), lists of names after the pages a
question is about (:func:`lists_last`), the code a test calls before the test
(:func:`code_before_tests`), a page's copies in other versions than the one asked for
(:func:`other_versions`, put after as lists are), a one-word lookup answered by the chunks that
hold its word (:func:`looked_up_first`), and the re-ranker's order (:func:`reranked_order`).

Apart from the search that applies them (:mod:`indexer.search.run`): each is a function of an order
and what the chunks declare, read over a fixed window (:data:`RULE_WINDOW`) so that none depends on
``k``, and each can be read and tested alone.
"""

from __future__ import annotations

import math
import re
from collections.abc import Set

from indexer.formats import is_source_code
from indexer.records import HEADING_SEPARATOR, StoredChunk
from indexer.search import calibration
from indexer.search.calibration import DEFAULT_MIN_SCORE
from indexer.search.evidence import REFERENCE_RANK, Evidence, KeywordScores
from indexer.search.name_rules import AROUND_VERSION, Version, asked_versions

#: How much a candidate's fused rank counts against the cross-encoder's logit when re-ranking: the
#: candidates are ordered by ``logit - FUSED_RANK_WEIGHT * ln(fused rank)``, so the cross-encoder
#: moves a candidate up past a better-fused one only when it reads it as clearly better (the fifth
#: passes the first at 3.2 logits more). Alone, the cross-encoder (trained on short web searches)
#: lost to the fusion on SciFact and on long written questions; fitted on SciFact's train queries,
#: other collections held out (bench/RESULTS.md, the re-ranker's calibration).
FUSED_RANK_WEIGHT = 2.0
#: How many of the first hits the rules that reorder by what chunks declare read (:func:`lists_last`,
#: :func:`defining_first`): a fixed window, so that they do not depend on ``k``.
RULE_WINDOW = 20
#: The place the best keyword match takes in a hybrid answer, at the latest, whenever keyword mode
#: would show it (:func:`with_keyword_best`): the last of the hits a search returns by default.
KEYWORD_BEST_PLACE = 5
#: How many of the chunks holding a one-word query's word keep a score at the default threshold
#: (:data:`DEFAULT_MIN_SCORE`): a word typed alone is a lookup, answered whenever the index holds it.
LOOKUP_HITS = 3
#: Words by which a question asks for tests: then a test ranks where its evidence puts it.
TEST_WORDS = frozenset("test tests tested testing".split())
#: A name as code spells it, in a test's text.
_IDENTIFIER = re.compile(r"[^\W\d]\w*")
#: A test's text piece by piece, as most languages write it without reading its grammar: a string
#: to its close or its line's end, a block comment or a triple-quoted string (Python's docstring)
#: to its close, a line comment (``//``; ``#`` at a line's start or after a space, not JavaScript's
#: ``this.#cache``), else a name (group 1). A string ends with its line: a test's chunk may start
#: inside a string of several lines (an inline snapshot), whose close would otherwise open a string
#: that hides the code after it; an apostrophe or a Rust lifetime hides one line at most. Every
#: piece matches whatever follows it, and its alternatives never match the same character, so the
#: scan is linear (without possessive quantifiers, which Python 3.10 lacks).
_CODE_PIECE = re.compile(
    r'"""(?:[^"]|"(?!""))*(?:""")?'
    r"|'''(?:[^']|'(?!''))*(?:''')?"
    r'|"(?:[^"\\\n]|\\.)*"?'
    r"|'(?:[^'\\\n]|\\.)*'?"
    r"|`[^`\n]*`?"
    r"|/\*(?:[^*]|\*(?!/))*(?:\*/)?"
    r"|(?://|(?<![^\s])#)[^\n]*"
    rf"|({_IDENTIFIER.pattern})"
)
#: A folder named as a version of the documents it holds, where a project keeps its docs' versions
#: side by side: ``v2``, ``v1.5``, ``version-2.0`` and ``version-v3.x`` (Docusaurus), ``2.x``,
#: ``1.4``; not a bare number (``2024/``, ``3/``), which names years and parts as often.
_VERSION_FOLDER = re.compile(
    r"(?:version[-_]?v?|v)(\d{1,9}(?:\.\d{1,9}){0,3})(?:\.x)?|(\d{1,9}(?:\.\d{1,9}){1,3})|(\d{1,9})\.x",
    re.IGNORECASE,
)


def reranked_order(candidates: list[int], probability: dict[int, float]) -> list[int]:
    """``candidates`` (in fused order) ranked by the cross-encoder's logit less
    :data:`FUSED_RANK_WEIGHT` times the log of their fused rank (1 for the first)."""

    def key(place: int) -> tuple[float, int]:
        chance = min(max(float(probability[candidates[place]]), 1e-12), 1 - 1e-12)
        logit = math.log(chance) - math.log1p(-chance)
        return (-(logit - FUSED_RANK_WEIGHT * math.log(place + 1)), place)

    return [candidates[place] for place in sorted(range(len(candidates)), key=key)]


def with_keyword_best(order: list[int], keyword: KeywordScores) -> list[int]:
    """``order`` with the best keyword match at :data:`KEYWORD_BEST_PLACE` at the latest whenever
    keyword mode would show it at the default threshold: the default mode never loses a strong
    keyword hit."""
    coverage = keyword.coverage
    if not coverage:
        return order
    ranked = best_matches(coverage)
    best = ranked[0]
    reference = coverage[ranked[REFERENCE_RANK - 1]] if len(ranked) >= REFERENCE_RANK else 0.0
    # read from its module when called, so a refitted map set there (bench_scores.py --fit) is the one used
    shown = calibration.KEYWORD_CALIBRATION.answer(
        Evidence(coverage[best], 0.0, coverage[best] - reference, keyword.known, keyword.together[best])
    )
    place = order.index(best) if best in order else None
    if shown < DEFAULT_MIN_SCORE or place is None or place < KEYWORD_BEST_PLACE:
        return order
    last = KEYWORD_BEST_PLACE - 1
    return [*order[:last], best, *order[last:place], *order[place + 1 :]]


def best_matches(evidence: dict[int, float]) -> list[int]:
    """The chunks of ``evidence``, best first, ties in the order ``evidence`` holds them: the store's,
    which puts equal scores in file order, so indexes holding the same files answer alike whatever
    order their chunks were written in (ids follow the builders' commits)."""
    return sorted(evidence, key=lambda chunk_id: -evidence[chunk_id])


def lists_last(order: list[int], lists: set[int]) -> list[int]:
    """``order`` with the chunks of ``lists`` among its first :data:`RULE_WINDOW` (chunks of pages
    that list names, :func:`lists_names`) after the others of the window, each side in its own
    order: an index page, a changelog or release notes name everything, and win on names over the
    page a question is about (``Response`` finds the page on responses before the release notes
    that mention it in every entry)."""
    window = order[:RULE_WINDOW]
    if not lists & set(window) or set(window) <= lists:
        return order
    return [c for c in window if c not in lists] + [c for c in window if c in lists] + order[RULE_WINDOW:]


def code_before_tests(order: list[int], chunks: dict[int, StoredChunk], words: set[str]) -> list[int]:
    """``order`` with the tests among its first :data:`RULE_WINDOW` (:attr:`StoredChunk.is_test`,
    as their language declares them) after the other chunks of the window, and the code each test
    calls at the test's place when it ranks below it: the best ranked chunk that defines what the
    test's code names (:func:`called_names`, :func:`exercised_by`). A test is written about the
    code it calls, so it is found for the same words, and often first; the question is about that
    code. Unless the question asks for tests (:data:`TEST_WORDS`): then the order stays as found."""
    window = order[:RULE_WINDOW]
    tests = [chunk_id for chunk_id in window if chunk_id in chunks and chunks[chunk_id].is_test]
    if not tests or words & TEST_WORDS:
        return order
    rank = {chunk_id: place for place, chunk_id in enumerate(window) if chunk_id not in tests}
    for test in tests:
        place = window.index(test)
        called = called_names(chunks[test].text)
        below = sorted((chunk_id for chunk_id in rank if rank[chunk_id] > place), key=rank.__getitem__)
        subject = next((c for c in below if c in chunks and exercised_by(chunks[c], called)), None)
        if subject is not None:
            rank[subject] = place
    return sorted(rank, key=rank.__getitem__) + tests + order[RULE_WINDOW:]


def other_versions(window: list[int], chunks: dict[int, StoredChunk], question: str) -> set[int]:
    """The chunks of ``window`` that are a copy of a page in another version than the one asked for,
    where that version's copy is in ``window`` too: the same file under a folder named as another
    version beside its own (:func:`version_folder`; ``docs/v1/flags.md`` and ``docs/v3/flags.md``),
    in the same root. The version asked for is the one the question names (``in v2``, ``2.0``,
    ``Jest 27``), else the newest. A project that keeps its docs' versions side by side says the
    same thing in each; the search puts the other copies after the others and lets them judge
    nothing, as it does lists of names. Source code is never such a copy (``api/v1`` and ``api/v2``
    both run), and a page no copy of the version asked for stands beside stays where its evidence
    puts it."""
    placed = {
        chunk_id: found
        for chunk_id in window
        if chunk_id in chunks
        and not is_source_code(chunks[chunk_id].path)
        and (found := version_folder(chunks[chunk_id].path))
    }
    named = _named_versions(question, {version for _, version, _ in placed.values()})
    if named is None:
        return set()
    chosen: dict[tuple[str, str, str], Version] = {}  # the version asked for of each page found
    for chunk_id, (parent, version, page) in placed.items():
        key = (chunks[chunk_id].root, parent, page)
        if not named or any(_starts(version, name) for name in named):
            chosen[key] = max(chosen.get(key, version), version)
    return {
        chunk_id
        for chunk_id, (parent, version, page) in placed.items()
        if (key := (chunks[chunk_id].root, parent, page)) in chosen and version != chosen[key]
    }


def version_folder(path: str) -> tuple[str, Version, str] | None:
    """The first folder of ``path`` named as a version (:data:`_VERSION_FOLDER`): the folder it lies
    in, its version, and the path under it (``docs``, ``(2,)``, ``flags.md`` of
    ``docs/v2/flags.md``), or None."""
    parts = path.split("/")
    for place, folder in enumerate(parts[:-1]):
        if found := _VERSION_FOLDER.fullmatch(folder):
            number = next(group for group in found.groups() if group)
            version = tuple(int(part) for part in number.split("."))
            return "/".join(parts[:place]), version, "/".join(parts[place + 1 :])
    return None


def _named_versions(question: str, versions: set[Version]) -> set[Version] | None:
    """The numbers in ``question`` that name some of ``versions``, not all: a version, its start, or
    a longer number that starts with it (``v2``, ``v2.x``, ``2.0`` for ``v2``, ``27`` of ``Jest 27``
    for ``version-27.x``). A number that starts every one of them names none (the ``2`` of ``keep
    at least 2 replicas`` beside ``2.18`` to ``2.21``). None when the question spells out a version
    (``2.19``, ``v4``, ``version 3``) that is none of them: it asks for one these hits do not hold."""
    spelled = set(asked_versions(question))
    numbers: set[Version] = set()
    for token in question.split():
        word = token.strip(AROUND_VERSION + ".").lower().removesuffix("'s").rsplit("@", 1)[-1]
        bare = word.removeprefix("version-").removeprefix("v").removesuffix(".x")
        if all(part.isdecimal() and len(part) <= 9 for part in bare.split(".")):
            number = tuple(int(part) for part in bare.split("."))
            (spelled if bare != word or "." in bare else numbers).add(number)
    named: set[Version] = set()
    for number in spelled | numbers:
        picked = [version for version in versions if _starts(version, number)]
        if picked and len(picked) < len(versions):
            named.add(number)
    if not named and any(not any(_starts(version, number) for version in versions) for number in spelled):
        return None
    return named


def _starts(version: Version, number: Version) -> bool:
    """Whether ``number``, as a question spells it, names ``version``: one starts the other."""
    return version[: len(number)] == number or number[: len(version)] == version


def called_names(code: str) -> set[str]:
    """The names a test's ``code`` spells outside its strings and comments: an expected error
    message (``should_panic(expected = "path segments ...")``) or a note names no code it calls,
    and a word of it that names a function (``segments``) would take that function for the test's
    subject."""
    return {name for name in _CODE_PIECE.findall(code) if name}


def exercised_by(chunk: StoredChunk, called: set[str]) -> bool:
    """Whether a test naming ``called`` calls what ``chunk`` defines: the definition the chunk is in
    (a code chunk's heading path after its file: each of ``Renderer`` and ``draw`` of
    ``Renderer > draw``) or one it declares (:attr:`StoredChunk.names`, under that path)."""
    parts = chunk.heading.split(HEADING_SEPARATOR)
    inside = [_IDENTIFIER.findall(part) for part in parts[1:]] if parts[0] == chunk.path else []
    within = {name for part in inside for name in part}
    if inside and within <= called:
        return True
    return any(name in called and within <= called for name in chunk.names)


def looked_up_first(
    order: list[int], evidence: dict[int, float], lists: set[int], named: int, tests: Set[int] = frozenset()
) -> tuple[list[int], frozenset[int]]:
    """For a one-word query, ``order`` with the :data:`LOOKUP_HITS` chunks that hold the word best
    (by keyword evidence; lists of names after the others, and ``tests`` after the code, as
    :func:`code_before_tests` puts them) right after the ``named`` first (the pages named after
    it), and those chunks: a word typed alone is a lookup, answered by the chunks that define or
    most use it, whatever the model makes of one word. A test that holds the word as often as the
    code it tests, in its title too, is about that code."""
    ranked = sorted(best_matches(evidence), key=lambda chunk_id: (chunk_id in lists, chunk_id in tests))
    chosen = [chunk_id for chunk_id in ranked[:LOOKUP_HITS] if chunk_id not in order[:named]]
    rest = [chunk_id for chunk_id in order[named:] if chunk_id not in chosen]
    return order[:named] + chosen + rest, frozenset(chosen)
