"""Single sign-on in a real browser against a real OpenID provider (oidc-provider, started by
conftest.py): "Sign in with SSO" signs a new member in with the default role and puts them in the
team their group maps to, shown on their own page; an ID token with a forged signature and an
expired one are refused with the reason on the sign-in page and in the audit log; after the
provider rotates its signing key, sign-in still works (Flagstaff refetches the JWKS)."""

from __future__ import annotations

from typing import Any

import pytest
from oidc_support import Mode, SsoSite, block_web_fonts

pytestmark = pytest.mark.slow


def expect() -> Any:
    from playwright.sync_api import expect as playwright_expect

    return playwright_expect


def start_sso(page: Any, site: SsoSite, login: str) -> None:
    """From Flagstaff's sign-in page through the provider's sign-in form and back."""
    page.goto(f"{site.url}/ui/")
    page.get_by_role("link", name="Sign in with SSO").click()
    page.locator("input[name=login]").fill(login)
    page.locator("input[name=password]").fill("any password")
    page.get_by_role("button", name="Sign-in").click()


def sign_in(page: Any, site: SsoSite, login: str) -> None:
    start_sso(page, site, login)
    expect()(page.get_by_role("heading", name="Flags", exact=True)).to_be_visible()


def failed_sign_ins(site: SsoSite) -> list[str]:
    """The audit log's failed sign-ins, each entry in full as text."""
    answer = site.api.get("/api/v2/auditlog", params={"spec": "account/*", "limit": 50})
    assert answer.status_code == 200, answer.text
    return [
        site.api.get(entry["_links"]["self"]["href"]).text
        for entry in answer.json()["items"]
        if any(access["action"] == "signInFailed" for access in entry["accesses"])
    ]


def test_sso_signs_a_new_member_in_and_maps_their_group_to_a_team(
    context: Any, sso_site: SsoSite
) -> None:
    page = context.new_page()
    sign_in(page, sso_site, "ada")
    page.get_by_role("link", name="ada@example.com · reader").click()
    expect()(page.get_by_role("heading", name="Your account")).to_be_visible()
    expect()(page.locator("#my-teams")).to_have_text("Engineering (eng)")
    members = sso_site.api.get("/api/v2/members", params={"filter": "team:eng"}).json()
    assert [m["email"] for m in members["items"]] == ["ada@example.com"]


@pytest.mark.parametrize(
    ("mode", "reason"),
    [("forge", "signature was refused"), ("expire", "expired")],
)
def test_a_forged_or_expired_id_token_is_refused(
    context: Any, sso_site: SsoSite, mode: Mode, reason: str
) -> None:
    sso_site.provider.set_mode(mode)
    try:
        page = context.new_page()
        start_sso(page, sso_site, "mallory")
        alert = page.get_by_role("alert").filter(has_text="Single sign-on failed")
        expect()(alert).to_contain_text(reason)
    finally:
        sso_site.provider.set_mode("normal")
    assert (
        sso_site.api.get("/api/v2/members", params={"filter": "query:mallory"}).json()["totalCount"]
        == 0
    )
    assert any(reason in entry for entry in failed_sign_ins(sso_site))


def test_a_rotated_signing_key_is_accepted(browser: Any, context: Any, sso_site: SsoSite) -> None:
    sign_in(context.new_page(), sso_site, "bob")  # Flagstaff now holds the current JWKS
    sso_site.provider.rotate_key()
    fresh = browser.new_context()
    block_web_fonts(fresh)
    try:
        sign_in(fresh.new_page(), sso_site, "bob")
    finally:
        fresh.close()
