"""Between reading and chunking: secrets found in a document's text are replaced by ``[redacted]``
before anything of it is stored or embedded.

What counts as a secret is what a reader of the text can tell for sure, as the rule sets of secret
scanners do (gitleaks' rules and detect-secrets' plugins, from which these formats are taken):

- private-key blocks (PEM, OpenSSH, PGP, PuTTY), also on one line with ``\\n`` escapes as a GCP
  service-account JSON holds them: the key's body goes, its ``BEGIN``/``END`` lines stay;
- token formats that name their issuer (:data:`TOKEN_FORMATS`, :data:`RULES`): cloud, source
  hosting, chat, payment, AI and package-registry keys, webhooks, JWTs; an AWS secret access key
  is recognised beside its key ID, whatever it is called, as the console's CSV file holds it;
- ``Basic`` and ``Bearer`` credentials, passwords in URLs (``postgres://app:...@db``), and the
  values of a Kubernetes ``Secret``'s ``data`` (decoded) and ``stringData``, judged as passwords;
- values assigned to a name that says it holds one (in code, config, ``.env``, INI or JSON). Names
  of passwords and secrets (``DB_PASSWORD``, ``SECRET_KEY``, ``clientSecret``) hold what a person
  chose: a value of 6 characters or more with a letter and a digit or symbol (``Winter2024!``)
  goes. Names of keys and tokens (``api_key``, ``GITHUB_TOKEN``, ``ENCRYPTION_KEY``) hold what a
  machine made: the value goes when its entropy is that of a random string. Neither is taken for a
  placeholder (``changeme``, ``<your-token>``, ``${TOKEN}``, ``sk-xxxx``), a word or words joined
  (``mysecretpassword``, ``DB_PASSWORD``), an expression (``os.environ["TOKEN"]``), a path, nor
  for the value of a name that only speaks of a secret (``password_min_length``, ``token_type``).

Why not detect-secrets itself: it scans line by line in Python, each of its plugins with its own
regular expressions, several times slower than a whole build reads and chunks the same text, and
its entropy plugins flag every hash and identifier of a technical manual; it also brings requests
and PyYAML. Here a document's text is scanned whole, as UTF-8 bytes, in a few passes that each run
at the speed of a substring search: Python's regular expressions are fast only from a literal, so
each pattern starts with one (a look-behind first would make the search try every position), the
token formats are tried only at the start of a run of 16 token characters (found by
``bytes.translate`` and ``bytes.find``), and the names of secrets are found in the text lowered
once, each run of name characters read once. Every pattern's repetitions are bounded or end the
match, so no text makes one backtrack more than a bounded stretch: the scan is linear in the text
(``bench/bench_redaction.py`` measures it against reading and chunking).

Only the secret's characters are replaced, and a secret spread over several lines keeps its line
breaks, so every line keeps its number and chunk citations stay true.
"""

from __future__ import annotations

import base64
import binascii
import bisect
import dataclasses
import functools
import math
import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass

from indexer.formats.document import Document, Heading

REDACTED = "[redacted]"
#: The rules' version, recorded with the chunker's in an index's fingerprint. Raised whenever the rules
#: find more or less: an index made with older rules reads every file again once (as after a change of
#: the chunker; unchanged texts keep their vectors), so the secrets those rules missed leave it, and
#: the text they took for one comes back.
#: 2: passwords a person chose, AWS secret keys beside their ID, Kubernetes Secrets, Basic
#: credentials, more issuers' formats.
#: 3: a line that held a secret is read by the model as written, redacted (an AsciiDoc title or link
#: macro had been read from the line before its secret was replaced).
#: 4: a reStructuredText or MyST role after a secret's name is no value (``you can pass
#: :class:`Path```, ``pass :option:`--log-file-mode=a```).
#: 5: a typographic closing quote after a bare value is not part of it (``‘--password=PASSWORD’``);
#: choices (``on/off``) and a word before a sentence's full stop are no secret.
#: 6: nor is it where a sentence's stop follows the quote (``‘--http-password=STRING’.``).
#: 7: a type a doc comment gives a secret's name is no value (``password: string|null``).
REDACTION_VERSION = 7

