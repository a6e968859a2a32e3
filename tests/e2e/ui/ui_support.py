"""What the web UI browser tests share (constants, the running server's handle). Import it as
`ui_support`; the fixtures themselves live in this directory's conftest.py."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
from support.deadlines import wait_until
from support.prerequisites import REPO_ROOT

ADMIN_TOKEN = "ui-e2e-admin-token-0123456789"
EMAIL = "admin@example.com"
PASSWORD = "correct horse battery staple"
PROJECT = "shop"
ENV = "production"
SCREENSHOTS = REPO_ROOT / "build" / "screenshots"
START_SECONDS = 60.0


@dataclass
class UiServer:
    url: str
    api: httpx.Client
    sdk_key: str
    data_dir: Path

    def flag(self, key: str) -> Any:
        response = self.api.get(f"/api/v2/flags/{PROJECT}/{key}")
        assert response.status_code == 200, response.text
        return response.json()

    def create_flag(self, key: str, **extra: Any) -> Any:
        body = {"key": key, "name": key, **extra}
        response = self.api.post(f"/api/v2/flags/{PROJECT}", json=body)
        assert response.status_code == 201, response.text
        return response.json()

    def send_events(self, events: list[Any], *, seen: tuple[str, str]) -> None:
        """Post analytics events as an SDK would, then wait until ingestion has kept the context
        `seen` (kind, key) in the context index."""
        response = httpx.post(
            f"{self.url}/bulk",
            json=events,
            headers={"Authorization": self.sdk_key, "X-LaunchDarkly-Event-Schema": "4"},
            timeout=10,
        )
        assert response.status_code == 202, response.text
        kind, key = seen
        path = f"/api/v2/insights/{PROJECT}/{ENV}/contexts/{kind}/{key}"
        wait_until(lambda: self.api.get(path).status_code == 200, timeout=20, what=path)


SEMANTIC = "application/json; domain-model=launchdarkly.semanticpatch"


def patch_flag(server: UiServer, key: str, env: str, *instructions: dict[str, Any]) -> Any:
    """A semantic patch of the flag in `env` through the API; the answer is the flag."""
    answer = server.api.patch(
        f"/api/v2/flags/{PROJECT}/{key}",
        json={"environmentKey": env, "instructions": list(instructions)},
        headers={"Content-Type": SEMANTIC},
    )
    assert answer.status_code == 200, answer.text
    return answer.json()


def expect() -> Any:
    """Playwright's `expect`, imported late: without Playwright the browser fixture skips."""
    from playwright.sync_api import expect as playwright_expect

    return playwright_expect


def sign_in(page: Any, server: UiServer, *, email: str = EMAIL, password: str = PASSWORD) -> None:
    page.goto(f"{server.url}/")
    page.get_by_label("Email").fill(email)
    page.get_by_label("Password").fill(password)
    page.get_by_role("button", name="Sign in", exact=True).click()
    expect()(page.get_by_role("heading", name="Flags", exact=True)).to_be_visible()


def open_flag(page: Any, server: UiServer, key: str) -> None:
    page.goto(f"{server.url}/ui/#/p/{PROJECT}/e/{ENV}/flags/{key}")
    expect()(page.locator("#kill-switch")).to_be_visible()
