"""The pure parts of members, teams and custom roles (`domain.custom_role`, `domain.member`,
`domain.team`): a role's `basePermissions` of `reader` adds Reader's statements to its own
policy (never removing access, while the role's own denies still win); a member's patch edits
`/customRoles` by index like JSON Patch; team instructions add, remove and replace without
duplicates."""

from __future__ import annotations

from typing import Any

import pytest
from flagstaff_server.domain.custom_role import check_custom_role, role_policy
from flagstaff_server.domain.instruction import Instruction
from flagstaff_server.domain.member import check_member_patch, matches_filter, parse_member_filter
from flagstaff_server.domain.policy import allows, parse_resource
from flagstaff_server.domain.team import apply_team_instruction, check_team
from flagstaff_server.errors import ValidationError
from hypothesis import given
from hypothesis import strategies as st

ACTIONS = ["viewProject", "updateOn", "createFlag", "deleteFlag"]
RESOURCES = ["proj/shop", "proj/shop:env/production:flag/f", "proj/web:env/test:flag/g"]
statement = st.fixed_dictionaries(
    {
        "effect": st.sampled_from(["allow", "deny"]),
        "actions": st.lists(st.sampled_from([*ACTIONS, "*"]), min_size=1, max_size=2),
        "resources": st.lists(
            st.sampled_from(["proj/*", "proj/shop", "proj/*:env/*:flag/*"]), min_size=1
        ),
    }
)


def role(policy: list[dict[str, Any]], base: str) -> Any:
    doc = check_custom_role({"key": "r", "name": "R", "policy": policy, "basePermissions": base})
    return role_policy(doc)


@given(st.lists(statement, max_size=4), st.sampled_from(ACTIONS), st.sampled_from(RESOURCES))
def test_reader_base_permissions_never_remove_access(
    policy: list[dict[str, Any]], action: str, resource: str
) -> None:
    target = parse_resource(resource)
    if allows(role(policy, "no_access").statements, action, target, {}):
        assert allows(role(policy, "reader").statements, action, target, {})


def test_reader_base_permissions_view_projects_unless_the_role_denies() -> None:
    shop = parse_resource("proj/shop")
    assert allows(role([], "reader").statements, "viewProject", shop, {})
    assert not allows(role([], "no_access").statements, "viewProject", shop, {})
    deny = [{"effect": "deny", "actions": ["viewProject"], "resources": ["proj/shop"]}]
    assert not allows(role(deny, "reader").statements, "viewProject", shop, {})


def test_a_member_patch_edits_custom_roles_by_position() -> None:
    ops = [
        {"op": "add", "path": "/customRoles/-", "value": "c"},
        {"op": "replace", "path": "/customRoles/0", "value": "z"},
        {"op": "remove", "path": "/customRoles/1"},
        {"op": "replace", "path": "/role", "value": "writer"},
    ]
    change = check_member_patch(ops, ("a", "b"))
    assert (change.custom_roles, change.role, change.deactivated) == (("z", "c"), "writer", None)
    with pytest.raises(ValidationError) as raised:
        check_member_patch([{"op": "remove", "path": "/customRoles/5"}], ("a",))
    assert raised.value.path == "/0/path"


def test_the_member_filter_reads_roles_as_a_list_and_owner_as_admin() -> None:
    owner = {"role": "owner", "email": "o@x", "firstName": "", "lastName": "", "teams": []}
    assert matches_filter(owner, parse_member_filter("role:reader|admin"))
    assert not matches_filter(owner, parse_member_filter("role:writer"))
    assert matches_filter(owner, parse_member_filter("noteam:true"))


def test_team_instructions_add_remove_and_replace_without_duplicates() -> None:
    doc = check_team({"key": "ops", "name": "Ops", "memberIDs": ["a", "a", "b"]})
    assert doc["memberIDs"] == ["a", "b"]

    def run(params: dict[str, Any]) -> dict[str, Any]:
        return apply_team_instruction(doc, Instruction(index=0, params=params))

    assert run({"kind": "addMembers", "values": ["b", "c"]})["memberIDs"] == ["a", "b", "c"]
    assert run({"kind": "removeMembers", "values": ["a"]})["memberIDs"] == ["b"]
    assert run({"kind": "replaceMembers", "values": ["z"]})["memberIDs"] == ["z"]
    assert run({"kind": "addCustomRoles", "values": ["r"]})["customRoleKeys"] == ["r"]
    assert doc["memberIDs"] == ["a", "b"]
