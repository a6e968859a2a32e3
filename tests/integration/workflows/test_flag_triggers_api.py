"""Flag triggers through the management API and their unauthenticated URL: the secret is shown
once and stored hashed; a call turns the flag on or off through the semantic-patch path and is
audit-logged; a disabled, cycled or deleted trigger stops working; unknown triggers and wrong
secrets answer alike; calls are rate-limited (the fake clock moves the window, no sleeps); bad
input is a 400 naming the field with nothing stored."""

from __future__ import annotations

import hashlib
from typing import Any
from urllib.parse import urlsplit

import httpx
from support.in_process import asgi_client
from workflow_api import FLAG, PROJECT, SEMANTIC, Workflows, problem

TRIGGERS = f"/api/v2/flags/{PROJECT}/{FLAG}/triggers/production"


async def create(workflows: Workflows, kind: str = "turnFlagOn", **body: Any) -> dict[str, Any]:
    response = await workflows.client.post(
        TRIGGERS,
        json={"integrationKey": "datadog", "instructions": [{"kind": kind}], **body},
    )
    assert response.status_code == 201, response.text
    created: dict[str, Any] = response.json()
    return created


async def fire(workflows: Workflows, url: str, **options: Any) -> httpx.Response:
    """A call of the trigger's URL as an alerting tool makes it: no credential."""
    async with asgi_client(workflows.server.asgi) as anonymous:
        return await anonymous.post(urlsplit(url).path, **options)


def secret_of(url: str) -> str:
    return url.rsplit("/", 1)[1]


async def test_a_trigger_turns_the_flag_on_and_its_secret_is_shown_once(
    workflows: Workflows,
) -> None:
    created = await create(workflows, comment="when latency recovers")
    url = created["triggerURL"]
    assert url.startswith("http://flagstaff.test/webhook/triggers/" + created["_id"] + "/")
    secret = secret_of(url)
    assert len(secret) >= 40
    assert created["enabled"] is True
    assert created["_integrationKey"] == "datadog"
    assert created["instructions"] == [{"kind": "turnFlagOn"}]
    assert created["_triggerCount"] == 0
    read = (await workflows.client.get(f"{TRIGGERS}/{created['_id']}")).json()
    assert secret not in read["triggerURL"]
    assert read["triggerURL"].endswith("/********")
    listed = (await workflows.client.get(TRIGGERS)).json()
    assert [item["_id"] for item in listed["items"]] == [created["_id"]]

    fired = await fire(workflows, url, json={"alert": "p99 ok"})
    assert fired.status_code == 200, fired.text
    assert fired.json()["changed"] is True
    assert fired.json()["kind"] == "turnFlagOn"
    flag = await workflows.flag()
    assert flag["environments"]["production"]["on"] is True
    assert flag["environments"]["test"]["on"] is False
    again = await fire(workflows, url, content=b"not json", headers={"Content-Type": "text/plain"})
    assert again.status_code == 200, again.text
    assert again.json()["changed"] is False  # already on: nothing to do, as LaunchDarkly

    read = (await workflows.client.get(f"{TRIGGERS}/{created['_id']}")).json()
    assert read["_triggerCount"] == 2
    assert read["_lastTriggeredAt"] == workflows.clock.millis
    assert read["_recentTriggerBodies"] == [
        {"timestamp": workflows.clock.millis},
        {"timestamp": workflows.clock.millis, "jsonBody": {"alert": "p99 ok"}},
    ]
    entries = await workflows.audit()
    assert [e["action"] for e in entries].count("invokeTrigger") == 2
    [update] = [e for e in entries if e["action"] == "updateFlag"]
    assert update["comment"] == f"Flag trigger {created['_id']} (datadog)"
    # stored hashed: the secret is nowhere but in the answer that made it
    store = workflows.server.store
    assert store is not None
    with store.unit_of_work(read_only=True) as uow:
        record = uow.triggers.get(created["_id"])
        assert record is not None
        assert record.secret_hash == hashlib.sha256(secret.encode()).hexdigest()
        assert secret not in repr(record)
    assert secret not in str(entries)


async def test_unknown_triggers_and_wrong_secrets_answer_alike(workflows: Workflows) -> None:
    created = await create(workflows)
    url = created["triggerURL"]
    wrong = url[: -len(secret_of(url))] + "x" * 43
    unknown = url.replace(created["_id"], "0" * 24)
    for bad in (wrong, unknown, url + "/extra", url.rsplit("/", 1)[0]):
        body = problem(await fire(workflows, bad), 404)
        assert body["message"] == "no such trigger"
    async with asgi_client(workflows.server.asgi) as anonymous:
        answer = await anonymous.get(urlsplit(url).path)
    assert problem(answer, 405)
    assert (await workflows.flag())["environments"]["production"]["on"] is False


