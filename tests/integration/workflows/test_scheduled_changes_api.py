"""Scheduled changes through the management API, applied by workers the test ticks on its clock
(no sleeps): a change runs once at its time, through the semantic-patch path (audit entry,
versions); a missed time runs late and says by how much; conflicts with other changes and with
the flag's current state are reported; edits and deletions until it runs; bad input is a 400
naming the field with nothing stored."""

from __future__ import annotations

from typing import Any

from flagstaff_server.services import scheduled_change_runs
from workflow_api import (
    FLAG,
    PROJECT,
    SEMANTIC,
    Workflows,
    problem,
    schedules_path,
)

HOUR_MS = 3_600_000


async def listed(workflows: Workflows, status: str = "pending") -> list[dict[str, Any]]:
    response = await workflows.client.get(schedules_path(), params={"status": status})
    assert response.status_code == 200, response.text
    items: list[dict[str, Any]] = response.json()["items"]
    return items


async def test_a_scheduled_change_runs_once_at_its_time(workflows: Workflows) -> None:
    at = workflows.clock.millis + HOUR_MS
    response = await workflows.schedule([{"kind": "turnFlagOn"}], at=at, comment="launch")
    assert response.status_code == 201, response.text
    created = response.json()
    assert created["executionDate"] == at
    assert created["instructions"] == [{"kind": "turnFlagOn"}]
    assert created["_maintainerId"] == "admin-token"
    assert created["_version"] == 1
    assert created["_creationDate"] == workflows.clock.millis
    assert created["conflicts"] == []
    assert created["_status"] == "pending"
    assert created["comment"] == "launch"
    assert [item["_id"] for item in await listed(workflows)] == [created["_id"]]

    worker = workflows.worker()
    worker.tick()
    assert (await workflows.flag())["environments"]["production"]["on"] is False
    workflows.clock.advance(hours=1)
    worker.tick()
    flag = await workflows.flag()
    assert flag["environments"]["production"]["on"] is True
    assert flag["environments"]["test"]["on"] is False
    version = flag["_version"]
    workflows.clock.advance(seconds=5)
    worker.tick()
    assert (await workflows.flag())["_version"] == version

    assert await listed(workflows) == []
    [done] = await listed(workflows, "executed")
    assert done["_executedDate"] == at
    assert done["_lateByMillis"] == 0
    entries = await workflows.audit()
    executions = [e for e in entries if e["action"] == "executeScheduledChange"]
    updates = [e for e in entries if e["action"] == "updateFlag"]
    assert len(executions) == 1
    assert len(updates) == 1
    assert updates[0]["comment"] == f"Scheduled change {created['_id']}, on time. launch"
    assert updates[0]["delta"]["patch"]["scheduledChangeId"] == created["_id"]
    assert worker.status()["jobs"]["scheduled-changes"]["items"] == 1


async def test_a_change_due_twice_over_commits_once(workflows: Workflows) -> None:
    """Two workers ticking together: only the lease holder runs the job. And with the lease
    out of the way (two holders racing through a lost lease), the unique key still lets the
    change commit once."""
    at = workflows.clock.millis + 1000
    created = (await workflows.schedule([{"kind": "turnFlagOn"}], at=at)).json()
    workflows.clock.advance(seconds=1)
    first, second = workflows.worker("a"), workflows.worker("b")
    second.tick()
    first.tick()
    assert second.states["scheduled-changes"].items == 1
    assert first.states["scheduled-changes"].runs == 0
    plane = workflows.server.plane
    assert plane is not None
    for _ in range(2):
        again = scheduled_change_runs.execute(
            plane, created["_id"], holds_lease=lambda uow, now: True
        )
        assert again is None
    executions = [e for e in await workflows.audit() if e["action"] == "executeScheduledChange"]
    assert len(executions) == 1


