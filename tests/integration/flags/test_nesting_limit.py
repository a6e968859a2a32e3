"""The nesting limit over each store: a value nested 64 deep is stored and everything that reads
it back (list, read, patch, export, audit log) answers; one level more is a 400 naming the value
on every way in (create, JSON Patch, semantic patch, import), and a body nested past what any
document may be is a 400 on every route, never a 500. Before the limit a variation 250 deep was
stored and then broke the flag list (orjson encodes at most 254 levels), and deeper bodies were
a 500."""

from __future__ import annotations

from typing import Any

import httpx
import orjson
import pytest
from flag_api import PROJECT, create_flag, patch
from flagstaff_server.nesting import MAX_DEPTH, MAX_DOCUMENT_DEPTH

FLAGS = f"/api/v2/flags/{PROJECT}"
IMPORT = f"/api/v2/projects/{PROJECT}/environments/production/import"


def nested(levels: int, leaf: Any = "leaf") -> Any:
    """`levels` arrays and objects inside one another, alternating."""
    for level in range(levels):
        leaf = [leaf] if level % 2 else {"k": leaf}
    return leaf


def nested_text(levels: int, leaf: bytes = b'"leaf"') -> bytes:
    """`nested(levels)` as JSON text, for depths past what encoders write (orjson stops at 254
    levels, `json` at the recursion limit)."""
    opens = b"".join(b'{"k":' if level % 2 == 0 else b"[" for level in reversed(range(levels)))
    closes = b"".join(b"}" if level % 2 == 0 else b"]" for level in range(levels))
    return opens + leaf + closes


def lists(levels: int) -> Any:
    value: Any = []
    for _ in range(levels - 1):
        value = [value]
    return value


def tokens(pointer: str) -> list[str]:
    return pointer.split("/")[1:]


async def post_raw(api: httpx.AsyncClient, path: str, body: bytes) -> httpx.Response:
    return await api.post(path, content=body, headers={"Content-Type": "application/json"})


async def test_a_value_nested_to_the_limit_is_stored_and_reads_back_everywhere(
    api: httpx.AsyncClient,
) -> None:
    deepest = nested(MAX_DEPTH)
    await create_flag(api, "deep", variations=[{"value": deepest}, {"value": "flat"}])
    semantic = {"environmentKey": "production", "instructions": [{"kind": "turnFlagOn"}]}
    patched = await patch(api, f"{FLAGS}/deep", semantic, semantic=True)
    assert patched.status_code == 200, patched.text
    listed = await api.get(FLAGS)
    assert listed.status_code == 200, listed.text
    assert listed.json()["items"][0]["variations"][0]["value"] == deepest
    assert (await api.get(f"{FLAGS}/deep")).json()["variations"][0]["value"] == deepest
    exported = await api.get(f"/api/v2/projects/{PROJECT}/environments/production/export")
    assert exported.status_code == 200, exported.text
    assert exported.json()["flags"]["deep"]["variations"][0] == deepest
    audit = await api.get("/api/v2/auditlog", params={"limit": 10})
    assert audit.status_code == 200, audit.text
    # and the exported file imports back, as it is
    reimported = await api.post(IMPORT, json=exported.json())
    assert reimported.status_code == 200, reimported.text


@pytest.mark.parametrize("levels", [MAX_DEPTH + 1, 250, 300, 1_000])
async def test_a_variation_nested_past_the_limit_is_refused_at_create_naming_it(
    api: httpx.AsyncClient, levels: int
) -> None:
    body = b'{"key":"deep","name":"deep","variations":[{"value":%s},{"value":1}]}'
    refused = await post_raw(api, FLAGS, body % nested_text(levels))
    assert refused.status_code == 400, refused.text
    assert refused.headers["content-type"] == "application/problem+json"
    assert refused.json()["path"].startswith("/variations/0/value")
    assert "arrays or objects deep" in refused.json()["message"]
    listed = await api.get(FLAGS)
    assert (listed.status_code, listed.json()["items"]) == (200, [])


