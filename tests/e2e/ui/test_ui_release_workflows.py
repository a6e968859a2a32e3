"""The release-workflow parts of the flag page in headless Chromium against a real `flagstaff
serve` (docs/ui.md, "Release workflows"): an approval request reviewed with its diff, required
comments asked for in every edit path, scheduled changes (create, conflict, edit, delete, a time
in the past) and flag triggers (the URL shown once, called for real, disabled, reset, deleted).
The Webhooks page: a bad statement marked on its field, a webhook created,
a receiver that fails the first attempt (the log shows both attempts with status and latency, and
every body's signature checks), edited and deleted. Screenshots go to build/screenshots/."""

from __future__ import annotations

import datetime
import hashlib
import hmac
import json
import threading
from http.server import BaseHTTPRequestHandler
from typing import Any, ClassVar

import httpx
import pytest
from support.deadlines import wait_until
from support.threaded_servers import serve_http
from ui_support import PROJECT, SCREENSHOTS, UiServer, expect, sign_in

pytestmark = pytest.mark.slow

WRITER = "workflows-writer@example.com"
WRITER_PASSWORD = "writer password 3"


def open_flag_in(page: Any, server: UiServer, key: str, env: str) -> None:
    page.goto(f"{server.url}/ui/#/p/{PROJECT}/e/{env}/flags/{key}")
    expect()(page.locator("#kill-switch")).to_be_visible()


def set_environment(server: UiServer, env: str, path: str, value: Any) -> None:
    answer = server.api.patch(
        f"/api/v2/projects/{PROJECT}/environments/{env}",
        json=[{"op": "replace", "path": path, "value": value}],
    )
    assert answer.status_code == 200, answer.text


def add_environment(server: UiServer, key: str) -> None:
    made = server.api.post(
        f"/api/v2/projects/{PROJECT}/environments",
        json={"key": key, "name": key, "color": "aaaaaa"},
    )
    assert made.status_code == 201, made.text


def local_input(moment: datetime.datetime) -> str:
    """What a `datetime-local` input takes, in the browser's (the test process's) zone."""
    return moment.astimezone().strftime("%Y-%m-%dT%H:%M")


def audit_comments(server: UiServer, flag: str) -> list[str]:
    answer = server.api.get("/api/v2/auditlog", params={"q": flag, "limit": 20})
    assert answer.status_code == 200, answer.text
    return [item.get("comment") or "" for item in answer.json()["items"]]


def test_a_writers_edit_becomes_a_request_reviewed_with_its_diff(
    ui_server: UiServer, context: Any
) -> None:
    ui_server.create_flag("reviewed", name="Reviewed")
    set_environment(ui_server, "production", "/approvalSettings/required", True)
    made = ui_server.api.post(
        "/api/v2/accounts", json={"email": WRITER, "password": WRITER_PASSWORD, "role": "writer"}
    )
    assert made.status_code == 201, made.text
    page = context.new_page()
    sign_in(page, ui_server, email=WRITER, password=WRITER_PASSWORD)
    open_flag_in(page, ui_server, "reviewed", "production")
    off = page.locator('[data-field="offVariation"]')
    off.select_option("0")
    page.locator("#save-targeting").click()
    expect()(page.locator("#approval-offer")).to_contain_text("requires approval")
    page.locator("#request-approval").click()
    card = page.locator("#approval-requests li.approval")
    expect()(card).to_contain_text("Off variation")
    # the diff: what production serves when off now, and what the request would make it serve
    expect()(card.locator(".d-del")).to_have_text("- false")
    expect()(card.locator(".d-add")).to_have_text("+ true")
    assert ui_server.flag("reviewed")["environments"]["production"]["offVariation"] == 1
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    card.screenshot(path=str(SCREENSHOTS / "approval-diff.png"))
    # a flag-wide edit that alters what production serves is refused too, and offered as a request
    page.get_by_label("Available to client-side (browser) SDKs").check()
    page.get_by_role("button", name="Save settings").click()
    expect()(page.locator("#approval-offer")).to_contain_text("requires approval")
    page.locator("#request-approval").click()
    expect()(page.locator("#approval-requests li.approval")).to_have_count(2)
    expect()(page.locator("#approval-requests")).to_contain_text("turnOnClientSideAvailability")
    flag = ui_server.flag("reviewed")
    assert flag["clientSideAvailability"]["usingEnvironmentId"] is False

    # the flag list's row switch, refused the same way, asks and makes the request too
    page.get_by_role("link", name="Flags", exact=True).click()
    page.once("dialog", lambda dialog: dialog.accept())
    page.get_by_role("switch", name="reviewed in production").click()
    expect()(page.locator("#notice")).to_contain_text("Approval requested for reviewed")
    base = f"/api/v2/projects/{PROJECT}/flags/reviewed/environments/production/approval-requests"
    kinds = [item["instructions"][0]["kind"] for item in ui_server.api.get(base).json()["items"]]
    assert sorted(kinds) == ["turnFlagOn", "turnOnClientSideAvailability", "updateOffVariation"]
    assert ui_server.flag("reviewed")["environments"]["production"]["on"] is False


