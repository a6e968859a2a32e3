"""Routes for `/api/v2/session`: sign in (email and password, or an access token) to get the web
UI's session cookie, see who is signed in (with the CSRF token the page must send on writes),
ask whether a session is live (no 401 when it is not), and sign out. The rules live in
`services.sessions`; this module only does cookies and headers.
"""

from __future__ import annotations

import functools
from typing import Annotated, Any

from fastapi import Depends, Request, Response, status
from starlette.concurrency import run_in_threadpool

from flagstaff_server.errors import InvalidInput, Unauthorized
from flagstaff_server.http.api import schema
from flagstaff_server.http.api.access import (
    ACCESS_TOKEN,
    CSRF_HEADER,
    SESSION_COOKIE,
    Plane,
)
from flagstaff_server.http.api.payload import json_response
from flagstaff_server.http.api.prefixed_router import PrefixedRouter
from flagstaff_server.http.problem import PROBLEM_MEDIA_TYPE
from flagstaff_server.services import sessions
from flagstaff_server.services.access import Actor, authenticate

router = PrefixedRouter(prefix="/session", tags=["web UI session"])


class SessionPost(schema.Request):
    email: str | None = None
    password: str | None = None
    token: str | None = None


def describe(actor: Actor, *, via: str, csrf_token: str | None) -> dict[str, Any]:
    return {
        "via": via,
        "id": actor.token_id,
        "name": actor.name,
        "role": actor.role,
        "projectKey": actor.project,
        "environmentKey": actor.environment,
        "csrfToken": csrf_token,
        "csrfHeader": CSRF_HEADER,
    }


def set_cookie(request: Request, response: Response, signed_in: sessions.SignedIn) -> None:
    response.set_cookie(
        SESSION_COOKIE,
        signed_in.cookie,
        max_age=int(signed_in.lifetime.total_seconds()),
        path="/",
        httponly=True,
        samesite="strict",
        secure=request.url.scheme == "https",
    )


@router.post(
    "",
    status_code=status.HTTP_201_CREATED,
    summary="Sign in; sets the session cookie",
    responses={
        429: {
            "description": "Too many failed sign-ins for the account or from this address; "
            "wait the seconds in Retry-After",
            "content": {PROBLEM_MEDIA_TYPE: {"schema": {"$ref": "#/components/schemas/Problem"}}},
            "headers": {"Retry-After": {"schema": {"type": "integer"}}},
        }
    },
)
async def sign_in(
    request: Request, response: Response, plane: Plane, body: SessionPost
) -> dict[str, Any]:
    # uvicorn puts X-Forwarded-For here only from the addresses in FORWARDED_ALLOW_IPS
    # (default loopback), so a proxy elsewhere must be listed there, else all share its count
    client = request.client.host if request.client else None
    if body.token:
        signed_in = await run_in_threadpool(
            functools.partial(sessions.sign_in_with_token, plane, body.token, client=client)
        )
        via = "token"
    elif body.email is not None and body.password is not None:
        signed_in = await run_in_threadpool(
            functools.partial(
                sessions.sign_in_with_password, plane, body.email, body.password, client=client
            )
        )
        via = "account"
    else:
        missing = "/email" if body.email is None else "/password"
        raise InvalidInput("sign in with email and password, or with token", path=missing)
    set_cookie(request, response, signed_in)
    return describe(signed_in.actor, via=via, csrf_token=signed_in.csrf_token)


@router.get("", summary="Who is signed in (session cookie or access token)")
def who(
    request: Request,
    plane: Plane,
    authorization: Annotated[str | None, Depends(ACCESS_TOKEN)],
) -> dict[str, Any]:
    cookie = request.cookies.get(SESSION_COOKIE)
    with plane.read() as uow:
        if authorization is None and cookie:
            actor, session = sessions.session_actor(
                plane, uow, cookie, method="GET", csrf_header=None
            )
            return describe(actor, via="session", csrf_token=session.csrf_token)
        actor = authenticate(uow, authorization, admin_token=plane.admin_token)
    return describe(actor, via="token", csrf_token=None)


@router.get(
    "/status",
    response_model=dict[str, Any],
    summary="Whether the session cookie names a live session (200 either way)",
    description="For the web UI's first page: `signedIn` false, and nothing else, when there is "
    "no cookie or its session has ended; otherwise true with the same fields as "
    "`GET /api/v2/session`. Only the cookie counts here, not `Authorization`.",
)
async def session_status(request: Request, plane: Plane) -> Response:
    cookie = request.cookies.get(SESSION_COOKIE)
    # without a cookie the answer needs no store, so no thread hop
    found = await run_in_threadpool(sessions.live_session, plane, cookie) if cookie else None
    if found is None:
        return json_response({"signedIn": False})
    actor, session = found
    return json_response(
        {"signedIn": True, **describe(actor, via="session", csrf_token=session.csrf_token)}
    )


@router.delete(
    "",
    status_code=status.HTTP_204_NO_CONTENT,
    response_class=Response,
    summary="Sign out: ends the session and clears the cookie",
)
def sign_out(request: Request, plane: Plane) -> Response:
    cookie = request.cookies.get(SESSION_COOKIE)
    if not cookie:
        raise Unauthorized("not signed in")
    with plane.read() as uow:
        sessions.session_actor(
            plane, uow, cookie, method="DELETE", csrf_header=request.headers.get(CSRF_HEADER)
        )
    sessions.sign_out(plane, cookie)
    response = Response(status_code=status.HTTP_204_NO_CONTENT)
    response.delete_cookie(SESSION_COOKIE, path="/", httponly=True, samesite="strict")
    return response
