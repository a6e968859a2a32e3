"""Routes for `/api/v2/webhooks` (LaunchDarkly's shapes) and each webhook's delivery log: parse,
call one `services.webhooks` use case, shape the answer."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import Body, Path, Query, Response, status

from flagstaff_server.http.api import receiver_schema
from flagstaff_server.http.api.access import Plane, Reader, Writer
from flagstaff_server.http.api.prefixed_router import PrefixedRouter
from flagstaff_server.services import webhooks
from flagstaff_server.services.ports import JsonObject

router = PrefixedRouter(prefix="/webhooks", tags=["webhooks"])

WebhookId = Annotated[str, Path(alias="id", description="The webhook's `_id`")]
DeliveryId = Annotated[str, Path(alias="deliveryId", description="The delivery's `_id`")]
Limit = Annotated[int, Query(ge=1, le=1000)]
Offset = Annotated[int, Query(ge=0)]
StatusFilter = Annotated[
    str | None,
    Query(alias="status", description="Only deliveries in this state: pending, delivered, failed"),
]
PatchBody = Annotated[
    Any,
    Body(
        description="A JSON Patch array (or `{comment, patch}`) of url, on, sign, secret, name, "
        "tags or statements",
        openapi_examples={"off": {"value": [{"op": "replace", "path": "/on", "value": False}]}},
    ),
]


def collection(href: str, items: list[JsonObject], total: int) -> JsonObject:
    return {
        "_links": {"self": {"href": href, "type": "application/json"}},
        "items": items,
        "totalCount": total,
    }


@router.get(
    "",
    response_model=receiver_schema.Webhooks,
    response_model_exclude_unset=True,
    summary="List webhooks",
)
def list_webhooks(plane: Plane, actor: Reader) -> JsonObject:
    items = webhooks.list_webhooks(plane, actor)
    return collection(webhooks.LINK_BASE, items, len(items))


# 200, not 201: LaunchDarkly's answer to this POST
@router.post(
    "",
    response_model=receiver_schema.Webhook,
    response_model_exclude_unset=True,
    summary="Create a webhook: changes matching its statements are POSTed to its URL",
)
def create_webhook(plane: Plane, actor: Writer, body: receiver_schema.WebhookPost) -> JsonObject:
    request = webhooks.WebhookRequest(
        url=body.url,
        sign=body.sign,
        on=body.on,
        secret=body.secret,
        name=body.name,
        tags=tuple(body.tags or ()),
        statements=body.statements,
    )
    return webhooks.create_webhook(plane, actor, request)


@router.get(
    "/{id}",
    response_model=receiver_schema.Webhook,
    response_model_exclude_unset=True,
    summary="Get a webhook",
)
def get_webhook(plane: Plane, actor: Reader, webhook_id: WebhookId) -> JsonObject:
    return webhooks.get_webhook(plane, actor, webhook_id)


@router.patch(
    "/{id}",
    response_model=receiver_schema.Webhook,
    response_model_exclude_unset=True,
    summary="Update a webhook (JSON Patch)",
)
def patch_webhook(
    plane: Plane, actor: Writer, webhook_id: WebhookId, body: PatchBody
) -> JsonObject:
    return webhooks.patch_webhook(plane, actor, webhook_id, body)


@router.delete(
    "/{id}",
    status_code=status.HTTP_204_NO_CONTENT,
    response_class=Response,
    summary="Delete a webhook and its pending deliveries",
)
def delete_webhook(plane: Plane, actor: Writer, webhook_id: WebhookId) -> Response:
    webhooks.delete_webhook(plane, actor, webhook_id)
    return Response(status_code=status.HTTP_204_NO_CONTENT)


@router.get(
    "/{id}/deliveries",
    response_model=receiver_schema.Deliveries,
    summary="A webhook's deliveries, newest first, each with its attempts",
)
def list_deliveries(
    plane: Plane,
    actor: Reader,
    webhook_id: WebhookId,
    limit: Limit = 20,
    offset: Offset = 0,
    status_filter: StatusFilter = None,
) -> JsonObject:
    items, total = webhooks.list_deliveries(
        plane, actor, webhook_id, status=status_filter, limit=limit, offset=offset
    )
    return collection(f"{webhooks.href(webhook_id)}/deliveries", items, total)


@router.get(
    "/{id}/deliveries/{deliveryId}",
    response_model=receiver_schema.Delivery,
    summary="One delivery of a webhook, with its attempts",
)
def get_delivery(
    plane: Plane, actor: Reader, webhook_id: WebhookId, delivery_id: DeliveryId
) -> JsonObject:
    return webhooks.get_delivery(plane, actor, webhook_id, delivery_id)
