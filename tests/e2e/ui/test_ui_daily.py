"""The contexts explorer (issue 20): contexts an SDK reported, searched by kind, key and attribute
from the keyboard alone, and one context's page with every flag's value and reason for it (the
evaluation API) and its recent evaluations (the feature events that named it); Settings: the
project and its environments, your own name and password."""

from __future__ import annotations

import time
from typing import Any

import pytest
from accessibility import blocking_violations
from ui_support import ENV, PROJECT, UiServer, expect, sign_in


@pytest.fixture(scope="module")
def seen(ui_server: UiServer) -> UiServer:
    flag = ui_server.create_flag("explorer-nordic")
    clause = {"attribute": "country", "op": "in", "values": ["se"], "contextKind": "user"}
    rule = {"clauses": [clause], "variationId": flag["variations"][0]["_id"]}
    patch = ui_server.api.patch(
        f"/api/v2/flags/{PROJECT}/explorer-nordic",
        json={
            "environmentKey": ENV,
            "instructions": [
                {"kind": "turnFlagOn"},
                {"kind": "addRule", **rule},
            ],
        },
        headers={"Content-Type": "application/json; domain-model=launchdarkly.semanticpatch"},
    )
    assert patch.status_code == 200, patch.text
    now = int(time.time() * 1000)
    anna = {"kind": "user", "key": "explorer-anna", "name": "Anna", "country": "se"}
    ui_server.send_events(
        [
            {"kind": "index", "creationDate": now - 5, "context": anna},
            {
                "kind": "index",
                "creationDate": now - 4,
                "context": {"kind": "user", "key": "explorer-bo", "country": "no"},
            },
            {
                "kind": "index",
                "creationDate": now - 3,
                "context": {"kind": "organization", "key": "explorer-org"},
            },
            {
                "kind": "feature",
                "creationDate": now - 2,
                "key": "explorer-nordic",
                "version": 2,
                "variation": 0,
                "value": True,
                "reason": {"kind": "RULE_MATCH", "ruleIndex": 0},
                "context": anna,
            },
        ],
        seen=("user", "explorer-anna"),
    )
    return ui_server


def test_search_contexts_and_open_one_from_the_keyboard(seen: UiServer, context: Any) -> None:
    page = context.new_page()
    sign_in(page, seen)
    page.goto(f"{seen.url}/ui/#/p/{PROJECT}/e/{ENV}/contexts")
    rows = page.locator("#contexts tbody tr")
    expect()(rows.first).to_be_visible()
    expect()(page.get_by_role("link", name="explorer-org")).to_be_visible()
    # keyboard only: the page starts focused on its content, the first field is one Tab away
    page.keyboard.press("Tab")
    expect()(page.get_by_label("Kind")).to_be_focused()
    page.keyboard.type("user")
    page.keyboard.press("Tab")
    page.keyboard.press("Tab")
    expect()(page.get_by_label("Attribute", exact=True)).to_be_focused()
    page.keyboard.type("country")
    page.keyboard.press("Tab")
    page.keyboard.type("se")
    page.keyboard.press("Enter")
    expect()(page).to_have_url(
        f"{seen.url}/ui/#/p/{PROJECT}/e/{ENV}/contexts?kind=user&attribute=country&value=se"
    )
    expect()(rows).to_have_count(1)
    expect()(rows.first).to_contain_text("Anna")
    # past the five fields and the button, the first link of the results
    for _ in range(6):
        page.keyboard.press("Tab")
    expect()(page.get_by_role("link", name="explorer-anna")).to_be_focused()
    page.keyboard.press("Enter")
    expect()(page.get_by_role("heading", name="user explorer-anna")).to_be_visible()
    flags = page.get_by_role("table", name="Every flag's value")
    nordic = flags.get_by_role("row").filter(has=page.get_by_role("link", name="explorer-nordic"))
    expect()(nordic).to_contain_text("true")
    expect()(nordic).to_contain_text("RULE_MATCH")
    recent = page.locator("#recent-evaluations tbody tr")
    expect()(recent).to_have_count(1)
    expect()(recent.first).to_contain_text("explorer-nordic")
    expect()(recent.first).to_contain_text("RULE_MATCH")

    # a search that matches nothing says so; a value without its attribute is refused by name
    page.goto(f"{seen.url}/ui/#/p/{PROJECT}/e/{ENV}/contexts?key=nobody-at-all")
    expect()(page.get_by_text("No context of the")).to_be_visible()
    page.goto(f"{seen.url}/ui/#/p/{PROJECT}/e/{ENV}/contexts?value=se")
    expect()(page.get_by_role("alert")).to_have_text("Give the attribute the value belongs to.")
    # a context never seen in the environment
    page.goto(f"{seen.url}/ui/#/p/{PROJECT}/e/staging/contexts/user/explorer-anna")
    expect()(page.get_by_role("alert")).to_contain_text("no context")


