"""Flag CRUD, list filters, JSON Patch and the error answers of `/api/v2/flags` (in-process)."""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from flag_api import PROJECT, create_flag, patch
from flagstaff_server.services.plane import ControlPlane

FLAGS = f"/api/v2/flags/{PROJECT}"


def changes_for(plane: ControlPlane, key: str) -> list[Any]:
    with plane.read() as uow:
        return [change for change in uow.changes.since(0) if change.key == key]


def audit_for(plane: ControlPlane, key: str) -> list[Any]:
    """The flag's entries, whichever environment (or `env/*`) they are filed under."""
    with plane.read() as uow:
        entries = uow.audit.list(resource_prefix=f"proj/{PROJECT}:env/")
    return [entry for entry in entries if entry.resource.endswith(f":flag/{key}")]


async def test_created_flag_is_off_in_every_environment_and_announced(
    api: httpx.AsyncClient, plane: ControlPlane
) -> None:
    flag = await create_flag(api, "f1", variations=[{"value": "a"}, {"value": "b"}])
    assert flag["kind"] == "multivariate"
    assert flag["_version"] == 1
    assert sorted(flag["environments"]) == ["production", "test"]
    assert all(config["on"] is False for config in flag["environments"].values())
    assert all(variation["_id"] for variation in flag["variations"])
    changes = changes_for(plane, "f1")
    assert sorted(change.environment for change in changes) == ["production", "test"]
    assert all(change.item["variations"] == ["a", "b"] for change in changes)
    assert [entry.action for entry in audit_for(plane, "f1")] == ["createFlag"]


async def test_get_returns_the_flag_limited_to_requested_environments(
    api: httpx.AsyncClient,
) -> None:
    await create_flag(api, "f1")
    whole = await api.get(f"{FLAGS}/f1")
    assert whole.status_code == 200
    assert sorted(whole.json()["environments"]) == ["production", "test"]
    limited = await api.get(f"{FLAGS}/f1", params={"env": "test"})
    assert list(limited.json()["environments"]) == ["test"]


async def test_duplicate_key_is_a_conflict(api: httpx.AsyncClient) -> None:
    await create_flag(api, "f1")
    again = await api.post(FLAGS, json={"key": "f1", "name": "again"})
    assert again.status_code == 409
    assert again.headers["content-type"].startswith("application/problem+json")
    assert again.json()["path"] == "/key"


async def test_unknown_flag_project_and_environment_are_not_found(
    api: httpx.AsyncClient,
) -> None:
    assert (await api.get(f"{FLAGS}/missing")).status_code == 404
    assert (await api.get("/api/v2/flags/nope/f1")).status_code == 404
    await create_flag(api, "f1")
    assert (await api.get(f"{FLAGS}/f1", params={"env": "staging"})).status_code == 404
    missing_patch = await patch(api, f"{FLAGS}/missing", [])
    assert missing_patch.status_code == 404


async def test_list_filters_by_tag_archived_and_pages(api: httpx.AsyncClient) -> None:
    for index in range(5):
        await create_flag(api, f"f{index}", tags=["even"] if index % 2 == 0 else ["odd"])
    archived = await patch(
        api, f"{FLAGS}/f4", [{"op": "replace", "path": "/archived", "value": True}]
    )
    assert archived.status_code == 200, archived.text

    everything = (await api.get(FLAGS)).json()
    assert [item["key"] for item in everything["items"]] == ["f0", "f1", "f2", "f3"]
    assert everything["totalCount"] == 4
    assert "self" in everything["_links"]

    even = (await api.get(FLAGS, params={"tag": "even"})).json()
    assert [item["key"] for item in even["items"]] == ["f0", "f2"]
    only_archived = (await api.get(FLAGS, params={"archived": "true"})).json()
    assert [item["key"] for item in only_archived["items"]] == ["f4"]
    short = (await api.get(FLAGS, params={"summary": "true"})).json()["items"][0]
    assert "rules" not in short["environments"]["test"]
    assert "_summary" in short["environments"]["test"]
    assert "rules" in everything["items"][0]["environments"]["test"]

    page = (await api.get(FLAGS, params={"limit": 2, "offset": 1})).json()
    assert [item["key"] for item in page["items"]] == ["f1", "f2"]
    assert page["totalCount"] == 4
    links = {name: link["href"] for name, link in page["_links"].items()}
    assert links["next"].endswith("limit=2&offset=3")
    assert links["prev"].endswith("limit=2&offset=0")
    assert links["last"].endswith("limit=2&offset=2")
    last_page = (await api.get(FLAGS, params={"limit": 2, "offset": 2})).json()
    assert "next" not in last_page["_links"]

    in_test = (await api.get(FLAGS, params={"env": "test"})).json()
    assert all(list(item["environments"]) == ["test"] for item in in_test["items"])

    assert (await api.get(FLAGS, params={"limit": 0})).status_code == 400


