"""Fuzz targets at the HTTP level: the whole server (`role=all`, in-memory store, the demo project)
in this process behind httpx's ASGI transport, sent generated requests. Every answer must be below
500, a 4xx must be JSON (problem JSON naming the field for a 400, or OFREP's error body), the
request must finish within `ANSWER_SECONDS`, nothing may be logged at ERROR, and after an
accepted write the project must still list, export and serve. `TARGETS` pairs requests with that
check; `close` stops the server."""

from __future__ import annotations

import asyncio
import functools
import logging
import tempfile
from collections.abc import Callable
from contextlib import AsyncExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import quote

import httpx
import orjson
from flagstaff_server.adapters.memory import InMemoryStore
from flagstaff_server.app import Flagstaff
from flagstaff_server.settings import Settings
from hypothesis import strategies as st
from support.deadlines import eventually
from support.in_process import asgi_client

from fuzz import seeds
from fuzz.decoders import Target
from fuzz.inputs import encoded, from_seeds, gzipped, path_segments

ADMIN = "fuzz-admin-token-0123456789abcdef"
ANSWER_SECONDS = 8.0
PROJECT, ENVIRONMENT = "demo", "production"
FLAG_KEYS = ("staff-banner", "checkout-experiment", "new-dashboard", "payments-enabled")
SEMANTIC = "application/json; domain-model=launchdarkly.semanticpatch"


@dataclass(frozen=True, slots=True)
class Request:
    method: str
    path: str
    body: bytes = b""
    headers: dict[str, str] = field(default_factory=dict)
    credential: str = "admin"
    """Which credential goes in Authorization: admin, sdk, mobile or none (client-side id paths)."""


class ErrorLog(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.ERROR)
        self.records: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(f"{record.name}: {record.getMessage()}"[:2_000])


