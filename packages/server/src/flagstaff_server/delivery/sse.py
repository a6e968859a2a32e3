"""Server-Sent Events framing and the LaunchDarkly event payloads (FDv1 and FDv2) as bytes.

Pure byte builders: every payload is assembled from already-encoded JSON pieces, so an item is
serialised once no matter how many events or streams carry it. No I/O here.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Literal

import orjson

ItemKind = Literal["flag", "segment"]

COLLECTION: dict[ItemKind, str] = {"flag": "flags", "segment": "segments"}
"""The FDv1 path segment / data-set key for each item kind."""

HEARTBEAT = b":\n\n"
"""An SSE comment: keeps proxies and SDK read timeouts (5 min) from closing an idle stream."""


def frame(event: bytes, data: bytes) -> bytes:
    """One SSE event. `data` must be single-line JSON (orjson never emits newlines)."""
    return b"event: " + event + b"\ndata: " + data + b"\n\n"


def retry_hint(milliseconds: int) -> bytes:
    """The SSE `retry:` field: the reconnect delay an SDK's event-source client should use."""
    return b"retry: %d\n\n" % milliseconds


def data_set(
    flags: Iterable[tuple[bytes, bytes]], segments: Iterable[tuple[bytes, bytes]]
) -> bytes:
    """`{"flags":{...},"segments":{...}}` from (encoded key, encoded item) pairs."""
    return (
        b'{"flags":{'
        + b",".join(key + b":" + item for key, item in flags)
        + b'},"segments":{'
        + b",".join(key + b":" + item for key, item in segments)
        + b"}}"
    )


def object_map(items: Iterable[tuple[bytes, bytes]]) -> bytes:
    """`{key: item, ...}` from (encoded key, encoded item) pairs (the `/sdk/flags` body)."""
    return b"{" + b",".join(key + b":" + item for key, item in items) + b"}"


# FDv1 ------------------------------------------------------------------------------------------


def v1_put(body: bytes) -> bytes:
    return frame(b"put", b'{"path":"/","data":' + body + b"}")


def v1_patch(kind: ItemKind, key: str, item: bytes) -> bytes:
    path = orjson.dumps(f"/{COLLECTION[kind]}/{key}")
    return frame(b"patch", b'{"path":' + path + b',"data":' + item + b"}")


def v1_delete(kind: ItemKind, key: str, version: int) -> bytes:
    path = orjson.dumps(f"/{COLLECTION[kind]}/{key}")
    return frame(b"delete", b'{"path":' + path + b',"version":%d}' % version)


# FDv2 ------------------------------------------------------------------------------------------

IntentCode = Literal["xfer-full", "xfer-changes", "none"]

SERVER_INTENT = b"server-intent"
PUT_OBJECT = b"put-object"
DELETE_OBJECT = b"delete-object"
PAYLOAD_TRANSFERRED = b"payload-transferred"
GOODBYE = b"goodbye"


def put_object(kind: ItemKind, key: bytes, version: int, item: bytes) -> bytes:
    """The `put-object` data; `key` is already JSON-encoded."""
    return b'{"version":%d,"kind":"%s","key":%s,"object":%s}' % (
        version,
        kind.encode(),
        key,
        item,
    )


def delete_object(kind: ItemKind, key: str, version: int) -> bytes:
    return b'{"version":%d,"kind":"%s","key":%s}' % (version, kind.encode(), orjson.dumps(key))


def server_intent(payload_id: str, target: int, code: IntentCode, reason: str) -> bytes:
    return orjson.dumps(
        {"payloads": [{"id": payload_id, "target": target, "intentCode": code, "reason": reason}]}
    )


def payload_transferred(state: str, version: int) -> bytes:
    return orjson.dumps({"state": state, "version": version})


def goodbye(reason: str) -> bytes:
    return frame(GOODBYE, orjson.dumps({"reason": reason}))


def poll_body(events: Iterable[tuple[bytes, bytes]]) -> bytes:
    """The FDv2 polling body `{"events":[{"event":name,"data":{...}},...]}`."""
    return (
        b'{"events":['
        + b",".join(b'{"event":"' + name + b'","data":' + data + b"}" for name, data in events)
        + b"]}"
    )
