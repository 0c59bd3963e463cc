"""The manual cannot drift from the code: the command-line reference is what `--help` says now, every
command and option is documented, and every relative link leads to a file that exists."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

import click
import pytest

from indexer.cli.app import COMMANDS, commands

REPO = Path(__file__).resolve().parent.parent
DOCS = REPO / "docs"
REFERENCE = DOCS / "cli.md"
#: The pages written by hand (the reference is generated).
GUIDE_PAGES = sorted(set(DOCS.glob("*.md")) - {REFERENCE})
#: [text](target) in Markdown, target without a scheme; images included.
RELATIVE_LINK = re.compile(r"\]\((?![a-z][a-z0-9+.-]*:|#)([^)\s]+)\)")


def cli_reference_module():
    spec = importlib.util.spec_from_file_location("cli_reference", DOCS / "cli_reference.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def options_of(command: click.Command) -> list[str]:
    """Every flag a user can type for ``command``, its `--help` included."""
    flags = []
    for parameter in command.params:
        if isinstance(parameter, click.Option):
            flags += [*parameter.opts, *parameter.secondary_opts]
    return flags


def section_of(name: str) -> str:
    """The reference's section for ``index NAME``."""
    text = REFERENCE.read_text(encoding="utf-8")
    return text.split(f"\n## index {name}\n", 1)[1].split("\n## ", 1)[0]


def test_the_checked_in_cli_reference_is_what_the_help_says_now():
    generated = cli_reference_module().reference()
    assert REFERENCE.read_text(encoding="utf-8") == generated, "docs/cli.md is stale: run `make cli-docs`"


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_every_command_and_option_is_in_the_reference(name):
    section = section_of(name)
    missing = [flag for flag in options_of(commands()[name]) if flag not in section]
    assert missing == [], f"index {name}: {missing} not in docs/cli.md"


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_every_command_is_explained_in_the_guide(name):
    guide = "\n".join(page.read_text(encoding="utf-8") for page in GUIDE_PAGES)
    assert f"index {name}" in guide


def test_every_option_is_mentioned_in_the_guide():
    guide = "\n".join(page.read_text(encoding="utf-8") for page in GUIDE_PAGES)
    missing = [
        f"index {name} {flag}"
        for name, command in sorted(commands().items())
        for flag in options_of(command)
        if flag.startswith("--") and flag != "--help" and not re.search(re.escape(flag) + r"\b", guide)
    ]
    assert missing == [], f"options the hand-written pages never mention: {missing}"


def test_the_reference_lists_every_exit_code_the_errors_carry():
    from indexer.errors import exit_codes

    table = REFERENCE.read_text(encoding="utf-8").split("## Exit codes", 1)[1].split("\n## ", 1)[0]
    for code, exit_code in exit_codes().items():
        assert f"\n| {code} | {exit_code.details} |" in table


@pytest.mark.parametrize("page", [REPO / "README.md", *sorted(DOCS.glob("*.md"))], ids=lambda p: p.name)
def test_every_relative_link_points_to_a_file_that_exists(page):
    targets = RELATIVE_LINK.findall(page.read_text(encoding="utf-8"))
    missing = [target for target in targets if not (page.parent / target.split("#", 1)[0]).exists()]
    assert missing == [], f"{page.relative_to(REPO)} links to files that do not exist: {missing}"