def test_settings_edit_the_project_and_an_environment_from_the_keyboard(
    seen: UiServer, context: Any
) -> None:
    page = context.new_page()
    sign_in(page, seen)
    page.get_by_role("link", name="Settings").click()
    expect()(page.get_by_role("heading", name="Settings", exact=True)).to_be_visible()
    staging = page.get_by_role("form", name="Environment staging")
    # keyboard only from the name field: rename, skip the colour, tick two safeguards, save
    staging.get_by_label("Name").focus()
    page.keyboard.press("Control+A")
    page.keyboard.type("Staging EU")
    page.keyboard.press("Tab")
    page.keyboard.press("Tab")
    expect()(staging.get_by_label("Require a comment")).to_be_focused()
    page.keyboard.press("Space")
    page.keyboard.press("Tab")
    page.keyboard.press("Tab")
    page.keyboard.press("Space")
    page.keyboard.press("Tab")
    expect()(staging.get_by_role("button", name="Save staging")).to_be_focused()
    page.keyboard.press("Enter")
    expect()(page.locator("#notice")).to_contain_text(
        "Saved staging: name, requireComments, critical"
    )
    env = seen.api.get(f"/api/v2/projects/{PROJECT}/environments/staging").json()
    assert (env["name"], env["requireComments"], env["confirmChanges"], env["critical"]) == (
        "Staging EU",
        True,
        False,
        True,
    )
    expect()(
        page.get_by_label("Environment", exact=True).locator("option", has_text="Staging EU")
    ).to_have_count(1)

    # a colour, and loosening a safeguard asks first: dismissed, nothing is sent
    staging.get_by_label("Colour").fill("#aa3300")
    staging.get_by_label("Require a comment").uncheck()
    page.once("dialog", lambda dialog: dialog.dismiss())
    staging.get_by_role("button", name="Save staging").click()
    expect()(page.locator("#notice")).not_to_contain_text("color")
    assert seen.api.get(f"/api/v2/projects/{PROJECT}/environments/staging").json()[
        "requireComments"
    ]
    page.once("dialog", lambda dialog: dialog.accept())
    staging.get_by_role("button", name="Save staging").click()
    expect()(page.locator("#notice")).to_contain_text("Saved staging: color, requireComments")
    env = seen.api.get(f"/api/v2/projects/{PROJECT}/environments/staging").json()
    assert (env["color"], env["requireComments"]) == ("aa3300", False)

    # a blank name is refused on its field; the project is renamed
    staging.get_by_label("Name").fill("")
    staging.get_by_role("button", name="Save staging").click()
    expect()(staging.get_by_label("Name")).to_have_attribute("aria-invalid", "true")
    page.get_by_label("Project name").fill("Shop EU")
    page.get_by_role("button", name="Rename project").click()
    expect()(page.locator("#notice")).to_contain_text("Renamed project shop to Shop EU")
    assert seen.api.get(f"/api/v2/projects/{PROJECT}").json()["name"] == "Shop EU"
    for link in ("Keys", "Projects", "Webhooks", "Tokens", "Accounts"):
        expect()(
            page.get_by_role("main").get_by_role("link", name=link, exact=True)
        ).to_be_visible()


