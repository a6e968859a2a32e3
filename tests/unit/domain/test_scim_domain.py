"""SCIM filters and PATCH, pure (RFC 7644 §3.4.2.2, §3.5.2): what a filter matches, and what each
PATCH operation leaves of a resource; a bad filter or path is a SCIM error naming its type."""

from __future__ import annotations

from typing import Any

import pytest
from flagstaff_server.domain.scim_error import ScimInvalid
from flagstaff_server.domain.scim_filter import matches, parse_filter
from flagstaff_server.domain.scim_patch import PATCH_OP, apply_patch
from flagstaff_server.domain.scim_schema import GROUP_SHAPE, USER_SHAPE, USER_URN

ADA: dict[str, Any] = {
    "id": "a1",
    "userName": "Ada",
    "externalId": "okta-1",
    "name": {"givenName": "Ada", "familyName": "Lovelace"},
    "emails": [
        {"value": "ada@work.example", "type": "work", "primary": True},
        {"value": "ada@home.example", "type": "home"},
    ],
    "active": True,
    "meta": {"created": "2026-01-02T00:00:00Z"},
}


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('userName eq "ada"', True),
        ('userName eq "bob"', False),
        ('externalId eq "okta-1"', True),
        ('externalId eq "OKTA-1"', False),
        (f'{USER_URN}:userName eq "ADA"', True),
        ('name.familyName sw "Love" and active eq true', True),
        ('name.familyName sw "Love" and active eq false', False),
        ('userName eq "bob" or emails.value co "home"', True),
        ('emails[type eq "work" and value ew "work.example"]', True),
        ('emails[type eq "other"]', False),
        ('not (userName eq "ada")', False),
        ("title pr", False),
        ("externalId pr", True),
        ('meta.created gt "2026-01-01T00:00:00Z"', True),
        ('userName ne "ada"', False),
        ('(userName eq "x" or userName eq "ada") and active eq true', True),
    ],
)
def test_a_filter_matches_as_rfc_7644_says(text: str, expected: bool) -> None:
    assert matches(parse_filter(text, (USER_URN,)), ADA) is expected


@pytest.mark.parametrize(
    "text", ["userName", "userName eq", 'userName zz "a"', '(userName eq "a"', 'a eq "b" c', '"x"']
)
def test_a_malformed_filter_is_an_invalid_filter_error(text: str) -> None:
    with pytest.raises(ScimInvalid) as caught:
        parse_filter(text)
    assert caught.value.scim_type == "invalidFilter"


def patched(resource: dict[str, Any], *operations: dict[str, Any], shape: Any = USER_SHAPE) -> Any:
    return apply_patch(resource, {"schemas": [PATCH_OP], "Operations": list(operations)}, shape)


def test_patch_replaces_adds_and_removes_along_paths() -> None:
    after = patched(
        ADA,
        {"op": "Replace", "path": "name.givenName", "value": "Augusta"},
        {"op": "replace", "value": {"active": False, "displayName": "A. L."}},
        {"op": "add", "path": "emails", "value": [{"value": "ada@other.example"}]},
        {"op": "remove", "path": 'emails[type eq "home"]'},
        {"op": "replace", "path": 'emails[type eq "work"].value', "value": "al@work.example"},
        {"op": "remove", "path": "externalId"},
    )
    assert after["name"] == {"givenName": "Augusta", "familyName": "Lovelace"}
    assert (after["active"], after["displayName"], "externalId" in after) == (False, "A. L.", False)
    assert [e["value"] for e in after["emails"]] == ["al@work.example", "ada@other.example"]
    assert ADA["name"]["givenName"] == "Ada"  # the input is left alone


def test_patch_adds_and_removes_group_members() -> None:
    group = {"displayName": "Ops", "members": [{"value": "a"}, {"value": "b"}]}
    added = patched(
        group,
        {"op": "add", "path": "members", "value": [{"value": "c"}, {"value": "a"}]},
        shape=GROUP_SHAPE,
    )
    assert [m["value"] for m in added["members"]] == ["a", "b", "c"]
    removed = patched(
        added,
        {"op": "remove", "path": 'members[value eq "a"]'},
        {"op": "remove", "path": "members", "value": [{"value": "c"}]},
        shape=GROUP_SHAPE,
    )
    assert removed["members"] == [{"value": "b"}]
    emptied = patched(removed, {"op": "replace", "path": "members", "value": []}, shape=GROUP_SHAPE)
    assert emptied["members"] == []


@pytest.mark.parametrize(
    ("operation", "scim_type"),
    [
        ({"op": "remove"}, "noTarget"),
        ({"op": "replace", "path": "id", "value": "x"}, "mutability"),
        ({"op": "replace", "path": "groups", "value": []}, "mutability"),
        ({"op": "replace", "path": "nickName", "value": "x"}, "invalidPath"),
        ({"op": "replace", "path": 'emails[type eq "fax"].value', "value": "x"}, "noTarget"),
        ({"op": "move", "path": "userName", "value": "x"}, "invalidSyntax"),
        ({"op": "add", "path": "userName"}, "invalidValue"),
    ],
)
def test_a_bad_patch_operation_names_its_scim_type(
    operation: dict[str, Any], scim_type: str
) -> None:
    with pytest.raises(ScimInvalid) as caught:
        patched(ADA, operation)
    assert caught.value.scim_type == scim_type
    assert str(caught.value.path).startswith("/Operations/0")
