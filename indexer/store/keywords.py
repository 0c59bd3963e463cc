"""How text becomes the words of the keyword index, in every script: the one place both stores and
the search read it from.

FTS5's ``unicode61`` tokenizer and PostgreSQL's text search parser cut words at spaces and
punctuation. Chinese and Japanese put no space between words, and Korean puts them between phrases
whose particles stay attached (``데이터베이스를``): a run of their characters would be one word that
only the whole run matches, so ``数据库`` would never find ``备份数据库``. The keyword index holds such
runs as overlapping pairs of characters instead (bigrams, as Lucene's CJK analyzer and Elasticsearch's
``cjk_bigram`` do), each position the pair that starts there and the run's last character alone:
``备份数据库`` is indexed as ``备份 份数 数据 据库 库``. Then:

- a word of two characters or more is the phrase of its pairs (``数据库``: ``数据 据库``), found
  wherever those characters stand together: at the start, the middle or the end of a run;
- a single character is every position it starts (``猫*``): ``猫咪`` as well as ``小猫``, whose last
  position holds ``猫`` alone. FTS5's ``trigram`` tokenizer, the other way to match inside a run,
  finds no word shorter than three characters, and Chinese's commonest words are one or two;
- a question written without spaces is searched as its pairs, each a word of the query
  (:func:`query_words`), so the chunks that hold more of its rarer pairs rank first, as with words
  in a Latin-script question, on the same BM25 scale: a pair counts as one word.

Pairs are one term per character, as many as a character-per-word index would hold, but each far
rarer than a single character, so a query reads short lists. Text without these characters is given
to the tokenizer unchanged: Latin, Greek and Cyrillic words, and their scores, are what they were.

In source code a name is the code's own vocabulary: a function named ``calculateRetryDelay`` is how
the code says "calculate retry delay". But a name as code spells it is one word to FTS5's tokenizer
(which keeps ``_`` inside a word), and a camelCase name one word to both stores, so
``bash_completionsV2`` would only be found by the whole name, never by ``completions``. The keyword
text of a chunk of source code holds its text as it is, names whole where they stand, and after it
the parts of each name (:func:`name_parts`) as words of their own, once a name, as code search tools
index them: a part finds every name it is part of, and the parts of one name stand together, a
phrase (``user name``); the whole name stays a word, rarer than any of its parts, so the chunk that
spells the name a question names still scores first. Prose only mentions names, and its own words
already say what it is about: a chunk of any other file is indexed as its text (longer texts would
move every page's BM25 score, for words the page does not use).

PostgreSQL writes the same words with functions of its own (``keyword_text`` in
``migrations/postgres/0008_words_of_every_script.sql``, ``name_words`` in
``migrations/postgres/0011_parts_of_names_in_code.sql``), which the tests hold to :func:`index_text`.
"""

from __future__ import annotations

import re

#: The letters of scripts written without spaces between words, as code point ranges: Han
#: ideographs, Japanese kana (with the prolonged sound mark and iteration marks), Korean hangul and
#: Bopomofo. Only letters and numbers (categories L and N), which both tokenizers keep inside a word:
#: the punctuation between them (、。・「」) already separates words.
UNSPACED_LETTERS: tuple[tuple[int, int], ...] = (
    (0x1100, 0x11FF),  # Hangul Jamo
    (0x3005, 0x3007),  # 々 〆 〇
    (0x3021, 0x3029),  # Hangzhou numerals
    (0x3031, 0x3035),  # kana repeat marks
    (0x303B, 0x303C),  # 〻 〼
    (0x3041, 0x3096),  # Hiragana
    (0x309D, 0x309F),  # Hiragana iteration marks, ゟ
    (0x30A1, 0x30FA),  # Katakana
    (0x30FC, 0x30FF),  # ー and Katakana iteration marks, ヿ
    (0x3105, 0x312F),  # Bopomofo
    (0x3131, 0x318E),  # Hangul compatibility Jamo
    (0x31A0, 0x31BF),  # Bopomofo extended
    (0x31F0, 0x31FF),  # Katakana phonetic extensions
    (0x3400, 0x4DBF),  # CJK unified ideographs extension A
    (0x4E00, 0x9FFF),  # CJK unified ideographs
    (0xA960, 0xA97F),  # Hangul Jamo extended A
    (0xAC00, 0xD7FF),  # Hangul syllables, Hangul Jamo extended B
    (0xF900, 0xFAFF),  # CJK compatibility ideographs
    (0xFF66, 0xFF9F),  # half-width Katakana
    (0xFFA0, 0xFFDC),  # half-width Hangul
    (0x1B000, 0x1B16F),  # Kana supplement and extensions
    (0x20000, 0x323AF),  # CJK unified ideographs extensions B to H, compatibility supplement
)
_LETTERS = "".join(f"{chr(first)}-{chr(last)}" for first, last in UNSPACED_LETTERS)
#: A run of those letters: one regular expression with no repetition inside a repetition, so finding
#: the runs of a text is one pass over it.
_RUN = re.compile(f"[{_LETTERS}]+")
_WORD_CHARACTER = re.compile(r"\w")
#: A name as code spells it: a run of ASCII letters, digits and ``_`` with no such character and no
#: other alphabet's letter on either side (so a run is one pass: a run that fails its end is never
#: tried shorter against a neighbour it would split).
_NAME = re.compile(r"(?<![A-Za-z0-9_\u0080-\U0010ffff])[A-Za-z0-9_]+(?![A-Za-z0-9_\u0080-\U0010ffff])")
#: The parts of a name, between its ``_`` and where its camelCase humps meet: ``get User Name``,
#: ``HTTP Server`` (capitals before a capitalised word), ``APIs Of`` (a plural of capitals),
#: ``base64 Encode`` (digits stay with the letters before them). Where two alternatives match, the
#: first is the longest: Python takes the first, PostgreSQL the longest, and the two stores cut the
#: same parts.
_PART = re.compile(r"[A-Z]?[a-z0-9]+|[A-Z]{2,}s(?![a-z])|[A-Z]+[0-9]*(?![a-z])")
#: The letters and the digits of a part that mixes them: ``sha 256`` of ``sha256``.
_LETTERS_OR_DIGITS = re.compile(r"[A-Za-z]+|[0-9]+")


