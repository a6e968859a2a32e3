"""The flag page's surroundings in headless Chromium (issue 20): the segments its rules use (and
the segment page listing the flags that use it), the flags depending on it, its change history
with diffs, and two environments side by side with a copy of the ticked parts from one to the
other through the API's copy."""

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
