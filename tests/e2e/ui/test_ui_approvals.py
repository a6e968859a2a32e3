"""Approval requests in the web UI, in headless Chromium against a real `flagstaff serve`
(docs/workflows.md, "Approval requests"): production requires approval; a writer's toggle is
refused and offered as an approval request, which the writer may not approve; an admin sees it
on the flag page, approves and applies it, and the flag is on. A screenshot of the flag page's
requests goes to build/screenshots/approvals.png."""

from __future__ import annotations

from typing import Any

import pytest
from ui_support import ENV, PROJECT, SCREENSHOTS, UiServer, expect, open_flag, sign_in

pytestmark = pytest.mark.slow

WRITER = "approvals-writer@example.com"
WRITER_PASSWORD = "writer password 2"


def test_a_refused_toggle_becomes_a_request_an_admin_approves_and_applies(
    ui_server: UiServer, context: Any, browser: Any
) -> None:
    ui_server.create_flag("gated", name="Gated")
    configured = ui_server.api.patch(
        f"/api/v2/projects/{PROJECT}/environments/{ENV}",
        json=[{"op": "replace", "path": "/approvalSettings/required", "value": True}],
    )
    assert configured.status_code == 200, configured.text
    made = ui_server.api.post(
        "/api/v2/accounts", json={"email": WRITER, "password": WRITER_PASSWORD, "role": "writer"}
    )
    assert made.status_code == 201, made.text

    writer = context.new_page()
    sign_in(writer, ui_server, email=WRITER, password=WRITER_PASSWORD)
    open_flag(writer, ui_server, "gated")
    expect()(writer.locator("#approval-requests")).to_contain_text("No approval requests")
    writer.locator("#kill-switch").click()
    offer = writer.locator("#approval-offer")
    expect()(offer).to_contain_text("requires approval")
    expect()(writer.locator("#kill-switch")).to_have_attribute("aria-checked", "false")
    writer.locator("#request-approval").click()
    requests = writer.locator("#approval-requests")
    expect()(requests).to_contain_text("Status: pending; review: pending")
    expect()(requests).to_contain_text("turnFlagOn")
    # the requester is offered no approval of their own request, and cannot apply it yet
    expect()(requests.get_by_role("button", name="Approve")).to_have_count(0)
    expect()(requests.get_by_role("button", name="Apply")).to_be_disabled()
    assert ui_server.flag("gated")["environments"][ENV]["on"] is False

    admin_context = browser.new_context(viewport={"width": 1280, "height": 900})
    admin_context.set_default_timeout(15_000)
    try:
        admin = admin_context.new_page()
        sign_in(admin, ui_server)
        open_flag(admin, ui_server, "gated")
        listed = admin.locator("#approval-requests")
        expect()(listed).to_contain_text(WRITER)
        listed.get_by_role("button", name="Approve").click()
        expect()(listed).to_contain_text("review: approved")
        expect()(listed).to_contain_text("approved (")
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        listed.screenshot(path=str(SCREENSHOTS / "approvals.png"))
        listed.get_by_role("button", name="Apply").click()
        expect()(listed).to_contain_text("Status: completed")
        expect()(admin.locator("#kill-switch")).to_have_attribute("aria-checked", "true")
    finally:
        admin_context.close()
    assert ui_server.flag("gated")["environments"][ENV]["on"] is True
