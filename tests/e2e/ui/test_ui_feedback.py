"""What the web UI tells its user, in headless Chromium against a real `flagstaff serve`: the
address after creating a flag and after signing in, the debugger's errors, a rollout that does
not add up, the keys table's first column, a writer on the tokens page, and the audit log's
environment scope."""

from __future__ import annotations

from typing import Any

import pytest
from ui_support import ENV, PROJECT, UiServer, expect, open_flag, sign_in

pytestmark = pytest.mark.slow

WRITER = "writer@example.com"
WRITER_PASSWORD = "writer password 1"

# Every word of a cell on one line: the top of each word's line boxes, one per line it spans.
BROKEN_WORDS = """(cells) => cells.flatMap((cell) => {
  const broken = [];
  const walker = document.createTreeWalker(cell, NodeFilter.SHOW_TEXT);
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    for (const word of node.textContent.matchAll(/\\S+/g)) {
      const range = document.createRange();
      range.setStart(node, word.index);
      range.setEnd(node, word.index + word[0].length);
      const lines = new Set([...range.getClientRects()].map((rect) => Math.round(rect.top)));
      if (lines.size > 1) broken.push(word[0]);
    }
  }
  return broken;
})"""


def test_a_new_flag_is_in_the_address_and_a_reload_shows_it(
    ui_server: UiServer, context: Any
) -> None:
    page = context.new_page()
    sign_in(page, ui_server)
    page.get_by_role("link", name="Create flag").click()
    page.get_by_label("Name").fill("Reload me")
    page.get_by_role("button", name="Create flag").click()
    expect()(page.locator("#kill-switch")).to_be_visible()
    expect()(page).to_have_url(f"{ui_server.url}/ui/#/p/{PROJECT}/e/{ENV}/flags/reload-me")
    page.reload()
    expect()(page.get_by_role("heading", name="Reload me")).to_be_visible()
    expect()(page.locator("#kill-switch")).to_have_attribute("aria-checked", "false")


def test_a_password_sign_in_leaves_the_sign_in_address(ui_server: UiServer, context: Any) -> None:
    page = context.new_page()
    page.goto(f"{ui_server.url}/ui/#/signin")
    sign_in(page, ui_server)
    expect()(page).to_have_url(f"{ui_server.url}/ui/#/p/{PROJECT}/e/{ENV}/flags")
    page.reload()
    expect()(page.get_by_role("heading", name="Flags", exact=True)).to_be_visible()


def test_the_debugger_says_the_context_is_not_json_and_clears_old_results(
    ui_server: UiServer, context: Any
) -> None:
    ui_server.create_flag("debugged")
    page = context.new_page()
    sign_in(page, ui_server)
    page.get_by_role("link", name="Debugger").click()
    context_field = page.get_by_label("Context (JSON)")
    context_field.fill('{"kind": "user", "key": "u-1"}')
    page.get_by_role("button", name="Evaluate").click()
    results = page.get_by_role("row").filter(has_text="debugged")
    expect()(results).to_contain_text("OFF")

    context_field.fill('{"kind": "user", "key": ')
    page.get_by_role("button", name="Evaluate").click()
    expect()(context_field).to_have_attribute("aria-invalid", "true")
    expect()(page.get_by_role("alert")).to_contain_text("not valid JSON")
    expect()(results).to_have_count(0)

    context_field.fill('{"kind": "user", "key": "u-1"}')
    page.get_by_role("button", name="Evaluate").click()
    expect()(results).to_contain_text("OFF")
    context_field.fill('{"kind": "user"}')
    page.get_by_role("button", name="Evaluate").click()
    expect()(page.get_by_role("alert")).to_contain_text("non-empty string key")
    expect()(results).to_have_count(0)