async def test_a_missed_time_runs_late_and_the_audit_says_by_how_much(
    workflows: Workflows,
) -> None:
    at = workflows.clock.millis + 60_000
    created = (await workflows.schedule([{"kind": "turnFlagOn"}], at=at)).json()
    workflows.clock.advance(hours=3, minutes=1)  # every worker was down
    worker = workflows.worker()
    worker.tick()
    status = worker.status()["jobs"]["scheduled-changes"]
    assert status["due"] == 1
    assert status["lagSeconds"] == 3 * 3600
    assert (await workflows.flag())["environments"]["production"]["on"] is True
    [done] = await listed(workflows, "executed")
    assert done["_lateByMillis"] == 3 * HOUR_MS
    [update] = [e for e in await workflows.audit() if e["action"] == "updateFlag"]
    assert update["comment"] == (
        f"Scheduled change {created['_id']}, late by 3h 0m 0s "
        f"({3 * HOUR_MS} ms after its executionDate)"
    )
    workflows.clock.advance(seconds=1)
    worker.tick()
    assert worker.status()["jobs"]["scheduled-changes"]["due"] == 0


async def test_missed_changes_catch_up_in_execution_order(workflows: Workflows) -> None:
    now = workflows.clock.millis
    await workflows.schedule([{"kind": "turnFlagOn"}], at=now + 2000)
    response = await workflows.schedule(
        [{"kind": "turnFlagOff"}], at=now + 1000, query="?ignoreConflicts=true"
    )
    assert response.status_code == 201, response.text
    workflows.clock.advance(minutes=30)
    workflows.worker().tick()
    # off first (its time was earlier), then on
    assert (await workflows.flag())["environments"]["production"]["on"] is True
    executed = await listed(workflows, "executed")
    assert [item["executionDate"] for item in executed] == [now + 1000, now + 2000]


async def test_a_schedule_in_the_past_or_malformed_is_a_400_and_stores_nothing(
    workflows: Workflows,
) -> None:
    now = workflows.clock.millis
    cases: list[tuple[Any, str]] = [
        ({"executionDate": now - 1, "instructions": [{"kind": "turnFlagOn"}]}, "/executionDate"),
        ({"instructions": [{"kind": "turnFlagOn"}]}, "/executionDate"),
        ({"executionDate": True, "instructions": [{"kind": "turnFlagOn"}]}, "/executionDate"),
        ({"executionDate": "soon", "instructions": [{"kind": "turnFlagOn"}]}, "/executionDate"),
        ({"executionDate": 10**16, "instructions": [{"kind": "turnFlagOn"}]}, "/executionDate"),
        ({"executionDate": now, "instructions": []}, "/instructions"),
        ({"executionDate": now, "instructions": [{"kind": "fly"}]}, "/instructions/0/kind"),
        ({"executionDate": now, "instructions": ["turnFlagOn"]}, "/instructions/0"),
        (
            {"executionDate": now, "instructions": [{"kind": "removeRule", "ruleId": "nope"}]},
            "/instructions/0/ruleId",
        ),
        (
            {"executionDate": now, "instructions": [{"kind": "turnFlagOn"}] * 101},
            "/instructions",
        ),
        (
            {"executionDate": now, "instructions": [{"kind": "deleteScheduledChange"}]},
            "/instructions/0/kind",
        ),
        (
            {"executionDate": now, "instructions": [{"kind": "turnFlagOn"}], "comment": 5},
            "/comment",
        ),
        ([{"kind": "turnFlagOn"}], "/"),
    ]
    for body, path in cases:
        response = await workflows.client.post(schedules_path(), json=body)
        assert problem(response, 400)["path"] == path, (body, response.text)
    assert await listed(workflows, "all") == []
    assert not [e for e in await workflows.audit() if "ScheduledChange" in e["action"]]


