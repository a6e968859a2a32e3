"""Team use cases (LaunchDarkly's `/api/v2/teams`): create, list, read, edit by semantic patch,
delete, each write an audit entry of kind `team` naming who made it. A team's custom roles are
added to its members' access (`services.member_access`), read at each request. Every member id
and role key a team names must exist (400 at its position). No HTTP and no SQL here; shapes and
instructions are `domain.team`'s."""

from __future__ import annotations

from dataclasses import replace

from flagstaff_server.domain.policy import Resource, parse_resource
from flagstaff_server.domain.team import (
    TEAM_ACTIONS,
    apply_team_instruction,
    check_team,
    team_instructions,
)
from flagstaff_server.errors import Forbidden, NotFound, ValidationError
from flagstaff_server.services.access import Actor, authorize, authorize_accesses
from flagstaff_server.services.experiment_ports import ACCOUNT_WIDE, PROJECT_WIDE, KeyedRecord
from flagstaff_server.services.paging import Page
from flagstaff_server.services.plane import ControlPlane, Transaction, epoch_millis, new_id
from flagstaff_server.services.ports import JsonObject, UnitOfWork

AUDIT_KIND = "team"
COLLECTION = "/api/v2/teams"


def resource_of(key: str) -> str:
    return f"team/{key}"


def present(uow: UnitOfWork, record: KeyedRecord) -> JsonObject:
    """LaunchDarkly's `Team` with its expansions (`members`, `roles`, `maintainers`) always
    given, plus the plain `memberIDs` and `customRoleKeys` lists."""
    doc = record.doc
    roles = [uow.custom_roles.get(ACCOUNT_WIDE, PROJECT_WIDE, key) for key in doc["customRoleKeys"]]
    maintainers = [uow.accounts.get(member) for member in doc["maintainers"]]
    return {
        "key": record.key,
        "name": doc["name"],
        "description": doc["description"],
        "_creationDate": epoch_millis(record.created),
        "_lastModified": doc.get("lastModified", epoch_millis(record.created)),
        "_version": record.version,
        "_idpSynced": "scim" in doc,
        "memberIDs": doc["memberIDs"],
        "customRoleKeys": doc["customRoleKeys"],
        "members": {"totalCount": len(doc["memberIDs"])},
        "roles": {
            "totalCount": len(doc["customRoleKeys"]),
            "items": [{"key": r.key, "name": r.doc["name"]} for r in roles if r is not None],
        },
        "maintainers": {
            "totalCount": len(doc["maintainers"]),
            "items": [{"_id": m.id, "email": m.email} for m in maintainers if m is not None],
        },
        "_links": {"self": {"href": f"{COLLECTION}/{record.key}", "type": "application/json"}},
    }


def require_team_admin(actor: Actor) -> None:
    authorize(actor, "admin")
    if actor.is_scoped:
        raise Forbidden("managing teams needs an unscoped admin")


def existing(uow: UnitOfWork, key: str) -> KeyedRecord:
    record = uow.teams.get(ACCOUNT_WIDE, PROJECT_WIDE, key)
    if record is None:
        raise NotFound(f"no team {key!r}")
    return record


def check_names_exist(uow: UnitOfWork, doc: JsonObject) -> None:
    """Every member id and role key of a new team exists."""
    for name in ("memberIDs", "maintainers"):
        for index, member in enumerate(doc[name]):
            if uow.accounts.get(member) is None:
                where = "/permissionGrants" if name == "maintainers" else f"/{name}"
                raise ValidationError(f"no member {member!r}", path=f"{where}/{index}")
    for index, key in enumerate(doc["customRoleKeys"]):
        if uow.custom_roles.get(ACCOUNT_WIDE, PROJECT_WIDE, key) is None:
            raise ValidationError(f"no custom role {key!r}", path=f"/customRoleKeys/{index}")


def audit(
    tx: Transaction,
    action: str,
    key: str,
    *,
    before: JsonObject | None = None,
    after: JsonObject | None = None,
    comment: str | None = None,
    patch: object = None,
) -> None:
    tx.audit(
        kind=AUDIT_KIND,
        resource=resource_of(key),
        action=action,
        comment=comment,
        patch=patch,
        before=before,
        after=after,
    )


def create_team(plane: ControlPlane, actor: Actor, body: object) -> JsonObject:
    require_team_admin(actor)
    doc = check_team(body)
    with plane.write(actor) as tx:
        check_names_exist(tx.uow, doc)
        record = KeyedRecord(
            id=new_id(),
            project=ACCOUNT_WIDE,
            environment=PROJECT_WIDE,
            key=str(doc["key"]),
            created=tx.now,
            doc=doc,
        )
        tx.uow.teams.add(record)
        shown = present(tx.uow, record)
        audit(tx, "createTeam", record.key, after=shown)
    return shown


