"""Fixtures of the end-to-end tests: the `node` executable for the official Node SDK, Debian's
headless Chromium driven by Playwright (never `playwright install`), and the origin serving the
pages with the official browser SDKs bundled. Their support code is in importable modules beside
them."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from browser_pages import build_bundles, serving_pages
from node_sdk import node_executable
from support.prerequisites import missing_prerequisite

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-quic",
]


@pytest.fixture
def node() -> str:
    """The `node` executable with the official Node server SDK installed (else skip; CI fails)."""
    return node_executable()


# Module scope: sync Playwright runs its own event loop in this thread while it is open, which
# must be over before pytest-asyncio's tests in other modules start theirs.
@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    if not CHROMIUM.exists():
        missing_prerequisite(f"{CHROMIUM} is missing (make browser-deps installs it)")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        missing_prerequisite("the playwright package is not installed (make install)")
    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            yield launched
        finally:
            launched.close()


@pytest.fixture(scope="session")
def page_origin() -> Iterator[str]:
    """The test pages of tests/e2e/browser/pages with the official browser SDKs bundled, served
    from a port of their own (another origin than any Flagstaff process)."""
    build_bundles()
    with serving_pages() as origin:
        yield origin
