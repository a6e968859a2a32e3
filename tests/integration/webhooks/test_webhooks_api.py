"""`/api/v2/webhooks` in LaunchDarkly's shapes: created (200, a generated secret when signing
without one), listed, read (the secret to admins only), patched and deleted, each audited without
the secret; bad input is a 400 naming the field and changes nothing; scoped tokens see none."""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from flagstaff_server.app import Flagstaff
from webhook_api import (
    WEBHOOKS,
    audit_entries,
    create_project,
    create_webhook,
    flag_statement,
    ok,
    problem,
)


async def token(client: httpx.AsyncClient, role: str, project: str | None = None) -> str:
    body: dict[str, Any] = {"name": f"{role} token", "role": role}
    if project is not None:
        body["projectKey"] = project
    secret: str = ok(await client.post("/api/v2/tokens", json=body), 201)["token"]
    return secret


async def test_a_created_webhook_has_launchdarklys_shape_and_a_generated_secret(
    client: httpx.AsyncClient,
) -> None:
    created = await create_webhook(
        client, name="Audit sink", tags=["ops", "audit"], statements=[flag_statement()]
    )
    webhook_id = created["_id"]
    assert len(webhook_id) == 24
    secret = created.pop("secret")
    assert len(secret) == 64
    assert created == {
        "_links": {
            "self": {"href": f"{WEBHOOKS}/{webhook_id}", "type": "application/json"},
            "deliveries": {
                "href": f"{WEBHOOKS}/{webhook_id}/deliveries",
                "type": "application/json",
            },
        },
        "_id": webhook_id,
        "url": "http://127.0.0.1:9/hook",
        "on": True,
        "name": "Audit sink",
        "tags": ["audit", "ops"],
        "statements": [flag_statement()],
        "sign": True,
        "_status": {
            "successCount": 0,
            "errorCount": 0,
            "lastSuccess": None,
            "lastError": None,
            "lastErrorMessage": None,
            "pending": 0,
            "failures": 0,
            "circuit": "closed",
            "circuitOpenUntil": None,
        },
    }
    assert ok(await client.get(f"{WEBHOOKS}/{webhook_id}")) == {**created, "secret": secret}
    listed = ok(await client.get(WEBHOOKS))
    assert listed["totalCount"] == 1
    assert [item["_id"] for item in listed["items"]] == [webhook_id]


async def test_a_given_secret_is_kept_and_an_unsigned_webhook_needs_none(
    client: httpx.AsyncClient,
) -> None:
    given = await create_webhook(client, secret="s3cret")
    assert given["secret"] == "s3cret"
    unsigned = await create_webhook(client, sign=False)
    assert "secret" not in unsigned
    assert unsigned["sign"] is False
    assert unsigned["statements"] == []


async def test_readers_see_webhooks_without_secrets_and_scoped_tokens_see_none(
    client: httpx.AsyncClient,
) -> None:
    await create_project(client, "shop")
    created = await create_webhook(client)
    reader = {"Authorization": await token(client, "reader")}
    seen = ok(await client.get(f"{WEBHOOKS}/{created['_id']}", headers=reader))
    assert "secret" not in seen
    assert seen["url"] == created["url"]
    problem(
        await client.post(
            WEBHOOKS, json={"url": "http://x", "sign": False, "on": True}, headers=reader
        ),
        403,
    )
    writer = {"Authorization": await token(client, "writer")}
    problem(await client.delete(f"{WEBHOOKS}/{created['_id']}", headers=writer), 403)
    scoped = {"Authorization": await token(client, "admin", project="shop")}
    problem(await client.get(WEBHOOKS, headers=scoped), 403)
    problem(await client.get(f"{WEBHOOKS}/{created['_id']}/deliveries", headers=scoped), 403)


