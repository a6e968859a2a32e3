"""The status page in Debian's Chromium with region a's control plane gone: two regions on
private PostgreSQL servers (a's primary, b's hot standby), each with its API and a delivery node,
an ingestion node in a that counts an SDK instance; a's API and database are killed. Region b's
delivery node's page, opened with JavaScript off, shows the notices posted before, a's API and
database unreachable with when they were last seen, b's read-only API, and the SDK fleet; it
loads nothing but itself and fits 320 and 1280 px without scrolling sideways. Screenshots go to
build/screenshots/ (docs/status-page.png is the 1280 px one, copied by hand)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from flagstaff_sdk import Client
from flagstaff_sdk import Config as OwnConfig
from flagstaff_sdk.config import Endpoint
from flagstaff_sdk.events import EventOptions, sink_factory
from status_page_support import ADMIN, components, feed, host, two_regions
from support import management
from support.deadlines import wait_until
from support.prerequisites import REPO_ROOT
from support.processes import loopback_get

pytestmark = [pytest.mark.service, pytest.mark.slow]

SCREENSHOTS = REPO_ROOT / "build" / "screenshots"
SETTLE_SECONDS = 60.0
CRITICAL = {
    "title": "Region a is down: flag edits are paused",
    "message": "Flags are still served by every delivery node, with the data they had. For an "
    "emergency change use the kill switch (docs/break-glass.md).",
    "severity": "critical",
    "regions": ["a"],
}
READ_ONLY = {
    "title": "Region b is read-only until it is promoted",
    "message": "Flags and segments can be read through region b's API; edits wait for the "
    "promotion.",
    "severity": "warning",
    "regions": ["b"],
}


def expect() -> Any:
    from playwright.sync_api import expect as playwright_expect

    return playwright_expect


def test_the_page_in_a_browser_with_region_a_lost(browser: Any, tmp_path: Path) -> None:
    with two_regions(tmp_path) as system:
        with management.admin_client(system.api_a.url, ADMIN) as api:
            keys = management.create_project(api)
        endpoint = Endpoint(
            stream_uri=system.delivery_a.url,
            poll_uri=system.delivery_a.url,
            events_uri=system.ingest_a.url,
        )
        sdk = Client(
            OwnConfig(keys.sdk_key, endpoints=(endpoint,), event_sink=sink_factory(EventOptions()))
        )
        try:
            assert sdk.wait_for_initialization(30)
            critical = system.post_notice(**CRITICAL)
            read_only = system.post_notice(**READ_ONLY)

            def region_b_knows_everything() -> bool:
                document = feed(system.delivery_b)
                notices = [n["_id"] for n in document["notices"]]
                fleet = [row for row in document["fleet"] if row["running"] == 1]
                found = components(document)
                api_a = found.get(("api", host(system.api_a)))
                return (
                    notices == [critical["_id"], read_only["_id"]]
                    and bool(fleet)
                    and api_a is not None
                    and api_a["state"] == "operational"
                )

            wait_until(
                region_b_knows_everything,
                timeout=SETTLE_SECONDS,
                what="region b's page to show the notices, region a and the SDK fleet",
            )

            system.lose_region_a_control_plane()

            def region_a_lost() -> bool:
                found = components(feed(system.delivery_b))
                return all(
                    found[(kind, host(system.api_a))]["state"] == "unreachable"
                    for kind in ("api", "database", "changeFeed")
                )

            wait_until(region_a_lost, timeout=SETTLE_SECONDS, what="region a's API unreachable")
            page_url = f"{system.delivery_b.url}/status/page"
            check_page(browser, page_url, system)
            check_widths(browser, page_url)
            # region a's own delivery node still serves its page, notices included
            page_a = loopback_get(f"{system.delivery_a.url}/status/page", timeout=5)
            assert page_a.status_code == 200
            assert CRITICAL["title"] in page_a.text
        finally:
            sdk.close()


def check_page(browser: Any, url: str, system: Any) -> None:
    context = browser.new_context(
        viewport={"width": 1280, "height": 900}, java_script_enabled=False
    )
    requested: list[str] = []
    context.on("request", lambda request: requested.append(request.url))
    try:
        page = context.new_page()
        response = page.goto(url)
        assert response is not None
        assert response.status == 200
        heading = page.get_by_role("heading", level=1)
        expect()(heading).to_have_text("Flagstaff status")
        expect()(page.locator(".banner")).to_contain_text("Degraded")
        notices = page.get_by_role("heading", level=3)
        expect()(notices).to_have_text(
            [f"Critical {CRITICAL['title']}", f"Warning {READ_ONLY['title']}"]
        )
        regions = page.get_by_role("heading", level=2)
        expect()(regions).to_have_text(
            ["Notices", "Region b ✓ Operational", "Region a ▲ Degraded", "SDK fleet"]
        )
        region_a = page.get_by_role("region", name="Region a")
        api_row = region_a.get_by_role("row").filter(has_text="Management API")
        expect()(api_row).to_contain_text(host(system.api_a))
        expect()(api_row).to_contain_text("Unreachable")
        expect()(api_row).to_contain_text("Last seen")
        database_row = region_a.get_by_role("row").filter(has_text="Database")
        expect()(database_row).to_contain_text("Unreachable")
        region_b = page.get_by_role("region", name="Region b")
        expect()(region_b.get_by_role("row").filter(has_text="Management API")).to_contain_text(
            "read-only: edits go to region a until a promotion"
        )
        expect()(region_b.get_by_role("row").filter(has_text="Database")).to_contain_text("Standby")
        fleet = page.get_by_role("region", name="SDK fleet")
        expect()(fleet.get_by_role("row").filter(has_text=host(system.ingest_a))).to_contain_text(
            "1"
        )
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(SCREENSHOTS / "status-page.png"), full_page=True)
        # the page is all there is: no script, style sheet, font or image from anywhere
        assert requested == [url]
    finally:
        context.close()


def check_widths(browser: Any, url: str) -> None:
    for width in (320, 1280):
        context = browser.new_context(viewport={"width": width, "height": 800})
        try:
            page = context.new_page()
            page.goto(url)
            assert page.evaluate("document.documentElement.scrollWidth") <= width
            expect()(page.get_by_role("heading", level=1)).to_be_visible()
            if width == 320:
                page.screenshot(path=str(SCREENSHOTS / "status-page-320.png"), full_page=True)
        finally:
            context.close()
