"""Access tokens: who may call what. 401 without a valid access token (SDK and mobile keys
included), 403 for a role or scope that does not cover the request; secrets shown once, stored
hashed, revocable."""

from __future__ import annotations

import hashlib

import httpx
import pytest
from flagstaff_server.app import Flagstaff
from platform_api import ADMIN, ADMIN_TOKEN, create_project, create_token, problem


async def test_request_without_token_is_401_with_problem_json(client: httpx.AsyncClient) -> None:
    response = await client.get("/api/v2/projects")
    body = problem(response, 401)
    assert body["code"] == "unauthorized"
    assert response.headers["www-authenticate"] == "Bearer"


@pytest.mark.parametrize("header", ["api-00000000-0000-0000-0000-000000000000", "Bearer nope", ""])
async def test_unknown_token_is_401(client: httpx.AsyncClient, header: str) -> None:
    problem(await client.get("/api/v2/projects", headers={"Authorization": header}), 401)


async def test_admin_token_from_settings_works_raw_and_as_bearer(
    client: httpx.AsyncClient,
) -> None:
    for header in (ADMIN_TOKEN, f"Bearer {ADMIN_TOKEN}", f"bearer  {ADMIN_TOKEN} "):
        response = await client.get("/api/v2/projects", headers={"Authorization": header})
        assert response.status_code == 200, header


@pytest.mark.parametrize("key", ["apiKey", "mobileKey", "_id"])
async def test_environment_credentials_never_open_the_management_api(
    client: httpx.AsyncClient, key: str
) -> None:
    project = await create_project(client, "shop")
    credential = project["environments"][0][key]
    for header in (credential, f"Bearer {credential}"):
        response = await client.get("/api/v2/projects", headers={"Authorization": header})
        problem(response, 401)


async def test_token_secret_is_shown_once_and_stored_only_as_a_hash(
    client: httpx.AsyncClient, server: Flagstaff
) -> None:
    created = await client.post(
        "/api/v2/tokens", json={"name": "ci", "role": "writer"}, headers=ADMIN
    )
    assert created.status_code == 201
    body = created.json()
    secret = body["token"]
    assert secret.startswith("api-")
    assert len(secret) > 30
    fetched = (await client.get(f"/api/v2/tokens/{body['_id']}", headers=ADMIN)).json()
    assert fetched["token"] == "****" + secret[-4:]
    listed = (await client.get("/api/v2/tokens", headers=ADMIN)).json()
    assert secret not in str(listed)
    assert server.store is not None
    with server.store.unit_of_work(read_only=True) as uow:
        record = uow.tokens.get(body["_id"])
    assert record is not None
    assert record.secret_hash == hashlib.sha256(secret.encode()).hexdigest()
    assert secret not in str(record)


ROLE_MATRIX = [
    # (role, method, path, body, allowed)
    ("reader", "GET", "/api/v2/projects", None, True),
    ("reader", "GET", "/api/v2/projects/shop/environments/test", None, True),
    ("reader", "GET", "/api/v2/auditlog", None, True),
    ("reader", "POST", "/api/v2/projects", {"key": "other", "name": "O"}, False),
    ("reader", "PATCH", "/api/v2/projects/shop", [], False),
    ("reader", "GET", "/api/v2/tokens", None, False),
    ("writer", "GET", "/api/v2/projects/shop", None, True),
    ("writer", "POST", "/api/v2/projects", {"key": "other", "name": "O"}, False),
    ("writer", "DELETE", "/api/v2/projects/shop/environments/test", None, False),
    ("writer", "POST", "/api/v2/projects/shop/environments/test/apiKey", None, False),
    ("writer", "POST", "/api/v2/tokens", {"name": "x", "role": "reader"}, False),
    ("admin", "POST", "/api/v2/projects", {"key": "other", "name": "O"}, True),
    ("admin", "POST", "/api/v2/projects/shop/environments/test/apiKey", None, True),
    ("admin", "POST", "/api/v2/tokens", {"name": "x", "role": "reader"}, True),
    ("admin", "GET", "/api/v2/tokens", None, True),
    ("admin", "DELETE", "/api/v2/projects/shop/environments/test", None, True),
]


@pytest.mark.parametrize(("role", "method", "path", "body", "allowed"), ROLE_MATRIX)
async def test_role_decides_what_a_token_may_do(
    client: httpx.AsyncClient,
    role: str,
    method: str,
    path: str,
    body: object,
    allowed: bool,
) -> None:
    await create_project(client, "shop")
    token = await create_token(client, role)
    response = await client.request(method, path, json=body, headers={"Authorization": token})
    if allowed:
        assert response.status_code < 300, response.text
    else:
        assert problem(response, 403)["code"] == "forbidden"


