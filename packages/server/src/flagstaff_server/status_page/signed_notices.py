"""Notices signed with a break-glass key and pushed to a delivery node or relay
(`POST /break-glass/notices`; a signed clear with `DELETE`), for when the management API cannot
take one: verified against the node's trusted keys (`FLAGSTAFF_BREAK_GLASS_KEYS`), kept in
`<data dir>/status/signed-notices.json` before the answer, shown on the status page, forwarded
to `FLAGSTAFF_BREAK_GLASS_PEERS` with the kill switch's forwarder, and handed to the audit log
once a database answers (on nodes that have one).

Refusals are 4xx naming the field, nothing changed: malformed (400), the wrong method for the
kind (400 /kind), an untrusted key (403 /keyId), a bad signature (403 /signature), expired
(400 /expiresAt), issued too far ahead (400 /issuedAt), a replayed document or a notice already
cleared (409 /id). A clear for a notice this node never had is kept, so the notice is refused if
it arrives later (peers forward in any order).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import orjson

from flagstaff_server.break_glass.notice_document import (
    NOTICE,
    NOTICE_CLEAR,
    NoticeDocument,
    decode_notice_document,
    parse_notice_document,
)
from flagstaff_server.break_glass.overlay import MAX_FUTURE_MS, SEEN_LIMIT
from flagstaff_server.break_glass.peers import PeerForwarder
from flagstaff_server.break_glass.recorder import AuditRecorder, AuditSink
from flagstaff_server.break_glass.signing import Keyring
from flagstaff_server.break_glass.state_file import AuditItem
from flagstaff_server.durable import replace_file
from flagstaff_server.errors import Conflict, FlagstaffError, StoreUnavailable, ValidationError
from flagstaff_server.notice import notice_json
from flagstaff_server.status_page.notice_board import NoticeBoard
from flagstaff_server.tasks import cancel_and_wait

log = logging.getLogger(__name__)

FILE_NAME = "signed-notices.json"
FORMAT = 1


def wall_millis() -> int:
    return time.time_ns() // 1_000_000


class SignedNotices:
    def __init__(
        self,
        board: NoticeBoard,
        *,
        keyring: Keyring,
        forwarder: PeerForwarder | None = None,
        audit_sink: AuditSink | None = None,
        accepted_by: str = "delivery node",
        directory: Path | None = None,
        wall_ms: Callable[[], int] = wall_millis,
    ) -> None:
        self.board = board
        self.keyring = keyring
        self.forwarder = forwarder
        """The kill switch's: it runs the loop that sends to the peers."""
        self.accepted_by = accepted_by
        self.directory = directory
        self.wall_ms = wall_ms
        self.documents: dict[str, NoticeDocument] = {}
        """The notices in force, by id (a clear removes one)."""
        self.seen: dict[str, None] = {}
        """Accepted document ids, oldest first (a replay is named as such)."""
        self.cleared: dict[str, None] = {}
        self.recorder = (
            None if audit_sink is None else AuditRecorder(audit_sink, on_recorded=self._recorded)
        )
        self._lock = asyncio.Lock()
        self._tasks: list[asyncio.Task[None]] = []
        self._saves: set[asyncio.Task[None]] = set()

    # lifecycle ---------------------------------------------------------------------------------

    def load(self) -> None:
        """Blocking, at start: the notices, ids and waiting audit items kept on disk (the
        board is filled by `start`, on the loop)."""
        if self.directory is None:
            return
        path = self.directory / FILE_NAME
        try:
            data = orjson.loads(path.read_bytes())
        except FileNotFoundError:
            return
        except (OSError, orjson.JSONDecodeError) as exc:
            log.error("ignoring unreadable signed notices file %s: %s", path, exc)
            return
        if not isinstance(data, Mapping) or data.get("format") != FORMAT:
            log.error("ignoring signed notices file %s of an unknown format", path)
            return
        for raw in data.get("notices") or ():
            try:
                document = decode_notice_document(raw)
            except FlagstaffError as exc:
                log.error("skipping a signed notice in %s: %s", path, exc.message)
                continue
            self.documents[document.id] = document
        self.seen = dict.fromkeys(str(i) for i in data.get("seen") or ())
        self.cleared = dict.fromkeys(str(i) for i in data.get("cleared") or ())
        if self.recorder is not None:
            self.recorder.waiting = [
                AuditItem(
                    document=item["document"],
                    accepted_at=int(item["acceptedAt"]),
                    accepted_by=str(item["acceptedBy"]),
                )
                for item in data.get("audit") or ()
                if isinstance(item, Mapping)
            ]

    async def start(self) -> None:
        await asyncio.to_thread(self.load)
        self._show()  # on the loop, which owns the board
        if self.forwarder is not None:
            for document in self.documents.values():
                self.forwarder.offer(document.raw)  # peers that missed one catch up
        if self.recorder is not None:
            self._tasks.append(asyncio.create_task(self.recorder.run(), name="notice-audit"))
            self.recorder.wake()

    async def stop(self) -> None:
        await cancel_and_wait(self._tasks)
        self._tasks = []
        if self._saves:
            await asyncio.gather(*self._saves, return_exceptions=True)

    # pushes ------------------------------------------------------------------------------------

    async def submit(self, body: bytes, *, clear: bool) -> dict[str, Any]:
        document = parse_notice_document(body)
        expected = NOTICE_CLEAR if clear else NOTICE
        if document.kind != expected:
            raise ValidationError(
                f"{'DELETE' if clear else 'POST'} takes a {expected} document "
                f"({'POST' if clear else 'DELETE'} is for {document.kind})",
                path="/kind",
            )
        self.keyring.verify(document)
        async with self._lock:
            now = self.wall_ms()
            self._check(document, now)
            before = (dict(self.documents), dict(self.seen), dict(self.cleared))
            self._apply(document)
            audit = AuditItem(document=document.raw, accepted_at=now, accepted_by=self.accepted_by)
            if self.recorder is not None:
                self.recorder.waiting.append(audit)
            try:
                await self._save()
            except OSError as exc:
                self.documents, self.seen, self.cleared = before
                if self.recorder is not None:
                    self.recorder.waiting.remove(audit)
                raise StoreUnavailable(
                    f"could not keep the notice in the data directory ({exc}); nothing was applied"
                ) from exc
            self._show()
        if self.recorder is not None:
            self.recorder.wake()
        if self.forwarder is not None:
            self.forwarder.offer(document.raw)
        log.warning(
            "break-glass: accepted %s %s (key %s)%s",
            document.kind,
            document.id,
            document.key_id,
            "" if document.clears is None else f" clearing notice {document.clears}",
        )
        return {
            "notice": None if document.notice is None else notice_json(document.notice),
            "cleared": document.clears,
            "acceptedAt": now,
            "document": document.raw,
        }

    def _check(self, document: NoticeDocument, now_ms: int) -> None:
        if document.id in self.seen:
            raise Conflict(f"document {document.id} was already accepted (a replay)", path="/id")
        if document.issued_at > now_ms + MAX_FUTURE_MS:
            raise ValidationError(
                f"issuedAt {document.issued_at} is more than {MAX_FUTURE_MS // 60000} minutes "
                f"ahead of this node's clock ({now_ms})",
                path="/issuedAt",
            )
        notice = document.notice
        if notice is not None and not notice.is_active(now_ms):
            raise ValidationError(
                f"the notice expired at {notice.expires_ms} (now {now_ms})", path="/expiresAt"
            )
        if notice is not None and notice.id in self.cleared:
            raise Conflict(f"notice {notice.id} was cleared already", path="/id")

    def _apply(self, document: NoticeDocument) -> None:
        self.seen[document.id] = None
        while len(self.seen) > SEEN_LIMIT:
            del self.seen[next(iter(self.seen))]
        if document.clears is not None:
            self.documents.pop(document.clears, None)
            self.cleared[document.clears] = None
            while len(self.cleared) > SEEN_LIMIT:
                del self.cleared[next(iter(self.cleared))]
        else:
            self.documents[document.id] = document
        now = self.wall_ms()
        for notice_id, held in list(self.documents.items()):
            if held.notice is not None and not held.notice.is_active(now):
                del self.documents[notice_id]

    def _show(self) -> None:
        self.board.replace(
            "signed", (d.notice for d in self.documents.values() if d.notice is not None)
        )

    def _recorded(self) -> None:
        """The recorder took an item off `waiting`: keep the shorter list on disk."""
        task = asyncio.get_running_loop().create_task(self._save_quietly())
        self._saves.add(task)
        task.add_done_callback(self._saves.discard)

    async def _save_quietly(self) -> None:
        async with self._lock:
            try:
                await self._save()
            except OSError as exc:
                log.error("could not keep the signed notices on disk: %s", exc)

    async def _save(self) -> None:
        if self.directory is None:
            return
        content = orjson.dumps(
            {
                "format": FORMAT,
                "notices": [d.raw for d in self.documents.values()],
                "seen": list(self.seen),
                "cleared": list(self.cleared),
                "audit": [
                    {
                        "document": a.document,
                        "acceptedAt": a.accepted_at,
                        "acceptedBy": a.accepted_by,
                    }
                    for a in (self.recorder.waiting if self.recorder is not None else ())
                ],
            }
        )
        await asyncio.to_thread(_write, self.directory, content)

    # reading -----------------------------------------------------------------------------------

    def listing(self) -> dict[str, Any]:
        now = self.wall_ms()
        notices = [
            notice_json(d.notice)
            for d in self.documents.values()
            if d.notice is not None and d.notice.is_active(now)
        ]
        return {
            "items": notices,
            "cleared": list(self.cleared),
            "trustedKeys": sorted(self.keyring.keys),
            "auditWaiting": None if self.recorder is None else len(self.recorder.waiting),
        }


def _write(directory: Path, content: bytes) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    replace_file(directory / FILE_NAME, content)
