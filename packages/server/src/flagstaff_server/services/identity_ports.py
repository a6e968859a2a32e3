"""Storage ports of who may act: access tokens, local accounts and their browser sessions, with
the roles they hold. Pure declarations; `services.ports` gathers them into the unit of work."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Literal, Protocol

from flagstaff_server.services.port_types import JsonObject

Role = Literal["reader", "writer", "admin"]


@dataclass(frozen=True, slots=True, kw_only=True)
class TokenRecord:
    id: str
    name: str
    role: Role
    secret_hash: str
    """A hash of the secret (the secret itself is never stored)."""
    project: str | None = None
    environment: str | None = None
    created: datetime
    revoked: datetime | None = None
    doc: JsonObject
    """Extra REST fields (description, hint of the secret, lastUsed, ...)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class AccountRecord:
    """A local (web UI) user account. Holds the same roles as access tokens."""

    id: str
    email: str
    """Lowercase; unique."""
    role: Role
    password_hash: str
    """A self-describing slow hash with its salt (`scrypt$n$r$p$salt$hash`), never the password."""
    created: datetime
    doc: JsonObject
    """Extra fields (display name, who created it, ...)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class SessionRecord:
    """A signed-in browser session. The cookie holds a random id; only its hash is stored."""

    id_hash: str
    subject: str
    """Who is signed in: `account:<id>`, or `token:<id>` for a sign-in with an access token."""
    csrf_token: str
    """Sent back by the browser in a header on every write: a cross-site page cannot read it."""
    created: datetime
    expires: datetime


class TokenRepository(Protocol):
    def get(self, token_id: str) -> TokenRecord | None: ...
    def find_by_secret_hash(self, secret_hash: str) -> TokenRecord | None:
        """The token with this hash, revoked or not (the caller checks `revoked`)."""
        ...

    def list(self) -> list[TokenRecord]:
        """All tokens, ordered by creation time then id."""
        ...

    def add(self, record: TokenRecord) -> None: ...
    def replace(self, record: TokenRecord) -> None: ...


class AccountRepository(Protocol):
    def get(self, account_id: str) -> AccountRecord | None: ...
    def find_by_email(self, email: str) -> AccountRecord | None: ...
    def list(self) -> list[AccountRecord]:
        """All accounts, ordered by email."""
        ...

    def add(self, record: AccountRecord) -> None:
        """Raises `AlreadyExists` for a taken id or email."""
        ...

    def replace(self, record: AccountRecord) -> None: ...
    def delete(self, account_id: str) -> None: ...


class SessionRepository(Protocol):
    def get(self, id_hash: str) -> SessionRecord | None: ...
    def add(self, record: SessionRecord) -> None: ...
    def delete(self, id_hash: str) -> None:
        """Remove the session; a missing one is no error (signing out twice is harmless)."""
        ...

    def delete_subject(self, subject: str) -> None:
        """Remove every session of `subject` (its account was deleted or its role changed)."""
        ...

    def delete_expired(self, now: datetime) -> None: ...


__all__ = [
    "AccountRecord",
    "AccountRepository",
    "Role",
    "SessionRecord",
    "SessionRepository",
    "TokenRecord",
    "TokenRepository",
]