async def test_json_patch_turns_flag_on_in_one_environment_only(
    api: httpx.AsyncClient, plane: ControlPlane
) -> None:
    await create_flag(api, "f1")
    before = len(changes_for(plane, "f1"))
    response = await patch(
        api,
        f"{FLAGS}/f1",
        {
            "comment": "launch",
            "patch": [{"op": "replace", "path": "/environments/production/on", "value": True}],
        },
    )
    assert response.status_code == 200, response.text
    flag = response.json()
    assert flag["_version"] == 2
    assert flag["environments"]["production"]["on"] is True
    assert flag["environments"]["production"]["version"] == 2
    assert flag["environments"]["test"]["version"] == 1
    new_changes = changes_for(plane, "f1")[before:]
    assert [(c.environment, c.version, c.item["on"]) for c in new_changes] == [
        ("production", 2, True)
    ]
    entries = audit_for(plane, "f1")
    assert entries[0].action == "updateFlag"
    assert entries[0].comment == "launch"
    assert entries[0].before["environments"]["production"]["on"] is False
    assert entries[0].after["environments"]["production"]["on"] is True


async def test_json_patch_adds_targets_and_rule(api: httpx.AsyncClient) -> None:
    await create_flag(api, "f1")
    target = {"variation": 0, "values": ["u1"]}
    rule = {
        "variation": 0,
        "clauses": [{"attribute": "email", "op": "endsWith", "values": ["@example.com"]}],
    }
    response = await patch(
        api,
        f"{FLAGS}/f1",
        [
            {"op": "add", "path": "/environments/test/targets/-", "value": target},
            {"op": "add", "path": "/environments/test/rules/-", "value": rule},
        ],
    )
    assert response.status_code == 200, response.text
    config = response.json()["environments"]["test"]
    assert config["targets"] == [{"variation": 0, "values": ["u1"]}]
    assert config["rules"][0]["_id"]
    assert config["rules"][0]["clauses"][0]["negate"] is False


@pytest.mark.parametrize(
    ("operations", "path"),
    [
        (
            [
                {
                    "op": "replace",
                    "path": "/environments/test/fallthrough",
                    "value": {"variation": 7},
                }
            ],
            "/environments/test/fallthrough/variation",
        ),
        (
            [
                {
                    "op": "add",
                    "path": "/environments/test/rules/-",
                    "value": {
                        "variation": 0,
                        "clauses": [
                            {"attribute": "name", "op": "matches", "values": ["(unclosed"]}
                        ],
                    },
                }
            ],
            "/environments/test/rules/0/clauses/0/values/0",
        ),
        (
            [
                {
                    "op": "add",
                    "path": "/environments/test/rules/-",
                    "value": {
                        "variation": 0,
                        "clauses": [{"attribute": "name", "op": "resembles", "values": ["x"]}],
                    },
                }
            ],
            "/environments/test/rules/0/clauses/0/op",
        ),
        (
            [
                {
                    "op": "add",
                    "path": "/environments/test/rules/-",
                    "value": {
                        "variation": 0,
                        "clauses": [{"attribute": "v", "op": "semVerEqual", "values": ["1.2.x"]}],
                    },
                }
            ],
            "/environments/test/rules/0/clauses/0/values/0",
        ),
        (
            [
                {
                    "op": "add",
                    "path": "/environments/test/rules/-",
                    "value": {
                        "variation": 0,
                        "clauses": [{"attribute": "d", "op": "before", "values": ["yesterday"]}],
                    },
                }
            ],
            "/environments/test/rules/0/clauses/0/values/0",
        ),
    ],
    ids=["variation-out-of-range", "bad-regex", "unknown-operator", "bad-semver", "bad-date"],
)
async def test_invalid_flag_data_is_400_with_path_and_changes_nothing(
    api: httpx.AsyncClient, plane: ControlPlane, operations: list[dict[str, Any]], path: str
) -> None:
    await create_flag(api, "f1")
    before = (await api.get(f"{FLAGS}/f1")).json()
    changes_before = len(changes_for(plane, "f1"))
    response = await patch(
        api,
        f"{FLAGS}/f1",
        [{"op": "replace", "path": "/description", "value": "changed"}, *operations],
    )
    assert response.status_code == 400, response.text
    problem = response.json()
    assert problem["path"] == path
    assert problem["message"]
    assert (await api.get(f"{FLAGS}/f1")).json() == before
    assert len(changes_for(plane, "f1")) == changes_before


