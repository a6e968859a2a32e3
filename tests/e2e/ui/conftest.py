"""Fixtures for the web UI browser tests: Debian's headless Chromium driven by Playwright (never
`playwright install`), and a real `flagstaff serve` subprocess on a free port with a temporary
data directory, a local admin account made with `flagstaff user create`, and a project."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from delivery_support import free_port
from prerequisites import missing_prerequisite
from ui_support import (
    ADMIN_TOKEN,
    CHROMIUM,
    CHROMIUM_ARGS,
    EMAIL,
    PASSWORD,
    PROJECT,
    START_SECONDS,
    UiServer,
)


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


def flagstaff_command() -> list[str]:
    return [str(Path(sys.executable).with_name("flagstaff"))]


def wait_for_status(url: str, process: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + START_SECONDS
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise AssertionError(f"flagstaff serve exited with {process.returncode}")
        try:
            if httpx.get(f"{url}/status", timeout=1).status_code == 200:
                return
        except httpx.TransportError:
            pass
        time.sleep(0.1)
    raise AssertionError("flagstaff serve did not become ready in time")


@pytest.fixture(scope="module")
def ui_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[UiServer]:
    data_dir = tmp_path_factory.mktemp("flagstaff-ui")
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    env = {**os.environ, "FLAGSTAFF_ADMIN_TOKEN": ADMIN_TOKEN}
    log = (data_dir / "serve.log").open("wb")
    process = subprocess.Popen(
        [
            *flagstaff_command(),
            *("serve", "--port", str(port), "--data-dir", str(data_dir), "--no-demo"),
        ],
        stdout=log,
        stderr=subprocess.STDOUT,
        env=env,
    )
    try:
        wait_for_status(url, process)
        created = subprocess.run(
            [
                *flagstaff_command(),
                *("user", "create", "--email", EMAIL, "--role", "admin", "--password-stdin"),
                *("--data-dir", str(data_dir)),
            ],
            input=PASSWORD + "\n",
            capture_output=True,
            text=True,
            env=env,
            check=False,
            timeout=60,
        )
        assert created.returncode == 0, created.stderr
        with httpx.Client(base_url=url, headers={"Authorization": ADMIN_TOKEN}, timeout=10) as api:
            project = api.post(
                "/api/v2/projects",
                json={
                    "key": PROJECT,
                    "name": "Shop",
                    "environments": [
                        {"key": "production", "name": "Production", "color": "417505"},
                        {"key": "staging", "name": "Staging", "color": "0b69e3"},
                    ],
                },
            )
            assert project.status_code == 201, project.text
            sdk_key = project.json()["environments"][0]["apiKey"]
            yield UiServer(url=url, api=api, sdk_key=sdk_key, data_dir=data_dir)
    finally:
        process.terminate()
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=5)
        log.close()


@pytest.fixture
def context(browser: Any) -> Iterator[Any]:
    """A fresh browser profile (cookies, storage) at 1280 px wide."""
    made = browser.new_context(viewport={"width": 1280, "height": 900})
    made.set_default_timeout(15_000)
    try:
        yield made
    finally:
        made.close()
