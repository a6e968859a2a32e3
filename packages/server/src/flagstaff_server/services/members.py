"""Member use cases (LaunchDarkly's `/api/v2/members`): list with filters, read, invite (each
invitee gets a one-time invitation secret, answered once), change base role, custom roles or
deactivation by JSON Patch, delete; a member changes their own name and password and lists
their own tokens. A member is a local account (`services.accounts`); every change is an audit
entry of kind `member` naming who made it. Deactivating or deleting a member ends their sessions and
revokes their personal tokens in the same transaction."""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta

from flagstaff_server.domain.json_patch import parse_patch_body
from flagstaff_server.domain.member import (
    FIXED_ROLE,
    check_member_patch,
    check_new_members,
    check_profile_patch,
    matches_filter,
    parse_member_filter,
)
from flagstaff_server.errors import Conflict, Forbidden, NotFound, Unauthorized, ValidationError
from flagstaff_server.services import tokens
from flagstaff_server.services.access import Actor, authorize, hash_secret, new_secret
from flagstaff_server.services.accounts import normalized_email, subject_of
from flagstaff_server.services.experiment_ports import ACCOUNT_WIDE, PROJECT_WIDE
from flagstaff_server.services.member_access import base_role_of, is_active, teams_of
from flagstaff_server.services.paging import Page
from flagstaff_server.services.password import check_strength, hash_password, verify_password
from flagstaff_server.services.plane import ControlPlane, Transaction, epoch_millis, new_id
from flagstaff_server.services.ports import AccountRecord, JsonObject, UnitOfWork

AUDIT_KIND = "member"
COLLECTION = "/api/v2/members"
INVITATION_LIFETIME = timedelta(days=7)
ME = "me"


def resource_of(member_id: str) -> str:
    return f"member/{member_id}"


def present(uow: UnitOfWork, record: AccountRecord) -> JsonObject:
    """LaunchDarkly's `Member`, plus Flagstaff's `deactivated`."""
    doc = record.doc
    return {
        "_id": record.id,
        "email": record.email,
        "firstName": doc.get("firstName", doc.get("name", "")),
        "lastName": doc.get("lastName", ""),
        "role": base_role_of(record),
        "customRoles": list(doc.get("customRoles", [])),
        "teams": [
            {"key": t.key, "name": t.doc["name"], "customRoleKeys": t.doc["customRoleKeys"]}
            for t in teams_of(uow, record.id)
        ],
        "mfa": "disabled",
        "_pendingInvite": "inviteHash" in doc,
        "_verified": "inviteHash" not in doc,
        "_lastSeen": doc.get("lastSeen", 0),
        "creationDate": epoch_millis(record.created),
        "deactivated": not is_active(record),
        "_links": {"self": {"href": f"{COLLECTION}/{record.id}", "type": "application/json"}},
    }


def audit(
    tx: Transaction,
    action: str,
    member_id: str,
    *,
    before: JsonObject | None = None,
    after: JsonObject | None = None,
    comment: str | None = None,
) -> None:
    tx.audit(
        kind=AUDIT_KIND,
        resource=resource_of(member_id),
        action=action,
        comment=comment,
        before=before,
        after=after,
    )


def require_member_admin(actor: Actor) -> None:
    authorize(actor, "admin")
    if actor.is_scoped:
        raise Forbidden("managing members needs an unscoped admin")


def member_id_of(actor: Actor, member_id: str) -> str:
    """`me` is the calling member."""
    if member_id != ME:
        return member_id
    if actor.member_id is None:
        raise NotFound("the caller is not a member (an access token not made by a member)")
    return actor.member_id


def existing(uow: UnitOfWork, member_id: str) -> AccountRecord:
    record = uow.accounts.get(member_id)
    if record is None:
        raise NotFound(f"no member {member_id!r}")
    return record


def list_members(
    plane: ControlPlane, actor: Actor, filter_text: str | None, page: Page
) -> JsonObject:
    authorize(actor, "reader")
    wanted = parse_member_filter(filter_text)
    page.check()
    with plane.read() as uow:
        shown = [present(uow, record) for record in uow.accounts.list()]
    chosen = [member for member in shown if matches_filter(member, wanted)]
    return {
        "items": page.of(chosen),
        "totalCount": len(chosen),
        "_links": {"self": {"href": COLLECTION, "type": "application/json"}},
    }


def get_member(plane: ControlPlane, actor: Actor, member_id: str) -> JsonObject:
    authorize(actor, "reader")
    with plane.read() as uow:
        return present(uow, existing(uow, member_id_of(actor, member_id)))


def check_roles_exist(uow: UnitOfWork, keys: tuple[str, ...], path: str) -> None:
    for index, key in enumerate(keys):
        if uow.custom_roles.get(ACCOUNT_WIDE, PROJECT_WIDE, key) is None:
            raise ValidationError(f"no custom role {key!r}", path=f"{path}/{index}")