async def test_writer_may_change_flags_but_reader_may_not(client: httpx.AsyncClient) -> None:
    await create_project(client, "shop")
    body = {"key": "f", "name": "F"}
    reader = await create_token(client, "reader")
    writer = await create_token(client, "writer")
    denied = await client.post("/api/v2/flags/shop", json=body, headers={"Authorization": reader})
    problem(denied, 403)
    made = await client.post("/api/v2/flags/shop", json=body, headers={"Authorization": writer})
    assert made.status_code == 201, made.text


async def test_project_scope_limits_reads_and_listings(client: httpx.AsyncClient) -> None:
    await create_project(client, "shop")
    await create_project(client, "blog")
    token = {"Authorization": await create_token(client, "admin", project="shop")}
    assert (await client.get("/api/v2/projects/shop", headers=token)).status_code == 200
    problem(await client.get("/api/v2/projects/blog", headers=token), 403)
    listed = (await client.get("/api/v2/projects", headers=token)).json()
    assert [item["key"] for item in listed["items"]] == ["shop"]
    assert listed["totalCount"] == 1
    # account-wide changes need an unscoped admin
    problem(
        await client.post("/api/v2/projects", json={"key": "x", "name": "X"}, headers=token), 403
    )
    problem(await client.get("/api/v2/tokens", headers=token), 403)
    # inside its project a scoped admin is an admin
    reset = await client.post("/api/v2/projects/shop/environments/test/apiKey", headers=token)
    assert reset.status_code == 200


async def test_environment_scope_hides_other_environments(client: httpx.AsyncClient) -> None:
    await create_project(client, "shop")
    token = {"Authorization": await create_token(client, "admin", project="shop", env="test")}
    assert (await client.get("/api/v2/projects/shop/environments/test", headers=token)).is_success
    problem(await client.get("/api/v2/projects/shop/environments/production", headers=token), 403)
    listed = (await client.get("/api/v2/projects/shop/environments", headers=token)).json()
    assert [item["key"] for item in listed["items"]] == ["test"]
    expanded = (await client.get("/api/v2/projects/shop?expand=environments", headers=token)).json()
    assert [item["key"] for item in expanded["environments"]["items"]] == ["test"]
    # project-wide changes are beyond an environment's scope
    problem(await client.patch("/api/v2/projects/shop", json=[], headers=token), 403)


async def test_revoked_token_stops_working_at_once(client: httpx.AsyncClient) -> None:
    created = await client.post(
        "/api/v2/tokens", json={"name": "t", "role": "reader"}, headers=ADMIN
    )
    token_id, secret = created.json()["_id"], created.json()["token"]
    assert (await client.get("/api/v2/projects", headers={"Authorization": secret})).is_success
    revoked = await client.delete(f"/api/v2/tokens/{token_id}", headers=ADMIN)
    assert revoked.status_code == 204
    problem(await client.get("/api/v2/projects", headers={"Authorization": secret}), 401)
    problem(await client.get(f"/api/v2/tokens/{token_id}", headers=ADMIN), 404)
    listed = (await client.get("/api/v2/tokens", headers=ADMIN)).json()
    assert token_id not in [item["_id"] for item in listed["items"]]


@pytest.mark.parametrize(
    ("body", "path"),
    [
        ({"name": "x", "role": "owner"}, "/role"),
        ({"role": "reader"}, "/name"),
        ({"name": "  ", "role": "reader"}, "/name"),
        ({"name": "x", "role": "reader", "projectKey": "nope"}, "/projectKey"),
        ({"name": "x", "role": "reader", "environmentKey": "test"}, "/environmentKey"),
    ],
)
async def test_bad_token_request_is_400_naming_the_field(
    client: httpx.AsyncClient, body: dict[str, str], path: str
) -> None:
    response = await client.post("/api/v2/tokens", json=body, headers=ADMIN)
    assert problem(response, 400)["path"] == path


async def test_scoped_token_for_missing_environment_is_rejected(
    client: httpx.AsyncClient,
) -> None:
    await create_project(client, "shop")
    response = await client.post(
        "/api/v2/tokens",
        json={"name": "x", "role": "reader", "projectKey": "shop", "environmentKey": "staging"},
        headers=ADMIN,
    )
    assert problem(response, 400)["path"] == "/environmentKey"
