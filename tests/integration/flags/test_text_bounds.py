"""Bounded text and audit entries that do not multiply what they hold, over each store. Before:
a 50 MB flag name was stored (201) and `auditlog?limit=5` repeated it about seven times per
entry (786 MB): in the create body kept as the entry's patch, in the document twice (`delta` and
LaunchDarkly's `currentVersion`) and in five sentences."""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from flag_api import PROJECT, create_flag, patch

FLAGS = f"/api/v2/flags/{PROJECT}"
SEGMENTS = f"/api/v2/segments/{PROJECT}/production"
LONG_NAME = "n" * 257
LONG_TEXT = "t" * 4097


@pytest.mark.parametrize(
    ("path", "body", "field"),
    [
        (FLAGS, {"key": "f", "name": LONG_NAME}, "/name"),
        (FLAGS, {"key": "f", "name": "F", "description": LONG_TEXT}, "/description"),
        (FLAGS, {"key": "f", "name": "F", "tags": ["ok", "t" * 65]}, "/tags/1"),
        (
            FLAGS,
            {
                "key": "f",
                "name": "F",
                "variations": [{"value": 1, "name": LONG_NAME}, {"value": 2}],
            },
            "/variations/0/name",
        ),
        (
            FLAGS,
            {
                "key": "f",
                "name": "F",
                "variations": [{"value": 1, "description": LONG_TEXT}, {"value": 2}],
            },
            "/variations/0/description",
        ),
        (
            FLAGS,
            {"key": "f", "name": "F", "customProperties": {"k" * 257: {"name": "x", "value": []}}},
            "/customProperties/" + "k" * 257,
        ),
        (
            FLAGS,
            {
                "key": "f",
                "name": "F",
                "customProperties": {"jira": {"name": "Jira", "value": [LONG_TEXT]}},
            },
            "/customProperties/jira/value/0",
        ),
        (FLAGS, {"key": "f", "name": "F", "maintainerId": LONG_NAME}, "/maintainerId"),
        (SEGMENTS, {"key": "s", "name": LONG_NAME}, "/name"),
        (SEGMENTS, {"key": "s", "name": "S", "description": LONG_TEXT}, "/description"),
        (SEGMENTS, {"key": "s", "name": "S", "tags": ["t" * 65]}, "/tags/0"),
        ("/api/v2/projects", {"key": "q", "name": LONG_NAME}, "/name"),
        ("/api/v2/tokens", {"name": LONG_NAME, "role": "reader"}, "/name"),
    ],
)
async def test_long_text_is_refused_at_create_naming_the_field(
    api: httpx.AsyncClient, path: str, body: dict[str, Any], field: str
) -> None:
    refused = await api.post(path, json=body)
    assert (refused.status_code, refused.json()["path"]) == (400, field), refused.text[:300]


async def test_text_at_its_bound_is_stored(api: httpx.AsyncClient) -> None:
    name, text = "n" * 256, "t" * 4096
    created = await create_flag(api, "f", name=name, description=text, tags=["t" * 64])
    assert (created["name"], created["description"]) == (name, text)


async def test_edits_and_their_comments_are_bounded_too(api: httpx.AsyncClient) -> None:
    await create_flag(api, "f")
    flag = f"{FLAGS}/f"
    renamed = await patch(api, flag, [{"op": "replace", "path": "/name", "value": LONG_NAME}])
    assert (renamed.status_code, renamed.json()["path"]) == (400, "/name")
    commented = await patch(api, flag, {"comment": LONG_TEXT, "patch": []})
    assert (commented.status_code, commented.json()["path"]) == (400, "/comment")
    semantic = {"comment": LONG_TEXT, "instructions": [{"kind": "updateName", "value": "G"}]}
    commented = await patch(api, flag, semantic, semantic=True)
    assert (commented.status_code, commented.json()["path"]) == (400, "/comment")
    instruction = {"kind": "updateDescription", "value": LONG_TEXT}
    described = await patch(api, flag, {"instructions": [instruction]}, semantic=True)
    assert (described.status_code, described.json()["path"]) == (400, "/description")
    assert (await api.get(flag)).json()["name"] == "f"


async def test_an_audit_entry_holds_each_value_once(api: httpx.AsyncClient) -> None:
    big = "v" * 200_000
    await create_flag(api, "f", variations=[{"value": big}, {"value": "small"}])
    created = await api.get(
        "/api/v2/auditlog", params={"limit": 5, "spec": f"proj/{PROJECT}:*flag/f"}
    )
    [entry] = created.json()["items"]
    assert entry["delta"]["after"]["variations"][0]["value"] == big
    assert len(created.content) < 1.2 * len(big)  # once, as the document created
    on = {"environmentKey": "production", "instructions": [{"kind": "turnFlagOn"}]}
    assert (await patch(api, f"{FLAGS}/f", on, semantic=True)).status_code == 200
    both = await api.get("/api/v2/auditlog", params={"limit": 5, "spec": f"proj/{PROJECT}:*flag/f"})
    assert len(both.json()["items"]) == 2
    # the update holds the document before and after, the create the document: three in all
    assert len(both.content) < 3.2 * len(big)
    update = both.json()["items"][0]
    one = await api.get(f"/api/v2/auditlog/{update['_id']}")
    assert one.json() == update
    assert len(one.content) < 2.2 * len(big)
