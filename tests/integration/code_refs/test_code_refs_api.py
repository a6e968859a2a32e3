"""The code-references API in LaunchDarkly's shapes, on every store: repositories, a branch's
references, the updateSequenceId guard, extinctions, and the per-flag usage with safe-to-remove."""

from __future__ import annotations

from typing import Any

import httpx
from code_refs_api import PROJECT

REPOS = "/api/v2/code-refs/repositories"
PROBLEM = "application/problem+json"


def hunk(flag: str, line: int, **more: Any) -> dict[str, Any]:
    return {
        "startingLineNumber": line,
        "lines": f"x = '{flag}'",
        "projKey": PROJECT,
        "flagKey": flag,
        **more,
    }


def branch_body(sequence: int, references: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "name": "main",
        "head": f"sha{sequence}",
        "updateSequenceId": sequence,
        "syncTime": 1_700_000_000_000 + sequence,
        "references": references,
    }


async def make_repository(client: httpx.AsyncClient, name: str = "app") -> dict[str, Any]:
    created = await client.post(
        REPOS,
        json={
            "name": name,
            "sourceLink": "https://git.example/app",
            "hunkUrlTemplate": "https://git.example/app/blob/{{sha}}/{{filePath}}#L{{lineNumber}}",
            "defaultBranch": "main",
        },
    )
    assert created.status_code == 200, created.text
    body: dict[str, Any] = created.json()
    return body


async def test_a_repository_is_created_read_listed_patched_and_deleted(
    client: httpx.AsyncClient,
) -> None:
    created = await make_repository(client)
    assert created["name"] == "app"
    assert created["type"] == "custom"
    assert created["enabled"]
    assert (await client.get(f"{REPOS}/app")).json()["sourceLink"] == "https://git.example/app"
    again = await client.post(REPOS, json={"name": "app"})
    assert again.status_code == 409
    # ld-find-code-refs sends a JSON Merge Patch object; a JSON Patch array works too
    merged = await client.patch(f"{REPOS}/app", json={"defaultBranch": "trunk"})
    assert merged.status_code == 200, merged.text
    assert merged.json()["defaultBranch"] == "trunk"
    assert merged.json()["version"] == 2
    patched = await client.patch(
        f"{REPOS}/app", json=[{"op": "replace", "path": "/enabled", "value": False}]
    )
    assert patched.json()["enabled"] is False
    listed = (await client.get(REPOS)).json()
    assert [r["name"] for r in listed["items"]] == ["app"]
    assert (await client.delete(f"{REPOS}/app")).status_code == 204
    assert (await client.get(f"{REPOS}/app")).status_code == 404


async def test_bad_repositories_and_branches_are_400s_naming_the_field_with_nothing_stored(
    client: httpx.AsyncClient,
) -> None:
    for bad, path in [
        ({"name": "has space"}, "/name"),
        ({"name": "ok", "type": "svn"}, "/type"),
        ({"name": "ok", "colour": 1}, "/colour"),
        ({}, "/name"),
    ]:
        answer = await client.post(REPOS, json=bad)
        assert answer.status_code == 400, answer.text
        assert answer.headers["content-type"].startswith(PROBLEM)
        assert answer.json()["path"] == path, answer.json()
    assert (await client.get(REPOS)).json()["items"] == []
    await make_repository(client)
    renamed = await client.patch(f"{REPOS}/app", json={"name": "other"})
    assert renamed.status_code == 400
    assert renamed.json()["path"] == "/name"
    bad_hunk = branch_body(1, [{"path": "a.py", "hunks": [hunk("used", 0)]}])
    answer = await client.put(f"{REPOS}/app/branches/main", json=bad_hunk)
    assert answer.status_code == 400, answer.text
    assert answer.json()["path"] == "/references/0/hunks/0/startingLineNumber"
    no_key = branch_body(1, [{"path": "a.py", "hunks": [{"startingLineNumber": 1}]}])
    answer = await client.put(f"{REPOS}/app/branches/main", json=no_key)
    assert answer.status_code == 400
    assert answer.json()["path"] == "/references/0/hunks/0/projKey"
    assert (await client.get(f"{REPOS}/app/branches/main")).status_code == 404
    extinct = await client.post(
        f"{REPOS}/app/branches/main/extinction-events",
        json=[{"revision": "r", "time": "x", "flagKey": "used", "projKey": PROJECT}],
    )
    assert extinct.status_code == 400
    assert extinct.json()["path"] == "/0/time"


