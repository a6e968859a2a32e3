"""The management API's router: FastAPI's `APIRouter`, but declining at once a request whose path
does not hold the literal start of the router's prefix. FastAPI tries the included routers in
order, each testing every route's pattern, so a request to a late router paid for all the routes
before it (~86 pattern tests for `GET /api/v2/session/status`; docs/management-api.md, "Profile").
The test has no false negatives (every path a route matches holds it), so matching is unchanged.
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter
from starlette.routing import Match
from starlette.types import Scope


class PrefixedRouter(APIRouter):
    def __init__(self, *, prefix: str, **options: Any) -> None:
        super().__init__(prefix=prefix, **options)
        self.literal = prefix.split("{", 1)[0]
        """The prefix up to its first parameter: `/projects/` of `/projects/{projectKey}/...`."""

    def matches(self, scope: Scope) -> tuple[Match, Scope]:
        if self.literal not in scope["path"]:
            return Match.NONE, {}
        return super().matches(scope)
