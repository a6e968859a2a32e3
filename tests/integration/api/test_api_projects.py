"""Projects and environments over the management API: LaunchDarkly's shapes, CRUD, and every
kind of bad request answered with a 4xx problem naming the field."""

from __future__ import annotations

import re

import httpx
import pytest
from flagstaff_server.app import Flagstaff
from platform_api import ADMIN, create_project, problem

HEX24 = re.compile(r"^[0-9a-f]{24}$")
UUID = r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"


async def test_new_project_gets_launchdarkly_default_environments(
    client: httpx.AsyncClient,
) -> None:
    project = await create_project(client, "shop", tags=["team-a"])
    assert project["key"] == "shop"
    assert project["name"] == "Shop"
    assert HEX24.match(project["_id"])
    assert project["tags"] == ["team-a"]
    assert project["includeInSnippetByDefault"] is False
    environments = {env["key"]: env for env in project["environments"]}
    assert set(environments) == {"production", "test"}
    for env in environments.values():
        assert HEX24.match(env["_id"])
        assert re.match(f"^sdk-{UUID}$", env["apiKey"])
        assert re.match(f"^mob-{UUID}$", env["mobileKey"])
        assert env["secureMode"] is False
        assert env["critical"] is False
        assert env["_links"]["self"]["href"].endswith(f"/environments/{env['key']}")
    keys = [env[name] for env in environments.values() for name in ("_id", "apiKey", "mobileKey")]
    assert len(set(keys)) == len(keys)


async def test_project_with_explicit_environments_gets_exactly_those(
    client: httpx.AsyncClient,
) -> None:
    project = await create_project(
        client,
        "shop",
        environments=[
            {"key": "dev", "name": "Dev", "color": "00ff00", "defaultTtl": 5, "secureMode": True}
        ],
    )
    [env] = project["environments"]
    assert (env["key"], env["color"], env["defaultTtl"], env["secureMode"]) == (
        "dev",
        "00ff00",
        5,
        True,
    )


async def test_get_and_list_projects_with_and_without_environments(
    client: httpx.AsyncClient,
) -> None:
    await create_project(client, "b-shop")
    await create_project(client, "a-blog")
    listed = (await client.get("/api/v2/projects", headers=ADMIN)).json()
    assert [item["key"] for item in listed["items"]] == ["a-blog", "b-shop"]
    assert listed["totalCount"] == 2
    assert all(item.get("environments") is None for item in listed["items"])
    page = (await client.get("/api/v2/projects?limit=1&offset=1", headers=ADMIN)).json()
    assert [item["key"] for item in page["items"]] == ["b-shop"]
    assert page["totalCount"] == 2
    one = (await client.get("/api/v2/projects/a-blog?expand=environments", headers=ADMIN)).json()
    assert one["environments"]["totalCount"] == 2
    assert {env["key"] for env in one["environments"]["items"]} == {"production", "test"}


async def test_duplicate_project_key_is_409(client: httpx.AsyncClient) -> None:
    await create_project(client, "shop")
    response = await client.post(
        "/api/v2/projects", json={"key": "shop", "name": "x"}, headers=ADMIN
    )
    body = problem(response, 409)
    assert body["path"] == "/key"


@pytest.mark.parametrize(
    ("body", "path"),
    [
        ({"name": "No key"}, "/key"),
        ({"key": "shop"}, "/name"),
        ({"key": "shop", "name": 7}, "/name"),
        ({"key": "has space", "name": "x"}, "/key"),
        ({"key": "shop", "name": "x", "tags": ["ok", "not ok"]}, "/tags/1"),
        ({"key": "shop", "name": "x", "tags": "t"}, "/tags"),
        (
            {"key": "shop", "name": "x", "includeInSnippetByDefault": "yes"},
            "/includeInSnippetByDefault",
        ),
        ({"key": "shop", "name": "x", "environments": [{"key": "e"}]}, "/environments/0/name"),
        (
            {
                "key": "shop",
                "name": "x",
                "environments": [{"key": "e", "name": "E", "color": "red"}],
            },
            "/environments/0/color",
        ),
        (
            {
                "key": "shop",
                "name": "x",
                "environments": [{"key": "e", "name": "E"}, {"key": "e", "name": "F"}],
            },
            "/environments/1/key",
        ),
    ],
)
async def test_bad_project_body_is_400_naming_the_field(
    client: httpx.AsyncClient, body: object, path: str
) -> None:
    response = await client.post("/api/v2/projects", json=body, headers=ADMIN)
    assert problem(response, 400)["path"] == path
    listed = (await client.get("/api/v2/projects", headers=ADMIN)).json()
    assert listed["items"] == []


