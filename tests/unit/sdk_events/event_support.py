"""Test support for the event processor: a recording HTTP transport with scripted answers, flag
data built from JSON, and evaluation the way the client does it. Asserts nothing itself."""

from __future__ import annotations

import gzip
import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import httpx
from flagstaff_core import Context, EvaluationDetail, FlagData, decode_data, evaluate_key
from flagstaff_sdk import Config, Endpoint, Timing
from flagstaff_sdk.clock import ManualClock
from flagstaff_sdk.events import EventOptions, EventProcessor

EVENTS_URI = "http://events.test"


@dataclass(frozen=True)
class Request:
    host: str
    path: str
    headers: dict[str, str]
    body: Any
    status: int | None
    """What the recorder answered; None for a simulated network error."""


class Recorder:
    """An httpx transport that records requests and answers from a script (default 202).

    `answers` is consumed one status per `/bulk` request; `None` in it means a network error.
    Requests to a host in `down` fail with a network error (an endpoint, a region, gone).
    """

    def __init__(self, *, date: str | None = None) -> None:
        self._lock = threading.Lock()
        self.requests: list[Request] = []
        self.answers: list[int | None] = []
        self.down: set[str] = set()
        self.date = date
        self.transport = httpx.MockTransport(self._handle)

    def _handle(self, request: httpx.Request) -> httpx.Response:
        content = request.content
        if request.headers.get("content-encoding") == "gzip":
            content = gzip.decompress(content)
        host = request.url.host
        with self._lock:
            status: int | None
            if host in self.down:
                status = None
            elif self.answers and request.url.path == "/bulk":
                status = self.answers.pop(0)
            else:
                status = 202
            self.requests.append(
                Request(host, request.url.path, dict(request.headers), json.loads(content), status)
            )
        if status is None:
            raise httpx.ConnectError("scripted failure", request=request)
        headers = {"Date": self.date} if self.date else {}
        return httpx.Response(status, headers=headers)

    def bulk(self) -> list[Request]:
        with self._lock:
            return [r for r in self.requests if r.path == "/bulk"]

    def diagnostics(self) -> list[Request]:
        with self._lock:
            return [r for r in self.requests if r.path == "/diagnostic"]

    def events(self) -> list[dict[str, Any]]:
        """Every event of every accepted payload (repeats of a payload id counted once)."""
        seen: set[str] = set()
        out: list[dict[str, Any]] = []
        for request in self.bulk():
            if request.status is None or not 200 <= request.status < 300:
                continue
            payload_id = request.headers["x-launchdarkly-payload-id"]
            if payload_id not in seen:
                seen.add(payload_id)
                out.extend(request.body)
        return out

    def of_kind(self, kind: str) -> list[dict[str, Any]]:
        return [e for e in self.events() if e["kind"] == kind]


def flag_json(key: str, **fields: Any) -> dict[str, Any]:
    """A boolean flag, on, serving variation 0 (true) to everyone unless `fields` say otherwise."""
    flag: dict[str, Any] = {
        "key": key,
        "version": 1,
        "on": True,
        "variations": [True, False],
        "offVariation": 1,
        "fallthrough": {"variation": 0},
        "salt": key,
    }
    flag.update(fields)
    return flag


def flag_data(*flags: dict[str, Any]) -> FlagData:
    return decode_data({"flags": {f["key"]: f for f in flags}, "segments": {}})


def evaluate(
    sink: EventProcessor,
    data: FlagData,
    key: str,
    context: Context,
    default: Any = None,
    *,
    with_reason: bool = False,
) -> EvaluationDetail:
    """What `Client.evaluate` does for events: the core's evaluation, the caller's default."""
    evaluation = evaluate_key(data, key, context)
    detail = evaluation.detail
    if detail.value is None:
        detail = EvaluationDetail(default, detail.variation_index, detail.reason)
    sink.record_evaluation(key, context, evaluation, detail, default, with_reason)
    return detail


def options(recorder: Recorder, **extra: Any) -> EventOptions:
    settings: dict[str, Any] = {
        "transport": recorder.transport,
        "flush_interval": 3600.0,
        "diagnostic_opt_out": True,
        "retry_delays": (0.01, 0.01),
        "spool_retry_interval": 0.02,
        "spool_retry_max": 0.05,
        "drain_interval": 0.01,
        "close_timeout": 2.0,
    }
    settings.update(extra)
    return EventOptions(**settings)


@contextmanager
def processor(
    recorder: Recorder,
    *,
    clock: ManualClock | None = None,
    endpoints: tuple[Endpoint, ...] = (),
    timing: Timing | None = None,
    **extra: Any,
) -> Iterator[EventProcessor]:
    """A processor sending to `EVENTS_URI`, or to `endpoints` (regions, preferred first)."""
    config = Config(
        sdk_key="sdk-key-123456",
        endpoints=endpoints or (Endpoint.at(EVENTS_URI),),
        clock=clock or ManualClock(),
        timing=timing or Timing(),
    )
    sink = EventProcessor(config, options(recorder, **extra))
    try:
        yield sink
    finally:
        sink.close()
