"""Front matter: the metadata at the top of a Markdown page (YAML between ``---`` lines, as Jekyll,
Hugo, MkDocs and Docusaurus write it, or TOML between ``+++`` lines, as Hugo also does).

Only what names or sums up the page is read: ``title``, and ``description`` (else ``summary``).
Read with PyYAML's safe loader and the standard library's TOML parser (``tomllib``; ``tomli`` before
Python 3.11), because front matter is full YAML: quoted and folded strings (``description: >-``),
escapes, anchors. Front matter that does not parse is metadata all the same: it is left out of the
text, and gives no title.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover (Python 3.10)
    import tomli as tomllib

#: Longest title or description read from front matter, in characters: a page's name or summary,
#: not a document hidden in a metadata field.
LONGEST_FIELD = 1000


@dataclass(frozen=True)
class FrontMatter:
    """What the front matter says of its page ('' where it says nothing)."""

    title: str = ""
    description: str = ""


def read_front_matter(source: str, style: str) -> FrontMatter:
    """The title and description of front matter ``source`` (without its fences), in ``style``
    ``"yaml"`` or ``"toml"``."""
    fields = _parsed(source, style)
    if not isinstance(fields, dict):
        return FrontMatter()
    return FrontMatter(
        title=_text(fields.get("title")),
        description=_text(fields.get("description")) or _text(fields.get("summary")),
    )


def _parsed(source: str, style: str) -> object:
    if style == "toml":
        try:
            return tomllib.loads(source)
        except (tomllib.TOMLDecodeError, ValueError):
            return None
    import yaml  # imported here: only a build that meets front matter loads it

    try:  # libyaml's loader when PyYAML was built with it: ten times the pure-Python one's speed
        return yaml.load(source, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))  # noqa: S506
    except (yaml.YAMLError, ValueError, RecursionError):
        return None


def _text(value: object) -> str:
    """A field's value as one line of text ('' for anything but a string or a number)."""
    if isinstance(value, bool) or not isinstance(value, (str, int, float)):
        return ""
    return " ".join(str(value).split())[:LONGEST_FIELD]