#: The kind of a secret found by the name it is assigned to.
ASSIGNED = "assigned-secret"
#: (start, end, kind) of one secret in the text's UTF-8 bytes.
Span = tuple[int, int, str]


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
    "slack-token": rb"xox[abposre]-[A-Za-z0-9-]{10,}|xapp-[0-9]-[A-Za-z0-9-]{20,}",
    "stripe-key": rb"[sr]k_(?:live|test)_[A-Za-z0-9]{16,}|whsec_[A-Za-z0-9]{24,}",
    "google-api-key": rb"AIza[0-9A-Za-z_-]{35}",
    "google-oauth-secret": rb"GOCSPX-[A-Za-z0-9_-]{28}",
    "openai-key": (
        rb"sk-(?:[A-Za-z0-9_-]*[A-Za-z0-9]{20}T3BlbkFJ[A-Za-z0-9_-]{20,}"
        rb"|(?:proj|svcacct|admin)-[A-Za-z0-9_-]{40,})"
    ),
    "anthropic-key": rb"sk-ant-[a-z]+[0-9]*-[A-Za-z0-9_-]{80,}",
    "huggingface-token": rb"(?:hf|api_org)_[A-Za-z]{34,}(?![A-Za-z0-9])",
    "groq-key": rb"gsk_[A-Za-z0-9]{52}(?![A-Za-z0-9])",
    "replicate-token": rb"r8_[A-Za-z0-9]{37}(?![A-Za-z0-9])",
    "perplexity-key": rb"pplx-[A-Za-z0-9]{48}(?![A-Za-z0-9])",
    "npm-token": rb"npm_[A-Za-z0-9]{36}(?![A-Za-z0-9])",
    "pypi-token": rb"pypi-AgE[A-Za-z0-9_-]{50,}",
    "docker-token": rb"dckr_pat_[A-Za-z0-9_-]{27,}",
    "twilio-key": rb"SK[0-9a-f]{32}(?![A-Za-z0-9])",
    "mailgun-key": rb"key-[0-9a-f]{32}(?![A-Za-z0-9])",
    "mailchimp-key": rb"[0-9a-f]{32}-us[0-9]{1,2}(?![A-Za-z0-9])",
    "digitalocean-token": rb"do[por]_v1_[a-f0-9]{64}(?![A-Za-z0-9])",
    "shopify-token": rb"shp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}(?![A-Za-z0-9])",
    "databricks-token": rb"dapi[a-f0-9]{32}(?:-[0-9])?(?![A-Za-z0-9])",
    "linear-key": rb"lin_api_[A-Za-z0-9]{40}(?![A-Za-z0-9])",
    "postman-key": rb"PMAK-[a-fA-F0-9]{24}-[a-fA-F0-9]{34}(?![A-Za-z0-9])",
    "pulumi-token": rb"pul-[a-f0-9]{40}(?![A-Za-z0-9])",
    "grafana-token": rb"glc_[A-Za-z0-9+/]{32,400}={0,2}|glsa_[A-Za-z0-9]{32}_[A-Fa-f0-9]{8}",
    "atlassian-token": rb"ATATT3[A-Za-z0-9_=-]{186}",
    "newrelic-key": rb"NRAK-[A-Z0-9]{27}(?![A-Za-z0-9])",
    "square-token": rb"sq0(?:atp|csp)-[0-9A-Za-z_-]{22,43}",
    "notion-token": rb"ntn_[0-9]{11}[A-Za-z0-9]{35}(?![A-Za-z0-9])",
    "supabase-token": rb"sbp_[a-f0-9]{40}(?![A-Za-z0-9])",
    "sentry-token": rb"sntryu_[a-f0-9]{64}(?![A-Za-z0-9])|sntrys_eyJ[A-Za-z0-9+/=_-]{40,}",
    "heroku-key": rb"HRKU-AA[0-9A-Za-z_-]{58}",
    "buildkite-token": rb"bkua_[a-f0-9]{40}(?![A-Za-z0-9])",
    "tailscale-key": rb"tskey-(?:api|auth|client|webhook)-[A-Za-z0-9]{6,}-[A-Za-z0-9]{16,}",
    "planetscale-token": rb"pscale_(?:tkn|pw|oauth)_[A-Za-z0-9=._-]{32,64}",
    "onepassword-token": rb"ops_eyJ[A-Za-z0-9+/=]{250,}",
    "age-secret-key": rb"AGE-SECRET-KEY-1[QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L]{58}",
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
#: An AWS secret access key: 40 characters of base64, not part of a longer run of them.
_AWS_SECRET = re.compile(rb"(?<![A-Za-z0-9+/])[A-Za-z0-9+/]{40}(?![A-Za-z0-9+/=])")
#: How far from its key ID an AWS secret key is looked for (a CSV row, an INI section, a JSON object).
AWS_PAIR_REACH = 300
_AWS_SECRET_KINDS = (re.compile(rb"[a-z]"), re.compile(rb"[A-Z]"), re.compile(rb"[0-9+/]"))
#: A private key's body after its BEGIN line: lines of base64 (and ``Proc-Type:`` headers), broken
#: by newlines or, in JSON, by ``\\n`` escapes.
_NEWLINE = rb"(?:\r?\n|(?:\\r)?\\n)"
_KEY_LINE = rb"[ \t]*(?:[A-Za-z0-9+/=]{16,}|[A-Za-z-]+: [^\r\n\\]*)"
_KEY_BODY = _NEWLINE + rb"(?P<secret>" + _KEY_LINE + rb"(?:" + _NEWLINE + _KEY_LINE + rb"?)*)"


