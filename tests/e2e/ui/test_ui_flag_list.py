"""The flag list in headless Chromium (issue 20): the per-row on/off switch, which asks for a
comment in an environment that requires one (and refuses a blank one) and for confirmation in one
that confirms changes; filters and sort kept in the URL across a reload; keyboard-only toggling;
the status (from what the official SDK reported) and maintainer columns and filters, and moving
through the rows with the arrow keys."""

from __future__ import annotations

from typing import Any

import pytest
from ldclient import Context
from ldclient.client import LDClient
from ldclient.config import Config
from support.deadlines import wait_until
from ui_support import ENV, PROJECT, UiServer, expect, sign_in

pytestmark = pytest.mark.slow


def audit_comments(server: UiServer, key: str) -> list[str]:
    answer = server.api.get("/api/v2/auditlog", params={"spec": f"proj/{PROJECT}:env/*:flag/{key}"})
    assert answer.status_code == 200, answer.text
    return [str(item.get("comment") or "") for item in answer.json()["items"]]


def set_env(server: UiServer, env: str, **fields: bool) -> None:
    ops = [{"op": "replace", "path": f"/{k}", "value": v} for k, v in fields.items()]
    answer = server.api.patch(f"/api/v2/projects/{PROJECT}/environments/{env}", json=ops)
    assert answer.status_code == 200, answer.text


def is_on(server: UiServer, key: str, env: str) -> bool:
    return bool(server.flag(key)["environments"][env]["on"])


def test_row_switch_in_a_plain_environment_toggles_with_one_click(
    ui_server: UiServer, context: Any
) -> None:
    ui_server.create_flag("plain-row", name="Plain row")
    page = context.new_page()
    sign_in(page, ui_server)
    switch = page.get_by_role("switch", name=f"plain-row in {ENV}")
    expect()(switch).to_have_attribute("aria-checked", "false")
    switch.click()
    expect()(switch).to_have_attribute("aria-checked", "true")
    wait_until(lambda: is_on(ui_server, "plain-row", ENV), timeout=10, what="flag on via the API")


def test_required_comment_is_asked_for_and_a_blank_one_refused(
    ui_server: UiServer, context: Any
) -> None:
    ui_server.create_flag("commented-row", name="Commented row")
    set_env(ui_server, "staging", requireComments=True)
    page = context.new_page()
    sign_in(page, ui_server)
    page.goto(f"{ui_server.url}/ui/#/p/{PROJECT}/e/staging/flags")
    switch = page.get_by_role("switch", name="commented-row in staging")
    switch.click()
    dialog = page.get_by_role("dialog", name="Turn commented-row on in Staging?")
    expect()(dialog).to_be_visible()
    dialog.get_by_role("button", name="Turn on").click()
    expect()(dialog.get_by_role("alert")).to_contain_text("requires a comment")
    assert not is_on(ui_server, "commented-row", "staging")
    dialog.get_by_label("Comment (required)").fill("launch for the spring sale")
    dialog.get_by_role("button", name="Turn on").click()
    expect()(dialog).to_be_hidden()
    expect()(switch).to_have_attribute("aria-checked", "true")
    assert is_on(ui_server, "commented-row", "staging")
    assert not is_on(ui_server, "commented-row", ENV)
    assert "launch for the spring sale" in audit_comments(ui_server, "commented-row")
    set_env(ui_server, "staging", requireComments=False)


def test_confirmation_dialog_cancel_changes_nothing_and_keyboard_confirms(
    ui_server: UiServer, context: Any
) -> None:
    ui_server.create_flag("confirmed-row", name="Confirmed row")
    set_env(ui_server, ENV, confirmChanges=True)
    page = context.new_page()
    sign_in(page, ui_server)
    switch = page.get_by_role("switch", name=f"confirmed-row in {ENV}")
    switch.focus()
    page.keyboard.press("Enter")
    dialog = page.get_by_role("dialog")
    expect()(dialog).to_contain_text("asks for confirmation")
    page.keyboard.press("Escape")
    expect()(dialog).to_be_hidden()
    expect()(switch).to_be_focused()
    assert not is_on(ui_server, "confirmed-row", ENV)
    page.keyboard.press("Space")
    expect()(dialog).to_be_visible()
    expect()(dialog.get_by_label("Comment")).to_be_focused()
    page.keyboard.press("Enter")
    expect()(dialog).to_be_hidden()
    expect()(switch).to_have_attribute("aria-checked", "true")
    expect()(switch).to_be_focused()
    assert is_on(ui_server, "confirmed-row", ENV)
    set_env(ui_server, ENV, confirmChanges=False)


