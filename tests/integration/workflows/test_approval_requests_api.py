"""Approval requests in LaunchDarkly's shapes (docs/workflows.md, "Approval requests") over
memory, SQLite and PostgreSQL: create, review, apply, list, get, edit and delete, per flag and
through `/api/v2/approval-requests` (segments by `resourceId`); self-review, `minNumApprovals`,
approvals voided by an edit, the conflict check at apply, `executionDate` becoming a scheduled
change run by the worker, and bad input refused with nothing applied."""

from __future__ import annotations

from typing import Any

import httpx
from workflow_api import FLAG, PROJECT, SEMANTIC, Workflows, problem, schedules_path

HOUR_MS = 3_600_000
GENERIC = "/api/v2/approval-requests"
TURN_ON = [{"kind": "turnFlagOn"}]


def requests_path(environment: str = "production") -> str:
    return f"/api/v2/projects/{PROJECT}/flags/{FLAG}/environments/{environment}/approval-requests"


async def writer(workflows: Workflows, name: str) -> dict[str, str]:
    created = await workflows.client.post(
        "/api/v2/tokens", json={"name": name, "role": "writer", "projectKey": PROJECT}
    )
    assert created.status_code == 201, created.text
    return {"Authorization": created.json()["token"]}


async def configure(workflows: Workflows, **fields: Any) -> None:
    response = await workflows.client.patch(
        f"/api/v2/projects/{PROJECT}/environments/production",
        json=[{"op": "replace", "path": f"/{k}", "value": v} for k, v in fields.items()],
    )
    assert response.status_code == 200, response.text


async def ask(
    workflows: Workflows,
    headers: dict[str, str],
    instructions: list[Any] | None = None,
    **body: Any,
) -> dict[str, Any]:
    response = await workflows.client.post(
        requests_path(),
        json={"description": "launch", "instructions": instructions or TURN_ON, **body},
        headers=headers,
    )
    assert response.status_code == 201, response.text
    created: dict[str, Any] = response.json()
    return created


async def review(
    workflows: Workflows, request_id: str, headers: dict[str, str], kind: str = "approve"
) -> httpx.Response:
    return await workflows.client.post(
        f"{requests_path()}/{request_id}/reviews", json={"kind": kind}, headers=headers
    )


async def apply(workflows: Workflows, request_id: str, headers: dict[str, str]) -> httpx.Response:
    return await workflows.client.post(
        f"{requests_path()}/{request_id}/apply", json={"comment": "ship it"}, headers=headers
    )


async def production_on(workflows: Workflows) -> bool:
    return bool((await workflows.flag())["environments"]["production"]["on"])


async def test_a_request_is_reviewed_by_another_and_applied(workflows: Workflows) -> None:
    await configure(workflows, approvalSettings={"required": True})
    alice, bob = await writer(workflows, "alice"), await writer(workflows, "bob")
    problem(
        await workflows.client.patch(
            f"/api/v2/flags/{PROJECT}/{FLAG}",
            json={"environmentKey": "production", "instructions": TURN_ON},
            headers={**alice, "Content-Type": SEMANTIC},
        ),
        405,
    )
    created = await ask(workflows, alice)
    assert (created["status"], created["reviewStatus"]) == ("pending", "pending")
    assert created["resourceId"] == f"proj/{PROJECT}:env/production:flag/{FLAG}"
    # the requester may not approve their own request
    own = problem(await review(workflows, created["_id"], alice), 403)
    assert "canReviewOwnRequest" in own["detail"]
    problem(await apply(workflows, created["_id"], alice), 409)
    approved = await review(workflows, created["_id"], bob)
    assert approved.status_code == 200, approved.text
    assert approved.json()["reviewStatus"] == "approved"
    assert [r["kind"] for r in approved.json()["allReviews"]] == ["approve"]
    assert await production_on(workflows) is False
    applied = await apply(workflows, created["_id"], alice)
    assert applied.status_code == 200, applied.text
    assert applied.json()["status"] == "completed"
    assert applied.json()["appliedDate"] == workflows.clock.millis
    assert await production_on(workflows) is True
    listed = (await workflows.client.get(requests_path())).json()
    assert [item["_id"] for item in listed["items"]] == [created["_id"]]
    fetched = (await workflows.client.get(f"{GENERIC}/{created['_id']}")).json()
    assert fetched["status"] == "completed"
    actions = [entry["action"] for entry in await workflows.audit()]
    for action in ("createApprovalRequest", "reviewApprovalRequest", "applyApprovalRequest"):
        assert action in actions
    assert "updateFlag" in actions
    assert "bypassRequiredApproval" not in actions


