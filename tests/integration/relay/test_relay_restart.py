"""The relay across a restart, in this process (offline-file environments, httpx ASGI transport):
the FDv2 change log kept on disk gives a client a few changes behind just those changes, and the
changes the relay numbers after a restart reach SDKs even when its position file was lost."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path
from typing import Any

import httpx
from delivery_support import fdv2_poll, flag
from flagstaff_server.relay.config_source import parse_config
from flagstaff_server.relay.edge import Relay
from support.deadlines import eventually
from support.in_process import asgi_client

SDK_KEY = "sdk-relay-restart"
AUTH = {"Authorization": SDK_KEY}


def _relay(tmp_path: Path) -> Relay:
    text = f"""
[relay]
data_dir = "{tmp_path / "relay"}"
offline_interval_seconds = 0.02

[environments.production]
sdk_key = "{SDK_KEY}"
offline_file = "{tmp_path / "flags.json"}"
"""
    return Relay(parse_config(tomllib.loads(text), {}, base=tmp_path))


def _write_flags(tmp_path: Path, *flags: dict[str, Any]) -> None:
    """Replace the offline file. The relay notices a new file by its mtime and size, so
    successive contents here differ in size (two writes may fall in one clock tick)."""
    data = {"flags": {item["key"]: item for item in flags}, "segments": {}}
    replacement = tmp_path / "flags.json.new"
    replacement.write_text(json.dumps(data))
    replacement.replace(tmp_path / "flags.json")


def _client(relay: Relay) -> httpx.AsyncClient:
    return asgi_client(relay.asgi, base_url="http://r")


async def _served(client: httpx.AsyncClient) -> dict[str, Any]:
    response = await client.get("/sdk/latest-all", headers=AUTH)
    flags: dict[str, Any] = response.json()["flags"] if response.status_code == 200 else {}
    return flags


async def _wait_for_version(client: httpx.AsyncClient, key: str, version: int) -> None:
    async def served_at_version() -> bool:
        return (await _served(client)).get(key, {}).get("version") == version

    await eventually(
        served_at_version, within=10.0, interval=0.01, what=f"{key} at version {version}"
    )


async def test_a_restarted_relay_gives_a_basis_in_its_kept_log_only_the_changes_since(
    tmp_path: Path,
) -> None:
    _write_flags(tmp_path, flag("a", 1), flag("b", 1))
    relay = _relay(tmp_path)
    async with relay.running(), _client(relay) as client:
        await _wait_for_version(client, "b", 1)
        basis = (await fdv2_poll(client, sdk_key=SDK_KEY))[-1]["data"]["state"]
        _write_flags(tmp_path, flag("a", 2, on=False), flag("b", 1))
        await _wait_for_version(client, "a", 2)

    restarted = _relay(tmp_path)
    async with restarted.running(), _client(restarted) as client:
        events = await fdv2_poll(client, basis, sdk_key=SDK_KEY)
    assert events[0]["data"]["payloads"][0]["intentCode"] == "xfer-changes"
    assert [(e["event"], e["data"]["key"], e["data"]["version"]) for e in events[1:-1]] == [
        ("put-object", "a", 2)
    ]


async def test_changes_after_a_restart_that_lost_the_position_file_still_reach_sdks(
    tmp_path: Path,
) -> None:
    _write_flags(tmp_path, flag("a", 1), flag("b", 1))
    relay = _relay(tmp_path)
    async with relay.running(), _client(relay) as client:
        await _wait_for_version(client, "b", 1)
        _write_flags(tmp_path, flag("a", 2, on=False), flag("b", 1))
        await _wait_for_version(client, "a", 2)
    # a crash before the (last-written) position file reached the disk
    (tmp_path / "relay" / "delivery" / "position.json").unlink()

    restarted = _relay(tmp_path)
    async with restarted.running(), _client(restarted) as client:
        assert (await _served(client))["a"]["version"] == 2
        _write_flags(tmp_path, flag("a", 3, variations=("x", "y")), flag("b", 1))
        await _wait_for_version(client, "a", 3)
