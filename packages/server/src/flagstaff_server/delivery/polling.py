"""The answers to the server-side polls (FDv1 `/sdk/latest-all`, FDv2 `/sdk/poll`) for an
environment the node serves: one pure function per endpoint, called both by the ASGI route
(`delivery.asgi`) and by the connection that answers polls without an ASGI task
(`delivery.connection`), so the two paths cannot drift. The bodies are the snapshot's prepared
bytes; nothing is encoded per request, and the header lines of each answer are built once per
snapshot (`Head`, kept in the snapshot's lazy cache): a poll allocates its `Answer` and nothing
else. Admission is decided and counted here.
"""

from __future__ import annotations

from typing import Literal

import orjson

from flagstaff_server.asgi import Headers
from flagstaff_server.delivery.answer import Answer, Head
from flagstaff_server.delivery.serving import ServingNode
from flagstaff_server.delivery.snapshot import Snapshot
from flagstaff_server.delivery.store import Environment

JSON = b"application/json"
FULL_SHED = "too many full payloads right now; retry later"
POLL_PATHS = ("/sdk/latest-all", "/sdk/poll")


def latest_all(
    node: ServingNode, env: Environment, if_none_match: bytes, accept_encoding: bytes
) -> Answer:
    snapshot = env.snapshot
    if matches(if_none_match, snapshot):
        return not_modified(node, env, snapshot)
    if not node.admission.admit_full_send():
        return unavailable(node, FULL_SHED)
    if b"gzip" in accept_encoding:
        return Answer(200, _head(env, snapshot, "gzip"), snapshot.gzip_body())
    return Answer(200, _head(env, snapshot, "item"), snapshot.body)


def v2_poll(node: ServingNode, env: Environment, if_none_match: bytes, basis: str | None) -> Answer:
    snapshot = env.snapshot
    if matches(if_none_match, snapshot):
        return not_modified(node, env, snapshot)
    transfer = snapshot.transfer_for(basis)
    admission = node.admission
    if transfer.code == "xfer-full":
        if not admission.admit_full_send():
            return unavailable(node, FULL_SHED)
    else:
        admission.counts["delta_send" if transfer.changes else "none_send"] += 1
    return Answer(200, _head(env, snapshot, "item"), snapshot.v2_poll_body(transfer))


def not_modified(node: ServingNode, env: Environment, snapshot: Snapshot) -> Answer:
    node.admission.counts["not_modified"] += 1
    return Answer(304, _head(env, snapshot, "not_modified"), b"")


def unavailable(node: ServingNode, message: str) -> Answer:
    return problem(
        503,
        "service_unavailable",
        message,
        [(b"retry-after", b"%d" % node.admission.retry_after())],
    )


def problem(status: int, code: str, message: str, extra: Headers | None = None) -> Answer:
    body = orjson.dumps({"code": code, "message": message, "status": status})
    headers = [(b"content-type", b"application/problem+json"), *(extra or [])]
    return Answer(status, Head.of(headers), body)


def matches(if_none_match: bytes, snapshot: Snapshot) -> bool:
    if not if_none_match:
        return False
    etag = snapshot.etag
    if if_none_match == etag:  # what SDKs send: the one tag they were given
        return True
    return any(tag.strip().removeprefix(b"W/") == etag for tag in if_none_match.split(b","))


def env_header(env: Environment) -> Headers:
    if env.credentials is not None and env.credentials.client_side_id:
        return [(b"x-ld-envid", env.credentials.client_side_id.encode())]
    return []


def item_headers(env: Environment, snapshot: Snapshot) -> Headers:
    return [
        (b"content-type", JSON),
        (b"etag", snapshot.etag),
        (b"vary", b"accept-encoding"),
        *env_header(env),
    ]


HeadKind = Literal["item", "gzip", "not_modified"]


def _head(env: Environment, snapshot: Snapshot, kind: HeadKind) -> Head:
    """The head of a 200 (plain or gzip) or a 304 for `snapshot`, built once per snapshot and
    environment id (the id can change without the data: a credential change)."""
    env_id = env.credentials.client_side_id if env.credentials is not None else None
    heads = snapshot.lazy.poll_heads
    key = (kind, env_id)
    head = heads.get(key)
    if head is None:
        if kind == "not_modified":
            head = Head.of([(b"etag", snapshot.etag), *env_header(env)])
        else:
            headers = item_headers(env, snapshot)
            if kind == "gzip":
                headers.append((b"content-encoding", b"gzip"))
            head = Head.of(headers)
        heads[key] = head
    return head