async def test_min_num_approvals_counts_distinct_reviewers(workflows: Workflows) -> None:
    await configure(workflows, approvalSettings={"required": True, "minNumApprovals": 2})
    alice, bob, carol = [await writer(workflows, n) for n in ("alice", "bob", "carol")]
    created = await ask(workflows, alice)
    await review(workflows, created["_id"], bob)
    twice = await review(workflows, created["_id"], bob)
    assert twice.json()["reviewStatus"] == "pending"
    refused = problem(await apply(workflows, created["_id"], alice), 409)
    assert "1 approval(s) of the 2" in refused["detail"]
    assert await production_on(workflows) is False
    await review(workflows, created["_id"], carol)
    assert (await apply(workflows, created["_id"], alice)).status_code == 200
    assert await production_on(workflows) is True


async def test_self_review_where_the_environment_allows_it(workflows: Workflows) -> None:
    await configure(workflows, approvalSettings={"required": True, "canReviewOwnRequest": True})
    alice = await writer(workflows, "alice")
    created = await ask(workflows, alice)
    assert (await review(workflows, created["_id"], alice)).status_code == 200
    assert (await apply(workflows, created["_id"], alice)).status_code == 200
    assert await production_on(workflows) is True


async def test_editing_the_instructions_voids_the_approvals(workflows: Workflows) -> None:
    await configure(workflows, approvalSettings={"required": True})
    alice, bob = await writer(workflows, "alice"), await writer(workflows, "bob")
    created = await ask(workflows, alice)
    await review(workflows, created["_id"], bob)
    edited = await workflows.client.patch(
        f"{requests_path()}/{created['_id']}",
        json={
            "instructions": [
                {
                    "kind": "replaceApprovalRequestInstructions",
                    "value": [
                        {"kind": "turnFlagOn"},
                        {"kind": "updateOffVariation", "variationId": "x"},
                    ],
                }
            ]
        },
        headers=alice,
    )
    # a variation that does not exist: nothing changes, the approval stands
    assert problem(edited, 400)["path"].startswith("/instructions/0/value/1")
    assert (await workflows.client.get(f"{GENERIC}/{created['_id']}")).json()[
        "reviewStatus"
    ] == "approved"
    flag = await workflows.flag()
    off = flag["variations"][0]["_id"]
    replacement = [{"kind": "turnFlagOn"}, {"kind": "updateOffVariation", "variationId": off}]
    edited = await workflows.client.patch(
        f"{requests_path()}/{created['_id']}",
        json={
            "instructions": [{"kind": "replaceApprovalRequestInstructions", "value": replacement}]
        },
        headers=alice,
    )
    assert edited.status_code == 200, edited.text
    body = edited.json()
    assert (body["reviewStatus"], body["allReviews"], body["_version"]) == ("pending", [], 3)
    assert [r["kind"] for r in body["_voidedReviews"]] == ["approve"]
    problem(await apply(workflows, created["_id"], alice), 409)
    problem(
        await workflows.client.patch(
            f"{requests_path()}/{created['_id']}",
            json={"instructions": [{"kind": "updateApprovalRequestDescription", "value": "x"}]},
            headers=bob,
        ),
        403,
    )
    await review(workflows, created["_id"], bob)
    assert (await apply(workflows, created["_id"], alice)).status_code == 200


