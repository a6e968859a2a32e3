"""Pydantic models of the webhook and chat-integration endpoints' bodies: LaunchDarkly's
`webhookPost`/`Webhook` and `subscriptionPost`/`Integration` field names, with Flagstaff's
`_status` and delivery log. They validate requests at the edge and describe responses in the
OpenAPI document; the rules behind the values live in `services.receivers`."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from flagstaff_server.http.api.schema import Links, Request, Response

StatementList = Any
"""Policy statements, checked by `domain.policy` (so each problem names its JSON pointer)."""


class WebhookPost(Request):
    url: str = Field(description="Where changes are POSTed: an absolute http(s) URL")
    sign: bool = Field(
        description="Send `X-LD-Signature` (HMAC-SHA256 hex of the body, keyed with the secret)"
    )
    on: bool = Field(description="Whether changes are sent")
    secret: str | None = Field(
        default=None, description="The signing key; generated when `sign` is true and none is given"
    )
    name: str | None = None
    tags: list[str] | None = None
    statements: StatementList = Field(
        default=None,
        description="A policy filtering which changes are sent (LaunchDarkly's statements); "
        "none: every change",
    )


class Statement(Response):
    effect: Literal["allow", "deny"]
    resources: list[str] | None = None
    not_resources: list[str] | None = None
    actions: list[str] | None = None
    not_actions: list[str] | None = None


class ReceiverStatus(Response):
    success_count: int
    error_count: int
    last_success: int | None = Field(description="Epoch ms of the last delivered attempt")
    last_error: int | None = Field(description="Epoch ms of the last failed attempt")
    last_error_message: str | None
    pending: int = Field(description="Deliveries not made yet")
    failures: int = Field(description="Failed attempts in a row")
    circuit: Literal["closed", "open"] = Field(
        description="open: the receiver failed repeatedly; one probe at `circuitOpenUntil`"
    )
    circuit_open_until: int | None


class Webhook(Response):
    links: Links = Field(alias="_links")
    id: str = Field(alias="_id")
    url: str
    on: bool
    name: str | None
    tags: list[str]
    statements: list[Statement]
    sign: bool
    secret: str | None = Field(default=None, description="Shown to admins only")
    status: ReceiverStatus = Field(alias="_status")


class Webhooks(Response):
    links: Links = Field(alias="_links")
    items: list[Webhook]
    total_count: int


class Attempt(Response):
    date: int
    status_code: int | None = Field(description="The receiver's HTTP status; null: no answer")
    latency_ms: int
    error: str | None = Field(description="Why it failed; null for a 2xx answer")


class Delivery(Response):
    links: Links = Field(alias="_links")
    id: str = Field(alias="_id")
    audit_log_entry_id: str = Field(description="The change: its audit entry is the body sent")
    order_key: str = Field(description="Deliveries with the same key (one flag) go out in order")
    status: Literal["pending", "delivered", "failed"]
    attempts: int
    creation_date: int
    next_attempt_date: int | None
    finished_date: int | None
    attempt_log: list[Attempt]


class Deliveries(Response):
    links: Links = Field(alias="_links")
    items: list[Delivery]
    total_count: int
