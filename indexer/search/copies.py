"""The same text in several files shown once (:func:`fold_copies`).

A folder often holds one text twice: a manual's one-page edition beside its chapters, a file
written out twice, a page kept unchanged in each version of a site's docs, a README copied into
the docs. Each copy matches a question as well as the other, and shown one under the other they
take the places of other answers. A hit all of whose words stand, in the same order, in hits shown
above it from other files says nothing they do not: it is folded into the one that holds most of
them, listed as one of its ``copies``, and the next hit takes its place.

Words are compared as runs of :data:`RUN_WORDS` in a row, case aside, a word keeping its sign and
the dots, hyphens and colons inside it (``-1``, ``2.0.1``, ``well-known``), so that a chunk cut at
other lines than its copy is folded where the hits above hold all it says. Each hit's runs are
compared with the kept hits' as sets, at most the window's many: the work is linear in the hits'
text. A file's own chunks are never folded into each other: they are different passages of it.
Two versions of a page, which differ in a default or a command's name, stay two hits.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import replace

from indexer.citations import format_span, parse_citation
from indexer.search.hit import Copy, Hit

#: How many words in a row make a run: enough that two texts share runs only where they share their
#: wording, not their vocabulary.
RUN_WORDS = 3

_WORD = re.compile(r"[-+]?\w+(?:[.:/-]\w+)*")
Run = tuple[str, ...]


def word_runs(text: str) -> set[Run]:
    """The runs of :data:`RUN_WORDS` words in a row in ``text``, case aside."""
    words = _WORD.findall(text.casefold())
    return set(zip(*(words[start:] for start in range(RUN_WORDS)), strict=False))  # shorter rows end


def fold_copies(hits: Iterable[Hit], k: int, window: int) -> list[Hit]:
    """The first ``k`` hits of ``hits`` (best first) that are not copies of a hit before them, each
    with where its copies are. Copies are looked for among the first ``window`` hits, as the
    order's rules look (:data:`~indexer.search.order_rules.RULE_WINDOW`), whatever ``k``: the first
    ten hits and their copies are the same with ``k`` 10, 20 or 200. ``hits`` is read only as far as
    that needs, so a caller can read chunks as they are asked for."""
    kept: list[Hit] = []
    kept_runs: list[set[Run]] = []  # each kept hit's runs of words (none past the window)
    copies: list[list[Copy]] = []
    seen: set[Run] = set()  # every kept hit's runs: a hit holding one run more is no copy
    for position, hit in enumerate(hits):
        if position >= window and len(kept) >= k:
            break
        runs = word_runs(hit.text) if position < window else set()
        if runs and runs <= seen:
            holder = _copied_from(runs, hit, kept, kept_runs)
            if holder is not None:
                copies[holder].append(Copy(hit.citation, hit.root))
                continue
        seen |= runs
        kept.append(hit)
        kept_runs.append(runs)
        copies.append([])
    return [
        replace(hit, copies=tuple(found)) if found else hit
        for hit, found in zip(kept[:k], copies[:k], strict=True)
    ]


def _copied_from(runs: set[Run], hit: Hit, kept: list[Hit], kept_runs: list[set[Run]]) -> int | None:
    """The kept hit of another file that holds most of ``runs``, where hits of other files hold every
    one of them; None where ``hit`` is not a copy. Every one: two versions of a page differ in a
    default, a number or a command's name, and a hit that says one thing the hits above do not
    is shown. There are at most ``window`` kept hits to compare with, so the work stays linear in
    the text."""
    shared = {at: runs & kept_runs[at] for at in range(len(kept)) if _apart(kept[at], hit)}
    if len(set().union(*shared.values())) < len(runs):
        return None
    return max(shared, key=lambda at: len(shared[at]))  # the first of those holding most


def _apart(one: Hit, other: Hit) -> bool:
    """Whether two hits are of different files."""
    return (one.root, one.path) != (other.root, other.path)


def shown_places(hit: Hit) -> list[Hit]:
    """``hit``, then each of its copies as a hit of its own place (folder, path, and lines or
    parts; the text is ``hit``'s), in the order a reader meets them: what a hit shows, for judging
    whether it shows a file or lines expected."""
    places = [hit]
    for copy in hit.copies:
        path, span = parse_citation(copy.citation)[0]
        if span.kind:
            place = replace(hit, root=copy.root, path=path, locator=format_span(span), copies=())
        else:
            first, last = span.first or 0, span.last or 0
            place = replace(
                hit, root=copy.root, path=path, start_line=first, end_line=last, locator="", copies=()
            )
        places.append(place)
    return places