async def test_apply_refuses_a_change_made_under_the_request(workflows: Workflows) -> None:
    """The admin (who may bypass approval) edits the flag while the request waits. A change to
    another part (the name), or one that leaves the part as it was (on, then off again), is no
    conflict; changing the default rule the request also sets is: applying is a 409 naming that
    instruction, and nothing is applied."""
    await configure(workflows, approvalSettings={"required": True})
    alice, bob = await writer(workflows, "alice"), await writer(workflows, "bob")
    variations = [v["_id"] for v in (await workflows.flag())["variations"]]
    created = await ask(
        workflows,
        alice,
        [
            {"kind": "turnFlagOn"},
            {"kind": "updateFallthroughVariationOrRollout", "variationId": variations[0]},
        ],
    )
    await review(workflows, created["_id"], bob)

    async def admin_patch(instructions: list[Any], environment: str | None = "production") -> None:
        body: dict[str, Any] = {"instructions": instructions, "comment": "admin"}
        if environment:
            body["environmentKey"] = environment
        response = await workflows.client.patch(
            f"/api/v2/flags/{PROJECT}/{FLAG}", json=body, headers={"Content-Type": SEMANTIC}
        )
        assert response.status_code == 200, response.text

    async def conflicts() -> list[dict[str, Any]]:
        shown = await workflows.client.get(f"{GENERIC}/{created['_id']}")
        found: list[dict[str, Any]] = shown.json()["conflicts"]
        return found

    await admin_patch([{"kind": "updateName", "value": "renamed"}], None)
    await admin_patch([{"kind": "turnFlagOn"}])
    await admin_patch([{"kind": "turnFlagOff"}])
    assert await conflicts() == []
    await admin_patch(
        [{"kind": "updateFallthroughVariationOrRollout", "variationId": variations[1]}]
    )
    version = (await workflows.flag())["_version"]
    [conflict] = await conflicts()
    assert "changed since the request was made" in conflict["reason"]
    assert conflict["instruction"]["kind"] == "updateFallthroughVariationOrRollout"
    refused = problem(await apply(workflows, created["_id"], alice), 409)
    assert refused["path"] == "/instructions/1"
    assert "nothing was applied" in refused["detail"]
    after = await workflows.flag()
    assert (after["_version"], after["environments"]["production"]["on"]) == (version, False)
    assert (await workflows.client.get(f"{GENERIC}/{created['_id']}")).json()["status"] == "pending"


async def test_an_execution_date_makes_a_scheduled_change(workflows: Workflows) -> None:
    await configure(workflows, approvalSettings={"required": True})
    alice, bob = await writer(workflows, "alice"), await writer(workflows, "bob")
    at = workflows.clock.millis + HOUR_MS
    created = await ask(workflows, alice, executionDate=at)
    assert created["executionDate"] == at
    await review(workflows, created["_id"], bob)
    applied = await apply(workflows, created["_id"], alice)
    assert applied.status_code == 200, applied.text
    assert applied.json()["status"] == "scheduled"
    [change] = (await workflows.client.get(schedules_path())).json()["items"]
    assert change["_id"] == applied.json()["_scheduledChangeId"]
    assert change["_origin"] == {"kind": "approvalRequest", "_id": created["_id"]}
    assert change["executionDate"] == at
    assert await production_on(workflows) is False
    workflows.clock.advance(hours=1)
    workflows.worker().tick()
    assert await production_on(workflows) is True
    assert (await workflows.client.get(f"{GENERIC}/{created['_id']}")).json()[
        "status"
    ] == "completed"


async def test_an_execution_date_that_passed_before_apply_is_refused(workflows: Workflows) -> None:
    await configure(workflows, approvalSettings={"required": True})
    alice, bob = await writer(workflows, "alice"), await writer(workflows, "bob")
    created = await ask(workflows, alice, executionDate=workflows.clock.millis + 1000)
    await review(workflows, created["_id"], bob)
    workflows.clock.advance(seconds=2)
    assert problem(await apply(workflows, created["_id"], alice), 400)["path"] == "/executionDate"
    assert (await workflows.client.get(schedules_path())).json()["items"] == []
    assert (await workflows.client.get(f"{GENERIC}/{created['_id']}")).json()["status"] == "pending"


