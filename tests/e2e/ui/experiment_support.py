"""What the experiment and guarded-rollout browser tests share (test_ui_flag_page.py): events
posted to the server's `/bulk` as an SDK posts them, the experiment and the guarded flag they
start from, and axe-core plus screenshots in both colour schemes (build/screenshots/experiments/,
shown in docs/experiments.md)."""

from __future__ import annotations

from typing import Any

import httpx
import orjson
from accessibility import blocking_violations
from ui_support import ENV, PROJECT, SCREENSHOTS, UiServer, expect, open_flag, patch_flag

EXPERIMENTS = f"/api/v2/projects/{PROJECT}/environments/{ENV}/experiments"
SHOTS = SCREENSHOTS / "experiments"


def ok(response: httpx.Response) -> Any:
    assert response.status_code in (200, 201), response.text
    return response.json()


def send_events(server: UiServer, events: list[dict[str, Any]]) -> None:
    """Events as an SDK posts them (`/bulk` with the environment's SDK key)."""
    response = httpx.post(
        f"{server.url}/bulk",
        content=orjson.dumps(events),
        headers={
            "Authorization": server.sdk_key,
            "Content-Type": "application/json",
            "X-LaunchDarkly-Event-Schema": "4",
        },
        timeout=10,
    )
    assert response.status_code == 202, response.text


def env_version(server: UiServer, flag: str) -> int:
    return int(server.flag(flag)["environments"][ENV]["version"])


def capture_both_schemes(page: Any, name: str, locator: Any | None = None) -> list[str]:
    """axe-core findings in light and dark, and a screenshot of each (the whole page, or
    `locator`)."""
    SHOTS.mkdir(parents=True, exist_ok=True)
    found = []
    for scheme in ("light", "dark"):
        page.emulate_media(color_scheme=scheme)
        found += [f"{name} ({scheme}): {line}" for line in blocking_violations(page)]
        path = str(SHOTS / f"{name}-{scheme}.png")
        if locator is None:
            page.screenshot(path=path, full_page=True)
        else:
            locator.screenshot(path=path)
    page.emulate_media(color_scheme="light")
    return found


def start_experiment_data(server: UiServer) -> tuple[str, str]:
    """The flag `checkout` (on) and the numeric metric `revenue`; the experiment `checkout-test`
    on its default rule, 50/50, not started. Answers the treatments' variations (new, control)."""
    flag = server.create_flag("checkout", name="Checkout")
    new, control = (v["_id"] for v in flag["variations"])  # true, false
    patch_flag(server, "checkout", ENV, {"kind": "turnFlagOn"})
    metric = {
        "key": "revenue",
        "name": "Revenue",
        "kind": "custom",
        "eventKey": "purchase",
        "isNumeric": True,
        "unitAggregationType": "sum",
        "successCriteria": "HigherThanBaseline",
    }
    ok(server.api.post(f"/api/v2/metrics/{PROJECT}", json=metric))
    treatments = [
        ("Control", True, control),
        ("One-page checkout", False, new),
    ]
    body = {
        "key": "checkout-test",
        "name": "Checkout test",
        "iteration": {
            "hypothesis": "A one-page checkout sells more",
            "metrics": [{"key": "revenue"}],
            "treatments": [
                {
                    "name": name,
                    "baseline": baseline,
                    "allocationPercent": "50",
                    "parameters": [{"flagKey": "checkout", "variationId": variation}],
                }
                for name, baseline, variation in treatments
            ],
            "flags": {"checkout": {"ruleId": "fallthrough", "flagConfigVersion": 1}},
        },
    }
    ok(server.api.post(EXPERIMENTS, json=body))
    return new, control


def guarded_flag(server: UiServer, key: str) -> None:
    server.create_flag(key, name=key)
    old = server.flag(key)["variations"][1]["_id"]
    patch_flag(
        server,
        key,
        ENV,
        {"kind": "turnFlagOn"},
        {"kind": "updateFallthroughVariationOrRollout", "variationId": old},
    )


def start_from_the_flag_page(page: Any, server: UiServer, key: str, metric: str) -> Any:
    open_flag(page, server, key)
    section = page.locator("#flag-releases")
    section.get_by_text("Start a rollout").click()
    form = section.get_by_role("form", name=f"Start a rollout in {ENV}")
    form.get_by_label("Stages (% of units)").fill("10, 50")
    form.get_by_label("Minimum units").fill("30")
    form.get_by_label(metric).check()
    form.get_by_role("button", name="Start rollout").click()
    expect()(section.locator(".release h3")).to_contain_text("in progress")
    return section
