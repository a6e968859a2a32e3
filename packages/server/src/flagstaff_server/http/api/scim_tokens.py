"""Route for `/api/v2/scim/tokens`: an admin makes the token an identity provider provisions
members with (`/scim/v2`); it is listed and revoked with the other tokens (`/api/v2/tokens`)."""

from __future__ import annotations

from fastapi import APIRouter, status

from flagstaff_server.http.api import schema
from flagstaff_server.http.api.access import Admin, Plane
from flagstaff_server.services import scim_access
from flagstaff_server.services.ports import JsonObject

router = APIRouter(prefix="/scim/tokens", tags=["access tokens"])


class ScimTokenPost(schema.Request):
    name: str


@router.post(
    "",
    status_code=status.HTTP_201_CREATED,
    summary="Create a SCIM token; `token` holds the secret, shown only in this answer",
)
def create_scim_token(plane: Plane, actor: Admin, body: ScimTokenPost) -> JsonObject:
    return scim_access.create_scim_token(plane, actor, body.name)
