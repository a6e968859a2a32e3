"""A whole HTTP answer as the delivery endpoints compute it, for the ASGI route and the
connection (`direct_answers`) alike: status, own headers (as ASGI pairs and as HTTP/1.1 lines),
body. No content-length: each writer adds it (except to a 304). Types only.
"""

from __future__ import annotations

from typing import NamedTuple

from flagstaff_server.asgi import Headers


class Head(NamedTuple):
    """An answer's own headers, as ASGI pairs and as the lines the connection writes
    (`name: value\r\n` each, joined)."""

    headers: tuple[tuple[bytes, bytes], ...]
    lines: bytes

    @classmethod
    def of(cls, headers: Headers) -> Head:
        return cls(tuple(headers), b"".join(b"%b: %b\r\n" % pair for pair in headers))


class Answer(NamedTuple):
    """A whole response (a tuple: one is made per request on the hottest paths)."""

    status: int
    head: Head
    body: bytes

    @property
    def headers(self) -> Headers:
        return list(self.head.headers)
