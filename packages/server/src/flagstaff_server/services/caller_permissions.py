"""What the caller may do to each resource it names (`GET /api/v2/caller/permissions`): for each
resource specifier, the actions of its type (`domain.policy_catalog`) the caller is allowed and
those it is not, decided by the same rules the routes apply (a member's or token's policies, a
fixed role and its project/environment scope). The web UI hides or disables what is denied; the
API still decides every request (docs/access.md, "What the caller may do").
"""

from __future__ import annotations

from flagstaff_server.domain.policy import Resource, parse_resource
from flagstaff_server.domain.policy_catalog import ACTIONS_BY_PATH
from flagstaff_server.domain.role_policy import decide
from flagstaff_server.errors import ValidationError
from flagstaff_server.services.access import Actor, caller_of
from flagstaff_server.services.ports import JsonObject, Role

MAX_RESOURCES = 50
VIEW_ACTIONS = frozenset({"viewProject", "viewTeam", "viewSsoSettings"})
"""Actions that only read: a reader token holds them (within its scope)."""


def checked_resource(text: str, index: int) -> Resource:
    at = f"/resource/{index}"
    if not text or len(text) > 1024:
        raise ValidationError("a resource is a specifier such as proj/p:env/e:flag/k", path=at)
    resource = parse_resource(text)
    kinds = tuple(part.type for part in resource.parts)
    if kinds not in ACTIONS_BY_PATH:
        known = ", ".join(":".join(path) for path in sorted(ACTIONS_BY_PATH))
        raise ValidationError(f"no actions are known for {text!r}; types: {known}", path=at)
    return resource


def scope_of(resource: Resource) -> tuple[str | None, str | None]:
    """The project and environment a fixed role's scope is checked against (None: account-wide
    or every environment)."""
    names = {part.type: part.name for part in resource.parts}
    project = names.get("proj")
    environment = names.get("env")
    return project, None if environment in (None, "*") else environment


def is_allowed(actor: Actor, action: str, resource: Resource) -> bool:
    project, environment = scope_of(resource)
    role: Role = "reader" if action in VIEW_ACTIONS else "writer"
    if resource.parts[0].type not in ("proj",) and action not in VIEW_ACTIONS:
        role = "admin"  # account-wide changes (roles, teams, members, webhooks, tokens)
    if not actor.may(role, project=project, environment=environment):
        return False
    if actor.grants is None:
        return True
    return decide(caller_of(actor), [(action, resource)]).allowed


def caller_permissions(actor: Actor, resources: list[str]) -> JsonObject:
    if not 1 <= len(resources) <= MAX_RESOURCES:
        raise ValidationError(f"name 1 to {MAX_RESOURCES} resources", path="/resource")
    items = []
    for index, text in enumerate(resources):
        resource = checked_resource(text, index)
        kinds = tuple(part.type for part in resource.parts)
        allowed = sorted(a for a in ACTIONS_BY_PATH[kinds] if is_allowed(actor, a, resource))
        denied = sorted(ACTIONS_BY_PATH[kinds] - set(allowed))
        items.append({"resource": text, "allowed": allowed, "denied": denied})
    return {"items": items}


__all__ = ["caller_permissions"]
