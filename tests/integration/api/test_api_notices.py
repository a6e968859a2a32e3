"""`/api/v2/status/notices`: operator notices posted, listed, read and deleted through the
management API, each audited and written to the outbox (kind "notice") for delivery nodes."""

from __future__ import annotations

import httpx
from flagstaff_server.app import Flagstaff
from platform_api import ADMIN, create_project, create_token, problem
from support.clock import FakeClock

NOTICES = "/api/v2/status/notices"


async def test_a_posted_notice_is_listed_read_audited_and_in_the_outbox(
    client: httpx.AsyncClient, server: Flagstaff, clock: FakeClock
) -> None:
    body = {
        "title": "EU edits are read-only",
        "message": "Use the kill switch for emergencies.",
        "severity": "warning",
        "regions": ["eu", "eu"],
        "expiresAt": clock.millis + 3_600_000,
    }
    created = await client.post(NOTICES, json=body, headers=ADMIN)
    assert created.status_code == 201, created.text
    notice = created.json()
    assert notice == {
        "_links": {"self": {"href": f"{NOTICES}/{notice['_id']}", "type": "application/json"}},
        "_id": notice["_id"],
        "title": "EU edits are read-only",
        "message": "Use the kill switch for emergencies.",
        "severity": "warning",
        "regions": ["eu"],
        "creationDate": clock.millis,
        "expiresAt": clock.millis + 3_600_000,
        "_source": "api",
    }
    clock.advance(seconds=1)
    second = await client.post(NOTICES, json={"title": "All fine again"}, headers=ADMIN)
    assert second.json()["severity"] == "info"
    listed = (await client.get(NOTICES, headers=ADMIN)).json()
    assert [item["title"] for item in listed["items"]] == ["All fine again", notice["title"]]
    assert listed["totalCount"] == 2
    one = await client.get(f"{NOTICES}/{notice['_id']}", headers=ADMIN)
    assert one.json() == notice

    audit = (await client.get("/api/v2/auditlog?spec=notice/*", headers=ADMIN)).json()
    first = audit["items"][-1]
    assert first["accesses"] == [{"action": "createNotice", "resource": f"notice/{notice['_id']}"}]
    assert first["description"] == (
        "FLAGSTAFF_ADMIN_TOKEN posted the status notice EU edits are read-only"
    )

    assert server.store is not None
    with server.store.unit_of_work(read_only=True) as uow:
        changes = [change for change in uow.changes.since(0) if change.kind == "notice"]
    assert [(c.key, c.version, c.project, c.environment) for c in changes] == [
        (notice["_id"], 1, "", ""),
        (second.json()["_id"], 1, "", ""),
    ]
    without_links = {name: value for name, value in notice.items() if name != "_links"}
    assert changes[0].item == without_links


async def test_a_deleted_notice_is_gone_audited_and_deleted_in_the_outbox(
    client: httpx.AsyncClient, server: Flagstaff
) -> None:
    notice = (await client.post(NOTICES, json={"title": "Maintenance"}, headers=ADMIN)).json()
    deleted = await client.delete(f"{NOTICES}/{notice['_id']}", headers=ADMIN)
    assert deleted.status_code == 204
    assert (await client.get(NOTICES, headers=ADMIN)).json()["items"] == []
    missing = problem(await client.get(f"{NOTICES}/{notice['_id']}", headers=ADMIN), 404)
    assert notice["_id"] in missing["message"]
    problem(await client.delete(f"{NOTICES}/{notice['_id']}", headers=ADMIN), 404)
    problem(await client.delete(f"{NOTICES}/not%20an%20id", headers=ADMIN), 404)

    audit = (await client.get("/api/v2/auditlog?spec=notice/*", headers=ADMIN)).json()
    assert [item["accesses"][0]["action"] for item in audit["items"]] == [
        "deleteNotice",
        "createNotice",
    ]
    assert audit["items"][0]["delta"]["before"]["title"] == "Maintenance"
    assert server.store is not None
    with server.store.unit_of_work(read_only=True) as uow:
        last = uow.changes.since(0)[-1]
    assert (last.kind, last.key, last.version, last.item) == ("notice", notice["_id"], 2, None)


async def test_bad_notices_are_refused_naming_the_field_and_nothing_is_kept(
    client: httpx.AsyncClient, clock: FakeClock
) -> None:
    cases = [
        ({}, "/title"),
        ({"title": "   "}, "/title"),
        ({"title": "x" * 201}, "/title"),
        ({"title": "ok", "message": "m" * 2001}, "/message"),
        ({"title": "ok", "severity": "urgent"}, "/severity"),
        ({"title": "ok", "regions": ["EU"]}, "/regions/0"),
        ({"title": "ok", "regions": "eu"}, "/regions"),
        ({"title": "ok", "expiresAt": clock.millis - 1}, "/expiresAt"),
        ({"title": "ok", "expiresAt": "tomorrow"}, "/expiresAt"),
        ({"title": "bell\u0007"}, "/title"),
        ({"title": "ok", "colour": "red"}, "/colour"),
    ]
    for body, path in cases:
        refused = problem(await client.post(NOTICES, json=body, headers=ADMIN), 400)
        assert refused["path"] == path, (body, refused)
    assert (await client.get(NOTICES, headers=ADMIN)).json()["totalCount"] == 0


async def test_reading_takes_any_token_and_posting_an_unscoped_writer(
    client: httpx.AsyncClient,
) -> None:
    await create_project(client, "shop")
    reader = await create_token(client, "reader")
    scoped_writer = await create_token(client, "writer", project="shop")
    writer = await create_token(client, "writer")
    problem(await client.get(NOTICES), 401)
    problem(await client.post(NOTICES, json={"title": "x"}, headers={"Authorization": reader}), 403)
    problem(
        await client.post(NOTICES, json={"title": "x"}, headers={"Authorization": scoped_writer}),
        403,
    )
    posted = await client.post(NOTICES, json={"title": "x"}, headers={"Authorization": writer})
    assert posted.status_code == 201
    for token in (reader, scoped_writer):
        listed = await client.get(NOTICES, headers={"Authorization": token})
        assert listed.json()["totalCount"] == 1
