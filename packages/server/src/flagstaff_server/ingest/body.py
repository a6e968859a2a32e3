"""An event request's body: reading it within a size limit, bounded gzip decompression (a zip
bomb hits the limit, never memory), the JSON shape check and the nesting limit (an event payload
nests at most `nesting.MAX_DOCUMENT_DEPTH` deep). Pure apart from awaiting `receive`."""

from __future__ import annotations

import re
import zlib

import msgspec
import orjson

from flagstaff_server.asgi import Receive
from flagstaff_server.nesting import (
    MAX_DOCUMENT_DEPTH,
    is_text_too_deep,
    too_deep_message,
    where_too_deep,
)

# Members looked at to name the place of a payload nested too deep; past it the body is named.
POINTER_BUDGET = 100_000


class BodyError(Exception):
    """The body cannot be accepted; `status` is 400 or 413, `message` says why and `field` is
    the JSON pointer of the offending member: the empty pointer (the whole body) unless one
    member is to blame, as the management API names a body that is not JSON."""

    def __init__(self, status: int, message: str, field: str = "") -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.field = field


async def read_body(receive: Receive, limit: int) -> bytes:
    """The request body as sent; 413 once it grows past `limit` (the rest is not read)."""
    chunks: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            raise BodyError(400, "the client went away before sending the whole body")
        chunk: bytes = message.get("body", b"")
        size += len(chunk)
        if size > limit:
            raise BodyError(413, f"the body is larger than {limit} bytes")
        chunks.append(chunk)
        if not message.get("more_body", False):
            return b"".join(chunks)


def gunzip(data: bytes, limit: int) -> bytes:
    """Decompress a gzip body, producing at most `limit` bytes: 413 beyond that, 400 when the
    bytes are not gzip."""
    inflater = zlib.decompressobj(16 + zlib.MAX_WBITS)
    try:
        out = inflater.decompress(data, limit + 1)
    except zlib.error as exc:
        raise BodyError(400, f"the body is not valid gzip: {exc}") from None
    if len(out) > limit or inflater.unconsumed_tail:
        raise BodyError(413, f"the decompressed body is larger than {limit} bytes")
    if not inflater.eof:
        raise BodyError(400, "the gzip body is truncated")
    return out


class _Event(msgspec.Struct, gc=False):
    """What acceptance checks of an event: an object with a string `kind`. Other members are
    skipped by the decoder (still checked as JSON) without building Python objects for them."""

    kind: str


_ANALYTICS = msgspec.json.Decoder(list[_Event])
_DIAGNOSTIC = msgspec.json.Decoder(_Event | list[_Event])


def check_events(data: bytes, *, diagnostic: bool) -> int:
    """Validate the JSON shape and nesting and return how many events it holds. Analytics bodies
    are an array of objects; a diagnostic body is one object (what SDKs send) or such an array."""
    try:
        parsed = (_DIAGNOSTIC if diagnostic else _ANALYTICS).decode(data)
    except RecursionError:
        raise too_deep(data) from None
    except msgspec.ValidationError as exc:
        message = f"the body is not a valid events payload: {exc}"
        raise BodyError(400, message, json_pointer(str(exc))) from None
    except msgspec.DecodeError as exc:
        raise BodyError(400, f"the body is not valid JSON: {exc}") from None
    if not data.isascii():
        # members the decoder skips are not decoded, so their UTF-8 is checked here
        try:
            data.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise BodyError(400, f"the body is not valid UTF-8 JSON: {exc}") from None
    if is_text_too_deep(data, MAX_DOCUMENT_DEPTH):
        raise too_deep(data)
    return 1 if isinstance(parsed, _Event) else len(parsed)


def too_deep(data: bytes) -> BodyError:
    """The 400 for a payload nested past the limit, naming the place when that is cheap."""
    message = f"the body is {too_deep_message(MAX_DOCUMENT_DEPTH)}"
    try:
        document = orjson.loads(data)
    except orjson.JSONDecodeError:  # past orjson's own limit of 1024 levels, or numbers it refuses
        return BodyError(400, message, "")
    place = where_too_deep(document, MAX_DOCUMENT_DEPTH, budget=POINTER_BUDGET)
    return BodyError(400, message, "" if place is None else place)


_AT = re.compile(r"- at `\$([^`]*)`$")
_STEP = re.compile(r"\[(\d+)\]|\.([^.\[]+)")


def json_pointer(message: str) -> str:
    """The JSON pointer of the member a decoder message ends with (`- at `$[1].kind``): `/1/kind`;
    the empty pointer (the whole body) when it names none."""
    found = _AT.search(message)
    if found is None:
        return ""
    return "".join(f"/{index or name}" for index, name in _STEP.findall(found.group(1)))