async def test_unknown_targets_are_404(workflows: Workflows) -> None:
    body = {"executionDate": workflows.clock.millis, "instructions": [{"kind": "turnFlagOn"}]}
    for path in (
        schedules_path(environment="staging"),
        schedules_path(flag="missing"),
        f"/api/v2/projects/nope/flags/{FLAG}/environments/production/scheduled-changes",
    ):
        problem(await workflows.client.post(path, json=body), 404)
        problem(await workflows.client.get(path), 404)
    problem(await workflows.client.get(schedules_path() + "/0123456789abcdef01234567"), 404)


async def test_conflicting_changes_are_refused_unless_ignored_and_then_listed(
    workflows: Workflows,
) -> None:
    at = workflows.clock.millis + HOUR_MS
    first = (await workflows.schedule([{"kind": "turnFlagOff"}], at=at)).json()
    refused = await workflows.schedule([{"kind": "turnFlagOn"}], at=at + 1000)
    body = problem(refused, 400)
    assert body["path"] == "/instructions/0"
    assert first["_id"] in body["message"]
    assert "ignoreConflicts=true" in body["message"]
    # another environment's on/off, and another part of the flag, do not conflict
    other_env = await workflows.schedule([{"kind": "turnFlagOn"}], at=at, environment="test")
    assert other_env.status_code == 201, other_env.text
    forced = await workflows.schedule(
        [{"kind": "updateName", "value": "F2"}, {"kind": "turnFlagOn"}],
        at=at + 1000,
        query="?ignoreConflicts=true",
    )
    assert forced.status_code == 201, forced.text
    [conflict] = forced.json()["conflicts"]
    assert conflict["instruction"] == {"kind": "turnFlagOn"}
    assert conflict["scheduledChangeId"] == first["_id"]
    again = (await workflows.client.get(schedules_path() + f"/{first['_id']}")).json()
    assert [c["scheduledChangeId"] for c in again["conflicts"]] == [forced.json()["_id"]]


async def test_a_change_the_flag_no_longer_fits_is_reported_then_fails_leaving_the_flag(
    workflows: Workflows,
) -> None:
    client = workflows.client
    variation = (await workflows.flag())["variations"][0]["_id"]
    patched = await client.patch(
        f"/api/v2/flags/{PROJECT}/{FLAG}",
        json={
            "environmentKey": "production",
            "instructions": [
                {
                    "kind": "addRule",
                    "clauses": [{"attribute": "email", "op": "endsWith", "values": ["@x.io"]}],
                    "variationId": variation,
                }
            ],
        },
        headers={"Content-Type": SEMANTIC},
    )
    assert patched.status_code == 200, patched.text
    rule = patched.json()["environments"]["production"]["rules"][0]["_id"]
    at = workflows.clock.millis + HOUR_MS
    created = await workflows.schedule(
        [{"kind": "updateRuleDescription", "ruleId": rule, "description": "VIPs"}], at=at
    )
    assert created.status_code == 201, created.text
    change_id = created.json()["_id"]
    removed = await client.patch(
        f"/api/v2/flags/{PROJECT}/{FLAG}",
        json={
            "environmentKey": "production",
            "instructions": [{"kind": "removeRule", "ruleId": rule}],
        },
        headers={"Content-Type": SEMANTIC},
    )
    assert removed.status_code == 200, removed.text
    version = removed.json()["_version"]
    [conflict] = (await client.get(schedules_path() + f"/{change_id}")).json()["conflicts"]
    assert conflict["reason"].startswith("does not apply to the flag as it is now")
    assert conflict["path"] == "/instructions/0/ruleId"

    workflows.clock.advance(hours=1)
    workflows.worker().tick()
    assert (await workflows.flag())["_version"] == version
    [failed] = await listed(workflows, "failed")
    assert failed["_error"]["path"] == "/instructions/0/ruleId"
    [entry] = [e for e in await workflows.audit() if e["action"] == "failScheduledChange"]
    assert entry["comment"].startswith(f"Scheduled change {change_id}, failed: ")


