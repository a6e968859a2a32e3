"""Custom role use cases (LaunchDarkly's `/api/v2/roles`): create, list, read, edit by JSON Patch
and delete, each write an audit entry naming who made it. A role still assigned to a member, a
team or a live access token cannot be deleted (409, as LaunchDarkly). Only unscoped admins (or a
policy allowing the route's action) manage roles. No HTTP and no SQL here; the checks are
`domain.custom_role`'s."""

from __future__ import annotations

from dataclasses import dataclass, replace

from flagstaff_server.domain.custom_role import check_custom_role
from flagstaff_server.domain.json_patch import (
    apply_json_patch,
    apply_merge_patch,
    parse_patch_body,
)
from flagstaff_server.errors import Conflict, Forbidden, NotFound, ValidationError
from flagstaff_server.services.access import Actor, authorize
from flagstaff_server.services.experiment_ports import ACCOUNT_WIDE, PROJECT_WIDE, KeyedRecord
from flagstaff_server.services.plane import ControlPlane, Transaction, epoch_millis, new_id
from flagstaff_server.services.ports import JsonObject, UnitOfWork

AUDIT_KIND = "role"
DERIVED = ("_id", "_version", "_creationDate", "_lastModified", "_links", "assignedTo", "_access")
COLLECTION = "/api/v2/roles"


@dataclass(frozen=True, slots=True, kw_only=True)
class Assignment:
    """Who holds a role: member ids, team keys, token ids."""

    members: tuple[str, ...]
    teams: tuple[str, ...]
    tokens: tuple[str, ...]


def resource_of(key: str) -> str:
    return f"role/{key}"


def present(record: KeyedRecord, assignment: Assignment | None = None) -> JsonObject:
    """LaunchDarkly's `CustomRole`."""
    body: JsonObject = {
        "_id": record.id,
        "_version": record.version,
        "_creationDate": epoch_millis(record.created),
        **record.doc,
        "_links": {"self": {"href": f"{COLLECTION}/{record.key}", "type": "application/json"}},
    }
    if assignment is not None:
        body["assignedTo"] = {
            "membersCount": len(assignment.members),
            "teamsCount": len(assignment.teams),
        }
    return body


def require_role_admin(actor: Actor) -> None:
    authorize(actor, "admin")
    if actor.is_scoped:
        raise Forbidden("managing roles needs an unscoped admin")


def find(uow: UnitOfWork, key_or_id: str) -> KeyedRecord | None:
    """The role with this key, else the one with this `_id` (LaunchDarkly accepts either)."""
    record = uow.custom_roles.get(ACCOUNT_WIDE, PROJECT_WIDE, key_or_id)
    if record is not None:
        return record
    return next((r for r in all_roles(uow) if r.id == key_or_id), None)


def existing(uow: UnitOfWork, key_or_id: str) -> KeyedRecord:
    record = find(uow, key_or_id)
    if record is None:
        raise NotFound(f"no custom role {key_or_id!r}")
    return record


def all_roles(uow: UnitOfWork) -> list[KeyedRecord]:
    return uow.custom_roles.list(ACCOUNT_WIDE, PROJECT_WIDE)


def assignment_of(uow: UnitOfWork, record: KeyedRecord) -> Assignment:
    members = tuple(
        account.id
        for account in uow.accounts.list()
        if record.key in account.doc.get("customRoles", [])
    )
    teams = tuple(
        team.key
        for team in uow.teams.list(ACCOUNT_WIDE, PROJECT_WIDE)
        if record.key in team.doc.get("customRoleKeys", [])
    )
    tokens = tuple(
        token.id
        for token in uow.tokens.list()
        if token.revoked is None and record.id in token.doc.get("customRoleIds", [])
    )
    return Assignment(members=members, teams=teams, tokens=tokens)


def audit(
    tx: Transaction,
    action: str,
    *,
    before: KeyedRecord | None = None,
    after: KeyedRecord | None = None,
    comment: str | None = None,
    patch: object = None,
) -> None:
    record = after or before
    assert record is not None
    tx.audit(
        kind=AUDIT_KIND,
        resource=resource_of(record.key),
        action=action,
        comment=comment,
        patch=patch,
        before=None if before is None else present(before),
        after=None if after is None else present(after),
    )


def create_role(plane: ControlPlane, actor: Actor, body: object) -> JsonObject:
    require_role_admin(actor)
    doc = check_custom_role(body)
    with plane.write(actor) as tx:
        record = KeyedRecord(
            id=new_id(),
            project=ACCOUNT_WIDE,
            environment=PROJECT_WIDE,
            key=str(doc["key"]),
            created=tx.now,
            doc=doc,
        )
        tx.uow.custom_roles.add(record)
        audit(tx, "createRole", after=record)
    return present(record, Assignment(members=(), teams=(), tokens=()))


def list_roles(plane: ControlPlane, actor: Actor) -> JsonObject:
    require_role_admin(actor)
    with plane.read() as uow:
        items = [present(r, assignment_of(uow, r)) for r in all_roles(uow)]
    return {
        "items": items,
        "totalCount": len(items),
        "_links": {"self": {"href": COLLECTION, "type": "application/json"}},
    }


def get_role(plane: ControlPlane, actor: Actor, key: str) -> JsonObject:
    require_role_admin(actor)
    with plane.read() as uow:
        record = existing(uow, key)
        return present(record, assignment_of(uow, record))


def patch_role(plane: ControlPlane, actor: Actor, key: str, body: object) -> JsonObject:
    """A JSON Patch (or merge patch) of the representation, checked as a create is; the key
    stays. Members, teams and tokens holding the role read the new policy on their next
    request."""
    require_role_admin(actor)
    request = parse_patch_body(body)
    with plane.write(actor) as tx:
        record = existing(tx.uow, key)
        shown = present(record)
        if request.kind == "json":
            patched = apply_json_patch(shown, request.operations)
        else:
            patched = apply_merge_patch(shown, request.merge)
        if patched.get("key") != record.key:
            raise ValidationError("a role's key cannot change", path="/key")
        doc = check_custom_role({k: v for k, v in patched.items() if k not in DERIVED})
        if doc != record.doc:
            updated = replace(record, version=record.version + 1, doc=doc)
            tx.uow.custom_roles.replace(updated, expected_version=record.version)
            audit(
                tx,
                "updateRole",
                before=record,
                after=updated,
                comment=request.comment,
                patch=body,
            )
            record = updated
        return present(record, assignment_of(tx.uow, record))


def delete_role(plane: ControlPlane, actor: Actor, key: str) -> None:
    """Refused (409) while a member, team or token holds the role."""
    require_role_admin(actor)
    with plane.write(actor) as tx:
        record = existing(tx.uow, key)
        held = assignment_of(tx.uow, record)
        holders = [
            *(f"member {m}" for m in held.members),
            *(f"team {t}" for t in held.teams),
            *(f"token {t}" for t in held.tokens),
        ]
        if holders:
            raise Conflict(f"custom role {record.key!r} is still assigned to {', '.join(holders)}")
        tx.uow.custom_roles.delete(ACCOUNT_WIDE, PROJECT_WIDE, record.key)
        audit(tx, "deleteRole", before=record)
