"""Segments at `/api/v2/segments/{project}/{environment}[/{key}]`: CRUD, JSON Patch, semantic
patch, version checks and change records (in-process)."""

from __future__ import annotations

from typing import Any

import httpx
from flag_api import PROJECT, patch
from flagstaff_server.services.plane import ControlPlane

SEGMENTS = f"/api/v2/segments/{PROJECT}/test"


def segment_changes(plane: ControlPlane, key: str) -> list[Any]:
    with plane.read() as uow:
        return [c for c in uow.changes.since(0) if c.kind == "segment" and c.key == key]


async def create_segment(api: httpx.AsyncClient, key: str) -> dict[str, Any]:
    response = await api.post(SEGMENTS, json={"key": key, "name": key.upper()})
    assert response.status_code == 201, response.text
    segment: dict[str, Any] = response.json()
    return segment


async def test_segment_crud_and_change_records(api: httpx.AsyncClient, plane: ControlPlane) -> None:
    created = await create_segment(api, "beta")
    assert created["version"] == 1
    assert (await api.post(SEGMENTS, json={"key": "beta", "name": "x"})).status_code == 409
    listed = (await api.get(SEGMENTS)).json()
    assert [item["key"] for item in listed["items"]] == ["beta"]
    assert listed["totalCount"] == 1
    assert (await api.get(f"/api/v2/segments/{PROJECT}/production")).json()["items"] == []

    patched = await patch(
        api, f"{SEGMENTS}/beta", [{"op": "add", "path": "/included/-", "value": "u1"}]
    )
    assert patched.status_code == 200, patched.text
    assert patched.json()["included"] == ["u1"]
    assert patched.json()["version"] == 2
    changes = segment_changes(plane, "beta")
    assert [(c.version, c.item["included"]) for c in changes] == [(1, []), (2, ["u1"])]

    assert (await api.delete(f"{SEGMENTS}/beta")).status_code == 204
    assert (await api.get(f"{SEGMENTS}/beta")).status_code == 404
    tombstone = segment_changes(plane, "beta")[-1]
    assert (tombstone.item, tombstone.version) == (None, 3)


async def test_segment_semantic_patch_adds_targets_and_rule(api: httpx.AsyncClient) -> None:
    await create_segment(api, "beta")
    response = await patch(
        api,
        f"{SEGMENTS}/beta",
        {
            "instructions": [
                {"kind": "addIncludedUsers", "values": ["u1"]},
                {"kind": "addExcludedTargets", "contextKind": "org", "values": ["o1"]},
                {
                    "kind": "addRule",
                    "clauses": [
                        {"attribute": "plan", "op": "in", "values": ["gold"], "negate": False}
                    ],
                },
            ]
        },
        semantic=True,
    )
    assert response.status_code == 200, response.text
    segment = response.json()
    assert segment["included"] == ["u1"]
    assert segment["excludedContexts"] == [{"contextKind": "org", "values": ["o1"]}]
    assert segment["rules"][0]["_id"]


async def test_segment_rule_edits_keep_the_ids_of_rules_and_clauses(
    api: httpx.AsyncClient,
) -> None:
    await create_segment(api, "beta")
    plan = {"attribute": "plan", "op": "in", "values": ["gold"]}
    country = {"attribute": "country", "op": "in", "values": ["NZ"]}
    made = await patch(
        api,
        f"{SEGMENTS}/beta",
        {
            "instructions": [
                {"kind": "addRule", "clauses": [plan, country]},
                {"kind": "addRule", "clauses": [plan]},
            ]
        },
        semantic=True,
    )
    assert made.status_code == 200, made.text
    first, second = made.json()["rules"]
    plan_id, country_id = (clause["_id"] for clause in first["clauses"])
    edited = await patch(
        api,
        f"{SEGMENTS}/beta",
        {
            "instructions": [
                {"kind": "removeRule", "ruleId": second["_id"]},
                {
                    "kind": "updateClause",
                    "ruleId": first["_id"],
                    "clauseId": plan_id,
                    "clause": {"attribute": "plan", "op": "in", "values": ["gold", "silver"]},
                },
                {"kind": "removeClauses", "ruleId": first["_id"], "clauseIds": [country_id]},
                {"kind": "addClauses", "ruleId": first["_id"], "clauses": [country]},
                {
                    "kind": "updateRuleRolloutAndContextKind",
                    "ruleId": first["_id"],
                    "weight": 25000,
                    "bucketBy": "accountId",
                },
                {"kind": "addRule", "clauses": [plan], "beforeRuleId": first["_id"]},
            ]
        },
        semantic=True,
    )
    assert edited.status_code == 200, edited.text
    added, kept = edited.json()["rules"]
    assert kept["_id"] == first["_id"]
    assert kept["clauses"][0] == {
        "_id": plan_id,
        "contextKind": "user",
        "attribute": "plan",
        "op": "in",
        "values": ["gold", "silver"],
        "negate": False,
    }
    assert kept["clauses"][1]["_id"] not in {plan_id, country_id}
    assert (kept["weight"], kept["bucketBy"]) == (25000, "accountId")
    assert added["_id"] not in {first["_id"], second["_id"]}


async def test_bad_bucket_by_is_a_problem_naming_the_field(api: httpx.AsyncClient) -> None:
    await create_segment(api, "beta")
    made = await patch(
        api,
        f"{SEGMENTS}/beta",
        {"instructions": [{"kind": "addRule", "clauses": []}]},
        semantic=True,
    )
    assert made.status_code == 200, made.text
    rule_id = made.json()["rules"][0]["_id"]
    for bad in ("/a//b", 3):
        response = await patch(
            api,
            f"{SEGMENTS}/beta",
            {
                "instructions": [
                    {"kind": "updateRuleDescription", "ruleId": rule_id, "description": "x"},
                    {
                        "kind": "updateRuleRolloutAndContextKind",
                        "ruleId": rule_id,
                        "bucketBy": bad,
                    },
                ]
            },
            semantic=True,
        )
        assert response.status_code == 400, response.text
        assert response.headers["content-type"].startswith("application/problem+json")
        assert response.json()["path"] == "/instructions/1/bucketBy"
    assert (await api.get(f"{SEGMENTS}/beta")).json()["version"] == made.json()["version"]


async def test_segment_errors(api: httpx.AsyncClient) -> None:
    await create_segment(api, "beta")
    stale = await patch(
        api,
        f"{SEGMENTS}/beta",
        [
            {"op": "test", "path": "/version", "value": 9},
            {"op": "add", "path": "/included/-", "value": "u"},
        ],
    )
    assert stale.status_code == 409
    bad_rule = await patch(
        api,
        f"{SEGMENTS}/beta",
        [
            {
                "op": "add",
                "path": "/rules/-",
                "value": {"clauses": [{"attribute": "a", "op": "matches", "values": ["("]}]},
            }
        ],
    )
    assert bad_rule.status_code == 400
    assert bad_rule.json()["path"] == "/rules/0/clauses/0/values/0"
    assert (await api.get(f"{SEGMENTS}/beta")).json()["version"] == 1
    assert (await api.get(f"/api/v2/segments/{PROJECT}/staging")).status_code == 404
    assert (await api.get(f"{SEGMENTS}/nope")).status_code == 404
