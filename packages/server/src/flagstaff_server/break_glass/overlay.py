"""The break-glass overlay: for each flag an override ever touched, the newest accepted
document, the action served now, the flag as the feed delivered it (the base) and the version
offset; what the flag is served as; which documents are accepted; feed changes rewritten.

Pure and owned by the event loop: no I/O, no clock (times are handed in as epoch milliseconds).

Versions never go backwards. Served version = base version + offset, where the offset grows by
one at every transition of the served action (an override applied, changed, expired or
cleared) and never shrinks. So a transition raises the served version by one, a feed change
raises it as the base's version rises, and a flag whose override ended keeps its offset: every
later feed change is still served above what SDKs saw during the override. Nodes that accepted
the same documents serve the same versions.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, replace
from typing import Any

import orjson

from flagstaff_server.break_glass.document import OVERRIDE, Action, Document
from flagstaff_server.delivery.snapshot import Holding, Item, Snapshot, encode_item
from flagstaff_server.delivery.sse import ItemKind
from flagstaff_server.errors import Conflict, NotFound, ValidationError
from flagstaff_server.services.ports import Change

FlagId = tuple[str, str, str]
"""(project, environment, flag key)."""
MAX_FUTURE_MS = 5 * 60 * 1000
"""How far ahead of this node's clock `issuedAt` may be (clock skew between operator and node);
further would block every later document for the flag until then."""
SEEN_LIMIT = 10_000
"""Accepted document ids remembered to name a replay as such (an older document is refused
anyway: of two documents for one flag only a later one is accepted)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class FlagOverlay:
    newest: Document
    accepted_at: int
    """When this node accepted `newest` (epoch ms)."""
    applied: Action | None
    """The action served now; None once the override expired or was cleared."""
    offset: int
    base: Item | None
    """The flag as the feed (or upstream) delivered it; None while deleted."""
    gone: int = 0
    """The base's tombstone version while it is deleted."""

    @property
    def served_version(self) -> int:
        return (self.base.version if self.base is not None else self.gone) + self.offset

    def served_item(self) -> dict[str, Any] | None:
        if self.base is None:
            return None
        flag: dict[str, Any] = orjson.loads(self.base.encoded)
        return render(flag, self.applied, self.served_version)

    def is_due(self, now_ms: int) -> bool:
        """The applied override has expired and must stop applying."""
        return self.applied is not None and self.newest.is_expired(now_ms)


def render(flag: dict[str, Any], action: Action | None, version: int) -> dict[str, Any]:
    """The flag as served under `action`. A variation pinned for everyone drops targets, rules
    and prerequisites; a variation the flag no longer has (its base changed) serves it off."""
    served = {**flag, "version": version}
    if action is None:
        return served
    variations = flag.get("variations")
    if action.variation is not None and (
        isinstance(variations, list) and action.variation < len(variations)
    ):
        served.update(
            on=True,
            targets=[],
            contextTargets=[],
            rules=[],
            prerequisites=[],
            fallthrough={"variation": action.variation},
        )
    else:
        served["on"] = action.on and action.variation is None
    return served


@dataclass(frozen=True, slots=True)
class BaseView:
    """A snapshot's items with the overlaid flags replaced by their bases (a `Holding`)."""

    snapshot: Snapshot
    flags: Mapping[str, Item]
    gone: Mapping[str, int]

    @property
    def tombstones(self) -> Mapping[tuple[ItemKind, str], int]:
        if not self.gone:
            return self.snapshot.tombstones
        tombstones = dict(self.snapshot.tombstones)
        for key, version in self.gone.items():
            tombstones[("flag", key)] = version
        return tombstones

    def items(self, kind: ItemKind) -> Mapping[str, Item]:
        return self.flags if kind == "flag" else self.snapshot.segments


