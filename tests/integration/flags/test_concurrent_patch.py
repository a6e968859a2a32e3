"""Ten concurrent JSON Patches carrying the same `/_version` test: exactly one applies, nine get
409, and the audit log and the change feed carry the applied change exactly once. Runs on the
in-memory store, SQLite and PostgreSQL (a throwaway database)."""

from __future__ import annotations

import asyncio
import secrets
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest
from flag_api import ADMIN_TOKEN, PROJECT, create_flag, patch
from flagstaff_server.http.api.application import build_api
from flagstaff_server.services.plane import ControlPlane
from flagstaff_server.services.ports import Store
from support.in_process import asgi_client, control_plane

WRITERS = 10


@pytest.fixture
async def racing_api(store: Store) -> AsyncIterator[tuple[httpx.AsyncClient, ControlPlane]]:
    plane = control_plane(store, admin_token=ADMIN_TOKEN)
    app = build_api(plane, version="test")
    async with asgi_client(app, token=ADMIN_TOKEN) as client:
        project = f"race{secrets.token_hex(3)}"
        created = await client.post("/api/v2/projects", json={"key": project, "name": "Race"})
        assert created.status_code == 201, created.text
        client.headers["X-Test-Project"] = project
        yield client, plane


async def test_one_of_ten_concurrent_version_tests_wins(
    racing_api: tuple[httpx.AsyncClient, ControlPlane],
) -> None:
    api, plane = racing_api
    project = api.headers["X-Test-Project"]
    response = await api.post(f"/api/v2/flags/{project}", json={"key": "race", "name": "race"})
    assert response.status_code == 201, response.text
    with plane.read() as uow:
        seq_before = uow.changes.latest_seq()

    async def attempt(writer: int) -> httpx.Response:
        return await patch(
            api,
            f"/api/v2/flags/{project}/race",
            {
                "comment": f"writer {writer}",
                "patch": [
                    {"op": "test", "path": "/_version", "value": 1},
                    {"op": "replace", "path": "/description", "value": f"writer {writer}"},
                    {"op": "replace", "path": "/environments/test/on", "value": True},
                ],
            },
        )

    responses = await asyncio.gather(*(attempt(writer) for writer in range(WRITERS)))
    statuses = sorted(response.status_code for response in responses)
    assert statuses == [200] + [409] * (WRITERS - 1), [r.text for r in responses]
    winner = next(response.json() for response in responses if response.status_code == 200)
    assert winner["_version"] == 2

    stored = (await api.get(f"/api/v2/flags/{project}/race")).json()
    assert stored["description"] == winner["description"]
    with plane.read() as uow:
        updates = [
            entry
            for entry in uow.audit.list(resource_prefix=f"proj/{project}:env/*:flag/race")
            if entry.action == "updateFlag"
        ]
        new_changes = uow.changes.since(seq_before)
    assert len(updates) == 1
    assert updates[0].comment == winner["description"]
    assert [(c.key, c.environment, c.version) for c in new_changes] == [("race", "test", 2)]
    assert _item_on(new_changes[0].item) is True

    # The feed delivers that change once, in order, to a subscriber starting before it.
    delivered = []
    async with asyncio.timeout(10):
        async for change in plane.feed.subscribe(seq_before):
            delivered.append(change)
            if change.seq >= new_changes[-1].seq:
                break
    assert [change.seq for change in delivered] == [c.seq for c in new_changes]


def _item_on(item: dict[str, Any] | None) -> bool:
    assert item is not None
    return bool(item["on"])


async def test_ten_sequential_version_tests_each_see_the_previous(
    api: httpx.AsyncClient,
) -> None:
    """The control case: the same patches one after another, each testing the version it read."""
    await create_flag(api, "steady")
    for writer in range(WRITERS):
        current = (await api.get(f"/api/v2/flags/{PROJECT}/steady")).json()["_version"]
        response = await patch(
            api,
            f"/api/v2/flags/{PROJECT}/steady",
            [
                {"op": "test", "path": "/_version", "value": current},
                {"op": "replace", "path": "/description", "value": f"writer {writer}"},
            ],
        )
        assert response.status_code == 200, response.text
    final = (await api.get(f"/api/v2/flags/{PROJECT}/steady")).json()
    assert final["_version"] == WRITERS + 1


async def test_concurrent_patches_without_version_test_all_apply(
    racing_api: tuple[httpx.AsyncClient, ControlPlane],
) -> None:
    """Writers that test no version lose no edit: a lost compare-and-set is re-applied."""
    api, plane = racing_api
    project = api.headers["X-Test-Project"]
    created = await api.post(f"/api/v2/flags/{project}", json={"key": "crowd", "name": "crowd"})
    true_id = created.json()["variations"][0]["_id"]

    async def add_target(writer: int) -> httpx.Response:
        return await patch(
            api,
            f"/api/v2/flags/{project}/crowd",
            {
                "environmentKey": "test",
                "instructions": [
                    {"kind": "addTargets", "variationId": true_id, "values": [f"user-{writer}"]}
                ],
            },
            semantic=True,
        )

    responses = await asyncio.gather(*(add_target(writer) for writer in range(WRITERS)))
    assert [r.status_code for r in responses] == [200] * WRITERS, [
        r.text for r in responses if r.status_code != 200
    ]
    flag = (await api.get(f"/api/v2/flags/{project}/crowd")).json()
    targets = flag["environments"]["test"]["targets"]
    assert sorted(targets[0]["values"]) == sorted(f"user-{w}" for w in range(WRITERS))
    assert flag["_version"] == WRITERS + 1
    with plane.read() as uow:
        versions = [
            c.version for c in uow.changes.since(0) if c.key == "crowd" and c.environment == "test"
        ]
    assert versions == list(range(1, WRITERS + 2))
