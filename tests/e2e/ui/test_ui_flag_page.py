"""The flag page's surroundings in headless Chromium (issue 20): the segments its rules use (and
the segment page listing the flags that use it), the flags depending on it, its change history
with diffs, and two environments side by side with a copy of the ticked parts from one to the
other through the API's copy. And what a member sees (issue 19): only what their roles let them
change, and a refused change's reason (the action and the resource of the 403). Issue 17's pages
share this module's server: a metric made and edited in the UI; an experiment started and
stopped from its page, whose results (from events sent to `/bulk` as an SDK sends them) show the
lift plot, the chance to beat the baseline and the sample-ratio warning; a guarded rollout
started from the flag page, paused and stopped by hand, and another rolled back by the worker on
a regression, with the decision and the comparison on its timeline; each passing axe-core in the
light and the dark scheme."""

from __future__ import annotations

import random
import time
from typing import Any

import pytest
from experiment_support import (
    EXPERIMENTS,
    capture_both_schemes,
    env_version,
    guarded_flag,
    ok,
    send_events,
    start_experiment_data,
    start_from_the_flag_page,
)
from support.deadlines import wait_until
from support.experiment_events import exposure, track
from ui_support import ENV, PROJECT, UiServer, expect, open_flag, patch_flag, sign_in

pytestmark = pytest.mark.slow


def test_segments_used_and_dependent_flags_are_listed_and_linked(
    ui_server: UiServer, context: Any
) -> None:
    made = ui_server.api.post(
        f"/api/v2/segments/{PROJECT}/{ENV}", json={"key": "vip", "name": "VIP customers"}
    )
    assert made.status_code == 201, made.text
    parent = ui_server.create_flag("parent-flag", name="Parent")
    ui_server.create_flag("child-flag", name="Child")
    ui_server.create_flag("unrelated-flag", name="Unrelated")
    vip = {"attribute": "key", "op": "segmentMatch", "values": ["vip"]}
    patch_flag(
        ui_server,
        "parent-flag",
        ENV,
        {"kind": "addRule", "clauses": [vip], "variationId": parent["variations"][0]["_id"]},
    )
    patch_flag(
        ui_server,
        "child-flag",
        ENV,
        {
            "kind": "addPrerequisite",
            "key": "parent-flag",
            "variationId": parent["variations"][0]["_id"],
        },
    )
    page = context.new_page()
    sign_in(page, ui_server)
    open_flag(page, ui_server, "parent-flag")
    related = page.get_by_role("region", name="Segments and dependent flags")
    expect()(related.get_by_role("link", name="VIP customers")).to_be_visible()
    expect()(related.get_by_role("link", name="Child")).to_be_visible()
    expect()(related).to_contain_text("needs true")
    expect()(related.get_by_role("link", name="Unrelated")).to_have_count(0)
    related.get_by_role("link", name="VIP customers").click()
    using = page.get_by_role("region", name=f"Flags using this segment in {ENV}")
    expect()(using.get_by_role("link", name="Parent")).to_be_visible()
    expect()(using.get_by_role("link", name="Child")).to_have_count(0)
    page.go_back()
    related = page.get_by_role("region", name="Segments and dependent flags")
    related.get_by_role("link", name="Child").click()
    expect()(page.get_by_role("heading", name="Child", exact=True)).to_be_visible()
    related = page.get_by_role("region", name="Segments and dependent flags")
    expect()(related).to_contain_text("No rule uses a segment.")
    expect()(related).to_contain_text("No flag has this one as a prerequisite.")


def test_history_shows_each_change_with_its_diff(ui_server: UiServer, context: Any) -> None:
    ui_server.create_flag("storied-flag", name="Storied")
    page = context.new_page()
    sign_in(page, ui_server)
    open_flag(page, ui_server, "storied-flag")
    history = page.get_by_role("region", name="History")
    expect()(history.get_by_role("listitem")).to_have_count(1)
    page.locator("#kill-switch").click()
    expect()(page.locator("#kill-switch")).to_have_attribute("aria-checked", "true")
    page.reload()
    history = page.get_by_role("region", name="History")
    expect()(history.locator("ol > li")).to_have_count(2)
    newest = history.locator("ol > li").first
    expect()(newest).to_contain_text("turned on the flag")
    newest.locator("summary").first.click()
    expect()(newest.locator(".diff .d-add").filter(has_text='"on": true')).to_be_visible()


