"""Which client-side endpoint a request names: LaunchDarkly's browser, mobile and SDK-key paths
(`/sdk/evalx/...`, `/eval/...`, `/meval/...`, `/ping/...`, goals) and OFREP v1, each with the
credential it needs and the flags that credential may see. Pure: parses method and path only.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from flagstaff_core import Availability

PREFIXES = (
    "/sdk/evalx/",
    "/sdk/goals/",
    "/eval/",
    "/ping/",
    "/msdk/",
    "/meval",
    "/mping",
    "/ofrep/",
)
Credential = Literal["client-side", "mobile", "sdk"]
VIEW: dict[Credential, Availability] = {
    "client-side": Availability.CLIENT_SIDE,
    "mobile": Availability.MOBILE,
    "sdk": Availability.ALL,
}


STREAM_ROUTES = frozenset({"stream", "ping", "ofrep_sse"})
"""Routes whose answer is a stream, which may be served on the connection itself."""


def handles(path: str) -> bool:
    """Whether `path` belongs to client-side delivery (for the composition root's dispatch)."""
    return path.startswith(PREFIXES)


@dataclass(frozen=True, slots=True, kw_only=True)
class Route:
    """A parsed request path. `context` is the base64url segment of GET forms; None means the
    context comes in the body (REPORT)."""

    name: Literal[
        "evalx", "stream", "ping", "goals", "events", "ofrep_flag", "ofrep_bulk", "ofrep_sse"
    ]
    credential: Credential
    env_id: str = ""
    """The client-side id from the path (browser routes) or the OFREP SSE path."""
    context: str | None = None
    flag_key: str = ""


def route_of(method: str, path: str) -> Route | None:
    """The route for `method` and `path`, or None (404)."""
    parts = path.strip("/").split("/")
    head, n = parts[0], len(parts)
    get, report, post = method == "GET", method == "REPORT", method == "POST"
    if head == "sdk" and n >= 3 and parts[1] == "evalx":
        if parts[2] in ("contexts", "users") and n >= 4 and get:
            return Route(name="evalx", credential="sdk", context=_segment(parts[3:]))
        if parts[2] in ("context", "user") and n == 3 and report:
            return Route(name="evalx", credential="sdk")
        if n >= 5 and parts[3] in ("contexts", "users") and get:
            return Route(
                name="evalx", credential="client-side", env_id=parts[2], context=_segment(parts[4:])
            )
        if n == 4 and parts[3] in ("context", "user") and report:
            return Route(name="evalx", credential="client-side", env_id=parts[2])
        return None
    if head == "sdk" and n == 3 and parts[1] == "goals" and get:
        return Route(name="goals", credential="client-side", env_id=parts[2])
    if head == "msdk" and n >= 3 and parts[1] == "evalx":
        if parts[2] in ("contexts", "users") and n >= 4 and get:
            return Route(name="evalx", credential="mobile", context=_segment(parts[3:]))
        if parts[2] in ("context", "user") and n == 3 and report:
            return Route(name="evalx", credential="mobile")
        return None
    if head == "eval" and n >= 3 and get:
        return Route(
            name="stream", credential="client-side", env_id=parts[1], context=_segment(parts[2:])
        )
    if head == "eval" and n == 2 and report:
        return Route(name="stream", credential="client-side", env_id=parts[1])
    if head == "meval" and n >= 2 and get:
        return Route(name="stream", credential="mobile", context=_segment(parts[1:]))
    if head == "meval" and n == 1 and report:
        return Route(name="stream", credential="mobile")
    if head == "ping" and n == 2 and get:
        return Route(name="ping", credential="client-side", env_id=parts[1])
    if head == "mping" and n == 1 and get:
        return Route(name="ping", credential="mobile")
    if head == "ofrep" and n >= 4 and parts[1] == "v1":
        if parts[2:4] == ["evaluate", "flags"] and post:
            if n == 4:
                return Route(name="ofrep_bulk", credential="sdk")
            if n == 5 and parts[4]:
                return Route(name="ofrep_flag", credential="sdk", flag_key=parts[4])
        if parts[2] == "sse" and n == 4 and get:
            return Route(name="ofrep_sse", credential="client-side", env_id=parts[3])
    return None


def _segment(parts: list[str]) -> str:
    # A standard-alphabet base64 context may contain "/", which splits the path: rejoin it, and
    # read either alphabet.
    return "/".join(parts).replace("+", "-").replace("/", "_")