@dataclass(frozen=True)
class Rule:
    """A secret found after a literal (the pattern's first characters, which Python's regular
    expressions search as fast as a substring, and only when nothing comes before them: a
    look-behind there makes the search try every position): the secret is group ``secret``, with
    the characters of ``back`` just before it (a Telegram bot's ID before ``:AA``, which the
    pattern checks in a look-behind after the literal); ``alone``: the literal must not end a
    word (``hvs.`` but not ``nhvs.``); ``check`` tells a secret from a value that only looks like
    one."""

    kind: str
    pattern: re.Pattern[bytes]
    check: Callable[[str], bool] | None = None
    back: frozenset[int] = frozenset()
    alone: bool = False


_WORD_BYTES = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789")
#: The most characters a rule's secret extends back over (a Telegram bot's ID has 8 to 10 digits).
LONGEST_BACK = 16


#: Words of a name whose value is a secret a person chose, or a machine made (``DB_PASSWORD``,
#: ``clientSecret``, ``GITHUB_TOKEN``, ``aws_secret_access_key``); a word of one case may end with one
#: (``PGPASSWORD``, ``authtoken``). Pairs of words (``api_key``) and a name ending in ``key`` after
#: another word (``signing_key``; ``key`` alone names a map's keys) hold what a machine made.
PASSWORD_WORDS = frozenset("password passwd pwd pass passphrase secret".split())
TOKEN_WORDS = frozenset("token apikey credential credentials creds".split())
SECRET_PAIRS = frozenset(
    {("api", "key"), ("access", "key"), ("private", "key"), ("auth", "key"), ("secret", "key")}
)
_PASSWORD_SUFFIXES = ("password", "passwd", "passphrase", "secret")
_TOKEN_SUFFIXES = ("token", *("".join(pair) for pair in SECRET_PAIRS))
#: Words before ``key`` that make it no secret (a table's, a map's, a keyboard's, a public one).
PLAIN_KEYS = frozenset(
    """public pub primary foreign sort partition cache hash row lookup map dict index unique composite
    group bucket schema sequence idx natural hot i18n translation message
    """.split()
)
#: Words that say a name speaks of a secret without holding it, when the name ends with one
#: (``password_min_length``, ``token_type``, ``secret_santa_date``)...
ABOUT_SECRETS = frozenset(
    """name names length len size type file files path dir url uri endpoint field label prompt policy
    format hint regex pattern min max count date time timeout ttl expiry expires expiration header
    env version mode method algorithm algo enabled required ref arn param placeholder rotation reset
    strength validator validation""".split()
)
#: ...or holds one anywhere (``csrf_token``, ``public_key``, ``hashed_password``).
NEVER_SECRET = frozenset("csrf xsrf public publishable hash digest".split())
#: Where a name that may hold a secret can start (looked for in the text lowered).
KEYWORDS = (b"pass", b"pwd", b"secret", b"token", b"credential", b"creds", b"key")
#: Values that only stand for a secret: a template or variable, an ellipsis, a placeholder word.
TEMPLATE = re.compile(
    r"\$\{|\{\{|\}\}|\{%|<%|%\(|\.\.\.|…|^\$[A-Za-z_]\w*$|^%\w+%$|^<[^<>]*>$|^\{[^{}]*\}$|^\[[^\[\]]*\]$"
)
PLACEHOLDER = re.compile(
    r"^(?:true|false|yes|no|on|off|none|null|nil|undefined|required|optional|string|str)$|"
    r"change.?me|example|your[_-]?|placeholder|redacted|dummy|sample|replace|insert[_-]|fixme|todo",
    re.IGNORECASE,
)
_STANDS_FOR_ONE = re.compile(f"{TEMPLATE.pattern}|{PLACEHOLDER.pattern}", re.IGNORECASE)
#: Characters that mask a value (``****``, ``sk-xxxx``): a value made mostly of one is no secret.
MASKS = "*xX•#"
#: Code, not a value: ``os.environ``, ``settings.SECRET_KEY``, ``self.token``, ``get_token``.
IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z_]*(?:\.[A-Za-z_][A-Za-z_]*)*")
#: Code too: a call, an index, a path in a module (``rand::thread_rng()``, ``env["TOKEN"]``).
EXPRESSION = re.compile(r"[()\[\]]|::")
#: Prose: two words or more, letters only (``'Password used to generate key'``).
PHRASE = re.compile(r"[A-Za-z]+(?:[ \t]+[A-Za-z]+)+")
#: Words joined, each of one case: a name, not a password (``DB_PASSWORD``, ``my-app-secret``); at
#: the end of a sentence too (``--password=PASSWORD.``).
JOINED_WORDS = re.compile(r"(?:[a-z]+|[A-Z][a-z]*|[A-Z]+)(?:[-_.:](?:[a-z]+|[A-Z][a-z]*|[A-Z]+))*")
#: The choices a setting's documentation lists for its value (``ask_password = on/off``).
CHOICES = re.compile(r"(?:on|off|yes|no|true|false)(?:/(?:on|off|yes|no|true|false))+", re.IGNORECASE)
#: A type, as a doc comment gives one to a secret's name, bare: a nullable type or a union of types,
#: each a name of letters (``?string``, ``string|null``, ``\\App\\Secret|false``, PHPDoc's); a
#: password a person chose has a digit or a symbol in its parts.
TYPE = re.compile(r"\?[A-Za-z_\\]{1,64}|[A-Za-z_\\]{1,64}(?:\|[A-Za-z_\\]{1,64}){1,16}")
#: A reference to a secret kept elsewhere: ``urn:k8s:secret:db:password``, ``vault:secret/db``,
#: ``arn:aws:secretsmanager:...``.
REFERENCE = re.compile(r"[a-z][a-z0-9-]{1,15}:[^\s:/]*[:/]")
#: A file's path (``/etc/app/key.pem``, ``~/.ssh/id_rsa``), not base64 that starts with a slash.
PATH = re.compile(r"(?:~|\.{1,2})?/[\w.@~%-]*(?:/[\w.@~%-]*)*")
UUID = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")
#: A password's hash as crypt(3), htpasswd and argon2 write it: what checks a password, not one.
CRYPT_HASH = re.compile(r"(?:^|:)\$(?:2[abxy]?|apr1|1|5|6|y|argon2(?:id|i|d)|scrypt|pbkdf2[\w-]*)\$")
_LETTER = re.compile(r"[^\W\d_]")
EMAIL = re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+")
#: The words of a name or value: ``clientSecret`` is client, Secret; ``AtomicU32`` Atomic, U, 32.
WORDS = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+")
#: A value whose runs of letters are this long on average is made of words (a type, ``password123``),
#: where a random string breaks into pieces of one or two letters.
WORDY = 3.0
#: Bits per character a random value shows at least (hex digits show 3.6 to 4, words 2.5 to 3.2);
#: a short value needs less: its characters are too few to repeat much.
MIN_ENTROPY = 3.0
#: The shortest password a person chose that is taken for one.
SHORTEST_PASSWORD = 6
#: After a name: its assignment (a type annotation allowed: ``api_key: str = ...``) and value, quoted
#: or bare (``= "..."``, ``: '...'``, ``=...``); not ``==`` (a comparison) nor ``::`` (a path).
_ASSIGNED = re.compile(
    rb"""["']?\]?[ \t]{0,16}"""
    rb"""(?::[ \t]{0,16}[A-Za-z_][\w.\[\], |]{0,64}?[ \t]{0,16}=(?!=)|=>|:=|\?=|=(?!=)|:(?!:))"""
    rb"""[ \t]{0,16}(?:"(?P<double>[^"\n]{1,512})"|'(?P<single>[^'\n]{1,512})'"""
    rb"""|(?P<bare>[^\s'"`,;#][^\s'"`,;]{0,511}))"""
)
_NAME_SHAPE = bytes(
    ord("a") if chr(byte).isascii() and (chr(byte).isalnum() or chr(byte) in "_.-") else ord(" ")
    for byte in range(256)
)
#: The typographic closing quotes, as UTF-8: ’ ” › ».
_CLOSING_QUOTES = tuple(quote.encode() for quote in "\u2019\u201d\u203a\u00bb")
#: What may end a sentence after a quoted value: ``‘--password=PASSWORD’.``
_SENTENCE_STOPS = b".,;:!?"
_LONGEST_NAME = 64  # a longer run of name characters is data (base64), not a name
_INSIDE_A_VALUE = frozenset(b":/=@")


