"""Route for `/api/v2/caller/permissions`: the actions the caller may take on each resource it
names, for the web UI to hide or disable what the caller may not do."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query

from flagstaff_server.http.api.access import Reader
from flagstaff_server.services.caller_permissions import caller_permissions
from flagstaff_server.services.ports import JsonObject

router = APIRouter(prefix="/caller", tags=["access"])

Resources = Annotated[
    list[str],
    Query(
        alias="resource",
        description="A resource specifier, repeated (1 to 50): `proj/p:env/e:flag/k`, "
        "`proj/p:env/*:flag/*` (creating flags), `proj/p:env/e`, `role/*`, `team/t`, ...",
    ),
]


@router.get("/permissions", summary="The actions the caller may take on each named resource")
def permissions(actor: Reader, resources: Resources) -> JsonObject:
    return caller_permissions(actor, resources)