class Overlay:
    """Every flag's overlay state on one node (implements delivery's `ChangeOverlay`)."""

    def __init__(self) -> None:
        self.entries: dict[FlagId, FlagOverlay] = {}
        self.seen: dict[str, None] = {}
        """Accepted document ids, oldest first (bounded)."""
        self.changed = False
        """Set whenever the state changed since it was last written (the node clears it)."""

    # decisions ---------------------------------------------------------------------------------

    def decide(self, document: Document, snapshot: Snapshot | None, now_ms: int) -> FlagOverlay:
        """The flag's state once `document` is accepted, or the refusal (4xx errors naming the
        field). Changes nothing: `commit` installs the answer."""
        if document.id in self.seen:
            raise Conflict(f"document {document.id} was already accepted (a replay)", path="/id")
        if document.is_expired(now_ms):
            raise ValidationError(
                f"the override expired at {document.expires_at} (now {now_ms})",
                path="/expiresAt",
            )
        if document.issued_at > now_ms + MAX_FUTURE_MS:
            raise ValidationError(
                f"issuedAt {document.issued_at} is more than {MAX_FUTURE_MS // 60000} minutes "
                f"ahead of this node's clock ({now_ms})",
                path="/issuedAt",
            )
        entry = self.entries.get(document.flag_id)
        if entry is not None and document.issued_at <= entry.newest.issued_at:
            raise Conflict(
                f"a document issued at {entry.newest.issued_at} ({entry.newest.id}) is already "
                f"accepted for flag {document.flag!r}; only a later one can replace it",
                path="/issuedAt",
            )
        if snapshot is None:
            raise NotFound(
                f"this node serves no environment {document.environment!r} in project "
                f"{document.project!r}",
                path="/environment",
            )
        if entry is None:
            base = snapshot.flags.get(document.flag)
            if base is None:
                raise NotFound(
                    f"no flag {document.flag!r} in {document.project}/{document.environment}",
                    path="/flag",
                )
            entry = FlagOverlay(
                newest=document, accepted_at=now_ms, applied=None, offset=0, base=base
            )
        action = document.action if document.kind == OVERRIDE else None
        if action is not None and entry.base is None:
            raise NotFound(
                f"flag {document.flag!r} was deleted in {document.project}/{document.environment}",
                path="/flag",
            )
        if action is not None and action.variation is not None and entry.base is not None:
            variations = orjson.loads(entry.base.encoded).get("variations")
            count = len(variations) if isinstance(variations, list) else 0
            if action.variation >= count:
                raise ValidationError(
                    f"flag {document.flag!r} has {count} variations; there is no variation "
                    f"{action.variation}",
                    path="/action/variation",
                )
        offset = entry.offset + (1 if action != entry.applied else 0)
        return replace(entry, newest=document, accepted_at=now_ms, applied=action, offset=offset)

    def commit(self, entry: FlagOverlay) -> None:
        document = entry.newest
        self.entries[document.flag_id] = entry
        self.seen[document.id] = None
        while len(self.seen) > SEEN_LIMIT:
            del self.seen[next(iter(self.seen))]
        self.changed = True

    def expire(self, now_ms: int) -> list[FlagOverlay]:
        """End every override past its expiry; the entries whose served flag changed."""
        ended = []
        for flag_id, entry in list(self.entries.items()):
            if entry.is_due(now_ms):
                ended.append(replace(entry, applied=None, offset=entry.offset + 1))
                self.entries[flag_id] = ended[-1]
        if ended:
            self.changed = True
        return ended

    def active(self) -> Iterator[FlagOverlay]:
        return (entry for entry in self.entries.values() if entry.applied is not None)

    # the feed beneath --------------------------------------------------------------------------

    def rewrite(self, change: Change, snapshot: Snapshot) -> Change | None:
        entry = self.entries.get((change.project, change.environment, change.key))
        if entry is None:
            return change
        held = entry.base.version if entry.base is not None else entry.gone
        if change.version <= held:
            return None
        if change.item is None:
            entry = replace(entry, base=None, gone=change.version)
        else:
            entry = replace(entry, base=encode_item(change.key, change.item, change.version))
        self.entries[(change.project, change.environment, change.key)] = entry
        self.changed = True
        return replace(change, version=entry.served_version, item=entry.served_item())

    def reset_bases(self, snapshot: Snapshot) -> list[tuple[str, int, dict[str, Any] | None]]:
        served: list[tuple[str, int, dict[str, Any] | None]] = []
        for flag_id, entry in list(self.entries.items()):
            project, environment, key = flag_id
            if (project, environment) != (snapshot.project, snapshot.environment):
                continue
            base = snapshot.flags.get(key)
            gone = 0 if base is not None else snapshot.tombstones.get(("flag", key), 0)
            if (base, gone) != (entry.base, entry.gone):
                # the base may go down (the node left a lost history): the offset grows so the
                # served version still only goes up
                below = entry.served_version - (base.version if base is not None else gone)
                entry = replace(entry, base=base, gone=gone, offset=max(entry.offset, below + 1))
                self.entries[flag_id] = entry
                self.changed = True
            served.append((key, entry.served_version, entry.served_item()))
        return served

    def base_view(self, snapshot: Snapshot) -> Holding:
        flags: dict[str, Item] | None = None
        gone: dict[str, int] = {}
        for (project, environment, key), entry in self.entries.items():
            if (project, environment) != (snapshot.project, snapshot.environment):
                continue
            if flags is None:
                flags = dict(snapshot.flags)
            if entry.base is None:
                flags.pop(key, None)
                gone[key] = entry.gone
            else:
                flags[key] = entry.base
        if flags is None:
            return snapshot
        return BaseView(snapshot, flags, gone)
