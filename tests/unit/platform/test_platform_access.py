"""Roles and scopes (`services.access`): who may do what, and how `Authorization` is read."""

from __future__ import annotations

import pytest
from flagstaff_server.errors import Forbidden, Unauthorized
from flagstaff_server.services.access import Actor, authorize, hash_secret, new_secret, secret_of

ADMIN = Actor(token_id="a", name="admin", role="admin")
WRITER = Actor(token_id="w", name="writer", role="writer")
READER = Actor(token_id="r", name="reader", role="reader")
SHOP_ADMIN = Actor(token_id="s", name="shop", role="admin", project="shop")
SHOP_TEST_WRITER = Actor(token_id="t", name="t", role="writer", project="shop", environment="test")


@pytest.mark.parametrize(
    ("actor", "role", "project", "environment", "allowed"),
    [
        (READER, "reader", None, None, True),
        (READER, "writer", "shop", "test", False),
        (WRITER, "writer", "shop", None, True),
        (WRITER, "admin", None, None, False),
        (ADMIN, "admin", "any", "env", True),
        (SHOP_ADMIN, "admin", "shop", "test", True),
        (SHOP_ADMIN, "reader", "blog", None, False),
        (SHOP_ADMIN, "reader", None, None, True),  # account-wide reads are filtered, not refused
        (SHOP_ADMIN, "admin", None, None, False),  # account-wide changes need an unscoped admin
        (SHOP_TEST_WRITER, "writer", "shop", "test", True),
        (SHOP_TEST_WRITER, "writer", "shop", "production", False),
        (SHOP_TEST_WRITER, "writer", "shop", None, False),  # project-wide change
        (SHOP_TEST_WRITER, "reader", "shop", None, True),
        (SHOP_TEST_WRITER, "reader", "shop", "production", False),
    ],
)
def test_role_and_scope_decide(
    actor: Actor, role: str, project: str | None, environment: str | None, allowed: bool
) -> None:
    assert actor.may(role, project=project, environment=environment) is allowed  # type: ignore[arg-type]
    if allowed:
        authorize(actor, role, project=project, environment=environment)  # type: ignore[arg-type]
    else:
        with pytest.raises(Forbidden):
            authorize(actor, role, project=project, environment=environment)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("header", "secret"),
    [
        ("api-1", "api-1"),
        ("Bearer api-1", "api-1"),
        ("bearer   api-1 ", "api-1"),
        ("Token x", "Token x"),
    ],
)
def test_authorization_header_is_raw_or_bearer(header: str, secret: str) -> None:
    assert secret_of(header) == secret


@pytest.mark.parametrize("header", [None, "", "   "])
def test_missing_authorization_is_unauthorized(header: str | None) -> None:
    with pytest.raises(Unauthorized):
        secret_of(header)


def test_secrets_are_fresh_and_hashes_stable() -> None:
    first, second = new_secret(), new_secret()
    assert first != second
    assert first.startswith("api-")
    assert hash_secret(first) == hash_secret(first) != hash_secret(second)
    assert first not in hash_secret(first)
