"""One request of each network synchronizer: a stream connection (FDv1 `/all` or FDv2
`/sdk/stream`) read to its end, and a poll (FDv1 `/sdk/latest-all` or FDv2 `/sdk/poll`).

Translates httpx and HTTP statuses into SourceErrors; must not retry or back off (the actor does).
"""

from __future__ import annotations

import email.utils
from collections.abc import Callable
from dataclasses import dataclass

import httpx

from flagstaff_sdk.change_set import ChangeSet, Selector
from flagstaff_sdk.errors import FallbackToFdv1, HttpStatusError, PayloadError
from flagstaff_sdk.protocol import (
    Fdv2Assembler,
    decode_fdv1_event,
    decode_fdv2_poll,
    decode_latest_all,
)
from flagstaff_sdk.region import Region
from flagstaff_sdk.sse import SseComment, SseParser, SseRetry


def retry_after_seconds(value: str | None, now: float) -> float | None:
    """`Retry-After` as seconds: delta-seconds or an HTTP date (`now` is wall-clock time)."""
    if not value:
        return None
    value = value.strip()
    if value.isdigit():
        return float(value)
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - now)


def check_response(response: httpx.Response, *, fdv2: bool, auto: bool, now: float) -> None:
    """Raise for anything but success; FallbackToFdv1 when the service asks for FDv1."""
    if fdv2 and auto:
        if response.headers.get("x-ld-fd-fallback", "").lower() == "true":
            raise FallbackToFdv1("the service asked for FDv1 (X-LD-FD-Fallback)")
        if response.status_code == 404:
            raise FallbackToFdv1("the service has no FDv2 endpoint (404)")
    status = response.status_code
    if status >= 400 or status < 200:
        retry_after = retry_after_seconds(response.headers.get("retry-after"), now)
        raise HttpStatusError(status, retry_after=retry_after)


@dataclass(slots=True)
class StreamEvents:
    """What a stream reports back while it is read (called on the actor's loop)."""

    apply: Callable[[ChangeSet], None]
    retry_hint: Callable[[float], None]
    selector: Callable[[], Selector | None]


async def read_stream(
    client: httpx.AsyncClient,
    region: Region,
    headers: dict[str, str],
    events: StreamEvents,
    *,
    auto: bool,
    now: Callable[[], float],
    wall: Callable[[], float],
) -> None:
    """Connect and apply what arrives until the stream ends (then raises) or is cancelled."""
    fdv2 = not region.fdv1
    endpoint = region.endpoint
    basis = events.selector() if fdv2 else None
    url = endpoint.stream_uri + ("/sdk/stream" if fdv2 else "/all")
    params = {"basis": basis.state} if basis is not None else None
    requested_at = now()
    stream_headers = {
        **headers,
        "Accept": "text/event-stream",
        "Cache-Control": "no-cache",
        # a compressed stream could sit in a decoder's buffer instead of arriving event by event
        "Accept-Encoding": "identity",
    }
    async with client.stream("GET", url, params=params, headers=stream_headers) as response:
        check_response(response, fdv2=fdv2, auto=auto, now=wall())
        content_type = response.headers.get("content-type", "")
        if not content_type.startswith("text/event-stream"):
            raise PayloadError(f"stream answered with content type {content_type!r}")
        parser = SseParser()
        assembler = Fdv2Assembler(basis, requested_at=requested_at) if fdv2 else None
        async for chunk in response.aiter_bytes():
            for item in parser.feed(chunk):
                if isinstance(item, SseRetry):
                    events.retry_hint(item.milliseconds / 1000.0)
                    continue
                if isinstance(item, SseComment):
                    continue
                if assembler is not None:
                    change = assembler.feed(item.event, item.data)
                else:
                    change = decode_fdv1_event(item.event, item.data, requested_at=now())
                if change is not None:
                    events.apply(change)
    raise httpx.RemoteProtocolError("the service closed the stream")


async def poll(
    client: httpx.AsyncClient,
    region: Region,
    headers: dict[str, str],
    basis: Selector | None,
    *,
    auto: bool,
    now: Callable[[], float],
    wall: Callable[[], float],
) -> ChangeSet | None:
    """One poll; None when the service answered 304 (nothing changed since the last poll)."""
    fdv2 = not region.fdv1
    endpoint = region.endpoint
    url = endpoint.poll_uri + ("/sdk/poll" if fdv2 else "/sdk/latest-all")
    params = {"basis": basis.state} if fdv2 and basis is not None else None
    request_headers = dict(headers)
    if region.poll_etag:
        request_headers["If-None-Match"] = region.poll_etag
    requested_at = now()
    response = await client.get(url, params=params, headers=request_headers)
    check_response(response, fdv2=fdv2, auto=auto, now=wall())
    if response.status_code == 304:
        return None
    change = (
        decode_fdv2_poll(response.content, basis, requested_at=requested_at)
        if fdv2
        else decode_latest_all(response.content, requested_at=requested_at)
    )
    region.poll_etag = response.headers.get("etag")
    return change
