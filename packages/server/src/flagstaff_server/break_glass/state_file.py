"""The break-glass state on disk: `<data-dir>/break-glass.json`, replaced atomically (temp file,
fsync, rename), holding each overlaid flag (newest document, served action, offset, base item),
the accepted document ids and the documents not yet in the audit log.

Encoding happens on the event loop (a consistent copy of the state), writing in a worker thread.
A write never replaces a newer one: each carries the generation of the state it holds.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from flagstaff_server.break_glass.document import Action, decode_document
from flagstaff_server.break_glass.overlay import FlagOverlay
from flagstaff_server.delivery.snapshot import encode_item
from flagstaff_server.durable import replace_file
from flagstaff_server.errors import FlagstaffError

log = logging.getLogger(__name__)

FILE_NAME = "break-glass.json"
FORMAT = 1


@dataclass(frozen=True, slots=True, kw_only=True)
class AuditItem:
    """An accepted document waiting for the audit log."""

    document: Mapping[str, Any]
    accepted_at: int
    accepted_by: str


@dataclass(slots=True, kw_only=True)
class Loaded:
    entries: list[FlagOverlay] = field(default_factory=list)
    seen: list[str] = field(default_factory=list)
    audit: list[AuditItem] = field(default_factory=list)


def encode(
    entries: Iterable[FlagOverlay], seen: Iterable[str], audit: Iterable[AuditItem]
) -> bytes:
    return orjson.dumps(
        {
            "format": FORMAT,
            "entries": [_entry(entry) for entry in entries],
            "seen": list(seen),
            "audit": [
                {"document": a.document, "acceptedAt": a.accepted_at, "acceptedBy": a.accepted_by}
                for a in audit
            ],
        }
    )


def _entry(entry: FlagOverlay) -> dict[str, Any]:
    return {
        "document": entry.newest.raw,
        "acceptedAt": entry.accepted_at,
        "applied": None if entry.applied is None else entry.applied.to_json(),
        "offset": entry.offset,
        "base": None if entry.base is None else orjson.Fragment(entry.base.encoded),
        "gone": entry.gone,
    }


def load(directory: Path) -> Loaded:
    """The state written last; empty when there is none. An unreadable file is kept aside
    (`break-glass.json.unreadable`) and reported, so the operator can push again."""
    path = directory / FILE_NAME
    try:
        raw = orjson.loads(path.read_bytes())
        return _decode(raw)
    except FileNotFoundError:
        return Loaded()
    except (OSError, ValueError, KeyError, TypeError, FlagstaffError) as exc:
        log.error(
            "unreadable break-glass state %s (%s): starting without overrides; the file is kept "
            "as %s.unreadable, push the overrides again",
            path,
            exc,
            FILE_NAME,
        )
        path.replace(path.with_name(FILE_NAME + ".unreadable"))
        return Loaded()


def _decode(raw: Any) -> Loaded:
    if not isinstance(raw, dict) or raw.get("format") != FORMAT:
        raise ValueError(f"not a format {FORMAT} break-glass state")
    loaded = Loaded()
    for item in raw["entries"]:
        document = decode_document(item["document"])
        applied = item["applied"]
        action = None
        if applied is not None:
            variation = applied.get("variation")
            action = Action(on="off" not in applied, variation=variation)
        base = item["base"]
        loaded.entries.append(
            FlagOverlay(
                newest=document,
                accepted_at=int(item["acceptedAt"]),
                applied=action,
                offset=int(item["offset"]),
                base=None if base is None else encode_item(document.flag, base),
                gone=int(item["gone"]),
            )
        )
    loaded.seen = [str(seen) for seen in raw["seen"]]
    loaded.audit = [
        AuditItem(
            document=a["document"],
            accepted_at=int(a["acceptedAt"]),
            accepted_by=str(a["acceptedBy"]),
        )
        for a in raw["audit"]
    ]
    return loaded


class StateWriter:
    """Writes encoded states in generation order, from any thread."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self.written = 0
        """The generation on disk."""
        self._lock = threading.Lock()

    def write(self, generation: int, content: bytes) -> None:
        with self._lock:
            if generation <= self.written:
                return
            self.directory.mkdir(parents=True, exist_ok=True)
            replace_file(self.directory / FILE_NAME, content)
            self.written = generation
