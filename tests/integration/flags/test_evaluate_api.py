"""`POST /api/v2/projects/{p}/environments/{e}/flags/evaluate`: every flag of the environment
evaluated for one context with the core, in LaunchDarkly's `ContextInstanceEvaluations` shape."""

from __future__ import annotations

import httpx
from flag_api import PROJECT, create_flag, patch

EVALUATE = f"/api/v2/projects/{PROJECT}/environments/production/flags/evaluate"


async def test_evaluates_targets_rules_and_off_flags(api: httpx.AsyncClient) -> None:
    await create_flag(api, "dark-mode")
    await create_flag(api, "greeting", variations=[{"value": "hi"}, {"value": "hello"}])
    configured = await patch(
        api,
        f"/api/v2/flags/{PROJECT}/greeting",
        [
            {"op": "replace", "path": "/environments/production/on", "value": True},
            {
                "op": "add",
                "path": "/environments/production/rules/-",
                "value": {
                    "variation": 1,
                    "clauses": [{"attribute": "plan", "op": "in", "values": ["gold"]}],
                },
            },
        ],
    )
    assert configured.status_code == 200, configured.text
    rule_id = configured.json()["environments"]["production"]["rules"][0]["_id"]

    gold = await api.post(EVALUATE, json={"kind": "user", "key": "u1", "plan": "gold"})
    assert gold.status_code == 200, gold.text
    by_key = {item["key"]: item for item in gold.json()["items"]}
    assert gold.json()["totalCount"] == 2
    assert by_key["greeting"]["_value"] == "hello"
    assert by_key["greeting"]["reason"] == {
        "kind": "RULE_MATCH",
        "ruleIndex": 0,
        "ruleId": rule_id,
        "ruleID": rule_id,
    }
    assert by_key["dark-mode"]["_value"] is False
    assert by_key["dark-mode"]["reason"] == {"kind": "OFF"}

    silver = await api.post(EVALUATE, json={"kind": "user", "key": "u2", "plan": "silver"})
    greeting = next(item for item in silver.json()["items"] if item["key"] == "greeting")
    assert (greeting["_value"], greeting["reason"]) == ("hi", {"kind": "FALLTHROUGH"})

    page = await api.post(f"{EVALUATE}?limit=1&offset=1", json={"key": "u3"})
    assert [item["key"] for item in page.json()["items"]] == ["greeting"]


async def test_invalid_context_is_400_and_unknown_environment_404(api: httpx.AsyncClient) -> None:
    invalid = await api.post(EVALUATE, json={"kind": "multi"})
    assert invalid.status_code == 400
    assert "context" in invalid.json()["message"]
    missing = await api.post(
        f"/api/v2/projects/{PROJECT}/environments/staging/flags/evaluate", json={"key": "u"}
    )
    assert missing.status_code == 404


async def test_a_context_over_the_delivery_bounds_is_400_naming_the_place(
    api: httpx.AsyncClient,
) -> None:
    # the bounds browsers get from delivery (docs/client-delivery.md) hold here too
    many = await api.post(EVALUATE, json={"kind": "user", "key": "u", "tags": ["t"] * 257})
    assert (many.status_code, many.json()["path"]) == (400, "/tags")
    long = await api.post(EVALUATE, json={"key": "u", "custom": {"bio": "x" * 9_000}})
    assert (long.status_code, long.json()["path"]) == (400, "/custom/bio")