async def test_malformed_json_is_400_invalid_json(api: httpx.AsyncClient) -> None:
    # the code the pydantic-parsed routes (projects, tokens) answer, as docs/management-api.md says
    await create_flag(api, "f1")
    response = await api.patch(
        f"{FLAGS}/f1", content=b"[{", headers={"Content-Type": "application/json"}
    )
    assert response.status_code == 400
    assert response.json()["code"] == "invalid_json"
    assert response.json()["path"] == ""
    created = await api.post(FLAGS, content=b"{", headers={"Content-Type": "application/json"})
    assert created.status_code == 400
    assert created.json()["code"] == "invalid_json"


async def test_non_json_content_type_is_415(api: httpx.AsyncClient) -> None:
    await create_flag(api, "f1")
    response = await api.patch(
        f"{FLAGS}/f1", content=b"on=true", headers={"Content-Type": "text/plain"}
    )
    assert response.status_code == 415
    assert response.json()["status"] == 415


async def test_failed_version_test_is_409_and_changes_nothing(
    api: httpx.AsyncClient, plane: ControlPlane
) -> None:
    await create_flag(api, "f1")
    stale = await patch(
        api,
        f"{FLAGS}/f1",
        [
            {"op": "test", "path": "/_version", "value": 7},
            {"op": "replace", "path": "/environments/test/on", "value": True},
        ],
    )
    assert stale.status_code == 409
    assert (await api.get(f"{FLAGS}/f1")).json()["environments"]["test"]["on"] is False
    assert [entry.action for entry in audit_for(plane, "f1")] == ["createFlag"]

    current = await patch(
        api,
        f"{FLAGS}/f1",
        [
            {"op": "test", "path": "/_version", "value": 1},
            {"op": "replace", "path": "/environments/test/on", "value": True},
        ],
    )
    assert current.status_code == 200, current.text


async def test_if_match_guards_the_version(api: httpx.AsyncClient) -> None:
    await create_flag(api, "f1")
    body = [{"op": "replace", "path": "/name", "value": "renamed"}]
    assert (await patch(api, f"{FLAGS}/f1", body, **{"If-Match": "5"})).status_code == 409
    accepted = await patch(api, f"{FLAGS}/f1", body, **{"If-Match": '"1"'})
    assert accepted.status_code == 200, accepted.text
    assert accepted.json()["name"] == "renamed"
    assert (await patch(api, f"{FLAGS}/f1", body, **{"If-Match": "abc"})).status_code == 400


async def test_read_only_fields_cannot_be_patched(api: httpx.AsyncClient) -> None:
    await create_flag(api, "f1")
    response = await patch(api, f"{FLAGS}/f1", [{"op": "replace", "path": "/key", "value": "x"}])
    assert response.status_code == 400
    assert response.json()["path"]


async def test_delete_removes_flag_and_announces_tombstones(
    api: httpx.AsyncClient, plane: ControlPlane
) -> None:
    await create_flag(api, "f1")
    response = await api.delete(f"{FLAGS}/f1")
    assert response.status_code == 204
    assert (await api.get(f"{FLAGS}/f1")).status_code == 404
    tombstones = [c for c in changes_for(plane, "f1") if c.item is None]
    assert sorted((c.environment, c.version) for c in tombstones) == [
        ("production", 2),
        ("test", 2),
    ]
    assert (await api.delete(f"{FLAGS}/f1")).status_code == 404