def test_required_comments_are_asked_for_in_every_edit_path(
    ui_server: UiServer, context: Any
) -> None:
    ui_server.create_flag("commented", name="Commented")
    set_environment(ui_server, "staging", "/requireComments", True)
    add_environment(ui_server, "confirmed")
    set_environment(ui_server, "confirmed", "/confirmChanges", True)
    page = context.new_page()
    sign_in(page, ui_server)
    open_flag_in(page, ui_server, "commented", "staging")
    expect()(page.get_by_label("Comment (required)").first).to_be_visible()

    # the kill switch asks in a dialog, which refuses a blank comment
    page.locator("#kill-switch").click()
    dialog = page.locator("#comment-dialog")
    expect()(dialog).to_be_visible()
    dialog.get_by_role("button", name="Send with this comment").click()
    expect()(dialog.get_by_role("alert")).to_contain_text("A comment is required")
    dialog.get_by_label("Comment (required)").fill("launch for the sale")
    dialog.get_by_label("Comment (required)").press("Enter")
    expect()(page.locator("#kill-switch")).to_have_attribute("aria-checked", "true")
    assert "launch for the sale" in audit_comments(ui_server, "commented")

    # saving targeting without a comment is refused on the comment field, nothing is sent
    page.locator('[data-field="offVariation"]').select_option("0")
    page.locator("#save-targeting").click()
    targeting = page.locator('form[aria-label="Targeting in staging"]')
    targeting_comment = targeting.locator('[data-field="comment"]')
    expect()(targeting_comment).to_have_attribute("aria-invalid", "true")
    assert ui_server.flag("commented")["environments"]["staging"]["offVariation"] == 1
    targeting_comment.fill("serve true when off")
    page.locator("#save-targeting").click()
    expect()(page.locator("#notice")).to_contain_text("Saved.")
    assert ui_server.flag("commented")["environments"]["staging"]["offVariation"] == 0

    # the schedule and trigger forms, and the segment editor, carry a required comment field too
    expect()(page.locator("#schedule-form").get_by_label("Comment (required)")).to_be_visible()
    expect()(
        page.get_by_role("form", name="Add a trigger in staging").get_by_label("Comment (required)")
    ).to_be_visible()
    made = ui_server.api.post(
        f"/api/v2/segments/{PROJECT}/staging", json={"key": "vips", "name": "VIPs"}
    )
    assert made.status_code == 201, made.text
    page.goto(f"{ui_server.url}/ui/#/p/{PROJECT}/e/staging/segments/vips")
    expect()(page.get_by_role("heading", name="VIPs")).to_be_visible()
    expect()(page.get_by_label("Comment (required)")).to_be_visible()

    # where the environment asks for confirmation, the kill switch asks; Escape changes nothing
    open_flag_in(page, ui_server, "commented", "confirmed")
    page.locator("#kill-switch").click()
    dialog = page.locator("#comment-dialog")
    expect()(dialog).to_contain_text("asks for confirmation")
    page.keyboard.press("Escape")
    expect()(dialog).to_have_count(0)
    expect()(page.locator("#kill-switch")).to_be_focused()
    assert ui_server.flag("commented")["environments"]["confirmed"]["on"] is False
    page.locator("#kill-switch").click()
    dialog.get_by_role("button", name="Confirm").click()
    expect()(page.locator("#kill-switch")).to_have_attribute("aria-checked", "true")


