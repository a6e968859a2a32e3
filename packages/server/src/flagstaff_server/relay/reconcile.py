"""Per-item changes that bring an environment's delivery snapshot to the data an upstream (or a
data file) holds now, so SDKs behind the relay get patches and deletes with increasing versions.

Pure: no I/O, no clock. Versions decide as in LaunchDarkly's SDKs; where the source's version
would not move the snapshot forward (an upstream restored to older versions, a file edited
without a version bump, a poll that dropped an item) the change gets the held version + 1, so
what downstream SDKs hold still converges to the source.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import orjson
from flagstaff_core import Flag, FlagData, Segment, encode_flag, encode_segment

from flagstaff_server.delivery.snapshot import Holding, Item
from flagstaff_server.delivery.sse import ItemKind

JsonObject = dict[str, Any]


@dataclass(frozen=True, slots=True)
class ItemChange:
    kind: ItemKind
    key: str
    version: int
    item: JsonObject | None
    """The SDK JSON to serve (its `version` equals `version`); None deletes."""


def changes_from_data(snapshot: Holding, data: FlagData) -> list[ItemChange]:
    """Changes from decoded upstream data (the SDK's holding: live items and tombstones)."""
    changes: list[ItemChange] = []
    for kind, items in (("flag", data.flags), ("segment", data.segments)):
        changes.extend(_decoded_changes(snapshot, kind, items))  # type: ignore[arg-type]
    return changes


def _decoded_changes(
    snapshot: Holding, kind: ItemKind, items: Mapping[str, Flag | Segment]
) -> list[ItemChange]:
    held = snapshot.items(kind)
    changes: list[ItemChange] = []
    for key, item in items.items():
        current = held.get(key)
        if item.deleted:
            if current is not None:
                changes.append(ItemChange(kind, key, max(item.version, current.version + 1), None))
            continue
        if current is not None and current.version == item.version:
            continue  # the same version is the same item
        gone = snapshot.tombstones.get((kind, key))
        floor = max(current.version if current else 0, gone if gone is not None else 0)
        encoded = encode_flag(item) if isinstance(item, Flag) else encode_segment(item)
        if item.version <= floor:
            if current is not None and _same(encoded, current):
                continue
            encoded["version"] = floor + 1
        changes.append(ItemChange(kind, key, int(encoded["version"]), encoded))
    for key, current in held.items():
        if key not in items:
            changes.append(ItemChange(kind, key, current.version + 1, None))
    return changes


def changes_from_json(
    snapshot: Holding, flags: Mapping[str, JsonObject], segments: Mapping[str, JsonObject]
) -> list[ItemChange]:
    """Changes from raw SDK JSON (an offline data file, already validated): content decides,
    so a file edited without bumping versions still reaches SDKs."""
    changes: list[ItemChange] = []
    for kind, items in (("flag", flags), ("segment", segments)):
        changes.extend(_json_changes(snapshot, kind, items))  # type: ignore[arg-type]
    return changes


def _json_changes(
    snapshot: Holding, kind: ItemKind, items: Mapping[str, JsonObject]
) -> list[ItemChange]:
    held = snapshot.items(kind)
    changes: list[ItemChange] = []
    for key, raw in items.items():
        current = held.get(key)
        version = raw.get("version")
        version = version if isinstance(version, int) and not isinstance(version, bool) else 0
        if raw.get("deleted") is True:
            if current is not None:
                changes.append(ItemChange(kind, key, max(version, current.version + 1), None))
            continue
        if current is not None and _same(raw, current):
            continue
        gone = snapshot.tombstones.get((kind, key))
        floor = max(current.version if current else 0, gone if gone is not None else 0)
        item = {**raw, "key": key}
        if version <= floor:
            version = floor + 1
        item["version"] = version
        changes.append(ItemChange(kind, key, version, item))
    for key, current in held.items():
        if key not in items:
            changes.append(ItemChange(kind, key, current.version + 1, None))
    return changes


def _same(item: JsonObject, held: Item) -> bool:
    """Whether `item` is what the snapshot holds, apart from its version."""
    return orjson.dumps({**item, "version": held.version}) == held.encoded
