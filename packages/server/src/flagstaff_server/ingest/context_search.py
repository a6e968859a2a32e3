"""Searching the contexts seen and a context's recent evaluations, as pure functions over what
the analytics store read: an attribute test on a kept context, and the feature events naming
one context in raw payload bodies. No SQL and no HTTP here."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from flagstaff_server.ingest.payload_values import created_of, load_payload
from flagstaff_server.ingest.tally import context_parts


@dataclass(frozen=True, slots=True, kw_only=True)
class AttributeTest:
    """A context matches when it has `name` (at the top level) and, when `value` is given, the
    attribute is that text, or a list holding it; numbers and booleans compare as their JSON."""

    name: str
    value: str | None = None

    def matches(self, context: Mapping[str, Any]) -> bool:
        if self.name not in context:
            return False
        if self.value is None:
            return True
        found = context[self.name]
        candidates = found if isinstance(found, list) else [found]
        return any(as_text(candidate) == self.value for candidate in candidates)


def as_text(value: object) -> str | None:
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return str(value)
    return None


def evaluations_of(
    bodies: Iterable[bytes], *, kind: str, key: str, limit: int
) -> list[dict[str, Any]]:
    """The feature and debug events naming the context `kind`/`key` (in a single or multi-kind
    context, or in `contextKeys`), newest first, at most `limit`. Summary events name no context,
    so SDKs that send only summaries leave nothing here."""
    found: list[dict[str, Any]] = []
    for body in bodies:
        parsed = load_payload(body)
        for event in parsed if isinstance(parsed, list) else [parsed]:
            is_evaluation = isinstance(event, dict) and event.get("kind") in ("feature", "debug")
            if is_evaluation and names_context(event, kind, key):
                found.append(evaluation_view(event))
    found.sort(key=lambda item: item["creationDate"], reverse=True)
    return found[:limit]


def names_context(event: Mapping[str, Any], kind: str, key: str) -> bool:
    context = event.get("context")
    if isinstance(context, dict) and any(
        part_kind == kind and part_key == key for part_kind, part_key, _ in context_parts(context)
    ):
        return True
    keys = event.get("contextKeys")
    return isinstance(keys, dict) and keys.get(kind) == key


def evaluation_view(event: Mapping[str, Any]) -> dict[str, Any]:
    """What the explorer shows of one evaluation; the event's own fields, never re-derived."""
    return {
        "creationDate": created_of(event, 0),
        "flagKey": event.get("key"),
        "version": event.get("version"),
        "variation": event.get("variation"),
        "value": event.get("value"),
        "reason": event.get("reason"),
        "kind": event.get("kind"),
    }
