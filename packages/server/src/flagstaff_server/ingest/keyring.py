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
        self._mobile: dict[str, Found] = {}
        self._client: dict[str, Found] = {}

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
        if kind == "sdk":
            env = self.node.store.find(value, self.wall())
            if env is None or not self.node.serves(env):
                return None
            return env.project, env.key
        found = self._index(kind).get(value)
        if found is None or not self._matches(kind, value, found):
            self._reindex()
            found = self._index(kind).get(value)  # the new index: `_reindex` replaces both
        return found

    def _index(self, kind: CredentialKind) -> dict[str, Found]:
        return self._mobile if kind == "mobile" else self._client

    def _matches(self, kind: CredentialKind, value: str, found: Found) -> bool:
        env = self.node.store.get(*found)
        if env is None or env.credentials is None or not self.node.serves(env):
            return False
        credentials = env.credentials
        current = credentials.mobile_key if kind == "mobile" else credentials.client_side_id
        return current == value

    def _reindex(self) -> None:
        mobile: dict[str, Found] = {}
        client: dict[str, Found] = {}
        for env in self.node.store.environments.values():
            credentials = env.credentials
            if credentials is None or not self.node.serves(env):
                continue
            if credentials.mobile_key:
                mobile[credentials.mobile_key] = (env.project, env.key)
            if credentials.client_side_id:
                client[credentials.client_side_id] = (env.project, env.key)
        self._mobile, self._client = mobile, client
