"""SCIM Groups (RFC 7644 §3) as teams: list, read, create, replace (PUT), patch (members added,
replaced or removed) and delete, each write an audit entry of kind `team` naming the SCIM token.
Only teams SCIM made are Groups (`doc["scim"]`); a Group's id is the team's `_id`, and its team
key is made from the display name. Members are SCIM Users.
"""

from __future__ import annotations

import re
from dataclasses import replace
from datetime import UTC, datetime
from typing import Any

from flagstaff_server.domain.document import KEY_MAX_LENGTH
from flagstaff_server.domain.scim_error import ScimInvalid
from flagstaff_server.domain.scim_listing import Query, list_response, project
from flagstaff_server.domain.scim_patch import apply_patch
from flagstaff_server.domain.scim_resource import GroupForm, check_group
from flagstaff_server.domain.scim_schema import GROUP_SHAPE, GROUP_URN
from flagstaff_server.errors import NotFound
from flagstaff_server.services import teams
from flagstaff_server.services.access import Actor
from flagstaff_server.services.experiment_ports import ACCOUNT_WIDE, PROJECT_WIDE, KeyedRecord
from flagstaff_server.services.plane import ControlPlane, Transaction, epoch_millis, new_id
from flagstaff_server.services.ports import JsonObject, UnitOfWork

NOT_KEY = re.compile(r"[^a-z0-9._-]+")
COMMENT = "SCIM provisioning"


def moment(when: datetime) -> str:
    """RFC 3339 in UTC, as SCIM's `meta` dates."""
    return when.astimezone(UTC).isoformat().replace("+00:00", "Z")


def group_location(team_id: str) -> str:
    return f"/scim/v2/Groups/{team_id}"


def is_scim_team(record: KeyedRecord) -> bool:
    return isinstance(record.doc.get("scim"), dict)


def present_group(uow: UnitOfWork, record: KeyedRecord) -> JsonObject:
    # no `display`: it is optional, and clients compare the members they sent with those returned
    members = [
        {"value": member_id, "$ref": f"/scim/v2/Users/{member_id}"}
        for member_id in record.doc["memberIDs"]
        if uow.accounts.get(member_id) is not None
    ]
    external = record.doc["scim"].get("externalId")
    return {
        "schemas": [GROUP_URN],
        "id": record.id,
        **({"externalId": external} if external is not None else {}),
        "displayName": record.doc["name"],
        "members": members,
        "meta": {
            "resourceType": "Group",
            "created": moment(record.created),
            "lastModified": record.doc["scim"].get("modified", moment(record.created)),
            "location": group_location(record.id),
        },
    }


def scim_teams(uow: UnitOfWork) -> list[KeyedRecord]:
    return [t for t in uow.teams.list(ACCOUNT_WIDE, PROJECT_WIDE) if is_scim_team(t)]


def scim_team(uow: UnitOfWork, team_id: str) -> KeyedRecord:
    found = next((t for t in scim_teams(uow) if t.id == team_id), None)
    if found is None:
        raise NotFound(f"no Group {team_id!r}")
    return found


def list_groups(plane: ControlPlane, query: Query) -> JsonObject:
    with plane.read() as uow:
        shown = [present_group(uow, t) for t in scim_teams(uow)]
    return list_response(shown, query)


def get_group(plane: ControlPlane, team_id: str, query: Query) -> JsonObject:
    with plane.read() as uow:
        return project(present_group(uow, scim_team(uow, team_id)), query)


def free_key(uow: UnitOfWork, display_name: str, team_id: str) -> str:
    """A team key from the display name (`Platform Ops` -> `platform-ops`), made unique with the
    Group's id when taken."""
    base = NOT_KEY.sub("-", display_name.lower()).strip("-._")[: KEY_MAX_LENGTH - 25] or "group"
    if uow.teams.get(ACCOUNT_WIDE, PROJECT_WIDE, base) is None:
        return base
    return f"{base}-{team_id}"


def checked_members(uow: UnitOfWork, form: GroupForm) -> list[str]:
    for index, member_id in enumerate(form.member_ids):
        account = uow.accounts.get(member_id)
        if account is None or not isinstance(account.doc.get("scim"), dict):
            raise ScimInvalid(
                f"no User {member_id!r}", scim_type="invalidValue", path=f"/members/{index}/value"
            )
    return list(form.member_ids)


def scim_doc(form: GroupForm, now: datetime) -> dict[str, Any]:
    return {
        **({"externalId": form.external_id} if form.external_id is not None else {}),
        "modified": moment(now),
    }


def create_group(plane: ControlPlane, actor: Actor, body: object) -> JsonObject:
    form = check_group(body)
    with plane.write(actor) as tx:
        team_id = new_id()
        key = free_key(tx.uow, form.display_name, team_id)
        record = KeyedRecord(
            id=team_id,
            project=ACCOUNT_WIDE,
            environment=PROJECT_WIDE,
            key=key,
            created=tx.now,
            doc={
                "key": key,
                "name": form.display_name,
                "description": "",
                "memberIDs": checked_members(tx.uow, form),
                "customRoleKeys": [],
                "maintainers": [],
                "scim": scim_doc(form, tx.now),
            },
        )
        tx.uow.teams.add(record)
        teams.audit(tx, "createTeam", key, after=teams.present(tx.uow, record), comment=COMMENT)
        return present_group(tx.uow, record)


def write_group(tx: Transaction, record: KeyedRecord, form: GroupForm) -> JsonObject:
    doc = {
        **record.doc,
        "name": form.display_name,
        "memberIDs": checked_members(tx.uow, form),
        "scim": scim_doc(form, tx.now),
        "lastModified": epoch_millis(tx.now),
    }
    updated = replace(record, version=record.version + 1, doc=doc)
    before = teams.present(tx.uow, record)
    tx.uow.teams.replace(updated, expected_version=record.version)
    teams.audit(
        tx,
        "updateTeam",
        record.key,
        before=before,
        after=teams.present(tx.uow, updated),
        comment=COMMENT,
    )
    return present_group(tx.uow, updated)


def replace_group(plane: ControlPlane, actor: Actor, team_id: str, body: object) -> JsonObject:
    form = check_group(body)
    with plane.write(actor) as tx:
        return write_group(tx, scim_team(tx.uow, team_id), form)


def patch_group(plane: ControlPlane, actor: Actor, team_id: str, body: object) -> JsonObject:
    with plane.write(actor) as tx:
        record = scim_team(tx.uow, team_id)
        patched = apply_patch(present_group(tx.uow, record), body, GROUP_SHAPE)
        return write_group(tx, record, check_group(patched))


def delete_group(plane: ControlPlane, actor: Actor, team_id: str) -> None:
    with plane.write(actor) as tx:
        record = scim_team(tx.uow, team_id)
        before = teams.present(tx.uow, record)
        tx.uow.teams.delete(ACCOUNT_WIDE, PROJECT_WIDE, record.key)
        teams.audit(tx, "deleteTeam", record.key, before=before, comment=COMMENT)


__all__ = [
    "create_group",
    "delete_group",
    "get_group",
    "list_groups",
    "patch_group",
    "replace_group",
]
