"""Routes for `/api/v2/tokens`: create (the secret is answered once), list, get, revoke."""

from __future__ import annotations

from typing import Annotated

from fastapi import Path, Response, status

from flagstaff_server.http.api import schema
from flagstaff_server.http.api.access import Admin, Plane
from flagstaff_server.http.api.prefixed_router import PrefixedRouter
from flagstaff_server.services import tokens
from flagstaff_server.services.ports import JsonObject

router = PrefixedRouter(prefix="/tokens", tags=["access tokens"])

TokenId = Annotated[str, Path(alias="tokenId", description="The access token's `_id`")]


@router.get("", response_model=schema.Tokens, summary="List access tokens (not revoked)")
def list_tokens(plane: Plane, actor: Admin) -> JsonObject:
    items = tokens.list_tokens(plane, actor)
    return {
        "_links": {"self": {"href": "/api/v2/tokens", "type": "application/json"}},
        "items": items,
        "totalCount": len(items),
    }


@router.post(
    "",
    response_model=schema.Token,
    status_code=status.HTTP_201_CREATED,
    summary="Create an access token; `token` holds the secret, shown only in this answer",
)
def create_token(plane: Plane, actor: Admin, body: schema.TokenPost) -> JsonObject:
    request = tokens.TokenRequest(
        name=body.name,
        role=body.role,
        project=body.project_key,
        environment=body.environment_key,
        description=body.description,
        bypass_approvals=bool(body.bypass_approvals),
        inline_role=body.inline_role,
        custom_role_ids=body.custom_role_ids,
    )
    return tokens.create_token(plane, actor, request)


@router.get("/{tokenId}", response_model=schema.Token, summary="Get an access token")
def get_token(plane: Plane, actor: Admin, token_id: TokenId) -> JsonObject:
    return tokens.get_token(plane, actor, token_id)


@router.delete(
    "/{tokenId}",
    status_code=status.HTTP_204_NO_CONTENT,
    response_class=Response,
    summary="Revoke an access token",
)
def revoke_token(plane: Plane, actor: Admin, token_id: TokenId) -> Response:
    tokens.revoke_token(plane, actor, token_id)
    return Response(status_code=status.HTTP_204_NO_CONTENT)
