"""`/status/page` (HTML) and `/status/feed.json` as a raw ASGI app, mounted by the delivery
roles of `flagstaff serve` and by the relay. GET and HEAD only; no credential (the page is for
everyone who depends on the platform, during an outage above all) and nothing in it that needs
one.
"""

from __future__ import annotations

from collections.abc import Callable

import orjson

from flagstaff_server.asgi import Headers, Receive, Scope, Send
from flagstaff_server.http.problem import PROBLEM_MEDIA_TYPE, problem_body
from flagstaff_server.status_page.page_html import CONTENT_SECURITY_POLICY
from flagstaff_server.status_page.site import StatusSite

PAGE = "/status/page"
FEED = "/status/feed.json"
PATHS = (PAGE, FEED)

COMMON: Headers = [
    (b"cache-control", b"no-cache"),
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"no-referrer"),
]


def handles(path: str) -> bool:
    return path in PATHS


class StatusPageApp:
    def __init__(self, site: Callable[[], StatusSite | None]) -> None:
        self.site = site
        """The node's status site; None while the node starts."""

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return
        method = scope["method"]
        if method not in ("GET", "HEAD"):
            await _problem(send, 405, "method_not_allowed", "only GET is supported here")
            return
        site = self.site()
        if site is None:
            await _problem(send, 503, "service_unavailable", "this node is starting")
            return
        if scope["path"] == PAGE:
            body = site.page()
            headers = [
                (b"content-type", b"text/html; charset=utf-8"),
                (b"content-security-policy", CONTENT_SECURITY_POLICY.encode()),
                *COMMON,
            ]
        else:
            body = orjson.dumps(site.feed())
            # a public document: other sites (an incident banner on a customer's own status
            # page) may read it from a browser
            headers = [
                (b"content-type", b"application/json"),
                (b"access-control-allow-origin", b"*"),
                *COMMON,
            ]
        await _respond(send, 200, body, headers, head=method == "HEAD")


async def _respond(
    send: Send, status: int, body: bytes, headers: Headers, *, head: bool = False
) -> None:
    headers = [*headers, (b"content-length", b"%d" % len(body))]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": b"" if head else body})


async def _problem(send: Send, status: int, code: str, message: str) -> None:
    body = orjson.dumps(problem_body(status=status, code=code, message=message, path=None))
    headers: Headers = [(b"content-type", PROBLEM_MEDIA_TYPE.encode())]
    if status == 405:
        headers.append((b"allow", b"GET, HEAD"))
    if status == 503:
        headers.append((b"retry-after", b"1"))
    await _respond(send, status, body, headers)
