"""Test support for client-side delivery: the whole server (`Flagstaff`, management API + delivery,
SQLite) under uvicorn on a free loopback port in a background thread, with the HTTP protocol
`flagstaff serve` runs (streams served on the connection), seeded through the management API with
flags of every value type and availability. Asserts nothing itself.

Shared by tests/integration/client_delivery and tests/e2e/browser.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
from flagstaff_server.app import Flagstaff
from flagstaff_server.settings import Settings
from support.deadlines import wait_until
from support.in_process import serve_flagstaff
from support.management import ok
from support.threaded_servers import ThreadedServer

ADMIN = "client-delivery-admin-token-0123"
PROJECT = "web"
ENVIRONMENT = "production"
ENV_PATH = f"/environments/{ENVIRONMENT}"

BROWSER = {"usingEnvironmentId": True, "usingMobileKey": True}
MOBILE_ONLY = {"usingEnvironmentId": False, "usingMobileKey": True}
SERVER_ONLY = {"usingEnvironmentId": False, "usingMobileKey": False}

FLAGS: dict[str, tuple[list[Any], dict[str, bool]]] = {
    "bool-flag": ([False, True], BROWSER),
    "string-flag": (["red", "blue"], BROWSER),
    "number-flag": ([1, 42], BROWSER),
    "float-flag": ([0.5, 2.5], BROWSER),
    "object-flag": ([{"size": "s"}, {"size": "xl", "items": [1, 2]}], BROWSER),
    "mobile-flag": ([False, True], MOBILE_ONLY),
    "server-flag": ([False, True], SERVER_ONLY),
}
"""Every flag is turned on with fallthrough variation 1 by `seed`."""


@dataclass
class Deployment:
    url: str
    api: httpx.Client
    flagstaff: Flagstaff
    sdk_key: str
    mobile_key: str
    client_side_id: str

    def patch_flag(self, key: str, operations: list[dict[str, Any]]) -> None:
        ok(self.api.patch(f"/api/v2/flags/{PROJECT}/{key}", json=operations))

    def set_fallthrough(self, key: str, variation: int) -> None:
        value = {"variation": variation}
        self.patch_flag(key, [{"op": "replace", "path": f"{ENV_PATH}/fallthrough", "value": value}])

    def set_secure_mode(self, on: bool) -> None:
        operations = [{"op": "replace", "path": "/secureMode", "value": on}]
        path = f"/api/v2/projects/{PROJECT}/environments/{ENVIRONMENT}"
        ok(self.api.patch(path, json=operations))

    def evalx(self, context: Any) -> dict[str, Any]:
        """What a browser polling now would get for `context` (to know a change has arrived)."""
        path = f"/sdk/evalx/{self.client_side_id}/contexts/{b64(context)}"
        result: dict[str, Any] = ok(httpx.get(self.url + path))
        return result

    def streams(self) -> int:
        client = self.flagstaff.client_delivery
        return 0 if client is None else client.reevaluator.open_streams


def b64(obj: Any) -> str:
    """A context as browser SDKs put it in a path: base64url of its JSON, unpadded."""
    return base64.urlsafe_b64encode(json.dumps(obj).encode()).decode().rstrip("=")


def sse_events(lines: Iterator[str]) -> Iterator[tuple[str, str]]:
    """(event name, data) for each SSE event; the name is "message" when there is no `event:`."""
    name, data = "", ""
    for line in lines:
        if line.startswith("event:"):
            name = line.split(":", 1)[1].strip()
        elif line.startswith("data:"):
            data = line.split(":", 1)[1].strip()
        elif line == "" and (name or data):
            yield name or "message", data
            name, data = "", ""


def next_event(events: Iterator[tuple[str, str]], *names: str) -> tuple[str, Any]:
    """The next event whose name is in `names` (others are skipped), data parsed when JSON."""
    for name, data in events:
        if name in names:
            return name, json.loads(data) if data.strip() else None
    raise AssertionError(f"the stream ended before an event in {names}")


def seed(api: httpx.Client) -> dict[str, Any]:
    """Project `web` (environment `production`) with `FLAGS`, each on, serving variation 1."""
    project = ok(
        api.post(
            "/api/v2/projects",
            json={
                "key": PROJECT,
                "name": "Web",
                "environments": [{"key": ENVIRONMENT, "name": "Production", "color": "417505"}],
            },
        )
    )
    for key, (values, availability) in FLAGS.items():
        body = {
            "key": key,
            "name": key,
            "variations": [{"value": value} for value in values],
            "clientSideAvailability": availability,
        }
        ok(api.post(f"/api/v2/flags/{PROJECT}", json=body))
        ok(
            api.patch(
                f"/api/v2/flags/{PROJECT}/{key}",
                json=[
                    {"op": "replace", "path": f"{ENV_PATH}/on", "value": True},
                    {"op": "replace", "path": f"{ENV_PATH}/fallthrough", "value": {"variation": 1}},
                ],
            )
        )
    environment: dict[str, Any] = project["environments"][0]
    return environment


def delivered(api: httpx.Client) -> bool:
    """Whether delivery has applied every change the store holds: the API answers once a change
    is stored, and delivery applies it from the change feed a moment later."""
    parts = ok(api.get("/status"))["parts"]
    position: int = parts["delivery"]["position"]
    latest: int = parts["changeFeed"]["latestSeq"]
    return position >= latest


def wait_delivered(api: httpx.Client) -> None:
    """Wait until delivery serves every change made so far (a stream or poll opened right after
    the last API write could otherwise be answered from the data before it)."""
    wait_until(lambda: delivered(api), what="delivery to apply every stored change")


@contextmanager
def serving(
    data_dir: Path, *, direct: bool = True, **overrides: Any
) -> Iterator[tuple[Deployment, ThreadedServer]]:
    """The whole server under uvicorn, seeded, once delivery serves the seed; with `flagstaff
    serve`'s HTTP protocol when `direct`, uvicorn's own otherwise (every request, streams
    included, an ASGI task). `overrides` are Settings fields (e.g. admission limits)."""
    settings = Settings(data_dir=data_dir, admin_token=ADMIN, seed_demo=False, **overrides)
    # open client streams would otherwise hold the shutdown until their clients leave
    with (
        serve_flagstaff(settings, direct=direct, timeout_graceful_shutdown=1) as served,
        httpx.Client(base_url=served.url, headers={"Authorization": ADMIN}, timeout=10) as api,
    ):
        environment = seed(api)
        wait_delivered(api)
        deployment = Deployment(
            url=served.url,
            api=api,
            flagstaff=served.flagstaff,
            sdk_key=environment["apiKey"],
            mobile_key=environment["mobileKey"],
            client_side_id=environment["_id"],
        )
        yield deployment, served.threaded


@contextmanager
def running_server(data_dir: Path, **overrides: Any) -> Iterator[Deployment]:
    """`serving` with `flagstaff serve`'s HTTP protocol, for tests that need only the deployment."""
    with serving(data_dir, **overrides) as (deployment, _server):
        yield deployment
