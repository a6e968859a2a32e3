"""`/status/page` (HTML), `/status/feed.json` and `/break-glass/notices` as a raw ASGI app,
mounted by the delivery roles of `flagstaff serve` and by the relay. The page and the feed take
GET and HEAD and no credential (they are for everyone who depends on the platform, during an
outage above all) and hold nothing that needs one. `/break-glass/notices` takes signed notices
(POST), signed clears (DELETE) and lists them (GET): the signature is the credential, as for the
kill switch's overrides; refusals are problem JSON naming the field.
"""

from __future__ import annotations

from collections.abc import Callable

import orjson

from flagstaff_server.asgi import Headers, Receive, Scope, Send
from flagstaff_server.break_glass.document import MAX_DOCUMENT_BYTES
from flagstaff_server.break_glass.notice_document import ENDPOINT as PUSH
from flagstaff_server.errors import FlagstaffError, ValidationError
from flagstaff_server.http.problem import PROBLEM_MEDIA_TYPE, kind_of, problem_body
from flagstaff_server.status_page.page_html import CONTENT_SECURITY_POLICY
from flagstaff_server.status_page.signed_notices import SignedNotices
from flagstaff_server.status_page.site import StatusSite

PAGE = "/status/page"
FEED = "/status/feed.json"
PATHS = (PAGE, FEED, PUSH)

COMMON: Headers = [
    (b"cache-control", b"no-cache"),
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"no-referrer"),
]


def handles(path: str) -> bool:
    return path in PATHS


class StatusPageApp:
    def __init__(
        self,
        site: Callable[[], StatusSite | None],
        signed: Callable[[], SignedNotices | None] = lambda: None,
    ) -> None:
        self.site = site
        """The node's status site; None while the node starts."""
        self.signed = signed
        """The node's signed notices; None while it starts."""

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return
        method = scope["method"]
        if scope["path"] == PUSH:
            await self._push(method, receive, send)
            return
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

    async def _push(self, method: str, receive: Receive, send: Send) -> None:
        if method not in ("GET", "HEAD", "POST", "DELETE"):
            await _problem(
                send,
                405,
                "method_not_allowed",
                f"{method} is not allowed here",
                allow=b"GET, HEAD, POST, DELETE",
            )
            return
        signed = self.signed()
        if signed is None:
            await _problem(send, 503, "service_unavailable", "this node is starting")
            return
        try:
            if method in ("GET", "HEAD"):
                result = signed.listing()
            else:
                body = await _read_body(receive)
                result = await signed.submit(body, clear=method == "DELETE")
        except FlagstaffError as exc:
            kind = kind_of(exc)
            problem = problem_body(
                status=kind.status, code=exc.code, message=exc.message, path=exc.path
            )
            headers: Headers = [(b"content-type", PROBLEM_MEDIA_TYPE.encode())]
            if kind.status == 503:
                headers.append((b"retry-after", b"1"))
            await _respond(send, kind.status, orjson.dumps(problem), headers)
            return
        json: Headers = [(b"content-type", b"application/json"), (b"cache-control", b"no-store")]
        await _respond(send, 200, orjson.dumps(result), json, head=method == "HEAD")


async def _read_body(receive: Receive) -> bytes:
    chunks: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            break
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > MAX_DOCUMENT_BYTES:
            raise ValidationError(
                f"a break-glass document is at most {MAX_DOCUMENT_BYTES} bytes", path=""
            )
        chunks.append(chunk)
        if not message.get("more_body", False):
            break
    return b"".join(chunks)


async def _respond(
    send: Send, status: int, body: bytes, headers: Headers, *, head: bool = False
) -> None:
    headers = [*headers, (b"content-length", b"%d" % len(body))]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": b"" if head else body})


async def _problem(
    send: Send, status: int, code: str, message: str, *, allow: bytes = b"GET, HEAD"
) -> None:
    body = orjson.dumps(problem_body(status=status, code=code, message=message, path=None))
    headers: Headers = [(b"content-type", PROBLEM_MEDIA_TYPE.encode())]
    if status == 405:
        headers.append((b"allow", allow))
    if status == 503:
        headers.append((b"retry-after", b"1"))
    await _respond(send, status, body, headers)
