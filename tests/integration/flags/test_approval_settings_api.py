"""An environment's `approvalSettings`, `resourceApprovalSettings` and `requireComments` take
effect (docs/workflows.md, "Approval settings"): a direct change to what an environment requiring
approval serves is a 405, unless the caller may bypass approvals (admin role, or a token made with
`bypassApprovals`, each bypass audited); a change without a comment where comments are required
is a 400 at `/comment`. Over every store (memory, SQLite, PostgreSQL)."""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from flag_api import PROJECT, create_flag, patch
from flagstaff_server.services.plane import ControlPlane

FLAGS = f"/api/v2/flags/{PROJECT}"
ENVIRONMENTS = f"/api/v2/projects/{PROJECT}/environments"
SEGMENTS = f"/api/v2/segments/{PROJECT}"
TURN_ON_PRODUCTION = {
    "comment": "go",
    "environmentKey": "production",
    "instructions": [{"kind": "turnFlagOn"}],
}


async def token(api: httpx.AsyncClient, role: str, **body: Any) -> dict[str, str]:
    created = await api.post("/api/v2/tokens", json={"name": role, "role": role, **body})
    assert created.status_code == 201, created.text
    return {"Authorization": created.json()["token"]}


async def configure(api: httpx.AsyncClient, environment: str, **fields: Any) -> dict[str, Any]:
    response = await patch(
        api,
        f"{ENVIRONMENTS}/{environment}",
        [{"op": "replace", "path": f"/{name}", "value": value} for name, value in fields.items()],
    )
    assert response.status_code == 200, response.text
    result: dict[str, Any] = response.json()
    return result


async def require_approval(api: httpx.AsyncClient, **settings: Any) -> None:
    await configure(api, "production", approvalSettings={"required": True, **settings})


def assert_problem(response: httpx.Response, status: int, path: str | None = None) -> None:
    assert response.status_code == status, response.text
    assert response.headers["content-type"].startswith("application/problem+json")
    if path is not None:
        assert response.json()["path"] == path, response.json()


async def test_settings_have_launchdarkly_defaults_and_are_edited_by_patch(
    api: httpx.AsyncClient,
) -> None:
    environment = (await api.get(f"{ENVIRONMENTS}/production")).json()
    assert environment["approvalSettings"] == {
        "required": False,
        "bypassApprovalsForPendingChanges": False,
        "minNumApprovals": 1,
        "canReviewOwnRequest": False,
        "canApplyDeclinedChanges": True,
        "autoApplyApprovedChanges": False,
        "serviceKind": "launchdarkly",
        "serviceConfig": {},
        "requiredApprovalTags": [],
        "serviceKindConfigurationId": None,
    }
    assert environment["resourceApprovalSettings"]["segment"]["required"] is False

    edited = await configure(
        api, "production", approvalSettings={"required": True, "minNumApprovals": 2}
    )
    assert edited["approvalSettings"]["required"] is True
    assert edited["approvalSettings"]["minNumApprovals"] == 2
    assert edited["approvalSettings"]["canApplyDeclinedChanges"] is True  # default kept
    one_field = await patch(
        api,
        f"{ENVIRONMENTS}/production",
        [{"op": "replace", "path": "/approvalSettings/canReviewOwnRequest", "value": True}],
    )
    assert one_field.status_code == 200, one_field.text
    stored = (await api.get(f"{ENVIRONMENTS}/production")).json()["approvalSettings"]
    assert (stored["minNumApprovals"], stored["canReviewOwnRequest"]) == (2, True)
    assert (await api.get(f"{ENVIRONMENTS}/test")).json()["approvalSettings"]["required"] is False


@pytest.mark.parametrize(
    ("settings", "path"),
    [
        ({"minNumApprovals": 0}, "/approvalSettings/minNumApprovals"),
        ({"minNumApprovals": 6}, "/approvalSettings/minNumApprovals"),
        ({"minNumApprovals": "2"}, "/approvalSettings/minNumApprovals"),
        ({"required": "yes"}, "/approvalSettings/required"),
        ({"colour": True}, "/approvalSettings/colour"),
        ({"serviceKind": "servicenow"}, "/approvalSettings/serviceKind"),
        ({"requiredApprovalTags": ["ok", "not ok"]}, "/approvalSettings/requiredApprovalTags/1"),
        (
            {"required": True, "requiredApprovalTags": ["x"]},
            "/approvalSettings/requiredApprovalTags",
        ),
    ],
)
async def test_bad_settings_are_a_400_naming_the_field(
    api: httpx.AsyncClient, settings: dict[str, Any], path: str
) -> None:
    before = (await api.get(f"{ENVIRONMENTS}/production")).json()
    response = await patch(
        api,
        f"{ENVIRONMENTS}/production",
        [{"op": "replace", "path": "/approvalSettings", "value": settings}],
    )
    assert_problem(response, 400, path)
    assert (await api.get(f"{ENVIRONMENTS}/production")).json() == before