def test_compare_two_environments_and_copy_only_the_ticked_parts(
    ui_server: UiServer, context: Any
) -> None:
    flag = ui_server.create_flag("promoted-flag", name="Promoted")
    country = {"attribute": "country", "op": "in", "values": ["se"]}
    first = flag["variations"][0]["_id"]
    patch_flag(
        ui_server,
        "promoted-flag",
        "staging",
        {"kind": "turnFlagOn"},
        {"kind": "addRule", "clauses": [country], "variationId": first},
    )
    page = context.new_page()
    sign_in(page, ui_server)
    open_flag(page, ui_server, "promoted-flag")
    compare = page.get_by_role("region", name="Compare two environments and copy")
    expect()(compare.get_by_label("From")).to_have_value("staging")
    expect()(compare.get_by_label("To")).to_have_value(ENV)
    changes = compare.get_by_label("What copying changes in Production")
    expect()(changes.locator(".d-add").filter(has_text='"on": true')).to_have_count(1)
    expect()(changes.locator(".d-add").filter(has_text='"se"')).to_have_count(1)
    compare.get_by_label("On / off").uncheck()
    expect()(changes.locator(".d-add").filter(has_text='"on": true')).to_have_count(0)
    compare.get_by_label("Copy comment").fill("promote the Swedish rule")
    compare.get_by_role("button", name="Copy Staging to Production").click()
    expect()(page.locator("#notice")).to_contain_text("Copied 5 part(s) from staging to production")
    production = ui_server.flag("promoted-flag")["environments"][ENV]
    assert [rule["clauses"][0]["values"] for rule in production["rules"]] == [["se"]]
    assert production["on"] is False
    # the targeting editor shows the copied rule, and the history the copy with its comment
    expect()(
        page.get_by_role("region", name="Rules").get_by_label("Values", exact=True)
    ).to_have_value("se")
    expect()(page.get_by_role("region", name="History")).to_contain_text("promote the Swedish rule")


MEMBER = "toggler@example.com"
PASSWORD = "a long enough password"
ROLE = {
    "key": "production-toggler",
    "name": "Toggle production",
    "policy": [
        {"effect": "allow", "actions": ["viewProject"], "resources": ["proj/*"]},
        {"effect": "allow", "actions": ["updateOn"], "resources": ["proj/*:env/production:flag/*"]},
    ],
}


def member_with_role(server: UiServer) -> str:
    made = server.api.post("/api/v2/roles", json=ROLE)
    assert made.status_code == 201, made.text
    invited = server.api.post(
        "/api/v2/members", json=[{"email": MEMBER, "customRoles": [ROLE["key"]]}]
    )
    assert invited.status_code == 201, invited.text
    (member,) = invited.json()["items"]
    accepted = server.api.post(
        "/api/v2/members/invitations",
        json={"invitation": member["_invitation"], "password": PASSWORD},
    )
    assert accepted.status_code == 200, accepted.text
    member_id: str = member["_id"]
    return member_id


def test_a_member_with_a_custom_role_sees_only_what_they_may_change(
    ui_server: UiServer, context: Any
) -> None:
    ui_server.create_flag("perm-flag", name="Permission flag")
    member_id = member_with_role(ui_server)
    page = context.new_page()
    sign_in(page, ui_server, email=MEMBER, password=PASSWORD)
    expect()(page.get_by_role("switch", name=f"perm-flag in {ENV}")).to_be_enabled()
    expect()(page.get_by_role("link", name="Create flag")).to_have_count(0)

    open_flag(page, ui_server, "perm-flag")
    expect()(page.locator("#kill-switch")).to_be_enabled()
    expect()(page.locator("#save-targeting")).to_be_disabled()
    expect()(page.get_by_role("button", name="Save settings")).to_be_disabled()
    expect()(page.get_by_role("button", name="Delete flag")).to_be_disabled()
    expect()(page.get_by_role("button", name="Archive flag")).to_be_disabled()
    page.locator("#kill-switch").click()
    expect()(page.locator("#kill-switch")).to_have_attribute("aria-checked", "true")
    assert ui_server.flag("perm-flag")["environments"][ENV]["on"] is True

    page.goto(f"{ui_server.url}/ui/#/p/{PROJECT}/e/staging/flags/perm-flag")
    expect()(page.locator("#kill-switch")).to_be_disabled()
    expect()(page.locator("#read-only-note")).to_contain_text("cannot change staging")

    # the role goes away while the page is open: the next toggle is refused, and says why
    open_flag(page, ui_server, "perm-flag")
    taken = ui_server.api.patch(
        f"/api/v2/members/{member_id}",
        json=[{"op": "replace", "path": "/customRoles", "value": []}],
    )
    assert taken.status_code == 200, taken.text
    page.once("dialog", lambda dialog: dialog.accept())
    page.locator("#kill-switch").click()
    expect()(page.locator("#notice")).to_contain_text(
        f"do not allow updateOn on proj/{PROJECT}:env/{ENV}:flag/perm-flag"
    )
    assert ui_server.flag("perm-flag")["environments"][ENV]["on"] is True


