"""Evaluation contexts: single, multi-kind and old-user JSON, validated once when built.

Each context keeps one merged attribute dict per kind so a clause reads a value with two dict
lookups. Must not evaluate flags.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from flagstaff_core.attribute import escape_name
from flagstaff_core.errors import ContextError

DEFAULT_KIND = "user"
MULTI_KIND = "multi"
# \Z, not $: `$` also matches before a trailing newline, which LaunchDarkly rejects.
_KIND_CHARACTERS = re.compile(r"^[A-Za-z0-9._-]+\Z")
_BUILT_IN = frozenset({"kind", "key", "name", "anonymous"})
_OLD_USER_STRINGS = ("ip", "country", "email", "firstName", "lastName", "avatar", "name")


@dataclass(frozen=True, slots=True, kw_only=True)
class Context:
    """A single-kind context (`contexts` empty) or a multi-kind one (`kind == "multi"`)."""

    kind: str
    key: str = ""
    name: str | None = None
    anonymous: bool = False
    attributes: Mapping[str, Any] = field(default_factory=dict)
    private_attributes: tuple[str, ...] = ()
    contexts: tuple[Context, ...] = ()
    fully_qualified_key: str = field(init=False, compare=False)
    kinds: tuple[str, ...] = field(init=False, compare=False)
    # kind -> {"kind", "key", "anonymous", "name"?, custom...}: the evaluator's view.
    _attributes_by_kind: dict[str, dict[str, Any]] = field(init=False, compare=False, repr=False)
    _key_by_kind: dict[str, str] = field(init=False, compare=False, repr=False)

    def __post_init__(self) -> None:
        set_field = object.__setattr__
        if self.kind == MULTI_KIND:
            if len(self.contexts) < 2:
                raise ContextError(
                    "a multi-kind context needs at least two kinds (use Context.multi)"
                )
            members = tuple(sorted(self.contexts, key=lambda c: c.kind))
            for member in members:
                if member.kind == MULTI_KIND:
                    raise ContextError(
                        "a multi-kind context cannot contain another multi-kind context"
                    )
            kinds = tuple(c.kind for c in members)
            if len(set(kinds)) != len(kinds):
                raise ContextError("a multi-kind context cannot have the same kind more than once")
            if self.key != "" or self.name is not None or self.attributes or self.anonymous:
                raise ContextError("a multi-kind context has no attributes of its own")
            set_field(self, "contexts", members)
            set_field(self, "kinds", kinds)
            set_field(
                self,
                "fully_qualified_key",
                ":".join(f"{c.kind}:{_escape_key(c.key)}" for c in members),
            )
            set_field(
                self,
                "_attributes_by_kind",
                {c.kind: c._attributes_by_kind[c.kind] for c in members},
            )
            set_field(self, "_key_by_kind", {c.kind: c.key for c in members})
            return
        _check_kind(self.kind)
        if not isinstance(self.key, str):
            raise ContextError("context key must be a string")
        if self.contexts:
            raise ContextError("only a multi-kind context has member contexts")
        merged: dict[str, Any] = {}
        for name, value in self.attributes.items():
            if name in _BUILT_IN or name in ("", "_meta"):
                raise ContextError(f"{name!r} cannot be a custom attribute name")
            if value is not None:
                merged[name] = value
        merged["kind"] = self.kind
        merged["key"] = self.key
        merged["anonymous"] = self.anonymous
        if self.name is not None:
            merged["name"] = self.name
        set_field(self, "kinds", (self.kind,))
        fq_key = self.key if self.kind == DEFAULT_KIND else f"{self.kind}:{_escape_key(self.key)}"
        set_field(self, "fully_qualified_key", fq_key)
        set_field(self, "_attributes_by_kind", {self.kind: merged})
        set_field(self, "_key_by_kind", {self.kind: self.key})

    @classmethod
    def create(cls, key: str, kind: str = DEFAULT_KIND) -> Context:
        """A context with only a key; raises ContextError when the key is empty or the kind bad."""
        if key == "":
            raise ContextError("context key must not be empty")
        return cls(kind=kind, key=key)

    @classmethod
    def multi(cls, *contexts: Context) -> Context:
        """Combine contexts (flattening multi-kind ones); a single kind stays a single context."""
        members: list[Context] = []
        for context in contexts:
            members.extend(context.contexts if context.kind == MULTI_KIND else (context,))
        if not members:
            raise ContextError("a multi-kind context needs at least one kind")
        if len(members) == 1:
            return members[0]
        return cls(kind=MULTI_KIND, contexts=tuple(members))

    @property
    def multiple(self) -> bool:
        return self.kind == MULTI_KIND

    def individual(self, kind: str) -> Context | None:
        """The single-kind context of `kind`, or None."""
        if self.kind != MULTI_KIND:
            return self if self.kind == kind else None
        for member in self.contexts:
            if member.kind == kind:
                return member
        return None

    def get(self, attribute: str) -> Any:
        """A top-level attribute of a single-kind context (built-ins included), or None."""
        values = self._attributes_by_kind.get(self.kind)
        if values is None:
            return MULTI_KIND if attribute == "kind" else None
        return values.get(attribute)

    def to_json(self) -> dict[str, Any]:
        """The context in LaunchDarkly's current JSON form."""
        if self.kind == MULTI_KIND:
            out: dict[str, Any] = {"kind": MULTI_KIND}
            for member in self.contexts:
                single = member.to_json()
                del single["kind"]
                out[member.kind] = single
            return out
        single = {"kind": self.kind, "key": self.key}
        if self.name is not None:
            single["name"] = self.name
        if self.anonymous:
            single["anonymous"] = True
        single.update(self.attributes)
        if self.private_attributes:
            single["_meta"] = {"privateAttributes": list(self.private_attributes)}
        return single