def invite_members(plane: ControlPlane, actor: Actor, body: object) -> JsonObject:
    """Invite members (all or nothing): each answer carries `_invitation`, the one-time secret
    the invitee sets their password with (`accept_invitation`); it is never shown again."""
    require_member_admin(actor)
    forms = check_new_members(body)
    emails = [normalized_email_at(form.email, f"/{i}/email") for i, form in enumerate(forms)]
    for index, email in enumerate(emails):
        if email in emails[:index]:
            raise ValidationError(f"{email!r} appears twice", path=f"/{index}/email")
    items: list[JsonObject] = []
    with plane.write(actor) as tx:
        for index, (form, email) in enumerate(zip(forms, emails, strict=True)):
            if tx.uow.accounts.find_by_email(email) is not None:
                raise ValidationError(f"{email!r} is already a member", path=f"/{index}/email")
            check_roles_exist(tx.uow, form.custom_roles, f"/{index}/customRoles")
            secret = new_secret()
            record = AccountRecord(
                id=new_id(),
                email=email,
                role=FIXED_ROLE[form.role],  # type: ignore[arg-type]
                password_hash="",
                created=tx.now,
                doc={
                    "firstName": form.first_name,
                    "lastName": form.last_name,
                    "baseRole": form.role,
                    "customRoles": list(form.custom_roles),
                    "createdBy": actor.token_id,
                    "inviteHash": hash_secret(secret),
                    "inviteExpires": epoch_millis(tx.now + INVITATION_LIFETIME),
                },
            )
            tx.uow.accounts.add(record)
            for key_index, key in enumerate(form.team_keys):
                add_to_team(tx, key, record.id, f"/{index}/teamKeys/{key_index}")
            shown = present(tx.uow, record)
            audit(tx, "createMember", record.id, after=shown)
            items.append({**shown, "_invitation": secret})
    return {"items": items, "totalCount": len(items)}


def normalized_email_at(email: str, path: str) -> str:
    try:
        return normalized_email(email)
    except ValidationError as exc:
        raise ValidationError(str(exc), path=path) from exc


def add_to_team(tx: Transaction, key: str, member_id: str, path: str) -> None:
    team = tx.uow.teams.get(ACCOUNT_WIDE, PROJECT_WIDE, key)
    if team is None:
        raise ValidationError(f"no team {key!r}", path=path)
    if member_id in team.doc["memberIDs"]:
        return
    doc = {**team.doc, "memberIDs": [*team.doc["memberIDs"], member_id]}
    tx.uow.teams.replace(replace(team, version=team.version + 1, doc=doc), team.version)


def accept_invitation(plane: ControlPlane, invitation: str, password: str) -> JsonObject:
    """Set the invited member's password with the one-time secret; it then stops working."""
    check_strength(password)
    password_hash = hash_password(password)
    with plane.read() as uow:
        record = next(
            (a for a in uow.accounts.list() if a.doc.get("inviteHash") == hash_secret(invitation)),
            None,
        )
    if record is None or record.doc.get("inviteExpires", 0) <= epoch_millis(plane.clock()):
        raise Unauthorized("unknown, used or expired invitation")
    member = Actor(token_id=subject_of(record.id), name=record.email, role=record.role)
    with plane.write(member) as tx:
        current = existing(tx.uow, record.id)
        if current.doc.get("inviteHash") != hash_secret(invitation):
            raise Unauthorized("unknown, used or expired invitation")
        doc = {k: v for k, v in current.doc.items() if k not in ("inviteHash", "inviteExpires")}
        joined = replace(current, password_hash=password_hash, doc=doc)
        tx.uow.accounts.replace(joined)
        audit(tx, "acceptInvitation", record.id, after=present(tx.uow, joined))
        return present(tx.uow, joined)


def patch_member(plane: ControlPlane, actor: Actor, member_id: str, body: object) -> JsonObject:
    """LaunchDarkly's member patch (`/role`, `/customRoles`) and Flagstaff's `/deactivated`.
    The owner keeps their role; nobody deactivates themselves."""
    require_member_admin(actor)
    request = parse_patch_body(body)
    if request.kind != "json":
        raise ValidationError("a member is edited with a JSON Patch", path="/")
    target = member_id_of(actor, member_id)
    with plane.write(actor) as tx:
        record = existing(tx.uow, target)
        change = check_member_patch(request.operations, tuple(record.doc.get("customRoles", [])))
        if base_role_of(record) == "owner" and (change.role or change.deactivated):
            raise Conflict("the account owner's role stays owner, and the owner stays active")
        if change.deactivated and actor.member_id == record.id:
            raise Forbidden("a member cannot deactivate themselves; ask another admin")
        doc = dict(record.doc)
        role = record.role
        if change.role is not None:
            doc["baseRole"] = change.role
            role = FIXED_ROLE[change.role]  # type: ignore[assignment]
        if change.custom_roles is not None:
            check_roles_exist(tx.uow, change.custom_roles, "/customRoles")
            doc["customRoles"] = list(change.custom_roles)
        if change.deactivated is not None:
            doc["deactivated"] = change.deactivated
        updated = replace(record, role=role, doc=doc)
        if change.deactivated and updated != record:
            end_access(tx, record.id)
        return store_change(tx, record, updated, request.comment)


