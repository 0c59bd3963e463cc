"""Between reading and chunking: secrets found in a document's text are replaced by ``[redacted]``
before anything of it is stored or embedded.

What counts as a secret is what a reader of the text can tell for sure, as the rule sets of secret
scanners do (detect-secrets' plugins, gitleaks' rules, from which these formats are taken):

- private-key blocks (PEM, OpenSSH, PGP, PuTTY), also on one line with ``\\n`` escapes as a GCP
  service-account JSON holds them: the key's body goes, its ``BEGIN``/``END`` lines stay;
- token formats that name their issuer: AWS access keys, GitHub, GitLab, Slack, Stripe, Google API
  keys, OpenAI, Anthropic, Hugging Face, npm, PyPI, SendGrid, Twilio, Telegram, Mailgun,
  DigitalOcean, Shopify, Azure storage keys, JWTs;
- values assigned to a name that says it holds one (``password``, ``secret``, ``token``,
  ``api_key``, ``SECRET_KEY``, ``clientSecret``...; in code, config, ``.env`` or JSON), passwords in
  URLs (``postgres://app:...@db``) and ``Bearer`` credentials, when the value looks random: at least
  8 characters of two kinds (letters, digits, symbols) whose entropy is that of a random string, and
  not a placeholder (``changeme``, ``<your-token>``, ``${TOKEN}``), an expression
  (``os.environ["TOKEN"]``) or a path.

Why not detect-secrets itself: it scans line by line in Python, 23 plugins each with their own
regular expressions, at 0.24 MB/s on CMake's manual (its 2.5 MB in 10 s, where a whole build of it
takes 1.5 s), and its entropy plugins flag every hash and identifier (34,496 findings in 0.24 MB of
that manual); it also brings requests and PyYAML. Here a document's text is scanned whole, as UTF-8
bytes, in a few passes that each run at the speed of a substring search: Python's regular
expressions are fast only from a literal, so each pattern starts with one, the token formats are
tried only at the start of a run of 16 token characters (found by ``bytes.translate`` and
``bytes.find``), and the names of secrets are found in the text lowered once.

Only the secret's characters are replaced, and a secret spread over several lines keeps its line
breaks, so every line keeps its number and chunk citations stay true.
"""

from __future__ import annotations

import dataclasses
import math
import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass

from indexer.formats.document import Document, Heading

REDACTED = "[redacted]"


@dataclass(frozen=True)
class Finding:
    """One secret redacted: the line it started on (1-based) and the rule that found it."""

    line: int
    kind: str


#: Token formats, tried at the start of each run of token characters: each names its issuer.
TOKEN_FORMATS = {
    "aws-access-key": rb"A(?:3T[A-Z0-9]|KIA|SIA|BIA|CCA)[A-Z0-9]{16}(?![A-Za-z0-9])",
    "github-token": rb"gh[pousr]_[A-Za-z0-9]{36,255}|github_pat_[A-Za-z0-9_]{22,255}",
    "gitlab-token": (
        rb"gl(?:pat|dt|ptt|rt|cbt|imt|agent|oas|soat|ft)-[A-Za-z0-9_-]{20,}"
        rb"|GR1348941[A-Za-z0-9_-]{20,}"  # a runner registration token
    ),
    "slack-token": rb"xox[abposre]-[A-Za-z0-9-]{10,}",
    "stripe-key": rb"[sr]k_(?:live|test)_[A-Za-z0-9]{16,}|whsec_[A-Za-z0-9]{24,}",
    "google-api-key": rb"AIza[0-9A-Za-z_-]{35}",
    "openai-key": (
        rb"sk-(?:[A-Za-z0-9_-]*[A-Za-z0-9]{20}T3BlbkFJ[A-Za-z0-9_-]{20,}"
        rb"|(?:proj|svcacct|admin)-[A-Za-z0-9_-]{40,})"
    ),
    "anthropic-key": rb"sk-ant-[a-z]+[0-9]*-[A-Za-z0-9_-]{80,}",
    "huggingface-token": rb"hf_[A-Za-z]{34,}(?![A-Za-z0-9])",
    "npm-token": rb"npm_[A-Za-z0-9]{36}(?![A-Za-z0-9])",
    "pypi-token": rb"pypi-AgE[A-Za-z0-9_-]{50,}",
    "twilio-key": rb"SK[0-9a-f]{32}(?![A-Za-z0-9])",
    "mailgun-key": rb"key-[0-9a-f]{32}(?![A-Za-z0-9])",
    "digitalocean-token": rb"do[por]_v1_[a-f0-9]{64}(?![A-Za-z0-9])",
    "shopify-token": rb"shp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}(?![A-Za-z0-9])",
    "jwt": rb"eyJ[A-Za-z0-9_-]{10,}\.eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}",
}
_TOKEN_KINDS = list(TOKEN_FORMATS)
_TOKEN = re.compile(
    b"|".join(b"(?P<t%d>%s)" % (number, pattern) for number, pattern in enumerate(TOKEN_FORMATS.values()))
)
#: The characters of a token (every format above starts with a run of 16 or more of them).
_TOKEN_CHARS = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-"
_SHAPE = bytes(ord("a") if byte in _TOKEN_CHARS else ord(" ") for byte in range(256))
SHORTEST_TOKEN = 16
_RUN = b"a" * SHORTEST_TOKEN
#: A private key's body after its BEGIN line: lines of base64 (and ``Proc-Type:`` headers), broken
#: by newlines or, in JSON, by ``\\n`` escapes.
_NEWLINE = rb"(?:\r?\n|(?:\\r)?\\n)"
_KEY_LINE = rb"[ \t]*(?:[A-Za-z0-9+/=]{16,}|[A-Za-z-]+: [^\r\n\\]*)"
_KEY_BODY = _NEWLINE + rb"(?P<secret>" + _KEY_LINE + rb"(?:" + _NEWLINE + _KEY_LINE + rb"?)*)"


