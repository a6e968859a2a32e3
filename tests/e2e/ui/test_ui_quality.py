"""Every page of the UI, loaded afresh in headless Chromium, in the light and the dark colour
scheme (issue 20): no serious or critical axe-core violation, no layout shift while its data
loads, nothing scrolling sideways at 768 px (1280 px: test_ui.py), and the loading and empty
states. Each page is captured to build/screenshots/quality/ (docs/ui.md shows them)."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import pytest
from accessibility import blocking_violations, layout_shifts, watch_layout_shifts
from ui_support import ENV, PROJECT, SCREENSHOTS, UiServer, expect, sign_in

pytestmark = pytest.mark.slow

EMPTY_PROJECT = "empty-shop"
# Below this a shift is rounding, not content moving (Chrome's "good" CLS is < 0.1).
MAX_SHIFT = 0.01


def project_pages(server: UiServer) -> dict[str, str]:
    base = f"{server.url}/ui/#/p/{PROJECT}/e/{ENV}"
    return {
        "flags": f"{base}/flags",
        "new-flag": f"{base}/new-flag",
        "flag": f"{base}/flags/quality-checkout",
        "segments": f"{base}/segments",
        "segment": f"{base}/segments/quality-beta",
        "contexts": f"{base}/contexts",
        "context": f"{base}/contexts/user/quality-anna",
        "debugger": f"{base}/debugger",
        "fleet": f"{base}/fleet",
        "audit": f"{base}/audit",
        "keys": f"{server.url}/ui/#/p/{PROJECT}/keys",
        "settings": f"{server.url}/ui/#/p/{PROJECT}/settings",
        "projects": f"{server.url}/ui/#/projects",
        "tokens": f"{server.url}/ui/#/tokens",
        "accounts": f"{server.url}/ui/#/accounts",
        "empty-flags": f"{server.url}/ui/#/p/{EMPTY_PROJECT}/e/production/flags",
        "empty-segments": f"{server.url}/ui/#/p/{EMPTY_PROJECT}/e/production/segments",
    }


@pytest.fixture(scope="module")
def quality_data(ui_server: UiServer) -> UiServer:
    ui_server.create_flag("quality-checkout", name="Checkout", tags=["checkout", "web"])
    segment = ui_server.api.post(
        f"/api/v2/segments/{PROJECT}/{ENV}", json={"key": "quality-beta", "name": "Beta testers"}
    )
    assert segment.status_code == 201, segment.text
    anna = {"kind": "user", "key": "quality-anna", "name": "Anna", "country": "se"}
    feature = {"kind": "feature", "key": "quality-checkout", "variation": 1, "value": False}
    now = int(time.time() * 1000)
    ui_server.send_events(
        [
            {"kind": "index", "creationDate": now - 1, "context": anna},
            {**feature, "creationDate": now, "context": anna},
        ],
        seen=("user", "quality-anna"),
    )
    empty = ui_server.api.post("/api/v2/projects", json={"key": EMPTY_PROJECT, "name": "Empty"})
    assert empty.status_code == 201, empty.text
    return ui_server


def open_fresh(page: Any, url: str) -> None:
    """A full load (not a hash change), so the shell and the page fetch their data as on a visit,
    and the page is measured once its data is in."""
    page.goto("about:blank")
    page.goto(url)
    expect()(page.locator("main h1")).to_be_visible()
    expect()(page.locator("main")).not_to_have_attribute("aria-busy", "true")


@pytest.fixture(params=["light", "dark"])
def scheme_context(browser: Any, request: pytest.FixtureRequest) -> Iterator[tuple[str, Any]]:
    made = browser.new_context(viewport={"width": 1280, "height": 900}, color_scheme=request.param)
    made.set_default_timeout(15_000)
    watch_layout_shifts(made)
    try:
        yield request.param, made
    finally:
        made.close()


def test_every_page_passes_axe_and_loads_without_layout_shift(
    quality_data: UiServer, scheme_context: tuple[str, Any]
) -> None:
    scheme, context = scheme_context
    shots = SCREENSHOTS / "quality"
    shots.mkdir(parents=True, exist_ok=True)
    page = context.new_page()
    page.goto(f"{quality_data.url}/")
    expect()(page.get_by_role("heading", name="Sign in to Flagstaff")).to_be_visible()
    found = {"sign-in": blocking_violations(page)}
    page.screenshot(path=str(shots / f"sign-in-{scheme}.png"))
    sign_in(page, quality_data)
    shifts = {}
    for name, url in project_pages(quality_data).items():
        open_fresh(page, url)
        found[name] = blocking_violations(page)
        shifts[name] = layout_shifts(page)
        page.screenshot(path=str(shots / f"{name}-{scheme}.png"))
    problems = [f"{name}: {line}" for name, lines in found.items() for line in lines]
    problems += [
        f"{name}: shift {total:.3f} {entries}"
        for name, (total, entries) in shifts.items()
        if total > MAX_SHIFT
    ]
    assert not problems, "\n".join(problems)


def test_every_page_fits_768_pixels_without_sideways_scrolling(
    quality_data: UiServer, browser: Any
) -> None:
    """1280 px: test_ui.py's test_main_pages_fit_1280_pixels_and_are_captured."""
    width = 768
    context = browser.new_context(viewport={"width": width, "height": 900})
    context.set_default_timeout(15_000)
    try:
        page = context.new_page()
        sign_in(page, quality_data)
        wide = {}
        for name, url in project_pages(quality_data).items():
            open_fresh(page, url)
            scroll_width = page.evaluate("document.documentElement.scrollWidth")
            if scroll_width > width:
                wide[name] = scroll_width
            # the navigation is reachable at this width: every link is on screen
            for link in page.locator("#nav a").all():
                box = link.bounding_box()
                assert box is not None, (name, link)
                assert box["x"] + box["width"] <= width, (name, link)
        assert wide == {}
    finally:
        context.close()


def test_empty_project_pages_say_so(quality_data: UiServer, context: Any) -> None:
    page = context.new_page()
    sign_in(page, quality_data)
    pages = project_pages(quality_data)
    open_fresh(page, pages["empty-flags"])
    expect()(page.get_by_text("No flags in this project yet")).to_be_visible()
    expect()(page.get_by_role("link", name="create the first one")).to_be_visible()
    open_fresh(page, pages["empty-segments"])
    expect()(page.get_by_text("No segments yet")).to_be_visible()


def test_a_slow_answer_shows_the_loading_state(quality_data: UiServer, context: Any) -> None:
    page = context.new_page()
    sign_in(page, quality_data)
    held: list[Any] = []
    holding = [True]

    def hold(route: Any) -> None:
        if holding[0]:
            held.append(route)
        else:
            route.continue_()

    page.route("**/api/v2/segments/**", hold)
    page.goto(project_pages(quality_data)["segments"])
    main = page.locator("main")
    expect()(main).to_have_attribute("aria-busy", "true")
    expect()(main.get_by_role("status")).to_contain_text("Loading")
    assert held, "the segments request was not made"
    holding[0] = False
    for route in held:
        route.continue_()
    expect()(main).not_to_have_attribute("aria-busy", "true")
    expect()(page.get_by_role("heading", name=f"Segments in {ENV}")).to_be_visible()
