"""A flag's progressive and guarded rollouts in one environment, as Flagstaff shows them
(LaunchDarkly keeps its own on an internal route): `GET /api/v2/projects/{projectKey}/flags/
{featureFlagKey}/environments/{environmentKey}/automated-releases`. They are started, stopped,
paused and resumed by the flag's semantic patch (docs/rollouts.md)."""

from __future__ import annotations

from starlette.concurrency import run_in_threadpool
from starlette.responses import Response

from flagstaff_server.http.api.access import Plane, Reader
from flagstaff_server.http.api.payload import json_response
from flagstaff_server.http.api.prefixed_router import PrefixedRouter
from flagstaff_server.services import automated_releases

router = PrefixedRouter(prefix="/projects", tags=["Automated releases"])

PATH = "/{projectKey}/flags/{featureFlagKey}/environments/{environmentKey}/automated-releases"


@router.get(PATH, summary="List a flag's progressive and guarded rollouts in an environment")
async def list_automated_releases(
    projectKey: str,  # noqa: N803 - LaunchDarkly's parameter names
    featureFlagKey: str,  # noqa: N803
    environmentKey: str,  # noqa: N803
    plane: Plane,
    actor: Reader,
) -> Response:
    body = await run_in_threadpool(
        automated_releases.list_releases, plane, projectKey, featureFlagKey, environmentKey
    )
    return json_response(body)
