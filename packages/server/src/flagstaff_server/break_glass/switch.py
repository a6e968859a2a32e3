"""The break-glass kill switch of one delivery node or relay: verifies pushed documents,
keeps them in the data directory before answering, serves the overridden flags through the
node's snapshots (so every SDK protocol sees them as ordinary changes), ends overrides at their
expiry, forwards documents to peers and hands them to the audit log once the database answers.

Needs nothing but the node and its disk: no API, database or change feed. Owned by the event
loop; a lock orders pushes and expiries, and the feed's changes pass through the overlay
(`Overlay.rewrite`) synchronously in between.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

from flagstaff_server.break_glass import state_file
from flagstaff_server.break_glass.document import CLEAR, OVERRIDE, Document, parse_document
from flagstaff_server.break_glass.overlay import FlagId, FlagOverlay, Overlay
from flagstaff_server.break_glass.peers import PeerForwarder
from flagstaff_server.break_glass.recorder import AuditRecorder, AuditSink
from flagstaff_server.break_glass.signing import Keyring
from flagstaff_server.break_glass.state_file import AuditItem, StateWriter
from flagstaff_server.delivery.node import DeliveryNode
from flagstaff_server.errors import StoreUnavailable, ValidationError
from flagstaff_server.tasks import cancel_and_wait

log = logging.getLogger(__name__)


def wall_millis() -> int:
    return time.time_ns() // 1_000_000


class KillSwitch:
    def __init__(
        self,
        node: DeliveryNode,
        *,
        keyring: Keyring,
        peers: tuple[str, ...] = (),
        audit_sink: AuditSink | None = None,
        accepted_by: str = "delivery node",
        wall_ms: Callable[[], int] = wall_millis,
        tick_seconds: float = 0.5,
        forwarder: PeerForwarder | None = None,
    ) -> None:
        self.node = node
        self.keyring = keyring
        self.accepted_by = accepted_by
        self.wall_ms = wall_ms
        self.tick_seconds = tick_seconds
        self.overlay = Overlay()
        self.forwarder = forwarder or PeerForwarder(peers)
        self.recorder = (
            None
            if audit_sink is None
            else AuditRecorder(audit_sink, on_recorded=self._state_changed)
        )
        directory: Path | None = node.config.data_dir
        self._file = None if directory is None else StateWriter(directory)
        self._generation = 0
        self._pending: dict[FlagId, FlagOverlay] = {}
        self._pending_audit: list[AuditItem] = []
        self._lock = asyncio.Lock()
        self._tasks: list[asyncio.Task[None]] = []
        node.store.overlay = self.overlay
        node.loaders.append(self._load)
        node.pre_writers.append(self._collect)

    # lifecycle ---------------------------------------------------------------------------------

    async def start(self) -> None:
        """After the node started (its loaders restored this switch's state)."""
        for entry in self.overlay.entries.values():
            self.forwarder.offer(entry.newest.raw)  # peers that missed one catch up
        self._tasks = [
            asyncio.create_task(self._expire_loop(), name="break-glass-expiry"),
            asyncio.create_task(self.forwarder.run(), name="break-glass-peers"),
        ]
        if self.recorder is not None:
            self._tasks.append(asyncio.create_task(self.recorder.run(), name="break-glass-audit"))
            self.recorder.wake()

    async def stop(self) -> None:
        await cancel_and_wait(self._tasks)
        self._tasks = []

    def _load(self) -> None:
        """In the node's loading thread, after its snapshots, before the feed is read."""
        if self._file is None:
            return
        loaded = state_file.load(self._file.directory)
        for entry in loaded.entries:
            self.overlay.entries[entry.newest.flag_id] = entry
        self.overlay.seen = dict.fromkeys(loaded.seen)
        if self.recorder is not None:
            self.recorder.waiting = list(loaded.audit)
        self.overlay.expire(self.wall_ms())
        for entry in self.overlay.entries.values():
            self._serve(entry)
        if loaded.entries:
            log.info(
                "break-glass: %d flags overlaid, %d overrides in force",
                len(loaded.entries),
                sum(1 for _ in self.overlay.active()),
            )

    # persistence -------------------------------------------------------------------------------

    def _state_changed(self) -> None:
        self._generation += 1
        self.node.mark_changed()

    def _encode(self) -> bytes:
        entries = {**self.overlay.entries, **self._pending}
        seen = [*self.overlay.seen, *(entry.newest.id for entry in self._pending.values())]
        waiting = [*(self.recorder.waiting if self.recorder else ()), *self._pending_audit]
        return state_file.encode(entries.values(), seen, waiting)

    def _collect(self) -> Callable[[], None] | None:
        """The node's pre-writer: this state, when it changed since it was last written."""
        if self.overlay.changed:
            self.overlay.changed = False
            self._generation += 1
        if self._file is None or self._generation <= self._file.written:
            return None
        writer, generation, content = self._file, self._generation, self._encode()
        return lambda: writer.write(generation, content)

    # pushes ------------------------------------------------------------------------------------

    async def submit(self, body: bytes, *, clear: bool) -> dict[str, Any]:
        """Verify and apply a pushed document (POST: an override, DELETE: a clear). Every
        refusal is a 4xx FlagstaffError naming the field, raised before anything changes."""
        document = parse_document(body)
        expected = CLEAR if clear else OVERRIDE
        if document.kind != expected:
            raise ValidationError(
                f"{'DELETE' if clear else 'POST'} takes a {expected} document "
                f"({'POST' if clear else 'DELETE'} is for {document.kind})",
                path="/kind",
            )
        self.keyring.verify(document)
        async with self._lock:
            entry = await self._accept(document)
        self.forwarder.offer(document.raw)
        return self.describe(entry)

    async def _accept(self, document: Document) -> FlagOverlay:
        now = self.wall_ms()
        env = self.node.store.get(document.project, document.environment)
        prospective = self.overlay.decide(document, None if env is None else env.snapshot, now)
        audit = AuditItem(document=document.raw, accepted_at=now, accepted_by=self.accepted_by)
        flag_id = document.flag_id
        if self._file is not None:
            # kept on disk before anything is served or answered; a crash after this write
            # and before the snapshot's restores the override at start (`_load`)
            self._pending[flag_id] = prospective
            if self.recorder is not None:
                self._pending_audit.append(audit)
            self._generation += 1
            generation, content = self._generation, self._encode()
            try:
                await asyncio.to_thread(self._file.write, generation, content)
            except OSError as exc:
                raise StoreUnavailable(
                    f"could not keep the document in the data directory ({exc}); nothing was "
                    "applied"
                ) from exc
            finally:
                self._pending.pop(flag_id, None)
                with contextlib.suppress(ValueError):
                    self._pending_audit.remove(audit)
        # the feed may have moved the flag while the file was written
        current = self.overlay.entries.get(flag_id)
        if current is not None:
            entry = replace(prospective, base=current.base, gone=current.gone)
        else:
            env = self.node.store.get(document.project, document.environment)
            held = None if env is None else env.snapshot.flags.get(document.flag)
            entry = replace(prospective, base=held or prospective.base)
        self.overlay.commit(entry)
        if self.recorder is not None:
            self.recorder.add(audit)
        self._serve(entry)
        self._state_changed()
        log.warning(
            "break-glass: accepted %s %s for flag %s/%s/%s (key %s): %s",
            document.kind,
            document.id,
            *flag_id,
            document.key_id,
            "cleared" if entry.applied is None else entry.applied.describe(),
        )
        return entry

    def _serve(self, entry: FlagOverlay) -> None:
        """Make the node's snapshot hold the flag as `entry` serves it."""
        project, environment, key = entry.newest.flag_id
        env = self.node.store.get(project, environment)
        if env is None:
            return
        current = env.snapshot.flags.get(key)
        version = entry.served_version
        if current is not None and current.version >= version:
            return  # already served (a restart that had written its snapshot too)
        if current is None and entry.base is None:
            return
        if self.node.store.apply_overlay(project, environment, key, version, entry.served_item()):
            self.node.mark_changed((project, environment))

    # expiry ------------------------------------------------------------------------------------

    async def _expire_loop(self) -> None:
        while True:
            await asyncio.sleep(self.tick_seconds)
            try:
                async with self._lock:
                    self.expire()
            except Exception:
                log.exception("break-glass expiry failed")

    def expire(self) -> int:
        """End the overrides past their expiry; how many ended."""
        ended = self.overlay.expire(self.wall_ms())
        for entry in ended:
            log.warning(
                "break-glass: override %s for flag %s/%s/%s expired",
                entry.newest.id,
                *entry.newest.flag_id,
            )
            self._serve(entry)
        if ended:
            self._state_changed()
        return len(ended)

    # reading -----------------------------------------------------------------------------------

    def describe(self, entry: FlagOverlay) -> dict[str, Any]:
        document = entry.newest
        return {
            "project": document.project,
            "environment": document.environment,
            "flag": document.flag,
            "active": entry.applied is not None,
            "action": None if entry.applied is None else entry.applied.to_json(),
            "servedVersion": entry.served_version,
            "acceptedAt": entry.accepted_at,
            "document": document.raw,
        }

    def listing(self) -> dict[str, Any]:
        items = [self.describe(entry) for entry in self.overlay.entries.values()]
        return {
            "items": sorted(items, key=lambda i: (i["project"], i["environment"], i["flag"])),
            "trustedKeys": sorted(self.keyring.keys),
            "peers": {peer: len(queue) for peer, queue in self.forwarder.pending.items()},
            "auditWaiting": None if self.recorder is None else len(self.recorder.waiting),
        }