async def test_a_pending_change_is_edited_and_deleted_until_it_runs(workflows: Workflows) -> None:
    client = workflows.client
    at = workflows.clock.millis + HOUR_MS
    change = (await workflows.schedule([{"kind": "turnFlagOn"}], at=at)).json()
    path = schedules_path() + f"/{change['_id']}"
    edit = await client.patch(
        path,
        json={
            "comment": "later, and off",
            "instructions": [
                {"kind": "replaceScheduledChangesInstructions", "value": [{"kind": "turnFlagOff"}]},
                {"kind": "updateScheduledChangesExecutionDate", "value": at + HOUR_MS},
            ],
        },
        headers={"Content-Type": SEMANTIC},
    )
    assert edit.status_code == 200, edit.text
    edited = edit.json()
    assert edited["instructions"] == [{"kind": "turnFlagOff"}]
    assert edited["executionDate"] == at + HOUR_MS
    assert edited["_version"] == 2
    assert edited["comment"] == "later, and off"

    bad = [
        (
            {"instructions": [{"kind": "updateScheduledChangesExecutionDate", "value": 5}]},
            "/instructions/0/value",
        ),
        (
            {"instructions": [{"kind": "replaceScheduledChangesInstructions", "value": []}]},
            "/instructions/0/value",
        ),
        (
            {
                "instructions": [
                    {
                        "kind": "replaceScheduledChangesInstructions",
                        "value": [{"kind": "removeRule", "ruleId": "x"}],
                    }
                ]
            },
            "/instructions/0/value/0/ruleId",
        ),
        ({"instructions": [{"kind": "turnFlagOn"}]}, "/instructions/0/kind"),
        ({"instructions": []}, "/instructions"),
    ]
    for body, where in bad:
        assert problem(await client.patch(path, json=body), 400)["path"] == where, body
    assert (await client.get(path)).json()["_version"] == 2

    workflows.clock.advance(hours=1)
    workflows.worker().tick()  # moved: not due yet
    assert (await client.get(path)).json()["_status"] == "pending"
    assert (await client.delete(path)).status_code == 204
    problem(await client.get(path), 404)
    problem(await client.delete(path), 404)

    second = (await workflows.schedule([{"kind": "turnFlagOn"}], at=workflows.clock.millis)).json()
    deleting = await client.patch(
        schedules_path() + f"/{second['_id']}",
        json={"instructions": [{"kind": "deleteScheduledChange"}]},
    )
    assert deleting.status_code == 200, deleting.text
    assert await listed(workflows, "all") == []
    actions = [e["action"] for e in await workflows.audit() if "ScheduledChange" in e["action"]]
    assert sorted(actions) == sorted(
        ["createScheduledChange"] * 2 + ["updateScheduledChange"] + ["deleteScheduledChange"] * 2
    )


async def test_a_change_that_ran_can_no_longer_be_edited_or_deleted(workflows: Workflows) -> None:
    change = (await workflows.schedule([{"kind": "turnFlagOn"}], at=workflows.clock.millis)).json()
    workflows.worker().tick()
    path = schedules_path() + f"/{change['_id']}"
    assert (await workflows.client.get(path)).json()["_status"] == "executed"
    problem(await workflows.client.delete(path), 409)
    edit = {"instructions": [{"kind": "updateScheduledChangesExecutionDate", "value": 10**13}]}
    problem(await workflows.client.patch(path, json=edit), 409)


async def test_deleting_the_flag_drops_its_pending_changes(workflows: Workflows) -> None:
    await workflows.schedule([{"kind": "turnFlagOn"}], at=workflows.clock.millis + HOUR_MS)
    assert (await workflows.client.delete(f"/api/v2/flags/{PROJECT}/{FLAG}")).status_code == 204
    created = await workflows.client.post(
        f"/api/v2/flags/{PROJECT}", json={"key": FLAG, "name": "F again"}
    )
    assert created.status_code == 201
    assert await listed(workflows, "all") == []