def list_teams(plane: ControlPlane, actor: Actor, page: Page | None = None) -> JsonObject:
    """Teams by key, a page of them (LaunchDarkly's `limit`, default 20, and `offset`)."""
    authorize(actor, "reader")
    page = page or Page()
    page.check()
    with plane.read() as uow:
        records = sorted(uow.teams.list(ACCOUNT_WIDE, PROJECT_WIDE), key=lambda r: r.key)
        items = [present(uow, r) for r in page.of(records)]
    return {
        "items": items,
        "totalCount": len(records),
        "_links": {"self": {"href": COLLECTION, "type": "application/json"}},
    }


def get_team(plane: ControlPlane, actor: Actor, key: str) -> JsonObject:
    authorize(actor, "reader")
    with plane.read() as uow:
        return present(uow, existing(uow, key))


def patch_accesses(key: str, body: object) -> list[tuple[str, Resource]]:
    """Every (action, resource) a team's semantic patch needs: one per instruction kind."""
    resource = parse_resource(resource_of(key))
    actions = sorted({TEAM_ACTIONS[i.kind] for i in team_instructions(body)})
    return [(action, resource) for action in actions]


MAINTAINER_ACTIONS = frozenset({"updateTeamMembers", "updateTeamName", "updateTeamDescription"})
"""What a team's maintainers may change on it whatever their roles (as LaunchDarkly's team
maintainers manage the team's members, name and description, not its roles or maintainers)."""


def is_maintainer_change(
    plane: ControlPlane, actor: Actor, key: str, needs: list[tuple[str, Resource]]
) -> bool:
    """Whether the caller is a maintainer of the team and asks only what maintainers may do."""
    if actor.member_id is None or not all(action in MAINTAINER_ACTIONS for action, _ in needs):
        return False
    with plane.read() as uow:
        record = uow.teams.get(ACCOUNT_WIDE, PROJECT_WIDE, key)
    return record is not None and actor.member_id in record.doc["maintainers"]


def patch_team(plane: ControlPlane, actor: Actor, key: str, body: object) -> JsonObject:
    """A semantic patch, all or nothing; each instruction's names must exist."""
    require_team_admin(actor)
    instructions = team_instructions(body)
    needs = patch_accesses(key, body)
    if not is_maintainer_change(plane, actor, key, needs):
        authorize_accesses(actor, needs)
    comment = body.get("comment") if isinstance(body, dict) else None
    with plane.write(actor) as tx:
        record = existing(tx.uow, key)
        doc = dict(record.doc)
        for instruction in instructions:
            doc = apply_team_instruction(doc, instruction)
            check_instruction_names(tx.uow, instruction.params, instruction.path())
        if doc == record.doc:
            return present(tx.uow, record)
        doc["lastModified"] = epoch_millis(tx.now)
        updated = replace(record, version=record.version + 1, doc=doc)
        before = present(tx.uow, record)
        tx.uow.teams.replace(updated, expected_version=record.version)
        after = present(tx.uow, updated)
        audit(
            tx,
            "updateTeam",
            key,
            before=before,
            after=after,
            comment=comment if isinstance(comment, str) else None,
            patch=body,
        )
        return after


def check_instruction_names(uow: UnitOfWork, params: JsonObject, path: str) -> None:
    """The member ids or role keys an adding instruction names exist."""
    kind = params["kind"]
    if kind in ("addMembers", "replaceMembers", "addCustomRoles"):
        for index, value in enumerate(params["values"]):
            found = (
                uow.accounts.get(value)
                if kind.endswith("Members")
                else uow.custom_roles.get(ACCOUNT_WIDE, PROJECT_WIDE, value)
            )
            if found is None:
                what = "member" if kind.endswith("Members") else "custom role"
                raise ValidationError(f"no {what} {value!r}", path=f"{path}/values/{index}")
    if kind == "addPermissionGrants":
        for index, value in enumerate(params["memberIDs"]):
            if uow.accounts.get(value) is None:
                raise ValidationError(f"no member {value!r}", path=f"{path}/memberIDs/{index}")


def delete_team(plane: ControlPlane, actor: Actor, key: str) -> None:
    require_team_admin(actor)
    with plane.write(actor) as tx:
        record = existing(tx.uow, key)
        before = present(tx.uow, record)
        tx.uow.teams.delete(ACCOUNT_WIDE, PROJECT_WIDE, key)
        audit(tx, "deleteTeam", key, before=before)