def looks_random(value: str, quoted: bool = False) -> bool:
    """Whether a value assigned to a key's or token's name is one: long enough, of two kinds of
    characters at least, as varied as a random string of its length (a date or ``aaaa1111`` is
    not), not made of words, and no placeholder, phrase, URL or path, nor (unless ``quoted``: a
    string's content, a password in a URL) a name or an expression."""
    if len(value) < 8 or not _a_literal(value, quoted):
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


def looks_chosen(value: str, quoted: bool = False) -> bool:
    """Whether a value assigned to a password's or secret's name is one a person chose
    (``Winter2024!``, ``hunter2hunter2``): :data:`SHORTEST_PASSWORD` characters or more, a letter
    and a digit or symbol (or letters as random as a machine's), and no placeholder, phrase, path,
    address, nor words joined (``DB_PASSWORD``, ``my-app-secret``); nor, unless ``quoted``, a name or
    an expression."""
    if len(value) < SHORTEST_PASSWORD or not _a_literal(value, quoted):
        return False
    if not value.isalpha():
        return _LETTER.search(value) is not None and not EMAIL.fullmatch(value)
    return looks_random(value, quoted)


def _a_literal(value: str, quoted: bool) -> bool:
    """Not a placeholder, a reference, a masked value, prose, words joined, a type, a password's
    hash, a UUID, a path or URL; nor, bare, code."""
    if _STANDS_FOR_ONE.search(value) or PHRASE.fullmatch(value) or CHOICES.fullmatch(value) or _masked(value):
        return False
    if REFERENCE.match(value) or JOINED_WORDS.fullmatch(value.removesuffix(".")) or CRYPT_HASH.search(value):
        return False
    if not quoted and TYPE.fullmatch(value):
        return False
    if UUID.fullmatch(value) or ('"' in value and "'" in value):
        return False  # an identifier; code that joins strings (``'" + key + "'``)
    if not quoted and (IDENTIFIER.fullmatch(value) or EXPRESSION.search(value)):
        return False
    return not (PATH.fullmatch(value) or "://" in value or value[1:3] == ":\\")