def test_scheduled_changes_are_created_edited_and_deleted_with_conflicts_shown(
    ui_server: UiServer, context: Any
) -> None:
    add_environment(ui_server, "qa")
    ui_server.create_flag("scheduled", name="Scheduled")
    page = context.new_page()
    sign_in(page, ui_server)
    open_flag_in(page, ui_server, "scheduled", "qa")
    form = page.locator("#schedule-form")
    when = form.get_by_label("When")

    # a time in the past is refused on the When field
    when.fill(local_input(datetime.datetime.now(datetime.UTC) - datetime.timedelta(hours=2)))
    form.get_by_role("button", name="Schedule").click()
    expect()(when).to_have_attribute("aria-invalid", "true")
    expect()(form.get_by_role("alert")).to_contain_text("past")

    tomorrow = datetime.datetime.now(datetime.UTC) + datetime.timedelta(days=1)
    when.fill(local_input(tomorrow))
    form.get_by_label("Change").select_option("turnFlagOn")
    form.get_by_role("button", name="Schedule").click()
    listed = page.locator("#scheduled-changes li.scheduled")
    expect()(listed).to_have_count(1)
    expect()(listed.first).to_contain_text("pending")
    expect()(listed.first.locator(".d-add")).to_have_text("+ On")

    # a second change of the same setting conflicts: refused, then scheduled anyway on request
    form = page.locator("#schedule-form")
    form.get_by_label("When").fill(local_input(tomorrow + datetime.timedelta(hours=1)))
    form.get_by_label("Change").select_option("turnFlagOff")
    form.get_by_role("button", name="Schedule").click()
    page.locator("#schedule-anyway").click()
    expect()(listed).to_have_count(2)
    expect()(page.locator("#scheduled-changes")).to_contain_text("Conflict:")

    base = f"/api/v2/projects/{PROJECT}/flags/scheduled/environments/qa/scheduled-changes"
    items = ui_server.api.get(base).json()["items"]
    first_id = items[0]["_id"]
    # edit the first one's time: two days ahead
    later = tomorrow + datetime.timedelta(days=1)
    first = page.locator(f'#scheduled-changes li[data-id="{first_id}"]')
    first.get_by_role("button", name="Edit").click()
    first.get_by_label("When").fill(local_input(later))
    first.get_by_role("button", name="Save change").click()
    expect()(page.locator("#notice")).to_contain_text("Scheduled change saved")
    edited = ui_server.api.get(f"{base}/{first_id}").json()
    assert abs(edited["executionDate"] - later.timestamp() * 1000) < 60_000

    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.locator("#scheduled-changes").screenshot(path=str(SCREENSHOTS / "scheduled-changes.png"))

    page.once("dialog", lambda dialog: dialog.accept())
    first.get_by_role("button", name="Delete").click()
    expect()(listed).to_have_count(1)
    remaining = ui_server.api.get(base).json()["items"]
    assert [item["_id"] for item in remaining] != [first_id]
    assert len(remaining) == 1
    assert ui_server.flag("scheduled")["environments"]["qa"]["on"] is False