def _escape_key(key: str) -> str:
    return key.replace("%", "%25").replace(":", "%3A")


def _check_kind(kind: object) -> None:
    if not isinstance(kind, str) or kind == "":
        raise ContextError("context kind must be a non-empty string")
    if kind in ("kind", MULTI_KIND):
        raise ContextError(f"{kind!r} is not a valid context kind")
    if not _KIND_CHARACTERS.match(kind):
        raise ContextError(
            f"context kind {kind!r} contains characters other than A-Z a-z 0-9 . _ -"
        )


def decode_context(obj: object) -> Context:
    """A context from parsed JSON: current form (`kind` present) or the old user form."""
    if not isinstance(obj, dict):
        raise ContextError("a context must be a JSON object")
    if "kind" not in obj:
        return _decode_old_user(obj)
    kind = obj["kind"]
    if kind == MULTI_KIND:
        members = []
        for member_kind, member in obj.items():
            if member_kind == "kind":
                continue
            if not isinstance(member, dict):
                raise ContextError(f"context of kind {member_kind!r} must be a JSON object")
            members.append(_decode_single(member, member_kind))
        return Context.multi(*members)
    _check_kind(kind)
    return _decode_single(obj, kind)


def _decode_single(obj: Mapping[str, Any], kind: str) -> Context:
    key = obj.get("key")
    if not isinstance(key, str) or key == "":
        raise ContextError(f"context of kind {kind!r} needs a non-empty string key")
    name = obj.get("name")
    if name is not None and not isinstance(name, str):
        raise ContextError("context attribute 'name' must be a string")
    # Present but null is invalid, as in the official SDKs; absent means false.
    anonymous = obj.get("anonymous", False)
    if not isinstance(anonymous, bool):
        raise ContextError("context attribute 'anonymous' must be a boolean")
    private: tuple[str, ...] = ()
    meta = obj.get("_meta")
    if meta is not None:
        if not isinstance(meta, dict):
            raise ContextError("context '_meta' must be an object")
        refs = meta.get("privateAttributes")
        if refs is not None:
            if not isinstance(refs, list) or not all(isinstance(r, str) for r in refs):
                raise ContextError("'_meta.privateAttributes' must be an array of strings")
            private = tuple(refs)
    custom = {
        name: value
        for name, value in obj.items()
        if name not in _BUILT_IN and name != "_meta" and value is not None
    }
    if "" in custom:
        raise ContextError("a context attribute name must not be empty")
    return Context(
        kind=kind,
        key=key,
        name=name,
        anonymous=bool(anonymous),
        attributes=custom,
        private_attributes=private,
    )


def _decode_old_user(obj: Mapping[str, Any]) -> Context:
    # The pre-context "user" JSON: built-in string attributes, `custom`, `privateAttributeNames`.
    key = obj.get("key")
    if not isinstance(key, str):
        raise ContextError("an old-style user needs a string key")
    attributes: dict[str, Any] = {}
    for built_in in _OLD_USER_STRINGS:
        value = obj.get(built_in)
        if value is not None and not isinstance(value, str):
            raise ContextError(f"user attribute {built_in!r} must be a string")
        if value is not None and built_in != "name":
            attributes[built_in] = value
    name = obj.get("name")
    anonymous = obj.get("anonymous")
    if anonymous is not None and not isinstance(anonymous, bool):
        raise ContextError("user attribute 'anonymous' must be a boolean")
    custom = obj.get("custom")
    if custom is not None:
        if not isinstance(custom, dict):
            raise ContextError("user attribute 'custom' must be an object")
        for custom_name, value in custom.items():
            # Custom entries cannot override built-ins, as in LaunchDarkly's conversion.
            if custom_name in _BUILT_IN or custom_name in ("", "_meta") or value is None:
                continue
            attributes.setdefault(custom_name, value)
    private_names = obj.get("privateAttributeNames")
    private: tuple[str, ...] = ()
    if private_names is not None:
        if not isinstance(private_names, list) or not all(
            isinstance(n, str) for n in private_names
        ):
            raise ContextError("'privateAttributeNames' must be an array of strings")
        private = tuple(escape_name(n) for n in private_names)
    return Context(
        kind=DEFAULT_KIND,
        key=key,
        name=name,
        anonymous=bool(anonymous),
        attributes=attributes,
        private_attributes=private,
    )
