"""OFREP v1 on a delivery node: single and bulk evaluation (`POST /ofrep/v1/evaluate/flags[/{key}]`)
with ETags and the OFREP error shapes, a 429 + Retry-After when evaluation is shed, and the
change-notification stream (`/ofrep/v1/sse/{clientSideId}`) the bulk answer points at. The
bodies are `ofrep`'s; this module answers requests.
"""

from __future__ import annotations

from typing import Any

import orjson
from flagstaff_core import Availability, evaluate

from flagstaff_server.asgi import Headers, Receive, Scope, Send
from flagstaff_server.delivery import ofrep
from flagstaff_server.delivery.client_access import ClientAccess
from flagstaff_server.delivery.client_context import ClientContext
from flagstaff_server.delivery.client_evaluation import too_costly
from flagstaff_server.delivery.client_http import (
    CONTEXT_LIMIT,
    JSON,
    etag_matches,
    header,
    read_body,
    respond,
    respond_json,
)
from flagstaff_server.delivery.client_route import Route
from flagstaff_server.delivery.client_stream import is_visible, ofrep_view
from flagstaff_server.delivery.client_stream_opener import StreamOpener
from flagstaff_server.delivery.evaluation_cache import EvaluationCache, etag_of
from flagstaff_server.delivery.serving import ServingNode
from flagstaff_server.delivery.store import Environment

OFREP_INACTIVITY_SECONDS = 120
"""Providers may close the OFREP SSE stream after this long hidden (ADR-0008's default)."""


class OfrepEndpoints:
    def __init__(
        self,
        node: ServingNode,
        access: ClientAccess,
        cache: EvaluationCache,
        streams: StreamOpener,
    ) -> None:
        self.node = node
        self._access = access
        self._cache = cache
        self._streams = streams

    async def __call__(
        self, route: Route, scope: Scope, receive: Receive, send: Send, cors: Headers
    ) -> None:
        if route.name == "ofrep_sse":
            env = await self._access.authenticate(route, scope)
            await self._streams.serve(self._streams.request(route, env, scope, b""), receive, send)
            return
        env, availability = await self._access.ofrep_environment(scope)
        key = route.flag_key if route.name == "ofrep_flag" else None
        raw = await read_body(receive, CONTEXT_LIMIT)
        try:
            request = orjson.loads(raw)
        except orjson.JSONDecodeError as exc:
            failure = ofrep.Failure(status=400, code="PARSE_ERROR", details=f"invalid JSON: {exc}")
            await respond_json(send, 400, failure.body(key), cors)
            return
        client = ofrep.context_of(request)
        if isinstance(client, ofrep.Failure):
            await respond_json(send, client.status, client.body(key), cors)
            return
        snapshot = env.snapshot
        if key is None:
            etag = etag_of(snapshot.digest, ofrep_view(availability), client.fingerprint)
            headers = [(b"etag", etag), (b"cache-control", b"no-cache"), *cors]
            if etag_matches(header(scope, b"if-none-match"), etag):
                self.node.admission.counts["client_not_modified"] += 1
                await respond(send, 304, b"", headers)
                return
            if not self.node.admission.admit_evaluation():
                await self._rate_limited(send, cors)
                return
            admission = self.node.admission
            started = admission.cpu_clock()
            try:
                bulk = self._bulk(env, client, availability, scope)
            finally:
                admission.charge_evaluation(admission.cpu_clock() - started)
            await respond(send, 200, orjson.dumps(bulk), [(b"content-type", JSON), *headers])
            return
        data = self._cache.data(snapshot)
        flag = data.flag(key)
        if flag is None or not is_visible(flag, availability):
            missing = ofrep.Failure(status=404, code="FLAG_NOT_FOUND", details=f"no flag {key!r}")
            await respond_json(send, 404, missing.body(key), cors)
            return
        view = f"{ofrep_view(availability)}:{key}"
        etag = etag_of(snapshot.digest, view, client.fingerprint)
        headers = [(b"etag", etag), (b"cache-control", b"no-cache"), *cors]
        if etag_matches(header(scope, b"if-none-match"), etag):
            self.node.admission.counts["client_not_modified"] += 1
            await respond(send, 304, b"", headers)
            return
        if not self.node.admission.admit_evaluation():
            await self._rate_limited(send, cors)
            return
        admission = self.node.admission
        started = admission.cpu_clock()
        evaluation = evaluate(flag, client.context, data)
        admission.charge_evaluation(admission.cpu_clock() - started)
        error = ofrep.failure_of(evaluation)
        if error is not None:
            await respond_json(send, error.status, error.body(key), cors)
            return
        body = orjson.dumps(ofrep.success(key, flag, evaluation))
        await respond(send, 200, body, [(b"content-type", JSON), *headers])

    def _bulk(
        self, env: Environment, client: ClientContext, availability: Availability, scope: Scope
    ) -> dict[str, Any]:
        data = self._cache.data(env.snapshot)
        keep_going = self.node.admission.evaluation_budget()
        flags = []
        for key, flag in sorted(data.flags.items()):
            if flag.deleted or not is_visible(flag, availability):
                continue
            if not keep_going():
                raise too_costly(self.node.admission)
            flags.append(ofrep.result_of(key, flag, evaluate(flag, client.context, data)))
        body: dict[str, Any] = {"flags": flags}
        credentials = env.credentials
        if credentials is not None and credentials.client_side_id:
            scheme = scope.get("scheme", "http")
            host = header(scope, b"host").decode("latin-1") or "localhost"
            url = (
                f"{scheme}://{host}/ofrep/v1/sse/{credentials.client_side_id}"
                f"?context={client.fingerprint.hex()}&view={availability.value}"
            )
            body["eventStreams"] = [
                {"type": "sse", "url": url, "inactivityDelaySec": OFREP_INACTIVITY_SECONDS}
            ]
        return body

    async def _rate_limited(self, send: Send, cors: Headers) -> None:
        """OFREP's answer to a shed evaluation: 429 + Retry-After, which providers honour by
        pausing evaluation requests until then (the spec's rate-limit response)."""
        retry = b"%d" % self.node.admission.retry_after()
        failure = ofrep.Failure(
            status=429, code="GENERAL", details="too many evaluations right now; retry later"
        )
        body = orjson.dumps(failure.body(None))
        headers = [(b"retry-after", retry), (b"content-type", JSON), *cors]
        await respond(send, 429, body, headers)