def _masked(value: str) -> bool:
    """Made mostly of one masking character (``********``, ``sk-xxxxxxxxxxxx``)."""
    most = max((value.count(mask) for mask in MASKS), default=0)
    return most >= 4 and most * 5 >= len(value) * 2


def not_an_example(value: str) -> bool:
    """AWS's documentation marks its sample keys (``AKIAIOSFODNN7EXAMPLE``)."""
    return "EXAMPLE" not in value


def a_basic_credential(value: str) -> bool:
    """A ``Basic`` credential is base64 of ``user:password``: a word after "Basic" is not."""
    try:
        decoded = base64.b64decode(value + "=" * (-len(value) % 4), validate=True).decode("ascii")
    except (binascii.Error, UnicodeDecodeError):
        return False
    user, colon, password = decoded.partition(":")
    return bool(colon and password) and decoded.isprintable() and looks_chosen(password, quoted=True)


#: Checks of values a token format matched.
TOKEN_CHECKS: dict[str, Callable[[str], bool]] = {"aws-access-key": not_an_example}

RULES = (
    Rule("private-key", re.compile(rb"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----" + _KEY_BODY)),
    Rule("private-key", re.compile(rb"Private-Lines: [0-9]+" + _KEY_BODY)),  # PuTTY's .ppk
    Rule("azure-storage-key", re.compile(rb"AccountKey=(?P<secret>[A-Za-z0-9+/=]{86,88})")),
    Rule(
        "azure-client-secret",
        re.compile(rb"(?P<secret>Q~(?<=[A-Za-z0-9_~.]{3}[0-9]Q~)[A-Za-z0-9_~.-]{31,34})(?![A-Za-z0-9_~.-])"),
        back=frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_~."),
    ),
    Rule(
        "slack-webhook",
        re.compile(rb"hooks\.slack\.com/(?:services|workflows)/(?P<secret>[A-Za-z0-9_/]{20,})"),
    ),
    Rule(
        "discord-webhook",
        re.compile(rb"\.com/api/webhooks/[0-9]{1,24}/(?P<secret>[A-Za-z0-9_-]{60,68})(?![A-Za-z0-9_-])"),
    ),
    Rule("sendgrid-key", re.compile(rb"SG\.(?P<secret>[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43})")),
    Rule(
        "telegram-token",
        re.compile(rb"(?P<secret>:AA(?<=[0-9]{8}:AA)[A-Za-z0-9_-]{33})(?![A-Za-z0-9_-])"),
        back=frozenset(b"0123456789"),
    ),
    Rule("vault-token", re.compile(rb"hv[sb]\.(?P<secret>[A-Za-z0-9_-]{90,})"), alone=True),
    Rule(
        "doppler-token",
        re.compile(rb"dp\.(?:pt|st|sa|ct|scim)\.(?P<secret>[A-Za-z0-9]{40,44})"),
        alone=True,
    ),
    Rule("dropbox-token", re.compile(rb"sl\.(?P<secret>[A-Za-z0-9_-]{130,})"), alone=True),
    Rule("google-oauth-token", re.compile(rb"ya29\.(?P<secret>[A-Za-z0-9_-]{30,})"), alone=True),
    Rule("google-refresh-token", re.compile(rb"1//0(?P<secret>[A-Za-z0-9_-]{40,})"), alone=True),
    Rule(
        "mapbox-token",
        re.compile(rb"sk\.(?P<secret>eyJ[A-Za-z0-9_-]{50,}\.[A-Za-z0-9_-]{20,})"),
        alone=True,
    ),
    Rule(
        "url-password",
        re.compile(rb"://[^\s/:@'\"]{0,64}:(?P<secret>[^\s/@'\"]{1,128})@[\w\[]"),
        lambda value: looks_chosen(value, quoted=True),
    ),
    Rule(
        "bearer",
        re.compile(rb"earer[ \t]{1,16}(?P<secret>[A-Za-z0-9_.~+/=-]{20,})"),
        lambda value: looks_random(value, quoted=True),
    ),
    Rule(
        "basic-auth", re.compile(rb"Basic[ \t]{1,16}(?P<secret>[A-Za-z0-9+/]{8,}={0,2})"), a_basic_credential
    ),
)