async def test_a_branch_upload_replaces_the_references_and_an_older_sequence_is_refused(
    client: httpx.AsyncClient,
) -> None:
    await make_repository(client)
    first = branch_body(2, [{"path": "src/a.py", "hunks": [hunk("used", 3), hunk("unused", 9)]}])
    put = await client.put(f"{REPOS}/app/branches/main", json=first)
    assert put.status_code == 200, put.text
    stored = (await client.get(f"{REPOS}/app/branches/main")).json()
    assert stored["head"] == "sha2"
    assert [h["flagKey"] for h in stored["references"][0]["hunks"]] == ["used", "unused"]
    stale = await client.put(f"{REPOS}/app/branches/main", json=branch_body(2, []))
    assert stale.status_code == 409
    assert stale.json()["code"] == "updateSequenceId_conflict"
    second = branch_body(3, [{"path": "src/a.py", "hunks": [hunk("used", 3)]}])
    assert (await client.put(f"{REPOS}/app/branches/main", json=second)).status_code == 200
    stored = (await client.get(f"{REPOS}/app/branches/main")).json()
    assert [h["flagKey"] for h in stored["references"][0]["hunks"]] == ["used"]
    # branch names with a slash, as ld-find-code-refs escapes them
    feature = {**branch_body(1, []), "name": "feature/x"}
    assert (await client.put(f"{REPOS}/app/branches/feature%2Fx", json=feature)).status_code == 200
    names = [b["name"] for b in (await client.get(f"{REPOS}/app/branches")).json()["items"]]
    assert sorted(names) == ["feature/x", "main"]
    with_refs = await client.get(
        REPOS, params={"withReferencesForDefaultBranch": "true", "flagKey": "used"}
    )
    (default,) = with_refs.json()["items"][0]["branches"]
    assert default["name"] == "main"
    assert default["references"][0]["path"] == "src/a.py"
    deleted = await client.post(f"{REPOS}/app/branch-delete-tasks", json=["feature/x", "gone"])
    assert deleted.status_code == 204
    names = [b["name"] for b in (await client.get(f"{REPOS}/app/branches")).json()["items"]]
    assert names == ["main"]


async def test_usage_statistics_extinctions_and_safe_to_remove(client: httpx.AsyncClient) -> None:
    usage = f"/api/v2/code-refs/usage/{PROJECT}"
    before = (await client.get(f"{usage}/unused")).json()
    assert before["repositories"] == []
    assert before["safeToRemove"] is False
    await make_repository(client)
    body = branch_body(1, [{"path": "src/a.py", "hunks": [hunk("used", 7, aliases=["USED"])]}])
    assert (await client.put(f"{REPOS}/app/branches/main", json=body)).status_code == 200
    for key in ("used", "unused"):
        archived = await client.patch(
            f"/api/v2/flags/{PROJECT}/{key}",
            json=[{"op": "replace", "path": "/archived", "value": True}],
        )
        assert archived.status_code == 200, archived.text
    used = (await client.get(f"{usage}/used")).json()
    assert used["stale"] is True
    assert used["safeToRemove"] is False
    (repo,) = used["repositories"]
    assert repo["hunkCount"] == 1
    assert repo["fileCount"] == 1
    (shown,) = repo["references"][0]["hunks"]
    assert shown["aliases"] == ["USED"]
    assert shown["url"] == "https://git.example/app/blob/sha1/src/a.py#L7"
    unused = (await client.get(f"{usage}/unused")).json()
    assert unused["stale"]
    assert unused["safeToRemove"]
    assert unused["scannedRepositories"] == ["app"]
    stats = (await client.get(f"/api/v2/code-refs/statistics/{PROJECT}")).json()
    assert list(stats["flags"]) == ["used"]
    assert stats["flags"]["used"][0]["hunkCount"] == 1
    assert stats["_safeToRemove"] == ["unused"]
    event = {
        "revision": "sha2",
        "message": "drop used",
        "time": 1_700_000_000_500,
        "flagKey": "used",
        "projKey": PROJECT,
    }
    posted = await client.post(f"{REPOS}/app/branches/main/extinction-events", json=[event])
    assert posted.status_code == 200, posted.text
    listed = (await client.get("/api/v2/code-refs/extinctions", params={"flagKey": "used"})).json()
    assert listed["items"]["used"][0]["revision"] == "sha2"
    assert listed["items"]["used"][0]["repoName"] == "app"
    assert (await client.get(f"{usage}/used")).json()["extinctions"][0]["message"] == "drop used"
    assert (await client.get(f"{usage}/nope")).status_code == 404