def test_filters_and_sort_are_kept_in_the_url(ui_server: UiServer, context: Any) -> None:
    ui_server.create_flag("alpha-tagged", name="Zulu", tags=["checkout"])
    ui_server.create_flag("zulu-tagged", name="Alpha", tags=["checkout"])
    ui_server.create_flag("untagged-one", name="Untagged")
    page = context.new_page()
    sign_in(page, ui_server)
    page.get_by_label("Tag", exact=True).select_option("checkout")
    page.get_by_label("Sort by", exact=True).select_option("key")
    expect()(page).to_have_url(
        f"{ui_server.url}/ui/#/p/{PROJECT}/e/{ENV}/flags?tag=checkout&sort=key"
    )
    page.reload()
    expect()(page.get_by_label("Tag", exact=True)).to_have_value("checkout")
    rows = page.locator("table.list tbody tr .mono")
    expect()(rows).to_have_text(["alpha-tagged", "zulu-tagged"])
    page.get_by_label("Sort by", exact=True).select_option("name")
    expect()(rows).to_have_text(["zulu-tagged", "alpha-tagged"])
    expect()(page).to_have_url(f"{ui_server.url}/ui/#/p/{PROJECT}/e/{ENV}/flags?tag=checkout")


def test_bulk_add_tag_and_archive_on_selected_flags(ui_server: UiServer, context: Any) -> None:
    for key in ("bulk-one", "bulk-two", "bulk-left"):
        ui_server.create_flag(key, name=key)
    page = context.new_page()
    sign_in(page, ui_server)
    page.get_by_label("Search", exact=True).fill("bulk-")
    page.get_by_label("Select bulk-one").check()
    page.get_by_label("Select bulk-two").check()
    expect()(page.get_by_role("group", name="Bulk actions")).to_contain_text("2 selected")
    page.get_by_label("Tag to add").fill("spring")
    page.get_by_role("button", name="Add tag to selected").click()
    expect()(page.get_by_role("status")).to_contain_text("Tagged spring: 2 flags")
    assert "spring" in ui_server.flag("bulk-one")["tags"]
    assert "spring" in ui_server.flag("bulk-two")["tags"]
    assert "spring" not in ui_server.flag("bulk-left")["tags"]

    page.get_by_label("Select bulk-one").check()
    page.get_by_role("button", name="Archive selected").click()
    expect()(page.get_by_role("status")).to_contain_text("Archived: 1 flag")
    assert ui_server.flag("bulk-one")["archived"]
    assert not ui_server.flag("bulk-two")["archived"]
    expect()(page.get_by_label("Select bulk-one")).to_have_count(0)
    expect()(page.get_by_label("Select bulk-two")).to_be_visible()


def test_create_a_number_flag_available_to_client_side_sdks(
    ui_server: UiServer, context: Any
) -> None:
    page = context.new_page()
    sign_in(page, ui_server)
    page.get_by_role("link", name="Create flag").click()
    page.get_by_label("Name", exact=True).fill("Max items")
    page.get_by_label("Variations", exact=True).select_option("number")
    values = page.get_by_label("Variation values")
    values.fill("10\nlots")
    page.get_by_role("button", name="Create flag").click()
    expect()(page.locator(".field-error")).to_contain_text("Not a number: lots")
    expect()(values).to_have_value("10\nlots")
    values.fill("10\n2.5")
    page.get_by_label("Available to client-side (browser) SDKs").check()
    page.get_by_role("button", name="Create flag").click()
    expect()(page.locator("#kill-switch")).to_be_visible()
    made = ui_server.flag("max-items")
    assert [v["value"] for v in made["variations"]] == [10, 2.5]
    assert made["clientSideAvailability"]["usingEnvironmentId"] is True


def test_templates_fill_the_create_form(ui_server: UiServer, context: Any) -> None:
    page = context.new_page()
    sign_in(page, ui_server)
    page.get_by_role("link", name="Create flag").click()
    page.get_by_label("Name", exact=True).fill("Breaker")
    page.get_by_label("Template").select_option("kill-switch")
    expect()(page.get_by_label("Temporary (remove it after launch)")).not_to_be_checked()
    page.get_by_label("Template").select_option("experiment")
    expect()(page.get_by_label("Variations", exact=True)).to_have_value("string")
    page.get_by_role("button", name="Create flag").click()
    expect()(page.locator("#kill-switch")).to_be_visible()
    made = ui_server.flag("breaker")
    assert [v["value"] for v in made["variations"]] == ["control", "treatment"]
    assert made["temporary"] is True
    assert made["tags"] == ["experiment"]


def evaluate_with_the_sdk(server: UiServer, key: str) -> None:
    """The official SDK evaluates the flag and sends its events; ingestion then counts them."""
    config = Config(
        server.sdk_key,
        base_uri=server.url,
        stream_uri=server.url,
        events_uri=server.url,
        send_events=True,
    )
    client = LDClient(config=config, start_wait=10)
    try:
        assert client.is_initialized()
        assert client.variation(key, Context.create("user-1"), None) is False
        client.flush()
        statuses = f"/api/v2/insights/{PROJECT}/{ENV}/flag-statuses"

        def launched() -> bool:
            items = server.api.get(statuses).json()["items"]
            return any(i["flagKey"] == key and i["status"] == "launched" for i in items)

        wait_until(launched, timeout=30, interval=0.05, what=f"{key} counted as launched")
    finally:
        client.close()


