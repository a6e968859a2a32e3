"""Building evaluation contexts fluently; the Context itself is the core's (validated there).

Must not evaluate or cache anything: a context is a value.
"""

from __future__ import annotations

from typing import Any

from flagstaff_core import Context, decode_context

__all__ = ["Context", "ContextBuilder", "decode_context"]


class ContextBuilder:
    """`ContextBuilder("user-1").kind("user").name("Ann").set("email", "a@b.c").build()`."""

    __slots__ = ("_anonymous", "_attributes", "_key", "_kind", "_name", "_private")

    def __init__(self, key: str) -> None:
        self._key = key
        self._kind = "user"
        self._name: str | None = None
        self._anonymous = False
        self._attributes: dict[str, Any] = {}
        self._private: list[str] = []

    def kind(self, kind: str) -> ContextBuilder:
        self._kind = kind
        return self

    def name(self, name: str | None) -> ContextBuilder:
        self._name = name
        return self

    def anonymous(self, anonymous: bool = True) -> ContextBuilder:
        self._anonymous = anonymous
        return self

    def set(self, attribute: str, value: Any) -> ContextBuilder:
        """Set a custom attribute (or `name`/`anonymous`, which have their own methods)."""
        if attribute == "name":
            return self.name(value)
        if attribute == "anonymous":
            return self.anonymous(bool(value))
        self._attributes[attribute] = value
        return self

    def private(self, *references: str) -> ContextBuilder:
        """Attribute references kept out of analytics events."""
        self._private.extend(references)
        return self

    def build(self) -> Context:
        """The context; raises ContextError when it is not valid (e.g. an empty key)."""
        return decode_context(
            {
                "kind": self._kind,
                "key": self._key,
                **({"name": self._name} if self._name is not None else {}),
                **({"anonymous": True} if self._anonymous else {}),
                **self._attributes,
                **({"_meta": {"privateAttributes": self._private}} if self._private else {}),
            }
        )
