"""Stored names: one printable spelling per file name, read back to the name itself."""

from __future__ import annotations

import os
import random

from indexer.names import UNSAFE_CHARACTERS, local_name, spellings, stored_name

#: Names an attacker or an old archive gives files, as ``os`` reads them (bytes that are not UTF-8
#: as surrogates).
HOSTILE = [
    "plain.md",
    "dir/caf\u00e9.md",
    os.fsdecode(b"caf\xe9.md"),
    "caf\\xe9.md",  # the escaped spelling of the name above, as a literal name
    "caf\\\\xe9.md",
    "caf\\u00e9.md",
    "back\\slash.md",
    "trailing\\",
    "new\nline.md",
    "new\\x0aline.md",
    "title\x1b]0;pwned\x07.md",
    "csi\x1b[2J.md",
    "carriage\rreturn.md",
    "back\bspace.md",
    "txt.\u202eexe.md",
    "isolate\u2066x\u2069.md",
    "c1\u0085next.md",
    "line\u2028separator.md",
    "pipe|name.md",
    os.fsdecode(b"mixed\xff\n\\x41.md"),
]


def test_every_hostile_name_gets_its_own_printable_spelling_that_reads_back_to_it():
    spelled = [stored_name(name) for name in HOSTILE]
    assert len(set(spelled)) == len(HOSTILE)
    for name, spelling in zip(HOSTILE, spelled, strict=True):
        assert local_name(spelling) == name
        spelling.encode("utf-8")  # valid UTF-8: no surrogate left
        assert not any(ord(character) in UNSAFE_CHARACTERS for character in spelling), spelling


def test_a_name_with_bytes_that_are_not_utf8_and_its_escaped_spelling_never_share_a_path():
    raw = os.fsdecode(b"caf\xe9.md")
    assert stored_name(raw) == "caf\\xe9.md"  # the spelling earlier indexes used, kept
    assert stored_name("caf\\xe9.md") == "caf\\\\xe9.md"


def test_ordinary_names_are_stored_as_they_are():
    for name in (
        "guide.md",
        "docs/caf\u00e9.md",
        "\u6570\u636e\u5e93.md",
        "a\\b.md",
        "pipe|name.md",
        "x y.md",
    ):
        assert stored_name(name) == name
        assert local_name(name) == name


def test_random_names_round_trip_and_never_collide():
    generator = random.Random(35)
    alphabet = [
        b"a",
        b"\\",
        b"x",
        b"u",
        b"0",
        b"e9",
        b"\n",
        b"\x1b",
        b"\xe9",
        b"\xff",
        "\u202e".encode(),
        b"/",
    ]
    names = {
        os.fsdecode(b"".join(generator.choices(alphabet, k=generator.randint(1, 8)))) for _ in range(5000)
    }
    spelled = {stored_name(name): name for name in names}
    assert len(spelled) == len(names)
    assert all(local_name(spelling) == name for spelling, name in spelled.items())


def test_a_name_given_back_is_looked_up_as_shown_then_as_the_files_own_name():
    assert spellings("caf\\xe9.md:1-3") == ["caf\\xe9.md:1-3", "caf\\\\xe9.md:1-3"]
    assert spellings(os.fsdecode(b"caf\xe9.md:1-3")) == ["caf\\xe9.md:1-3"]
    assert spellings("new\nline.md") == ["new\nline.md", "new\\x0aline.md"]
    assert spellings("guide.md:4-9") == ["guide.md:4-9"]
