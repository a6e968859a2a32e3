"""Semantic patch over HTTP (`domain-model=launchdarkly.semanticpatch`): happy paths, errors with
paths, all-or-nothing, deleteFlag, and environment-scoped writers."""

from __future__ import annotations

import httpx
from flag_api import PROJECT, create_flag, patch
from flagstaff_server.services.plane import ControlPlane

FLAGS = f"/api/v2/flags/{PROJECT}"


async def test_instructions_turn_on_target_and_add_rule(api: httpx.AsyncClient) -> None:
    flag = await create_flag(api, "f1")
    true_id, false_id = (variation["_id"] for variation in flag["variations"])
    response = await patch(
        api,
        f"{FLAGS}/f1",
        {
            "comment": "release",
            "environmentKey": "production",
            "instructions": [
                {"kind": "turnFlagOn"},
                {"kind": "addTargets", "variationId": true_id, "values": ["u1", "u2"]},
                {
                    "kind": "addRule",
                    "variationId": false_id,
                    "clauses": [
                        {"attribute": "country", "op": "in", "values": ["NZ"], "negate": False}
                    ],
                },
                {"kind": "updateOffVariation", "variationId": false_id},
            ],
        },
        semantic=True,
    )
    assert response.status_code == 200, response.text
    config = response.json()["environments"]["production"]
    assert config["on"] is True
    assert config["targets"] == [{"variation": 0, "values": ["u1", "u2"]}]
    assert config["rules"][0]["variation"] == 1
    assert config["rules"][0]["clauses"][0]["values"] == ["NZ"]
    assert config["offVariation"] == 1
    assert response.json()["environments"]["test"]["on"] is False


async def test_flag_level_instructions_need_no_environment(api: httpx.AsyncClient) -> None:
    await create_flag(api, "f1")
    response = await patch(
        api,
        f"{FLAGS}/f1",
        {
            "instructions": [
                {"kind": "updateName", "value": "Renamed"},
                {"kind": "addTags", "values": ["t"]},
            ]
        },
        semantic=True,
    )
    assert response.status_code == 200, response.text
    assert response.json()["name"] == "Renamed"
    assert response.json()["tags"] == ["t"]


async def test_unknown_instruction_is_400_and_earlier_instructions_are_undone(
    api: httpx.AsyncClient, plane: ControlPlane
) -> None:
    await create_flag(api, "f1")
    response = await patch(
        api,
        f"{FLAGS}/f1",
        {
            "environmentKey": "test",
            "instructions": [{"kind": "turnFlagOn"}, {"kind": "teleportFlag"}],
        },
        semantic=True,
    )
    assert response.status_code == 400
    assert response.json()["path"] == "/instructions/1/kind"
    assert (await api.get(f"{FLAGS}/f1")).json()["environments"]["test"]["on"] is False


async def test_unknown_variation_id_is_400(api: httpx.AsyncClient) -> None:
    await create_flag(api, "f1")
    response = await patch(
        api,
        f"{FLAGS}/f1",
        {
            "environmentKey": "test",
            "instructions": [{"kind": "updateOffVariation", "variationId": "no-such-id"}],
        },
        semantic=True,
    )
    assert response.status_code == 400
    assert response.json()["path"].startswith("/instructions/0")


async def test_semantic_body_sent_as_plain_json_is_400_with_hint(api: httpx.AsyncClient) -> None:
    await create_flag(api, "f1")
    response = await patch(
        api, f"{FLAGS}/f1", {"environmentKey": "test", "instructions": [{"kind": "turnFlagOn"}]}
    )
    assert response.status_code == 400
    assert "semanticpatch" in response.json()["message"]


async def test_delete_flag_instruction_deletes(api: httpx.AsyncClient, plane: ControlPlane) -> None:
    await create_flag(api, "f1")
    response = await patch(
        api, f"{FLAGS}/f1", {"instructions": [{"kind": "deleteFlag"}]}, semantic=True
    )
    assert response.status_code == 200, response.text
    assert (await api.get(f"{FLAGS}/f1")).status_code == 404
    with plane.read() as uow:
        actions = [entry.action for entry in uow.audit.list(resource_prefix=f"proj/{PROJECT}")]
    assert "deleteFlag" in actions


