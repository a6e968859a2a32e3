"""Flag changes in the audit log: a change confined to one environment is filed under it and its
text names it; flag-level changes are filed under `env/*` and show in every environment's scope;
the first start's demo seed writes one readable entry per resource."""

from __future__ import annotations

import re
from typing import Any

import httpx
from flag_api import PROJECT, create_flag, patch
from flagstaff_server import demo
from flagstaff_server.services.plane import ControlPlane

FLAGS = f"/api/v2/flags/{PROJECT}"


async def audit(api: httpx.AsyncClient, spec: str, kind: str | None = None) -> list[Any]:
    """The entries `spec` finds, newest first (only those of `kind` when given)."""
    response = await api.get("/api/v2/auditlog", params={"spec": spec, "limit": 100})
    assert response.status_code == 200, response.text
    items = response.json()["items"]
    return [item for item in items if kind is None or item["kind"] == kind]


async def turn_on(api: httpx.AsyncClient, key: str, environment: str) -> None:
    body = {"environmentKey": environment, "instructions": [{"kind": "turnFlagOn"}]}
    response = await patch(api, f"{FLAGS}/{key}", body, semantic=True)
    assert response.status_code == 200, response.text


async def test_turning_a_flag_on_in_production_is_filed_under_production(
    api: httpx.AsyncClient,
) -> None:
    await create_flag(api, "f1", name="Checkout")
    await turn_on(api, "f1", "production")

    # the docs' own example and the UI's "Only production" scope
    for spec in (f"proj/{PROJECT}:env/production:flag/*", f"proj/{PROJECT}:env/production"):
        [turned, created] = await audit(api, spec, "flag")
        assert turned["accesses"] == [
            {"action": "updateFlag", "resource": f"proj/{PROJECT}:env/production:flag/f1"}
        ]
        assert turned["target"]["resources"] == [f"proj/{PROJECT}:env/production:flag/f1"]
        assert turned["description"] == (
            "FLAGSTAFF_ADMIN_TOKEN turned on the flag Checkout in Production"
        )
        assert turned["shortDescription"] == "turned on the flag Checkout in Production"
        assert created["titleVerb"] == "created the flag"
    in_test = await audit(api, f"proj/{PROJECT}:env/test:flag/*")
    assert [entry["titleVerb"] for entry in in_test] == ["created the flag"]


async def test_a_targeting_edit_in_one_environment_names_it(api: httpx.AsyncClient) -> None:
    await create_flag(api, "f1", name="Checkout")
    rule = {"op": "replace", "path": "/environments/test/offVariation", "value": 0}
    assert (await patch(api, f"{FLAGS}/f1", {"comment": "why", "patch": [rule]})).is_success
    [entry, _] = await audit(api, f"proj/{PROJECT}:env/test", "flag")
    assert entry["description"] == "FLAGSTAFF_ADMIN_TOKEN updated the flag Checkout in Test: why"
    assert entry["target"]["resources"] == [f"proj/{PROJECT}:env/test:flag/f1"]
    production = await audit(api, f"proj/{PROJECT}:env/production", "flag")
    assert [item["titleVerb"] for item in production] == ["created the flag"]


async def test_flag_level_changes_show_in_every_environment(api: httpx.AsyncClient) -> None:
    await create_flag(api, "f1", name="Checkout")
    rename = [{"op": "replace", "path": "/name", "value": "Checkout v2"}]
    assert (await patch(api, f"{FLAGS}/f1", rename)).is_success
    for environment in ("production", "test"):
        [renamed, created] = await audit(api, f"proj/{PROJECT}:env/{environment}:flag/*")
        assert renamed["target"]["resources"] == [f"proj/{PROJECT}:env/*:flag/f1"]
        assert renamed["description"] == "FLAGSTAFF_ADMIN_TOKEN updated the flag Checkout v2"
        assert created["target"]["resources"] == [f"proj/{PROJECT}:env/*:flag/f1"]
    assert len(await audit(api, f"proj/{PROJECT}:env/*:flag/f1")) == 2
    assert await audit(api, "proj/other:env/production") == []


async def test_an_edit_of_two_environments_names_both_and_only_them(
    api: httpx.AsyncClient,
) -> None:
    staging = {"key": "staging", "name": "Staging", "color": "0b69e3"}
    added = await api.post(f"/api/v2/projects/{PROJECT}/environments", json=staging)
    assert added.status_code == 201, added.text
    await create_flag(api, "f1", name="Checkout")
    both = [
        {"op": "replace", "path": "/environments/production/on", "value": True},
        {"op": "replace", "path": "/environments/test/on", "value": True},
    ]
    assert (await patch(api, f"{FLAGS}/f1", both)).is_success

    [entry, _] = await audit(api, f"proj/{PROJECT}:env/test:flag/*")
    assert entry["target"]["resources"] == [
        f"proj/{PROJECT}:env/production:flag/f1",
        f"proj/{PROJECT}:env/test:flag/f1",
    ]
    assert [access["resource"] for access in entry["accesses"]] == entry["target"]["resources"]
    assert entry["description"] == (
        "FLAGSTAFF_ADMIN_TOKEN updated the flag Checkout in Production and Test"
    )
    [newest, _] = await audit(api, f"proj/{PROJECT}:env/production", "flag")
    assert newest["_id"] == entry["_id"]
    in_staging = await audit(api, f"proj/{PROJECT}:env/staging:flag/*")
    assert [item["titleVerb"] for item in in_staging] == ["created the flag"]


async def test_the_first_start_writes_one_readable_entry_per_resource(
    api: httpx.AsyncClient, plane: ControlPlane
) -> None:
    demo.create_demo(plane)
    entries = await audit(api, "proj/demo")
    described = sorted((entry["target"]["resources"][0], entry["description"]) for entry in entries)
    system = "Flagstaff (first start)"
    flag_names = {key: title.name for key, title in demo.FLAG_TITLES.items()}
    assert described == sorted(
        [
            ("proj/demo", f"{system} created the project Demo"),
            ("proj/demo:env/production", f"{system} created the environment Production"),
            ("proj/demo:env/test", f"{system} created the environment Test"),
            *(
                (f"proj/demo:env/*:flag/{key}", f"{system} imported the flag {name}")
                for key, name in flag_names.items()
            ),
            *(
                (
                    f"proj/demo:env/{environment}:segment/beta-testers",
                    f"{system} imported the segment Beta testers into {title}",
                )
                for environment, title in (("production", "Production"), ("test", "Test"))
            ),
        ]
    )
    # no raw action names (camelCase verbs) in any sentence
    assert not [text for _, text in described if re.search(r"\b[a-z]+[A-Z]\w*\b", text)]
    production = await audit(api, "proj/demo:env/production")
    assert len(production) == 1 + len(flag_names) + 1


async def test_an_import_into_an_existing_flag_is_filed_under_its_environment(
    api: httpx.AsyncClient,
) -> None:
    await create_flag(api, "f1", name="Checkout")
    data = {"flags": {"f1": {"key": "f1", "on": True, "variations": [True, False], "version": 7}}}
    imported = await api.post(f"/api/v2/projects/{PROJECT}/environments/test/import", json=data)
    assert imported.status_code == 200, imported.text
    [entry, _] = await audit(api, f"proj/{PROJECT}:env/test:flag/*")
    assert entry["target"]["resources"] == [f"proj/{PROJECT}:env/test:flag/f1"]
    assert entry["description"] == "FLAGSTAFF_ADMIN_TOKEN imported the flag Checkout into Test"
