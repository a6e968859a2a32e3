"""One environment's flag data as an immutable, pre-encoded snapshot, and how a change makes the
next one (copy-on-write: only the changed item is encoded again; stale changes change nothing).

Pure: no I/O, no clock. Every response body a request needs is bytes held here (or computed once
per snapshot, lazily), so serving a request never serialises JSON.
"""

from __future__ import annotations

import bisect
import gzip
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Protocol

import orjson

from flagstaff_server.delivery import selector, sse
from flagstaff_server.delivery.sse import IntentCode, ItemKind

JsonObject = dict[str, Any]


@dataclass(frozen=True, slots=True)
class Item:
    """A flag or segment: its version and its SDK JSON, encoded once."""

    version: int
    key_json: bytes
    encoded: bytes


State = tuple[int, int, str]
"""(epoch, seq, content digest): a snapshot state an FDv2 selector names."""


@dataclass(frozen=True, slots=True)
class LogEntry:
    """One applied change, kept so an FDv2 client that is a few changes behind gets only those."""

    seq: int
    digest: str
    """The content digest of the snapshot this change produced."""
    event: bytes
    data: bytes
    epoch: int = 1
    """The database epoch of the change."""

    @property
    def state(self) -> State:
        return (self.epoch, self.seq, self.digest)


@dataclass(frozen=True, slots=True)
class Transfer:
    """What an FDv2 client gets for its basis."""

    code: IntentCode
    reason: str
    changes: tuple[LogEntry, ...] = ()


@dataclass(frozen=True, slots=True)
class Applied:
    """A change that took effect: the new snapshot and the stream bytes announcing it."""

    snapshot: Snapshot
    v1_event: bytes
    v2_event: bytes


class _Lazy:
    """Encodings computed on first use and kept for the snapshot's lifetime."""

    __slots__ = (
        "flags_body",
        "gzip_body",
        "poll_heads",
        "put_event",
        "v2_full_poll",
        "v2_full_stream",
    )

    def __init__(self) -> None:
        self.gzip_body: bytes | None = None
        self.flags_body: bytes | None = None
        self.put_event: bytes | None = None
        self.v2_full_stream: bytes | None = None
        self.v2_full_poll: bytes | None = None
        self.poll_heads: dict[tuple[str, str | None], Any] = {}
        """`delivery.polling`'s answer heads, by kind and environment id."""


class Holding(Protocol):
    """What decides a change's version against held data: the items and tombstones of a
    snapshot, or of the data beneath an overlay (`break_glass.overlay`)."""

    @property
    def tombstones(self) -> Mapping[tuple[ItemKind, str], int]: ...

    def items(self, kind: ItemKind) -> Mapping[str, Item]: ...


