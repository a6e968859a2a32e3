"""The web UI in headless Chromium against a real `flagstaff serve`: sign in, create a flag, add a
rule and a percentage rollout, turn it on, and the official LaunchDarkly Python SDK (streaming)
sees it; a two-tab version conflict keeps the user's input; keyboard-only use; field errors; no
horizontal scrolling at 1280 px. Screenshots of the main pages go to build/screenshots/."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest
from ldclient import Context
from ldclient.client import LDClient
from ldclient.config import Config
from support.deadlines import wait_until
from ui_support import (
    EMAIL,
    ENV,
    PASSWORD,
    PROJECT,
    SCREENSHOTS,
    UiServer,
    expect,
    open_flag,
    sign_in,
)

pytestmark = pytest.mark.slow


def save(page: Any) -> None:
    page.get_by_role("button", name="Save targeting").click()


@pytest.fixture
def sdk(ui_server: UiServer) -> Iterator[LDClient]:
    config = Config(
        ui_server.sdk_key,
        base_uri=ui_server.url,
        stream_uri=ui_server.url,
        events_uri=ui_server.url,
        send_events=False,
        diagnostic_opt_out=True,
    )
    client = LDClient(config=config, start_wait=10)
    try:
        assert client.is_initialized()
        yield client
    finally:
        client.close()


def test_flag_made_in_the_ui_reaches_the_official_sdk(
    ui_server: UiServer, browser: Any, context: Any, sdk: LDClient
) -> None:
    sweden = Context.builder("user-se").set("country", "se").build()
    assert sdk.variation("checkout-v2", sweden, "missing") == "missing"
    page = context.new_page()
    sign_in(page, ui_server)

    page.get_by_role("link", name="Create flag").click()
    page.get_by_label("Name").fill("Checkout v2")
    expect()(page.get_by_label("Key")).to_have_value("checkout-v2")
    page.get_by_role("button", name="Create flag").click()
    switch = page.locator("#kill-switch")
    expect()(switch).to_have_attribute("aria-checked", "false")
    wait_until(
        lambda: sdk.variation("checkout-v2", sweden, "missing") is False,
        timeout=15.0,
        interval=0.05,
        what="SDK has the flag",
    )

    page.get_by_role("button", name="Add rule").click()
    rules = page.get_by_role("region", name="Rules")
    rules.get_by_label("Attribute", exact=True).fill("country")
    rules.get_by_label("Values", exact=True).fill("se\nno")
    fallthrough = page.get_by_role("region", name="Default rule")
    serve = fallthrough.get_by_label("When no rule matches, serve")
    serve.select_option(label="a percentage rollout")
    fallthrough.get_by_label("% 0: true").fill("25")
    fallthrough.get_by_label("% 1: false").fill("75")
    fallthrough.get_by_label("Bucket by attribute").fill("org")
    targeting = page.get_by_role("form", name=f"Targeting in {ENV}")
    targeting.get_by_label("Comment").fill("launch to Sweden and a quarter of orgs")
    save(page)
    expect()(page.locator("#notice")).to_contain_text("Saved")
    switch.click()
    expect()(switch).to_have_attribute("aria-checked", "true")

    def sdk_sees_rule() -> bool:
        detail = sdk.variation_detail("checkout-v2", sweden, None)
        return detail.value is True and detail.reason.get("kind") == "RULE_MATCH"

    wait_until(sdk_sees_rule, timeout=15.0, interval=0.05, what="the streaming SDK serves the rule")
    by_org: dict[str, set[Any]] = {}
    for index in range(200):
        org = f"org-{index % 40}"
        built = Context.builder(f"user-{index}").set("country", "us").set("org", org).build()
        detail = sdk.variation_detail("checkout-v2", built, None)
        assert detail.reason["kind"] == "FALLTHROUGH"
        by_org.setdefault(org, set()).add(detail.value)
    assert all(len(values) == 1 for values in by_org.values()), "bucketed by org, not by key"
    assert {value for values in by_org.values() for value in values} == {True, False}

    stored = ui_server.flag("checkout-v2")["environments"][ENV]
    assert stored["on"] is True
    assert stored["rules"][0]["clauses"][0]["values"] == ["se", "no"]
    rollout = stored["fallthrough"]["rollout"]
    assert rollout["bucketBy"] == "org"
    weights = [(v["variation"], v["weight"]) for v in rollout["variations"]]
    assert weights == [(0, 25000), (1, 75000)]

    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENSHOTS / "flag.png"), full_page=True)
    page.get_by_role("link", name="Debugger").click()
    page.get_by_label("Context (JSON)").fill('{"kind": "user", "key": "u-1", "country": "no"}')
    page.get_by_label("Flag key filter").fill("checkout-v2")
    page.get_by_role("button", name="Evaluate").click()
    row = page.get_by_role("row").filter(has_text="checkout-v2")
    expect()(row).to_contain_text("RULE_MATCH")
    expect()(row).to_contain_text("true")
    expect()(row).to_contain_text("ruleIndex: 0, ruleId: ")
    expect()(row).not_to_contain_text("ruleID")  # the API's duplicate spelling, shown once
    page.screenshot(path=str(SCREENSHOTS / "debugger.png"), full_page=True)
    page.get_by_role("link", name="Audit log").click()
    entry = page.locator(".audit summary").filter(has_text="launch to Sweden and a quarter of orgs")
    expect()(entry).to_contain_text(f"{EMAIL} updated the flag Checkout v2")
    entry.click()
    expect()(page.locator(".audit details[open] .diff .d-add").first).to_be_visible()
    page.screenshot(path=str(SCREENSHOTS / "audit-diff.png"), full_page=True)
    capture_small(browser, context, f"{ui_server.url}/ui/#/p/{PROJECT}/e/{ENV}/flags/checkout-v2")


def capture_small(browser: Any, signed_in: Any, url: str) -> None:
    """A downscaled view of the flag page for docs/screenshot.png (copied by hand)."""
    small = browser.new_context(
        viewport={"width": 1280, "height": 1150},
        device_scale_factor=0.7,
        storage_state=signed_in.storage_state(),
    )
    try:
        page = small.new_page()
        page.goto(url)
        expect()(page.locator("#kill-switch")).to_have_attribute("aria-checked", "true")
        page.screenshot(path=str(SCREENSHOTS / "docs-flag-small.png"))
    finally:
        small.close()


def test_second_tab_sees_the_conflict_keeps_its_input_and_saves_after_reload(
    ui_server: UiServer, context: Any
) -> None:
    ui_server.create_flag("two-tabs")
    first, second = context.new_page(), context.new_page()
    sign_in(first, ui_server)
    open_flag(first, ui_server, "two-tabs")
    open_flag(second, ui_server, "two-tabs")

    first.get_by_role("button", name="Add individual targets").click()
    first.get_by_label("with keys").fill("alice")
    save(first)
    expect()(first.locator("#notice")).to_contain_text("Saved")

    second.get_by_role("button", name="Add rule").click()
    rules = second.get_by_role("region", name="Rules")
    rules.get_by_label("Attribute", exact=True).fill("plan")
    rules.get_by_label("Values", exact=True).fill("gold")
    save(second)
    conflict = second.locator(".conflict")
    expect()(conflict).to_be_visible()
    expect()(conflict).to_contain_text("Someone else changed this flag")
    assert ui_server.flag("two-tabs")["environments"][ENV]["rules"] == []
    expect()(rules.get_by_label("Values", exact=True)).to_have_value("gold")
    expect()(rules.get_by_label("Attribute", exact=True)).to_have_value("plan")
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    second.screenshot(path=str(SCREENSHOTS / "conflict.png"))

    second.get_by_role("button", name="Reload and re-apply my changes").click()
    expect()(rules.get_by_label("Values", exact=True)).to_have_value("gold")
    expect()(second.get_by_label("with keys")).to_have_value("alice")
    save(second)
    expect()(second.locator("#notice")).to_contain_text("Saved")
    stored = ui_server.flag("two-tabs")["environments"][ENV]
    assert stored["targets"] == [{"values": ["alice"], "variation": 0}]
    assert stored["rules"][0]["clauses"][0]["attribute"] == "plan"
    assert stored["rules"][0]["clauses"][0]["values"] == ["gold"]


def test_validation_error_appears_on_the_field_and_keeps_the_input(
    ui_server: UiServer, context: Any
) -> None:
    ui_server.create_flag("numbers")
    page = context.new_page()
    sign_in(page, ui_server)
    open_flag(page, ui_server, "numbers")
    page.get_by_role("button", name="Add rule").click()
    rules = page.get_by_role("region", name="Rules")
    rules.get_by_label("Attribute", exact=True).fill("age")
    rules.get_by_label("Operator").select_option("lessThan")
    values = rules.get_by_label("Values", exact=True)
    values.fill("forty")
    save(page)
    expect()(values).to_have_attribute("aria-invalid", "true")
    expect()(rules.locator(".field-error")).to_contain_text("number")
    expect()(values).to_have_value("forty")
    assert ui_server.flag("numbers")["environments"][ENV]["rules"] == []


def tab_to(page: Any, matches: Callable[[], bool], *, limit: int = 80) -> None:
    for _ in range(limit):
        page.keyboard.press("Tab")
        if matches():
            return
    raise AssertionError("could not reach the element with Tab")


def test_keyboard_only_sign_in_find_a_flag_and_turn_it_on(
    ui_server: UiServer, context: Any
) -> None:
    ui_server.create_flag("keyboard-flag", name="Keyboard flag")
    page = context.new_page()
    page.goto(f"{ui_server.url}/")
    expect()(page.get_by_label("Email")).to_be_focused()
    page.keyboard.type(EMAIL)
    page.keyboard.press("Tab")
    page.keyboard.type(PASSWORD)
    page.keyboard.press("Enter")
    expect()(page.get_by_role("heading", name="Flags", exact=True)).to_be_visible()

    tab_to(page, lambda: page.evaluate("document.activeElement.type === 'search'"))
    page.keyboard.type("keyboard")
    link = page.get_by_role("link", name="Keyboard flag")
    tab_to(page, lambda: link.evaluate("el => el === document.activeElement"))
    outline = link.evaluate("el => getComputedStyle(el).outlineStyle")
    assert outline != "none", "the focused link shows a focus ring"
    page.keyboard.press("Enter")
    switch = page.locator("#kill-switch")
    expect()(switch).to_have_attribute("aria-checked", "false")
    tab_to(page, lambda: switch.evaluate("el => el === document.activeElement"))
    page.keyboard.press("Space")
    expect()(switch).to_have_attribute("aria-checked", "true")
    assert ui_server.flag("keyboard-flag")["environments"][ENV]["on"] is True


def test_signed_out_visit_and_sign_in_log_no_console_error(
    ui_server: UiServer, context: Any
) -> None:
    page = context.new_page()
    errors: list[str] = []
    page.on(
        "console", lambda message: errors.append(message.text) if message.type == "error" else None
    )
    page.on("pageerror", lambda error: errors.append(str(error)))
    failed: list[str] = []
    page.on(
        "response",
        lambda response: (
            failed.append(f"{response.status} {response.url}") if response.status >= 400 else None
        ),
    )

    sign_in(page, ui_server)
    page.reload()
    expect()(page.get_by_role("heading", name="Flags", exact=True)).to_be_visible()

    assert errors == []
    assert failed == []


MAIN_PAGES = {
    "flags": "flags",
    "segments": "segments",
    "debugger": "debugger",
    "fleet": "fleet",
    "audit": "audit",
}


def test_main_pages_fit_1280_pixels_and_are_captured(ui_server: UiServer, context: Any) -> None:
    ui_server.create_flag("layout-flag", tags=["checkout", "web"])
    segment = ui_server.api.post(
        f"/api/v2/segments/{PROJECT}/{ENV}", json={"key": "beta", "name": "Beta testers"}
    )
    assert segment.status_code in (201, 409), segment.text
    page = context.new_page()
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.goto(f"{ui_server.url}/")
    expect()(page.get_by_role("heading", name="Sign in to Flagstaff")).to_be_visible()
    page.screenshot(path=str(SCREENSHOTS / "sign-in.png"))
    sign_in(page, ui_server)
    base = f"{ui_server.url}/ui/#/p/{PROJECT}/e/{ENV}"
    pages = {
        **{name: f"{base}/{path}" for name, path in MAIN_PAGES.items()},
        "flag-layout": f"{base}/flags/layout-flag",
        "segment": f"{base}/segments/beta",
        "keys": f"{ui_server.url}/ui/#/p/{PROJECT}/keys",
        "accounts": f"{ui_server.url}/ui/#/accounts",
        "tokens": f"{ui_server.url}/ui/#/tokens",
        "projects": f"{ui_server.url}/ui/#/projects",
        "webhooks": f"{ui_server.url}/ui/#/webhooks",
        "settings": f"{ui_server.url}/ui/#/p/{PROJECT}/settings",
        "contexts": f"{base}/contexts",
        "new-flag": f"{base}/new-flag",
    }
    widths = {}
    for name, url in pages.items():
        page.goto(url)
        expect()(page.locator("main h1")).to_be_visible()
        page.wait_for_load_state("networkidle")
        widths[name] = page.evaluate("document.documentElement.scrollWidth")
        page.screenshot(path=str(SCREENSHOTS / f"{name}.png"), full_page=True)
    assert {name: width for name, width in widths.items() if width > 1280} == {}


def test_evaluation_chart_and_sdk_fleet_show_what_an_sdk_reported(
    ui_server: UiServer, context: Any
) -> None:
    ui_server.create_flag("charted")
    config = Config(
        ui_server.sdk_key,
        base_uri=ui_server.url,
        stream_uri=ui_server.url,
        events_uri=ui_server.url,
        send_events=True,
    )
    client = LDClient(config=config, start_wait=10)
    try:
        assert client.is_initialized()
        for index in range(30):
            assert client.variation("charted", Context.create(f"user-{index}"), None) is False
        client.flush()
        insights = f"/api/v2/insights/{PROJECT}/{ENV}"

        def counted() -> bool:
            answer = ui_server.api.get(f"{insights}/flags/charted/evaluations")
            return answer.status_code == 200 and answer.json()["total"] >= 30

        wait_until(counted, timeout=30, interval=0.05, what="ingestion counts the evaluations")
        wait_until(
            lambda: bool(ui_server.api.get(f"{insights}/sdk-instances").json()["items"]),
            timeout=30,
            interval=0.05,
            what="ingestion records the SDK instance",
        )
    finally:
        client.close()
    page = context.new_page()
    sign_in(page, ui_server)
    open_flag(page, ui_server, "charted")
    evaluations = page.get_by_role("region", name="Evaluations")
    expect()(evaluations.locator("svg.chart polyline")).to_have_count(1)
    expect()(evaluations.locator(".legend")).to_contain_text("false")
    expect()(evaluations.locator("caption")).to_contain_text("30 evaluations")
    evaluations.locator(".chart").scroll_into_view_if_needed()
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENSHOTS / "chart.png"))
    page.get_by_role("link", name="SDK fleet").click()
    expect()(page.get_by_role("heading", name=f"SDK fleet in {ENV}")).to_be_visible()
    expect()(page.locator("main table tbody tr").first).to_contain_text("python", ignore_case=True)
    page.screenshot(path=str(SCREENSHOTS / "fleet-with-sdk.png"), full_page=True)


def test_segment_editor_and_segment_clause(ui_server: UiServer, context: Any) -> None:
    made = ui_server.api.post(
        f"/api/v2/segments/{PROJECT}/{ENV}", json={"key": "testers", "name": "Testers"}
    )
    assert made.status_code == 201, made.text
    ui_server.create_flag("for-testers")
    page = context.new_page()
    sign_in(page, ui_server)
    page.goto(f"{ui_server.url}/ui/#/p/{PROJECT}/e/{ENV}/segments/testers")
    page.get_by_label("Included keys 1").fill("carol\ndave")
    page.get_by_role("button", name="Add rule").click()
    page.get_by_label("Attribute", exact=True).fill("email")
    page.get_by_label("Operator").select_option("endsWith")
    page.get_by_label("Values", exact=True).fill("@example.com")
    page.get_by_role("button", name="Save segment").click()
    expect()(page.locator("#notice")).to_contain_text("Saved segment testers")
    segment = ui_server.api.get(f"/api/v2/segments/{PROJECT}/{ENV}/testers").json()
    assert sorted(segment["included"]) == ["carol", "dave"]
    assert segment["rules"][0]["clauses"][0]["op"] == "endsWith"
    assert segment["rules"][0]["clauses"][0]["values"] == ["@example.com"]

    open_flag(page, ui_server, "for-testers")
    page.get_by_role("button", name="Add rule").click()
    rules = page.get_by_role("region", name="Rules")
    rules.get_by_label("Operator").select_option("segmentMatch")
    expect()(rules.get_by_label("Attribute", exact=True)).to_be_hidden()
    rules.get_by_label("Values", exact=True).fill("testers")
    save(page)
    expect()(page.locator("#notice")).to_contain_text("Saved")
    [clause] = ui_server.flag("for-testers")["environments"][ENV]["rules"][0]["clauses"]
    assert (clause["op"], clause["values"]) == ("segmentMatch", ["testers"])


def test_environment_keys_copy_and_reset(ui_server: UiServer, context: Any) -> None:
    context.grant_permissions(["clipboard-read", "clipboard-write"], origin=ui_server.url)
    before = ui_server.api.get(f"/api/v2/projects/{PROJECT}/environments/staging").json()
    page = context.new_page()
    sign_in(page, ui_server)
    page.get_by_role("link", name="Keys").click()
    page.get_by_role("button", name="Copy staging SDK key").click()
    assert page.evaluate("navigator.clipboard.readText()") == before["apiKey"]
    page.once("dialog", lambda dialog: dialog.accept())
    page.get_by_role("button", name="Reset staging SDK key").click()
    expect()(page.locator("#notice")).to_contain_text("Reset the SDK key of Staging")
    after = ui_server.api.get(f"/api/v2/projects/{PROJECT}/environments/staging").json()
    assert after["apiKey"] != before["apiKey"]
    page.get_by_role("button", name="Show staging SDK key").click()
    expect()(page.get_by_text(after["apiKey"])).to_be_visible()


def test_flag_settings_rename_tag_archive_and_delete(ui_server: UiServer, context: Any) -> None:
    ui_server.create_flag("settings-flag", tags=["old"])
    page = context.new_page()
    sign_in(page, ui_server)
    open_flag(page, ui_server, "settings-flag")
    settings = page.get_by_role("region", name="Settings (all environments)")
    settings.get_by_label("Name").fill("Renamed flag")
    settings.get_by_label("Tags").fill("checkout, web")
    settings.get_by_label("Available to client-side (browser) SDKs").check()
    settings.get_by_role("button", name="Save settings").click()
    expect()(page.locator("#notice")).to_contain_text("Saved settings")
    expect()(page.get_by_role("heading", name="Renamed flag")).to_be_visible()
    stored = ui_server.flag("settings-flag")
    assert stored["name"] == "Renamed flag"
    assert sorted(stored["tags"]) == ["checkout", "web"]
    assert stored["clientSideAvailability"]["usingEnvironmentId"] is True

    settings.get_by_role("button", name="Archive flag").click()
    expect()(page.locator("#notice")).to_contain_text("Archived")
    assert ui_server.flag("settings-flag")["archived"] is True
    page.once("dialog", lambda dialog: dialog.accept())
    settings.get_by_role("button", name="Delete flag").click()
    expect()(page.get_by_role("heading", name="Flags", exact=True)).to_be_visible()
    gone = ui_server.api.get(f"/api/v2/flags/{PROJECT}/settings-flag")
    assert gone.status_code == 404


def test_token_sign_in_creates_a_reader_who_gets_a_read_only_flag_page(
    ui_server: UiServer, context: Any
) -> None:
    from ui_support import ADMIN_TOKEN

    ui_server.create_flag("read-only-flag")
    page = context.new_page()
    page.goto(f"{ui_server.url}/")
    page.get_by_role("textbox", name="Access token").fill(ADMIN_TOKEN)
    page.get_by_role("button", name="Sign in with token").click()
    expect()(page.get_by_role("heading", name="Flags", exact=True)).to_be_visible()
    expect()(page.locator(".who")).to_contain_text("FLAGSTAFF_ADMIN_TOKEN · admin")
    page.get_by_role("link", name="Settings").click()
    page.get_by_role("link", name="Accounts").click()
    page.get_by_label("Email").fill("reader@example.com")
    page.get_by_label("Password").fill("reader password 1")
    page.get_by_label("Role").select_option("reader")
    page.get_by_role("button", name="Create account").click()
    expect()(page.get_by_role("cell", name="reader@example.com", exact=True)).to_be_visible()
    page.get_by_role("button", name="Sign out").click()
    expect()(page.get_by_role("heading", name="Sign in to Flagstaff")).to_be_visible()

    page.get_by_label("Email").fill("reader@example.com")
    page.get_by_label("Password").fill("reader password 1")
    page.get_by_role("button", name="Sign in", exact=True).click()
    expect()(page.get_by_role("heading", name="Flags", exact=True)).to_be_visible()
    page.get_by_role("link", name="Settings").click()
    expect()(page.get_by_role("heading", name="Settings", exact=True)).to_be_visible()
    expect()(page.get_by_role("link", name="Accounts")).to_have_count(0)
    open_flag(page, ui_server, "read-only-flag")
    expect()(page.get_by_text("Read-only: reader@example.com (reader)")).to_be_visible()
    expect()(page.locator("#kill-switch")).to_be_disabled()
    expect()(page.get_by_role("button", name="Save targeting")).to_be_disabled()


def test_prerequisites_targets_and_rule_order(ui_server: UiServer, context: Any) -> None:
    ui_server.create_flag("base-flag")
    ui_server.create_flag("dependent")
    page = context.new_page()
    sign_in(page, ui_server)
    open_flag(page, ui_server, "dependent")
    page.get_by_role("button", name="Add prerequisite").click()
    page.get_by_label("Prerequisite 1: flag").select_option("base-flag")
    page.get_by_label("must serve").select_option(label="0: true")
    page.get_by_role("button", name="Add individual targets").click()
    page.get_by_label("Serve", exact=True).first.select_option(label="1: false")
    page.get_by_label("with keys").fill("mallory, trent")
    rules = page.get_by_role("region", name="Rules")
    for attribute in ("first", "second"):
        page.get_by_role("button", name="Add rule").click()
        rules.get_by_label("Attribute", exact=True).last.fill(attribute)
        rules.get_by_label("Values", exact=True).last.fill("x")
    rules.get_by_role("button", name="Move up").last.click()
    page.get_by_role("region", name="When the flag is off").get_by_label("Serve").select_option(
        label="0: true"
    )
    save(page)
    expect()(page.locator("#notice")).to_contain_text("Saved")
    stored = ui_server.flag("dependent")["environments"][ENV]
    assert stored["prerequisites"] == [{"key": "base-flag", "variation": 0}]
    assert stored["targets"] == [{"values": ["mallory", "trent"], "variation": 1}]
    assert [rule["clauses"][0]["attribute"] for rule in stored["rules"]] == ["second", "first"]
    assert stored["offVariation"] == 0


def test_create_a_project_and_an_environment(ui_server: UiServer, context: Any) -> None:
    page = context.new_page()
    sign_in(page, ui_server)
    page.get_by_role("link", name="Settings").click()
    page.get_by_role("link", name="Projects").click()
    expect()(page.get_by_role("button", name="Create project")).to_be_visible()
    page.get_by_label("Name").fill("Mobile app")
    page.get_by_label("Key").fill("mobile-app")
    page.get_by_role("button", name="Create project").click()
    expect()(page.locator("#notice")).to_contain_text("Created project mobile-app")
    expect()(page.get_by_label("Project")).to_have_value("mobile-app")
    page.get_by_role("link", name="Keys").click()
    page.get_by_label("Name").fill("QA")
    page.get_by_label("Key").fill("qa")
    page.get_by_role("button", name="Create environment").click()
    expect()(page.locator("#notice")).to_contain_text("Created environment qa")
    expect()(page.get_by_role("rowheader").filter(has_text="QA")).to_be_visible()
    expect()(page.get_by_label("Environment").locator("option", has_text="QA")).to_have_count(1)
    page.get_by_role("button", name="Create environment").click()
    expect()(page.get_by_label("Key")).to_have_attribute("aria-invalid", "true")
    environments = ui_server.api.get("/api/v2/projects/mobile-app/environments").json()
    assert "qa" in [env["key"] for env in environments["items"]]


def test_create_and_revoke_an_access_token(ui_server: UiServer, context: Any) -> None:
    page = context.new_page()
    sign_in(page, ui_server)
    page.get_by_role("link", name="Settings").click()
    page.get_by_role("link", name="Tokens").click()
    # the Settings page before it holds fields labelled Name too: wait for the tokens form
    expect()(page.get_by_role("button", name="Create token")).to_be_visible()
    page.get_by_label("Name").fill("deploy bot")
    page.get_by_label("Role").select_option("writer")
    page.get_by_label("Limited to project").select_option(PROJECT)
    page.get_by_role("button", name="Create token").click()
    secret = page.locator("#new-token code").inner_text()
    assert secret.startswith("api-")
    headers = {"Authorization": secret}
    assert ui_server.api.get("/api/v2/projects", headers=headers).status_code == 200
    expect()(page.get_by_role("row").filter(has_text="deploy bot")).to_contain_text(PROJECT)
    page.once("dialog", lambda dialog: dialog.accept())
    page.get_by_role("button", name="Revoke deploy bot").click()
    expect()(page.locator("#notice")).to_contain_text("Revoked deploy bot")
    assert ui_server.api.get("/api/v2/projects", headers=headers).status_code == 401


SEMANTIC_PATCH = "application/json; domain-model=launchdarkly.semanticpatch"


def semantic_patch(server: UiServer, url: str, body: dict[str, Any]) -> Any:
    response = server.api.patch(url, json=body, headers={"Content-Type": SEMANTIC_PATCH})
    assert response.status_code == 200, response.text
    return response.json()


def test_variations_are_edited_added_and_removed_with_errors_on_the_field(
    ui_server: UiServer, context: Any
) -> None:
    ui_server.create_flag(
        "colors",
        variations=[{"value": "red", "name": "Red"}, {"value": "green"}, {"value": "blue"}],
        defaults={"onVariation": 0, "offVariation": 1},
    )
    page = context.new_page()
    sign_in(page, ui_server)
    open_flag(page, ui_server, "colors")
    section = page.get_by_role("region", name="Variations (all environments)")
    second = section.get_by_label("Variation 2 value")
    second.fill("red")
    section.get_by_role("button", name="Save variations").click()
    expect()(second).to_have_attribute("aria-invalid", "true")
    expect()(section.locator(".field-error")).to_contain_text("already has this value")
    expect()(second).to_have_value("red")
    assert [v["value"] for v in ui_server.flag("colors")["variations"]] == ["red", "green", "blue"]

    second.fill("lime")
    section.get_by_label("Variation 2 name").fill("Lime")
    section.get_by_role("button", name="Remove variation 3").click()
    section.get_by_role("button", name="Add variation").click()
    section.get_by_label("Variation 4 value").fill("yellow")
    section.get_by_label("Variation 4 description").fill("sunny")
    section.get_by_role("button", name="Save variations").click()
    expect()(page.locator("#notice")).to_contain_text("Saved variations")
    variations = ui_server.flag("colors")["variations"]
    assert [(v["value"], v.get("name")) for v in variations] == [
        ("red", "Red"),
        ("lime", "Lime"),
        ("yellow", None),
    ]
    assert variations[2]["description"] == "sunny"
    # the targeting editor offers the new variation at once
    off = page.get_by_role("region", name="When the flag is off").get_by_label("Serve")
    expect()(off.locator("option", has_text="yellow")).to_have_count(1)

    section.get_by_role("button", name="Remove variation 1").click()
    section.get_by_role("button", name="Save variations").click()
    row = section.locator('fieldset[data-field="variations/0"]')
    expect()(row).to_have_attribute("aria-invalid", "true")
    expect()(section.locator(".field-error")).to_contain_text("still in use")
    assert len(ui_server.flag("colors")["variations"]) == 3


def test_segment_targets_of_any_context_kind(ui_server: UiServer, context: Any) -> None:
    made = ui_server.api.post(
        f"/api/v2/segments/{PROJECT}/{ENV}", json={"key": "accounts", "name": "Accounts"}
    )
    assert made.status_code == 201, made.text
    page = context.new_page()
    sign_in(page, ui_server)
    page.goto(f"{ui_server.url}/ui/#/p/{PROJECT}/e/{ENV}/segments/accounts")
    page.get_by_label("Included keys 1").fill("carol")
    page.get_by_role("button", name="Add included context kind").click()
    page.get_by_label("Included context kind 2").fill("organization")
    page.get_by_label("Included keys 2").fill("acme\nglobex")
    page.get_by_role("button", name="Add excluded context kind").click()
    page.get_by_label("Excluded context kind 2").fill("device")
    page.get_by_label("Excluded keys 2").fill("d-1")
    page.get_by_role("button", name="Save segment").click()
    expect()(page.locator("#notice")).to_contain_text("Saved segment accounts")
    segment = ui_server.api.get(f"/api/v2/segments/{PROJECT}/{ENV}/accounts").json()
    assert segment["included"] == ["carol"]
    assert segment["includedContexts"] == [
        {"contextKind": "organization", "values": ["acme", "globex"]}
    ]
    assert segment["excludedContexts"] == [{"contextKind": "device", "values": ["d-1"]}]

    # move acme from included to excluded in one save, after a reload of the page
    page.reload()
    expect()(page.get_by_label("Included context kind 2")).to_have_value("organization")
    page.get_by_label("Included keys 2").fill("globex")
    page.get_by_role("button", name="Add excluded context kind").click()
    page.get_by_label("Excluded context kind 3").fill("organization")
    page.get_by_label("Excluded keys 3").fill("acme")
    page.get_by_role("button", name="Save segment").click()
    expect()(page.locator("#notice")).to_contain_text("Saved segment accounts")
    segment = ui_server.api.get(f"/api/v2/segments/{PROJECT}/{ENV}/accounts").json()
    assert segment["includedContexts"] == [{"contextKind": "organization", "values": ["globex"]}]
    assert {"contextKind": "organization", "values": ["acme"]} in segment["excludedContexts"]

    page.get_by_role("button", name="Add included context kind").click()
    bad_kind = page.get_by_label("Included context kind 3")
    bad_kind.fill("no spaces allowed")
    page.get_by_label("Included keys 3").fill("x")
    page.get_by_role("button", name="Save segment").click()
    expect()(bad_kind).to_have_attribute("aria-invalid", "true")
    expect()(page.locator(".field-error")).to_contain_text("invalid context kind")
    expect()(bad_kind).to_have_value("no spaces allowed")


def test_saving_rules_keeps_the_ids_of_rules_kept_or_edited(
    ui_server: UiServer, context: Any
) -> None:
    flag = ui_server.create_flag("sticky-ids")
    true_id = flag["variations"][0]["_id"]
    country = {"attribute": "country", "op": "in", "values": ["NZ"]}
    plan = {"attribute": "plan", "op": "in", "values": ["free"]}
    before = semantic_patch(
        ui_server,
        f"/api/v2/flags/{PROJECT}/sticky-ids",
        {
            "environmentKey": ENV,
            "instructions": [
                {"kind": "addRule", "variationId": true_id, "clauses": [country]},
                {"kind": "addRule", "variationId": true_id, "clauses": [plan]},
            ],
        },
    )["environments"][ENV]["rules"]
    page = context.new_page()
    sign_in(page, ui_server)
    open_flag(page, ui_server, "sticky-ids")
    rules = page.get_by_role("region", name="Rules")
    rules.get_by_label("Values", exact=True).first.fill("NZ\nAU")
    rules.get_by_role("button", name="Remove rule").last.click()
    page.get_by_role("button", name="Add rule").click()
    rules.get_by_label("Attribute", exact=True).last.fill("beta")
    rules.get_by_label("Values", exact=True).last.fill("yes")
    save(page)
    expect()(page.locator("#notice")).to_contain_text("Saved")
    after = ui_server.flag("sticky-ids")["environments"][ENV]["rules"]
    assert after[0]["_id"] == before[0]["_id"]
    assert after[0]["clauses"][0]["_id"] == before[0]["clauses"][0]["_id"]
    assert after[0]["clauses"][0]["values"] == ["NZ", "AU"]
    assert after[1]["clauses"][0]["attribute"] == "beta"
    assert after[1]["_id"] not in {rule["_id"] for rule in before}


def test_segment_rule_edits_keep_the_ids_of_rules_and_clauses(
    ui_server: UiServer, context: Any
) -> None:
    url = f"/api/v2/segments/{PROJECT}/{ENV}/sticky-segment"
    made = ui_server.api.post(
        f"/api/v2/segments/{PROJECT}/{ENV}", json={"key": "sticky-segment", "name": "Sticky"}
    )
    assert made.status_code == 201, made.text
    plan = {"attribute": "plan", "op": "in", "values": ["gold"]}
    country = {"attribute": "country", "op": "in", "values": ["NZ"]}
    before = semantic_patch(
        ui_server,
        url,
        {
            "instructions": [
                {"kind": "addRule", "clauses": [plan, country]},
                {"kind": "addRule", "clauses": [plan]},
            ]
        },
    )["rules"]
    page = context.new_page()
    sign_in(page, ui_server)
    page.goto(f"{ui_server.url}/ui/#/p/{PROJECT}/e/{ENV}/segments/sticky-segment")
    page.get_by_label("Values", exact=True).first.fill("gold\nsilver")
    page.get_by_label("Include this % of matches (empty: all)").first.fill("25")
    page.get_by_role("button", name="Remove rule").last.click()
    page.get_by_role("button", name="Add rule").click()
    page.get_by_label("Attribute", exact=True).last.fill("beta")
    page.get_by_label("Values", exact=True).last.fill("yes")
    page.get_by_role("button", name="Save segment").click()
    expect()(page.locator("#notice")).to_contain_text("Saved segment sticky-segment")
    after = ui_server.api.get(url).json()["rules"]
    assert after[0]["_id"] == before[0]["_id"]
    assert [clause["_id"] for clause in after[0]["clauses"]] == [
        clause["_id"] for clause in before[0]["clauses"]
    ]
    assert after[0]["clauses"][0]["values"] == ["gold", "silver"]
    assert after[0]["weight"] == 25000
    assert len(after) == 2
    assert after[1]["_id"] not in {rule["_id"] for rule in before}
    assert after[1]["clauses"][0]["attribute"] == "beta"

    # a bad value in a kept clause is shown on that clause's field, and nothing is saved
    page.get_by_label("Operator").first.select_option("matches")
    values = page.get_by_label("Values", exact=True).first
    values.fill("(")
    page.get_by_role("button", name="Save segment").click()
    expect()(values).to_have_attribute("aria-invalid", "true")
    expect()(values).to_have_value("(")
    assert ui_server.api.get(url).json()["rules"] == after
