"""`/break-glass/overrides` as a raw ASGI app, mounted by delivery's and the relay's composition
roots: GET lists the node's overrides, POST pushes a signed override, DELETE a signed clear.
Refusals are problem JSON naming the field (`path`, a JSON pointer into the document).

No credential but the document's own signature: a push is accepted from anyone who holds a
document signed by a trusted key, which is the point when every other credential is out of reach.
"""

from __future__ import annotations

from collections.abc import Callable

import orjson

from flagstaff_server.asgi import Receive, Scope, Send
from flagstaff_server.break_glass.document import ENDPOINT, MAX_DOCUMENT_BYTES
from flagstaff_server.break_glass.switch import KillSwitch
from flagstaff_server.errors import FlagstaffError, ValidationError
from flagstaff_server.http.problem import PROBLEM_MEDIA_TYPE, kind_of, problem_body


def handles(path: str) -> bool:
    return path == ENDPOINT


class BreakGlassApp:
    def __init__(self, switch: Callable[[], KillSwitch | None]) -> None:
        self.switch = switch
        """The node's kill switch; None while it starts."""

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return
        method = scope["method"]
        switch = self.switch()
        try:
            if method not in ("GET", "HEAD", "POST", "DELETE"):
                await _send(
                    send, 405, _problem(405, "method_not_allowed", f"{method} is not allowed here")
                )
                return
            if switch is None:
                await _send(send, 503, _problem(503, "service_unavailable", "starting"), retry=True)
                return
            if method in ("GET", "HEAD"):
                await _send(send, 200, switch.listing(), media_type=b"application/json")
                return
            body = await _read_body(receive)
            result = await switch.submit(body, clear=method == "DELETE")
            await _send(send, 200, result, media_type=b"application/json")
        except FlagstaffError as exc:
            kind = kind_of(exc)
            body_json = problem_body(
                status=kind.status,
                code=exc.code,
                message=exc.message,
                path=exc.path,
                title=kind.title,
            )
            await _send(send, kind.status, body_json, retry=kind.status == 503)


def _problem(status: int, code: str, message: str) -> dict[str, object]:
    return problem_body(status=status, code=code, message=message, path=None)


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


async def _send(
    send: Send,
    status: int,
    body: object,
    *,
    media_type: bytes = PROBLEM_MEDIA_TYPE.encode(),
    retry: bool = False,
) -> None:
    data = orjson.dumps(body)
    headers = [(b"content-type", media_type), (b"content-length", b"%d" % len(data))]
    if retry:
        headers.append((b"retry-after", b"1"))
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": data})