async def test_malformed_json_is_400_and_missing_body_is_400(client: httpx.AsyncClient) -> None:
    headers = {**ADMIN, "Content-Type": "application/json"}
    broken = await client.post("/api/v2/projects", content=b'{"key": ', headers=headers)
    assert problem(broken, 400)["code"] == "invalid_json"
    empty = await client.post("/api/v2/projects", headers=ADMIN)
    assert "body is required" in problem(empty, 400)["message"]


@pytest.mark.parametrize(
    "content_type", ["text/plain", "application/x-www-form-urlencoded", "application/xml", None]
)
async def test_non_json_body_is_415(client: httpx.AsyncClient, content_type: str | None) -> None:
    headers = dict(ADMIN)
    if content_type is not None:
        headers["Content-Type"] = content_type
    response = await client.post(
        "/api/v2/projects", content=b'{"key": "shop", "name": "x"}', headers=headers
    )
    assert problem(response, 415)["code"] == "unsupported_media_type"


async def test_unknown_routes_and_methods_answer_problem_json(client: httpx.AsyncClient) -> None:
    assert problem(await client.get("/api/v2/nothing", headers=ADMIN), 404)["code"] == "not_found"
    assert problem(await client.get("/elsewhere"), 404)["code"] == "not_found"
    assert problem(await client.get("/api/v2/projects/none", headers=ADMIN), 404)
    wrong_method = await client.put("/api/v2/projects", json={}, headers=ADMIN)
    assert problem(wrong_method, 405)["code"] == "method_not_allowed"


async def test_bad_query_parameter_is_400_naming_it(client: httpx.AsyncClient) -> None:
    response = await client.get("/api/v2/projects?limit=0", headers=ADMIN)
    body = problem(response, 400)
    assert body["path"] == "limit"
    assert "query parameter limit" in body["message"]


async def test_patch_project_with_json_patch_and_comment(client: httpx.AsyncClient) -> None:
    await create_project(client, "shop")
    body = {
        "comment": "rename",
        "patch": [
            {"op": "replace", "path": "/name", "value": "Web shop"},
            {"op": "add", "path": "/tags/-", "value": "retail"},
        ],
    }
    response = await client.patch("/api/v2/projects/shop", json=body, headers=ADMIN)
    assert response.status_code == 200, response.text
    assert (response.json()["name"], response.json()["tags"]) == ("Web shop", ["retail"])
    fetched = (await client.get("/api/v2/projects/shop", headers=ADMIN)).json()
    assert fetched["name"] == "Web shop"


@pytest.mark.parametrize(
    ("patch", "status", "path"),
    [
        ([{"op": "replace", "path": "/key", "value": "other"}], 400, "/key"),
        ([{"op": "replace", "path": "/_id", "value": "0" * 24}], 400, "/_id"),
        ([{"op": "replace", "path": "/name", "value": ""}], 400, "/name"),
        ([{"op": "remove", "path": "/name"}], 400, "/name"),
        ([{"op": "add", "path": "/owner", "value": "me"}], 400, "/owner"),
        ([{"op": "replace", "path": "/nothing/here", "value": 1}], 400, None),
        ([{"op": "jump", "path": "/name"}], 400, None),
        ({"patch": "not a list"}, 400, "/patch"),
        ([{"op": "test", "path": "/name", "value": "Not the name"}], 400, None),
    ],
)
async def test_bad_project_patch_changes_nothing(
    client: httpx.AsyncClient, patch: object, status: int, path: str | None
) -> None:
    await create_project(client, "shop")
    response = await client.patch("/api/v2/projects/shop", json=patch, headers=ADMIN)
    body = problem(response, status)
    if path is not None:
        assert body["path"] == path
    fetched = (await client.get("/api/v2/projects/shop", headers=ADMIN)).json()
    assert fetched["name"] == "Shop"
    assert fetched["key"] == "shop"


async def test_patch_keeps_snippet_flag_and_client_side_availability_in_step(
    client: httpx.AsyncClient,
) -> None:
    await create_project(client, "shop")
    patch = [{"op": "replace", "path": "/includeInSnippetByDefault", "value": True}]
    response = await client.patch("/api/v2/projects/shop", json=patch, headers=ADMIN)
    assert response.json()["defaultClientSideAvailability"]["usingEnvironmentId"] is True


async def test_delete_project_removes_it_and_its_environments(
    client: httpx.AsyncClient, server: Flagstaff
) -> None:
    project = await create_project(client, "shop")
    sdk_key = project["environments"][0]["apiKey"]
    deleted = await client.delete("/api/v2/projects/shop", headers=ADMIN)
    assert deleted.status_code == 204
    assert deleted.content == b""
    problem(await client.get("/api/v2/projects/shop", headers=ADMIN), 404)
    problem(await client.get("/api/v2/projects/shop/environments", headers=ADMIN), 404)
    problem(await client.delete("/api/v2/projects/shop", headers=ADMIN), 404)
    assert server.store is not None
    with server.store.unit_of_work(read_only=True) as uow:
        assert uow.environments.list("shop") == []
        gone = [c for c in uow.changes.since(0) if c.kind == "environment" and c.item is None]
    assert {change.environment for change in gone} == {"production", "test"}
    assert sdk_key