def test_a_metric_is_created_refused_on_its_field_and_edited(
    ui_server: UiServer, context: Any
) -> None:
    page = context.new_page()
    sign_in(page, ui_server)
    page.get_by_role("link", name="Experiments", exact=True).click()
    page.locator("main").get_by_role("link", name="Metrics").click()
    expect()(page.get_by_text("No metrics yet")).to_be_visible()
    form = page.get_by_role("form", name="New metric")
    form.get_by_label("Name").fill("Basket value")
    expect()(form.get_by_label("Key", exact=True)).to_have_value("basket-value")
    form.get_by_label("Measure").select_option("sum")
    form.get_by_role("button", name="Create metric").click()
    event_key = form.get_by_label("Event key")
    expect()(event_key).to_have_attribute("aria-invalid", "true")
    assert ok(ui_server.api.get(f"/api/v2/metrics/{PROJECT}"))["items"] == []
    event_key.fill("basket")
    form.get_by_label("Unit", exact=True).fill("EUR")
    form.get_by_role("button", name="Create metric").click()
    expect()(page.get_by_role("heading", name="Basket value")).to_be_visible()
    expect()(page.get_by_text("sum per unit of “basket”, higher is better")).to_be_visible()
    page.get_by_label("Success").select_option("LowerThanBaseline")
    page.get_by_label("Measure").select_option("conversion")
    page.get_by_role("button", name="Save metric").click()
    expect()(page.get_by_text("conversion of “basket”, lower is better")).to_be_visible()
    stored = ok(ui_server.api.get(f"/api/v2/metrics/{PROJECT}/basket-value"))
    assert stored["successCriteria"] == "LowerThanBaseline"
    assert stored["isNumeric"] is False
    assert stored["unitAggregationType"] == "sum"  # what a conversion metric always has
    assert "unit" not in stored
    page.get_by_role("link", name="← Metrics").click()
    row = page.get_by_role("row", name="Basket value")
    expect()(row).to_contain_text("conversion of “basket”")
    problems = capture_both_schemes(page, "metrics")
    assert not problems, "\n".join(problems)


def test_an_experiment_is_started_shows_lift_and_srm_and_is_stopped_with_a_winner(
    ui_server: UiServer, context: Any
) -> None:
    new, _control = start_experiment_data(ui_server)
    page = context.new_page()
    sign_in(page, ui_server)
    page.get_by_role("link", name="Experiments", exact=True).click()
    page.get_by_role("link", name="Checkout test").click()
    expect()(page.get_by_text("Not started yet: results appear")).to_be_visible()
    page.get_by_role("button", name="Start iteration").click()
    expect()(page.locator("main h1")).to_contain_text("running")
    rollout = ui_server.flag("checkout")["environments"][ENV]["fallthrough"]["rollout"]
    assert rollout["kind"] == "experiment"
    # 120 control units against 180 new ones at 50/50 (a sample-ratio mismatch, p ≈ 0.0005);
    # the new variation's revenue is higher by 3
    version = env_version(ui_server, "checkout")
    rng = random.Random(17)
    events = []
    now = int(time.time() * 1000)  # after the start: the units plot begins there
    for i in range(300):
        variation = 0 if i < 180 else 1
        user = f"shopper-{i}"
        events.append(exposure("checkout", user, variation, version, now))
        events.append(track(user, "purchase", now + 1, rng.gauss(13 if variation == 0 else 10, 2)))
    send_events(ui_server, events)
    url = f"{EXPERIMENTS}/checkout-test/metrics/revenue/results"
    wait_until(
        lambda: sum(t["units"] for t in ok(ui_server.api.get(url))["treatmentResults"]) == 300,
        what="the exposures to be processed",
    )
    page.reload()
    results = page.locator("section[data-metric='revenue']")
    expect()(results.get_by_role("alert")).to_contain_text("Sample ratio mismatch")
    plot = results.get_by_role("img", name="Relative lift of revenue against Control")
    expect()(plot.locator("circle.estimate")).to_have_count(1)
    expect()(plot.locator("line.interval.ci")).to_have_count(1)
    expect()(plot.locator("line.interval.seq")).to_have_count(1)
    row = results.get_by_role("row", name="One-page checkout")
    expect()(row.locator("td.chance")).to_have_text("100.0%")
    expect()(row).to_contain_text("180")
    expect()(results.get_by_role("row", name="Control (baseline)")).to_contain_text("120")
    units = page.get_by_role("img", name="Exposed units per treatment over time")
    expect()(units.locator("path.series")).to_have_count(2)
    expect()(page.locator("#experiment-units")).to_contain_text("One-page checkout")
    problems = capture_both_schemes(page, "experiment")
    page.get_by_label("When stopping").select_option(label="Ship One-page checkout")
    page.get_by_label("Reason").fill("more revenue")
    page.get_by_role("button", name="Stop iteration").click()
    expect()(page.locator("main h1")).to_contain_text("stopped")
    expect()(page.locator("dl.facts")).to_contain_text("One-page checkout — more revenue")
    fallthrough = ui_server.flag("checkout")["environments"][ENV]["fallthrough"]
    assert fallthrough == {"variation": 0}, fallthrough
    assert (
        ok(ui_server.api.get(f"{EXPERIMENTS}/checkout-test"))["currentIteration"][
            "winningTreatmentId"
        ]
        == new
    )
    page.get_by_role("link", name="← Experiments").click()
    expect()(page.get_by_role("row", name="Checkout test")).to_contain_text("stopped")
    problems += capture_both_schemes(page, "experiments")
    assert not problems, "\n".join(problems)


