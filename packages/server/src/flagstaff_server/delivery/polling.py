"""The answers to the server-side polls (FDv1 `/sdk/latest-all`, FDv2 `/sdk/poll`) for an
environment the node serves: one pure function per endpoint, called both by the ASGI route
(`delivery.asgi`) and by the connection that answers polls without an ASGI task
(`delivery.connection`), so the two paths cannot drift. The bodies are the snapshot's prepared
bytes; nothing is encoded per request. Admission is decided and counted here.
"""

from __future__ import annotations

from dataclasses import dataclass

import orjson

from flagstaff_server.asgi import Headers
from flagstaff_server.delivery.serving import ServingNode
from flagstaff_server.delivery.snapshot import Snapshot
from flagstaff_server.delivery.store import Environment

JSON = b"application/json"
FULL_SHED = "too many full payloads right now; retry later"
POLL_PATHS = ("/sdk/latest-all", "/sdk/poll")


@dataclass(frozen=True, slots=True)
class PollAnswer:
    """A whole response: `headers` carry no content-length (the writer adds it, except for
    a 304, which has none)."""

    status: int
    headers: Headers
    body: bytes


def latest_all(
    node: ServingNode, env: Environment, if_none_match: bytes, accept_encoding: bytes
) -> PollAnswer:
    snapshot = env.snapshot
    if matches(if_none_match, snapshot):
        return not_modified(node, env, snapshot)
    if not node.admission.admit_full_send():
        return unavailable(node, FULL_SHED)
    headers = item_headers(env, snapshot)
    if b"gzip" in accept_encoding:
        headers.append((b"content-encoding", b"gzip"))
        return PollAnswer(200, headers, snapshot.gzip_body())
    return PollAnswer(200, headers, snapshot.body)


def v2_poll(
    node: ServingNode, env: Environment, if_none_match: bytes, basis: str | None
) -> PollAnswer:
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
    return PollAnswer(200, item_headers(env, snapshot), snapshot.v2_poll_body(transfer))


def not_modified(node: ServingNode, env: Environment, snapshot: Snapshot) -> PollAnswer:
    node.admission.counts["not_modified"] += 1
    return PollAnswer(304, [(b"etag", snapshot.etag), *env_header(env)], b"")


def unavailable(node: ServingNode, message: str) -> PollAnswer:
    return problem(
        503,
        "service_unavailable",
        message,
        [(b"retry-after", b"%d" % node.admission.retry_after())],
    )


def problem(status: int, code: str, message: str, extra: Headers | None = None) -> PollAnswer:
    body = orjson.dumps({"code": code, "message": message, "status": status})
    headers = [(b"content-type", b"application/problem+json"), *(extra or [])]
    return PollAnswer(status, headers, body)


def matches(if_none_match: bytes, snapshot: Snapshot) -> bool:
    if not if_none_match:
        return False
    etag = snapshot.etag
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
