"""Who may speak SCIM: SCIM tokens, made by an unscoped admin (the secret shown once), listed and
revoked with the other access tokens, and accepted only on `/scim/v2` (the management API refuses
them, `services.access.authenticate`). The actor a SCIM token speaks for is what audit entries of
provisioning name.
"""

from __future__ import annotations

from flagstaff_server.domain.document import NAME_MAX_LENGTH
from flagstaff_server.errors import Forbidden, Unauthorized, ValidationError
from flagstaff_server.services import tokens
from flagstaff_server.services.access import (
    SCIM_PURPOSE,
    Actor,
    authorize,
    hash_secret,
    new_secret,
    secret_of,
)
from flagstaff_server.services.plane import ControlPlane, new_id
from flagstaff_server.services.ports import JsonObject, TokenRecord, UnitOfWork


def create_scim_token(plane: ControlPlane, actor: Actor, name: str) -> JsonObject:
    """A new SCIM token with its secret (never shown again)."""
    authorize(actor, "admin")
    if actor.is_scoped:
        raise Forbidden("a SCIM token is made by an unscoped admin")
    name = name.strip()
    if not name or len(name) > NAME_MAX_LENGTH:
        raise ValidationError(
            f"name must be 1 to {NAME_MAX_LENGTH} characters, not blank", path="/name"
        )
    secret = new_secret()
    with plane.write(actor) as tx:
        record = TokenRecord(
            id=new_id(),
            name=name,
            role="admin",
            secret_hash=hash_secret(secret),
            created=tx.now,
            doc={
                "ending": secret[-4:],
                "ownerId": actor.token_id,
                "description": "SCIM provisioning",
                "purpose": SCIM_PURPOSE,
            },
        )
        tx.uow.tokens.add(record)
        tx.audit(
            kind="token",
            resource=tokens.resource_of(record.id),
            action="createAccessToken",
            comment="a SCIM token",
            after=tokens.represent(record),
        )
    return {**tokens.represent(record, secret=secret), "scim": True}


def scim_actor(uow: UnitOfWork, authorization: str | None) -> Actor:
    """The SCIM token behind a `Bearer` header, or `Unauthorized`."""
    secret = secret_of(authorization)
    record = uow.tokens.find_by_secret_hash(hash_secret(secret))
    if record is None or record.revoked is not None or record.doc.get("purpose") != SCIM_PURPOSE:
        raise Unauthorized("a live SCIM token is required as 'Authorization: Bearer <token>'")
    return Actor(token_id=record.id, name=f"SCIM: {record.name}", role="admin")


__all__ = ["create_scim_token", "scim_actor"]