async def test_scheduling_needs_writer_access_to_the_environment(workflows: Workflows) -> None:
    client = workflows.client

    async def token(role: str, env: str | None = None) -> str:
        body: dict[str, Any] = {"name": role, "role": role, "projectKey": PROJECT}
        if env is not None:
            body["environmentKey"] = env
        response = await client.post("/api/v2/tokens", json=body)
        assert response.status_code == 201, response.text
        secret: str = response.json()["token"]
        return secret

    body = {"executionDate": workflows.clock.millis, "instructions": [{"kind": "turnFlagOn"}]}
    reader = {"Authorization": await token("reader")}
    test_writer = {"Authorization": await token("writer", "test")}
    problem(await client.post(schedules_path(), json=body, headers=reader), 403)
    problem(await client.post(schedules_path(), json=body, headers=test_writer), 403)
    ok = await client.post(schedules_path("test"), json=body, headers=test_writer)
    assert ok.status_code == 201, ok.text
    # a flag-level instruction needs a writer for the whole project
    flag_level = {
        "executionDate": workflows.clock.millis,
        "instructions": [{"kind": "updateName", "value": "x"}],
    }
    problem(await client.post(schedules_path("test"), json=flag_level, headers=test_writer), 403)
    assert (await client.get(schedules_path(), headers=reader)).status_code == 200


async def test_a_revoked_token_s_change_fails_instead_of_running(workflows: Workflows) -> None:
    client = workflows.client
    response = await client.post(
        "/api/v2/tokens", json={"name": "ci", "role": "writer", "projectKey": PROJECT}
    )
    token = response.json()
    headers = {"Authorization": token["token"]}
    body = {
        "executionDate": workflows.clock.millis + 1000,
        "instructions": [{"kind": "turnFlagOn"}],
    }
    assert (await client.post(schedules_path(), json=body, headers=headers)).status_code == 201
    assert (await client.delete(f"/api/v2/tokens/{token['_id']}")).status_code in (200, 204)
    workflows.clock.advance(seconds=1)
    workflows.worker().tick()
    assert (await workflows.flag())["environments"]["production"]["on"] is False
    [failed] = await listed(workflows, "failed")
    assert "revoked" in failed["_error"]["message"]


async def configure_production(workflows: Workflows, **fields: Any) -> None:
    response = await workflows.client.patch(
        f"/api/v2/projects/{PROJECT}/environments/production",
        json=[
            {"op": "replace", "path": f"/{name}", "value": value} for name, value in fields.items()
        ],
    )
    assert response.status_code == 200, response.text


async def test_scheduling_follows_the_environment_s_approval_and_comment_rules(
    workflows: Workflows,
) -> None:
    """Scheduling is changing the flag later: an environment that requires approval refuses it
    (405) from one who may not bypass approval, and one that requires comments wants one; what
    was cleared when scheduled runs when due."""
    client = workflows.client
    await configure_production(workflows, approvalSettings={"required": True}, requireComments=True)
    created = await client.post(
        "/api/v2/tokens", json={"name": "dev", "role": "writer", "projectKey": PROJECT}
    )
    writer = {"Authorization": created.json()["token"]}
    body = {
        "executionDate": workflows.clock.millis + 1000,
        "instructions": [{"kind": "turnFlagOn"}],
    }
    assert problem(await client.post(schedules_path(), json=body, headers=writer), 405)
    assert problem(await client.post(schedules_path(), json=body), 400)["path"] == "/comment"
    assert await listed(workflows, "all") == []
    # the admin may bypass approval: the bypass is recorded, and the change runs when due
    bypassing = await client.post(schedules_path(), json={**body, "comment": "planned launch"})
    assert bypassing.status_code == 201, bypassing.text
    assert [e for e in await workflows.audit() if e["action"] == "bypassRequiredApproval"]
    workflows.clock.advance(seconds=1)
    workflows.worker().tick()
    assert (await workflows.flag())["environments"]["production"]["on"] is True
