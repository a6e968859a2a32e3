"""Import every server-side conformance `sdkData` (LaunchDarkly's SDK test-harness data) into an
environment through the API, export it again, and compare: both must decode with `flagstaff_core`
to the same data. Also the import endpoint's error answers."""

from __future__ import annotations

import copy
import functools
import json
from typing import Any

import httpx
import pytest
from conformance.launchdarkly_vectors import load_cases
from flag_api import PROJECT
from flagstaff_core import decode_data, encode_data
from flagstaff_server.services.plane import ControlPlane
from support.prerequisites import shared_path

IMPORT = f"/api/v2/projects/{PROJECT}/environments/test/import"
EXPORT = f"/api/v2/projects/{PROJECT}/environments/test/export"


@functools.cache
def conformance_data_sets() -> list[dict[str, Any]]:
    directory = shared_path("conformance", "launchdarkly", "server-side-eval")
    unique: dict[str, dict[str, Any]] = {}
    for case in load_cases(directory):
        if case.sdk_data:
            unique.setdefault(json.dumps(case.sdk_data, sort_keys=True), case.sdk_data)
    return list(unique.values())


def canonical(data: dict[str, Any]) -> dict[str, Any]:
    """The data as the core decodes and re-encodes it: every field present, defaults filled."""
    encoded: dict[str, Any] = encode_data(decode_data(data))
    return encoded


# Hundreds of imports: memory and SQLite suffice; PostgreSQL runs every other test of this suite.
@pytest.mark.parametrize("store", ["memory", "sqlite"], indirect=True)
async def test_every_conformance_data_set_round_trips(api: httpx.AsyncClient) -> None:
    data_sets = conformance_data_sets()
    assert len(data_sets) > 20
    for index, data in enumerate(data_sets):
        project = f"conf{index}"
        created = await api.post("/api/v2/projects", json={"key": project, "name": project})
        assert created.status_code == 201, created.text
        base = f"/api/v2/projects/{project}/environments/test"
        imported = await api.post(f"{base}/import", json=data)
        assert imported.status_code == 200, (index, imported.text)
        exported = await api.get(f"{base}/export")
        assert exported.status_code == 200
        assert canonical(exported.json()) == canonical(
            with_imported_rule_ids(data, exported.json())
        )


def with_imported_rule_ids(original: dict[str, Any], exported: dict[str, Any]) -> dict[str, Any]:
    """`original` with the ids import gave to rules that had none: REST rules are addressed by
    `_id`, so every imported rule gets one. Ids that were present must survive unchanged."""
    result = copy.deepcopy(original)
    for collection in ("flags", "segments"):
        for key, item in (result.get(collection) or {}).items():
            for index, rule in enumerate(item.get("rules") or []):
                if not rule.get("id"):
                    rule["id"] = exported[collection][key]["rules"][index]["id"]
    return result


async def test_export_equals_what_was_announced_to_delivery(
    api: httpx.AsyncClient, plane: ControlPlane
) -> None:
    data = conformance_data_sets()[0]
    assert (await api.post(IMPORT, json=data)).status_code == 200
    exported = (await api.get(EXPORT)).json()
    with plane.read() as uow:
        latest: dict[tuple[str, str], Any] = {}
        for change in uow.changes.since(0):
            if change.environment == "test" and change.kind in ("flag", "segment"):
                latest[(change.kind, change.key)] = change.item
    announced_flags = {key: item for (kind, key), item in latest.items() if kind == "flag"}
    announced_segments = {key: item for (kind, key), item in latest.items() if kind == "segment"}
    assert exported["flags"] == announced_flags
    assert exported["segments"] == announced_segments


async def test_reimport_updates_and_versions_only_go_up(api: httpx.AsyncClient) -> None:
    flag = {
        "key": "f",
        "version": 5,
        "on": True,
        "variations": [True, False],
        "fallthrough": {"variation": 0},
        "offVariation": 1,
        "salt": "s",
    }
    first = await api.post(IMPORT, json={"flags": {"f": flag}, "segments": {}})
    assert first.json()["created"] == 1
    again = await api.post(IMPORT, json={"flags": {"f": {**flag, "on": False, "version": 2}}})
    assert again.status_code == 200, again.text
    assert again.json()["updated"] == 1
    exported = (await api.get(EXPORT)).json()["flags"]["f"]
    assert exported["on"] is False
    assert exported["version"] == 6
    production = (await api.get(f"/api/v2/flags/{PROJECT}/f", params={"env": "production"})).json()
    assert production["environments"]["production"]["on"] is False


@pytest.mark.parametrize(
    ("data", "path_part"),
    [
        ({"flags": {"f": {"key": "f", "version": "one"}}}, "flags"),
        ({"flags": [], "segments": {}}, "flags"),
        ({"segments": {"s": {"key": "s", "version": 1, "rules": [{"clauses": 3}]}}}, "segments"),
    ],
    ids=["wrong-version-type", "flags-not-object", "clauses-not-array"],
)
async def test_bad_data_file_is_400_naming_the_path_and_imports_nothing(
    api: httpx.AsyncClient, data: dict[str, Any], path_part: str
) -> None:
    good = {"key": "ok", "version": 1, "variations": [1], "fallthrough": {"variation": 0}}
    response = await api.post(IMPORT, json={**data, "flags": data.get("flags", {"ok": good})})
    assert response.status_code == 400, response.text
    assert path_part in response.json()["path"]
    assert (await api.get(EXPORT)).json() == {"flags": {}, "segments": {}}


async def test_import_into_missing_environment_is_404(api: httpx.AsyncClient) -> None:
    response = await api.post(
        f"/api/v2/projects/{PROJECT}/environments/staging/import", json={"flags": {}}
    )
    assert response.status_code == 404


async def test_environment_scoped_writer_updates_but_cannot_create_flags(
    api: httpx.AsyncClient,
) -> None:
    flag = {"key": "f", "version": 1, "on": False, "variations": [True, False], "offVariation": 1}
    assert (await api.post(IMPORT, json={"flags": {"f": flag}})).status_code == 200
    token = await api.post(
        "/api/v2/tokens",
        json={"name": "w", "role": "writer", "projectKey": PROJECT, "environmentKey": "test"},
    )
    scoped = {"Authorization": token.json()["token"]}
    turned_on = {"flags": {"f": {**flag, "on": True, "fallthrough": {"variation": 0}}}}
    assert (await api.post(IMPORT, json=turned_on, headers=scoped)).status_code == 200
    new_flag = {"flags": {"g": {**flag, "key": "g"}}}
    refused = await api.post(IMPORT, json=new_flag, headers=scoped)
    assert refused.status_code == 403
    assert "g" not in (await api.get(EXPORT)).json()["flags"]
