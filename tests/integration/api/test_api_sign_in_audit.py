"""Sign-ins and failed sign-ins are in the audit log (issue 19): who signed in, with what
(password or token) and from where; a refused attempt names the email tried, never the secret."""

from __future__ import annotations

from typing import Any

import httpx
from platform_api import ADMIN, ADMIN_TOKEN

PASSWORD = "a long enough password"


async def sign_in_entries(client: httpx.AsyncClient) -> list[dict[str, Any]]:
    log = (await client.get("/api/v2/auditlog", headers=ADMIN)).json()
    return [
        entry
        for entry in log["items"]
        if entry["accesses"][0]["action"] in ("signIn", "signInFailed")
    ]


async def test_sign_ins_and_failed_sign_ins_are_audited(client: httpx.AsyncClient) -> None:
    made = await client.post(
        "/api/v2/accounts",
        headers=ADMIN,
        json={"email": "ada@example.com", "password": PASSWORD, "role": "reader"},
    )
    assert made.status_code == 201, made.text
    account = made.json()["_id"]

    wrong = await client.post(
        "/api/v2/session", json={"email": "ada@example.com", "password": "not the password"}
    )
    assert wrong.status_code == 401
    right = await client.post(
        "/api/v2/session", json={"email": "ada@example.com", "password": PASSWORD}
    )
    assert right.status_code == 201, right.text
    bad_token = await client.post("/api/v2/session", json={"token": "api-unknown"})
    assert bad_token.status_code == 401
    by_token = await client.post("/api/v2/session", json={"token": ADMIN_TOKEN})
    assert by_token.status_code == 201, by_token.text

    found = [
        (e["accesses"][0]["action"], e["accesses"][0]["resource"])
        for e in await sign_in_entries(client)
    ]
    assert found == [
        ("signIn", "token/admin-token"),
        ("signInFailed", "account/*"),
        ("signIn", f"account/{account}"),
        ("signInFailed", "account/*"),
    ]
    log = (await client.get("/api/v2/auditlog", headers=ADMIN)).text
    assert PASSWORD not in log
    assert "not the password" not in log
    assert "ada@example.com" in log