@dataclass(frozen=True)
class Rule:
    """A secret found after a literal (the pattern's first characters, which Python's regular
    expressions search as fast as a substring): the secret is group ``secret``; ``check`` tells a
    secret from a value that only looks like one."""

    kind: str
    pattern: re.Pattern[bytes]
    check: Callable[[str], bool] | None = None


#: Names whose value is a secret, by the words they are made of (``DB_PASSWORD``, ``clientSecret``,
#: ``aws_secret_access_key``): one of these words, or one of these pairs of words in a row.
SECRET_WORDS = frozenset("password passwd pwd passphrase secret token apikey credential credentials".split())
SECRET_PAIRS = frozenset({("api", "key"), ("access", "key"), ("private", "key"), ("auth", "key")})
#: Where a name that may hold a secret can start (looked for in the text lowered): a secret word,
#: or a pair ending in "key" written as one word, with ``_`` or with ``-`` (``apiKey``, ``API_KEY``).
KEYWORDS = (
    b"pass",
    b"pwd",
    b"secret",
    b"token",
    b"credential",
    *(first.encode() + joint + b"key" for first, _ in SECRET_PAIRS for joint in (b"", b"_", b"-")),
)
#: A value that only stands for a secret: a template, a variable, a placeholder word, masked text.
PLACEHOLDER = re.compile(
    r"^[$%<{\[(*]|[{}]|\.\.\.|xxxx|\*\*\*|^(?:true|false|none|null|nil|undefined)$|"
    r"change.?me|example|your[_-]|placeholder|redacted|dummy|sample|replace",
    re.IGNORECASE,
)
#: Code, not a value: ``os.environ``, ``settings.SECRET_KEY``, ``self.token``, ``get_token``.
IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z_]*(?:\.[A-Za-z_][A-Za-z_]*)*")
#: Code too: a call, an index, a path in a module (``rand::thread_rng()``, ``env["TOKEN"]``).
EXPRESSION = re.compile(r"[()\[\]]|::")
#: Prose: two words or more, letters only (``'Password used to generate key'``).
PHRASE = re.compile(r"[A-Za-z]+(?:[ \t]+[A-Za-z]+)+")
#: The words of a name or value: ``clientSecret`` is client, Secret; ``AtomicU32`` Atomic, U, 32.
WORDS = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+")
#: A value whose runs of letters are this long on average is made of words (a type, ``password123``),
#: where a random string breaks into pieces of one or two letters.
WORDY = 3.0
#: Bits per character a random value shows at least (hex digits show 3.6 to 4, words 2.5 to 3.2);
#: a short value needs less: its characters are too few to repeat much.
MIN_ENTROPY = 3.0
#: After a name: its assignment and value, quoted or bare (``= "..."``, ``: '...'``, ``=...``); not
#: ``==`` (a comparison) nor ``::`` (a path in a module).
_ASSIGNED = re.compile(
    rb"""(?P<rest>[\w.-]{0,64})["']?[ \t]*(?:=>|:=|\?=|=(?!=)|:(?!:))[ \t]*"""
    rb"""(?:"(?P<double>[^"\n]{1,256})"|'(?P<single>[^'\n]{1,256})'|(?P<bare>[^\s'"`,;#]{1,256}))"""
)
_NAME_CHARS = frozenset(b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-")
_LONGEST_NAME = 64  # a longer run of name characters is data (base64), not a name


def looks_random(value: str, quoted: bool = False) -> bool:
    """Whether a value assigned to a secret's name is one: long enough, of two kinds of characters
    at least, as varied as a random string of its length (a date or ``aaaa1111`` is not), not made
    of words, and no placeholder, phrase, URL or path, nor (unless ``quoted``: a string's content,
    a password in a URL) a name or an expression."""
    if len(value) < 8 or PLACEHOLDER.search(value) or PHRASE.fullmatch(value):
        return False
    if not quoted and (IDENTIFIER.fullmatch(value) or EXPRESSION.search(value)):
        return False
    if value.startswith(("/", "./", "~/", "../")) or "://" in value:
        return False
    words = [word for word in WORDS.findall(value) if word.isalpha()]
    if words and sum(map(len, words)) / len(words) >= WORDY:
        return False
    kinds = sum(
        any(test(character) for character in value)
        for test in (str.islower, str.isupper, str.isdigit, lambda c: not c.isalnum())
    )
    counts = Counter(value)
    entropy = -sum(count / len(value) * math.log2(count / len(value)) for count in counts.values())
    return kinds >= 2 and entropy >= min(MIN_ENTROPY, 0.7 * math.log2(len(value)))


def a_value_that_looks_random(value: str) -> bool:
    """:func:`looks_random` for what can only be a value (a URL's password, a Bearer credential)."""
    return looks_random(value, quoted=True)


def not_an_example(value: str) -> bool:
    """AWS's documentation marks its sample keys (``AKIAIOSFODNN7EXAMPLE``)."""
    return "EXAMPLE" not in value


#: Checks of values a token format matched.
TOKEN_CHECKS: dict[str, Callable[[str], bool]] = {"aws-access-key": not_an_example}

RULES = (
    Rule("private-key", re.compile(rb"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----" + _KEY_BODY)),
    Rule("private-key", re.compile(rb"Private-Lines: [0-9]+" + _KEY_BODY)),  # PuTTY's .ppk
    Rule("azure-storage-key", re.compile(rb"AccountKey=(?P<secret>[A-Za-z0-9+/=]{86,88})")),
    Rule(
        "slack-webhook",
        re.compile(rb"hooks\.slack\.com/(?:services|workflows)/(?P<secret>[A-Za-z0-9_/]{20,})"),
    ),
    Rule("sendgrid-key", re.compile(rb"SG\.(?P<secret>[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43})")),
    Rule("telegram-token", re.compile(rb":(?P<secret>AA(?<=[0-9]{8}:AA)[A-Za-z0-9_-]{33})(?![A-Za-z0-9_-])")),
    Rule(
        "url-password",
        re.compile(rb"://[^\s/:@'\"]{0,64}:(?P<secret>[^\s/@'\"]{1,128})@[\w\[]"),
        a_value_that_looks_random,
    ),
    Rule("bearer", re.compile(rb"earer[ \t]+(?P<secret>[A-Za-z0-9_.~+/=-]{20,})"), a_value_that_looks_random),
)


def redact_document(document: Document) -> tuple[Document, list[Finding]]:
    """The document with every secret in its lines and heading titles replaced, and what was found
    (the document itself when nothing was)."""
    data = "\n".join(document.lines).encode("utf-8", "surrogatepass")
    spans = find_secrets(data)
    headings = _redact_headings(document.headings)
    if not spans and headings == document.headings:
        return document, []
    findings = [Finding(data.count(b"\n", 0, start) + 1, kind) for start, _, kind in spans]
    lines = replace_spans(data, spans).split("\n") if spans else document.lines
    return dataclasses.replace(document, lines=lines, headings=headings), findings


def redact_text(text: str) -> tuple[str, int]:
    """``text`` with its secrets replaced, and how many there were."""
    data = text.encode("utf-8", "surrogatepass")
    spans = find_secrets(data)
    return (replace_spans(data, spans) if spans else text), len(spans)


def find_secrets(data: bytes) -> list[tuple[int, int, str]]:
    """(start, end, kind) of each secret in UTF-8 ``data``, in order, none overlapping another."""
    spans = [*_tokens(data), *_after_literals(data), *_assigned_secrets(data)]
    return _without_overlaps(spans, data)


def replace_spans(data: bytes, spans: list[tuple[int, int, str]]) -> str:
    """The text with each span replaced by :data:`REDACTED`, keeping the line breaks it held (so
    every line after it keeps its number)."""
    pieces: list[bytes] = []
    at = 0
    for start, end, _ in spans:
        pieces.append(data[at:start])
        pieces.append(REDACTED.encode() + b"\n" * data.count(b"\n", start, end))
        at = end
    pieces.append(data[at:])
    return b"".join(pieces).decode("utf-8", "surrogatepass")


def is_secret_name(name: str) -> bool:
    """Whether a variable or key name says its value is a secret (``DB_PASSWORD``, ``apiKey``,
    ``aws_secret_access_key``; not ``tokenizer`` or ``max_tokens``)."""
    words = [word.lower() for word in WORDS.findall(name)]
    pairs = zip(words, words[1:], strict=False)
    return any(word in SECRET_WORDS for word in words) or any(pair in SECRET_PAIRS for pair in pairs)


def _tokens(data: bytes) -> list[tuple[int, int, str]]:
    """Tokens of a known format, each at the start of a run of token characters."""
    spans: list[tuple[int, int, str]] = []
    shape = data.translate(_SHAPE)
    at = shape.find(_RUN)
    while at >= 0:
        end = shape.find(b" ", at)
        end = len(data) if end < 0 else end
        match = _TOKEN.match(data, at)
        if match is not None:
            kind = _TOKEN_KINDS[int(match.lastgroup[1:])]
            check = TOKEN_CHECKS.get(kind)
            if check is None or check(match.group().decode("ascii")):
                spans.append((match.start(), match.end(), kind))
            end = max(end, match.end())
        at = shape.find(_RUN, end)
    return spans


def _after_literals(data: bytes) -> list[tuple[int, int, str]]:
    spans: list[tuple[int, int, str]] = []
    for rule in RULES:
        for match in rule.pattern.finditer(data):
            if rule.check is None or rule.check(match.group("secret").decode("utf-8", "replace")):
                spans.append((*match.span("secret"), rule.kind))
    return spans


def _assigned_secrets(data: bytes) -> list[tuple[int, int, str]]:
    """Values assigned to names that say they hold a secret, when the value looks like one."""
    spans: list[tuple[int, int, str]] = []
    lowered = data.lower()  # ASCII letters only: positions stay those of `data`
    read_up_to = 0  # the end of the last name read: a name holding two keywords is read once
    for position, keyword in sorted(_keywords(lowered)):
        if position < read_up_to:
            continue
        start = position
        while start > 0 and data[start - 1] in _NAME_CHARS and position - start <= _LONGEST_NAME:
            start -= 1
        assigned = _ASSIGNED.match(data, position + len(keyword))
        if assigned is None or position - start > _LONGEST_NAME:
            continue
        read_up_to = assigned.end("rest")
        if not is_secret_name(data[start:read_up_to].decode("ascii")):
            continue
        group = next(name for name in ("double", "single", "bare") if assigned.group(name) is not None)
        if looks_random(assigned.group(group).decode("utf-8", "replace"), quoted=group != "bare"):
            spans.append((assigned.start(group), assigned.end(group), "assigned-secret"))
    return spans


def _keywords(lowered: bytes) -> list[tuple[int, bytes]]:
    """(position, keyword) of each of :data:`KEYWORDS` in the lowered text."""
    found = []
    for keyword in KEYWORDS:
        at = lowered.find(keyword)
        while at >= 0:
            found.append((at, keyword))
            at = lowered.find(keyword, at + 1)
    return found


def _without_overlaps(spans: list[tuple[int, int, str]], data: bytes) -> list[tuple[int, int, str]]:
    """The spans in order, one inside or across an earlier one merged into it, each ending at the
    end of a character (a value cut at 256 bytes may end inside one)."""
    merged: list[tuple[int, int, str]] = []
    for start, end, kind in sorted(spans):
        while end < len(data) and data[end] & 0xC0 == 0x80:
            end += 1
        if merged and start < merged[-1][1]:
            last = merged[-1]
            merged[-1] = (last[0], max(last[1], end), last[2])
        else:
            merged.append((start, end, kind))
    return merged


def _redact_headings(headings: list[Heading]) -> list[Heading]:
    """Heading titles are stored with each chunk's heading path: a secret in one goes too (it is
    counted where it stands in the text)."""
    return [
        dataclasses.replace(heading, title=title) if count else heading
        for heading in headings
        for title, count in [redact_text(heading.title)]
    ]
