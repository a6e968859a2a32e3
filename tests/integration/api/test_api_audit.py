"""The audit log: every change is recorded with who, when, what and before/after, and can be found
again by resource, time and text."""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from platform_api import ADMIN, create_project, create_token, problem
from support.clock import FakeClock


async def entries(client: httpx.AsyncClient, query: str = "", **headers: str) -> dict[str, Any]:
    response = await client.get(f"/api/v2/auditlog{query}", headers=headers or ADMIN)
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json()
    return body


async def test_each_change_leaves_an_entry_newest_first(
    client: httpx.AsyncClient, clock: FakeClock
) -> None:
    await create_project(client, "shop", environments=[{"key": "live", "name": "Live"}])
    clock.advance(seconds=1)
    patch = {"comment": "new name", "patch": [{"op": "replace", "path": "/name", "value": "Web"}]}
    assert (await client.patch("/api/v2/projects/shop", json=patch, headers=ADMIN)).is_success
    clock.advance(seconds=1)
    assert (
        await client.post("/api/v2/projects/shop/environments/live/apiKey", headers=ADMIN)
    ).is_success
    clock.advance(seconds=1)
    assert (
        await client.delete("/api/v2/projects/shop/environments/live", headers=ADMIN)
    ).is_success

    log = await entries(client)
    actions = [(e["accesses"][0]["action"], e["accesses"][0]["resource"]) for e in log["items"]]
    assert actions == [
        ("deleteEnvironment", "proj/shop:env/live"),
        ("updateApiKey", "proj/shop:env/live"),
        ("updateProject", "proj/shop"),
        ("createEnvironment", "proj/shop:env/live"),
        ("createProject", "proj/shop"),
    ]
    assert log["totalCount"] == 5
    dates = [e["date"] for e in log["items"]]
    assert dates == sorted(dates, reverse=True)

    update = log["items"][2]
    assert update["comment"] == "new name"
    assert update["token"]["name"] == "FLAGSTAFF_ADMIN_TOKEN"
    assert update["delta"]["before"]["name"] == "Shop"
    assert update["delta"]["after"]["name"] == "Web"
    assert update["delta"]["patch"] == patch["patch"]
    assert update["name"] == "Web"
    assert update["kind"] == "project"
    assert update["description"] == "FLAGSTAFF_ADMIN_TOKEN updated the project Web: new name"
    assert update["date"] == clock.millis - 2000

    one = (await client.get(f"/api/v2/auditlog/{update['_id']}", headers=ADMIN)).json()
    assert one == update


async def test_entry_names_the_token_that_made_the_change(client: httpx.AsyncClient) -> None:
    created = await client.post(
        "/api/v2/tokens", json={"name": "deploy bot", "role": "admin"}, headers=ADMIN
    )
    token = created.json()
    await create_project(client, "shop", headers={"Authorization": token["token"]})
    [entry] = (await entries(client, "?spec=proj/shop&limit=1"))["items"]
    assert entry["token"] == {"_id": token["_id"], "name": "deploy bot"}


async def test_filters_by_resource_time_text_and_limit(
    client: httpx.AsyncClient, clock: FakeClock
) -> None:
    await create_project(client, "shop", environments=[{"key": "live", "name": "Live"}])
    middle = clock.millis
    clock.advance(seconds=10)
    await create_project(client, "shop2", environments=[])

    spec = await entries(client, "?spec=proj/shop")
    assert {e["target"]["resources"][0] for e in spec["items"]} == {
        "proj/shop",
        "proj/shop:env/live",
    }
    glob = await entries(client, "?spec=proj/*:env/*")
    assert [e["target"]["resources"][0] for e in glob["items"]] == ["proj/shop:env/live"]
    after = await entries(client, f"?after={middle}")
    assert [e["name"] for e in after["items"]] == ["Shop2"]
    before = await entries(client, f"?before={middle + 1}")
    assert before["totalCount"] == 2
    text = await entries(client, "?q=LIVE")
    assert [e["name"] for e in text["items"]] == ["Live"]
    limited = await entries(client, "?limit=1")
    assert len(limited["items"]) == 1
    assert limited["totalCount"] == 3


async def test_scoped_token_reads_only_its_project_entries(client: httpx.AsyncClient) -> None:
    await create_project(client, "shop", environments=[])
    await create_project(client, "blog", environments=[])
    token = await create_token(client, "reader", project="shop")
    seen = await entries(client, Authorization=token)
    assert {e["target"]["resources"][0] for e in seen["items"]} == {"proj/shop"}
    other = (await entries(client, "?spec=proj/blog"))["items"][0]["_id"]
    problem(await client.get(f"/api/v2/auditlog/{other}", headers={"Authorization": token}), 404)


async def test_failed_change_leaves_no_entry(client: httpx.AsyncClient) -> None:
    await create_project(client, "shop", environments=[])
    bad = [{"op": "replace", "path": "/key", "value": "x"}]
    problem(await client.patch("/api/v2/projects/shop", json=bad, headers=ADMIN), 400)
    problem(
        await client.post("/api/v2/projects", json={"key": "shop", "name": "again"}, headers=ADMIN),
        409,
    )
    assert (await entries(client))["totalCount"] == 1


@pytest.mark.parametrize(
    ("query", "path"),
    [
        ("limit=0", "limit"),
        ("limit=1001", "limit"),
        ("before=x", "before"),
        ("after=-1", "after"),
        # past the year 9999: refused, not overflowed
        ("before=253402300800000", "before"),
        ("after=99999999999999999999", "after"),
    ],
)
async def test_bad_filters_are_400(client: httpx.AsyncClient, query: str, path: str) -> None:
    response = await client.get(f"/api/v2/auditlog?{query}", headers=ADMIN)
    assert problem(response, 400)["path"] == path


async def test_unknown_entry_is_404(client: httpx.AsyncClient) -> None:
    problem(await client.get("/api/v2/auditlog/nope", headers=ADMIN), 404)
