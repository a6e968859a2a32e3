"""The flag page's code references in headless Chromium (issue 21): the hunks a scan uploaded,
linked to their lines through the repository's hunk URL template and showing the alias they were
found by, and a stale flag that no scanned repository references called out as safe to remove.
A screenshot goes to build/screenshots/code-references.png."""

from __future__ import annotations

from typing import Any

import pytest
from ui_support import PROJECT, SCREENSHOTS, UiServer, expect, open_flag, sign_in

pytestmark = pytest.mark.slow

REPOS = "/api/v2/code-refs/repositories"


def upload(server: UiServer) -> None:
    created = server.api.post(
        REPOS,
        json={
            "name": "web-shop",
            "sourceLink": "https://git.example/web-shop",
            "hunkUrlTemplate": "https://git.example/web-shop/blob/{{sha}}/{{filePath}}#L{{lineNumber}}",
        },
    )
    assert created.status_code == 200, created.text
    lines = "// the cart\nif (flags.crUsed) {\n  showNewCart();\n}"
    hunk = {"startingLineNumber": 11, "lines": lines, "projKey": PROJECT, "flagKey": "cr-used"}
    branch = {
        "name": "main",
        "head": "0123456789abcdef",
        "syncTime": 1_700_000_000_000,
        "references": [{"path": "src/cart.ts", "hunks": [{**hunk, "aliases": ["crUsed"]}]}],
    }
    put = server.api.put(f"{REPOS}/web-shop/branches/main", json=branch)
    assert put.status_code == 200, put.text


def test_the_flag_page_shows_where_a_flag_is_used_and_which_is_safe_to_remove(
    ui_server: UiServer, context: Any
) -> None:
    ui_server.create_flag("cr-used", name="New cart")
    ui_server.create_flag("cr-gone", name="Old banner")
    archived = ui_server.api.patch(
        f"/api/v2/flags/{PROJECT}/cr-gone",
        json=[{"op": "replace", "path": "/archived", "value": True}],
    )
    assert archived.status_code == 200, archived.text
    upload(ui_server)
    page = context.new_page()
    sign_in(page, ui_server)
    open_flag(page, ui_server, "cr-used")
    section = page.locator("#code-references")
    link = section.get_by_role("link", name="src/cart.ts:11")
    expect()(link).to_have_attribute(
        "href", "https://git.example/web-shop/blob/0123456789abcdef/src/cart.ts#L11"
    )
    expect()(section).to_contain_text("as crUsed")
    expect()(section).to_contain_text("if (flags.crUsed) {")
    expect()(section).to_contain_text("1 reference in 1 file")
    expect()(page.locator("#safe-to-remove")).to_have_count(0)
    section.scroll_into_view_if_needed()
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.get_by_role("region", name="Code references").screenshot(
        path=str(SCREENSHOTS / "code-references.png")
    )

    page.goto(f"{ui_server.url}/ui/#/p/{PROJECT}/e/production/flags/cr-gone")
    verdict = page.locator("#safe-to-remove")
    expect()(verdict).to_contain_text("Safe to remove")
    expect()(verdict).to_contain_text("archived")
    expect()(verdict).to_contain_text("web-shop")