def test_settings_change_your_own_name_and_password(seen: UiServer, context: Any) -> None:
    email, old, new = "changer@example.com", "the old password 1", "the new password 22"
    made = seen.api.post(
        "/api/v2/accounts", json={"email": email, "password": old, "role": "writer"}
    )
    assert made.status_code == 201, made.text
    page = context.new_page()
    sign_in(page, seen, email=email, password=old)
    page.goto(f"{seen.url}/ui/#/p/{PROJECT}/settings")
    expect()(page.get_by_role("main")).to_contain_text(f"Signed in as {email}")
    assert blocking_violations(page) == []

    # the name from the keyboard alone: first name, Tab, last name, Tab to the button, Enter
    names = page.get_by_role("form", name="Change your name")
    names.get_by_label("First name").focus()
    page.keyboard.type("Grace")
    page.keyboard.press("Tab")
    page.keyboard.type("x" * 201)
    page.keyboard.press("Tab")
    expect()(names.get_by_role("button", name="Save name")).to_be_focused()
    page.keyboard.press("Enter")
    expect()(names.get_by_label("Last name")).to_have_attribute("aria-invalid", "true")
    expect()(names).to_contain_text("at most 200 characters")
    page.keyboard.press("Control+A")
    page.keyboard.type("Hopper")
    page.keyboard.press("Enter")
    expect()(page.locator("#notice")).to_contain_text("Saved. You are Grace Hopper.")
    expect()(page.get_by_role("main")).to_contain_text(f"Signed in as {email} (Grace Hopper)")
    member = seen.api.get(f"/api/v2/members/{made.json()['_id']}").json()
    assert (member["firstName"], member["lastName"]) == ("Grace", "Hopper")

    form = page.get_by_role("form", name="Change your password")
    form.get_by_label("Current password").fill("not it at all")
    form.get_by_label("New password", exact=True).fill(new)
    form.get_by_label("New password again").fill(new + "x")
    form.get_by_role("button", name="Change password").click()
    expect()(form.get_by_label("New password again")).to_have_attribute("aria-invalid", "true")
    form.get_by_label("New password again").fill(new)
    form.get_by_role("button", name="Change password").click()
    expect()(form.get_by_label("Current password")).to_have_attribute("aria-invalid", "true")
    expect()(form).to_contain_text("the current password is wrong")
    # writers see the project's settings but cannot change them
    expect()(page.get_by_role("form", name="Environment staging")).to_have_count(0)
    form.get_by_label("Current password").fill(old)
    form.get_by_role("button", name="Change password").click()
    expect()(page.get_by_role("heading", name="Sign in to Flagstaff")).to_be_visible()
    expect()(page.locator("#notice")).to_contain_text("Password changed")
    sign_in(page, seen, email=email, password=new)


def test_clause_editor_suggests_attributes_and_values_seen(seen: UiServer, context: Any) -> None:
    page = context.new_page()
    sign_in(page, seen)
    page.goto(f"{seen.url}/ui/#/p/{PROJECT}/e/{ENV}/flags/explorer-nordic")
    expect()(page.locator("#kill-switch")).to_be_visible()
    rules = page.get_by_role("region", name="Rules")
    page.get_by_role("button", name="Add rule").click()
    clause = rules.get_by_role("group", name="Rule 2, condition 1")
    attribute = clause.get_by_label("Attribute", exact=True)
    suggested = attribute.evaluate("el => [...el.list.options].map((o) => o.value)")
    assert suggested == ["country", "key", "name"]
    kinds = clause.get_by_label("Context kind").evaluate(
        "el => [...el.list.options].map((o) => o.value)"
    )
    assert kinds == ["organization", "user"]
    # keyboard only: the attribute, then Tab past "not" and the operator to the values
    attribute.focus()
    page.keyboard.press("Control+A")
    page.keyboard.type("country")
    offered = clause.get_by_role("group", name="Values of country seen")
    expect()(offered.get_by_role("button")).to_have_count(2)
    for _ in range(4):
        page.keyboard.press("Tab")
    expect()(offered.get_by_role("button", name="Add no")).to_be_focused()
    page.keyboard.press("Enter")
    expect()(clause.get_by_label("Values", exact=True)).to_have_value("no")
    expect()(offered.get_by_role("button", name="Add no")).to_have_count(0)
    expect()(offered.get_by_role("button", name="Add se")).to_be_focused()
    page.keyboard.press("Enter")
    expect()(clause.get_by_label("Values", exact=True)).to_have_value("no\nse")
    expect()(offered).to_be_hidden()
    # an attribute never seen offers nothing
    attribute.fill("plan")
    expect()(clause.get_by_role("group", name="Values of plan seen")).to_be_hidden()
