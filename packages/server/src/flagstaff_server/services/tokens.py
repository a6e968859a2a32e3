"""Access-token use cases: create (the secret is shown once), list, read and revoke.

Only hashes are stored. Representations follow LaunchDarkly's `Token` shape, plus Flagstaff's
`projectKey`/`environmentKey` scope; the secret's last four characters are kept as a hint.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from flagstaff_server.domain.document import NAME_MAX_LENGTH, is_valid_key
from flagstaff_server.domain.policy import parse_statements, statement_json
from flagstaff_server.errors import NotFound, ValidationError
from flagstaff_server.services import custom_roles
from flagstaff_server.services.access import (
    ROLE_RANK,
    Actor,
    authorize,
    hash_secret,
    new_secret,
)
from flagstaff_server.services.field import check_string
from flagstaff_server.services.plane import ControlPlane, epoch_millis, new_id
from flagstaff_server.services.ports import JsonObject, Role, TokenRecord, UnitOfWork


@dataclass(frozen=True, slots=True, kw_only=True)
class TokenRequest:
    name: str
    role: str | None
    project: str | None = None
    environment: str | None = None
    description: str | None = None
    bypass_approvals: bool = False
    """Flagstaff's addition: the token may change environments that require approval directly
    (docs/workflows.md, "Who may bypass"); admin tokens may anyway."""
    inline_role: list[Any] | None = None
    """LaunchDarkly's `inlineRole`: a policy the token carries (docs/access.md)."""
    custom_role_ids: list[Any] | None = None
    """LaunchDarkly's `customRoleIds`: stored roles the token carries (by `_id`, or by key)."""


def resource_of(token_id: str) -> str:
    return f"token/{token_id}"


def represent(record: TokenRecord, *, secret: str | None = None) -> JsonObject:
    """The token as the API shows it; `secret` only in the answer to its creation."""
    hint = record.doc.get("ending", "")
    created = epoch_millis(record.created)
    body: JsonObject = {
        "_id": record.id,
        "ownerId": record.doc.get("ownerId", ""),
        "memberId": record.doc.get("ownerId", ""),
        "name": record.name,
        "description": record.doc.get("description", ""),
        "creationDate": created,
        "lastModified": epoch_millis(record.revoked) if record.revoked else created,
        "role": record.role,
        "token": secret if secret is not None else f"****{hint}",
        "serviceToken": True,
        "projectKey": record.project,
        "environmentKey": record.environment,
        "bypassApprovals": record.doc.get("bypassApprovals") is True,
        **({"inlineRole": record.doc["inlineRole"]} if "inlineRole" in record.doc else {}),
        **(
            {"customRoleIds": record.doc["customRoleIds"]}
            if record.doc.get("customRoleIds")
            else {}
        ),
        "_links": {"self": {"href": f"/api/v2/tokens/{record.id}", "type": "application/json"}},
    }
    return body


def check_request(uow: UnitOfWork, request: TokenRequest, *, ceiling: Role) -> Role:
    """The token's role, once the request is checked; `ceiling` is the role of a token with an
    inline policy and no role given (its creator's)."""
    name = request.name.strip()
    if not name or len(name) > NAME_MAX_LENGTH:
        raise ValidationError(
            f"name must be 1 to {NAME_MAX_LENGTH} characters, not blank", path="/name"
        )
    if request.description is not None:
        check_string(request.description, "/description")
    role = request.role
    if role is None and (request.inline_role is not None or request.custom_role_ids):
        role = ceiling
    if role not in ROLE_RANK:
        raise ValidationError(
            f"role must be one of {', '.join(ROLE_RANK)}, got {role!r}", path="/role"
        )
    if request.bypass_approvals and role == "reader":
        raise ValidationError(
            "a reader token changes nothing, so it has no approvals to bypass",
            path="/bypassApprovals",
        )
    if request.environment is not None and request.project is None:
        raise ValidationError("environmentKey needs a projectKey", path="/environmentKey")
    if request.project is not None:
        if not is_valid_key(request.project) or uow.projects.get(request.project) is None:
            raise ValidationError(f"no project {request.project!r}", path="/projectKey")
        if request.environment is not None and (
            uow.environments.get(request.project, request.environment) is None
        ):
            raise ValidationError(
                f"no environment {request.environment!r} in project {request.project!r}",
                path="/environmentKey",
            )
    return role  # type: ignore[return-value]


