"""The management API and the official LaunchDarkly Python SDK as tests drive a running server over
HTTP: checked calls, a project with one `production` environment, flags with variations "on" and
"off" switched on and off, what delivery serves, and an SDK client pointed at the server.

Asserts only that calls succeed.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import httpx
from ldclient.client import LDClient
from ldclient.config import Config


@dataclass(frozen=True, slots=True)
class Keys:
    """The credentials of one environment."""

    sdk_key: str
    mobile_key: str
    client_side_id: str


def ok(response: httpx.Response) -> Any:
    """The JSON body (None when empty) of a successful response; fails naming the request."""
    assert response.status_code < 300, f"{response.request.method} {response.url}: {response.text}"
    return response.json() if response.content else None


def admin_client(url: str, token: str) -> httpx.Client:
    """A client of the management API at `url` with the admin `token`."""
    return httpx.Client(base_url=url, headers={"Authorization": token}, timeout=30)


def create_project(api: httpx.Client, key: str = "shop") -> Keys:
    """A project with one environment `production`; returns its credentials."""
    environments = [{"key": "production", "name": "Production", "color": "417505"}]
    body = {"key": key, "name": key.title(), "environments": environments}
    env = ok(api.post("/api/v2/projects", json=body))["environments"][0]
    return Keys(sdk_key=env["apiKey"], mobile_key=env["mobileKey"], client_side_id=env["_id"])


def create_flag(api: httpx.Client, key: str, project: str = "shop") -> None:
    """A flag with variations "on" and "off": new flags are off and serve their off variation
    (the second); switched on, they serve the first."""
    variations = [{"value": "on"}, {"value": "off"}]
    ok(
        api.post(
            f"/api/v2/flags/{project}", json={"key": key, "name": key, "variations": variations}
        )
    )


def switch(api: httpx.Client, key: str, *, on: bool, project: str = "shop") -> None:
    """Turn the flag on or off in `production`."""
    patch = [{"op": "replace", "path": "/environments/production/on", "value": on}]
    ok(api.patch(f"/api/v2/flags/{project}/{key}", json=patch))


def delete_flag(api: httpx.Client, key: str, project: str = "shop") -> None:
    response = api.delete(f"/api/v2/flags/{project}/{key}")
    assert response.status_code == 204, response.text


def served_flags(url: str, sdk_key: str) -> dict[str, Any]:
    """The flags `/sdk/latest-all` serves, failing on anything but 200."""
    response = httpx.get(f"{url}/sdk/latest-all", headers={"Authorization": sdk_key}, timeout=10)
    assert response.status_code == 200, f"{response.status_code}: {response.text}"
    flags: dict[str, Any] = response.json()["flags"]
    return flags


def is_on(url: str, sdk_key: str, key: str) -> bool:
    """Whether delivery at `url` serves flag `key` switched on."""
    flag = served_flags(url, sdk_key).get(key)
    return bool(flag and flag["on"])


def sdk_client(url: str, sdk_key: str, **options: Any) -> LDClient:
    """The official Python SDK streaming from, polling and sending events to `url` (events off
    and no diagnostics unless `options`, further `Config` arguments, say otherwise); waits up to
    30 s for its first data."""
    settings: dict[str, Any] = {"send_events": False, "diagnostic_opt_out": True, **options}
    config = Config(sdk_key, base_uri=url, stream_uri=url, events_uri=url, **settings)
    return LDClient(config=config, start_wait=30)
