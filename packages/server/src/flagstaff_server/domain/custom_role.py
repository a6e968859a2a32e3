"""Custom roles in LaunchDarkly's shapes (`CustomRolePost`, REST v2 `/api/v2/roles`), pure: the
checked body of a create, the same check after a JSON Patch, and the role as a `RolePolicy` the
evaluator reads.

`basePermissions` is `no_access` (the default of current API versions: the role gives exactly
its policy) or `reader` (the role's policy plus the Reader base role's statements, in the same
policy, so a deny of the role still wins over them).
"""

from __future__ import annotations

from typing import Any, Literal

from flagstaff_server.domain.document import (
    Document,
    field,
    refuse_unknown,
)
from flagstaff_server.domain.policy import parse_statements, statement_json
from flagstaff_server.domain.role_policy import BASE_POLICIES, RolePolicy
from flagstaff_server.domain.validation import check_key, check_name, check_text
from flagstaff_server.errors import InvalidInput, ValidationError

BasePermissions = Literal["no_access", "reader"]
BASE_PERMISSIONS: tuple[BasePermissions, ...] = ("no_access", "reader")
KNOWN = frozenset({"key", "name", "description", "policy", "basePermissions", "resourceCategory"})
"""The fields of `CustomRolePost`."""
MAX_POLICY_STATEMENTS = 100


def check_custom_role(body: Any) -> Document:
    """The stored fields of a role from a `CustomRolePost` (or a patched representation); a
    `ValidationError` names the first wrong field by its JSON pointer (`/policy/0/effect`)."""
    if not isinstance(body, dict):
        raise InvalidInput("the body must be a JSON object", path="/")
    given = {name: value for name, value in body.items() if value is not None}
    refuse_unknown(given, KNOWN, "")
    key = check_key(given, "role", strict=True)
    name = check_name(field(given, "name", ""), "/name")
    if not name.strip():
        raise ValidationError("a role needs a name", path="/name")
    if "policy" not in given:
        raise ValidationError("a role needs a policy (a list of statements)", path="/policy")
    statements = parse_statements(given["policy"], path="/policy")
    if len(statements) > MAX_POLICY_STATEMENTS:
        raise ValidationError(f"at most {MAX_POLICY_STATEMENTS} statements", path="/policy")
    base = given.get("basePermissions", "no_access")
    if base not in BASE_PERMISSIONS:
        raise ValidationError(
            f"basePermissions must be one of {', '.join(BASE_PERMISSIONS)}, got {base!r}",
            path="/basePermissions",
        )
    doc: Document = {
        "key": key,
        "name": name,
        "description": check_text(given.get("description", ""), "/description"),
        "policy": [statement_json(statement) for statement in statements],
        "basePermissions": base,
    }
    if "resourceCategory" in given:
        doc["resourceCategory"] = check_name(given["resourceCategory"], "/resourceCategory")
    return doc


def role_policy(doc: Document) -> RolePolicy:
    """The stored role as the evaluator reads it (its policy was checked when stored)."""
    statements = parse_statements(doc.get("policy", []), path="/policy", actions=None)
    if doc.get("basePermissions") == "reader":
        statements = (*statements, *BASE_POLICIES["reader"])
    return RolePolicy(key=str(doc["key"]), statements=statements)