def checked_role_ids(uow: UnitOfWork, values: list[Any] | None) -> list[str]:
    """The `_id`s of the named custom roles (each given by `_id` or key); 400 at the first
    unknown one."""
    if values is None:
        return []
    if not isinstance(values, list):
        raise ValidationError("customRoleIds must be an array of role ids", path="/customRoleIds")
    ids: list[str] = []
    for index, value in enumerate(values):
        found = custom_roles.find(uow, value) if isinstance(value, str) and value else None
        if found is None:
            raise ValidationError(f"no custom role {value!r}", path=f"/customRoleIds/{index}")
        if found.id not in ids:
            ids.append(found.id)
    return ids


def create_token(plane: ControlPlane, actor: Actor, request: TokenRequest) -> JsonObject:
    """Create a token and return its representation with the secret, which is never shown again."""
    authorize(actor, "admin")
    secret = new_secret()
    with plane.write(actor) as tx:
        role = check_request(tx.uow, request, ceiling=actor.role)
        role_ids = checked_role_ids(tx.uow, request.custom_role_ids)
        inline = (
            None
            if request.inline_role is None
            else [
                statement_json(statement)
                for statement in parse_statements(request.inline_role, path="/inlineRole")
            ]
        )
        record = TokenRecord(
            id=new_id(),
            name=request.name.strip(),
            role=role,
            secret_hash=hash_secret(secret),
            project=request.project,
            environment=request.environment,
            created=tx.now,
            doc={
                "ending": secret[-4:],
                "ownerId": actor.token_id,
                "description": request.description or "",
                "bypassApprovals": request.bypass_approvals,
                **({"inlineRole": inline} if inline is not None else {}),
                **({"customRoleIds": role_ids} if role_ids else {}),
            },
        )
        tx.uow.tokens.add(record)
        after = represent(record)
        tx.audit(
            kind="token", resource=resource_of(record.id), action="createAccessToken", after=after
        )
    return represent(record, secret=secret)


def list_tokens(plane: ControlPlane, actor: Actor) -> list[JsonObject]:
    authorize(actor, "admin")
    with plane.read() as uow:
        return [represent(record) for record in uow.tokens.list() if record.revoked is None]


def get_live(uow: UnitOfWork, token_id: str) -> TokenRecord:
    record = uow.tokens.get(token_id)
    if record is None or record.revoked is not None:
        raise NotFound(f"no access token {token_id!r}")
    return record


def get_token(plane: ControlPlane, actor: Actor, token_id: str) -> JsonObject:
    authorize(actor, "admin")
    with plane.read() as uow:
        return represent(get_live(uow, token_id))


def revoke_token(plane: ControlPlane, actor: Actor, token_id: str) -> None:
    """Revoke the token: it stops working at once and disappears from listings."""
    authorize(actor, "admin")
    with plane.write(actor) as tx:
        record = get_live(tx.uow, token_id)
        tx.uow.tokens.replace(replace(record, revoked=tx.now))
        tx.audit(
            kind="token",
            resource=resource_of(token_id),
            action="deleteAccessToken",
            before=represent(record),
        )


def create_initial_admin_token(plane: ControlPlane, actor: Actor, name: str) -> str | None:
    """On a store without any token, create an unscoped admin token and return its secret; None
    when tokens exist already (the first start has passed)."""
    with plane.read() as uow:
        if uow.tokens.list():
            return None
    created = create_token(plane, actor, TokenRequest(name=name, role="admin"))
    secret: str = created["token"]
    return secret
