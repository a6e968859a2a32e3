"""Contexts as they appear in events: private attributes removed and listed in
`_meta.redactedAttributes`, anonymous contexts reduced to key and kind where asked.

Pure; must not decide which events are sent.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from flagstaff_core import Context
from flagstaff_core.attribute import escape_name, parse_reference

_Reference = tuple[tuple[str, ...], str]
"""The parsed components of an attribute reference, and its text (what `_meta` lists)."""


def _parse(references: Iterable[str]) -> tuple[_Reference, ...]:
    parsed = []
    for text in references:
        components = parse_reference(text)
        if components is not None:  # an invalid reference names nothing, as in LaunchDarkly
            parsed.append((components, text))
    return tuple(parsed)


class ContextFormatter:
    """Formats contexts with one configuration of private attributes."""

    def __init__(self, *, private_attributes: Sequence[str] = (), all_private: bool = False):
        self._private = _parse(private_attributes)
        self._all_private = all_private

    def format(self, context: Context, *, redact_anonymous: bool) -> dict[str, Any]:
        """The context's event JSON. `redact_anonymous`: feature and custom events show only
        key, kind and `anonymous` of an anonymous context."""
        if context.multiple:
            out: dict[str, Any] = {"kind": "multi"}
            for member in context.contexts:
                out[member.kind] = self._format_single(member, redact_anonymous, with_kind=False)
            return out
        return self._format_single(context, redact_anonymous, with_kind=True)

    def _format_single(
        self, context: Context, redact_anonymous: bool, *, with_kind: bool
    ) -> dict[str, Any]:
        out: dict[str, Any] = {"key": context.key}
        if with_kind:
            out["kind"] = context.kind
        if context.anonymous:
            out["anonymous"] = True
        private = self._private
        if context.private_attributes:
            private = private + _parse(context.private_attributes)
        redact_all = self._all_private or (redact_anonymous and context.anonymous)
        redacted: list[str] = []
        if context.name is not None:
            if redact_all or _names_whole(private, "name"):
                redacted.append("name")
            else:
                out["name"] = context.name
        for name, value in context.attributes.items():
            if redact_all or _names_whole(private, name):
                redacted.append(escape_name(name))
            else:
                out[name] = _redact_nested((name,), value, private, redacted)
        if redacted:
            out["_meta"] = {"redactedAttributes": redacted}
        return out


def _names_whole(private: tuple[_Reference, ...], name: str) -> bool:
    return any(len(components) == 1 and components[0] == name for components, _ in private)


def _redact_nested(
    path: tuple[str, ...], value: Any, private: tuple[_Reference, ...], redacted: list[str]
) -> Any:
    """`value` with the object properties that `private` names below `path` removed."""
    if not isinstance(value, dict) or not value or not private:
        return value
    depth = len(path) + 1
    out = {}
    for name, item in value.items():
        hit = next(
            (
                text
                for components, text in private
                if len(components) == depth and components[-1] == name and components[:-1] == path
            ),
            None,
        )
        if hit is not None:
            redacted.append(hit)
        else:
            out[name] = _redact_nested((*path, name), item, private, redacted)
    return out


def without_anonymous(context: Context) -> Context | None:
    """The context minus its anonymous members; None when nothing is left."""
    if not context.multiple:
        return None if context.anonymous else context
    members = [member for member in context.contexts if not member.anonymous]
    if not members:
        return None
    if len(members) == len(context.contexts):
        return context
    return Context.multi(*members)
