"""The real OpenID provider of the single sign-on tests: `node provider.mjs REDIRECT_URI`
(panva's certified oidc-provider, pinned in package-lock.json beside it), started once per test
module, and its test controls (forge or expire the next ID tokens, rotate the signing key).
Asserts nothing about Flagstaff. Without node or `make node-deps` it is a missing prerequisite:
skipped locally, a failure in CI."""

from __future__ import annotations

import json
import queue
import shutil
import subprocess
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import httpx
from support.deadlines import Deadline
from support.prerequisites import missing_prerequisite
from support.processes import stop_process

HERE = Path(__file__).parent
SCRIPT = HERE / "provider.mjs"
START_SECONDS = 30.0
Mode = Literal["normal", "forge", "expire"]


@dataclass(frozen=True)
class Provider:
    issuer: str
    client_id: str
    client_secret: str

    def control(self, path: str) -> httpx.Response:
        response = httpx.post(f"{self.issuer}/_test/{path}", timeout=10)
        assert response.is_success, response.text
        return response

    def set_mode(self, mode: Mode) -> None:
        self.control(f"mode?to={mode}")

    def rotate_key(self) -> str:
        """A new signing key; its key id."""
        return str(self.control("rotate").json()["kid"])


def node_with_provider() -> str:
    executable = shutil.which("node")
    if executable is None:
        missing_prerequisite(
            "node is not installed (the OpenID provider of the SSO tests needs it)"
        )
    if not (HERE / "node_modules" / "oidc-provider").is_dir():
        missing_prerequisite("oidc-provider is not installed: run `make node-deps`")
    assert executable is not None
    return executable


@contextmanager
def running_provider(redirect_uri: str) -> Iterator[Provider]:
    process = subprocess.Popen(
        [node_with_provider(), str(SCRIPT), redirect_uri],
        cwd=HERE,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    lines: queue.Queue[str | None] = queue.Queue()

    def read() -> None:
        assert process.stdout is not None
        for line in process.stdout:
            lines.put(line)
        lines.put(None)

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    seen: list[str] = []
    try:
        deadline = Deadline(START_SECONDS)
        while True:
            try:
                line = lines.get(timeout=max(deadline.left(), 0.01))
            except queue.Empty:
                raise deadline.missed("the OpenID provider to start", lambda: seen) from None
            if line is None:
                raise AssertionError(f"the OpenID provider exited: {''.join(seen)}")
            seen.append(line)
            if line.startswith("{"):
                started = json.loads(line)
                break
        yield Provider(
            issuer=started["issuer"],
            client_id=started["clientId"],
            client_secret=started["clientSecret"],
        )
    finally:
        stop_process(process)
        reader.join(timeout=10)
        if process.stdout is not None:
            process.stdout.close()


@dataclass(frozen=True)
class SsoSite:
    url: str
    api: httpx.Client
    provider: Provider


def block_web_fonts(context: Any) -> None:
    """The provider's sign-in page imports a web font; refused at once rather than waited for."""
    for host in ("fonts.googleapis.com", "fonts.gstatic.com"):
        context.route(f"https://{host}/**", lambda route: route.abort())