@dataclass(frozen=True, slots=True, kw_only=True)
class Snapshot:
    project: str
    environment: str
    tag: str
    seq: int
    """The feed sequence number of the last change applied to this environment (0: none)."""
    epoch: int = 1
    """The database epoch `seq` belongs to."""
    flags: Mapping[str, Item]
    segments: Mapping[str, Item]
    tombstones: Mapping[tuple[ItemKind, str], int]
    """Versions of deleted items, so an older put arriving later cannot resurrect them."""
    body: bytes
    """The `/sdk/latest-all` body: `{"flags":{...},"segments":{...}}`, keys sorted."""
    digest: str
    log: tuple[LogEntry, ...] = ()
    log_floor: State
    """The state the log starts from: a basis there can still get a delta."""
    lazy: _Lazy = field(default_factory=_Lazy, compare=False, repr=False)

    @property
    def etag(self) -> bytes:
        return b'"' + self.digest.encode() + b'"'

    @property
    def state(self) -> str:
        """The FDv2 selector state naming this snapshot."""
        return selector.encode_state(self.tag, self.epoch, self.seq, self.digest)

    @property
    def position(self) -> State:
        return (self.epoch, self.seq, self.digest)

    def items(self, kind: ItemKind) -> Mapping[str, Item]:
        return self.flags if kind == "flag" else self.segments

    def gzip_body(self) -> bytes:
        if self.lazy.gzip_body is None:
            self.lazy.gzip_body = gzip.compress(self.body, compresslevel=6, mtime=0)
        return self.lazy.gzip_body

    def flags_body(self) -> bytes:
        if self.lazy.flags_body is None:
            self.lazy.flags_body = sse.object_map(_pairs(self.flags))
        return self.lazy.flags_body

    def put_event(self) -> bytes:
        if self.lazy.put_event is None:
            self.lazy.put_event = sse.v1_put(self.body)
        return self.lazy.put_event

    def transfer_for(self, basis_state: str | None) -> Transfer:
        """Decide what a client holding `basis_state` needs: nothing, a delta or everything. A
        delta needs the basis to be a state this snapshot's history passed through, epoch and
        digest included: a basis from another history (a restore, a failover, an epoch the
        node resynchronised away from) gets everything."""
        if not basis_state:
            return Transfer("xfer-full", "payload-missing")
        basis = selector.decode_state(basis_state)
        if basis is None or basis.tag != self.tag:
            return Transfer("xfer-full", "payload-missing")
        wanted = (basis.epoch, basis.seq, basis.digest)
        if basis.seq == self.seq:
            if wanted == self.position:
                return Transfer("none", "up-to-date")
            return Transfer("xfer-full", "stale")
        if wanted == self.log_floor:
            return Transfer("xfer-changes", "stale", self.log)
        at = bisect.bisect_left(self.log, basis.seq, key=lambda entry: entry.seq)
        if at < len(self.log) and self.log[at].state == wanted:
            return Transfer("xfer-changes", "stale", self.log[at + 1 :])
        return Transfer("xfer-full", "stale")

    def v2_stream_payload(self, transfer: Transfer) -> bytes:
        """SSE bytes that bring a client to this snapshot: intent, objects, commit."""
        if transfer.code == "xfer-full":
            if self.lazy.v2_full_stream is None:
                events = self._full_events(transfer.reason)
                self.lazy.v2_full_stream = b"".join(sse.frame(n, d) for n, d in events)
            return self.lazy.v2_full_stream
        return b"".join(sse.frame(name, data) for name, data in self._events(transfer))

    def v2_poll_body(self, transfer: Transfer) -> bytes:
        if transfer.code == "xfer-full":
            if self.lazy.v2_full_poll is None:
                self.lazy.v2_full_poll = sse.poll_body(self._full_events(transfer.reason))
            return self.lazy.v2_full_poll
        return sse.poll_body(self._events(transfer))

    def _intent(self, code: IntentCode, reason: str) -> tuple[bytes, bytes]:
        return sse.SERVER_INTENT, sse.server_intent(self.tag, self.seq, code, reason)

    def _commit(self) -> tuple[bytes, bytes]:
        return sse.PAYLOAD_TRANSFERRED, sse.payload_transferred(self.state, self.seq)

    def _full_events(self, reason: str) -> list[tuple[bytes, bytes]]:
        events = [self._intent("xfer-full", reason)]
        for kind in ("flag", "segment"):
            events.extend(
                (sse.PUT_OBJECT, sse.put_object(kind, item.key_json, item.version, item.encoded))
                for _key, item in sorted(self.items(kind).items())
            )
        events.append(self._commit())
        return events

    def _events(self, transfer: Transfer) -> list[tuple[bytes, bytes]]:
        if transfer.code == "none":
            return [self._intent("none", transfer.reason)]
        events = [self._intent("xfer-changes", transfer.reason)]
        events.extend((entry.event, entry.data) for entry in transfer.changes)
        events.append(self._commit())
        return events

    def decoded(self) -> JsonObject:
        """The data set as parsed JSON (for tests and tools; requests use `body`)."""
        data: JsonObject = orjson.loads(self.body)
        return data


