"""Which environment an event request's credential opens, answered from the delivery node's
in-memory credentials (the same index delivery authenticates with), never from the database on
the request path. An unknown credential waits for the node's coalesced background probe."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    from flagstaff_server.delivery.node import DeliveryNode

CredentialKind = Literal["sdk", "mobile", "client"]
Found = tuple[str, str]
"""(project, environment)"""
Lookup = Found | Literal["unknown", "unavailable"]


class Keyring:
    def __init__(self, node: DeliveryNode, *, wall: Callable[[], float] = time.time) -> None:
        self.node = node
        self.wall = wall

    async def find(self, kind: CredentialKind, value: str) -> Lookup:
        """The environment, "unknown" (401) or "unavailable": not known and the node could not
        confirm it is current: the caller answers 503 and the SDK retries instead of giving up."""
        if not value:
            return "unknown"
        found = self._lookup(kind, value)
        if found is not None:
            return found
        if not await self.node.probe():
            found = self._lookup(kind, value)
            return found if found is not None else "unavailable"
        found = self._lookup(kind, value)
        return found if found is not None else "unknown"

    def known(self, kind: CredentialKind, value: str) -> Found | None:
        """The environment when the node knows the credential now; None means ask `find`."""
        return self._lookup(kind, value) if value else None

    def _lookup(self, kind: CredentialKind, value: str) -> Found | None:
        # the delivery store's own indexes: SDK and mobile keys (retired ones until they expire)
        # and client-side ids, the same answers delivery gives for these credentials
        store = self.node.store
        if kind == "sdk":
            env = store.find(value, self.wall())
        elif kind == "mobile":
            env = store.find_mobile(value, self.wall())
        else:
            env = store.find_client_side(value)
        if env is None or not self.node.serves(env):
            return None
        return env.project, env.key
