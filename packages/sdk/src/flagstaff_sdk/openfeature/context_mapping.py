"""OpenFeature evaluation contexts as Flagstaff (LaunchDarkly) contexts.

Single kind: `targeting_key` is the key (else a `key` attribute); a `kind` attribute names the
kind (default `user`); `name` (string), `anonymous` (bool) and `privateAttributes` (list of
attribute references) are the built-ins; every other attribute is a custom attribute.
Multi-kind: `kind` is `"multi"` and every other attribute that is an object is one member
context named by its attribute (`{"kind": "multi", "user": {"targetingKey": "u1"}, "org":
{"targetingKey": "o1", "name": "Acme"}}`); members use the same rules. Dates become ISO-8601
strings. Must not evaluate anything.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

from flagstaff_core import Context, ContextError
from openfeature.evaluation_context import EvaluationContext
from openfeature.exception import ErrorCode

_BUILT_IN = frozenset({"kind", "key", "targetingKey", "name", "anonymous", "privateAttributes"})


class ContextMappingError(ValueError):
    """The evaluation context cannot become a Flagstaff context; `error_code` says why
    (TARGETING_KEY_MISSING or INVALID_CONTEXT)."""

    def __init__(self, error_code: ErrorCode, message: str) -> None:
        super().__init__(message)
        self.error_code = error_code
        self.message = message


def to_context(evaluation_context: EvaluationContext | None) -> Context:
    """The Flagstaff context for an OpenFeature evaluation context, or ContextMappingError."""
    if evaluation_context is None:
        raise ContextMappingError(ErrorCode.TARGETING_KEY_MISSING, "no evaluation context")
    attributes = dict(evaluation_context.attributes)
    kind = attributes.get("kind", "user")
    if kind == "multi":
        return _multi(evaluation_context.targeting_key, attributes)
    return _single(kind, evaluation_context.targeting_key, attributes, where="context")


def _multi(targeting_key: str | None, attributes: dict[str, Any]) -> Context:
    members = []
    for name, value in attributes.items():
        if name == "kind":
            continue
        if not isinstance(value, Mapping):
            raise ContextMappingError(
                ErrorCode.INVALID_CONTEXT,
                f"multi-kind context: attribute {name!r} must be an object (one context kind)",
            )
        member = dict(value)
        members.append(
            _single(name, member.get("targetingKey"), member, where=f"context kind {name!r}")
        )
    if not members:
        raise ContextMappingError(
            ErrorCode.INVALID_CONTEXT, "a multi-kind context needs at least one kind"
        )
    if targeting_key:
        raise ContextMappingError(
            ErrorCode.INVALID_CONTEXT,
            "a multi-kind context takes its keys from its kinds, not a top-level targetingKey",
        )
    try:
        return Context.multi(*members)
    except ContextError as exc:
        raise ContextMappingError(ErrorCode.INVALID_CONTEXT, str(exc)) from exc


def _single(kind: Any, targeting_key: Any, attributes: Mapping[str, Any], *, where: str) -> Context:
    if not isinstance(kind, str):
        raise ContextMappingError(ErrorCode.INVALID_CONTEXT, f"{where}: 'kind' must be a string")
    key = targeting_key if targeting_key else attributes.get("key")
    if key is None or key == "":
        raise ContextMappingError(
            ErrorCode.TARGETING_KEY_MISSING, f"{where}: no targetingKey (or 'key' attribute)"
        )
    if not isinstance(key, str):
        raise ContextMappingError(ErrorCode.INVALID_CONTEXT, f"{where}: the key must be a string")
    name = attributes.get("name")
    if name is not None and not isinstance(name, str):
        raise ContextMappingError(ErrorCode.INVALID_CONTEXT, f"{where}: 'name' must be a string")
    anonymous = attributes.get("anonymous", False)
    if not isinstance(anonymous, bool):
        raise ContextMappingError(
            ErrorCode.INVALID_CONTEXT, f"{where}: 'anonymous' must be a boolean"
        )
    private = attributes.get("privateAttributes", ())
    if isinstance(private, str) or not isinstance(private, Sequence):
        raise ContextMappingError(
            ErrorCode.INVALID_CONTEXT, f"{where}: 'privateAttributes' must be a list of strings"
        )
    if not all(isinstance(p, str) for p in private):
        raise ContextMappingError(
            ErrorCode.INVALID_CONTEXT, f"{where}: 'privateAttributes' must be a list of strings"
        )
    custom = {
        attribute: _json(value)
        for attribute, value in attributes.items()
        if attribute not in _BUILT_IN and value is not None
    }
    try:
        return Context(
            kind=kind,
            key=key,
            name=name,
            anonymous=anonymous,
            attributes=custom,
            private_attributes=tuple(private),
        )
    except ContextError as exc:
        raise ContextMappingError(ErrorCode.INVALID_CONTEXT, f"{where}: {exc}") from exc


def _json(value: Any) -> Any:
    """Context attribute values as JSON values (dates as ISO-8601 text, in UTC when naive)."""
    if isinstance(value, datetime):
        return (value if value.tzinfo else value.replace(tzinfo=UTC)).isoformat()
    if isinstance(value, Mapping):
        return {str(k): _json(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_json(v) for v in value]
    return value