def store_change(
    tx: Transaction, record: AccountRecord, updated: AccountRecord, comment: str | None
) -> JsonObject:
    """Write a changed member with its audit entry (before and after); an unchanged one is
    answered as it is, with no entry."""
    if updated == record:
        return present(tx.uow, record)
    before = present(tx.uow, record)
    tx.uow.accounts.replace(updated)
    audit(
        tx,
        "updateMember",
        record.id,
        before=before,
        after=present(tx.uow, updated),
        comment=comment,
    )
    return present(tx.uow, updated)


def update_own_profile(plane: ControlPlane, actor: Actor, body: object) -> JsonObject:
    """The calling member's own first and last name, by JSON Patch (`/firstName`, `/lastName`):
    any member may change their own, whatever their role."""
    if actor.member_id is None:
        raise NotFound("the caller is not a member (an access token not made by a member)")
    request = parse_patch_body(body)
    if request.kind != "json":
        raise ValidationError("a profile is edited with a JSON Patch", path="/")
    names = check_profile_patch(request.operations)
    with plane.write(actor) as tx:
        record = existing(tx.uow, actor.member_id)
        updated = replace(record, doc={**record.doc, **names})
        return store_change(tx, record, updated, request.comment)


def end_access(tx: Transaction, member_id: str) -> None:
    """End the member's sessions and revoke their personal tokens (each revocation audited)."""
    tx.uow.sessions.delete_subject(subject_of(member_id))
    for token in tx.uow.tokens.list():
        if token.revoked is None and token.doc.get("ownerId") == subject_of(member_id):
            tx.uow.tokens.replace(replace(token, revoked=tx.now))
            tx.audit(
                kind="token",
                resource=tokens.resource_of(token.id),
                action="deleteAccessToken",
                comment=f"member {member_id} deactivated or deleted",
                before=tokens.represent(token),
            )


def delete_member(plane: ControlPlane, actor: Actor, member_id: str) -> None:
    require_member_admin(actor)
    target = member_id_of(actor, member_id)
    if actor.member_id == target:
        raise Forbidden("a member cannot delete themselves; ask another admin")
    with plane.write(actor) as tx:
        record = existing(tx.uow, target)
        if base_role_of(record) == "owner":
            raise Conflict("the account owner cannot be deleted")
        before = present(tx.uow, record)
        for team in teams_of(tx.uow, record.id):
            ids = [m for m in team.doc["memberIDs"] if m != record.id]
            doc = {**team.doc, "memberIDs": ids}
            tx.uow.teams.replace(replace(team, version=team.version + 1, doc=doc), team.version)
        end_access(tx, record.id)
        tx.uow.accounts.delete(record.id)
        audit(tx, "deleteMember", record.id, before=before)


def change_own_password(
    plane: ControlPlane, actor: Actor, current_password: str, new_password: str
) -> None:
    """The signed-in member's own password: the current one is asked again, and every session of
    the member ends (sign in again with the new one)."""
    if actor.member_id is None or actor.token_id != subject_of(actor.member_id):
        raise Forbidden("only a member signed in with their password changes it")
    check_strength(new_password)
    new_hash = hash_password(new_password)
    with plane.read() as uow:
        record = existing(uow, actor.member_id)
    if not verify_password(current_password, record.password_hash):
        raise ValidationError("the current password is wrong", path="/currentPassword")
    with plane.write(actor) as tx:
        current = existing(tx.uow, record.id)
        tx.uow.accounts.replace(replace(current, password_hash=new_hash))
        tx.uow.sessions.delete_subject(subject_of(record.id))
        audit(tx, "updateMember", record.id, comment="changed their own password")


def own_tokens(plane: ControlPlane, actor: Actor) -> JsonObject:
    """The live tokens the calling member made."""
    if actor.member_id is None:
        raise NotFound("the caller is not a member (an access token not made by a member)")
    owner = subject_of(actor.member_id)
    with plane.read() as uow:
        items = [
            tokens.represent(t)
            for t in uow.tokens.list()
            if t.revoked is None and t.doc.get("ownerId") == owner
        ]
    return {"items": items, "totalCount": len(items)}
