"""The flag page's surroundings in headless Chromium (issue 20): the segments its rules use (and
the segment page listing the flags that use it), the flags depending on it, its change history
with diffs, and two environments side by side with a copy of the ticked parts from one to the
other through the API's copy. And what a member sees (issue 19): only what their roles let them
change, and a refused change's reason (the action and the resource of the 403)."""

from __future__ import annotations

from typing import Any

import pytest
from ui_support import ENV, PROJECT, UiServer, expect, open_flag, sign_in

pytestmark = pytest.mark.slow

SEMANTIC = "application/json; domain-model=launchdarkly.semanticpatch"


def patch(server: UiServer, key: str, env: str, *instructions: dict[str, Any]) -> Any:
    answer = server.api.patch(
        f"/api/v2/flags/{PROJECT}/{key}",
        json={"environmentKey": env, "instructions": list(instructions)},
        headers={"Content-Type": SEMANTIC},
    )
    assert answer.status_code == 200, answer.text
    return answer.json()


def test_segments_used_and_dependent_flags_are_listed_and_linked(
    ui_server: UiServer, context: Any
) -> None:
    made = ui_server.api.post(
        f"/api/v2/segments/{PROJECT}/{ENV}", json={"key": "vip", "name": "VIP customers"}
    )
    assert made.status_code == 201, made.text
    parent = ui_server.create_flag("parent-flag", name="Parent")
    ui_server.create_flag("child-flag", name="Child")
    ui_server.create_flag("unrelated-flag", name="Unrelated")
    vip = {"attribute": "key", "op": "segmentMatch", "values": ["vip"]}
    patch(
        ui_server,
        "parent-flag",
        ENV,
        {"kind": "addRule", "clauses": [vip], "variationId": parent["variations"][0]["_id"]},
    )
    patch(
        ui_server,
        "child-flag",
        ENV,
        {
            "kind": "addPrerequisite",
            "key": "parent-flag",
            "variationId": parent["variations"][0]["_id"],
        },
    )
    page = context.new_page()
    sign_in(page, ui_server)
    open_flag(page, ui_server, "parent-flag")
    related = page.get_by_role("region", name="Segments and dependent flags")
    expect()(related.get_by_role("link", name="VIP customers")).to_be_visible()
    expect()(related.get_by_role("link", name="Child")).to_be_visible()
    expect()(related).to_contain_text("needs true")
    expect()(related.get_by_role("link", name="Unrelated")).to_have_count(0)
    related.get_by_role("link", name="VIP customers").click()
    using = page.get_by_role("region", name=f"Flags using this segment in {ENV}")
    expect()(using.get_by_role("link", name="Parent")).to_be_visible()
    expect()(using.get_by_role("link", name="Child")).to_have_count(0)
    page.go_back()
    related = page.get_by_role("region", name="Segments and dependent flags")
    related.get_by_role("link", name="Child").click()
    expect()(page.get_by_role("heading", name="Child", exact=True)).to_be_visible()
    related = page.get_by_role("region", name="Segments and dependent flags")
    expect()(related).to_contain_text("No rule uses a segment.")
    expect()(related).to_contain_text("No flag has this one as a prerequisite.")


def test_history_shows_each_change_with_its_diff(ui_server: UiServer, context: Any) -> None:
    ui_server.create_flag("storied-flag", name="Storied")
    page = context.new_page()
    sign_in(page, ui_server)
    open_flag(page, ui_server, "storied-flag")
    history = page.get_by_role("region", name="History")
    expect()(history.get_by_role("listitem")).to_have_count(1)
    page.locator("#kill-switch").click()
    expect()(page.locator("#kill-switch")).to_have_attribute("aria-checked", "true")
    page.reload()
    history = page.get_by_role("region", name="History")
    expect()(history.locator("ol > li")).to_have_count(2)
    newest = history.locator("ol > li").first
    expect()(newest).to_contain_text("turned on the flag")
    newest.locator("summary").first.click()
    expect()(newest.locator(".diff .d-add").filter(has_text='"on": true')).to_be_visible()


