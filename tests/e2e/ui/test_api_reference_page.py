"""The API reference page in a real browser under its Content-Security-Policy: Swagger UI starts
(no inline script is needed, so none is allowed), renders the operations of this server's OpenAPI
document and the browser reports no policy violation."""

from __future__ import annotations

from typing import Any

from ui_support import UiServer, expect


def test_swagger_ui_renders_the_operations_with_no_policy_violation(
    context: Any, ui_server: UiServer
) -> None:
    page = context.new_page()
    # recorded from the first script on, before Swagger UI runs
    page.add_init_script(
        "window.violations = [];"
        "document.addEventListener('securitypolicyviolation',"
        " (e) => window.violations.push(e.violatedDirective + ' ' + e.blockedURI));"
    )
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.goto(f"{ui_server.url}/api/v2/docs")
    expect()(page.get_by_text("Create a feature flag").first).to_be_visible()
    expect()(page.locator(".opblock").first).to_be_visible()
    page.locator(".opblock-summary").first.click()
    expect()(page.locator(".opblock-body").first).to_be_visible()
    assert page.evaluate("window.violations") == []
    assert errors == []