async def test_bad_input_is_refused_naming_it_and_nothing_changes(workflows: Workflows) -> None:
    await configure(workflows, approvalSettings={"required": True})
    alice, bob = await writer(workflows, "alice"), await writer(workflows, "bob")
    client = workflows.client
    now = workflows.clock.millis
    cases = [
        ({"description": "x", "instructions": [{"kind": "frobnicate"}]}, "/instructions/0/kind"),
        (
            {"description": "x", "instructions": [{"kind": "removeRule", "ruleId": "nope"}]},
            "/instructions/0/ruleId",
        ),
        ({"description": "x", "instructions": []}, "/instructions"),
        ({"instructions": TURN_ON}, "/description"),
        ({"description": "x", "instructions": TURN_ON, "executionDate": now - 1}, "/executionDate"),
        ({"description": "x", "instructions": TURN_ON, "executionDate": "soon"}, "/executionDate"),
    ]
    for body, path in cases:
        refused = problem(await client.post(requests_path(), json=body, headers=alice), 400)
        assert refused["path"] == path, (body, refused)
    assert (await client.get(requests_path())).json()["items"] == []
    created = await ask(workflows, alice)
    assert (
        problem(
            await client.post(
                f"{requests_path()}/{created['_id']}/reviews", json={"kind": "maybe"}, headers=bob
            ),
            400,
        )["path"]
        == "/kind"
    )
    assert (
        problem(
            await client.post(
                f"{requests_path()}/{created['_id']}/reviews", json={"kind": "comment"}, headers=bob
            ),
            400,
        )["path"]
        == "/comment"
    )
    # a declined request cannot be applied
    assert (await review(workflows, created["_id"], bob, "decline")).json()[
        "reviewStatus"
    ] == "declined"
    declined = problem(await apply(workflows, created["_id"], alice), 409)
    assert "declined" in declined["detail"]
    assert declined["path"] == "/reviewStatus"
    assert await production_on(workflows) is False
    # where declined changes may not be applied, a decline blocks even with enough approvals
    await configure(
        workflows, approvalSettings={"required": True, "canApplyDeclinedChanges": False}
    )
    carol = await writer(workflows, "carol")
    await review(workflows, created["_id"], carol)
    assert (
        "canApplyDeclinedChanges"
        in problem(await apply(workflows, created["_id"], alice), 409)["detail"]
    )
    # bob changes his mind: approved by two, applied; then no more reviews or applies
    await review(workflows, created["_id"], bob)
    assert (await apply(workflows, created["_id"], alice)).status_code == 200
    assert problem(await review(workflows, created["_id"], bob), 409)["path"] == "/status"
    assert problem(await apply(workflows, created["_id"], alice), 409)["path"] == "/status"
    assert problem(await client.delete(f"{requests_path()}/{created['_id']}"), 409)
    problem(await client.get(f"{requests_path('test')}/{created['_id']}"), 404)
    problem(await client.get(f"{GENERIC}/nope"), 404)


async def test_a_reader_may_look_but_not_review(workflows: Workflows) -> None:
    alice = await writer(workflows, "alice")
    created = await ask(workflows, alice)
    made = await workflows.client.post(
        "/api/v2/tokens", json={"name": "r", "role": "reader", "projectKey": PROJECT}
    )
    reader = {"Authorization": made.json()["token"]}
    problem(await review(workflows, created["_id"], reader), 403)
    assert (await workflows.client.get(GENERIC, headers=reader)).json()["totalCount"] == 1
    # a pending request may be deleted
    assert (
        await workflows.client.delete(f"{GENERIC}/{created['_id']}", headers=alice)
    ).status_code == 204
    assert (await workflows.client.get(GENERIC)).json()["totalCount"] == 0


async def test_segments_through_the_generic_route_and_the_filter(workflows: Workflows) -> None:
    client = workflows.client
    made = await client.post(
        f"/api/v2/segments/{PROJECT}/production", json={"key": "beta", "name": "Beta"}
    )
    assert made.status_code == 201, made.text
    await configure(workflows, resourceApprovalSettings={"segment": {"required": True}})
    alice, bob = await writer(workflows, "alice"), await writer(workflows, "bob")
    resource = f"proj/{PROJECT}:env/production:segment/beta"
    body = {
        "resourceId": resource,
        "description": "add u1",
        "instructions": [{"kind": "addIncludedUsers", "values": ["u1"]}],
    }
    problem(
        await client.post(GENERIC, json={**body, "resourceId": "proj/p:flag/x"}, headers=alice), 400
    )
    created = await client.post(GENERIC, json=body, headers=alice)
    assert created.status_code == 201, created.text
    segment_request = created.json()
    flag_request = await ask(workflows, alice)
    pending = await client.get(
        GENERIC, params={"filter": 'resourceKind equals segment, status anyOf ["pending"]'}
    )
    assert [item["_id"] for item in pending.json()["items"]] == [segment_request["_id"]]
    by_resource = await client.get(GENERIC, params={"filter": f"resourceId equals {resource}"})
    assert by_resource.json()["totalCount"] == 1
    both = await client.get(GENERIC, params={"filter": 'reviewStatus anyOf ["pending","approved"]'})
    assert {item["_id"] for item in both.json()["items"]} == {
        segment_request["_id"],
        flag_request["_id"],
    }
    assert (
        problem(await client.get(GENERIC, params={"filter": "colour equals red"}), 400)["path"]
        == "filter"
    )
    approved = await client.post(
        f"{GENERIC}/{segment_request['_id']}/reviews", json={"kind": "approve"}, headers=bob
    )
    assert approved.status_code == 200, approved.text
    applied = await client.post(f"{GENERIC}/{segment_request['_id']}/apply", headers=alice)
    assert applied.status_code == 200, applied.text
    assert applied.json()["status"] == "completed"
    segment = (await client.get(f"/api/v2/segments/{PROJECT}/production/beta")).json()
    assert segment["included"] == ["u1"]
