"""Forwards spooled event payloads upstream, oldest first, each with its original
`X-LaunchDarkly-Payload-ID` so upstream drops a payload it already has (a retry after a lost
answer costs nothing, also when another region took the retry: the regions' ingest nodes share
one analytics store). Recoverable failures fail over across the event upstreams (regions) to
whichever answers, and stay with it; while a fallback is in use the next payload is offered to
the preferred ones first every `probe_seconds`, so events come back to the preferred region. A
payload upstream refuses for good is set aside and counted, never dropped silently.

An actor: one task owns the sending; it catches, counts, logs and backs off at its top.
"""

from __future__ import annotations

import asyncio
import logging
import random
import time
from collections import Counter
from collections.abc import Callable

import httpx

from flagstaff_server.relay.config import EnvironmentConfig, EventsConfig
from flagstaff_server.relay.spool import EventSpool, SpooledEvent

log = logging.getLogger(__name__)

RECOVERABLE = frozenset({400, 408, 429})
"""Besides 5xx: the statuses LaunchDarkly's SDKs retry (protocol reference §1.5)."""


def target_of(event: SpooledEvent, env: EnvironmentConfig) -> tuple[str, str]:
    """(path, Authorization value) upstream for a payload, by the route it came in on; browser
    and mobile payloads keep their own endpoints (their credentials may be all an upstream
    accepts for them)."""
    route = event.route
    if route == "mobile" and env.mobile_key:
        return "/mobile/events/bulk", env.mobile_key
    if route == "mobile-diagnostic" and env.mobile_key:
        return "/mobile/events/diagnostic", env.mobile_key
    if route == "browser" and env.client_side_id:
        return f"/events/bulk/{env.client_side_id}", ""
    if route == "browser-diagnostic" and env.client_side_id:
        return f"/events/diagnostic/{env.client_side_id}", ""
    if route.endswith("diagnostic"):
        return "/diagnostic", env.sdk_key
    return "/bulk", env.sdk_key


class EventForwarder:
    def __init__(
        self,
        spool: EventSpool,
        config: EventsConfig,
        upstream: tuple[str, ...],
        environments: dict[str, EnvironmentConfig],
        *,
        transport: httpx.AsyncBaseTransport | None = None,
        rng: Callable[[], float] = random.random,
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        self.spool = spool
        self.config = config
        self.upstream = config.upstream or upstream
        self.environments = environments
        self.transport = transport
        self.rng = rng
        self.counts: Counter[str] = Counter()
        self.connected = True
        self.last_error: str | None = None
        self.monotonic = monotonic
        self._current = 0
        """The index of the upstream that answered last: the first tried."""
        self._probe_at: float | None = None
        """While `_current` is a fallback: when the preferred upstreams are next tried first."""

    @property
    def current_upstream(self) -> str | None:
        return self.upstream[self._current] if self.upstream else None

    async def run(self) -> None:
        delay = self.config.retry_seconds
        async with httpx.AsyncClient(
            transport=self.transport, timeout=httpx.Timeout(10.0), trust_env=False
        ) as client:
            while True:
                seq = self.spool.oldest()
                if seq is None:
                    self.spool.added.clear()
                    await self.spool.added.wait()
                    continue
                try:
                    outcome = await self._forward(client, seq)
                except asyncio.CancelledError:
                    raise
                except Exception as exc:
                    self.counts["error"] += 1
                    log.exception("event forwarding failed unexpectedly")
                    outcome = f"{type(exc).__name__}: {exc}"
                if outcome is None:
                    delay = self.config.retry_seconds
                    continue
                self.counts["retry"] += 1
                self.connected = False
                self.last_error = outcome
                log.warning("event upstream unavailable, retrying in %.1fs: %s", delay, outcome)
                await asyncio.sleep(delay * (0.5 + 0.5 * self.rng()))
                delay = min(delay * 2, self.config.retry_max_seconds)

    async def _forward(self, client: httpx.AsyncClient, seq: int) -> str | None:
        """Send one payload; None when it left the spool (accepted or set aside), else why it
        must be retried."""
        event = await self.spool.read(seq)
        if event is None:
            self.counts["unreadable"] += 1
            return None
        env = self.environments.get(event.environment)
        if env is None:
            log.error("spooled event %d names unknown environment %r", seq, event.environment)
            self.counts["rejected"] += 1
            await self.spool.reject(seq)
            return None
        path, credential = target_of(event, env)
        headers = {
            **event.headers,
            "Content-Type": "application/json",
            "X-LaunchDarkly-Event-Schema": "4",
            "X-LaunchDarkly-Payload-ID": event.payload_id,
        }
        if credential:
            headers["Authorization"] = credential
        failure = "no event upstream configured"
        for index in self._order():
            base = self.upstream[index]
            try:
                response = await client.post(base + path, content=event.payload, headers=headers)
            except httpx.HTTPError as exc:
                failure = f"{base}: {type(exc).__name__}: {exc}"
                continue
            status = response.status_code
            if 200 <= status < 300:
                await self.spool.remove(seq)
                self.counts["forwarded"] += 1
                self.connected = True
                self._answered(index)
                return None
            if status >= 500 or status in RECOVERABLE:
                failure = f"{base}: HTTP {status}"
                continue
            log.error(
                "upstream refused event payload %s with HTTP %d; kept in %s",
                event.payload_id,
                status,
                self.spool.directory / "rejected",
            )
            self.counts["rejected"] += 1
            await self.spool.reject(seq)
            return None
        return failure

    def _order(self) -> list[int]:
        """Upstream indexes in the order this payload tries them: from the one that answered
        last, round the list; from the preferred one when a probe is due."""
        count = len(self.upstream)
        start = self._current
        if self._probe_at is not None and self.monotonic() >= self._probe_at:
            start = 0
            self._probe_at = self.monotonic() + self.config.probe_seconds
        return [(start + step) % count for step in range(count)]

    def _answered(self, index: int) -> None:
        """Stay with the upstream that answered; a fallback is probed past after a while."""
        if index == 0:
            self._probe_at = None
        elif self._probe_at is None or index != self._current:
            self._probe_at = self.monotonic() + self.config.probe_seconds
        self._current = index