def test_a_trigger_url_is_shown_once_works_and_stops_when_disabled_reset_or_deleted(
    ui_server: UiServer, context: Any
) -> None:
    ui_server.create_flag("triggered", name="Triggered")
    page = context.new_page()
    sign_in(page, ui_server)
    open_flag_in(page, ui_server, "triggered", "staging")
    add = page.get_by_role("form", name="Add a trigger in staging")
    add.get_by_label("Action").select_option("turnFlagOn")
    add.get_by_label("Comment (required)").fill("alert hook")
    add.get_by_role("button", name="Add trigger").click()
    url = page.locator("#trigger-url").input_value()
    assert "/webhook/triggers/" in url
    assert "*" not in url
    row = page.locator("#flag-triggers tbody tr")
    expect()(row).to_have_count(1)
    expect()(row).to_contain_text("********")

    with httpx.Client(timeout=10) as client:
        assert client.post(url).status_code == 200
        assert ui_server.flag("triggered")["environments"]["staging"]["on"] is True
        page.reload()
        expect()(row).to_contain_text("1")

        page.get_by_role("button", name="Disable the generic-trigger trigger that turns on").click()
        expect()(row).to_contain_text("Disabled")
        assert client.post(url).status_code == 409
        page.get_by_role("button", name="Enable the generic-trigger trigger that turns on").click()
        expect()(row).to_contain_text("Enabled")

        page.once("dialog", lambda dialog: dialog.accept())
        page.get_by_role("button", name="Reset the URL of the generic-trigger trigger").click()
        expect()(page.locator("#trigger-url")).not_to_have_value(url)
        fresh = page.locator("#trigger-url").input_value()
        assert client.post(url).status_code == 404
        assert client.post(fresh).status_code == 200

        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        page.locator("#flag-triggers").screenshot(path=str(SCREENSHOTS / "triggers.png"))
        assert page.evaluate("document.documentElement.scrollWidth") <= 1280

        page.once("dialog", lambda dialog: dialog.accept())
        page.get_by_role("button", name="Delete the generic-trigger trigger that turns on").click()
        expect()(page.locator("#flag-triggers")).to_contain_text("No triggers")
        assert client.post(fresh).status_code == 404


def test_a_segment_edit_needing_approval_becomes_a_request_an_admin_applies(
    ui_server: UiServer, context: Any, browser: Any
) -> None:
    add_environment(ui_server, "gated")
    set_environment(ui_server, "gated", "/resourceApprovalSettings/segment/required", True)
    made = ui_server.api.post(
        f"/api/v2/segments/{PROJECT}/gated", json={"key": "beta", "name": "Beta"}
    )
    assert made.status_code == 201, made.text
    account = ui_server.api.post(
        "/api/v2/accounts", json={"email": WRITER, "password": WRITER_PASSWORD, "role": "writer"}
    )
    assert account.status_code in (201, 409), account.text
    segment_page = f"{ui_server.url}/ui/#/p/{PROJECT}/e/gated/segments/beta"

    writer = context.new_page()
    sign_in(writer, ui_server, email=WRITER, password=WRITER_PASSWORD)
    writer.goto(segment_page)
    writer.get_by_label("Included keys 1").fill("erin")
    writer.get_by_role("button", name="Save segment").click()
    expect()(writer.locator("#approval-offer")).to_contain_text("requires approval")
    writer.locator("#request-approval").click()
    listed = writer.locator("#approval-requests li.approval")
    expect()(listed).to_have_count(1)
    expect()(listed).to_contain_text("erin")
    assert ui_server.api.get(f"/api/v2/segments/{PROJECT}/gated/beta").json()["included"] == []

    admin_context = browser.new_context(viewport={"width": 1280, "height": 900})
    admin_context.set_default_timeout(15_000)
    try:
        admin = admin_context.new_page()
        sign_in(admin, ui_server)
        admin.goto(segment_page)
        requests = admin.locator("#approval-requests")
        requests.get_by_role("button", name="Approve").click()
        expect()(requests).to_contain_text("review: approved")
        requests.get_by_role("button", name="Apply").click()
        expect()(requests).to_contain_text("Status: completed")
    finally:
        admin_context.close()
    assert ui_server.api.get(f"/api/v2/segments/{PROJECT}/gated/beta").json()["included"] == [
        "erin"
    ]


SECRET = "ui-webhook-secret-0123456789"


class FlakyReceiver(BaseHTTPRequestHandler):
    """Answers 500 to the first delivery and 204 after; keeps whether each signature checked."""

    lock = threading.Lock()
    calls: ClassVar[list[bool]] = []

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        expected = hmac.new(SECRET.encode(), body, hashlib.sha256).hexdigest()
        with self.lock:
            self.calls.append(hmac.compare_digest(expected, self.headers["X-LD-Signature"] or ""))
            first = len(self.calls) == 1
        self.send_response(500 if first else 204)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, format: str, *args: Any) -> None:
        return


