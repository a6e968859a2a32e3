"""Routes of single sign-on: the organisation's settings (`/api/v2/sso/settings`, admins), and
the browser's way through the provider: `/api/v2/session/sso` (is there an SSO button?),
`/start` (to the provider, with a state cookie) and `/callback` (back, with the session cookie).
The rules live in `services.sso` and `services.sso_settings`; this module does cookies and
redirects."""

from __future__ import annotations

import functools
from typing import Annotated, Any
from urllib.parse import quote

from fastapi import APIRouter, Query, Request, Response
from starlette.concurrency import run_in_threadpool
from starlette.responses import RedirectResponse

from flagstaff_server.errors import IdentityProviderError
from flagstaff_server.http.api.access import Admin, Plane
from flagstaff_server.http.api.payload import json_response, read_json
from flagstaff_server.http.api.sessions import set_cookie
from flagstaff_server.services import sso, sso_settings

router = APIRouter(tags=["single sign-on"])

STATE_COOKIE = "flagstaff_sso_state"
STATE_PATH = "/api/v2/session/sso"
UI_HOME = "/ui/"
SETTINGS_BODY = {
    "requestBody": {
        "required": True,
        "description": "{enabled, issuer, clientId, clientSecret (kept when left out), scopes, "
        "groupsClaim, defaultRole, groupTeams {group: teamKey}, ssoRequired}",
        "content": {"application/json": {"schema": {"type": "object"}}},
    }
}


@router.get("/sso/settings", summary="The single sign-on settings (the secret is not shown)")
async def get_settings(plane: Plane, actor: Admin) -> Response:
    return json_response(await run_in_threadpool(sso_settings.get_settings, plane, actor))


@router.put(
    "/sso/settings", summary="Replace the single sign-on settings", openapi_extra=SETTINGS_BODY
)
async def put_settings(request: Request, plane: Plane, actor: Admin) -> Response:
    body = await read_json(request)
    return json_response(await run_in_threadpool(sso_settings.put_settings, plane, actor, body))


@router.get(
    "/session/sso",
    summary="Whether the sign-in page offers single sign-on, and whether it is required",
)
def public_settings(plane: Plane) -> dict[str, Any]:
    return sso_settings.public_settings(plane)


def redirect_uri(request: Request) -> str:
    return str(request.url_for("sso_callback"))


@router.get(
    "/session/sso/start",
    status_code=303,
    response_class=RedirectResponse,
    summary="Start a single sign-on: a redirect to the identity provider",
)
async def start(request: Request, plane: Plane) -> Response:
    started = await run_in_threadpool(
        functools.partial(sso.start_sign_in, plane, redirect_uri=redirect_uri(request))
    )
    response = RedirectResponse(started.url, status_code=303)
    # Lax, not Strict: the provider's redirect back is a cross-site navigation
    response.set_cookie(
        STATE_COOKIE,
        started.state,
        max_age=int(sso.PENDING_LIFETIME.total_seconds()),
        path=STATE_PATH,
        httponly=True,
        samesite="lax",
        secure=request.url.scheme == "https",
    )
    return response


@router.get(
    "/session/sso/callback",
    name="sso_callback",
    status_code=303,
    response_class=RedirectResponse,
    summary="Where the identity provider sends the browser back: signs in, then to the UI",
    description="A browser (Accept: text/html) that is refused goes to the sign-in page with "
    "`ssoError` saying why; any other client gets the 401 problem.",
)
async def callback(
    request: Request,
    plane: Plane,
    state: Annotated[str | None, Query()] = None,
    code: Annotated[str | None, Query()] = None,
    error: Annotated[str | None, Query()] = None,
) -> Response:
    answer = sso.Callback(
        state=state,
        code=code,
        error=error,
        browser_state=request.cookies.get(STATE_COOKIE),
        client=request.client.host if request.client else None,
    )
    try:
        signed_in = await run_in_threadpool(sso.finish_sign_in, plane, answer)
    except IdentityProviderError as exc:
        if "text/html" not in request.headers.get("accept", ""):
            raise
        response = RedirectResponse(f"{UI_HOME}?ssoError={quote(exc.message)}", status_code=303)
    else:
        response = RedirectResponse(UI_HOME, status_code=303)
        set_cookie(request, response, signed_in)
    response.delete_cookie(STATE_COOKIE, path=STATE_PATH, httponly=True, samesite="lax")
    return response