async def test_resource_settings_exist_for_segments_only(api: httpx.AsyncClient) -> None:
    response = await patch(
        api,
        f"{ENVIRONMENTS}/production",
        [{"op": "replace", "path": "/resourceApprovalSettings", "value": {"aiconfig": {}}}],
    )
    assert_problem(response, 400, "/resourceApprovalSettings/aiconfig")


async def test_a_direct_change_where_approval_is_required_is_a_405_and_changes_nothing(
    api: httpx.AsyncClient,
) -> None:
    await create_flag(api, "f")
    await require_approval(api)
    writer = await token(api, "writer")
    refused = await patch(api, f"{FLAGS}/f", TURN_ON_PRODUCTION, semantic=True, **writer)
    assert_problem(refused, 405)
    assert refused.json()["code"] == "approval_required"
    assert "approval-requests" in refused.json()["message"]
    json_patch = await patch(
        api,
        f"{FLAGS}/f",
        [{"op": "replace", "path": "/environments/production/on", "value": True}],
        **writer,
    )
    assert_problem(json_patch, 405)
    flag = (await api.get(f"{FLAGS}/f")).json()
    assert flag["_version"] == 1
    assert flag["environments"]["production"]["on"] is False

    # another environment, and what no environment serves, need no approval
    in_test = await patch(
        api, f"{FLAGS}/f", {**TURN_ON_PRODUCTION, "environmentKey": "test"}, semantic=True, **writer
    )
    assert in_test.status_code == 200, in_test.text
    renamed = await patch(
        api, f"{FLAGS}/f", [{"op": "replace", "path": "/name", "value": "F"}], **writer
    )
    assert renamed.status_code == 200, renamed.text

    # a variation's value is served in every environment, production too
    revalued = await patch(
        api,
        f"{FLAGS}/f",
        [{"op": "replace", "path": "/variations/0/value", "value": "x"}],
        **writer,
    )
    assert_problem(revalued, 405)


async def test_deleting_copying_importing_and_creating_on_need_approval_too(
    api: httpx.AsyncClient,
) -> None:
    await create_flag(api, "f")
    await require_approval(api)
    writer = await token(api, "writer")
    assert_problem(await api.delete(f"{FLAGS}/f", headers=writer), 405)
    copied = await api.post(
        f"{FLAGS}/f/copy",
        json={"source": {"key": "test"}, "target": {"key": "production"}, "comment": "c"},
        headers=writer,
    )
    # the copy changes nothing (both are defaults), so nothing needs approval
    assert copied.status_code == 201, copied.text
    on_in_test = await patch(
        api, f"{FLAGS}/f", {**TURN_ON_PRODUCTION, "environmentKey": "test"}, semantic=True, **writer
    )
    assert on_in_test.status_code == 200
    copy_on = await api.post(
        f"{FLAGS}/f/copy",
        json={"source": {"key": "test"}, "target": {"key": "production"}},
        headers=writer,
    )
    assert_problem(copy_on, 405)
    flag = {"key": "f", "version": 9, "on": True, "variations": [True, False], "offVariation": 1}
    imported = await api.post(
        f"/api/v2/projects/{PROJECT}/environments/production/import",
        json={"flags": {"f": flag}},
        headers=writer,
    )
    assert_problem(imported, 405)
    created_on = await api.post(
        FLAGS, json={"key": "g", "name": "g", "isFlagOn": True}, headers=writer
    )
    assert_problem(created_on, 405)
    assert (await api.get(f"{FLAGS}/g")).status_code == 404
    created_off = await api.post(FLAGS, json={"key": "g", "name": "g"}, headers=writer)
    assert created_off.status_code == 201, created_off.text
    production = (await api.get(f"{FLAGS}/f")).json()["environments"]["production"]
    assert production["on"] is False