def test_status_and_maintainer_columns_filter_the_list_and_stay_in_the_url(
    ui_server: UiServer, context: Any
) -> None:
    ui_server.create_flag("owned-served", name="Owned served", maintainerId="ana@example.com")
    ui_server.create_flag("owned-quiet", name="Owned quiet", maintainerId="ana@example.com")
    ui_server.create_flag("nobodys", name="Nobody's")
    evaluate_with_the_sdk(ui_server, "owned-served")
    page = context.new_page()
    sign_in(page, ui_server)
    page.get_by_label("Search", exact=True).fill("o")
    row = page.get_by_role("row").filter(has_text="owned-served")
    expect()(row).to_contain_text("launched")
    expect()(row).to_contain_text("ana@example.com")
    expect()(page.get_by_role("row").filter(has_text="owned-quiet")).to_contain_text("new")

    page.get_by_label("Maintainer", exact=True).select_option("ana@example.com")
    page.get_by_label("Status", exact=True).select_option("launched")
    expect()(page).to_have_url(
        f"{ui_server.url}/ui/#/p/{PROJECT}/e/{ENV}/flags?q=o&status=launched&maintainer=ana%40example.com"
    )
    expect()(page.get_by_role("link", name="Owned served")).to_be_visible()
    expect()(page.get_by_role("link", name="Owned quiet")).to_have_count(0)
    page.reload()
    expect()(page.get_by_role("link", name="Owned served")).to_be_visible()
    expect()(page.get_by_role("link", name="Owned quiet")).to_have_count(0)
    page.get_by_label("Status", exact=True).select_option("all")
    page.get_by_label("Maintainer", exact=True).select_option("(none)")
    expect()(page.get_by_role("link", name="Nobody's")).to_be_visible()
    expect()(page.get_by_role("link", name="Owned quiet")).to_have_count(0)


def test_create_flag_names_the_signed_in_maintainer(ui_server: UiServer, context: Any) -> None:
    page = context.new_page()
    sign_in(page, ui_server)
    page.goto(f"{ui_server.url}/ui/#/p/{PROJECT}/e/{ENV}/new-flag")
    page.get_by_label("Name", exact=True).fill("Mine")
    expect()(page.get_by_label("Maintainer", exact=True)).to_have_value("admin@example.com")
    page.get_by_role("button", name="Create flag").click()
    expect()(page.locator("#kill-switch")).to_be_visible()
    assert ui_server.flag("mine")["maintainerId"] == "admin@example.com"


def test_arrow_keys_move_through_rows_and_slash_focuses_the_search(
    ui_server: UiServer, context: Any
) -> None:
    for key in ("keys-a", "keys-b", "keys-c"):
        ui_server.create_flag(key, name=key)
    page = context.new_page()
    sign_in(page, ui_server)
    page.locator("main h1").click()
    page.keyboard.press("/")
    expect()(page.get_by_label("Search", exact=True)).to_be_focused()
    page.keyboard.type("keys-")
    page.get_by_role("link", name="keys-a").focus()
    page.keyboard.press("ArrowDown")
    expect()(page.get_by_role("link", name="keys-b")).to_be_focused()
    page.keyboard.press("End")
    expect()(page.get_by_role("link", name="keys-c")).to_be_focused()
    page.keyboard.press("ArrowUp")
    expect()(page.get_by_role("link", name="keys-b")).to_be_focused()
    page.keyboard.press("Tab")
    switch = page.get_by_role("switch", name=f"keys-b in {ENV}")
    expect()(switch).to_be_focused()
    page.keyboard.press("ArrowDown")
    expect()(page.get_by_role("switch", name=f"keys-c in {ENV}")).to_be_focused()
    page.keyboard.press("Home")
    expect()(page.get_by_role("switch", name=f"keys-a in {ENV}")).to_be_focused()
    page.keyboard.press("Enter")
    expect()(page.get_by_role("switch", name=f"keys-a in {ENV}")).to_have_attribute(
        "aria-checked", "true"
    )
    page.get_by_role("link", name="keys-a").focus()
    page.keyboard.press("Enter")
    expect()(page.locator("#kill-switch")).to_be_visible()


def test_a_long_list_draws_its_first_rows_then_every_row_once(
    ui_server: UiServer, context: Any
) -> None:
    # its own project, so the other tests' counts are untouched; 45 flags is more than the 40
    # rows drawn before the page is ready
    made = ui_server.api.post("/api/v2/projects", json={"key": "long-list", "name": "Long list"})
    assert made.status_code == 201, made.text
    for index in range(45):
        body = {"key": f"long-{index:02d}", "name": f"Long {index:02d}"}
        answer = ui_server.api.post("/api/v2/flags/long-list", json=body)
        assert answer.status_code == 201, answer.text
    page = context.new_page()
    sign_in(page, ui_server)
    page.goto(f"{ui_server.url}/ui/#/p/long-list/e/{ENV}/flags")
    keys = page.locator("table.list tbody tr .mono")
    expect()(keys).to_have_text([f"long-{index:02d}" for index in range(45)])
    # a search and clearing it draw every row again, none twice
    page.get_by_label("Search").fill("long-4")
    expect()(keys).to_have_count(5)
    page.get_by_label("Search").fill("")
    expect()(keys).to_have_count(45)
    expect()(page.get_by_role("main")).to_contain_text("45 of 45 flags")
