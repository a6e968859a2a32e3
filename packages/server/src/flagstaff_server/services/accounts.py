"""Local account use cases (web UI users): create, list, update role or password, delete.

Accounts hold the same roles as access tokens. Every change is audited (kind "account"); a
deleted account or a changed role or password ends the account's sessions at once. Only unscoped
admins manage accounts. Passwords are hashed in `services.password`; nothing here logs one.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

from flagstaff_server.domain.document import NAME_MAX_LENGTH
from flagstaff_server.errors import Forbidden, NotFound, ValidationError
from flagstaff_server.services.access import ROLE_RANK, Actor, authorize
from flagstaff_server.services.member_access import (
    ACCOUNT_SUBJECT_PREFIX,
    base_role_of,
    member_grant,
)
from flagstaff_server.services.password import check_strength, hash_password
from flagstaff_server.services.plane import ControlPlane, epoch_millis, new_id
from flagstaff_server.services.ports import AccountRecord, JsonObject, Role, UnitOfWork

# Deliberately loose: one @, something on each side, no spaces. Mail is never sent.
EMAIL = re.compile(r"^[^@\s]+@[^@\s]+$")
EMAIL_MAX_LENGTH = 254
ACCOUNT_ACTOR_PREFIX = ACCOUNT_SUBJECT_PREFIX


@dataclass(frozen=True, slots=True, kw_only=True)
class AccountRequest:
    email: str
    role: str
    password: str
    name: str | None = None


def subject_of(account_id: str) -> str:
    """How sessions and audit entries name the account."""
    return f"{ACCOUNT_ACTOR_PREFIX}{account_id}"


def actor_of(uow: UnitOfWork, record: AccountRecord) -> Actor:
    """The signed-in member, decided by their roles as they are now (`member_access`)."""
    grant = member_grant(uow, record)
    return Actor(
        token_id=subject_of(record.id),
        name=record.email,
        role=record.role,
        grants=(grant,),
        policy_only=True,
        member_id=record.id,
        approval_bypass=base_role_of(record) in ("admin", "owner") and not grant.custom_roles,
    )


def resource_of(account_id: str) -> str:
    return f"account/{account_id}"


def represent(record: AccountRecord) -> JsonObject:
    return {
        "_id": record.id,
        "email": record.email,
        "name": record.doc.get("name", ""),
        "role": record.role,
        "creationDate": epoch_millis(record.created),
        "_links": {"self": {"href": f"/api/v2/accounts/{record.id}", "type": "application/json"}},
    }


def normalized_email(email: str) -> str:
    value = email.strip().lower()
    if not EMAIL.match(value) or len(value) > EMAIL_MAX_LENGTH:
        raise ValidationError(f"not an email address: {email!r}", path="/email")
    return value


def checked_role(role: str) -> Role:
    if role not in ROLE_RANK:
        raise ValidationError(
            f"role must be one of {', '.join(ROLE_RANK)}, got {role!r}", path="/role"
        )
    return role  # type: ignore[return-value]


def checked_name(name: str | None) -> str:
    value = (name or "").strip()
    if len(value) > NAME_MAX_LENGTH:
        raise ValidationError(f"name may have at most {NAME_MAX_LENGTH} characters", path="/name")
    return value


def require_account_admin(actor: Actor) -> None:
    authorize(actor, "admin")
    if actor.is_scoped:
        raise Forbidden("managing accounts needs an unscoped admin")


def create_account(plane: ControlPlane, actor: Actor, request: AccountRequest) -> JsonObject:
    require_account_admin(actor)
    email = normalized_email(request.email)
    role = checked_role(request.role)
    name = checked_name(request.name)
    check_strength(request.password)
    password_hash = hash_password(request.password)
    with plane.write(actor) as tx:
        record = AccountRecord(
            id=new_id(),
            email=email,
            role=role,
            password_hash=password_hash,
            created=tx.now,
            doc={
                "name": name,
                "createdBy": actor.token_id,
                "baseRole": role,
            },
        )
        tx.uow.accounts.add(record)
        tx.audit(
            kind="account",
            resource=resource_of(record.id),
            action="createAccount",
            after=represent(record),
        )
    return represent(record)


def list_accounts(plane: ControlPlane, actor: Actor) -> list[JsonObject]:
    require_account_admin(actor)
    with plane.read() as uow:
        return [represent(record) for record in uow.accounts.list()]


def update_account(
    plane: ControlPlane,
    actor: Actor,
    account_id: str,
    *,
    role: str | None = None,
    password: str | None = None,
) -> JsonObject:
    """Change the role and/or the password; the account's open sessions end."""
    require_account_admin(actor)
    new_role = None if role is None else checked_role(role)
    if password is not None:
        check_strength(password)
    new_hash = None if password is None else hash_password(password)
    with plane.write(actor) as tx:
        record = tx.uow.accounts.get(account_id)
        if record is None:
            raise NotFound(f"no account {account_id!r}")
        updated = replace(
            record,
            role=new_role or record.role,
            password_hash=new_hash or record.password_hash,
            doc={**record.doc, "baseRole": new_role} if new_role else record.doc,
        )
        tx.uow.accounts.replace(updated)
        tx.uow.sessions.delete_subject(subject_of(account_id))
        comment = "password changed" if new_hash else None
        tx.audit(
            kind="account",
            resource=resource_of(account_id),
            action="updateAccount",
            comment=comment,
            before=represent(record),
            after=represent(updated),
        )
    return represent(updated)


def delete_account(plane: ControlPlane, actor: Actor, account_id: str) -> None:
    require_account_admin(actor)
    if actor.token_id == subject_of(account_id):
        raise Forbidden("an account cannot delete itself; ask another admin")
    with plane.write(actor) as tx:
        record = tx.uow.accounts.get(account_id)
        if record is None:
            raise NotFound(f"no account {account_id!r}")
        tx.uow.accounts.delete(account_id)
        tx.uow.sessions.delete_subject(subject_of(account_id))
        tx.audit(
            kind="account",
            resource=resource_of(account_id),
            action="deleteAccount",
            before=represent(record),
        )