async def test_create_get_patch_delete_environment(client: httpx.AsyncClient) -> None:
    await create_project(client, "shop")
    created = await client.post(
        "/api/v2/projects/shop/environments",
        json={"key": "staging", "name": "Staging", "color": "abcdef", "tags": ["eu"]},
        headers=ADMIN,
    )
    assert created.status_code == 201, created.text
    env = created.json()
    assert (env["key"], env["color"], env["tags"], env["defaultTtl"]) == (
        "staging",
        "abcdef",
        ["eu"],
        0,
    )
    path = "/api/v2/projects/shop/environments/staging"
    assert (await client.get(path, headers=ADMIN)).json() == env
    patched = await client.patch(
        path,
        json=[
            {"op": "replace", "path": "/name", "value": "Stage"},
            {"op": "replace", "path": "/secureMode", "value": True},
            {"op": "replace", "path": "/defaultTtl", "value": 10},
        ],
        headers=ADMIN,
    )
    assert patched.status_code == 200, patched.text
    assert (patched.json()["name"], patched.json()["secureMode"], patched.json()["defaultTtl"]) == (
        "Stage",
        True,
        10,
    )
    assert patched.json()["apiKey"] == env["apiKey"]
    listed = (await client.get("/api/v2/projects/shop/environments", headers=ADMIN)).json()
    assert [item["key"] for item in listed["items"]] == ["production", "staging", "test"]
    assert (await client.delete(path, headers=ADMIN)).status_code == 204
    problem(await client.get(path, headers=ADMIN), 404)


async def test_duplicate_environment_key_is_409(client: httpx.AsyncClient) -> None:
    await create_project(client, "shop")
    response = await client.post(
        "/api/v2/projects/shop/environments", json={"key": "test", "name": "T"}, headers=ADMIN
    )
    problem(response, 409)


async def test_environment_in_missing_project_is_404(client: httpx.AsyncClient) -> None:
    response = await client.post(
        "/api/v2/projects/none/environments", json={"key": "e", "name": "E"}, headers=ADMIN
    )
    problem(response, 404)
    problem(await client.get("/api/v2/projects/none/environments/e", headers=ADMIN), 404)


@pytest.mark.parametrize(
    ("patch", "path"),
    [
        ([{"op": "replace", "path": "/apiKey", "value": "sdk-mine"}], "/apiKey"),
        ([{"op": "replace", "path": "/_id", "value": "0" * 24}], "/_id"),
        ([{"op": "replace", "path": "/color", "value": "blue"}], "/color"),
        ([{"op": "replace", "path": "/defaultTtl", "value": -1}], "/defaultTtl"),
        ([{"op": "replace", "path": "/secureMode", "value": "on"}], "/secureMode"),
        ([{"op": "remove", "path": "/critical"}], "/critical"),
    ],
)
async def test_bad_environment_patch_is_400_naming_the_field(
    client: httpx.AsyncClient, patch: object, path: str
) -> None:
    await create_project(client, "shop")
    url = "/api/v2/projects/shop/environments/test"
    before = (await client.get(url, headers=ADMIN)).json()
    assert problem(await client.patch(url, json=patch, headers=ADMIN), 400)["path"] == path
    assert (await client.get(url, headers=ADMIN)).json() == before


async def test_new_environment_configures_every_flag_and_tells_delivery(
    client: httpx.AsyncClient, server: Flagstaff
) -> None:
    await create_project(client, "shop")
    for key in ("alpha", "beta"):
        made = await client.post(
            "/api/v2/flags/shop",
            json={"key": key, "name": key, "defaults": {"onVariation": 0, "offVariation": 1}},
            headers=ADMIN,
        )
        assert made.status_code == 201, made.text
    assert server.store is not None
    with server.store.unit_of_work(read_only=True) as uow:
        start = uow.changes.latest_seq()
    created = await client.post(
        "/api/v2/projects/shop/environments", json={"key": "staging", "name": "S"}, headers=ADMIN
    )
    assert created.status_code == 201
    for key in ("alpha", "beta"):
        flag = (await client.get(f"/api/v2/flags/shop/{key}", headers=ADMIN)).json()
        config = flag["environments"]["staging"]
        assert config["on"] is False
        assert config["offVariation"] == 1
    with server.store.unit_of_work(read_only=True) as uow:
        changes = uow.changes.since(start)
    announced = {(c.kind, c.key) for c in changes if c.environment == "staging"}
    assert announced == {("environment", "staging"), ("flag", "alpha"), ("flag", "beta")}
    flag_items = [c.item for c in changes if c.kind == "flag"]
    assert all(item is not None and item["on"] is False for item in flag_items)
