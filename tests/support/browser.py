"""A real browser for the tests of the search page: Debian's Chromium, driven by Playwright.

Playwright's own browser download (`playwright install`) is never used: it launches the system's
Chromium at :data:`CHROMIUM` with the flags a closed network needs (no background connections,
no QUIC, no component updates), in a new empty profile. The tests skip, saying why, only where no
Chromium is installed; `make browser` installs it (`.ci/run` runs it, and CI fails without it).
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest

CHROMIUM = os.environ.get("INDEX_TEST_CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"
CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def missing_browser() -> str | None:
    """Why the browser tests cannot run here, or None."""
    if not os.path.exists(CHROMIUM):
        return f"Chromium is not installed at {CHROMIUM}: run `make browser` (apt-get install chromium)"
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "Playwright for Python is missing: pip install -e '.[test]'"
    return None


@contextmanager
def chromium() -> Iterator[Any]:
    """A headless Chromium for a test module (Playwright's launch gives it a new empty profile)."""
    reason = missing_browser()
    if reason:
        if os.environ.get("CI"):
            pytest.fail(f"CI must run the browser tests: {reason}")
        pytest.skip(reason)
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_FLAGS)
        try:
            yield browser
        finally:
            browser.close()
