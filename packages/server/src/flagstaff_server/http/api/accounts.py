"""Routes for `/api/v2/accounts`: local web UI accounts (unscoped admins only): list, create,
change role or password, delete. Rules in `services.accounts`."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import Path, Response, status
from starlette.concurrency import run_in_threadpool

from flagstaff_server.http.api import schema
from flagstaff_server.http.api.access import Admin, Plane
from flagstaff_server.http.api.prefixed_router import PrefixedRouter
from flagstaff_server.services import accounts

router = PrefixedRouter(prefix="/accounts", tags=["web UI accounts"])

AccountId = Annotated[str, Path(alias="accountId", description="The account's `_id`")]


class AccountPost(schema.Request):
    email: str
    password: str
    role: str
    name: str | None = None


class AccountUpdate(schema.Request):
    role: str | None = None
    password: str | None = None


@router.get("", summary="List local accounts")
def list_accounts(plane: Plane, actor: Admin) -> dict[str, Any]:
    items = accounts.list_accounts(plane, actor)
    return {"items": items, "totalCount": len(items)}


@router.post("", status_code=status.HTTP_201_CREATED, summary="Create a local account")
async def create_account(plane: Plane, actor: Admin, body: AccountPost) -> dict[str, Any]:
    request = accounts.AccountRequest(
        email=body.email, role=body.role, password=body.password, name=body.name
    )
    return await run_in_threadpool(accounts.create_account, plane, actor, request)


@router.post("/{accountId}", summary="Change an account's role and/or password")
async def update_account(
    plane: Plane, actor: Admin, account_id: AccountId, body: AccountUpdate
) -> dict[str, Any]:
    return await run_in_threadpool(
        lambda: accounts.update_account(
            plane, actor, account_id, role=body.role, password=body.password
        )
    )


@router.delete(
    "/{accountId}",
    status_code=status.HTTP_204_NO_CONTENT,
    response_class=Response,
    summary="Delete a local account (its sessions end)",
)
def delete_account(plane: Plane, actor: Admin, account_id: AccountId) -> Response:
    accounts.delete_account(plane, actor, account_id)
    return Response(status_code=status.HTTP_204_NO_CONTENT)
