"""The webhook outbox is written in the transaction of each change: one delivery per webhook that
is on and whose statements pass the change (LaunchDarkly's policy semantics, tags included),
none for a change that fails; the delivery log lists them with their audit entries."""

from __future__ import annotations

import httpx
from flagstaff_server.app import Flagstaff
from webhook_api import (
    WEBHOOKS,
    audit_entries,
    create_flag,
    create_project,
    create_webhook,
    flag_statement,
    ok,
    outbox,
    problem,
    toggle,
)


def queued_actions(server: Flagstaff, webhook_id: str) -> list[tuple[str, str]]:
    entries = audit_entries(server)
    return [
        (entries[d.entry].action, entries[d.entry].resource) for d in outbox(server, webhook_id)
    ]


async def test_each_webhook_gets_the_changes_its_statements_pass(
    client: httpx.AsyncClient, server: Flagstaff
) -> None:
    await create_project(client)
    everything = await create_webhook(client)
    production = await create_webhook(
        client, statements=[flag_statement("proj/*:env/production:flag/*")]
    )
    toggles_only = await create_webhook(
        client,
        statements=[
            {"effect": "allow", "actions": ["updateOn"], "resources": ["proj/*:env/*:flag/*"]}
        ],
    )
    segments = await create_webhook(client, statements=[flag_statement("proj/*:env/*:segment/*")])
    off = await create_webhook(client, on=False)

    await create_flag(client, "checkout")
    await toggle(client, "checkout", on=True, env="test")
    await toggle(client, "checkout", on=True, env="production")
    ok(
        await client.patch(
            "/api/v2/flags/shop/checkout",
            json=[{"op": "replace", "path": "/environments/production/offVariation", "value": 0}],
        )
    )

    created = ("createFlag", "proj/shop:env/*:flag/checkout")
    in_test = ("updateFlag", "proj/shop:env/test:flag/checkout")
    in_production = ("updateFlag", "proj/shop:env/production:flag/checkout")
    assert queued_actions(server, production["_id"]) == [created, in_production, in_production]
    assert queued_actions(server, toggles_only["_id"]) == [in_test, in_production]
    assert queued_actions(server, segments["_id"]) == []
    assert queued_actions(server, off["_id"]) == []
    flag_changes = [
        action for action in queued_actions(server, everything["_id"]) if "flag/" in action[1]
    ]
    assert flag_changes == [created, in_test, in_production, in_production]
    # one flag, one order whatever the environment
    assert {d.order_key for d in outbox(server, production["_id"])} == {"proj/shop:flag/checkout"}


async def test_a_rename_concerns_every_environment_and_tags_narrow_a_filter(
    client: httpx.AsyncClient, server: Flagstaff
) -> None:
    await create_project(client)
    production = await create_webhook(
        client, statements=[flag_statement("proj/*:env/production:flag/*")]
    )
    mobile = await create_webhook(client, statements=[flag_statement("proj/*:env/*:flag/*;mobile")])
    await create_flag(client, "plain")
    await create_flag(client, "app", tags=["mobile"])
    ok(
        await client.patch(
            "/api/v2/flags/shop/plain", json=[{"op": "replace", "path": "/name", "value": "Plain"}]
        )
    )
    assert queued_actions(server, production["_id"]) == [
        ("createFlag", "proj/shop:env/*:flag/plain"),
        ("createFlag", "proj/shop:env/*:flag/app"),
        ("updateFlag", "proj/shop:env/*:flag/plain"),
    ]
    assert queued_actions(server, mobile["_id"]) == [("createFlag", "proj/shop:env/*:flag/app")]


async def test_a_deny_keeps_a_change_out(client: httpx.AsyncClient, server: Flagstaff) -> None:
    await create_project(client)
    webhook = await create_webhook(
        client,
        statements=[
            flag_statement(),
            {"effect": "deny", "actions": ["*"], "resources": ["proj/*:env/test:flag/*"]},
        ],
    )
    await create_flag(client, "checkout")
    await toggle(client, "checkout", on=True, env="test")
    await toggle(client, "checkout", on=True, env="production")
    # the creation concerns production too, so the deny of test alone does not keep it out
    assert queued_actions(server, webhook["_id"]) == [
        ("createFlag", "proj/shop:env/*:flag/checkout"),
        ("updateFlag", "proj/shop:env/production:flag/checkout"),
    ]


async def test_a_refused_change_queues_nothing(
    client: httpx.AsyncClient, server: Flagstaff
) -> None:
    await create_project(client)
    webhook = await create_webhook(client)
    await create_flag(client, "checkout")
    before = outbox(server, webhook["_id"])
    bad = [{"op": "replace", "path": "/environments/production/offVariation", "value": 99}]
    problem(await client.patch("/api/v2/flags/shop/checkout", json=bad), 400)
    assert outbox(server, webhook["_id"]) == before


async def test_the_delivery_log_lists_pending_deliveries_with_their_entries(
    client: httpx.AsyncClient, server: Flagstaff
) -> None:
    await create_project(client)
    webhook = await create_webhook(client, statements=[flag_statement()])
    await create_flag(client, "checkout")
    await toggle(client, "checkout", on=True)
    href = f"{WEBHOOKS}/{webhook['_id']}/deliveries"
    page = ok(await client.get(href))
    assert page["totalCount"] == 2
    newest, oldest = page["items"]
    entries = audit_entries(server)
    assert entries[newest["auditLogEntryId"]].action == "updateFlag"
    assert entries[oldest["auditLogEntryId"]].action == "createFlag"
    assert newest["status"] == "pending"
    assert newest["attempts"] == 0
    assert newest["attemptLog"] == []
    assert newest["orderKey"] == "proj/shop:flag/checkout"
    assert newest["nextAttemptDate"] == newest["creationDate"]
    assert newest["finishedDate"] is None
    assert ok(await client.get(f"{href}/{newest['_id']}")) == newest
    assert ok(await client.get(f"{href}?limit=1&offset=1"))["items"] == [oldest]
    assert ok(await client.get(f"{href}?status=delivered"))["items"] == []
    assert problem(await client.get(f"{href}?status=sent"), 400)["path"] == "status"
    problem(await client.get(f"{href}/999999999"), 404)
    problem(await client.get(f"{href}/not-a-number"), 404)
    assert ok(await client.get(f"{WEBHOOKS}/{webhook['_id']}"))["_status"]["pending"] == 2
