"""The operator notices a delivery node or relay shows, by where each came from: the change feed
(posted through the API, kind "notice"), a signed push (`POST /break-glass/notices`) or the
node's upstream (a relay reads its upstream's status feed). Kept in a file of the node's data
directory, so a node restarted with the control plane down still shows them.

Owned by the event loop: readers and writers call it there; the file is written by the caller
in a worker thread (`encode` on the loop, `write_file` in the thread).
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any, Literal

import orjson

from flagstaff_server.durable import replace_file
from flagstaff_server.errors import ValidationError
from flagstaff_server.notice import Notice, decode_notice, notice_json, ordered
from flagstaff_server.services.ports import Change

log = logging.getLogger(__name__)

Origin = Literal["feed", "signed", "upstream"]
ORIGINS: tuple[Origin, ...] = ("feed", "signed", "upstream")
KEPT: tuple[Origin, ...] = ("feed", "upstream")
"""The origins this board's file holds."""
FILE_NAME = "notices.json"
FORMAT = 1
LIMIT = 200
"""Notices kept per origin: a page lists a handful; beyond this the oldest go."""


class NoticeBoard:
    def __init__(self) -> None:
        self.held: dict[Origin, dict[str, Notice]] = {origin: {} for origin in ORIGINS}
        self.revision = 0
        """Moves on at every change: the page cache and the file writer compare it."""

    def active(self, now_ms: int) -> list[Notice]:
        """What the page shows at `now_ms`: unexpired, gravest first, one per id (a notice
        reaching a node both from the feed and from upstream is one notice). Every notice is
        shown everywhere: its regions say what it concerns, not who may read it."""
        seen: dict[str, Notice] = {}
        for origin in ORIGINS:
            for notice in self.held[origin].values():
                if notice.is_active(now_ms):
                    seen.setdefault(notice.id, notice)
        return ordered(list(seen.values()))

    def apply_change(self, change: Change) -> bool:
        """A feed change of kind "notice"; False (logged) for one that does not decode."""
        if change.item is None:
            self._remove("feed", change.key)
            return True
        try:
            notice = decode_notice(change.item)
        except ValidationError as exc:
            log.error("dropping notice change %d: %s at %s", change.seq, exc.message, exc.path)
            return False
        self._put("feed", notice)
        return True

    def put(self, origin: Origin, notice: Notice) -> None:
        self._put(origin, notice)

    def remove(self, origin: Origin, notice_id: str) -> bool:
        """Whether `notice_id` was held from `origin`."""
        return self._remove(origin, notice_id)

    def replace(self, origin: Origin, notices: Iterable[Notice]) -> None:
        """Every notice from `origin` at once (what an upstream's feed lists now)."""
        fresh = {notice.id: notice for notice in notices}
        if fresh != self.held[origin]:
            self.held[origin] = _bounded(fresh)
            self.revision += 1

    def _put(self, origin: Origin, notice: Notice) -> None:
        if self.held[origin].get(notice.id) != notice:
            self.held[origin][notice.id] = notice
            self.held[origin] = _bounded(self.held[origin])
            self.revision += 1

    def _remove(self, origin: Origin, notice_id: str) -> bool:
        if self.held[origin].pop(notice_id, None) is None:
            return False
        self.revision += 1
        return True

    # the file --------------------------------------------------------------------------------

    def encode(self) -> bytes:
        """The file's content: the feed's and upstream's notices (signed ones are kept with
        their documents by `signed_notices`, which restores them)."""
        body: dict[str, Any] = {"format": FORMAT}
        for origin in KEPT:
            body[origin] = [notice_json(n) for n in self.held[origin].values()]
        return orjson.dumps(body)

    def load(self, directory: Path) -> None:
        """Restore from `directory` (blocking; at start). An unreadable file is logged and left:
        the feed and the pushes fill the board again."""
        path = directory / FILE_NAME
        try:
            data = orjson.loads(path.read_bytes())
        except FileNotFoundError:
            return
        except (OSError, orjson.JSONDecodeError) as exc:
            log.error("ignoring unreadable notices file %s: %s", path, exc)
            return
        if not isinstance(data, Mapping) or data.get("format") != FORMAT:
            log.error("ignoring notices file %s of an unknown format", path)
            return
        for origin in KEPT:
            self.held[origin] = _decoded(data.get(origin), path)
        self.revision += 1


def write_file(directory: Path, content: bytes) -> None:
    """Atomically replace the board's file in `directory` (blocking)."""
    directory.mkdir(parents=True, exist_ok=True)
    replace_file(directory / FILE_NAME, content)


def _decoded(items: Any, path: Path) -> dict[str, Notice]:
    held: dict[str, Notice] = {}
    for item in items if isinstance(items, list) else ():
        try:
            notice = decode_notice(item)
        except ValidationError as exc:
            log.error("skipping a notice in %s: %s at %s", path, exc.message, exc.path)
            continue
        held[notice.id] = notice
    return _bounded(held)


def _bounded(held: dict[str, Notice]) -> dict[str, Notice]:
    if len(held) <= LIMIT:
        return held
    newest = sorted(held.values(), key=lambda n: n.created_ms, reverse=True)[:LIMIT]
    return {notice.id: notice for notice in newest}