async def test_required_approval_tags_cover_the_flags_carrying_one(
    api: httpx.AsyncClient,
) -> None:
    await create_flag(api, "plain")
    await create_flag(api, "guarded", tags=["payments"])
    await configure(api, "production", approvalSettings={"requiredApprovalTags": ["payments"]})
    writer = await token(api, "writer")
    plain = await patch(api, f"{FLAGS}/plain", TURN_ON_PRODUCTION, semantic=True, **writer)
    assert plain.status_code == 200, plain.text
    guarded = await patch(api, f"{FLAGS}/guarded", TURN_ON_PRODUCTION, semantic=True, **writer)
    assert_problem(guarded, 405)
    # dropping the tag in the same change does not escape the rule
    untag_and_turn_on = {
        **TURN_ON_PRODUCTION,
        "instructions": [{"kind": "removeTags", "values": ["payments"]}, {"kind": "turnFlagOn"}],
    }
    escaped = await patch(api, f"{FLAGS}/guarded", untag_and_turn_on, semantic=True, **writer)
    assert_problem(escaped, 405)
    tagged_later = await patch(
        api,
        f"{FLAGS}/plain",
        {**TURN_ON_PRODUCTION, "instructions": [{"kind": "addTags", "values": ["payments"]}]},
        semantic=True,
        **writer,
    )
    assert tagged_later.status_code == 200  # tags are flag-level: production serves the same


async def test_admins_and_bypass_tokens_change_directly_and_the_bypass_is_audited(
    api: httpx.AsyncClient, plane: ControlPlane
) -> None:
    await create_flag(api, "f")
    await require_approval(api)
    admin = await patch(api, f"{FLAGS}/f", TURN_ON_PRODUCTION, semantic=True)
    assert admin.status_code == 200, admin.text
    bypassing = await token(api, "writer", bypassApprovals=True)
    turned_off = await patch(
        api,
        f"{FLAGS}/f",
        {**TURN_ON_PRODUCTION, "instructions": [{"kind": "turnFlagOff"}]},
        semantic=True,
        **bypassing,
    )
    assert turned_off.status_code == 200, turned_off.text
    with plane.read() as uow:
        entries = uow.audit.list(resource_prefix=f"proj/{PROJECT}:env/production:flag/f")
    assert [entry.action for entry in entries] == [
        "updateFlag",
        "bypassRequiredApproval",
        "updateFlag",
        "bypassRequiredApproval",
    ]
    listed = (await api.get("/api/v2/tokens")).json()["items"]
    assert [item["bypassApprovals"] for item in listed if item["role"] == "writer"] == [True]
    reader = await api.post(
        "/api/v2/tokens", json={"name": "r", "role": "reader", "bypassApprovals": True}
    )
    assert_problem(reader, 400, "/bypassApprovals")


async def test_require_comments_refuses_changes_without_one(api: httpx.AsyncClient) -> None:
    await create_flag(api, "f")
    await configure(api, "production", requireComments=True)
    silent = {key: value for key, value in TURN_ON_PRODUCTION.items() if key != "comment"}
    assert_problem(await patch(api, f"{FLAGS}/f", silent, semantic=True), 400, "/comment")
    blank = await patch(api, f"{FLAGS}/f", {**silent, "comment": "  "}, semantic=True)
    assert_problem(blank, 400, "/comment")
    bare_json_patch = [{"op": "replace", "path": "/environments/production/on", "value": True}]
    assert_problem(await patch(api, f"{FLAGS}/f", bare_json_patch), 400, "/comment")
    assert (await api.get(f"{FLAGS}/f")).json()["_version"] == 1
    commented = await patch(api, f"{FLAGS}/f", TURN_ON_PRODUCTION, semantic=True)
    assert commented.status_code == 200, commented.text
    elsewhere = await patch(api, f"{FLAGS}/f", {**silent, "environmentKey": "test"}, semantic=True)
    assert elsewhere.status_code == 200, elsewhere.text
    # DELETE has no body to carry a comment: the request itself is the record
    assert (await api.delete(f"{FLAGS}/f")).status_code == 204


async def test_segments_follow_their_own_approval_settings(api: httpx.AsyncClient) -> None:
    created = await api.post(f"{SEGMENTS}/production", json={"key": "beta", "name": "Beta"})
    assert created.status_code == 201, created.text
    await create_flag(api, "f")
    await require_approval(api)  # flags only
    writer = await token(api, "writer")
    include = {"instructions": [{"kind": "addIncludedUsers", "values": ["u1"]}]}
    allowed = await patch(api, f"{SEGMENTS}/production/beta", include, semantic=True, **writer)
    assert allowed.status_code == 200, allowed.text
    await configure(api, "production", resourceApprovalSettings={"segment": {"required": True}})
    more = {"instructions": [{"kind": "addIncludedUsers", "values": ["u2"]}]}
    refused = await patch(api, f"{SEGMENTS}/production/beta", more, semantic=True, **writer)
    assert_problem(refused, 405)
    assert "resourceId proj/p:env/production:segment/beta" in refused.json()["message"]
    assert_problem(await api.delete(f"{SEGMENTS}/production/beta", headers=writer), 405)
    segment = (await api.get(f"{SEGMENTS}/production/beta")).json()
    assert segment["included"] == ["u1"]
