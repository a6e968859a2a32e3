"""Create bodies refuse fields they do not know, at any depth, naming them (a misspelt field must
not be dropped silently), while LaunchDarkly's own fields that Flagstaff ignores are accepted so
scripts written for LaunchDarkly keep working. Before, `POST /api/v2/flags/{p}` answered 201 to
a body with `"colour"`, and so did the project, environment, segment, token and copy creates;
only the project and environment PATCHes refused unknown fields."""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from flag_api import PROJECT, create_flag

FLAGS = f"/api/v2/flags/{PROJECT}"
SEGMENTS = f"/api/v2/segments/{PROJECT}/production"
ENVIRONMENTS = f"/api/v2/projects/{PROJECT}/environments"
FLAG = {"key": "f", "name": "F"}


@pytest.mark.parametrize(
    ("path", "body", "field"),
    [
        (FLAGS, {**FLAG, "colour": "red"}, "/colour"),
        (
            FLAGS,
            {**FLAG, "variations": [{"value": 1, "colour": 1}, {"value": 2}]},
            "/variations/0/colour",
        ),
        (FLAGS, {**FLAG, "defaults": {"onVariation": 0, "offVariation": 1, "x": 0}}, "/defaults/x"),
        (
            FLAGS,
            {**FLAG, "clientSideAvailability": {"usingMobileKey": True, "usingSdk": True}},
            "/clientSideAvailability/usingSdk",
        ),
        (
            FLAGS,
            {**FLAG, "customProperties": {"jira": {"name": "J", "value": [], "url": "u"}}},
            "/customProperties/jira/url",
        ),
        (
            FLAGS,
            {**FLAG, "initialPrerequisites": [{"key": "g", "variationId": "v", "on": True}]},
            "/initialPrerequisites/0/on",
        ),
        (SEGMENTS, {"key": "s", "name": "S", "included": ["user-1"]}, "/included"),
        ("/api/v2/projects", {"key": "q", "name": "Q", "colour": "red"}, "/colour"),
        (
            "/api/v2/projects",
            {
                "key": "q",
                "name": "Q",
                "environments": [{"key": "e", "name": "E", "colour": "417505"}],
            },
            "/environments/0/colour",
        ),
        (
            "/api/v2/projects",
            {"key": "q", "name": "Q", "defaultClientSideAvailability": {"usingSdk": True}},
            "/defaultClientSideAvailability/usingSdk",
        ),
        (ENVIRONMENTS, {"key": "e", "name": "E", "colour": "417505"}, "/colour"),
        ("/api/v2/tokens", {"name": "t", "role": "reader", "scope": "all"}, "/scope"),
        (
            f"{FLAGS}/g/copy",
            {
                "source": {"key": "production"},
                "target": {"key": "test"},
                "comment": "c",
                "dryRun": True,
            },
            "/dryRun",
        ),
        (
            f"{FLAGS}/g/copy",
            {"source": {"key": "production", "version": 1}, "target": {"key": "test"}},
            "/source/version",
        ),
    ],
)
async def test_an_unknown_field_in_a_create_body_is_a_400_naming_it(
    api: httpx.AsyncClient, path: str, body: dict[str, Any], field: str
) -> None:
    await create_flag(api, "g")
    refused = await api.post(path, json=body)
    assert refused.status_code == 400, refused.text
    assert refused.json()["path"] == field
    assert "colour" not in str((await api.get(FLAGS)).json())


async def test_launchdarkly_fields_that_flagstaff_ignores_are_accepted(
    api: httpx.AsyncClient,
) -> None:
    flag = await create_flag(
        api,
        "f",
        purpose="migration",
        migrationSettings={"contextKind": "user", "stageCount": 2},
        maintainerTeamKey="team",
        variations=[{"value": 1, "_id": "x", "valueHash": "h"}, {"value": 2}],
    )
    assert "purpose" not in flag
    segment = await api.post(SEGMENTS, json={"key": "s", "name": "S", "unbounded": False})
    assert segment.status_code == 201, segment.text
    project = {"key": "q", "name": "Q", "namingConvention": {"case": "kebabCase"}}
    project["environments"] = [{"key": "e", "name": "E", "source": {"key": "production"}}]
    assert (await api.post("/api/v2/projects", json=project)).status_code == 201
    token = {"name": "t", "role": "reader", "serviceToken": True, "defaultApiVersion": 20240415}
    assert (await api.post("/api/v2/tokens", json=token)).status_code == 201
