"""The official browser SDKs bundled for plain test pages, and a loopback server for those pages.

`npm ci` from tests/e2e/browser's committed lockfile installs `@launchdarkly/js-client-sdk` and
OpenFeature's OFREP web provider; esbuild bundles each entry file into build/ as an IIFE with a
global (`LD`, `OFREP`). The pages are served from their own port, so a page and the Flagstaff
process it talks to are different origins and CORS is exercised. Recipe:
/work/shared/reference/browser-testing.md."""

from __future__ import annotations

import functools
import http.server
import shutil
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from support.prerequisites import missing_prerequisite
from support.threaded_servers import serve_http

BROWSER_DIR = Path(__file__).parent / "browser"
BUILD = BROWSER_DIR / "build"
BUNDLES = {"ld": "LD", "ofrep": "OFREP"}
"""Entry file stem -> global name of its IIFE bundle."""


def _run(command: list[str]) -> None:
    done = subprocess.run(command, cwd=BROWSER_DIR, capture_output=True, text=True, timeout=300)
    if done.returncode != 0:
        raise AssertionError(f"{' '.join(command)} failed:\n{done.stdout}\n{done.stderr}")


def build_bundles() -> Path:
    """Install the SDKs (when the lockfile is newer than node_modules) and bundle them; the
    build directory. Without node and npm: a missing prerequisite (skip, or fail in CI)."""
    npm = shutil.which("npm")
    if npm is None or shutil.which("node") is None:
        missing_prerequisite("node and npm are needed to install and bundle the browser SDKs")
    assert npm is not None
    installed = BROWSER_DIR / "node_modules" / ".package-lock.json"
    lock = BROWSER_DIR / "package-lock.json"
    if not installed.exists() or installed.stat().st_mtime < lock.stat().st_mtime:
        _run([npm, "ci", "--no-audit", "--no-fund", "--silent"])
    esbuild = str(BROWSER_DIR / "node_modules" / ".bin" / "esbuild")
    BUILD.mkdir(exist_ok=True)
    for stem, global_name in BUNDLES.items():
        _run(
            [
                esbuild,
                f"{stem}-entry.js",
                "--bundle",
                "--format=iife",
                f"--global-name={global_name}",
                "--target=es2020",
                f"--outfile=build/{stem}.js",
                "--log-level=warning",
            ]
        )
    return BUILD


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        return None


@contextmanager
def serving_pages() -> Iterator[str]:
    """tests/e2e/browser (pages/ and build/) on a loopback port of its own: its origin."""
    handler = functools.partial(_QuietHandler, directory=str(BROWSER_DIR))
    with serve_http(handler) as server:
        yield server.url
