"""`POST /api/v2/flags/{p}/{key}/copy`: one environment's configuration onto another, whole or by
action, guarded by `currentVersion`, audited and announced like any edit."""

from __future__ import annotations

import httpx
from flag_api import PROJECT, create_flag, patch
from flagstaff_server.services.plane import ControlPlane

FLAG = f"/api/v2/flags/{PROJECT}/f1"


async def configure_test_environment(api: httpx.AsyncClient) -> None:
    await create_flag(api, "f1")
    response = await patch(
        api,
        FLAG,
        [
            {"op": "replace", "path": "/environments/test/on", "value": True},
            {
                "op": "add",
                "path": "/environments/test/targets/-",
                "value": {"variation": 1, "values": ["u1"]},
            },
            {
                "op": "add",
                "path": "/environments/test/rules/-",
                "value": {
                    "variation": 1,
                    "clauses": [{"attribute": "plan", "op": "in", "values": ["gold"]}],
                },
            },
        ],
    )
    assert response.status_code == 200, response.text


async def test_copy_promotes_the_whole_configuration(
    api: httpx.AsyncClient, plane: ControlPlane
) -> None:
    await configure_test_environment(api)
    response = await api.post(
        f"{FLAG}/copy",
        json={"source": {"key": "test"}, "target": {"key": "production"}, "comment": "promote"},
    )
    assert response.status_code == 201, response.text
    flag = response.json()
    test, production = flag["environments"]["test"], flag["environments"]["production"]
    for field in ("on", "targets", "rules", "fallthrough", "offVariation", "prerequisites"):
        assert production[field] == test[field], field
    assert production["salt"] != test["salt"]
    assert production["version"] == 2
    with plane.read() as uow:
        latest = [c for c in uow.changes.since(0) if c.key == "f1"][-1]
        # a copy changes the target environment only: filed under it
        entry = uow.audit.list(resource_prefix=f"proj/{PROJECT}:env/production:flag/f1")[0]
    assert (latest.environment, latest.version, latest.item["on"]) == ("production", 2, True)
    assert (entry.action, entry.comment) == ("copyFlagConfigFrom", "promote")


async def test_copy_only_the_included_actions(api: httpx.AsyncClient) -> None:
    await configure_test_environment(api)
    response = await api.post(
        f"{FLAG}/copy",
        json={
            "source": {"key": "test"},
            "target": {"key": "production"},
            "includedActions": ["updateTargets"],
        },
    )
    assert response.status_code == 201, response.text
    production = response.json()["environments"]["production"]
    assert production["targets"] == [{"variation": 1, "values": ["u1"]}]
    assert production["on"] is False
    assert production["rules"] == []


async def test_copy_errors(api: httpx.AsyncClient) -> None:
    await configure_test_environment(api)
    stale = await api.post(
        f"{FLAG}/copy",
        json={"source": {"key": "test"}, "target": {"key": "production", "currentVersion": 9}},
    )
    assert stale.status_code == 409
    assert stale.json()["path"] == "/target/currentVersion"
    same = await api.post(
        f"{FLAG}/copy", json={"source": {"key": "test"}, "target": {"key": "test"}}
    )
    assert same.status_code == 400
    unknown_action = await api.post(
        f"{FLAG}/copy",
        json={"source": {"key": "test"}, "target": {"key": "production"}, "includedActions": ["x"]},
    )
    assert unknown_action.status_code == 400
    assert unknown_action.json()["path"] == "/includedActions/0"
    missing = await api.post(
        f"{FLAG}/copy", json={"source": {"key": "test"}, "target": {"key": "staging"}}
    )
    assert missing.status_code == 404
    production = (await api.get(FLAG)).json()["environments"]["production"]
    assert (production["on"], production["version"]) == (False, 1)
