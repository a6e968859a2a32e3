"""Forwarding accepted break-glass documents to the node's peers (`FLAGSTAFF_BREAK_GLASS_PEERS`):
an actor that keeps, per peer, the documents it has not yet answered for, and retries with
backoff until the peer answers. Any 2xx or 4xx is an answer: a peer that already holds the
document (or a later one) refuses it with 409, which is how forwarding between peers that list
each other comes to an end.

Nothing here decides whether a document is valid: the peer verifies it like any push.
"""

from __future__ import annotations

import asyncio
import logging
import random
from collections import Counter
from collections.abc import Mapping
from typing import Any

import httpx
import orjson

from flagstaff_server.break_glass.document import CLEAR, ENDPOINT, OVERRIDE
from flagstaff_server.break_glass.notice_document import ENDPOINT as NOTICE_ENDPOINT
from flagstaff_server.break_glass.notice_document import NOTICE, NOTICE_CLEAR

log = logging.getLogger(__name__)

ROUTES: Mapping[str, tuple[str, str]] = {
    OVERRIDE: ("POST", ENDPOINT),
    CLEAR: ("DELETE", ENDPOINT),
    NOTICE: ("POST", NOTICE_ENDPOINT),
    NOTICE_CLEAR: ("DELETE", NOTICE_ENDPOINT),
}
"""How each kind of document is handed to a peer: the method and the path."""

PENDING_LIMIT = 1_000
"""Documents waiting per peer; beyond it the oldest are dropped (and counted): a peer that
comes back still gets every flag's newest document, which each node sends at start."""


class PeerForwarder:
    def __init__(
        self,
        peers: tuple[str, ...],
        *,
        timeout_seconds: float = 5.0,
        retry_seconds: float = 0.5,
        retry_max_seconds: float = 30.0,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        self.peers = tuple(peer.rstrip("/") for peer in peers)
        self.timeout_seconds = timeout_seconds
        self.retry_seconds = retry_seconds
        self.retry_max_seconds = retry_max_seconds
        self.transport = transport
        self.pending: dict[str, dict[str, Mapping[str, Any]]] = {peer: {} for peer in self.peers}
        self.counts: Counter[str] = Counter()
        self._wake = asyncio.Event()

    def offer(self, document: Mapping[str, Any]) -> None:
        for queue in self.pending.values():
            queue[str(document["id"])] = document
            while len(queue) > PENDING_LIMIT:
                del queue[next(iter(queue))]
                self.counts["dropped"] += 1
        if self.peers:
            self._wake.set()

    async def run(self) -> None:
        delay = self.retry_seconds
        async with httpx.AsyncClient(
            timeout=self.timeout_seconds, transport=self.transport
        ) as client:
            while True:
                await self._wake.wait()
                self._wake.clear()
                failed = False
                for peer, queue in self.pending.items():
                    for document_id, document in list(queue.items()):
                        if not await self._send(client, peer, document):
                            failed = True
                            break  # this peer is down: try it again after the backoff
                        queue.pop(document_id, None)
                if failed:
                    await asyncio.sleep(delay * (0.5 + 0.5 * random.random()))
                    delay = min(delay * 2, self.retry_max_seconds)
                    self._wake.set()
                else:
                    delay = self.retry_seconds

    async def _send(
        self, client: httpx.AsyncClient, peer: str, document: Mapping[str, Any]
    ) -> bool:
        """Whether `peer` answered (accepted or refused); False to retry later."""
        method, path = ROUTES.get(str(document.get("kind")), ROUTES[OVERRIDE])
        try:
            response = await client.request(
                method,
                peer + path,
                content=orjson.dumps(document),
                headers={"content-type": "application/json"},
            )
        except httpx.HTTPError as exc:
            self.counts["error"] += 1
            log.warning("break-glass peer %s unreachable: %s", peer, exc)
            return False
        if response.status_code >= 500:
            self.counts["error"] += 1
            log.warning("break-glass peer %s answered %d", peer, response.status_code)
            return False
        if response.is_success:
            self.counts["forwarded"] += 1
        else:
            self.counts["refused"] += 1
            if response.status_code != 409:
                log.warning(
                    "break-glass peer %s refused document %s: %d %s",
                    peer,
                    document.get("id"),
                    response.status_code,
                    response.text[:300],
                )
        return True