@pytest.mark.parametrize(
    ("body", "path", "message"),
    [
        ({"url": "ftp://example.com/x"}, "/url", "http"),
        ({"url": "not a url"}, "/url", "http"),
        ({"url": "http:///nohost"}, "/url", "host"),
        ({"url": "http://example.com:99999/"}, "/url", "http"),
        ({"url": ""}, "/url", "URL"),
        ({"statements": {"effect": "allow"}}, "/statements", "array"),
        (
            {"statements": [{"effect": "allow", "actions": ["flipFlag"], "resources": ["proj/*"]}]},
            "/statements/0/actions/0",
            "unknown action 'flipFlag'",
        ),
        (
            {"statements": [flag_statement(), flag_statement("proj/*:flags/*")]},
            "/statements/1/resources/0",
            "no known resource type",
        ),
        (
            {"statements": [{"effect": "allow", "actions": ["*"]}]},
            "/statements/0/resources",
            "needs resources",
        ),
        ({"secret": ""}, "/secret", "secret"),
        ({"tags": ["bad tag"]}, "/tags/0", "tag"),
        ({"name": "x" * 300}, "/name", "name"),
    ],
)
async def test_bad_input_is_a_400_naming_the_field_and_creates_nothing(
    client: httpx.AsyncClient, body: dict[str, Any], path: str, message: str
) -> None:
    values = {"url": "http://127.0.0.1:9/hook", "sign": True, "on": True, **body}
    refused = problem(await client.post(WEBHOOKS, json=values), 400)
    assert refused["path"] == path
    assert message in refused["message"]
    assert ok(await client.get(WEBHOOKS))["items"] == []


async def test_launchdarklys_required_fields_are_required(client: httpx.AsyncClient) -> None:
    for missing in ("url", "sign", "on"):
        values = {"url": "http://127.0.0.1:9/hook", "sign": True, "on": True}
        del values[missing]
        refused = problem(await client.post(WEBHOOKS, json=values), 400)
        assert missing in refused["message"] or refused.get("path") == f"/{missing}"
    unknown = problem(
        await client.post(WEBHOOKS, json={"url": "http://a", "sign": True, "on": True, "x": 1}),
        400,
    )
    assert "x" in unknown["message"]


async def test_a_patch_is_checked_whole_and_audited_without_the_secret(
    client: httpx.AsyncClient, server: Flagstaff
) -> None:
    created = await create_webhook(client, secret="first-secret")
    href = f"{WEBHOOKS}/{created['_id']}"
    patched = ok(
        await client.patch(
            href,
            json=[
                {"op": "replace", "path": "/on", "value": False},
                {"op": "replace", "path": "/secret", "value": "second-secret"},
                {"op": "add", "path": "/statements/-", "value": flag_statement()},
            ],
        )
    )
    assert (patched["on"], patched["secret"], patched["statements"]) == (
        False,
        "second-secret",
        [flag_statement()],
    )
    bad = [
        {"op": "replace", "path": "/on", "value": True},
        {"op": "replace", "path": "/url", "value": "gopher://x"},
    ]
    assert problem(await client.patch(href, json=bad), 400)["path"] == "/url"
    bad_statement = [{"op": "replace", "path": "/statements/0/actions", "value": ["nope"]}]
    assert problem(await client.patch(href, json=bad_statement), 400)["path"] == (
        "/statements/0/actions/0"
    )
    read_only = [{"op": "replace", "path": "/_id", "value": "x"}]
    assert problem(await client.patch(href, json=read_only), 400)["path"] == "/_id"
    assert ok(await client.get(href)) == patched

    texts = [repr(entry) for entry in audit_entries(server).values()]
    assert not any("first-secret" in text or "second-secret" in text for text in texts)
    log = ok(await client.get("/api/v2/auditlog?spec=webhook/*"))["items"]
    assert [item["accesses"][0]["action"] for item in log] == ["updateWebhook", "createWebhook"]
    assert log[0]["title"] == f"FLAGSTAFF_ADMIN_TOKEN updated the webhook {created['_id']}"


async def test_a_deleted_webhook_is_gone(client: httpx.AsyncClient) -> None:
    created = await create_webhook(client)
    href = f"{WEBHOOKS}/{created['_id']}"
    assert (await client.delete(href)).status_code == 204
    problem(await client.get(href), 404)
    problem(await client.delete(href), 404)
    problem(await client.get(f"{href}/deliveries"), 404)