def redact_document(document: Document) -> tuple[Document, list[Finding]]:
    """The document with every secret in its lines and heading titles replaced, and what was found
    (the document itself when nothing was). A line that held a secret loses what its reader made of
    it (:attr:`Document.read_as`: an AsciiDoc title without its marks, a link macro as its text),
    which was read from the line before the secret was replaced: the model reads the line as
    written, redacted, so no secret reaches an embedding backend either."""
    data = "\n".join(document.lines).encode("utf-8", "surrogatepass")
    spans = find_secrets(data)
    headings = _redact_headings(document.headings)
    if not spans and headings == document.headings:
        return document, []
    breaks = [match.start() for match in re.finditer(b"\n", data)] if spans else []
    findings = [Finding(bisect.bisect_left(breaks, start) + 1, kind) for start, _, kind in spans]
    touched = {
        line
        for start, end, _ in spans
        for line in range(bisect.bisect_left(breaks, start) + 1, bisect.bisect_left(breaks, end - 1) + 2)
    }
    read_as = {line: text for line, text in document.read_as.items() if line not in touched}
    lines = replace_spans(data, spans).split("\n") if spans else document.lines
    return dataclasses.replace(document, lines=lines, headings=headings, read_as=read_as), findings


def redact_text(text: str) -> tuple[str, int]:
    """``text`` with its secrets replaced, and how many there were."""
    data = text.encode("utf-8", "surrogatepass")
    spans = find_secrets(data)
    return (replace_spans(data, spans) if spans else text), len(spans)


def find_secrets(data: bytes) -> list[Span]:
    """(start, end, kind) of each secret in UTF-8 ``data``, in order, none overlapping another."""
    tokens = _tokens(data)
    spans = [
        *tokens,
        *_aws_secret_keys(data, tokens),
        *_after_literals(data),
        *_assigned_secrets(data),
        *_kubernetes_secret_data(data),
    ]
    return _without_overlaps(spans, data)


def replace_spans(data: bytes, spans: list[Span]) -> str:
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


@functools.lru_cache(maxsize=4096)
def secret_name_kind(name: str) -> str | None:
    """What a variable or key name says its value is: ``"password"`` (one a person chose:
    ``DB_PASSWORD``, ``SECRET_KEY``), ``"token"`` (one a machine made: ``apiKey``, ``GITHUB_TOKEN``,
    ``ENCRYPTION_KEY``), or None (``tokenizer``, ``max_tokens``, ``password_min_length``,
    ``public_key``, ``csrf_token``)."""
    words = [word.lower() for word in WORDS.findall(name)]
    if not words or words[-1] in ABOUT_SECRETS or any(never in name.lower() for never in NEVER_SECRET):
        return None
    if any(word in PASSWORD_WORDS or word.endswith(_PASSWORD_SUFFIXES) for word in words):
        return "password"
    if any(word in TOKEN_WORDS or word.endswith(_TOKEN_SUFFIXES) for word in words):
        return "token"
    if words[-1] == "key" and len(words) > 1 and words[-2] not in PLAIN_KEYS:
        return "token"
    return "token" if any(pair in SECRET_PAIRS for pair in zip(words, words[1:], strict=False)) else None


def is_secret_name(name: str) -> bool:
    """Whether a variable or key name says its value is a secret (see :func:`secret_name_kind`)."""
    return secret_name_kind(name) is not None


def _tokens(data: bytes) -> list[Span]:
    """Tokens of a known format, each at the start of a run of token characters."""
    spans: list[Span] = []
    shape = data.translate(_SHAPE)
    at = shape.find(_RUN)
    while at >= 0:
        end = shape.find(b" ", at)
        end = len(data) if end < 0 else end
        match = _TOKEN.match(data, at)
        if match is not None and match.lastgroup is not None:
            kind = _TOKEN_KINDS[int(match.lastgroup[1:])]
            check = TOKEN_CHECKS.get(kind)
            if check is None or check(match.group().decode("ascii")):
                spans.append((match.start(), match.end(), kind))
            end = max(end, match.end())
        at = shape.find(_RUN, end)
    return spans