def test_a_rollout_that_does_not_add_up_to_100_percent_is_not_sent(
    ui_server: UiServer, context: Any
) -> None:
    ui_server.create_flag("uneven")
    page = context.new_page()
    sign_in(page, ui_server)
    open_flag(page, ui_server, "uneven")
    patches: list[str] = []
    page.on(
        "request",
        lambda request: patches.append(request.url) if request.method == "PATCH" else None,
    )
    fallthrough = page.get_by_role("region", name="Default rule")
    fallthrough.get_by_label("When no rule matches, serve").select_option(
        label="a percentage rollout"
    )
    fallthrough.get_by_label("% 0: true").fill("30")
    fallthrough.get_by_label("% 1: false").fill("60")
    page.get_by_role("button", name="Save targeting").click()

    expect()(page.locator("#notice")).to_contain_text("Not saved")
    rollout = fallthrough.locator(".rollout")
    expect()(rollout).to_have_attribute("aria-invalid", "true")
    expect()(fallthrough.get_by_role("alert")).to_contain_text("add up to 90%")
    assert patches == []
    assert "rollout" not in ui_server.flag("uneven")["environments"][ENV]["fallthrough"]

    fallthrough.get_by_label("% 1: false").fill("70")
    page.get_by_role("button", name="Save targeting").click()
    expect()(page.locator("#notice")).to_contain_text("Saved")
    assert len(patches) == 1
    weights = ui_server.flag("uneven")["environments"][ENV]["fallthrough"]["rollout"]["variations"]
    assert [item["weight"] for item in weights] == [30000, 70000]


def test_the_keys_page_breaks_no_word_in_its_first_column(
    ui_server: UiServer, context: Any
) -> None:
    page = context.new_page()
    sign_in(page, ui_server)
    page.get_by_role("link", name="Keys").click()
    for environment in ("production", "staging"):
        page.get_by_role("button", name=f"Show {environment} SDK key").click()
        page.get_by_role("button", name=f"Show {environment} mobile key").click()
    first_column = page.locator("table.keys tr > :first-child")
    expect()(first_column).to_have_count(3)
    assert first_column.evaluate_all(BROKEN_WORDS) == []


def test_a_writer_on_the_tokens_page_reads_a_sentence(ui_server: UiServer, context: Any) -> None:
    made = ui_server.api.post(
        "/api/v2/accounts", json={"email": WRITER, "password": WRITER_PASSWORD, "role": "writer"}
    )
    assert made.status_code in (201, 409), made.text
    page = context.new_page()
    sign_in(page, ui_server, email=WRITER, password=WRITER_PASSWORD)
    page.goto(f"{ui_server.url}/ui/#/tokens")
    expect()(page.get_by_role("heading", name="Access tokens")).to_be_visible()
    expect()(page.locator("main")).to_contain_text(
        "Only an admin of the whole account can see and create access tokens; "
        f"you are signed in as {WRITER} (writer)."
    )
    expect()(page.locator("main")).not_to_contain_text("Something went wrong")


def test_only_production_shows_a_flag_turned_on_there(ui_server: UiServer, context: Any) -> None:
    ui_server.create_flag("scoped", name="Scoped flag")
    page = context.new_page()
    sign_in(page, ui_server)
    open_flag(page, ui_server, "scoped")
    page.locator("#kill-switch").click()
    expect()(page.locator("#kill-switch")).to_have_attribute("aria-checked", "true")
    page.get_by_role("link", name="Audit log").click()
    page.get_by_label("Scope").select_option(label=f"Only {ENV}")
    entry = page.locator(".audit summary").filter(has_text="Scoped flag").first
    expect()(entry).to_contain_text("turned on the flag Scoped flag in Production")
    page.get_by_label("Environment").select_option(label="Staging")
    page.get_by_label("Scope").select_option(label="Only staging")
    expect()(
        page.locator(".audit summary").filter(has_text="created the flag Scoped flag")
    ).to_have_count(1)
    expect()(page.locator(".audit summary").filter(has_text="turned on")).to_have_count(0)
