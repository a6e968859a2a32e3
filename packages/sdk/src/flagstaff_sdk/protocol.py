"""LaunchDarkly server-side payloads (FDv1 put/patch/delete and poll bodies, FDv2 events and poll
bodies) decoded into ChangeSets. Pure; anything that is not LaunchDarkly data is a PayloadError.
"""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

from flagstaff_core import DecodeError, Flag, Segment, decode_data, decode_flag, decode_segment

from flagstaff_sdk.change_set import ChangeSet, Selector
from flagstaff_sdk.errors import PayloadError

FDV1_EVENTS = frozenset({"put", "patch", "delete"})
_FDV2_EVENTS = frozenset(
    {"server-intent", "put-object", "delete-object", "payload-transferred", "error"}
)


def _json(text: str | bytes) -> Any:
    try:
        return json.loads(text)
    except ValueError as exc:
        raise PayloadError(f"malformed JSON: {exc}") from exc


def _object(value: Any, what: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise PayloadError(f"{what} must be a JSON object")
    return value


def _version(obj: dict[str, Any], what: str) -> int:
    version = obj.get("version")
    if type(version) is not int:
        raise PayloadError(f"{what} needs an integer version")
    return version


def _data_set(obj: Any, what: str, *, requested_at: float) -> ChangeSet:
    data = _object(obj, what)
    if not isinstance(data.get("flags"), dict) or not isinstance(data.get("segments"), dict):
        raise PayloadError(f"{what} needs both 'flags' and 'segments' objects")
    try:
        decoded = decode_data(data)
    except DecodeError as exc:
        raise PayloadError(f"{what}: {exc}") from exc
    return ChangeSet(
        full=True, flags=decoded.flags, segments=decoded.segments, requested_at=requested_at
    )


def decode_latest_all(body: bytes, *, requested_at: float) -> ChangeSet:
    """An FDv1 `/sdk/latest-all` body."""
    return _data_set(_json(body), "poll body", requested_at=requested_at)


def tombstone_flag(key: str, version: int) -> Flag:
    return decode_flag({"key": key, "version": version, "deleted": True})


def tombstone_segment(key: str, version: int) -> Segment:
    return decode_segment({"key": key, "version": version, "deleted": True})


def _split_path(path: Any) -> tuple[str, str] | None:
    if not isinstance(path, str):
        raise PayloadError("'path' must be a string")
    for prefix, kind in (("/flags/", "flag"), ("/segments/", "segment")):
        if path.startswith(prefix) and len(path) > len(prefix):
            return kind, path[len(prefix) :]
    return None


def decode_fdv1_event(event: str, data: str, *, requested_at: float) -> ChangeSet | None:
    """A stream event's ChangeSet; None for events and paths that are safely ignored."""
    if event not in FDV1_EVENTS:
        return None
    obj = _object(_json(data), f"{event} event")
    if event == "put":
        put = _data_set(obj.get("data"), "put data", requested_at=requested_at)
        return replace(put, authoritative=True)
    target = _split_path(obj.get("path"))
    if target is None:
        return None
    kind, key = target
    try:
        if event == "patch":
            item = _object(obj.get("data"), "patch data")
            _version(item, "patch data")
            if kind == "flag":
                return ChangeSet(full=False, flags={key: decode_flag(item, key=key)})
            return ChangeSet(full=False, segments={key: decode_segment(item, key=key)})
    except DecodeError as exc:
        raise PayloadError(f"patch {kind} {key!r}: {exc}") from exc
    version = _version(obj, "delete event")
    if kind == "flag":
        return ChangeSet(full=False, flags={key: tombstone_flag(key, version)})
    return ChangeSet(full=False, segments={key: tombstone_segment(key, version)})


class Fdv2Assembler:
    """Collects FDv2 events between a `server-intent` and its `payload-transferred`.

    `feed` returns a ChangeSet when a transfer commits (or the intent is `none`). After a commit
    or a `none`, the stream goes on with changes: objects then a `payload-transferred`, with no
    new intent (reference §1.7); only objects before any intent are refused.
    """

    __slots__ = ("_basis", "_flags", "_full", "_intent", "_requested_at", "_segments")

    def __init__(self, basis: Selector | None, *, requested_at: float) -> None:
        self._basis = basis
        self._requested_at = requested_at
        self._intent: str | None = None
        self._full = False
        self._flags: dict[str, Flag] = {}
        self._segments: dict[str, Segment] = {}

    def rebase(self, basis: Selector | None) -> None:
        """Later transfers on the same stream build on what the last one committed."""
        self._basis = basis

    def feed(self, event: str, data: str) -> ChangeSet | None:
        """One SSE event; unknown events are ignored without parsing their data."""
        if event not in _FDV2_EVENTS:
            return None
        return self.accept(event, _json(data))

    def accept(self, event: str, data: Any) -> ChangeSet | None:
        """One event whose data is already parsed (FDv2 poll bodies)."""
        if event == "server-intent":
            return self._intent_event(_object(data, "server-intent"))
        if event in ("put-object", "delete-object"):
            self._object_event(event, _object(data, event))
            return None
        if event == "payload-transferred":
            return self._commit(_object(data, "payload-transferred"))
        if event == "error":
            self._flags = {}
            self._segments = {}
        # goodbye, heart-beat/heartbeat and unknown events carry nothing to apply
        return None

    def _intent_event(self, obj: dict[str, Any]) -> ChangeSet | None:
        payloads = obj.get("payloads")
        if not isinstance(payloads, list) or not payloads:
            raise PayloadError("server-intent needs a non-empty 'payloads' array")
        code = _object(payloads[0], "server-intent payload").get("intentCode")
        if code not in ("xfer-full", "xfer-changes", "none"):
            raise PayloadError(f"unknown intentCode {code!r}")
        self._flags = {}
        self._segments = {}
        if code == "none":
            # up to date; later objects and a commit on this stream are changes on the basis
            self._intent = "xfer-changes"
            self._full = False
            return ChangeSet(
                full=False,
                selector=self._basis,
                basis=self._basis,
                requested_at=self._requested_at,
                current=True,
            )
        self._intent = code
        self._full = code == "xfer-full"
        return None

    def _object_event(self, event: str, obj: dict[str, Any]) -> None:
        if self._intent is None:
            raise PayloadError(f"{event} outside a transfer")
        kind, key = obj.get("kind"), obj.get("key")
        if not isinstance(key, str) or not key:
            raise PayloadError(f"{event} needs a string key")
        version = _version(obj, event)
        try:
            if kind == "flag":
                if event == "put-object":
                    item = _object(obj.get("object"), "put-object object")
                    self._flags[key] = decode_flag({**item, "version": version}, key=key)
                else:
                    self._flags[key] = tombstone_flag(key, version)
            elif kind == "segment":
                if event == "put-object":
                    item = _object(obj.get("object"), "put-object object")
                    self._segments[key] = decode_segment({**item, "version": version}, key=key)
                else:
                    self._segments[key] = tombstone_segment(key, version)
            # other kinds (e.g. client-side evaluation results) are not for server SDKs
        except DecodeError as exc:
            raise PayloadError(f"{event} {kind} {key!r}: {exc}") from exc

    def _commit(self, obj: dict[str, Any]) -> ChangeSet:
        if self._intent is None:
            raise PayloadError("payload-transferred without a server-intent")
        state = obj.get("state")
        if not isinstance(state, str):
            raise PayloadError("payload-transferred needs a string state")
        selector = Selector(state, _version(obj, "payload-transferred"))
        change_set = ChangeSet(
            full=self._full,
            flags=self._flags,
            segments=self._segments,
            selector=selector,
            basis=self._basis,
            requested_at=self._requested_at,
        )
        # after a transfer the same stream continues with changes on top of it
        self._intent = "xfer-changes"
        self._full = False
        self._flags = {}
        self._segments = {}
        self._basis = selector
        return change_set


def decode_fdv2_poll(body: bytes, basis: Selector | None, *, requested_at: float) -> ChangeSet:
    """An FDv2 `/sdk/poll` body: `{"events": [{"event": name, "data": {...}}, ...]}`."""
    obj = _object(_json(body), "FDv2 poll body")
    events = obj.get("events")
    if not isinstance(events, list):
        raise PayloadError("FDv2 poll body needs an 'events' array")
    assembler = Fdv2Assembler(basis, requested_at=requested_at)
    result: ChangeSet | None = None
    for entry in events:
        entry = _object(entry, "FDv2 poll event")
        name = entry.get("event")
        if not isinstance(name, str):
            raise PayloadError("FDv2 poll event needs an 'event' name")
        result = assembler.accept(name, entry.get("data")) or result
        if result is not None and result.current:
            break
    if result is None:
        raise PayloadError("FDv2 poll body has no complete transfer")
    return result
