"""Callers recently authenticated by access token, so a request can be authorized on the event
loop without a thread hop into the store: the verified `Actor` per secret hash, for a short time.

Correctness: this process forgets every entry when it commits a write that may change a caller
(`ControlPlane.write` calls `forget_all`; a revocation, a role, team or member edit), so it never
answers for a revoked token here. Another process sharing the database learns of a change only
by the entry expiring: at most `TTL_SECONDS` later, the bound delivery already has for changes it
reads from the outbox. Only tokens the store vouched for are kept; nothing here touches the store.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

from flagstaff_server.services.access import Actor

TTL_SECONDS = 1.0
"""How long another process may keep answering for a token this one revoked."""
MAX_ENTRIES = 4096
"""Verified tokens kept at most; past it the oldest entry goes first."""


class CallerCache:
    """`get(secret_hash)` an actor verified less than `ttl` seconds ago, else None; `put` one
    just verified. Safe to call from the loop and from worker threads."""

    def __init__(
        self,
        *,
        ttl: float = TTL_SECONDS,
        max_entries: int = MAX_ENTRIES,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._ttl = ttl
        self._max = max_entries
        self._clock = clock
        self._entries: dict[str, tuple[float, Actor]] = {}
        self._generation = 0
        self._lock = threading.Lock()

    def get(self, secret_hash: str) -> Actor | None:
        entry = self._entries.get(secret_hash)
        if entry is None:
            return None
        expires, actor = entry
        if self._clock() >= expires:
            self._entries.pop(secret_hash, None)
            return None
        return actor

    def generation(self) -> int:
        """Taken before reading the store: `put` drops an actor read while a write committed."""
        return self._generation

    def put(self, secret_hash: str, actor: Actor, *, generation: int) -> None:
        with self._lock:
            if generation != self._generation:
                return  # a write may have changed this caller after it was read
            if len(self._entries) >= self._max:
                self._entries.pop(next(iter(self._entries)))
            self._entries[secret_hash] = (self._clock() + self._ttl, actor)

    def forget_all(self) -> None:
        with self._lock:
            self._generation += 1
            self._entries.clear()
