"""What a member may do, read from the store at request time: the member's base role, the
custom roles assigned to them (replacing the base role) and the roles of their teams (added), as
one `Grant` (`domain.role_policy`). Sessions and member tokens call this on every request, so a
role change, a team change or a deactivation applies at once."""

from __future__ import annotations

from flagstaff_server.domain.custom_role import role_policy
from flagstaff_server.domain.role_policy import BASE_ROLES, BaseRole, Grant, RolePolicy
from flagstaff_server.services.experiment_ports import ACCOUNT_WIDE, PROJECT_WIDE, KeyedRecord
from flagstaff_server.services.ports import AccountRecord, UnitOfWork

ACCOUNT_SUBJECT_PREFIX = "account:"
"""How sessions, token owners and audit entries name a member: `account:<id>`."""


def base_role_of(record: AccountRecord) -> BaseRole:
    """The member's base role: stored in the document, else the account's fixed role (an
    account made before members existed)."""
    stored = record.doc.get("baseRole", record.role)
    for role in BASE_ROLES:
        if role == stored:
            return role
    return "no_access"


def is_active(record: AccountRecord) -> bool:
    return record.doc.get("deactivated") is not True


def teams_of(uow: UnitOfWork, member_id: str) -> list[KeyedRecord]:
    return [
        team
        for team in uow.teams.list(ACCOUNT_WIDE, PROJECT_WIDE)
        if member_id in team.doc.get("memberIDs", [])
    ]


def roles_by_key(uow: UnitOfWork, keys: list[str]) -> tuple[RolePolicy, ...]:
    found = []
    for key in keys:
        record = uow.custom_roles.get(ACCOUNT_WIDE, PROJECT_WIDE, key)
        if record is not None:
            found.append(role_policy(record.doc))
    return tuple(found)


def member_grant(uow: UnitOfWork, record: AccountRecord) -> Grant:
    """The member's grant now; a deactivated member holds nothing."""
    if not is_active(record):
        return Grant(base_role="no_access")
    team_keys = [key for team in teams_of(uow, record.id) for key in team.doc["customRoleKeys"]]
    return Grant(
        base_role=base_role_of(record),
        custom_roles=roles_by_key(uow, list(record.doc.get("customRoles", []))),
        team_roles=roles_by_key(uow, team_keys),
    )


def member_of_subject(uow: UnitOfWork, subject: str) -> AccountRecord | None:
    """The member a session subject or a token's owner names (`account:<id>`), else None."""
    if not subject.startswith(ACCOUNT_SUBJECT_PREFIX):
        return None
    return uow.accounts.get(subject.removeprefix(ACCOUNT_SUBJECT_PREFIX))