def test_webhooks_page_creates_edits_and_shows_each_delivery_attempt(
    ui_server: UiServer, context: Any
) -> None:
    ui_server.create_flag("hooked", name="Hooked")
    page = context.new_page()
    sign_in(page, ui_server)
    page.get_by_role("link", name="Settings").click()
    page.get_by_role("link", name="Webhooks").click()
    expect()(page.get_by_role("heading", name="Webhooks", exact=True)).to_be_visible()
    with serve_http(FlakyReceiver) as receiver:
        form = page.get_by_role("form", name="Add a webhook")
        form.get_by_label("Name").fill("audit sink")
        form.get_by_label("URL").fill(f"{receiver.url}/hook")
        form.get_by_label("Secret").fill(SECRET)
        statements = form.get_by_label("Policy statements")
        bad = [{"effect": "allow", "actions": ["flyToTheMoon"], "resources": ["proj/*"]}]
        statements.fill(json.dumps(bad))
        form.get_by_role("button", name="Add webhook").click()
        expect()(statements).to_have_attribute("aria-invalid", "true")
        expect()(form.get_by_role("alert")).to_contain_text("flyToTheMoon")
        assert ui_server.api.get("/api/v2/webhooks").json()["items"] == []
        good = [{"effect": "allow", "actions": ["*"], "resources": ["proj/*:env/*:flag/hooked"]}]
        statements.fill(json.dumps(good))
        form.get_by_role("button", name="Add webhook").click()
        expect()(page.get_by_role("heading", name="audit sink")).to_be_visible()
        hook = ui_server.api.get("/api/v2/webhooks").json()["items"][0]
        assert hook["statements"][0]["resources"] == ["proj/*:env/*:flag/hooked"]

        renamed = ui_server.api.patch(
            f"/api/v2/flags/{PROJECT}/hooked",
            json=[{"op": "replace", "path": "/name", "value": "Hooked flag"}],
        )
        assert renamed.status_code == 200, renamed.text
        deliveries = f"/api/v2/webhooks/{hook['_id']}/deliveries"

        def delivered() -> bool:
            items = ui_server.api.get(deliveries).json()["items"]
            return bool(items) and items[0]["status"] == "delivered"

        wait_until(
            delivered,
            what="the rename delivered after one failed attempt",
            timeout=60,
            interval=0.2,
        )
        page.get_by_role("button", name="Refresh").click()
        row = page.locator("#deliveries tbody tr").first
        expect()(row).to_contain_text("delivered")
        expect()(row.locator("td").nth(2)).to_have_text("2")
        expect()(row.locator(".attempts li")).to_have_count(2)
        expect()(row.locator(".attempts li").first).to_contain_text("HTTP 500")
        expect()(row.locator(".attempts li").nth(1)).to_contain_text("HTTP 204")
        expect()(row.locator(".attempts li").nth(1)).to_contain_text(" ms")
        expect()(page.locator("main")).to_contain_text(
            "delivered 1 · failed attempts 1 · pending 0"
        )
        assert FlakyReceiver.calls == [True, True]
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        page.locator("main").screenshot(path=str(SCREENSHOTS / "webhook-deliveries.png"))
        assert page.evaluate("document.documentElement.scrollWidth") <= 1280

        settings = page.get_by_role("form", name="Settings")
        settings.get_by_label("On", exact=True).uncheck()
        settings.get_by_label("Name").fill("audit sink (paused)")
        settings.get_by_role("button", name="Save webhook").click()
        expect()(page.get_by_role("heading", name="audit sink (paused)")).to_be_visible()
        edited = ui_server.api.get(f"/api/v2/webhooks/{hook['_id']}").json()
        assert edited["on"] is False
        assert edited["name"] == "audit sink (paused)"

        page.once("dialog", lambda dialog: dialog.accept())
        settings.get_by_role("button", name="Delete webhook").click()
        expect()(page.locator("#webhooks")).to_have_text("No webhooks yet.")
        assert ui_server.api.get("/api/v2/webhooks").json()["items"] == []
