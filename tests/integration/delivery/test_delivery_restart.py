"""`flagstaff serve` (all-in-one, SQLite) restarted as a real process, cleanly and by SIGKILL: an
FDv2 client whose basis is a few changes old gets just those changes (`xfer-changes`), from the
change log the node kept on disk, instead of a full transfer."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
import pytest
from delivery_support import read_events
from support.deadlines import wait_until
from support.management import admin_client, create_flag, create_project, served_flags, switch
from support.processes import ServeProcess, running

pytestmark = pytest.mark.slow

ADMIN = "delivery-restart-admin-token-0123"


def _poll(url: str, sdk_key: str, basis: str | None = None) -> list[dict[str, Any]]:
    params = {} if basis is None else {"basis": basis}
    response = httpx.get(
        f"{url}/sdk/poll", params=params, headers={"Authorization": sdk_key}, timeout=10
    )
    assert response.status_code == 200, response.text
    events: list[dict[str, Any]] = response.json()["events"]
    return events


def _objects(events: list[tuple[str, Any]]) -> list[tuple[str, str, int]]:
    return [
        (name, data["key"], data["version"])
        for name, data in events
        if name in ("put-object", "delete-object")
    ]


def _changes_behind_a_basis(server: ServeProcess) -> tuple[str, str, list[Any]]:
    """A project with two flags, then two changes made after a client took its basis; returns
    the SDK key, that basis and the (kind, key, version) of the two changed flags as served."""
    with admin_client(server.url, ADMIN) as api:
        sdk_key = create_project(api).sdk_key
        create_flag(api, "banner")
        create_flag(api, "checkout")
        wait_until(
            lambda: set(served_flags(server.url, sdk_key)) == {"banner", "checkout"},
            what="both flags served",
        )
        basis = _poll(server.url, sdk_key)[-1]["data"]["state"]
        switch(api, "banner", on=True)
        create_flag(api, "search")
        wait_until(
            lambda: "search" in served_flags(server.url, sdk_key), what="the third flag served"
        )
    served = served_flags(server.url, sdk_key)
    changed = [
        ("put-object", "banner", served["banner"]["version"]),
        ("put-object", "search", served["search"]["version"]),
    ]
    return sdk_key, basis, changed


def test_after_a_restart_a_client_with_a_basis_gets_only_the_changes_since(
    tmp_path: Path,
) -> None:
    server = ServeProcess(data_dir=tmp_path, admin_token=ADMIN)
    with running(server):
        sdk_key, basis, changed = _changes_behind_a_basis(server)
        before = _poll(server.url, sdk_key, basis)
        assert before[0]["data"]["payloads"][0]["intentCode"] == "xfer-changes"

    with running(server):
        polled = _poll(server.url, sdk_key, basis)
        assert polled[0]["data"]["payloads"][0]["intentCode"] == "xfer-changes"
        assert _objects([(e["event"], e["data"]) for e in polled]) == changed
        with httpx.stream(
            "GET",
            f"{server.url}/sdk/stream",
            params={"basis": basis},
            headers={"Authorization": sdk_key},
            timeout=10,
        ) as response:
            streamed = read_events(
                response.iter_lines(), lambda name, _data: name == "payload-transferred"
            )
        assert streamed[0][1]["payloads"][0]["intentCode"] == "xfer-changes"
        assert _objects(streamed) == changed
        assert streamed[-1][1]["state"] == polled[-1]["data"]["state"]


def test_after_sigkill_a_client_with_a_basis_gets_only_the_changes_since(tmp_path: Path) -> None:
    server = ServeProcess(data_dir=tmp_path, admin_token=ADMIN)
    with running(server):
        sdk_key, basis, changed = _changes_behind_a_basis(server)
        seq = int(_poll(server.url, sdk_key)[-1]["data"]["state"].split(".")[2])
        # the debounced writer has put everything up to the newest change on disk (the feed
        # position is written last)
        position = tmp_path / "delivery" / "position.json"
        wait_until(
            lambda: position.exists() and json.loads(position.read_text())["position"] >= seq,
            what="the snapshot and its change log on disk",
        )
        server.kill()

    with running(server):
        polled = _poll(server.url, sdk_key, basis)
        assert polled[0]["data"]["payloads"][0]["intentCode"] == "xfer-changes"
        assert _objects([(e["event"], e["data"]) for e in polled]) == changed