async def test_environment_scoped_writer_changes_only_its_environment(
    api: httpx.AsyncClient,
) -> None:
    await create_flag(api, "f1")
    token = await api.post(
        "/api/v2/tokens",
        json={
            "name": "test-writer",
            "role": "writer",
            "projectKey": PROJECT,
            "environmentKey": "test",
        },
    )
    assert token.status_code == 201, token.text
    scoped = {"Authorization": token.json()["token"]}
    in_test = await patch(
        api,
        f"{FLAGS}/f1",
        {"environmentKey": "test", "instructions": [{"kind": "turnFlagOn"}]},
        semantic=True,
        **scoped,
    )
    assert in_test.status_code == 200, in_test.text
    in_production = await patch(
        api,
        f"{FLAGS}/f1",
        [{"op": "replace", "path": "/environments/production/on", "value": True}],
        **scoped,
    )
    assert in_production.status_code == 403
    renamed = await patch(
        api, f"{FLAGS}/f1", [{"op": "replace", "path": "/name", "value": "x"}], **scoped
    )
    assert renamed.status_code == 403
    flag = (await api.get(f"{FLAGS}/f1")).json()
    assert flag["environments"]["production"]["on"] is False
    assert flag["name"] == "f1"


async def test_replace_rules_keeps_the_ids_it_is_given_and_makes_new_ones_for_new_rules(
    api: httpx.AsyncClient,
) -> None:
    flag = await create_flag(api, "f1")
    true_id, false_id = (variation["_id"] for variation in flag["variations"])
    country = {"attribute": "country", "op": "in", "values": ["NZ"]}
    first = await patch(
        api,
        f"{FLAGS}/f1",
        {
            "environmentKey": "production",
            "instructions": [
                {"kind": "addRule", "variationId": true_id, "clauses": [country]},
                {"kind": "addRule", "variationId": false_id, "clauses": [country]},
            ],
        },
        semantic=True,
    )
    assert first.status_code == 200, first.text
    kept, dropped = first.json()["environments"]["production"]["rules"]
    edited_clause = {**country, "_id": kept["clauses"][0]["_id"], "values": ["NZ", "AU"]}
    response = await patch(
        api,
        f"{FLAGS}/f1",
        {
            "environmentKey": "production",
            "instructions": [
                {
                    "kind": "replaceRules",
                    "rules": [
                        {"variationId": true_id, "clauses": [country]},
                        {"_id": kept["_id"], "variationId": false_id, "clauses": [edited_clause]},
                    ],
                }
            ],
        },
        semantic=True,
    )
    assert response.status_code == 200, response.text
    new, edited = response.json()["environments"]["production"]["rules"]
    assert edited["_id"] == kept["_id"]
    assert edited["variation"] == 1
    assert edited["clauses"][0]["_id"] == kept["clauses"][0]["_id"]
    assert edited["clauses"][0]["values"] == ["NZ", "AU"]
    assert new["_id"] not in {kept["_id"], dropped["_id"]}


async def test_replace_rules_refuses_an_id_given_twice_naming_the_field(
    api: httpx.AsyncClient,
) -> None:
    flag = await create_flag(api, "f1")
    true_id = flag["variations"][0]["_id"]
    rule = {"_id": "same", "variationId": true_id, "clauses": []}
    response = await patch(
        api,
        f"{FLAGS}/f1",
        {
            "environmentKey": "production",
            "instructions": [{"kind": "replaceRules", "rules": [rule, rule]}],
        },
        semantic=True,
    )
    assert response.status_code == 400
    assert response.json()["path"] == "/instructions/0/rules/1/_id"
    blank = {**rule, "_id": " "}
    response = await patch(
        api,
        f"{FLAGS}/f1",
        {
            "environmentKey": "production",
            "instructions": [{"kind": "replaceRules", "rules": [blank]}],
        },
        semantic=True,
    )
    assert response.status_code == 400
    assert response.json()["path"] == "/instructions/0/rules/0/_id"
