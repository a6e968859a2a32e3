"""Fixtures for the web UI browser tests (the browser comes from tests/e2e/conftest.py): a real
`flagstaff serve` subprocess on a free port with a temporary data directory, a local admin account
made with `flagstaff user create`, and a project."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from support.processes import ServeProcess, flagstaff_command, running
from ui_support import (
    ADMIN_TOKEN,
    EMAIL,
    PASSWORD,
    PROJECT,
    START_SECONDS,
    UiServer,
)


@pytest.fixture(scope="module")
def ui_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[UiServer]:
    data_dir = tmp_path_factory.mktemp("flagstaff-ui")
    server = ServeProcess(
        data_dir=data_dir, name="serve", admin_token=ADMIN_TOKEN, start_timeout=START_SECONDS
    )
    env = {**os.environ, "FLAGSTAFF_ADMIN_TOKEN": ADMIN_TOKEN}
    with running(server):
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
        headers = {"Authorization": ADMIN_TOKEN}
        with httpx.Client(base_url=server.url, headers=headers, timeout=10) as api:
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
            yield UiServer(url=server.url, api=api, sdk_key=sdk_key, data_dir=data_dir)


@pytest.fixture
def context(browser: Any) -> Iterator[Any]:
    """A fresh browser profile (cookies, storage) at 1280 px wide."""
    made = browser.new_context(viewport={"width": 1280, "height": 900})
    made.set_default_timeout(15_000)
    try:
        yield made
    finally:
        made.close()