class Server:
    """The whole server on its own event loop, and its demo environment's credentials."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.stack = AsyncExitStack()
        self.directory = tempfile.TemporaryDirectory(prefix="flagstaff-fuzz-")
        self.errors = ErrorLog()
        logging.getLogger().addHandler(self.errors)
        self.keys: dict[str, str] = {}
        self.loop.run_until_complete(self._start())

    async def _start(self) -> None:
        settings = Settings(data_dir=Path(self.directory.name), role="all", admin_token=ADMIN)
        flagstaff = Flagstaff(settings, store=InMemoryStore(), announce=lambda line: None)
        await self.stack.enter_async_context(flagstaff.running())
        self.http = await self.stack.enter_async_context(asgi_client(flagstaff.asgi))
        answer = await self.http.get(
            f"/api/v2/projects/{PROJECT}/environments/{ENVIRONMENT}",
            headers={"Authorization": ADMIN},
        )
        environment = answer.json()
        self.keys = {
            "admin": ADMIN,
            "sdk": environment["apiKey"],
            "mobile": environment["mobileKey"],
            "id": environment["_id"],
        }

        async def serving() -> bool:
            answer = await self.http.get(
                "/sdk/latest-all", headers={"Authorization": self.keys["sdk"]}
            )
            return answer.status_code == 200

        await eventually(serving, within=30, what="the demo environment served")

    def send(self, request: Request) -> httpx.Response:
        return self.loop.run_until_complete(
            asyncio.wait_for(self._send(request), timeout=ANSWER_SECONDS)
        )

    async def _send(self, request: Request) -> httpx.Response:
        headers = dict(request.headers)
        if request.credential in self.keys:
            headers["Authorization"] = self.keys[request.credential]
        path = request.path.replace("{id}", self.keys["id"])
        return await self.http.request(request.method, path, content=request.body, headers=headers)

    def close(self) -> None:
        self.loop.run_until_complete(self.stack.aclose())
        self.loop.close()
        logging.getLogger().removeHandler(self.errors)
        self.directory.cleanup()


@functools.cache
def server() -> Server:
    return Server()


def close() -> None:
    if server.cache_info().currsize:
        server().close()
        server.cache_clear()


def check_answer(request: Request, answer: httpx.Response) -> None:
    assert answer.status_code < 500, f"{answer.status_code}: {answer.text[:500]}"
    if answer.status_code < 400:
        return
    kind = answer.headers.get("content-type", "")
    body = orjson.loads(answer.content) if kind.startswith("application/") else None
    assert isinstance(body, dict), f"{answer.status_code} without a JSON body: {kind}"
    if request.path.startswith("/ofrep/"):
        assert "errorCode" in body or "code" in body, body
        return
    assert kind.startswith("application/problem+json"), kind
    if answer.status_code == 400:
        assert isinstance(body.get("path"), str), f"a 400 naming no field: {body}"


def check_request(request: Request) -> None:
    running = server()
    logged = len(running.errors.records)
    answer = running.send(request)
    check_answer(request, answer)
    if (
        request.method in ("POST", "PATCH")
        and answer.status_code < 300
        and request.credential == "admin"
    ):
        check_still_servable(running)
    new = running.errors.records[logged:]
    assert not new, f"logged at ERROR: {new}"


def check_still_servable(running: Server) -> None:
    """After an accepted write: the project lists, exports and is served to SDKs."""
    for request in (
        Request("GET", f"/api/v2/flags/{PROJECT}?summary=0"),
        Request("GET", f"/api/v2/projects/{PROJECT}/environments/{ENVIRONMENT}/export"),
        Request("GET", f"/api/v2/segments/{PROJECT}/{ENVIRONMENT}"),
        Request("GET", "/sdk/latest-all", credential="sdk"),
    ):
        answer = running.send(request)
        assert answer.status_code == 200, (
            f"{request.path}: {answer.status_code} {answer.text[:300]}"
        )


JSON = {"Content-Type": "application/json"}


def _requests(
    method: str,
    paths: tuple[str, ...],
    bodies: st.SearchStrategy[bytes],
    credential: str,
    **kw: Any,
) -> st.SearchStrategy[Request]:
    headers = kw.get("headers", JSON)
    return st.builds(
        lambda path, body: Request(method, path, body, headers, credential),
        st.sampled_from(paths),
        bodies,
    )


def _contexts() -> st.SearchStrategy[Request]:
    contexts = from_seeds(*seeds.CONTEXTS)
    # percent-encoded as a client would send them; the server sees the decoded path
    segments = path_segments(contexts).map(lambda segment: quote(segment, safe=""))
    gets = st.one_of(
        st.builds(
            lambda s: Request("GET", f"/sdk/evalx/{{id}}/contexts/{s}", credential="none"), segments
        ),
        st.builds(lambda s: Request("GET", f"/sdk/evalx/contexts/{s}", credential="sdk"), segments),
        st.builds(
            lambda s: Request("GET", f"/msdk/evalx/contexts/{s}", credential="mobile"), segments
        ),
    )
    bodies = encoded(contexts)
    reports = st.one_of(
        _requests("REPORT", ("/sdk/evalx/{id}/context",), bodies, "none"),
        _requests("REPORT", ("/sdk/evalx/context",), bodies, "sdk"),
        _requests("REPORT", ("/msdk/evalx/context",), bodies, "mobile"),
    )
    evaluate = _requests(
        "POST",
        (f"/api/v2/projects/{PROJECT}/environments/{ENVIRONMENT}/flags/evaluate",),
        bodies,
        "admin",
    )
    return st.one_of(gets, reports, evaluate)


def _ofrep() -> st.SearchStrategy[Request]:
    paths = ("/ofrep/v1/evaluate/flags", "/ofrep/v1/evaluate/flags/staff-banner")
    return _requests("POST", paths, encoded(from_seeds(seeds.OFREP_REQUEST)), "sdk")


def _events() -> st.SearchStrategy[Request]:
    analytics = encoded(from_seeds(seeds.ANALYTICS_EVENTS))
    diagnostic = encoded(from_seeds(*seeds.DIAGNOSTIC_EVENTS))
    gz = {**JSON, "Content-Encoding": "gzip"}
    return st.one_of(
        _requests("POST", ("/bulk",), analytics, "sdk"),
        _requests("POST", ("/mobile", "/mobile/events/bulk"), analytics, "mobile"),
        _requests("POST", ("/events/bulk/{id}",), analytics, "none"),
        _requests("POST", ("/diagnostic",), diagnostic, "sdk"),
        _requests("POST", ("/mobile/events/diagnostic",), diagnostic, "mobile"),
        _requests("POST", ("/events/diagnostic/{id}",), diagnostic, "none"),
        _requests("POST", ("/bulk",), gzipped(analytics), "sdk", headers=gz),
    )


def _flags() -> st.SearchStrategy[Request]:
    flag, _ = seeds.demo_documents()
    paths = tuple(f"/api/v2/flags/{PROJECT}/{key}" for key in FLAG_KEYS)
    return st.one_of(
        _requests(
            "POST", (f"/api/v2/flags/{PROJECT}",), encoded(from_seeds(seeds.FLAG_BODY)), "admin"
        ),
        _requests("PATCH", paths, encoded(from_seeds(*seeds.JSON_PATCHES)), "admin"),
        _requests(
            "PATCH",
            paths,
            encoded(from_seeds(*seeds.semantic_patches(flag))),
            "admin",
            headers={"Content-Type": SEMANTIC},
        ),
    )


def _segments() -> st.SearchStrategy[Request]:
    path = f"/api/v2/segments/{PROJECT}/{ENVIRONMENT}"
    return st.one_of(
        _requests("POST", (path,), encoded(from_seeds(seeds.SEGMENT_BODY)), "admin"),
        _requests(
            "PATCH",
            (f"{path}/beta-testers",),
            encoded(from_seeds(*seeds.SEGMENT_JSON_PATCHES)),
            "admin",
        ),
        _requests(
            "PATCH",
            (f"{path}/beta-testers",),
            encoded(from_seeds(seeds.SEGMENT_SEMANTIC_PATCH)),
            "admin",
            headers={"Content-Type": SEMANTIC},
        ),
    )


def _imports() -> st.SearchStrategy[Request]:
    path = f"/api/v2/projects/{PROJECT}/environments/test/import"
    return _requests("POST", (path,), encoded(from_seeds(seeds.demo_data_file())), "admin")


Requests = Callable[[], st.SearchStrategy[Request]]


def started(requests: Requests) -> Requests:
    """`requests`, building which starts the server: its start-up is neither timed nor traced
    as part of the first request."""

    def build() -> st.SearchStrategy[Request]:
        server()
        return requests()

    return build


TARGETS: tuple[Target, ...] = (
    Target("http-context", started(_contexts), check_request),
    Target("http-ofrep", started(_ofrep), check_request),
    Target("http-events", started(_events), check_request),
    Target("http-flags", started(_flags), check_request),
    Target("http-segments", started(_segments), check_request),
    Target("http-import", started(_imports), check_request),
)