def test_compare_two_environments_and_copy_only_the_ticked_parts(
    ui_server: UiServer, context: Any
) -> None:
    flag = ui_server.create_flag("promoted-flag", name="Promoted")
    country = {"attribute": "country", "op": "in", "values": ["se"]}
    first = flag["variations"][0]["_id"]
    patch(
        ui_server,
        "promoted-flag",
        "staging",
        {"kind": "turnFlagOn"},
        {"kind": "addRule", "clauses": [country], "variationId": first},
    )
    page = context.new_page()
    sign_in(page, ui_server)
    open_flag(page, ui_server, "promoted-flag")
    compare = page.get_by_role("region", name="Compare two environments and copy")
    expect()(compare.get_by_label("From")).to_have_value("staging")
    expect()(compare.get_by_label("To")).to_have_value(ENV)
    changes = compare.get_by_label("What copying changes in Production")
    expect()(changes.locator(".d-add").filter(has_text='"on": true')).to_have_count(1)
    expect()(changes.locator(".d-add").filter(has_text='"se"')).to_have_count(1)
    compare.get_by_label("On / off").uncheck()
    expect()(changes.locator(".d-add").filter(has_text='"on": true')).to_have_count(0)
    compare.get_by_label("Copy comment").fill("promote the Swedish rule")
    compare.get_by_role("button", name="Copy Staging to Production").click()
    expect()(page.locator("#notice")).to_contain_text("Copied 5 part(s) from staging to production")
    production = ui_server.flag("promoted-flag")["environments"][ENV]
    assert [rule["clauses"][0]["values"] for rule in production["rules"]] == [["se"]]
    assert production["on"] is False
    # the targeting editor shows the copied rule, and the history the copy with its comment
    expect()(
        page.get_by_role("region", name="Rules").get_by_label("Values", exact=True)
    ).to_have_value("se")
    expect()(page.get_by_role("region", name="History")).to_contain_text("promote the Swedish rule")


MEMBER = "toggler@example.com"
PASSWORD = "a long enough password"
ROLE = {
    "key": "production-toggler",
    "name": "Toggle production",
    "policy": [
        {"effect": "allow", "actions": ["viewProject"], "resources": ["proj/*"]},
        {"effect": "allow", "actions": ["updateOn"], "resources": ["proj/*:env/production:flag/*"]},
    ],
}


def member_with_role(server: UiServer) -> str:
    made = server.api.post("/api/v2/roles", json=ROLE)
    assert made.status_code == 201, made.text
    invited = server.api.post(
        "/api/v2/members", json=[{"email": MEMBER, "customRoles": [ROLE["key"]]}]
    )
    assert invited.status_code == 201, invited.text
    (member,) = invited.json()["items"]
    accepted = server.api.post(
        "/api/v2/members/invitations",
        json={"invitation": member["_invitation"], "password": PASSWORD},
    )
    assert accepted.status_code == 200, accepted.text
    member_id: str = member["_id"]
    return member_id


def test_a_member_with_a_custom_role_sees_only_what_they_may_change(
    ui_server: UiServer, context: Any
) -> None:
    ui_server.create_flag("perm-flag", name="Permission flag")
    member_id = member_with_role(ui_server)
    page = context.new_page()
    sign_in(page, ui_server, email=MEMBER, password=PASSWORD)
    expect()(page.get_by_role("switch", name=f"perm-flag in {ENV}")).to_be_enabled()
    expect()(page.get_by_role("link", name="Create flag")).to_have_count(0)

    open_flag(page, ui_server, "perm-flag")
    expect()(page.locator("#kill-switch")).to_be_enabled()
    expect()(page.locator("#save-targeting")).to_be_disabled()
    expect()(page.get_by_role("button", name="Save settings")).to_be_disabled()
    expect()(page.get_by_role("button", name="Delete flag")).to_be_disabled()
    expect()(page.get_by_role("button", name="Archive flag")).to_be_disabled()
    page.locator("#kill-switch").click()
    expect()(page.locator("#kill-switch")).to_have_attribute("aria-checked", "true")
    assert ui_server.flag("perm-flag")["environments"][ENV]["on"] is True

    page.goto(f"{ui_server.url}/ui/#/p/{PROJECT}/e/staging/flags/perm-flag")
    expect()(page.locator("#kill-switch")).to_be_disabled()
    expect()(page.locator("#read-only-note")).to_contain_text("cannot change staging")

    # the role goes away while the page is open: the next toggle is refused, and says why
    open_flag(page, ui_server, "perm-flag")
    taken = ui_server.api.patch(
        f"/api/v2/members/{member_id}",
        json=[{"op": "replace", "path": "/customRoles", "value": []}],
    )
    assert taken.status_code == 200, taken.text
    page.once("dialog", lambda dialog: dialog.accept())
    page.locator("#kill-switch").click()
    expect()(page.locator("#notice")).to_contain_text(
        f"do not allow updateOn on proj/{PROJECT}:env/{ENV}:flag/perm-flag"
    )
    assert ui_server.flag("perm-flag")["environments"][ENV]["on"] is True
