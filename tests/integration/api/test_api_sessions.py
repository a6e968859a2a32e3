"""Web UI sign-in: local accounts (scrypt-hashed passwords, token roles), session cookies
(HttpOnly, SameSite=Strict, server-side) accepted by the API like a token, and the CSRF token
every cookie-authenticated write must carry."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import httpx
import pytest
from flagstaff_server.adapters.memory import InMemoryStore
from flagstaff_server.app import Flagstaff
from flagstaff_server.commands.user import CLI_ACTOR
from flagstaff_server.services import accounts
from flagstaff_server.services.access import hash_secret
from flagstaff_server.services.sign_in_throttle import ACCOUNT_LIMIT, CLIENT_LIMIT
from flagstaff_server.settings import Settings
from platform_api import ADMIN_TOKEN, problem
from support.clock import FakeClock
from support.in_process import control_plane

ADMIN = {"Authorization": ADMIN_TOKEN}
PASSWORD = "a long enough password"


async def make_account(client: httpx.AsyncClient, email: str, role: str) -> dict[str, object]:
    response = await client.post(
        "/api/v2/accounts", headers=ADMIN, json={"email": email, "password": PASSWORD, "role": role}
    )
    assert response.status_code == 201, response.text
    body: dict[str, object] = response.json()
    return body


async def sign_in(client: httpx.AsyncClient, email: str, password: str = PASSWORD) -> str:
    response = await client.post("/api/v2/session", json={"email": email, "password": password})
    assert response.status_code == 201, response.text
    csrf: str = response.json()["csrfToken"]
    return csrf


async def test_account_is_created_without_exposing_the_password(
    client: httpx.AsyncClient, server: Flagstaff
) -> None:
    created = await make_account(client, "Ada@Example.com", "writer")
    assert created["email"] == "ada@example.com"
    assert created["role"] == "writer"
    assert not any("password" in key.lower() for key in created)
    assert server.store is not None
    with server.store.unit_of_work(read_only=True) as uow:
        [record] = uow.accounts.list()
    assert record.password_hash.startswith("scrypt$")
    assert PASSWORD not in record.password_hash
    listed = (await client.get("/api/v2/accounts", headers=ADMIN)).json()
    assert [item["email"] for item in listed["items"]] == ["ada@example.com"]


@pytest.mark.parametrize(
    ("body", "path"),
    [
        ({"email": "not-an-email", "password": PASSWORD, "role": "reader"}, "/email"),
        ({"email": "a@b.c", "password": "short", "role": "reader"}, "/password"),
        ({"email": "a@b.c", "password": PASSWORD, "role": "owner"}, "/role"),
    ],
)
async def test_invalid_account_is_a_400_naming_the_field(
    client: httpx.AsyncClient, body: dict[str, str], path: str
) -> None:
    response = await client.post("/api/v2/accounts", headers=ADMIN, json=body)
    assert response.status_code == 400
    assert response.json()["path"] == path


async def test_taken_email_is_a_409(client: httpx.AsyncClient) -> None:
    await make_account(client, "ada@example.com", "reader")
    response = await client.post(
        "/api/v2/accounts",
        headers=ADMIN,
        json={"email": "ADA@example.com", "password": PASSWORD, "role": "admin"},
    )
    assert response.status_code == 409


async def test_sign_in_sets_an_httponly_strict_cookie_holding_no_stored_secret(
    client: httpx.AsyncClient, server: Flagstaff
) -> None:
    await make_account(client, "ada@example.com", "writer")
    response = await client.post(
        "/api/v2/session", json={"email": "ada@example.com", "password": PASSWORD}
    )
    assert response.status_code == 201
    header = response.headers["set-cookie"]
    assert header.startswith("flagstaff_session=")
    assert "HttpOnly" in header
    assert "SameSite=strict" in header
    assert "Path=/" in header
    cookie = response.cookies["flagstaff_session"]
    assert server.store is not None
    with server.store.unit_of_work(read_only=True) as uow:
        session = uow.sessions.get(hash_secret(cookie))
    assert session is not None
    assert session.subject.startswith("account:")
    body = response.json()
    assert body["role"] == "writer"
    assert body["name"] == "ada@example.com"
    assert body["csrfToken"] == session.csrf_token


@pytest.mark.parametrize(
    ("email", "password"),
    [("ada@example.com", "a wrong password!"), ("nobody@example.com", PASSWORD)],
)
async def test_wrong_password_or_unknown_email_is_the_same_401(
    client: httpx.AsyncClient, email: str, password: str
) -> None:
    await make_account(client, "ada@example.com", "admin")
    response = await client.post("/api/v2/session", json={"email": email, "password": password})
    assert response.status_code == 401
    assert response.json()["message"] == "wrong email or password"
    assert "set-cookie" not in response.headers


async def test_session_cookie_reads_like_a_token_of_the_same_role(
    client: httpx.AsyncClient,
) -> None:
    await make_account(client, "reader@example.com", "reader")
    await sign_in(client, "reader@example.com")
    assert (await client.get("/api/v2/projects")).status_code == 200
    who = (await client.get("/api/v2/session")).json()
    assert (who["via"], who["role"]) == ("session", "reader")


async def test_cookie_write_needs_the_csrf_token(client: httpx.AsyncClient) -> None:
    await make_account(client, "admin@example.com", "admin")
    csrf = await sign_in(client, "admin@example.com")
    project = {"key": "shop", "name": "Shop"}
    missing = await client.post("/api/v2/projects", json=project)
    assert missing.status_code == 403
    assert "CSRF" in missing.json()["message"]
    wrong = await client.post("/api/v2/projects", json=project, headers={"X-CSRF-Token": "nope"})
    assert wrong.status_code == 403
    made = await client.post("/api/v2/projects", json=project, headers={"X-CSRF-Token": csrf})
    assert made.status_code == 201, made.text


async def test_cookie_session_keeps_the_account_role(client: httpx.AsyncClient) -> None:
    await make_account(client, "reader@example.com", "reader")
    csrf = await sign_in(client, "reader@example.com")
    response = await client.post(
        "/api/v2/projects", json={"key": "shop", "name": "Shop"}, headers={"X-CSRF-Token": csrf}
    )
    assert response.status_code == 403
    assert response.json()["action"] == "createProject"


async def test_authorization_header_wins_over_the_cookie(client: httpx.AsyncClient) -> None:
    await make_account(client, "reader@example.com", "reader")
    await sign_in(client, "reader@example.com")
    # no CSRF token needed: a header a cross-site page cannot set is the credential
    response = await client.post(
        "/api/v2/projects", json={"key": "shop", "name": "Shop"}, headers=ADMIN
    )
    assert response.status_code == 201


async def test_sign_in_with_an_access_token_acts_as_that_token(
    client: httpx.AsyncClient,
) -> None:
    made = await client.post("/api/v2/tokens", headers=ADMIN, json={"name": "ci", "role": "writer"})
    secret = made.json()["token"]
    response = await client.post("/api/v2/session", json={"token": secret})
    assert response.status_code == 201
    assert (response.json()["role"], response.json()["id"]) == ("writer", made.json()["_id"])
    await client.delete(f"/api/v2/tokens/{made.json()['_id']}", headers=ADMIN)
    # a revoked token ends its sessions at the next request
    assert (await client.get("/api/v2/projects")).status_code == 401


async def test_bad_token_sign_in_is_401(client: httpx.AsyncClient) -> None:
    response = await client.post("/api/v2/session", json={"token": "api-unknown"})
    assert response.status_code == 401
    sdk = await client.post("/api/v2/session", json={"token": "sdk-0000"})
    assert sdk.status_code == 401


async def test_sign_in_without_credentials_names_the_missing_field(
    client: httpx.AsyncClient,
) -> None:
    response = await client.post("/api/v2/session", json={"email": "a@b.c"})
    assert response.status_code == 400
    assert response.json()["path"] == "/password"


async def test_sign_out_ends_the_session_and_needs_csrf(client: httpx.AsyncClient) -> None:
    await make_account(client, "ada@example.com", "reader")
    csrf = await sign_in(client, "ada@example.com")
    cookie = client.cookies["flagstaff_session"]
    assert (await client.delete("/api/v2/session")).status_code == 403
    response = await client.delete("/api/v2/session", headers={"X-CSRF-Token": csrf})
    assert response.status_code == 204
    client.cookies.set("flagstaff_session", cookie)
    assert (await client.get("/api/v2/projects")).status_code == 401


async def test_session_expires_after_twelve_hours(
    client: httpx.AsyncClient, clock: FakeClock
) -> None:
    await make_account(client, "ada@example.com", "reader")
    await sign_in(client, "ada@example.com")
    clock.advance(hours=11, minutes=59)
    assert (await client.get("/api/v2/projects")).status_code == 200
    clock.advance(minutes=2)
    response = await client.get("/api/v2/projects")
    assert response.status_code == 401
    assert "sign in again" in response.json()["message"]


async def test_deleting_an_account_or_changing_its_role_ends_its_sessions(
    client: httpx.AsyncClient,
) -> None:
    ada = await make_account(client, "ada@example.com", "admin")
    await sign_in(client, "ada@example.com")
    changed = await client.post(
        f"/api/v2/accounts/{ada['_id']}", headers=ADMIN, json={"role": "reader"}
    )
    assert changed.status_code == 200
    assert changed.json()["role"] == "reader"
    assert (await client.get("/api/v2/projects")).status_code == 401
    await sign_in(client, "ada@example.com")
    assert (await client.get("/api/v2/session")).json()["role"] == "reader"
    assert (await client.delete(f"/api/v2/accounts/{ada['_id']}", headers=ADMIN)).status_code == 204
    assert (await client.get("/api/v2/projects")).status_code == 401


async def test_password_change_takes_effect(client: httpx.AsyncClient) -> None:
    ada = await make_account(client, "ada@example.com", "reader")
    new = "another long password"
    response = await client.post(
        f"/api/v2/accounts/{ada['_id']}", headers=ADMIN, json={"password": new}
    )
    assert response.status_code == 200
    old = await client.post(
        "/api/v2/session", json={"email": "ada@example.com", "password": PASSWORD}
    )
    assert old.status_code == 401
    await sign_in(client, "ada@example.com", new)


async def test_only_unscoped_admins_manage_accounts(client: httpx.AsyncClient) -> None:
    await make_account(client, "writer@example.com", "writer")
    csrf = await sign_in(client, "writer@example.com")
    assert (await client.get("/api/v2/accounts")).status_code == 403
    response = await client.post(
        "/api/v2/accounts",
        headers={"X-CSRF-Token": csrf},
        json={"email": "x@example.com", "password": PASSWORD, "role": "admin"},
    )
    assert response.status_code == 403


async def test_an_admin_account_cannot_delete_itself(client: httpx.AsyncClient) -> None:
    ada = await make_account(client, "ada@example.com", "admin")
    csrf = await sign_in(client, "ada@example.com")
    response = await client.delete(f"/api/v2/accounts/{ada['_id']}", headers={"X-CSRF-Token": csrf})
    assert response.status_code == 403


async def test_account_changes_and_their_edits_are_audited_by_email(
    client: httpx.AsyncClient,
) -> None:
    await make_account(client, "ada@example.com", "admin")
    csrf = await sign_in(client, "ada@example.com")
    await client.post(
        "/api/v2/projects", json={"key": "shop", "name": "Shop"}, headers={"X-CSRF-Token": csrf}
    )
    entries = (await client.get("/api/v2/auditlog?limit=50", headers=ADMIN)).json()["items"]
    made_by_ada = [e for e in entries if e["accesses"][0]["action"] == "createProject"]
    assert made_by_ada[0]["token"]["name"] == "ada@example.com"
    created = [e for e in entries if e["accesses"][0]["action"] == "createAccount"]
    assert created[0]["description"].startswith("FLAGSTAFF_ADMIN_TOKEN created the account")


async def test_expired_sessions_are_swept_at_the_next_sign_in(
    client: httpx.AsyncClient, server: Flagstaff, clock: FakeClock
) -> None:
    await make_account(client, "ada@example.com", "reader")
    await sign_in(client, "ada@example.com")
    first = client.cookies["flagstaff_session"]
    clock.advance(hours=13)
    await sign_in(client, "ada@example.com")
    assert server.store is not None
    with server.store.unit_of_work(read_only=True) as uow:
        assert uow.sessions.get(hash_secret(first)) is None
        assert uow.sessions.get(hash_secret(client.cookies["flagstaff_session"])) is not None


async def test_an_account_made_before_the_first_start_still_gets_the_demo(
    tmp_path: Path, clock: FakeClock
) -> None:
    store = InMemoryStore()
    plane = control_plane(store, clock=clock, key_grace=timedelta(0))
    request = accounts.AccountRequest(email="first@example.com", role="admin", password=PASSWORD)
    accounts.create_account(plane, CLI_ACTOR, request)
    settings = Settings(data_dir=tmp_path, role="api", admin_token=ADMIN_TOKEN, seed_demo=True)
    flagstaff = Flagstaff(settings, store=store, clock=clock, announce=lambda line: None)
    async with flagstaff.running():
        with store.unit_of_work(read_only=True) as uow:
            assert [project.key for project in uow.projects.list()] == ["demo"]


async def test_repeated_wrong_passwords_are_refused_with_429_until_the_window_passes(
    client: httpx.AsyncClient, clock: FakeClock
) -> None:
    await make_account(client, "ada@example.com", "reader")
    for _ in range(ACCOUNT_LIMIT.failures):
        wrong = await client.post(
            "/api/v2/session", json={"email": "ada@example.com", "password": "not it at all"}
        )
        assert wrong.status_code == 401
    clock.advance(minutes=5)
    refused = await client.post(
        "/api/v2/session", json={"email": "Ada@example.com", "password": PASSWORD}
    )
    body = problem(refused, 429)
    assert body["code"] == "rate_limited"
    assert body["message"] == "too many failed sign-ins; try again in 10 minutes"
    assert refused.headers["retry-after"] == str(10 * 60)
    assert "flagstaff_session" not in refused.cookies
    clock.advance(minutes=10)
    await sign_in(client, "ada@example.com")


async def test_a_successful_sign_in_resets_the_account_s_failures(
    client: httpx.AsyncClient,
) -> None:
    await make_account(client, "ada@example.com", "reader")
    for _ in range(2):
        for _ in range(ACCOUNT_LIMIT.failures - 1):
            wrong = await client.post(
                "/api/v2/session", json={"email": "ada@example.com", "password": "not it at all"}
            )
            assert wrong.status_code == 401
        await sign_in(client, "ada@example.com")


async def test_one_address_guessing_tokens_is_refused_for_every_sign_in(
    client: httpx.AsyncClient,
) -> None:
    await make_account(client, "ada@example.com", "reader")
    for attempt in range(CLIENT_LIMIT.failures):
        wrong = await client.post("/api/v2/session", json={"token": f"api-guess-{attempt}"})
        assert wrong.status_code == 401
    refused = await client.post("/api/v2/session", json={"token": ADMIN_TOKEN})
    problem(refused, 429)
    refused = await client.post(
        "/api/v2/session", json={"email": "ada@example.com", "password": PASSWORD}
    )
    problem(refused, 429)
    assert int(refused.headers["retry-after"]) == 15 * 60


async def test_session_status_says_signed_out_with_200_and_nothing_else(
    client: httpx.AsyncClient,
) -> None:
    # no cookie, an unknown cookie, and an admin token in Authorization: only a live cookie counts
    for cookie, headers in ((None, {}), ("not-a-session", {}), (None, ADMIN)):
        client.cookies.clear()
        if cookie is not None:
            client.cookies.set("flagstaff_session", cookie)
        response = await client.get("/api/v2/session/status", headers=headers)
        assert response.status_code == 200, response.text
        assert response.json() == {"signedIn": False}
    # the strict question still answers 401, as API clients expect
    assert (await client.get("/api/v2/session")).status_code == 401


async def test_session_status_describes_a_live_session_until_it_ends(
    client: httpx.AsyncClient, clock: FakeClock
) -> None:
    await make_account(client, "ada@example.com", "reader")
    csrf = await sign_in(client, "ada@example.com")

    status = (await client.get("/api/v2/session/status")).json()
    assert status == {"signedIn": True, **(await client.get("/api/v2/session")).json()}
    assert (status["via"], status["role"], status["csrfToken"]) == ("session", "reader", csrf)

    clock.advance(hours=12, minutes=1)
    assert (await client.get("/api/v2/session/status")).json() == {"signedIn": False}


async def test_session_status_is_signed_out_after_sign_out(client: httpx.AsyncClient) -> None:
    await make_account(client, "ada@example.com", "reader")
    csrf = await sign_in(client, "ada@example.com")
    cookie = client.cookies["flagstaff_session"]
    assert (
        await client.delete("/api/v2/session", headers={"X-CSRF-Token": csrf})
    ).status_code == 204
    client.cookies.set("flagstaff_session", cookie)
    assert (await client.get("/api/v2/session/status")).json() == {"signedIn": False}