def _aws_secret_keys(data: bytes, tokens: list[Span]) -> list[Span]:
    """The secret access key that goes with an AWS key ID, found near it whatever it is called (the
    console's CSV file names it in a header line): 40 characters of base64 with capitals, small
    letters and digits or symbols, as no hash, word or name is. Stretches near several key IDs are
    read once."""
    spans: list[Span] = []
    stretches: list[list[int]] = []
    for start, end, kind in tokens:
        if kind != "aws-access-key":
            continue
        near = [max(0, start - AWS_PAIR_REACH), min(len(data), end + AWS_PAIR_REACH)]
        if stretches and near[0] <= stretches[-1][1]:
            stretches[-1][1] = near[1]
        else:
            stretches.append(near)
    for start, end in stretches:
        for match in _AWS_SECRET.finditer(data, start, end):
            if all(kinds.search(match.group()) for kinds in _AWS_SECRET_KINDS):
                spans.append((*match.span(), "aws-secret-key"))
    return spans


def _after_literals(data: bytes) -> list[Span]:
    spans: list[Span] = []
    for rule in RULES:
        for match in rule.pattern.finditer(data):
            if rule.alone and match.start() and data[match.start() - 1] in _WORD_BYTES:
                continue
            if rule.check is None or rule.check(match.group("secret").decode("utf-8", "replace")):
                start, end = match.span("secret")
                reach = max(0, start - LONGEST_BACK)
                while start > reach and data[start - 1] in rule.back:
                    start -= 1
                spans.append((start, end, rule.kind))
    return spans


def _assigned_secrets(data: bytes) -> list[Span]:
    """Values assigned to names that say they hold a secret, when the value looks like one. Each run
    of name characters holding a keyword is read once, with the assignment after it."""
    spans: list[Span] = []
    shape = data.translate(_NAME_SHAPE)
    read_up_to = 0  # the end of the last run of name characters read
    for position in sorted(_keywords(data.lower())):
        if position < read_up_to:
            continue
        reach = max(0, position - _LONGEST_NAME)
        start = shape.rfind(b" ", reach, position) + 1
        end = shape.find(b" ", position)
        end = len(data) if end < 0 else end
        read_up_to = end
        if (start == 0 and reach > 0) or end - start > _LONGEST_NAME:
            continue  # a run longer than any name: data (base64), not a name
        if start > 0 and data[start - 1] in _INSIDE_A_VALUE:
            continue  # ``urn:k8s:secret:db``, ``/secret:x``: a piece of a value, not a name
        assigned = _ASSIGNED.match(data, end)  # first: most names in prose are given no value
        kind = secret_name_kind(data[start:end].decode("ascii")) if assigned is not None else None
        if assigned is None or kind is None:
            continue
        group = next(name for name in ("double", "single", "bare") if assigned.group(name) is not None)
        value = assigned.group(group)
        if group == "bare" and _a_role(data, assigned.end(group)):
            continue  # ``pass :class:`Path```: the name is a word of prose, the "value" a role's name
        if group == "bare":  # closing brackets after a bare value are the code's: ``{"pw": form.pw}``
            value = _before_closing_quote(value.rstrip(b")]}"))
        judge = looks_chosen if kind == "password" else looks_random
        if value and judge(value.decode("utf-8", "replace"), quoted=group != "bare"):
            start = assigned.start(group)
            spans.append((start, start + len(value), ASSIGNED))
    return spans


def _before_closing_quote(value: bytes) -> bytes:
    """A bare value without the typographic closing quote that ends it, which ends the quoted text it
    is in (prose quotes an option so: ``‘--password=PASSWORD’``, maybe before the sentence's stop:
    ``‘--password=PASSWORD’.``), not the value. A quote inside the value, or one that also opens
    (Swedish ``”``, German ``»``), is the value's."""
    for quote in _CLOSING_QUOTES:
        before, found, after = value.rpartition(quote)
        if found and before and not value.startswith(quote) and not after.strip(_SENTENCE_STOPS):
            return before
    return value


def _a_role(data: bytes, end: int) -> bool:
    """Whether a bare value ending at ``end`` is the name of a reStructuredText or MyST role: it ends
    with ``:`` and a backtick follows (``:class:`Path```, ``{option}`--x```), the markup of a page
    that names a thing, never an assignment."""
    return data[end - 1 : end] in (b":", b"}") and data[end : end + 1] == b"`"


def _keywords(lowered: bytes) -> list[int]:
    """The position of each of :data:`KEYWORDS` in the lowered text."""
    found = []
    for keyword in KEYWORDS:
        at = lowered.find(keyword)
        while at >= 0:
            found.append(at)
            at = lowered.find(keyword, at + 1)
    return found