async def test_a_disabled_cycled_or_deleted_trigger_stops_working(workflows: Workflows) -> None:
    client = workflows.client
    created = await create(workflows, kind="turnFlagOff")
    path = f"{TRIGGERS}/{created['_id']}"
    url = created["triggerURL"]

    async def edit(*kinds: str) -> dict[str, Any]:
        response = await client.patch(
            path,
            json={"instructions": [{"kind": kind} for kind in kinds]},
            headers={"Content-Type": SEMANTIC},
        )
        assert response.status_code == 200, response.text
        body: dict[str, Any] = response.json()
        return body

    disabled = await edit("disableTrigger")
    assert (disabled["enabled"], disabled["_version"]) == (False, 2)
    assert disabled["triggerURL"].endswith("/********")
    problem(await fire(workflows, url), 409)
    await edit("enableTrigger")
    assert (await fire(workflows, url)).status_code == 200

    cycled = await edit("cycleTriggerUrl")
    new_url = cycled["triggerURL"]
    assert secret_of(new_url) != secret_of(url)
    assert "*" not in new_url
    problem(await fire(workflows, url), 404)
    assert (await fire(workflows, new_url)).status_code == 200

    assert (await client.delete(path)).status_code == 204
    problem(await client.get(path), 404)
    problem(await fire(workflows, new_url), 404)
    actions = [e["action"] for e in await workflows.audit()]
    assert actions.count("updateTrigger") == 3
    assert actions.count("deleteTrigger") == 1


async def test_calls_are_rate_limited_per_trigger_and_misses_per_client(
    workflows: Workflows,
) -> None:
    url = (await create(workflows))["triggerURL"]
    for _ in range(60):
        assert (await fire(workflows, url)).status_code == 200
    refused = await fire(workflows, url)
    assert problem(refused, 429)
    assert int(refused.headers["retry-after"]) >= 1
    workflows.clock.advance(minutes=1)
    assert (await fire(workflows, url)).status_code == 200

    other = (await create(workflows, kind="turnFlagOff"))["triggerURL"]
    wrong = other[: -len(secret_of(other))] + "y" * 43
    for _ in range(20):
        problem(await fire(workflows, wrong), 404)
    # this client is now refused even with a valid URL, until the misses leave the window
    problem(await fire(workflows, other), 429)
    workflows.clock.advance(minutes=10)
    assert (await fire(workflows, other)).status_code == 200


async def test_bad_trigger_input_is_a_400_naming_the_field_and_stores_nothing(
    workflows: Workflows,
) -> None:
    client = workflows.client
    cases: list[tuple[Any, str]] = [
        ({"instructions": [{"kind": "turnFlagOn"}]}, "/integrationKey"),
        (
            {"integrationKey": "pagerduty", "instructions": [{"kind": "turnFlagOn"}]},
            "/integrationKey",
        ),
        ({"integrationKey": "datadog"}, "/instructions"),
        ({"integrationKey": "datadog", "instructions": []}, "/instructions"),
        (
            {
                "integrationKey": "datadog",
                "instructions": [{"kind": "turnFlagOn"}, {"kind": "turnFlagOff"}],
            },
            "/instructions",
        ),
        (
            {"integrationKey": "datadog", "instructions": [{"kind": "updateName"}]},
            "/instructions/0/kind",
        ),
        ({"integrationKey": "datadog", "instructions": ["turnFlagOn"]}, "/instructions/0"),
        (
            {"integrationKey": "datadog", "instructions": [{"kind": "turnFlagOn"}], "comment": 1},
            "/comment",
        ),
        ([], "/"),
    ]
    for body, path in cases:
        assert problem(await client.post(TRIGGERS, json=body), 400)["path"] == path, body
    assert (await client.get(TRIGGERS)).json()["items"] == []
    created = await create(workflows)
    trigger = f"{TRIGGERS}/{created['_id']}"
    patches: list[tuple[Any, str]] = [
        ({"instructions": [{"kind": "turnFlagOn"}]}, "/instructions/0/kind"),
        (
            {
                "instructions": [
                    {"kind": "replaceTriggerActionInstructions", "value": [{"kind": "x"}]}
                ]
            },
            "/instructions/0/value/0/kind",
        ),
        ({"instructions": []}, "/instructions"),
    ]
    for body, path in patches:
        assert problem(await client.patch(trigger, json=body), 400)["path"] == path, body
    assert (await client.get(trigger)).json()["_version"] == 1
    for path in (
        f"/api/v2/flags/{PROJECT}/missing/triggers/production",
        f"/api/v2/flags/{PROJECT}/{FLAG}/triggers/staging",
    ):
        problem(
            await client.post(
                path, json={"integrationKey": "datadog", "instructions": [{"kind": "turnFlagOn"}]}
            ),
            404,
        )


async def test_triggers_need_a_writer_and_go_with_their_flag(workflows: Workflows) -> None:
    client = workflows.client
    reader = await client.post(
        "/api/v2/tokens", json={"name": "r", "role": "reader", "projectKey": PROJECT}
    )
    headers = {"Authorization": reader.json()["token"]}
    body = {"integrationKey": "generic-trigger", "instructions": [{"kind": "turnFlagOn"}]}
    problem(await client.post(TRIGGERS, json=body, headers=headers), 403)
    assert (await client.get(TRIGGERS, headers=headers)).status_code == 200
    url = (await create(workflows))["triggerURL"]
    assert (await client.delete(f"/api/v2/flags/{PROJECT}/{FLAG}")).status_code == 204
    recreated = await client.post(f"/api/v2/flags/{PROJECT}", json={"key": FLAG, "name": "F"})
    assert recreated.status_code == 201
    assert (await client.get(TRIGGERS)).json()["items"] == []
    problem(await fire(workflows, url), 404)
