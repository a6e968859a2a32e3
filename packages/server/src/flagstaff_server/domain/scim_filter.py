"""SCIM 2.0 filters (RFC 7644 §3.4.2.2), pure: parsing `userName eq "ada"`, `and`, `or`,
`not (...)`, grouping, `pr` and the comparison operators into a tree, and matching a resource
(its SCIM JSON) against it. Complex-attribute paths (`emails[type eq "work"].value`,
`emails.value`) match when any value does. Strings compare without case except on the attributes
named case-exact.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from flagstaff_server.domain.scim_error import ScimInvalid

COMPARISONS = frozenset({"eq", "ne", "co", "sw", "ew", "gt", "ge", "lt", "le"})
CASE_EXACT = frozenset({"id", "externalid", "members.value", "meta.version"})
"""Lowercased paths whose strings compare with case (RFC 7643 `caseExact`); the rest do not."""
TOKEN = re.compile(
    r'\s*(?:(?P<string>"(?:[^"\\]|\\.)*")|(?P<punct>[()\[\]])'
    r"|(?P<word>[A-Za-z0-9:._$-]+))"
)


@dataclass(frozen=True, slots=True, kw_only=True)
class Compare:
    path: str
    """Lowercased `attr` or `attr.sub`, without a schema URN."""
    op: str
    value: Any = None


@dataclass(frozen=True, slots=True, kw_only=True)
class Logical:
    op: str
    """`and` or `or`."""
    left: Filter
    right: Filter


@dataclass(frozen=True, slots=True, kw_only=True)
class Not:
    inner: Filter


@dataclass(frozen=True, slots=True, kw_only=True)
class ValuePath:
    """`attr[filter]`: some value of the multi-valued `attr` passes the inner filter."""

    attribute: str
    inner: Filter


Filter = Compare | Logical | Not | ValuePath


def invalid(message: str) -> ScimInvalid:
    return ScimInvalid(message, scim_type="invalidFilter", path="/filter")


def tokens_of(text: str) -> list[tuple[str, str]]:
    found: list[tuple[str, str]] = []
    position = 0
    while position < len(text):
        if text[position:].isspace():
            break
        match = TOKEN.match(text, position)
        if match is None:
            raise invalid(f"cannot read the filter at {text[position : position + 20]!r}")
        kind = match.lastgroup or "word"
        found.append((kind, match.group(kind)))
        position = match.end()
    return found


def attribute_path(text: str, schema_urns: tuple[str, ...] = ()) -> str:
    """`urn:...:User:name.givenName` -> `name.givenname` (the schema prefix dropped)."""
    for urn in schema_urns:
        if text.lower().startswith(urn.lower() + ":"):
            text = text[len(urn) + 1 :]
    return text.lower()


class Parser:
    def __init__(self, text: str, schema_urns: tuple[str, ...]) -> None:
        self.items = tokens_of(text)
        self.position = 0
        self.urns = schema_urns

    def peek(self) -> tuple[str, str] | None:
        return self.items[self.position] if self.position < len(self.items) else None

    def take(self) -> tuple[str, str]:
        item = self.peek()
        if item is None:
            raise invalid("the filter ends too soon")
        self.position += 1
        return item

    def expect(self, value: str) -> None:
        _, text = self.take()
        if text != value:
            raise invalid(f"expected {value!r}, found {text!r}")

    def keyword(self, *words: str) -> str | None:
        item = self.peek()
        if item is not None and item[0] == "word" and item[1].lower() in words:
            self.position += 1
            return item[1].lower()
        return None

    def parse(self) -> Filter:
        tree = self.disjunction()
        if self.peek() is not None:
            raise invalid(f"unexpected {self.peek()[1]!r} in the filter")  # type: ignore[index]
        return tree

    def disjunction(self) -> Filter:
        tree = self.conjunction()
        while self.keyword("or"):
            tree = Logical(op="or", left=tree, right=self.conjunction())
        return tree

    def conjunction(self) -> Filter:
        tree = self.term()
        while self.keyword("and"):
            tree = Logical(op="and", left=tree, right=self.term())
        return tree

    def term(self) -> Filter:
        if self.keyword("not"):
            self.expect("(")
            inner = self.disjunction()
            self.expect(")")
            return Not(inner=inner)
        item = self.peek()
        if item == ("punct", "("):
            self.take()
            inner = self.disjunction()
            self.expect(")")
            return inner
        kind, text = self.take()
        if kind != "word":
            raise invalid(f"expected an attribute, found {text!r}")
        path = attribute_path(text, self.urns)
        if self.peek() == ("punct", "["):
            self.take()
            inner = self.disjunction()
            self.expect("]")
            return ValuePath(attribute=path, inner=inner)
        operator = self.keyword("pr", *COMPARISONS)
        if operator is None:
            raise invalid(f"expected an operator after {text!r}")
        if operator == "pr":
            return Compare(path=path, op="pr")
        return Compare(path=path, op=operator, value=self.literal())

    def literal(self) -> Any:
        kind, text = self.take()
        if kind == "string":
            try:
                return str(json.loads(text))
            except ValueError:
                raise invalid(f"not a JSON string: {text}") from None
        lowered = text.lower()
        if lowered in ("true", "false"):
            return lowered == "true"
        if lowered == "null":
            return None
        try:
            return float(text) if "." in text else int(text)
        except ValueError:
            raise invalid(f"not a value: {text!r}") from None


def parse_filter(text: str, schema_urns: tuple[str, ...] = ()) -> Filter:
    """The filter tree, or `ScimInvalid(invalidFilter)`."""
    if not text.strip():
        raise invalid("the filter is empty")
    return Parser(text, schema_urns).parse()


def values_at(resource: Mapping[str, Any], path: str) -> list[Any]:
    """Every value at `attr` or `attr.sub` (keys compared without case); multi-valued
    attributes spread."""
    current: list[Any] = [resource]
    for part in path.split("."):
        found: list[Any] = []
        for item in current:
            if isinstance(item, Mapping):
                for key, value in item.items():
                    if key.lower() == part:
                        found.extend(value if isinstance(value, list) else [value])
        current = found
    return current


def compare(op: str, actual: Any, expected: Any, exact: bool) -> bool:
    if isinstance(actual, str) and isinstance(expected, str) and not exact:
        actual, expected = actual.lower(), expected.lower()
    if op == "eq":
        return bool(actual == expected)
    if op == "ne":
        return bool(actual != expected)
    if isinstance(actual, str) and isinstance(expected, str):
        string_tests: Mapping[str, Callable[[str, str], bool]] = {
            "co": lambda a, e: e in a,
            "sw": str.startswith,
            "ew": str.endswith,
        }
        if op in string_tests:
            return string_tests[op](actual, expected)
    if isinstance(actual, bool) or isinstance(expected, bool) or actual is None:
        return False
    try:
        ordered: Mapping[str, bool] = {
            "gt": actual > expected,
            "ge": actual >= expected,
            "lt": actual < expected,
            "le": actual <= expected,
        }
    except TypeError:
        return False
    return ordered.get(op, False)


def matches(tree: Filter, resource: Mapping[str, Any], prefix: str = "") -> bool:
    """Whether `resource` passes the filter."""
    if isinstance(tree, Logical):
        left = matches(tree.left, resource, prefix)
        if tree.op == "and":
            return left and matches(tree.right, resource, prefix)
        return left or matches(tree.right, resource, prefix)
    if isinstance(tree, Not):
        return not matches(tree.inner, resource, prefix)
    if isinstance(tree, ValuePath):
        full = f"{prefix}{tree.attribute}."
        return any(
            isinstance(item, Mapping) and matches(tree.inner, item, full)
            for item in values_at(resource, tree.attribute)
        )
    values = values_at(resource, tree.path)
    if tree.op == "pr":
        return any(value not in (None, "", [], {}) for value in values)
    exact = f"{prefix}{tree.path}" in CASE_EXACT
    if tree.op == "ne":
        return all(compare("ne", value, tree.value, exact) for value in values)
    return any(compare(tree.op, value, tree.value, exact) for value in values)


__all__ = ["Compare", "Filter", "Logical", "Not", "ValuePath", "matches", "parse_filter"]