async def test_without_token_is_401_and_reader_cannot_patch(api: httpx.AsyncClient) -> None:
    await create_flag(api, "f1")
    anonymous = await api.get(f"{FLAGS}/f1", headers={"Authorization": ""})
    assert anonymous.status_code == 401
    token = await api.post("/api/v2/tokens", json={"name": "ro", "role": "reader"})
    assert token.status_code == 201, token.text
    reader = {"Authorization": token.json()["token"]}
    assert (await api.get(f"{FLAGS}/f1", headers=reader)).status_code == 200
    refused = await patch(
        api, f"{FLAGS}/f1", [{"op": "replace", "path": "/name", "value": "x"}], **reader
    )
    assert refused.status_code == 403


async def test_merge_patch_with_comment(api: httpx.AsyncClient, plane: ControlPlane) -> None:
    await create_flag(api, "f1")
    response = await patch(
        api,
        f"{FLAGS}/f1",
        {"comment": "describe", "merge": {"description": "merged", "temporary": False}},
    )
    assert response.status_code == 200, response.text
    assert (response.json()["description"], response.json()["temporary"]) == ("merged", False)
    assert audit_for(plane, "f1")[0].comment == "describe"


async def test_flag_used_as_prerequisite_cannot_be_deleted(api: httpx.AsyncClient) -> None:
    await create_flag(api, "base")
    await create_flag(api, "dependent")
    added = await patch(
        api,
        f"{FLAGS}/dependent",
        [
            {
                "op": "add",
                "path": "/environments/test/prerequisites/-",
                "value": {"key": "base", "variation": 0},
            }
        ],
    )
    assert added.status_code == 200, added.text
    refused = await api.delete(f"{FLAGS}/base")
    assert refused.status_code == 409
    assert "dependent" in refused.json()["message"]
    assert (await api.get(f"{FLAGS}/base")).status_code == 200
    assert (await api.delete(f"{FLAGS}/dependent")).status_code == 204
    assert (await api.delete(f"{FLAGS}/base")).status_code == 204


async def test_flag_edits_appear_in_the_audit_log_endpoint(api: httpx.AsyncClient) -> None:
    await create_flag(api, "f1")
    edit = {"comment": "ship it", "patch": [{"op": "replace", "path": "/name", "value": "F"}]}
    assert (await patch(api, f"{FLAGS}/f1", edit)).status_code == 200
    listed = await api.get("/api/v2/auditlog", params={"spec": f"proj/{PROJECT}:env/*:flag/f1"})
    assert listed.status_code == 200, listed.text
    items = listed.json()["items"]
    assert len(items) == 2
    assert items[0]["comment"] == "ship it"


async def test_list_filter_query_tags_state_and_type(api: httpx.AsyncClient) -> None:
    await create_flag(api, "dark-mode", name="Dark mode", tags=["beta", "ui"])
    await create_flag(api, "light-mode", name="Light", tags=["beta"], temporary=False)
    await create_flag(api, "old", name="Old DARK thing", tags=["beta", "ui"])
    deprecate = [{"op": "replace", "path": "/deprecated", "value": True}]
    assert (await patch(api, f"{FLAGS}/old", deprecate)).status_code == 200

    async def keys(filter_text: str) -> list[str]:
        response = await api.get(FLAGS, params={"filter": filter_text})
        assert response.status_code == 200, response.text
        return [item["key"] for item in response.json()["items"]]

    assert await keys("query:dark") == ["dark-mode", "old"]
    assert await keys("query:dark,tags:beta+ui") == ["dark-mode", "old"]
    assert await keys("tags:beta+ui,state:live") == ["dark-mode"]
    assert await keys("state:deprecated") == ["old"]
    assert await keys("type:permanent") == ["light-mode"]
    assert await keys("state:archived") == []
    refused = await api.get(FLAGS, params={"filter": "applicationEvaluated:x"})
    assert refused.status_code == 400
    assert refused.json()["path"] == "filter"