async def test_patches_cannot_nest_a_value_past_the_limit(api: httpx.AsyncClient) -> None:
    await create_flag(api, "f", variations=[{"value": 1}, {"value": 2}])
    flag = f"{FLAGS}/f"
    too_deep = nested(MAX_DEPTH + 1)
    replaced = await patch(
        api, flag, [{"op": "replace", "path": "/variations/0/value", "value": too_deep}]
    )
    assert (replaced.status_code, replaced.json()["path"]) == (400, "/variations/0/value")
    # one level more, added inside a value that is at the limit
    at_limit = await patch(
        api, flag, [{"op": "replace", "path": "/variations/0/value", "value": nested(MAX_DEPTH)}]
    )
    assert at_limit.status_code == 200, at_limit.text
    inner = "/variations/0/value" + "/0/k" * (MAX_DEPTH // 2)
    deeper = await patch(api, flag, [{"op": "replace", "path": inner, "value": [[1]]}])
    assert (deeper.status_code, deeper.json()["path"]) == (400, "/variations/0/value")
    instruction = {"kind": "addVariation", "value": too_deep}
    added = await patch(api, flag, {"instructions": [instruction]}, semantic=True)
    assert (added.status_code, added.json()["path"]) == (400, "/variations/2/value")
    assert (await api.get(flag)).json()["variations"][0]["value"] == nested(MAX_DEPTH)


async def test_json_patch_operations_cannot_build_a_document_deeper_than_any_may_be(
    api: httpx.AsyncClient,
) -> None:
    """`copy` into the copied value doubles its depth: without a bound a few operations built a
    document too deep for the recursion that copies values (a 500)."""
    await create_flag(api, "f")
    flag = f"{FLAGS}/f"
    into_itself = {"op": "copy", "from": "/x", "path": "/x" + "/0" * (MAX_DOCUMENT_DEPTH - 10)}
    operations = [{"op": "add", "path": "/x", "value": lists(MAX_DOCUMENT_DEPTH - 4)}]
    copied = await patch(api, flag, [*operations, *[into_itself] * 20])
    assert (copied.status_code, copied.json()["path"]) == (400, "/2/from"), copied.text
    # a member no rule knows, nested past the limit in two steps
    colour = lists(MAX_DOCUMENT_DEPTH - 3)
    inside = {"op": "add", "path": "/colour" + "/0" * (MAX_DOCUMENT_DEPTH - 4), "value": [[[[1]]]]}
    deeper = await patch(api, flag, [{"op": "add", "path": "/colour", "value": colour}, inside])
    assert deeper.status_code == 400, deeper.text
    assert tokens(deeper.json()["path"]) == ["colour", *["0"] * (MAX_DOCUMENT_DEPTH - 1)]
    far = await patch(api, flag, [{"op": "add", "path": "/a" * 1_000, "value": 1}])
    assert (far.status_code, far.json()["path"]) == (400, "/0/path")
    stored = (await api.get(flag)).json()
    assert "x" not in stored
    assert "colour" not in stored


async def test_an_import_with_a_value_past_the_limit_is_refused_naming_it(
    api: httpx.AsyncClient,
) -> None:
    flag = {
        "key": "deep",
        "version": 1,
        "on": True,
        "variations": [nested(MAX_DEPTH + 1), 1],
        "fallthrough": {"variation": 0},
        "salt": "s",
    }
    refused = await api.post(IMPORT, json={"flags": {"deep": flag}})
    assert refused.status_code == 400, refused.text
    assert refused.json()["path"].startswith("/flags/deep/variations/0")
    flag["variations"] = ["@"]
    text = orjson.dumps({"flags": {"deep": flag}}).replace(b'"@"', nested_text(300))
    refused = await post_raw(api, IMPORT, text)
    assert refused.status_code == 400, refused.text
    assert refused.json()["path"].startswith("/flags/deep/variations/0")
    assert (await api.get(FLAGS)).json()["items"] == []


@pytest.mark.parametrize(
    "path",
    [
        "/api/v2/projects",
        "/api/v2/tokens",
        FLAGS,
        f"{FLAGS}/f/copy",
        f"/api/v2/segments/{PROJECT}/production",
        IMPORT,
        f"/api/v2/projects/{PROJECT}/environments/production/flags/evaluate",
        f"/api/v2/projects/{PROJECT}/environments",
    ],
)
@pytest.mark.parametrize("text", ["plain", "with NUL"])
async def test_a_body_nested_past_any_document_is_400_on_every_route(
    api: httpx.AsyncClient, path: str, text: str
) -> None:
    leaf = b'"a\\u0000b"' if text == "with NUL" else b'"a"'
    body = b'{"key":"k","name":"n","kind":"user","x":%s}'
    refused = await post_raw(api, path, body % nested_text(MAX_DOCUMENT_DEPTH + 1, leaf))
    assert refused.status_code == 400, refused.text
    assert refused.json()["code"] == "invalid_request"
    assert tokens(refused.json()["path"]) == ["x", *["k", "0"] * 39, "k"]
    for levels in (900, 5_000):
        refused = await post_raw(api, path, body % nested_text(levels, leaf))
        assert refused.status_code == 400, refused.text
        assert refused.json()["code"] == "invalid_request"


async def test_a_segment_document_cannot_be_nested_past_the_limit_either(
    api: httpx.AsyncClient,
) -> None:
    segments = f"/api/v2/segments/{PROJECT}/production"
    created = await api.post(segments, json={"key": "s", "name": "S"})
    assert created.status_code == 201, created.text
    colour = lists(MAX_DOCUMENT_DEPTH - 3)
    inside = {"op": "add", "path": "/colour" + "/0" * (MAX_DOCUMENT_DEPTH - 4), "value": [[[[1]]]]}
    operations = [{"op": "add", "path": "/colour", "value": colour}, inside]
    refused = await patch(api, f"{segments}/s", operations)
    assert refused.status_code == 400, refused.text
    assert tokens(refused.json()["path"]) == ["colour", *["0"] * (MAX_DOCUMENT_DEPTH - 1)]
    assert "colour" not in (await api.get(f"{segments}/s")).json()
