"""The second floor of `bench.api`: a minimal Starlette app under the same uvicorn settings as
`flagstaff serve` (uvloop, httptools, no Date header, no access log), answering
`GET /api/v2/session/status` with the bytes the management API answers without a cookie.
What is left between this and the API's own floor is FastAPI, our middleware and dependencies.

Run `python -m bench.api_floor PORT`; it serves until SIGTERM. Measures nothing itself.
"""

from __future__ import annotations

import sys

import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

BODY = b'{"signedIn":false}'
PATH = "/api/v2/session/status"


async def session_status(request: Request) -> Response:
    return Response(BODY, media_type="application/json")


def app() -> Starlette:
    return Starlette(routes=[Route(PATH, session_status)])


def main(argv: list[str]) -> None:
    uvicorn.run(
        app(),
        host="127.0.0.1",
        port=int(argv[0]),
        loop="uvloop",
        http="httptools",
        lifespan="on",
        date_header=False,
        access_log=False,
        log_level="warning",
    )


if __name__ == "__main__":
    main(sys.argv[1:])