def test_a_guarded_rollout_is_paused_and_stopped_by_hand_and_rolled_back_on_a_regression(
    ui_server: UiServer, context: Any
) -> None:
    errors = {
        "key": "checkout-errors",
        "name": "Checkout errors",
        "kind": "custom",
        "eventKey": "checkout-error",
        "isNumeric": False,
        "successCriteria": "LowerThanBaseline",
    }
    ok(ui_server.api.post(f"/api/v2/metrics/{PROJECT}", json=errors))
    page = context.new_page()
    sign_in(page, ui_server)

    guarded_flag(ui_server, "search-v2")
    section = start_from_the_flag_page(page, ui_server, "search-v2", "Checkout errors")
    expect()(section.locator("li.stage.current")).to_contain_text("10%")
    section.get_by_role("button", name="Pause").click()
    expect()(section.locator(".release h3")).to_contain_text("paused")
    section.get_by_role("button", name="Resume").click()
    expect()(section.locator(".release h3")).to_contain_text("in progress")
    section.get_by_role("button", name="Stop and serve false").click()
    expect()(section.locator(".release h3")).to_contain_text("reverted by hand")
    assert ui_server.flag("search-v2")["environments"][ENV]["fallthrough"] == {"variation": 1}

    guarded_flag(ui_server, "payment-v2")
    start_from_the_flag_page(page, ui_server, "payment-v2", "Checkout errors")
    # the new variation (0) fails 70% of its units, the original 5%
    version = env_version(ui_server, "payment-v2")
    rng = random.Random(5)
    events = []
    now = 1_796_000_000_000
    for i in range(200):
        variation = i % 2
        user = f"payer-{i}"
        events.append(exposure("payment-v2", user, variation, version, now))
        if rng.random() < (0.7 if variation == 0 else 0.05):
            events.append(track(user, "checkout-error", now + 1))
    send_events(ui_server, events)
    path = f"/api/v2/projects/{PROJECT}/flags/payment-v2/environments/{ENV}/automated-releases"
    wait_until(
        lambda: ok(ui_server.api.get(path))["items"][0]["status"] == "reverted",
        timeout=30,
        what="the worker to roll the release back",
    )
    page.reload()  # the page of payment-v2 is open: load it again
    release = page.locator("#flag-releases .release")
    expect()(release.locator("h3")).to_contain_text("rolled back")
    expect()(release.get_by_role("alert")).to_contain_text("regressed at stage 1")
    comparison = release.get_by_role("row", name="checkout-errors")
    expect()(comparison).to_contain_text("regressed")
    expect()(comparison).to_contain_text("100")
    plot = release.get_by_role("img", name="New minus original per guardrail metric at stage 1")
    expect()(plot.locator("circle.estimate")).to_have_count(1)
    expect()(release.locator("ol.timeline li.regression_detected")).to_be_visible()
    expect()(release.locator("ol.timeline li.reverted")).to_contain_text("rolled back")
    release.scroll_into_view_if_needed()
    card = page.locator("section", has=page.locator("#flag-releases"))
    problems = capture_both_schemes(page, "guarded-rollout", card)
    assert not problems, "\n".join(problems)
