"""What is sent to a receiver for one change: the request's body and headers. A webhook's body is
the audit entry in LaunchDarkly's shape, signed with `X-LD-Signature` (HMAC-SHA256 of the body,
keyed with the webhook's secret, lowercase hex) when signing is on; chat integrations' bodies come
from `domain.chat_message`. Pure: no I/O; the sender is an adapter."""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import orjson

SIGNATURE_HEADER = "X-LD-Signature"
DELIVERY_HEADER = "X-Flagstaff-Delivery"
"""The delivery's id: a receiver that gets one twice (after a crash) can tell."""
ATTEMPT_HEADER = "X-Flagstaff-Attempt"
USER_AGENT = "Flagstaff-Webhooks/1"


@dataclass(frozen=True, slots=True, kw_only=True)
class Message:
    url: str
    body: bytes
    headers: tuple[tuple[str, str], ...]


def signature(body: bytes, secret: str) -> str:
    """HMAC-SHA256 of the raw body keyed with the secret, as lowercase hex."""
    return hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()


def json_message(
    url: str,
    payload: Mapping[str, Any],
    *,
    delivery: int,
    attempt: int,
    secret: str | None = None,
) -> Message:
    """A JSON POST; signed when `secret` is given."""
    body = orjson.dumps(payload)
    headers = [
        ("Content-Type", "application/json"),
        ("User-Agent", USER_AGENT),
        (DELIVERY_HEADER, str(delivery)),
        (ATTEMPT_HEADER, str(attempt)),
    ]
    if secret is not None:
        headers.append((SIGNATURE_HEADER, signature(body, secret)))
    return Message(url=url, body=body, headers=tuple(headers))


def webhook_message(
    doc: Mapping[str, Any], entry: Mapping[str, Any], *, delivery: int, attempt: int
) -> Message:
    """A webhook's request: the entry as its body, signed when the webhook signs."""
    secret = doc.get("secret") if doc.get("sign") else None
    return json_message(
        str(doc["url"]),
        entry,
        delivery=delivery,
        attempt=attempt,
        secret=secret if isinstance(secret, str) else None,
    )
