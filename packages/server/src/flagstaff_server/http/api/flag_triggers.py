"""Flag trigger endpoints in LaunchDarkly's REST v2 shapes:
`/api/v2/flags/{projectKey}/{featureFlagKey}/triggers/{environmentKey}[/{id}]`. Handlers parse,
call one use case in `services.flag_triggers`, and answer; the URL a trigger is called at is
served by `http.trigger_endpoint`."""

from __future__ import annotations

from fastapi import Request
from starlette.concurrency import run_in_threadpool
from starlette.responses import Response

from flagstaff_server.http.api.access import Plane, Reader, Writer
from flagstaff_server.http.api.payload import json_response, read_json
from flagstaff_server.http.api.prefixed_router import PrefixedRouter
from flagstaff_server.services import flag_triggers

router = PrefixedRouter(prefix="/flags", tags=["Flag triggers"])

PATH = "/{projectKey}/{featureFlagKey}/triggers/{environmentKey}"

CREATE_BODY = {
    "requestBody": {
        "required": True,
        "description": "`{integrationKey (generic-trigger, datadog, dynatrace, honeycomb, "
        "new-relic-apm, signalfx), instructions: [{kind: turnFlagOn|turnFlagOff}], comment?}`",
        "content": {"application/json": {"schema": {"type": "object"}}},
    }
}
PATCH_BODY = {
    "requestBody": {
        "required": True,
        "description": "A semantic patch `{comment?, instructions}` with the instruction kinds "
        "`replaceTriggerActionInstructions` {value: [{kind}]}, `cycleTriggerUrl`, "
        "`disableTrigger`, `enableTrigger`",
        "content": {"application/json": {"schema": {"type": "object"}}},
    }
}


def base_url(request: Request) -> str:
    """Where this server is reached, for the trigger's URL."""
    return str(request.base_url).rstrip("/")


@router.get(PATH, summary="List a flag's triggers in an environment")
async def list_triggers(
    projectKey: str,  # noqa: N803 - LaunchDarkly's parameter names
    featureFlagKey: str,  # noqa: N803
    environmentKey: str,  # noqa: N803
    request: Request,
    plane: Plane,
    actor: Reader,
) -> Response:
    listed = await run_in_threadpool(
        lambda: flag_triggers.list_triggers(
            plane, projectKey, featureFlagKey, environmentKey, base_url=base_url(request)
        )
    )
    return json_response(listed)


@router.post(
    PATH,
    status_code=201,
    summary="Create a flag trigger (its URL, with its secret, is shown only in this answer)",
    openapi_extra=CREATE_BODY,
)
async def create_trigger(
    projectKey: str,  # noqa: N803
    featureFlagKey: str,  # noqa: N803
    environmentKey: str,  # noqa: N803
    request: Request,
    plane: Plane,
    actor: Writer,
) -> Response:
    body = await read_json(request)
    created = await run_in_threadpool(
        lambda: flag_triggers.create_trigger(
            plane,
            actor,
            projectKey,
            featureFlagKey,
            environmentKey,
            body,
            base_url=base_url(request),
        )
    )
    return json_response(created, status=201)


@router.get(PATH + "/{id}", summary="Get a flag trigger")
async def get_trigger(
    projectKey: str,  # noqa: N803
    featureFlagKey: str,  # noqa: N803
    environmentKey: str,  # noqa: N803
    id: str,
    request: Request,
    plane: Plane,
    actor: Reader,
) -> Response:
    found = await run_in_threadpool(
        lambda: flag_triggers.get_trigger(
            plane, projectKey, featureFlagKey, environmentKey, id, base_url=base_url(request)
        )
    )
    return json_response(found)


@router.patch(
    PATH + "/{id}",
    summary="Edit, cycle the URL of, disable or enable a flag trigger (semantic patch)",
    openapi_extra=PATCH_BODY,
)
async def patch_trigger(
    projectKey: str,  # noqa: N803
    featureFlagKey: str,  # noqa: N803
    environmentKey: str,  # noqa: N803
    id: str,
    request: Request,
    plane: Plane,
    actor: Writer,
) -> Response:
    body = await read_json(request)
    updated = await run_in_threadpool(
        lambda: flag_triggers.update_trigger(
            plane,
            actor,
            projectKey,
            featureFlagKey,
            environmentKey,
            id,
            body,
            base_url=base_url(request),
        )
    )
    return json_response(updated)


@router.delete(PATH + "/{id}", status_code=204, summary="Delete a flag trigger")
async def delete_trigger(
    projectKey: str,  # noqa: N803
    featureFlagKey: str,  # noqa: N803
    environmentKey: str,  # noqa: N803
    id: str,
    plane: Plane,
    actor: Writer,
) -> Response:
    await run_in_threadpool(
        flag_triggers.delete_trigger, plane, actor, projectKey, featureFlagKey, environmentKey, id
    )
    return Response(status_code=204)
