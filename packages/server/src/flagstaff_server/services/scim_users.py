"""SCIM Users (RFC 7644 §3) as members: list, read, create, replace (PUT), patch and delete, each
write an audit entry of kind `member` naming the SCIM token. Only members SCIM made are Users
(`doc["scim"]` holds the attributes it keeps). Deprovisioning (`active` false, or DELETE)
deactivates the member and, in the same transaction, ends its sessions and revokes its tokens
(`members.end_access`). A deleted User stays a deactivated member (its history kept) that SCIM no
longer shows; creating a User with its email again takes it back, as it takes over a member
made before provisioning.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from flagstaff_server.domain.scim_error import ScimInvalid
from flagstaff_server.domain.scim_listing import Query, list_response, project
from flagstaff_server.domain.scim_patch import apply_patch
from flagstaff_server.domain.scim_resource import UserForm, check_user
from flagstaff_server.domain.scim_schema import USER_SHAPE, USER_URN
from flagstaff_server.errors import AlreadyExists, NotFound, ValidationError
from flagstaff_server.services import members
from flagstaff_server.services.access import Actor
from flagstaff_server.services.accounts import normalized_email
from flagstaff_server.services.member_access import base_role_of, is_active, teams_of
from flagstaff_server.services.plane import ControlPlane, Transaction, new_id
from flagstaff_server.services.ports import AccountRecord, JsonObject, Role, UnitOfWork
from flagstaff_server.services.scim_groups import group_location, is_scim_team, moment

SCIM_ROLE: Role = "reader"
"""The base role of a member SCIM makes; an admin changes it through `/api/v2/members`."""
RELEASED = "scimDeprovisioned"
COMMENT = "SCIM provisioning"


def user_location(member_id: str) -> str:
    return f"/scim/v2/Users/{member_id}"


def is_scim_user(record: AccountRecord) -> bool:
    return isinstance(record.doc.get("scim"), dict)


def present_user(uow: UnitOfWork, record: AccountRecord) -> JsonObject:
    kept: dict[str, Any] = record.doc["scim"]
    groups = [
        {"value": team.id, "display": team.doc["name"], "$ref": group_location(team.id)}
        for team in teams_of(uow, record.id)
        if is_scim_team(team)
    ]
    return {
        "schemas": [USER_URN],
        "id": record.id,
        **kept,
        **({"active": is_active(record)} if record.doc.get("scimActive") else {}),
        **({"groups": groups} if groups else {}),
        "meta": {
            "resourceType": "User",
            "created": moment(record.created),
            "lastModified": moment_of(record),
            "location": user_location(record.id),
        },
    }


def moment_of(record: AccountRecord) -> str:
    modified = record.doc.get("scimModified")
    return moment(record.created) if modified is None else str(modified)


def scim_user(uow: UnitOfWork, member_id: str) -> AccountRecord:
    record = uow.accounts.get(member_id)
    if record is None or not is_scim_user(record):
        raise NotFound(f"no User {member_id!r}")
    return record


def list_users(plane: ControlPlane, query: Query) -> JsonObject:
    with plane.read() as uow:
        shown = [present_user(uow, r) for r in uow.accounts.list() if is_scim_user(r)]
    return list_response(shown, query)


def get_user(plane: ControlPlane, member_id: str, query: Query) -> JsonObject:
    with plane.read() as uow:
        return project(present_user(uow, scim_user(uow, member_id)), query)


def checked_email(form: UserForm) -> str:
    try:
        return normalized_email(form.email)
    except ValidationError as exc:
        raise ScimInvalid(exc.message, scim_type="invalidValue", path="/emails") from exc


def check_unique(uow: UnitOfWork, form: UserForm, email: str, member_id: str) -> None:
    """userName is unique among Users, and the email among members (a member SCIM has not
    made yet is taken over when it is created, `create_user`)."""
    wanted = str(form.attributes["userName"]).lower()
    for other in uow.accounts.list():
        if other.id == member_id:
            continue
        if is_scim_user(other) and str(other.doc["scim"]["userName"]).lower() == wanted:
            raise AlreadyExists(f"userName {form.attributes['userName']!r} is taken")
        if other.email == email and (is_scim_user(other) or member_id):
            raise AlreadyExists(f"{email!r} is already a member's email")


def stored(record: AccountRecord, form: UserForm, email: str, tx: Transaction) -> AccountRecord:
    name = form.attributes.get("name", {})
    doc = {k: v for k, v in record.doc.items() if k != RELEASED}
    doc.update(
        scim=form.attributes,
        scimModified=moment(tx.now),
        firstName=name.get("givenName", doc.get("firstName", "")),
        lastName=name.get("familyName", doc.get("lastName", "")),
        scimActive=form.active is not None,
        deactivated=record.doc.get("deactivated") is True
        if form.active is None
        else not form.active,
    )
    return replace(record, email=email, doc=doc)


def create_user(plane: ControlPlane, actor: Actor, body: object) -> JsonObject:
    """A new member, or the member with this email that SCIM did not make yet (an account
    from before provisioning, or a User deleted earlier): it keeps its roles, password and
    tokens. The account owner is never taken over."""
    form = check_user(body)
    email = checked_email(form)
    with plane.write(actor) as tx:
        check_unique(tx.uow, form, email, member_id="")
        existing = tx.uow.accounts.find_by_email(email)
        if existing is not None:
            if base_role_of(existing) == "owner":
                raise AlreadyExists("the account owner is not provisioned by SCIM")
            return write_user(tx, existing, form, action="updateMember")
        blank = AccountRecord(
            id=new_id(),
            email=email,
            role=SCIM_ROLE,
            password_hash="",
            created=tx.now,
            doc={"baseRole": SCIM_ROLE, "customRoles": [], "createdBy": actor.token_id},
        )
        tx.uow.accounts.add(blank)
        return write_user(tx, blank, form, action="createMember")


def write_user(
    tx: Transaction, record: AccountRecord, form: UserForm, *, action: str = "updateMember"
) -> JsonObject:
    """Store the User's new form; turning `active` off ends the member's access."""
    email = checked_email(form)
    check_unique(tx.uow, form, email, record.id)
    updated = stored(record, form, email, tx)
    before = None if action == "createMember" else members.present(tx.uow, record)
    tx.uow.accounts.replace(updated)
    if is_active(record) and not is_active(updated):
        members.end_access(tx, record.id)
    members.audit(
        tx,
        action,
        record.id,
        before=before,
        after=members.present(tx.uow, updated),
        comment=COMMENT if form.active is not False else f"{COMMENT}: deactivated",
    )
    return present_user(tx.uow, updated)


def replace_user(plane: ControlPlane, actor: Actor, member_id: str, body: object) -> JsonObject:
    form = check_user(body)
    with plane.write(actor) as tx:
        return write_user(tx, scim_user(tx.uow, member_id), form)


def patch_user(plane: ControlPlane, actor: Actor, member_id: str, body: object) -> JsonObject:
    with plane.write(actor) as tx:
        record = scim_user(tx.uow, member_id)
        current = present_user(tx.uow, record)
        patched = apply_patch(current, body, USER_SHAPE)
        return write_user(tx, record, check_user(patched))


def delete_user(plane: ControlPlane, actor: Actor, member_id: str) -> None:
    """Deprovision: the member is deactivated, leaves its teams and loses its sessions and
    tokens; SCIM shows it no more."""
    with plane.write(actor) as tx:
        record = scim_user(tx.uow, member_id)
        before = members.present(tx.uow, record)
        for team in teams_of(tx.uow, record.id):
            ids = [m for m in team.doc["memberIDs"] if m != record.id]
            doc = {**team.doc, "memberIDs": ids}
            tx.uow.teams.replace(replace(team, version=team.version + 1, doc=doc), team.version)
        doc = {k: v for k, v in record.doc.items() if k != "scim"}
        released = replace(record, doc={**doc, "deactivated": True, RELEASED: True})
        tx.uow.accounts.replace(released)
        members.end_access(tx, record.id)
        members.audit(
            tx,
            "updateMember",
            record.id,
            before=before,
            after=members.present(tx.uow, released),
            comment=f"{COMMENT}: deleted (deactivated)",
        )


__all__ = ["create_user", "delete_user", "get_user", "list_users", "patch_user", "replace_user"]