def index_text(text: str, code: bool = False) -> str:
    """``text`` as the keyword index reads it: each run of :data:`UNSPACED_LETTERS` written as the
    pairs of characters that start at each of its positions, the last one alone, set apart by
    spaces (``Redis缓存`` is ``Redis 缓存 存``); for a chunk of source code (``code``), then, after
    the text, the parts of each name it holds, once a name (``read_to_string(a) or
    read_to_string(b)`` gains `` read to string``); any other text unchanged."""
    if has_runs(text):
        text = _RUN.sub(lambda run: f" {' '.join(_pairs(run.group()))} ", text)
    if not code:
        return text
    parts = [part for name in dict.fromkeys(_NAME.findall(text)) for part in name_parts(name)]
    return f"{text} {' '.join(parts)}" if parts else text


def name_parts(name: str) -> list[str]:
    """The words a name is made of, in lower case, each once, in order, but the name itself and any
    single character: its parts between ``_`` and camelCase humps, and the letters and the digits of
    a part that mixes them (``bash_completionsV2``: ``bash completions v2``; ``sha256Sum``:
    ``sha256 sha 256 sum``). A word with a letter of another alphabet has none: the index holds it
    whole."""
    if not name.isascii():
        return []
    words: list[str] = []
    for part in _PART.findall(name):
        words.append(part)
        if not (part.isalpha() or part.isdigit()):
            words += _LETTERS_OR_DIGITS.findall(part)
    whole = name.lower()
    return [word for word in dict.fromkeys(word.lower() for word in words) if len(word) > 1 and word != whole]


def query_text(term: str) -> str:
    """A term of a query (a word, a name or a phrase; a trailing ``*`` asks for a prefix) as its
    words stand in :func:`index_text`, for the store to look up as a phrase: each run as its pairs,
    but a run that ends the term without its last position, so that it matches the start of a
    longer run too (``数据库`` is ``数据 据库``: found in ``数据库备份``); a run of one character that
    ends the term is a prefix (``猫`` is ``猫*``). A term without such runs is returned unchanged."""
    if not has_runs(term):
        return term
    prefix = term.endswith("*")
    body = term[:-1] if prefix else term
    runs = list(_RUN.finditer(body))
    parts: list[str] = []
    position = 0
    for run in runs:
        pairs = _pairs(run.group())
        last = run is runs[-1] and not _WORD_CHARACTER.search(body, run.end())
        if last and len(pairs) > 1:
            pairs.pop()
        prefix = prefix or (last and len(pairs[-1]) == 1)
        parts += [body[position : run.start()], *pairs]
        position = run.end()
    parts.append(body[position:])
    return " ".join(part.strip() for part in parts if part.strip()) + ("*" if prefix else "")


def query_words(word: str) -> list[str]:
    """The words a query's ``word`` is searched as: each run of :data:`UNSPACED_LETTERS` in it as
    its pairs (a run of one character as that character), the text between runs as it is
    (``redis缓存`` is ``redis``, ``缓存``); a word without such runs is itself."""
    if not has_runs(word):
        return [word]
    words: list[str] = []
    position = 0
    for run in _RUN.finditer(word):
        pairs = _pairs(run.group())
        words += [word[position : run.start()], *(pairs[:-1] or pairs)]
        position = run.end()
    words.append(word[position:])
    return [part for part in words if part]


def has_runs(text: str) -> bool:
    """Whether ``text`` holds any of :data:`UNSPACED_LETTERS` (an ASCII text, most of what a
    Latin-script index reads and is asked, is told at once, without a look at its characters)."""
    return not text.isascii() and _RUN.search(text) is not None


def _pairs(run: str) -> list[str]:
    """The pair of characters that starts at each position of ``run``, the last position alone."""
    return [run[start : start + 2] for start in range(len(run))]