def _pairs(items: Mapping[str, Item]) -> list[tuple[bytes, bytes]]:
    return [(item.key_json, item.encoded) for _key, item in sorted(items.items())]


def _body(flags: Mapping[str, Item], segments: Mapping[str, Item]) -> bytes:
    return sse.data_set(_pairs(flags), _pairs(segments))


def empty_snapshot(project: str, environment: str) -> Snapshot:
    return build_snapshot(project, environment, seq=0, flags={}, segments={})


def build_snapshot(
    project: str,
    environment: str,
    *,
    seq: int,
    epoch: int = 1,
    flags: Mapping[str, JsonObject],
    segments: Mapping[str, JsonObject],
    tombstones: Mapping[tuple[ItemKind, str], int] | None = None,
) -> Snapshot:
    """A snapshot of a whole data set (after a restart from disk); its change log starts empty.
    Raises ValueError when an item is not an object with an integer `version`."""
    flag_items = {key: encode_item(key, obj) for key, obj in flags.items()}
    segment_items = {key: encode_item(key, obj) for key, obj in segments.items()}
    return snapshot_of(
        project,
        environment,
        seq=seq,
        epoch=epoch,
        flags=flag_items,
        segments=segment_items,
        tombstones=tombstones,
    )


def snapshot_of(
    project: str,
    environment: str,
    *,
    seq: int,
    epoch: int = 1,
    flags: Mapping[str, Item],
    segments: Mapping[str, Item],
    tombstones: Mapping[tuple[ItemKind, str], int] | None = None,
) -> Snapshot:
    """A snapshot of already encoded items; its change log starts empty."""
    body = _body(flags, segments)
    digest = selector.content_digest(body)
    return Snapshot(
        project=project,
        environment=environment,
        tag=selector.environment_tag(project, environment),
        seq=seq,
        epoch=epoch,
        flags=dict(flags),
        segments=dict(segments),
        tombstones=dict(tombstones or {}),
        body=body,
        digest=digest,
        log_floor=(epoch, seq, digest),
    )


def encode_item(key: str, obj: JsonObject, version: int | None = None) -> Item:
    if not isinstance(obj, dict):
        raise ValueError(f"item {key!r} is not a JSON object")
    if version is None:
        version = obj.get("version")
        if not isinstance(version, int) or isinstance(version, bool):
            raise ValueError(f"item {key!r} has no integer version")
    return Item(version=version, key_json=orjson.dumps(key), encoded=orjson.dumps(obj))


def is_stale(snapshot: Holding, kind: ItemKind, key: str, version: int) -> bool:
    """True when the snapshot already holds `key` (or its tombstone) at `version` or newer."""
    current = snapshot.items(kind).get(key)
    if current is not None and current.version >= version:
        return True
    deleted = snapshot.tombstones.get((kind, key))
    return deleted is not None and deleted >= version


def apply_change(
    snapshot: Snapshot,
    *,
    seq: int,
    epoch: int = 1,
    kind: ItemKind,
    key: str,
    version: int,
    item: JsonObject | None,
    log_limit: int,
) -> Applied | None:
    """The snapshot after one feed change, or None when the change is stale or already applied
    (seq not after the snapshot's, or version not higher than the held item's/tombstone's)."""
    if seq <= snapshot.seq or is_stale(snapshot, kind, key, version):
        return None
    return _next(snapshot, seq, epoch, kind, key, version, item, log_limit, keep_log=True)


def apply_overlay(
    snapshot: Snapshot, *, kind: ItemKind, key: str, version: int, item: JsonObject | None
) -> Applied | None:
    """The snapshot after a change that did not come from the feed (a break-glass override
    applied, expired or cleared): at the snapshot's own epoch and seq, since feed positions
    belong to the feed.
    The FDv2 change log restarts at the new state, so (seq, digest) stays unique in it: clients
    holding an earlier state get a full transfer, clients holding this one deltas after it.
    None when `version` is not above the held item's (or tombstone's)."""
    if is_stale(snapshot, kind, key, version):
        return None
    return _next(
        snapshot, snapshot.seq, snapshot.epoch, kind, key, version, item, 0, keep_log=False
    )