_KUBERNETES_SECRET = re.compile(rb"kind:[ \t]{0,8}[\"']?Secret[\"']?[ \t]*\r?$", re.MULTILINE)
_DATA_BLOCK = re.compile(rb"(stringData|data):[ \t]*\r?$", re.MULTILINE)
_ENTRY = re.compile(rb"[ \t]*[\w.-]{1,253}:[ \t]*")
_KUBERNETES = "kubernetes-secret"


def _kubernetes_secret_data(data: bytes) -> list[Span]:
    """The values under ``data:`` and ``stringData:`` in a YAML file that declares a Kubernetes
    ``Secret``: the resource itself says they are secrets, whatever their keys are called. Each is
    judged as a password's value, ``data``'s once decoded from base64 (``admin``, ``changeme`` and
    a template stay); a block value (``|``) goes whole, unless it holds PEM blocks, which are
    certificates or, for private keys, the private-key rule's."""
    if _KUBERNETES_SECRET.search(data) is None:
        return []
    spans: list[Span] = []
    read_up_to = 0
    for block in _DATA_BLOCK.finditer(data):
        line_start = data.rfind(b"\n", 0, block.start()) + 1
        if block.start() < read_up_to or data[line_start : block.start()].strip(b" \t"):
            continue  # inside a block already read, or not a key of its own line
        encoded = block.group(1) == b"data"
        read_up_to = _read_data_block(data, block.end(), block.start() - line_start, encoded, spans)
    return spans


def _read_data_block(data: bytes, at: int, indent: int, encoded: bool, spans: list[Span]) -> int:
    """Redact the entries of a data block whose key line ends at ``at``; the block's end."""
    scalar: tuple[int, int] | None = None  # a block value being read: its entry's depth, its start
    while at < len(data):
        start = at + 1
        end = data.find(b"\n", start)
        end = len(data) if end < 0 else end
        line = data[start:end].rstrip(b"\r")
        blank = not line.strip()
        depth = len(line) - len(line.lstrip(b" \t"))
        if not blank and depth <= indent:
            break
        if scalar is not None:
            if blank or depth > scalar[0]:
                at = end
                continue
            _add_block_value(data, scalar[1], at, encoded, spans)
            scalar = None
        at = end
        entry = _ENTRY.match(line)
        if entry is None:
            continue
        value = line[entry.end() :].split(b" #", 1)[0].rstrip()
        if value[:1] in (b"|", b">"):
            scalar = (depth, end + 1)
        elif value and _a_secret_value(value.strip(b"\"'"), encoded):
            spans.append((start + entry.end(), start + entry.end() + len(value), _KUBERNETES))
    if scalar is not None:
        _add_block_value(data, scalar[1], at, encoded, spans)
    return at


def _add_block_value(data: bytes, start: int, end: int, encoded: bool, spans: list[Span]) -> None:
    """A block value goes unless it holds a certificate, or password hashes (an htpasswd file)."""
    value = data[start:end]
    lines = [line.strip() for line in value.split(b"\n") if line.strip()]
    if encoded:
        try:
            value = base64.b64decode(b"".join(lines), validate=True)
        except binascii.Error:
            pass
    hashes = all(CRYPT_HASH.search(line.decode("utf-8", "replace")) for line in lines)
    if lines and not hashes and (b"-----BEGIN " not in value or b"PRIVATE KEY" in value):
        spans.append((start, end, _KUBERNETES))


def _a_secret_value(value: bytes, encoded: bool) -> bool:
    """A Secret's value: base64 of binary (a key), or text a person chose or a machine made; not a
    password's hash."""
    if CRYPT_HASH.search(value.decode("utf-8", "replace")):
        return False
    if encoded:
        try:
            value = base64.b64decode(value, validate=True)
        except binascii.Error:
            pass
        else:
            if not value.isascii() or not value.decode().isprintable():
                return b"-----BEGIN " not in value or b"PRIVATE KEY" in value
    text = value.decode("utf-8", "replace")
    return looks_chosen(text, quoted=True) or looks_random(text, quoted=True)


def _without_overlaps(spans: list[Span], data: bytes) -> list[Span]:
    """The spans in order, one inside or across an earlier one merged into it (named by the rule
    that knows most: a token's format over the name it is assigned to), each ending at the end of a
    character (a value cut at its longest may end inside one)."""
    merged: list[Span] = []
    for start, end, kind in sorted(spans):
        while end < len(data) and data[end] & 0xC0 == 0x80:
            end += 1
        if merged and start < merged[-1][1]:
            last = merged[-1]
            named = kind if last[2] == ASSIGNED else last[2]
            merged[-1] = (last[0], max(last[1], end), named)
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