def _next(
    snapshot: Snapshot,
    seq: int,
    epoch: int,
    kind: ItemKind,
    key: str,
    version: int,
    item: JsonObject | None,
    log_limit: int,
    *,
    keep_log: bool,
) -> Applied:
    items = dict(snapshot.items(kind))
    tombstones = dict(snapshot.tombstones)
    if item is None:
        items.pop(key, None)
        tombstones[(kind, key)] = version
        v1_event = sse.v1_delete(kind, key, version)
        v2_name, v2_data = sse.DELETE_OBJECT, sse.delete_object(kind, key, version)
    else:
        encoded = encode_item(key, item, version)
        items[key] = encoded
        tombstones.pop((kind, key), None)
        v1_event = sse.v1_patch(kind, key, encoded.encoded)
        v2_name = sse.PUT_OBJECT
        v2_data = sse.put_object(kind, encoded.key_json, version, encoded.encoded)
    flags = items if kind == "flag" else snapshot.flags
    segments = items if kind == "segment" else snapshot.segments
    body = _body(flags, segments)
    digest = selector.content_digest(body)
    if keep_log:
        entry = LogEntry(seq=seq, digest=digest, event=v2_name, data=v2_data, epoch=epoch)
        log, floor = _bounded((*snapshot.log, entry), snapshot.log_floor, log_limit)
    else:
        log, floor = (), (epoch, seq, digest)
    new = Snapshot(
        project=snapshot.project,
        environment=snapshot.environment,
        tag=snapshot.tag,
        seq=seq,
        epoch=epoch,
        flags=flags,
        segments=segments,
        tombstones=tombstones,
        body=body,
        digest=digest,
        log=log,
        log_floor=floor,
    )
    commit = sse.frame(sse.PAYLOAD_TRANSFERRED, sse.payload_transferred(new.state, seq))
    return Applied(snapshot=new, v1_event=v1_event, v2_event=sse.frame(v2_name, v2_data) + commit)


def with_kept_log(
    snapshot: Snapshot,
    floor: State,
    entries: Sequence[LogEntry],
    log_limit: int,
) -> Snapshot | None:
    """`snapshot` (just built from disk, log empty) with a change log kept from before the
    restart, or None when that log does not lead to exactly this snapshot. `entries` (ascending
    seqs after `floor`) may run past the snapshot: a log written just before a crash that lost
    the snapshot's own write. Those are dropped; the feed replays them."""
    state = snapshot.position
    if floor == state:
        kept: tuple[LogEntry, ...] = ()
    else:
        at = bisect.bisect_left(entries, snapshot.seq, key=lambda entry: entry.seq)
        if at == len(entries) or entries[at].state != state:
            return None
        kept = tuple(entries[: at + 1])
    log, floor = _bounded(kept, floor, log_limit)
    return replace(snapshot, log=log, log_floor=floor, lazy=_Lazy())


def _bounded(
    log: tuple[LogEntry, ...], floor: State, limit: int
) -> tuple[tuple[LogEntry, ...], State]:
    """The newest `limit` entries of `log` and the state the kept part starts from."""
    if len(log) <= limit:
        return log, floor
    dropped = len(log) - limit
    return log[dropped:], log[dropped - 1].state


def rebased(snapshot: Snapshot, *, epoch: int, seq: int) -> Snapshot:
    """`snapshot`'s data named at feed position (`epoch`, `seq`) with an empty log: what a node
    serves after a full resynchronisation, so the selector and FDv2 `version` its clients get
    are above anything they held from the history it left (whose log means nothing here)."""
    return replace(
        snapshot,
        epoch=epoch,
        seq=seq,
        log=(),
        log_floor=(epoch, seq, snapshot.digest),
        lazy=_Lazy(),
    )
